#include "query.h"

#include <string.h>

void query_iter_init(query_iter *it, const char *q, size_t n) {
    it->p = q;
    it->end = q ? q + n : q;
}

int query_next(query_iter *it, query_param *out) {
    while (it->p < it->end) {
        const char *p = it->p;
        const char *amp = memchr(p, '&', (size_t)(it->end - p));
        const char *pend = amp ? amp : it->end;
        it->p = amp ? amp + 1 : it->end;
        if (pend == p) continue; /* "&&" or a trailing '&' */
        const char *eq = memchr(p, '=', (size_t)(pend - p));
        out->name = p;
        out->name_len = (size_t)((eq ? eq : pend) - p);
        out->value = eq ? eq + 1 : pend;
        out->value_len = eq ? (size_t)(pend - eq - 1) : 0;
        return 1;
    }
    return 0;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One decoded byte from src at *i (advanced past it); -1 if malformed. */
static int next_byte(const char *src, size_t n, size_t *i) {
    char c = src[*i];
    if (c == '+') {
        (*i)++;
        return ' ';
    }
    if (c != '%') {
        (*i)++;
        return (unsigned char)c;
    }
    int hi, lo;
    if (n - *i < 3 || (hi = hex_digit(src[*i + 1])) < 0 ||
        (lo = hex_digit(src[*i + 2])) < 0)
        return -1;
    *i += 3;
    return hi * 16 + lo;
}

ssize_t query_decode(const char *src, size_t n, char *dst) {
    size_t i = 0, o = 0;
    while (i < n) {
        /* Runs without '%' or '+' are the common case: copy them whole. */
        size_t j = i;
        while (j < n && src[j] != '%' && src[j] != '+') j++;
        memcpy(dst + o, src + i, j - i);
        o += j - i;
        i = j;
        if (i == n) break;
        int b = next_byte(src, n, &i);
        if (b < 0) return -1;
        dst[o++] = (char)b;
    }
    return (ssize_t)o;
}

int query_decoded_eq(const char *src, size_t n, const char *lit) {
    size_t i = 0;
    for (; i < n && *lit; lit++) {
        int b = next_byte(src, n, &i);
        if (b != (unsigned char)*lit) return 0;
    }
    return i == n && *lit == '\0';
}
