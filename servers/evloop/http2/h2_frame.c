#include "h2_frame.h"

#include <string.h>

static uint32_t get24(const uint8_t *p) {
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

uint32_t h2_get31(const uint8_t *p) {
    return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
            p[3]) & 0x7fffffffu;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void h2_frame_read_hd(const uint8_t *p, h2_frame_hd *hd) {
    hd->length = get24(p);
    hd->type = p[3];
    hd->flags = p[4];
    hd->stream_id = h2_get31(p + 5);
}

size_t h2_frame_write_hd(uint8_t *p, uint32_t length, uint8_t type,
                         uint8_t flags, uint32_t stream_id) {
    p[0] = (uint8_t)(length >> 16);
    p[1] = (uint8_t)(length >> 8);
    p[2] = (uint8_t)length;
    p[3] = type;
    p[4] = flags;
    put32(p + 5, stream_id & 0x7fffffffu);
    return H2_FRAME_HEADER_LEN;
}

static h2_frame_fault fault(uint32_t code, int stream_only) {
    h2_frame_fault f = {code, stream_only};
    return f;
}

h2_frame_fault h2_frame_check(const h2_frame_hd *hd, uint32_t max_frame) {
    const h2_frame_fault ok = {H2E_NO_ERROR, 0};
    /* RFC 9113 4.2: a frame larger than we allow. For frames that can
     * change the connection's state (header blocks, SETTINGS, stream 0)
     * the error is the connection's; we treat every oversize frame so. */
    if (hd->length > max_frame) return fault(H2E_FRAME_SIZE_ERROR, 0);
    int on_zero = hd->stream_id == 0;
    switch (hd->type) {
    case H2F_DATA:
    case H2F_HEADERS:
    case H2F_CONTINUATION:
        /* 6.1, 6.2, 6.10: these belong to a stream. */
        if (on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        return ok;
    case H2F_PRIORITY:
        /* 6.3: on a stream, exactly 5 bytes (else a stream error). */
        if (on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        if (hd->length != 5) return fault(H2E_FRAME_SIZE_ERROR, 1);
        return ok;
    case H2F_RST_STREAM:
        /* 6.4: on a stream, exactly 4 bytes (a connection error). */
        if (on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        if (hd->length != 4) return fault(H2E_FRAME_SIZE_ERROR, 0);
        return ok;
    case H2F_SETTINGS:
        /* 6.5: on stream 0; a multiple of 6 bytes; an ACK is empty. */
        if (!on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        if ((hd->flags & H2FL_ACK) ? hd->length != 0 : hd->length % 6 != 0)
            return fault(H2E_FRAME_SIZE_ERROR, 0);
        return ok;
    case H2F_PUSH_PROMISE:
        /* 8.4: a client cannot push. */
        return fault(H2E_PROTOCOL_ERROR, 0);
    case H2F_PING:
        /* 6.7: on stream 0, exactly 8 bytes. */
        if (!on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        if (hd->length != 8) return fault(H2E_FRAME_SIZE_ERROR, 0);
        return ok;
    case H2F_GOAWAY:
        /* 6.8: on stream 0, at least 8 bytes. */
        if (!on_zero) return fault(H2E_PROTOCOL_ERROR, 0);
        if (hd->length < 8) return fault(H2E_FRAME_SIZE_ERROR, 0);
        return ok;
    case H2F_WINDOW_UPDATE:
        /* 6.9: exactly 4 bytes, on any stream. */
        if (hd->length != 4) return fault(H2E_FRAME_SIZE_ERROR, 0);
        return ok;
    default:
        return ok; /* 4.1: unknown types are ignored */
    }
}

int h2_frame_content(const h2_frame_hd *hd, const uint8_t *payload,
                     const uint8_t **out, size_t *out_len) {
    size_t len = hd->length, skip = 0, pad = 0;
    if (hd->flags & H2FL_PADDED) {
        if (len < 1) return -1;
        pad = payload[0];
        skip = 1;
    }
    if (hd->type == H2F_HEADERS && (hd->flags & H2FL_PRIORITY)) skip += 5;
    if (skip + pad > len) return -1;
    *out = payload + skip;
    *out_len = len - skip - pad;
    return 0;
}

size_t h2_write_rst_stream(uint8_t *p, uint32_t stream_id, uint32_t code) {
    size_t n = h2_frame_write_hd(p, 4, H2F_RST_STREAM, 0, stream_id);
    put32(p + n, code);
    return n + 4;
}

size_t h2_write_window_update(uint8_t *p, uint32_t stream_id,
                              uint32_t increment) {
    size_t n = h2_frame_write_hd(p, 4, H2F_WINDOW_UPDATE, 0, stream_id);
    put32(p + n, increment & 0x7fffffffu);
    return n + 4;
}

size_t h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8]) {
    size_t n = h2_frame_write_hd(p, 8, H2F_PING, H2FL_ACK, 0);
    memcpy(p + n, opaque, 8);
    return n + 8;
}

size_t h2_write_settings_ack(uint8_t *p) {
    return h2_frame_write_hd(p, 0, H2F_SETTINGS, H2FL_ACK, 0);
}

size_t h2_write_goaway(uint8_t *p, uint32_t last_stream_id, uint32_t code) {
    size_t n = h2_frame_write_hd(p, 8, H2F_GOAWAY, 0, 0);
    put32(p + n, last_stream_id & 0x7fffffffu);
    put32(p + n + 4, code);
    return n + 8;
}
