/* bufpool: a stack of free fixed-size blocks, so connections can take their
 * buffers when data arrives and give them back when they go idle (as nginx
 * does) without a malloc/free pair per request. At most `keep` free blocks
 * are held; beyond that a returned block is freed, so an idle server holds
 * little more than its connection structs. */
#ifndef BUFPOOL_H
#define BUFPOOL_H

#include <stddef.h>

#define BUFPOOL_KEEP_MAX 64

typedef struct bufpool {
    size_t size; /* every block's size */
    int keep;    /* free blocks held at most (<= BUFPOOL_KEEP_MAX) */
    int n;
    void *free[BUFPOOL_KEEP_MAX];
} bufpool;

void bufpool_init(bufpool *p, size_t size, int keep);
/* A block of p->size bytes (contents undefined), or NULL. */
void *bufpool_take(bufpool *p);
/* b came from bufpool_take (or NULL, ignored). */
void bufpool_give(bufpool *p, void *b);
/* Frees the blocks held. */
void bufpool_clear(bufpool *p);

#endif
