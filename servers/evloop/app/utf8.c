#include "utf8.h"

/* The continuation byte rules of table 3-7: the second byte's range depends
 * on the lead byte (that is what rules out overlongs, surrogates and code
 * points past U+10FFFF); later bytes are always 80..BF. */
static int cont(unsigned char c) { return (c & 0xC0) == 0x80; }

size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    unsigned char lo = 0x80, hi = 0xBF;
    size_t len;

    if (c < 0x80) return 1;
    if (c < 0xC2) return 0; /* stray continuation, or overlong C0/C1 */
    if (c < 0xE0) len = 2;
    else if (c < 0xF0) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;      /* overlong below U+0800 */
        else if (c == 0xED) hi = 0x9F; /* U+D800..DFFF are surrogates */
    } else if (c < 0xF5) {
        len = 4;
        if (c == 0xF0) lo = 0x90;      /* overlong below U+10000 */
        else if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
    } else return 0;

    if (n < len || p[1] < lo || p[1] > hi) return 0;
    if (len > 2 && !cont(p[2])) return 0;
    if (len > 3 && !cont(p[3])) return 0;
    return len;
}

int utf8_valid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        /* ASCII runs are the common case: skip them without the table. */
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t k = utf8_seq(p, (size_t)(end - p));
        if (!k) return 0;
        p += k;
    }
    return 1;
}

size_t utf8_encode(uint32_t cp, char *o) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
