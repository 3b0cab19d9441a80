/* The HTTP/3 endpoint's two tables: connection IDs to connections (lookup
 * by exact id, several ids per connection, removal leaves the others, a
 * taken id is refused) and the deadline heap (the earliest first through
 * inserts, moves both ways and removals, checked against a sorted copy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http3/quic_cid.h"
#include "http3/quic_heap.h"
#include "test.h"

static void test_cid_map(void) {
    cid_map m;
    int a, b;
    uint8_t id1[18], id2[18], odcid[8];
    memset(id1, 1, sizeof(id1));
    memset(id2, 1, sizeof(id2));
    id2[17] = 2; /* differs in its last byte only */
    memset(odcid, 1, sizeof(odcid)); /* a prefix of id1 */
    T_BEGIN;
    T_CHECK(cid_map_init(&m, 4) == 0); /* few buckets: chains get long */
    T_CHECK(cid_map_put(&m, id1, 18, &a) == 0);
    T_CHECK(cid_map_put(&m, id2, 18, &a) == 0);
    T_CHECK(cid_map_put(&m, odcid, 8, &b) == 0);
    T_CHECK(cid_map_put(&m, id1, 18, &b) == -1); /* taken */
    T_CHECK(cid_map_put(&m, id1, 21, &b) == -1); /* longer than QUIC allows */
    T_CHECK(cid_map_get(&m, id1, 18) == &a && cid_map_get(&m, id2, 18) == &a);
    T_CHECK(cid_map_get(&m, odcid, 8) == &b);
    T_CHECK(cid_map_get(&m, id1, 17) == NULL && cid_map_get(&m, id1, 0) == NULL);
    for (int i = 0; i < 1000; i++) { /* and many more, across every bucket */
        uint8_t id[18] = {0};
        memcpy(id, &i, sizeof(i));
        T_CHECK(cid_map_put(&m, id, 18, &b) == 0);
    }
    cid_map_del(&m, id1, 18);
    T_CHECK(cid_map_get(&m, id1, 18) == NULL && cid_map_get(&m, id2, 18) == &a);
    cid_map_del(&m, id1, 18); /* absent: nothing */
    T_CHECK(m.n == 1002);
    cid_map_free(&m);
    T_END("quic", "connection ids map to their connection");
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void test_heap(void) {
    enum { N = 500 };
    static heap_node nodes[N];
    quic_heap h = {0};
    uint64_t want[N];
    uint64_t seed = 88172645463325252ULL;
    T_BEGIN;
    for (int i = 0; i < N; i++) {
        nodes[i] = (heap_node){UINT64_MAX, HEAP_NONE};
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        T_CHECK(heap_set(&h, &nodes[i], seed % 100000) == 0);
    }
    /* move every third earlier or later, drop every fifth */
    for (int i = 0; i < N; i += 3) heap_set(&h, &nodes[i], nodes[i].at % 2 ? nodes[i].at / 2 : nodes[i].at * 3);
    for (int i = 0; i < N; i += 5) heap_set(&h, &nodes[i], UINT64_MAX);
    size_t n = 0;
    for (int i = 0; i < N; i++)
        if (nodes[i].index != HEAP_NONE) want[n++] = nodes[i].at;
    T_CHECK(n == h.n);
    qsort(want, n, sizeof(want[0]), cmp_u64);
    for (size_t i = 0; i < n; i++) {
        heap_node *top = heap_top(&h);
        T_CHECK(top && top->at == want[i]);
        if (!top) break;
        heap_remove(&h, top);
        T_CHECK(top->index == HEAP_NONE);
    }
    T_CHECK(heap_top(&h) == NULL);
    heap_free(&h);
    T_END("quic", "the deadline heap yields the earliest first");
}

void test_quic_table(void) {
    test_cid_map();
    test_heap();
}
