#include "http3/quic_heap.h"

#include <stdlib.h>

static void place(quic_heap *h, size_t i, heap_node *node) {
    h->v[i] = node;
    node->index = i;
}

static void up(quic_heap *h, size_t i) {
    heap_node *node = h->v[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->v[parent]->at <= node->at) break;
        place(h, i, h->v[parent]);
        i = parent;
    }
    place(h, i, node);
}

static void down(quic_heap *h, size_t i) {
    heap_node *node = h->v[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->v[c + 1]->at < h->v[c]->at) c++;
        if (node->at <= h->v[c]->at) break;
        place(h, i, h->v[c]);
        i = c;
    }
    place(h, i, node);
}

void heap_remove(quic_heap *h, heap_node *node) {
    size_t i = node->index;
    if (i == HEAP_NONE) return;
    node->index = HEAP_NONE;
    heap_node *last = h->v[--h->n];
    if (i == h->n) return;
    place(h, i, last);
    up(h, i);
    down(h, last->index);
}

int heap_set(quic_heap *h, heap_node *node, uint64_t at) {
    if (at == UINT64_MAX) {
        heap_remove(h, node);
        node->at = at;
        return 0;
    }
    if (node->index != HEAP_NONE) {
        uint64_t was = node->at;
        node->at = at;
        if (at < was) up(h, node->index);
        else down(h, node->index);
        return 0;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        heap_node **v = realloc(h->v, cap * sizeof(*v));
        if (!v) return -1;
        h->v = v;
        h->cap = cap;
    }
    node->at = at;
    place(h, h->n++, node);
    up(h, node->index);
    return 0;
}

heap_node *heap_top(const quic_heap *h) { return h->n ? h->v[0] : NULL; }

void heap_free(quic_heap *h) {
    free(h->v);
    *h = (quic_heap){0};
}
