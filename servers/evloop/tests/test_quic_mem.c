/* The HTTP/3 connection's counting allocator (http3/quic_mem.h): what is
 * allocated is counted with its header and given back on free, realloc
 * moves the count by the difference, the cap refuses what would pass it
 * (a refused realloc leaves the block as it was), and overflowing sizes are
 * refused, not wrapped. */
#include <stdint.h>
#include <string.h>

#include "http3/quic_mem.h"
#include "test.h"

void test_quic_mem(void) {
    quic_mem m;
    T_BEGIN;
    quic_mem_init(&m, 4096);
    const ngtcp2_mem *ng = &m.ng;
    unsigned char *a = ng->malloc(1000, ng->user_data);
    T_CHECK(a != NULL && m.used > 1000 && m.used < 1100);
    size_t one = m.used;
    memset(a, 0xab, 1000); /* usable, and ASan sees every byte */
    unsigned char *b = m.h3.calloc(10, 100, m.h3.user_data); /* nghttp3's side counts too */
    T_CHECK(b != NULL && b[0] == 0 && b[999] == 0 && m.used == 2 * one);
    T_CHECK(ng->malloc(3000, ng->user_data) == NULL && m.refused); /* would pass 4096 */
    T_CHECK(m.used == 2 * one);
    unsigned char *c = ng->realloc(a, 3500, ng->user_data); /* grows past the cap: refused */
    T_CHECK(c == NULL && m.used == 2 * one && a[999] == 0xab);
    c = ng->realloc(a, 500, ng->user_data); /* shrinks: always */
    T_CHECK(c != NULL && c[499] == 0xab && m.used == 2 * one - 500);
    T_CHECK(ng->calloc(SIZE_MAX / 2, 4, ng->user_data) == NULL); /* n * size overflows */
    T_CHECK(ng->malloc(SIZE_MAX - 4, ng->user_data) == NULL);
    ng->free(c, ng->user_data);
    m.h3.free(b, m.h3.user_data);
    ng->free(NULL, ng->user_data);
    T_CHECK(m.used == 0 && m.peak == 2 * one);
    quic_mem_init(&m, 0); /* no cap */
    void *big = ng->malloc(1 << 20, ng->user_data);
    T_CHECK(big != NULL && !m.refused);
    ng->free(big, ng->user_data);
    T_CHECK(m.used == 0);
    T_END("quic", "the connection allocator counts, caps and refuses overflow");
}
