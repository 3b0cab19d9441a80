#include "bufpool.h"

#include <stdlib.h>

void bufpool_init(bufpool *p, size_t size, int keep) {
    p->size = size;
    p->keep = keep < BUFPOOL_KEEP_MAX ? keep : BUFPOOL_KEEP_MAX;
    p->n = 0;
}

void *bufpool_take(bufpool *p) {
    /* LIFO: the block given back last is the one most likely in cache. */
    return p->n ? p->free[--p->n] : malloc(p->size);
}

void bufpool_give(bufpool *p, void *b) {
    if (!b) return;
    if (p->n < p->keep) p->free[p->n++] = b;
    else free(b);
}

void bufpool_clear(bufpool *p) {
    while (p->n) free(p->free[--p->n]);
}
