/* sbuf: a growable byte buffer for route scratch space (response bodies,
 * decoded query components, JSON bookkeeping). It lives per connection or
 * per stream and is reused across requests, so after the first request it
 * normally costs no allocation at all. */
#ifndef SBUF_H
#define SBUF_H

#include <stddef.h>

typedef struct sbuf {
    char *data;
    size_t len, cap;
} sbuf;

/* Makes room for `extra` more bytes after len; data may move. 0 or -1
 * (out of memory, or a size that would overflow). */
int sbuf_reserve(sbuf *b, size_t extra);
/* Appends n bytes; 0 or -1. */
int sbuf_put(sbuf *b, const void *p, size_t n);
/* Forgets the contents; frees the memory if it grew above keep_cap, so a
 * single huge request does not pin its buffer for the connection's life. */
void sbuf_reset(sbuf *b, size_t keep_cap);
void sbuf_free(sbuf *b);

#endif
