#include "h2_hpack.h"

#include <string.h>

#include "http/http_status.h"

size_t hpack_put_int(uint8_t *p, uint8_t first, int prefix_bits, uint32_t v) {
    uint32_t max = (1u << prefix_bits) - 1;
    if (v < max) {
        p[0] = (uint8_t)(first | v);
        return 1;
    }
    size_t n = 0;
    p[n++] = (uint8_t)(first | max);
    v -= max;
    while (v >= 128) {
        p[n++] = (uint8_t)(v % 128 + 128);
        v /= 128;
    }
    p[n++] = (uint8_t)v;
    return n;
}

size_t hpack_put_field(uint8_t *p, unsigned name_index, const char *value,
                       size_t vlen) {
    /* 0000xxxx: literal without indexing, 4-bit name index (6.2.2). */
    size_t n = hpack_put_int(p, 0x00, 4, name_index);
    n += hpack_put_int(p + n, 0x00, 7, (uint32_t)vlen); /* H = 0 */
    memcpy(p + n, value, vlen);
    return n + vlen;
}

size_t hpack_put_status(uint8_t *p, int code) {
    /* 1xxxxxxx: an indexed field (6.1), static entries 8..14. */
    switch (code) {
    case 200: p[0] = 0x80 | 8; return 1;
    case 204: p[0] = 0x80 | 9; return 1;
    case 206: p[0] = 0x80 | 10; return 1;
    case 304: p[0] = 0x80 | 11; return 1;
    case 400: p[0] = 0x80 | 12; return 1;
    case 404: p[0] = 0x80 | 13; return 1;
    case 500: p[0] = 0x80 | 14; return 1;
    default: {
        char d[3];
        http_status_digits(code, d);
        return hpack_put_field(p, HPACK_STATUS, d, 3);
    }
    }
}
