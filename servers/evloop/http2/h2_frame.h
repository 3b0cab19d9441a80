/* h2_frame: HTTP/2 frames on the wire (RFC 9113 section 4 and 6), with no
 * state: reading a frame header, the per-type rules a header alone can
 * break, stripping padding, and writing the frames a server sends that
 * carry no header block. The first layer of the lab's own HTTP/2 codec
 * (written because libnghttp2's session, which the server ran on before,
 * took ~70 % of its user-space time on h2c GET /ping: docs/evidence/issue17/),
 * kept pure so every rule is unit-tested byte by byte. */
#ifndef H2_FRAME_H
#define H2_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define H2_FRAME_HEADER_LEN 9
/* SETTINGS_MAX_FRAME_SIZE: the initial value and the largest allowed. */
#define H2_DEFAULT_MAX_FRAME 16384u
#define H2_MAX_FRAME_LIMIT 16777215u

enum {
    H2F_DATA = 0x0,
    H2F_HEADERS = 0x1,
    H2F_PRIORITY = 0x2,
    H2F_RST_STREAM = 0x3,
    H2F_SETTINGS = 0x4,
    H2F_PUSH_PROMISE = 0x5,
    H2F_PING = 0x6,
    H2F_GOAWAY = 0x7,
    H2F_WINDOW_UPDATE = 0x8,
    H2F_CONTINUATION = 0x9
};

enum {
    H2FL_END_STREAM = 0x1,
    H2FL_ACK = 0x1,
    H2FL_END_HEADERS = 0x4,
    H2FL_PADDED = 0x8,
    H2FL_PRIORITY = 0x20
};

/* Error codes (RFC 9113 section 7). */
enum {
    H2E_NO_ERROR = 0x0,
    H2E_PROTOCOL_ERROR = 0x1,
    H2E_INTERNAL_ERROR = 0x2,
    H2E_FLOW_CONTROL_ERROR = 0x3,
    H2E_SETTINGS_TIMEOUT = 0x4,
    H2E_STREAM_CLOSED = 0x5,
    H2E_FRAME_SIZE_ERROR = 0x6,
    H2E_REFUSED_STREAM = 0x7,
    H2E_CANCEL = 0x8,
    H2E_COMPRESSION_ERROR = 0x9,
    H2E_CONNECT_ERROR = 0xa,
    H2E_ENHANCE_YOUR_CALM = 0xb,
    H2E_INADEQUATE_SECURITY = 0xc,
    H2E_HTTP_1_1_REQUIRED = 0xd
};

typedef struct h2_frame_hd {
    uint32_t length; /* payload bytes, 24 bits */
    uint8_t type;
    uint8_t flags;
    uint32_t stream_id; /* the reserved bit cleared */
} h2_frame_hd;

/* What a frame header breaks: nothing (code H2E_NO_ERROR), or an error of
 * `code` on the whole connection or on the frame's stream alone. */
typedef struct h2_frame_fault {
    uint32_t code;
    int stream_only; /* 1: RST_STREAM the frame's stream; 0: GOAWAY */
} h2_frame_fault;

/* A 31-bit value (stream id, window increment, dependency) at p, its
 * reserved top bit cleared. */
uint32_t h2_get31(const uint8_t *p);
/* Reads the 9 header bytes at p. */
void h2_frame_read_hd(const uint8_t *p, h2_frame_hd *hd);
/* Writes a frame header; returns H2_FRAME_HEADER_LEN. */
size_t h2_frame_write_hd(uint8_t *p, uint32_t length, uint8_t type,
                         uint8_t flags, uint32_t stream_id);

/* The rules a frame header alone can break (stream id 0 or not where the
 * type demands it, fixed payload sizes, the peer's frame size limit we
 * advertised). Unknown types pass: RFC 9113 4.1 says ignore them. */
h2_frame_fault h2_frame_check(const h2_frame_hd *hd, uint32_t max_frame);

/* The content of a DATA or HEADERS payload without its padding (and, for
 * HEADERS with PRIORITY, without the 5 priority bytes): *out and *out_len.
 * Returns 0, or -1 when the pad length covers the whole payload (a
 * connection PROTOCOL_ERROR, RFC 9113 6.1 and 6.2). */
int h2_frame_content(const h2_frame_hd *hd, const uint8_t *payload,
                     const uint8_t **out, size_t *out_len);

/* Frames without a header block, written whole at p (which must have room
 * for the returned length). */
size_t h2_write_rst_stream(uint8_t *p, uint32_t stream_id, uint32_t code);
size_t h2_write_window_update(uint8_t *p, uint32_t stream_id,
                              uint32_t increment);
size_t h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8]);
size_t h2_write_settings_ack(uint8_t *p);
size_t h2_write_goaway(uint8_t *p, uint32_t last_stream_id, uint32_t code);

#endif
