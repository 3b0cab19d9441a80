#include "http3/quic_mem.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Each block carries its size in front, so that free and realloc know what
 * to take off the count; the header keeps the block's alignment. */
#define HDR (sizeof(max_align_t) > sizeof(size_t) ? sizeof(max_align_t) : sizeof(size_t))

static int fits(const quic_mem *m, size_t add) {
    return !m->cap || (add <= m->cap && m->used <= m->cap - add);
}

static void count(quic_mem *m, size_t add, size_t sub) {
    m->used = m->used - sub + add;
    if (m->used > m->peak) m->peak = m->used;
}

static void *mem_malloc(size_t size, void *ud) {
    quic_mem *m = ud;
    if (size > SIZE_MAX - HDR || !fits(m, size + HDR)) {
        m->refused = 1;
        return NULL;
    }
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof(size));
    count(m, size + HDR, 0);
    return p + HDR;
}

static void mem_free(void *ptr, void *ud) {
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t size;
    memcpy(&size, p, sizeof(size));
    count(ud, 0, size + HDR);
    free(p);
}

static void *mem_calloc(size_t n, size_t size, void *ud) {
    if (size && n > SIZE_MAX / size) {
        ((quic_mem *)ud)->refused = 1;
        return NULL;
    }
    void *p = mem_malloc(n * size, ud);
    if (p) memset(p, 0, n * size);
    return p;
}

static void *mem_realloc(void *ptr, size_t size, void *ud) {
    quic_mem *m = ud;
    if (!ptr) return mem_malloc(size, ud);
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t old;
    memcpy(&old, p, sizeof(old));
    /* a block that grows must fit; the old one stays as it was when not */
    if (size > SIZE_MAX - HDR || (size > old && !fits(m, size - old))) {
        m->refused = 1;
        return NULL;
    }
    unsigned char *q = realloc(p, size + HDR);
    if (!q) return NULL;
    memcpy(q, &size, sizeof(size));
    count(m, size, old);
    return q + HDR;
}

void quic_mem_init(quic_mem *m, size_t cap) {
    memset(m, 0, sizeof(*m));
    m->cap = cap;
    m->ng = (ngtcp2_mem){m, mem_malloc, mem_free, mem_calloc, mem_realloc};
    m->h3 = (nghttp3_mem){m, mem_malloc, mem_free, mem_calloc, mem_realloc};
}
