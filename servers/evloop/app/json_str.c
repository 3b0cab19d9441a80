#include "json_str.h"

#include <string.h>

#include "utf8.h"

/* Rows of 16 bytes; 00..1F are control characters, 22 is '"', 5C is
 * '\', and 80..FF (all zero, left implicit) need UTF-8 checks. */
const unsigned char json_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 10 */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 20 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 50 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 70 */
};

char *json_escape_ascii(char *o, unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    if (json_plain[c]) {
        *o++ = (char)c;
        return o;
    }
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; return o;
    case '\\': *o++ = '\\'; return o;
    case '\b': *o++ = 'b'; return o;
    case '\f': *o++ = 'f'; return o;
    case '\n': *o++ = 'n'; return o;
    case '\r': *o++ = 'r'; return o;
    case '\t': *o++ = 't'; return o;
    default:
        memcpy(o, "u00", 3);
        o[3] = hex[c >> 4];
        o[4] = hex[c & 15];
        return o + 5;
    }
}

int json_put_string(sbuf *out, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    /* Worst case: every byte a control character (6 bytes), plus quotes.
     * One reservation up front keeps the loop free of bounds checks. */
    if (n > ((size_t)-1 - 2) / 6 || sbuf_reserve(out, 6 * n + 2) < 0)
        return JSON_NOMEM;
    char *o = out->data + out->len;

    *o++ = '"';
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && json_plain[*p]) p++;
        memcpy(o, run, (size_t)(p - run));
        o += p - run;
        if (p == end) break;
        if (*p < 0x80) {
            o = json_escape_ascii(o, *p++);
            continue;
        }
        size_t k = utf8_seq(p, (size_t)(end - p));
        if (!k) return JSON_INVALID;
        memcpy(o, p, k);
        o += k;
        p += k;
    }
    *o++ = '"';
    out->len = (size_t)(o - out->data);
    return JSON_OK;
}
