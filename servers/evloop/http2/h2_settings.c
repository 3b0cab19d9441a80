#include "h2_settings.h"

#include "h2_frame.h"

void h2_settings_defaults(h2_peer_settings *s) {
    s->header_table_size = 4096;
    s->enable_push = 1;
    s->max_concurrent_streams = UINT32_MAX;
    s->initial_window_size = H2_DEFAULT_WINDOW;
    s->max_frame_size = H2_DEFAULT_MAX_FRAME;
    s->max_header_list_size = UINT32_MAX;
}

uint32_t h2_settings_apply(h2_peer_settings *s, const uint8_t *p, size_t len) {
    for (size_t i = 0; i + 6 <= len; i += 6) {
        uint16_t id = (uint16_t)(p[i] << 8 | p[i + 1]);
        uint32_t v = (uint32_t)p[i + 2] << 24 | (uint32_t)p[i + 3] << 16 |
                     (uint32_t)p[i + 4] << 8 | p[i + 5];
        switch (id) {
        case H2SET_HEADER_TABLE_SIZE: s->header_table_size = v; break;
        case H2SET_ENABLE_PUSH:
            if (v > 1) return H2E_PROTOCOL_ERROR;
            s->enable_push = v;
            break;
        case H2SET_MAX_CONCURRENT_STREAMS: s->max_concurrent_streams = v; break;
        case H2SET_INITIAL_WINDOW_SIZE:
            if (v > H2_MAX_WINDOW) return H2E_FLOW_CONTROL_ERROR;
            s->initial_window_size = v;
            break;
        case H2SET_MAX_FRAME_SIZE:
            if (v < H2_DEFAULT_MAX_FRAME || v > H2_MAX_FRAME_LIMIT)
                return H2E_PROTOCOL_ERROR;
            s->max_frame_size = v;
            break;
        case H2SET_MAX_HEADER_LIST_SIZE: s->max_header_list_size = v; break;
        default: break; /* unknown, and NO_RFC7540_PRIORITIES: nothing to do */
        }
    }
    return H2E_NO_ERROR;
}

int h2_window_add(int64_t *window, uint32_t increment) {
    if (*window + (int64_t)increment > H2_MAX_WINDOW) return -1;
    *window += increment;
    return 0;
}

int h2_window_rebase(int64_t *window, uint32_t old_initial,
                     uint32_t new_initial) {
    int64_t w = *window + (int64_t)new_initial - (int64_t)old_initial;
    if (w > H2_MAX_WINDOW) return -1;
    *window = w;
    return 0;
}
