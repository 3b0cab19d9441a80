/* quic_conn: one QUIC connection -- ngtcp2's state machine with its TLS
 * session, the HTTP/3 application on top (h3_app.c), and the packets it
 * writes. The endpoint (quic_ep.c) owns the socket and dispatches datagrams
 * here by connection ID; what its connections share is a quic_env. A
 * connection registers its own CIDs in env->cids and its deadline in
 * env->timers, and sends on env->fd itself, so it never calls back up. */
#ifndef QUIC_CONN_H
#define QUIC_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ngtcp2/ngtcp2.h>

#include "http3/h3_app.h"
#include "http3/quic_cid.h"
#include "http3/quic_heap.h"
#include "http3/quic_tls.h"

typedef struct quic_limits {
    h3_limits h3;
    uint64_t stream_window;  /* per request stream, bytes */
    uint64_t conn_window;    /* per connection, bytes */
    long long idle_timeout_ms, handshake_timeout_ms;
    size_t max_conns;
    size_t max_handshakes; /* in progress before new clients must Retry */
    size_t conn_memory;    /* ngtcp2's and nghttp3's bytes per connection */
} quic_limits;

typedef struct quic_conn quic_conn;

/* Our connection IDs' length: a short header's DCID is read with it. */
#define QUIC_SCID_LEN 18

typedef struct quic_env {
    int fd;
    struct sockaddr_storage local;
    socklen_t local_len;
    cid_map cids;
    quic_heap timers;
    quic_tls *tls;
    quic_limits lim;
    size_t nconns;
    quic_conn *all;     /* every connection, for the endpoint's shutdown */
    quic_conn *pending; /* read since they last wrote (quic_env_flush) */
    uint8_t *tx;        /* the batch being written (quic_tx.h) */
    size_t tx_cap;
    int gso_off;        /* the kernel refused UDP GSO once */
    size_t handshaking; /* connections whose handshake is not done */
    uint8_t retry_key[32]; /* seals Retry tokens (quic_retry.c) */
    uint8_t reset_key[32]; /* makes Stateless Reset tokens (quic_reset.c) */
    double reset_tokens;   /* the resets' bucket (net/bucket.h) */
    long long reset_at;    /* when it was last refilled (ms) */
} quic_env;

/* A connection for a client's first Initial (hd from ngtcp2_accept), which
 * it then reads; odcid is the DCID of the client's very first Initial (the
 * one before a Retry when retried: quic_retry.h). NULL when it could not be
 * made (the datagram is dropped). */
quic_conn *quic_conn_accept(quic_env *env, const ngtcp2_pkt_hd *hd,
                            const ngtcp2_cid *odcid, int retried,
                            const struct sockaddr *peer, socklen_t peer_len,
                            const uint8_t *data, size_t len, uint64_t now);
/* One datagram of this connection. What it has to send waits for
 * quic_env_flush, so that a batch of datagrams is answered by one round of
 * writes (one ACK for many packets, responses coalesced). -1 when the
 * connection is over: it has been freed. */
int quic_conn_read(quic_conn *qc, const struct sockaddr *peer,
                   socklen_t peer_len, const uint8_t *data, size_t len,
                   uint64_t now);
/* Writes what every connection read since the last flush has to send. */
void quic_env_flush(quic_env *env, uint64_t now);
/* Its deadline (heap_node) passed. -1 when it is over and freed. */
int quic_conn_expire(quic_conn *qc, uint64_t now);
/* The connection whose heap node this is. */
quic_conn *quic_conn_of(heap_node *node);
void quic_conn_free(quic_conn *qc);

#endif
