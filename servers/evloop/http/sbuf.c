#include "sbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* First allocation: enough for every small response the routes produce. */
#define SBUF_MIN_CAP 512

int sbuf_reserve(sbuf *b, size_t extra) {
    /* Even a zero-byte request allocates once, so that callers can always
     * form data + len (arithmetic on a NULL data would be undefined). */
    if (extra <= b->cap - b->len && b->data) return 0;
    if (extra > SIZE_MAX / 2 - b->len) return -1;
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : SBUF_MIN_CAP;
    while (cap < need) cap *= 2; /* doubling: amortized O(1) appends */
    char *nd = realloc(b->data, cap);
    if (!nd) return -1;
    b->data = nd;
    b->cap = cap;
    return 0;
}

int sbuf_put(sbuf *b, const void *p, size_t n) {
    if (sbuf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void sbuf_reset(sbuf *b, size_t keep_cap) {
    b->len = 0;
    if (b->cap > keep_cap) sbuf_free(b);
}

void sbuf_free(sbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
