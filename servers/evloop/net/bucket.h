/* A token bucket: `burst` tokens saved up at most, refilled at `rate` a
 * second. HTTP/2's flood and reset limits and HTTP/3's Stateless Resets
 * take from one each. */
#ifndef BUCKET_H
#define BUCKET_H

#include <stdint.h>

/* One token from the bucket (*tokens left, last refilled at *at, in ms of
 * any clock) at `now`: 0 while one is left, -1 when all are used. */
static inline int bucket_take(double *tokens, long long *at, long long now,
                              uint32_t burst, uint32_t rate) {
    *tokens += (double)(now - *at) * rate / 1e3;
    if (*tokens > burst) *tokens = burst;
    *at = now;
    if (*tokens < 1) return -1;
    *tokens -= 1;
    return 0;
}

#endif
