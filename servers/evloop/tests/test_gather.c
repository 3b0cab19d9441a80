/* gather tests: the copy that feeds one SSL_write_ex -- iovec boundaries,
 * the size cap (cut inside a segment), reuse without reallocation, and the
 * release of a buffer a burst grew. */
#include <stdlib.h>
#include <string.h>

#include "net/gather.h"
#include "test.h"

static void test_gathers_in_order(void) {
    gather g = {0};
    char big[5000];
    memset(big, 'b', sizeof(big));
    struct iovec iov[] = {{"head ", 5}, {"", 0}, {big, sizeof(big)},
                          {" tail", 5}};
    T_BEGIN;
    T_CHECK(gather_fill(&g, iov, 4, 1 << 20) == 5010);
    T_CHECK(g.len == 5010);
    T_CHECK(memcmp(g.buf, "head ", 5) == 0);
    T_CHECK(memcmp(g.buf + 5, big, sizeof(big)) == 0);
    T_CHECK(memcmp(g.buf + 5005, " tail", 5) == 0);
    gather_free(&g);
    T_CHECK(g.buf == NULL && g.cap == 0 && g.len == 0);
    T_END("gather", "segments copied in order");
}

static void test_cap_cuts_inside_a_segment(void) {
    gather g = {0};
    struct iovec iov[] = {{"abc", 3}, {"defgh", 5}, {"ij", 2}};
    T_BEGIN;
    T_CHECK(gather_fill(&g, iov, 3, 6) == 6);
    T_CHECK(memcmp(g.buf, "abcdef", 6) == 0);
    gather_done(&g, 1 << 20);
    T_CHECK(g.len == 0);
    /* What was not taken is offered again, as the connection does. */
    struct iovec rest[] = {{"gh", 2}, {"ij", 2}};
    T_CHECK(gather_fill(&g, rest, 2, 6) == 4);
    T_CHECK(memcmp(g.buf, "ghij", 4) == 0);
    gather_free(&g);
    T_END("gather", "the cap cuts inside a segment");
}

static void test_buffer_reuse_and_release(void) {
    gather g = {0};
    size_t n = 300 * 1024;
    char *big = malloc(n);
    memset(big, 'x', n);
    struct iovec small = {"ping", 4}, large = {big, n};
    T_BEGIN;
    T_CHECK(gather_fill(&g, &small, 1, 1 << 20) == 4);
    char *first = g.buf;
    size_t cap = g.cap;
    T_CHECK(cap >= 4 && cap <= 64 * 1024);
    gather_done(&g, 64 * 1024);
    T_CHECK(g.buf == first); /* small buffers are kept */
    T_CHECK(gather_fill(&g, &small, 1, 1 << 20) == 4 && g.buf == first);
    gather_done(&g, 64 * 1024);
    T_CHECK(gather_fill(&g, &large, 1, 1 << 20) == (ssize_t)n);
    T_CHECK(g.cap >= n && g.buf[n - 1] == 'x');
    gather_done(&g, 64 * 1024);
    T_CHECK(g.buf == NULL && g.cap == 0); /* a burst's buffer is released */
    free(big);
    T_END("gather", "small buffer reused, burst buffer released");
}

void test_gather(void) {
    test_gathers_in_order();
    test_cap_cuts_inside_a_segment();
    test_buffer_reuse_and_release();
}
