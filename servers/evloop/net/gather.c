#include "gather.h"

#include <stdlib.h>
#include <string.h>

/* Smallest buffer: a few pipelined responses fit without regrowing. */
#define GATHER_MIN (16 * 1024)

ssize_t gather_fill(gather *g, const struct iovec *iov, int iovcnt,
                    size_t max) {
    size_t total = 0;
    for (int i = 0; i < iovcnt && total < max; i++) total += iov[i].iov_len;
    if (total > max) total = max;

    if (total > g->cap) {
        size_t cap = g->cap ? g->cap : GATHER_MIN;
        while (cap < total) cap *= 2;
        /* Nothing is staged, so there is nothing to carry over: free and
         * malloc instead of realloc, which could copy the old bytes. */
        free(g->buf);
        g->buf = malloc(cap);
        g->cap = g->buf ? cap : 0;
        if (!g->buf) return -1;
    }
    iov_copy(iov, iovcnt, 0, g->buf, total);
    g->len = total;
    return (ssize_t)total;
}

void gather_done(gather *g, size_t keep) {
    g->len = 0;
    if (g->cap > keep) gather_free(g);
}

void gather_free(gather *g) {
    free(g->buf);
    g->buf = NULL;
    g->cap = g->len = 0;
}

size_t iov_copy(const struct iovec *iov, int iovcnt, size_t off, void *dst,
                size_t n) {
    size_t got = 0;
    for (int i = 0; i < iovcnt && got < n; i++) {
        size_t len = iov[i].iov_len;
        if (off >= len) {
            off -= len;
            continue;
        }
        size_t k = len - off < n - got ? len - off : n - got;
        memcpy((char *)dst + got, (const char *)iov[i].iov_base + off, k);
        got += k;
        off = 0;
    }
    return got;
}
