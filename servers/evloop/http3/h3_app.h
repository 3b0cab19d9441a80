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
} h3_limits;

typedef struct h3_app h3_app;

/* Opens the server's control and QPACK streams on qc and binds nghttp3 to
 * them. NULL on failure (the connection is then closed). */
h3_app *h3_app_new(ngtcp2_conn *qc, const h3_limits *lim);
void h3_app_free(h3_app *a);
nghttp3_conn *h3_app_conn(h3_app *a);

#endif
