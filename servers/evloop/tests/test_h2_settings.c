/* h2_settings: SETTINGS values checked as RFC 9113 6.5.2 says, applied in
 * order, and window arithmetic at its edges (6.9.1, 6.9.2). */
#include <string.h>

#include "http2/h2_frame.h"
#include "http2/h2_settings.h"
#include "test.h"

static size_t setting(uint8_t *p, uint16_t id, uint32_t v) {
    p[0] = (uint8_t)(id >> 8);
    p[1] = (uint8_t)id;
    p[2] = (uint8_t)(v >> 24);
    p[3] = (uint8_t)(v >> 16);
    p[4] = (uint8_t)(v >> 8);
    p[5] = (uint8_t)v;
    return 6;
}

static void test_values(void) {
    T_BEGIN;
    h2_peer_settings s;
    uint8_t b[64];
    size_t n = 0;
    h2_settings_defaults(&s);
    n += setting(b + n, H2SET_INITIAL_WINDOW_SIZE, 1 << 20);
    n += setting(b + n, H2SET_MAX_FRAME_SIZE, 1 << 20);
    n += setting(b + n, H2SET_ENABLE_PUSH, 0);
    n += setting(b + n, 0x4242, 7); /* unknown: ignored */
    n += setting(b + n, H2SET_INITIAL_WINDOW_SIZE, 100); /* the last one wins */
    T_CHECK(h2_settings_apply(&s, b, n) == H2E_NO_ERROR);
    T_CHECK(s.initial_window_size == 100 && s.max_frame_size == 1 << 20 &&
            s.enable_push == 0 && s.max_concurrent_streams == UINT32_MAX);
    h2_settings_defaults(&s);
    T_CHECK(h2_settings_apply(&s, b, setting(b, H2SET_ENABLE_PUSH, 2)) ==
            H2E_PROTOCOL_ERROR);
    T_CHECK(h2_settings_apply(&s, b, setting(b, H2SET_INITIAL_WINDOW_SIZE,
                                             0x80000000u)) ==
            H2E_FLOW_CONTROL_ERROR);
    T_CHECK(h2_settings_apply(&s, b, setting(b, H2SET_MAX_FRAME_SIZE, 16383)) ==
            H2E_PROTOCOL_ERROR);
    T_CHECK(h2_settings_apply(&s, b, setting(b, H2SET_MAX_FRAME_SIZE,
                                             16777216)) == H2E_PROTOCOL_ERROR);
    T_CHECK(s.initial_window_size == H2_DEFAULT_WINDOW &&
            s.max_frame_size == H2_DEFAULT_MAX_FRAME);
    T_END("h2_settings", "values applied in order; bad ones named by their "
                         "error code");
}

static void test_windows(void) {
    T_BEGIN;
    int64_t w = H2_DEFAULT_WINDOW;
    T_CHECK(h2_window_add(&w, 0x7fffffff - H2_DEFAULT_WINDOW) == 0 &&
            w == 0x7fffffff);
    T_CHECK(h2_window_add(&w, 1) < 0 && w == 0x7fffffff);
    w = 10;
    T_CHECK(h2_window_rebase(&w, H2_DEFAULT_WINDOW, 0) == 0 &&
            w == 10 - H2_DEFAULT_WINDOW); /* negative: allowed */
    T_CHECK(h2_window_add(&w, H2_DEFAULT_WINDOW) == 0 && w == 10);
    T_CHECK(h2_window_rebase(&w, 0, 0x7fffffff) < 0 && w == 10);
    T_END("h2_settings", "send windows: 2^31-1 at most, negative after a "
                         "smaller INITIAL_WINDOW_SIZE");
}

void test_h2_settings(void) {
    test_values();
    test_windows();
}
