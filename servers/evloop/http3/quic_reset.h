/* quic_reset: Stateless Reset (RFC 9000 10.3). A connection the server no
 * longer holds (idle-timed out, closed, or lost with a restart of its
 * worker) is told so when its peer's next short-header packet arrives,
 * instead of the peer waiting out its own idle timeout. Each connection ID
 * we issue gets its token from a key of the endpoint's (HKDF over the ID:
 * ngtcp2_crypto_generate_stateless_reset_token), so the token can be made
 * again with nothing kept per connection. A reset is always smaller than
 * the packet that asked for it (no amplification, and two endpoints cannot
 * loop), none answers a packet of 21 bytes or less, and a bucket of
 * RESET_BURST refilled at RESET_RATE a second bounds them all. */
#ifndef QUIC_RESET_H
#define QUIC_RESET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http3/quic_conn.h"

#define RESET_RATE 100  /* resets a second, per endpoint */
#define RESET_BURST 100

/* The token of one of our connection IDs (NGTCP2_STATELESS_RESET_TOKENLEN
 * bytes into token): 0, or -1. */
int quic_reset_token(const quic_env *env, const uint8_t *cid, size_t cidlen,
                     uint8_t *token);
/* A short-header datagram of len bytes named our-length connection ID dcid,
 * which no connection holds: answered with a Stateless Reset when the
 * bucket and the size rule allow. */
void quic_reset_send(quic_env *env, const uint8_t *dcid, size_t len,
                     const struct sockaddr *peer, socklen_t peer_len,
                     uint64_t now);

#endif
