/* quic_heap: the endpoint's connections by their next deadline (ngtcp2's
 * expiry: loss detection, ACK delay, idle and handshake timeouts), a binary
 * min-heap of nodes embedded in the connections. The loop's timer list is
 * a short linear one (loop/ae.c), so the endpoint keeps one loop timer for
 * the earliest deadline here instead of one per connection. */
#ifndef QUIC_HEAP_H
#define QUIC_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct heap_node {
    uint64_t at;  /* ns, CLOCK_MONOTONIC; UINT64_MAX: none */
    size_t index; /* in the heap, or HEAP_NONE */
} heap_node;

#define HEAP_NONE ((size_t)-1)

typedef struct quic_heap {
    heap_node **v;
    size_t n, cap;
} quic_heap;

/* Inserts, moves or (at == UINT64_MAX) removes the node. 0, or -1 when the
 * heap could not grow (the node is then left out). */
int heap_set(quic_heap *h, heap_node *node, uint64_t at);
void heap_remove(quic_heap *h, heap_node *node);
/* The earliest node, or NULL. */
heap_node *heap_top(const quic_heap *h);
void heap_free(quic_heap *h);

#endif
