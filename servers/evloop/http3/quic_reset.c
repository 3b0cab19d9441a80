#include "http3/quic_reset.h"

#include <string.h>
#include <sys/random.h>

#include <ngtcp2/ngtcp2_crypto.h>

#include "http3/quic_tx.h"
#include "net/bucket.h"

/* A reset is random bytes (the first made to look like a short header's)
 * then the token; at most this many random bytes, so that it is as long as a
 * short-header packet of ours with a few bytes of payload and an observer
 * cannot tell it apart. */
#define RESET_RAND_MAX (QUIC_SCID_LEN + 23 - NGTCP2_STATELESS_RESET_TOKENLEN)
/* the shortest a reset may be (RFC 9000 10.3: 21 bytes) */
#define RESET_MIN (NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN)

int quic_reset_token(const quic_env *env, const uint8_t *cid, size_t cidlen,
                     uint8_t *token) {
    ngtcp2_cid id;
    ngtcp2_cid_init(&id, cid, cidlen);
    return ngtcp2_crypto_generate_stateless_reset_token(
               token, env->reset_key, sizeof(env->reset_key), &id) ? -1 : 0;
}

void quic_reset_send(quic_env *env, const uint8_t *dcid, size_t len,
                     const struct sockaddr *peer, socklen_t peer_len,
                     uint64_t now) {
    /* smaller than what came, and never below the smallest a reset can be */
    if (len <= RESET_MIN ||
        bucket_take(&env->reset_tokens, &env->reset_at, (long long)(now / 1000000),
                    RESET_BURST, RESET_RATE) < 0)
        return;
    size_t out = len - 1;
    if (out > RESET_RAND_MAX + NGTCP2_STATELESS_RESET_TOKENLEN)
        out = RESET_RAND_MAX + NGTCP2_STATELESS_RESET_TOKENLEN;
    uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN], rand[RESET_RAND_MAX], buf[64];
    size_t randlen = out - NGTCP2_STATELESS_RESET_TOKENLEN;
    if (quic_reset_token(env, dcid, QUIC_SCID_LEN, token) < 0 ||
        getrandom(rand, randlen, 0) != (ssize_t)randlen)
        return;
    ngtcp2_ssize n = ngtcp2_pkt_write_stateless_reset(buf, sizeof(buf), token, rand, randlen);
    if (n > 0) tx_send_one(env->fd, peer, peer_len, buf, n);
}
