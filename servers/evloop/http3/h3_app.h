/* h3_app: HTTP/3 on one QUIC connection -- nghttp3 (framing, QPACK, the
 * control and QPACK streams) glued to the lab's router (http/routes.h).
 * A request stream's head and body are gathered, the route answers at the
 * stream's end, and the response body is handed to nghttp3 by reference
 * (it stays in the stream until the peer has acknowledged it).
 *
 * The QUIC side (quic_conn.c) feeds nghttp3 through h3_app_conn(): stream
 * data in, writable data out, acknowledgements and stream closes. This file
 * answers nghttp3's callbacks and returns flow-control credit to ngtcp2. */
#ifndef H3_APP_H
#define H3_APP_H

#include <stddef.h>
#include <stdint.h>

#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>

typedef struct h3_limits {
    uint64_t max_body;       /* a request body above this: 413 */
    uint64_t max_streams;    /* concurrent request streams (transport param) */
    /* Request-body bytes one connection's streams may hold before their
     * flow-control credit is withheld (never below max_body): with the
     * connection window, what a connection can make the server hold. */
    uint64_t conn_memory;
    /* A request must arrive (head and body) within body_timeout_ms, plus a
     * second per body_min_rate bytes of body, and never pause longer than
     * body_timeout_ms (--body-timeout, --body-min-rate, as HTTP/2 applies
     * them per stream): past it the stream is answered 408 and the server
     * stops reading it (STOP_SENDING H3_NO_ERROR, RFC 9114 section 4.1). */
    long long body_timeout_ms;
    uint64_t body_min_rate;
} h3_limits;

typedef struct h3_app h3_app;

/* Opens the server's control and QPACK streams on qc and binds nghttp3 to
 * them; nghttp3 allocates through mem (the connection's, quic_mem.h). NULL
 * on failure (the connection is then closed). */
h3_app *h3_app_new(ngtcp2_conn *qc, const h3_limits *lim,
                   const nghttp3_mem *mem);
void h3_app_free(h3_app *a);
nghttp3_conn *h3_app_conn(h3_app *a);
/* The time (ns, the QUIC side's clock) of the data about to be fed in: the
 * request streams' clocks start and move with it. */
void h3_app_clock(h3_app *a, uint64_t now);
/* When the earliest unfinished request may be late (ns; UINT64_MAX: none).
 * It may come early, never late: requests only ever earn more time. */
uint64_t h3_app_deadline(const h3_app *a);
/* Answers 408 to the requests that are late at `now`: 0, or an nghttp3
 * error (the connection is then closed with it). */
int h3_app_expire(h3_app *a, uint64_t now);

#endif
