/* h2_frame: headers read and written bit for bit, every rule a header
 * alone can break (RFC 9113 section 6), padding edges, the control
 * frames' exact bytes. */
#include <string.h>

#include "http2/h2_frame.h"
#include "test.h"

static h2_frame_fault check(uint32_t len, uint8_t type, uint8_t flags,
                            uint32_t sid) {
    h2_frame_hd hd = {len, type, flags, sid};
    return h2_frame_check(&hd, H2_DEFAULT_MAX_FRAME);
}

static int is(h2_frame_fault f, uint32_t code, int stream_only) {
    return f.code == code && (code == H2E_NO_ERROR || f.stream_only == stream_only);
}

static void test_header_bytes(void) {
    T_BEGIN;
    uint8_t b[9];
    h2_frame_hd hd;
    T_CHECK(h2_frame_write_hd(b, 0x123456, H2F_HEADERS, 0x25, 0x7fffffff) == 9);
    T_CHECK(!memcmp(b, "\x12\x34\x56\x01\x25\x7f\xff\xff\xff", 9));
    h2_frame_read_hd(b, &hd);
    T_CHECK(hd.length == 0x123456 && hd.type == H2F_HEADERS &&
            hd.flags == 0x25 && hd.stream_id == 0x7fffffff);
    /* The reserved bit is ignored on receipt (RFC 9113 4.1). */
    memcpy(b, "\x00\x00\x04\x08\x00\x80\x00\x00\x03", 9);
    h2_frame_read_hd(b, &hd);
    T_CHECK(hd.stream_id == 3 && hd.type == H2F_WINDOW_UPDATE && hd.length == 4);
    T_END("h2_frame", "headers: 24-bit length, type, flags, 31-bit stream id");
}

static void test_rules(void) {
    T_BEGIN;
    /* stream-bound types on stream 0 */
    T_CHECK(is(check(1, H2F_DATA, 0, 0), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(1, H2F_HEADERS, 0, 0), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(1, H2F_CONTINUATION, 0, 0), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(5, H2F_PRIORITY, 0, 0), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(4, H2F_RST_STREAM, 0, 0), H2E_PROTOCOL_ERROR, 0));
    /* connection types off stream 0 */
    T_CHECK(is(check(0, H2F_SETTINGS, 0, 1), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(8, H2F_PING, 0, 1), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(8, H2F_GOAWAY, 0, 1), H2E_PROTOCOL_ERROR, 0));
    /* fixed sizes */
    T_CHECK(is(check(4, H2F_PRIORITY, 0, 1), H2E_FRAME_SIZE_ERROR, 1));
    T_CHECK(is(check(5, H2F_PRIORITY, 0, 1), H2E_NO_ERROR, 0));
    T_CHECK(is(check(3, H2F_RST_STREAM, 0, 1), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(7, H2F_SETTINGS, 0, 0), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(12, H2F_SETTINGS, 0, 0), H2E_NO_ERROR, 0));
    T_CHECK(is(check(6, H2F_SETTINGS, H2FL_ACK, 0), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(0, H2F_SETTINGS, H2FL_ACK, 0), H2E_NO_ERROR, 0));
    T_CHECK(is(check(7, H2F_PING, 0, 0), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(7, H2F_GOAWAY, 0, 0), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(20, H2F_GOAWAY, 0, 0), H2E_NO_ERROR, 0));
    T_CHECK(is(check(3, H2F_WINDOW_UPDATE, 0, 0), H2E_FRAME_SIZE_ERROR, 0));
    T_CHECK(is(check(4, H2F_WINDOW_UPDATE, 0, 7), H2E_NO_ERROR, 0));
    /* a client never pushes; unknown types are ignored; size limit */
    T_CHECK(is(check(4, H2F_PUSH_PROMISE, 0, 1), H2E_PROTOCOL_ERROR, 0));
    T_CHECK(is(check(100, 0xfa, 0, 0), H2E_NO_ERROR, 0));
    T_CHECK(is(check(H2_DEFAULT_MAX_FRAME, H2F_DATA, 0, 1), H2E_NO_ERROR, 0));
    T_CHECK(is(check(H2_DEFAULT_MAX_FRAME + 1, H2F_DATA, 0, 1),
               H2E_FRAME_SIZE_ERROR, 0));
    T_END("h2_frame", "section 6 rules a header alone can break");
}

static void test_padding(void) {
    T_BEGIN;
    const uint8_t *out;
    size_t n;
    h2_frame_hd hd = {6, H2F_DATA, H2FL_PADDED, 1};
    /* pad length 2: content is bytes 1..3 */
    T_CHECK(h2_frame_content(&hd, (const uint8_t *)"\x02" "abcXX", &out, &n) == 0);
    T_CHECK(n == 3 && !memcmp(out, "abc", 3));
    /* padding that covers the payload (6.1: PROTOCOL_ERROR) */
    T_CHECK(h2_frame_content(&hd, (const uint8_t *)"\x06" "abcXX", &out, &n) < 0);
    T_CHECK(h2_frame_content(&hd, (const uint8_t *)"\x05" "abcXX", &out, &n) == 0 && n == 0);
    hd.length = 0;
    T_CHECK(h2_frame_content(&hd, (const uint8_t *)"", &out, &n) < 0);
    /* HEADERS with PRIORITY and padding: 1 + 5 bytes skipped */
    h2_frame_hd hh = {10, H2F_HEADERS, H2FL_PADDED | H2FL_PRIORITY | H2FL_END_HEADERS, 3};
    T_CHECK(h2_frame_content(&hh, (const uint8_t *)"\x01" "PPPPP" "hhhZ", &out, &n) == 0);
    T_CHECK(n == 3 && !memcmp(out, "hhh", 3));
    hh.flags = H2FL_PRIORITY;
    hh.length = 4;
    T_CHECK(h2_frame_content(&hh, (const uint8_t *)"PPPP", &out, &n) < 0);
    T_END("h2_frame", "padding and priority bytes stripped; bad pad lengths refused");
}

static void test_writers(void) {
    T_BEGIN;
    uint8_t b[32];
    T_CHECK(h2_write_rst_stream(b, 5, H2E_CANCEL) == 13);
    T_CHECK(!memcmp(b, "\x00\x00\x04\x03\x00\x00\x00\x00\x05\x00\x00\x00\x08", 13));
    T_CHECK(h2_write_window_update(b, 0, 0x80000010u) == 13);
    T_CHECK(!memcmp(b, "\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x00\x10", 13));
    T_CHECK(h2_write_ping_ack(b, (const uint8_t *)"12345678") == 17);
    T_CHECK(!memcmp(b, "\x00\x00\x08\x06\x01\x00\x00\x00\x00" "12345678", 17));
    T_CHECK(h2_write_settings_ack(b) == 9);
    T_CHECK(!memcmp(b, "\x00\x00\x00\x04\x01\x00\x00\x00\x00", 9));
    T_CHECK(h2_write_goaway(b, 7, H2E_ENHANCE_YOUR_CALM) == 17);
    T_CHECK(!memcmp(b, "\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x0b", 17));
    T_END("h2_frame", "RST_STREAM, WINDOW_UPDATE, PING ACK, SETTINGS ACK, GOAWAY bytes");
}

void test_h2_frame(void) {
    test_header_bytes();
    test_rules();
    test_padding();
    test_writers();
}
