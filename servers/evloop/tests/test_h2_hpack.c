/* h2_hpack: every block written here decodes, with nghttp2's own inflater,
 * to exactly the fields meant, and leaves its dynamic table empty. */
#include <nghttp2/nghttp2.h>
#include <string.h>

#include "http2/h2_hpack.h"
#include "test.h"

typedef struct field {
    const char *name, *value;
} field;

/* Decodes block with a fresh inflater; 1 when it yields exactly want[]. */
static int decodes_to(const uint8_t *block, size_t len, const field *want,
                      size_t nwant) {
    nghttp2_hd_inflater *inf;
    if (nghttp2_hd_inflate_new(&inf) != 0) return 0;
    size_t got = 0;
    int ok = 1;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(inf, &nv, &flags, block, len, 1);
        if (r < 0) {
            ok = 0;
            break;
        }
        block += r;
        len -= (size_t)r;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            if (got >= nwant || nv.namelen != strlen(want[got].name) ||
                memcmp(nv.name, want[got].name, nv.namelen) ||
                nv.valuelen != strlen(want[got].value) ||
                memcmp(nv.value, want[got].value, nv.valuelen) ||
                (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX))
                ok = 0;
            got++;
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) break;
        if (r == 0 && len == 0) break;
    }
    /* no entry was added to the peer's dynamic table */
    ok = ok && got == nwant && nghttp2_hd_inflate_get_num_table_entries(inf) == 61;
    nghttp2_hd_inflate_del(inf);
    return ok;
}

static void test_ints(void) {
    T_BEGIN;
    uint8_t b[8];
    /* RFC 7541 C.1: 10 with a 5-bit prefix; 1337; 42 on an 8-bit prefix */
    T_CHECK(hpack_put_int(b, 0, 5, 10) == 1 && b[0] == 10);
    T_CHECK(hpack_put_int(b, 0, 5, 1337) == 3 && !memcmp(b, "\x1f\x9a\x0a", 3));
    T_CHECK(hpack_put_int(b, 0, 8, 42) == 1 && b[0] == 42);
    T_CHECK(hpack_put_int(b, 0x80, 7, 127) == 2 && !memcmp(b, "\xff\x00", 2));
    T_CHECK(hpack_put_int(b, 0, 7, 0xffffffffu) == 6);
    T_END("h2_hpack", "integers with N-bit prefixes (RFC 7541 C.1)");
}

static void test_blocks(void) {
    T_BEGIN;
    static const int codes[] = {200, 201, 204, 302, 404, 413, 500, 599};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        uint8_t b[256];
        char digits[4];
        size_t n = hpack_put_status(b, codes[i]);
        digits[0] = (char)('0' + codes[i] / 100);
        digits[1] = (char)('0' + codes[i] / 10 % 10);
        digits[2] = (char)('0' + codes[i] % 10);
        digits[3] = '\0';
        n += hpack_put_field(b + n, HPACK_SERVER, "evloop", 6);
        n += hpack_put_field(b + n, HPACK_DATE, "Tue, 24 Nov 2026 01:40:00 GMT", 29);
        n += hpack_put_field(b + n, HPACK_CONTENT_TYPE, "text/plain", 10);
        n += hpack_put_field(b + n, HPACK_CONTENT_LENGTH, "1048576", 7);
        n += hpack_put_field(b + n, HPACK_ALLOW, "GET, HEAD", 9);
        const field want[] = {{":status", digits},
                              {"server", "evloop"},
                              {"date", "Tue, 24 Nov 2026 01:40:00 GMT"},
                              {"content-type", "text/plain"},
                              {"content-length", "1048576"},
                              {"allow", "GET, HEAD"}};
        T_CHECK(decodes_to(b, n, want, 6));
    }
    /* a value past 127 bytes takes a multi-byte length */
    char big[300];
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    uint8_t b[400];
    size_t n = hpack_put_field(b, HPACK_CONTENT_TYPE, big, strlen(big));
    const field want[] = {{"content-type", big}};
    T_CHECK(n <= HPACK_FIELD_MAX(strlen(big)) && decodes_to(b, n, want, 1));
    T_END("h2_hpack", "response blocks decode with nghttp2's inflater, no "
                      "dynamic-table entry");
}

void test_h2_hpack(void) {
    test_ints();
    test_blocks();
}
