/* quic_mem: one QUIC connection's allocator for ngtcp2 and nghttp3, which
 * counts what the two libraries hold for it and refuses past a cap
 * (--h3-conn-memory). The other bounds (stream count, flow-control windows,
 * the request-body budget, QPACK's table) keep a connection's memory small
 * by construction; this makes the sum a limit that holds whatever the peer
 * does and whatever the libraries keep: an allocation that would pass the cap
 * fails, ngtcp2 or nghttp3 reports NOMEM, and that connection alone is closed
 * (INTERNAL_ERROR). GnuTLS's session is allocated outside it (a fixed size,
 * made once per connection). */
#ifndef QUIC_MEM_H
#define QUIC_MEM_H

#include <stddef.h>

#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>

typedef struct quic_mem {
    ngtcp2_mem ng;  /* handed to ngtcp2_conn_server_new */
    nghttp3_mem h3; /* handed to nghttp3_conn_server_new */
    size_t used;    /* bytes allocated and not freed, headers included */
    size_t peak;
    size_t cap;     /* 0: no cap */
    int refused;    /* an allocation failed at the cap */
} quic_mem;

/* Both allocators bound to m, counting from zero. m must stay where it is
 * until the last of the two libraries' objects is freed. */
void quic_mem_init(quic_mem *m, size_t cap);

#endif
