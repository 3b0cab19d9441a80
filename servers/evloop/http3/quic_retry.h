/* quic_retry: address validation by Retry (RFC 9000 8.1.2), the answer to a
 * handshake flood. A connection costs state from its first Initial on, and
 * an Initial's source address costs the sender nothing to forge. While
 * fewer than env->lim.max_handshakes handshakes are in progress, a client's
 * first Initial is accepted at once (no extra round trip); beyond that, an
 * Initial without a token is answered with a Retry carrying one (sealed by
 * a per-process key, bound to the client's address and the connection IDs,
 * valid 10 s), and only an Initial that brings it back makes a connection:
 * a forged address never sees its Retry. ngtcp2 itself keeps the 3x
 * amplification limit for addresses not yet validated. */
#ifndef QUIC_RETRY_H
#define QUIC_RETRY_H

#include <stdint.h>
#include <sys/socket.h>

#include <ngtcp2/ngtcp2.h>

#include "http3/quic_conn.h"

enum { RETRY_ACCEPT, RETRY_SENT, RETRY_REFUSED };

/* What to do with a client's first Initial (hd from ngtcp2_accept).
 * RETRY_ACCEPT: make the connection, with *odcid its original DCID and
 * *retried whether it came back from a Retry. RETRY_SENT: a Retry went
 * out. RETRY_REFUSED: a bad token; dropped (an INVALID_TOKEN close sent). */
int quic_retry_check(quic_env *env, const ngtcp2_pkt_hd *hd,
                     const struct sockaddr *peer, socklen_t peer_len,
                     uint64_t now, ngtcp2_cid *odcid, int *retried);

#endif
