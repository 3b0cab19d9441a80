/* h2_wire tests: preface classification at every prefix length, the
 * HTTP2-Settings base64url decoder, and token lists (Upgrade). */
#include <stdlib.h>
#include <string.h>

#include "http2/h2_wire.h"
#include "test.h"

/* Classifies an exactly-sized heap copy, so ASan catches over-reads. */
static int check(const char *s, size_t n) {
    char *p = malloc(n ? n : 1);
    memcpy(p, s, n);
    int r = h2_preface_check(p, n);
    free(p);
    return r;
}

static void test_preface_prefixes(void) {
    T_BEGIN;
    T_CHECK(H2_PREFACE_LEN == 24);
    for (size_t n = 0; n < H2_PREFACE_LEN; n++)
        T_CHECK(check(H2_PREFACE, n) == H2_PREFACE_PARTIAL);
    T_CHECK(check(H2_PREFACE, H2_PREFACE_LEN) == H2_PREFACE_YES);
    T_END("h2_wire", "every prefix of the preface");
}

static void test_preface_then_frames(void) {
    char more[64];
    T_BEGIN;
    memcpy(more, H2_PREFACE, H2_PREFACE_LEN);
    memcpy(more + H2_PREFACE_LEN, "\0\0\0\4\0\0\0\0\0", 9); /* SETTINGS */
    T_CHECK(check(more, H2_PREFACE_LEN + 9) == H2_PREFACE_YES);
    T_END("h2_wire", "preface followed by frames");
}

static void test_not_preface(void) {
    T_BEGIN;
    T_CHECK(check("GET / HTTP/1.1\r\n", 16) == H2_PREFACE_NO);
    T_CHECK(check("P", 1) == H2_PREFACE_PARTIAL);
    T_CHECK(check("PRI * HTTP/1.1\r\n", 16) == H2_PREFACE_NO);
    T_CHECK(check("POST", 4) == H2_PREFACE_NO);
    T_CHECK(check("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\r", 24) == H2_PREFACE_NO);
    T_END("h2_wire", "not a preface");
}

typedef struct b64_case {
    const char *in;
    int ok;
    const char *out; /* decoded bytes when ok */
    size_t out_len;
} b64_case;

static const b64_case b64[] = {
    {"", 1, "", 0},
    {"AAMAAABkAARAAAAAAAIAAAAA", 1,
     "\x00\x03\x00\x00\x00\x64\x00\x04\x40\x00\x00\x00\x00\x02\x00\x00\x00"
     "\x00", 18},
    {"TWFu", 1, "Man", 3},
    {"TWE", 1, "Ma", 2},
    {"TWE=", 1, "Ma", 2},
    {"TQ", 1, "M", 1},
    {"TQ==", 1, "M", 1},
    {"-_-_", 1, "\xfb\xff\xbf", 3},
    {"T", 0, NULL, 0},
    {"TWFuT", 0, NULL, 0},
    {"TW+u", 0, NULL, 0}, /* '+' is base64, not base64url */
    {"TW/u", 0, NULL, 0},
    {"TW u", 0, NULL, 0},
    {"T=Fu", 0, NULL, 0}, /* padding only at the end */
};

static void run_b64(const b64_case *bc) {
    uint8_t out[64];
    T_BEGIN;
    ssize_t n = h2_base64url_decode(bc->in, strlen(bc->in), out, sizeof(out));
    T_CHECK((n >= 0) == bc->ok);
    if (bc->ok && n >= 0) {
        T_CHECK((size_t)n == bc->out_len);
        T_CHECK(memcmp(out, bc->out, bc->out_len) == 0);
    }
    T_END("base64url", bc->in);
}

static void test_b64_cap(void) {
    uint8_t out[3];
    T_BEGIN;
    T_CHECK(h2_base64url_decode("TWFu", 4, out, 3) == 3);
    T_CHECK(h2_base64url_decode("TWFuTQ", 6, out, 3) == -1);
    T_END("base64url", "output capacity");
}

void test_h2_wire(void) {
    test_preface_prefixes();
    test_preface_then_frames();
    test_not_preface();
    for (size_t i = 0; i < sizeof(b64) / sizeof(b64[0]); i++) run_b64(&b64[i]);
    test_b64_cap();
}
