/* quic_ep: the server's HTTP/3 endpoint -- a UDP socket on the TCP port's
 * number, served by the same event loop (one per worker process). Datagrams
 * go to their connection by destination connection ID; a client's first
 * Initial makes a connection; one loop timer serves every connection's
 * deadline (quic_heap.h). */
#ifndef QUIC_EP_H
#define QUIC_EP_H

#include "http3/quic_conn.h"
#include "loop/ae.h"

typedef struct h3_config {
    const char *cert_file, *key_file;
    const char *bind_addr;
    int port;
    int reuseport; /* workers: every process binds the port */
    quic_limits lim;
} h3_config;

typedef struct quic_ep quic_ep;

/* Binds and starts serving on el. NULL with a message on stderr. */
quic_ep *quic_ep_start(aeEventLoop *el, const h3_config *cfg);
/* Closes every connection (silently: the process is ending) and the socket. */
void quic_ep_stop(quic_ep *ep);

#endif
