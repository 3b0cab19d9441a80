/* h2_mem: the allocator nghttp2 uses for our sessions.
 *
 * Every request costs nghttp2 about ten small allocations (stream object,
 * header buffers, outbound items) that are freed a turn later, in bursts of
 * the same few sizes. glibc's per-size cache holds only seven blocks, so
 * most of those frees and the next turn's mallocs took its slow path (8 % of
 * the server's user-space instructions on h2c GET /ping, -m10). Here small
 * blocks come from size-class free lists: a push and a pop each, no search,
 * no locking. The lists are per thread and bounded, so an idle server gives
 * the memory back to malloc. */
#ifndef H2_MEM_H
#define H2_MEM_H

#include <nghttp2/nghttp2.h>

/* The nghttp2_mem to pass to nghttp2_session_server_new3. */
nghttp2_mem *h2_mem(void);

#endif
