/* h2_settings: a peer's SETTINGS payload read and checked (RFC 9113 6.5.2),
 * and the flow-control window arithmetic that depends on it (6.9). Pure. */
#ifndef H2_SETTINGS_H
#define H2_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define H2_MAX_WINDOW 0x7fffffff
#define H2_DEFAULT_WINDOW 65535

enum {
    H2SET_HEADER_TABLE_SIZE = 0x1,
    H2SET_ENABLE_PUSH = 0x2,
    H2SET_MAX_CONCURRENT_STREAMS = 0x3,
    H2SET_INITIAL_WINDOW_SIZE = 0x4,
    H2SET_MAX_FRAME_SIZE = 0x5,
    H2SET_MAX_HEADER_LIST_SIZE = 0x6,
    H2SET_NO_RFC7540_PRIORITIES = 0x9
};

/* What the peer told us, starting from the protocol's initial values. */
typedef struct h2_peer_settings {
    uint32_t header_table_size;
    uint32_t enable_push;
    uint32_t max_concurrent_streams; /* UINT32_MAX: no limit given */
    uint32_t initial_window_size;
    uint32_t max_frame_size;
    uint32_t max_header_list_size; /* UINT32_MAX: no limit given */
} h2_peer_settings;

void h2_settings_defaults(h2_peer_settings *s);
/* Applies a SETTINGS payload (len a multiple of 6, checked before) in
 * order. Returns 0, or the error code (PROTOCOL_ERROR, FLOW_CONTROL_ERROR)
 * of the first bad value; s then holds the settings before it. Unknown ids
 * are ignored (6.5.2). */
uint32_t h2_settings_apply(h2_peer_settings *s, const uint8_t *payload,
                           size_t len);

/* A send window after the peer's WINDOW_UPDATE of increment (1..2^31-1):
 * 0, or -1 when it would pass 2^31-1 (FLOW_CONTROL_ERROR). */
int h2_window_add(int64_t *window, uint32_t increment);
/* A stream's send window after INITIAL_WINDOW_SIZE changed from old to
 * new: it moves by the difference and may go negative (6.9.2); -1 when it
 * would pass 2^31-1. */
int h2_window_rebase(int64_t *window, uint32_t old_initial,
                     uint32_t new_initial);

#endif
