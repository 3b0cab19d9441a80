#include "http3/quic_retry.h"

#include <string.h>
#include <sys/random.h>

#include <ngtcp2/ngtcp2_crypto.h>

#include "http3/quic_tx.h"

/* How long a Retry token is good for: a round trip and then some. */
#define RETRY_TOKEN_TTL (10 * NGTCP2_SECONDS)


static int send_retry(quic_env *env, const ngtcp2_pkt_hd *hd,
                      const struct sockaddr *peer, socklen_t peer_len,
                      uint64_t now) {
    uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN], buf[1500];
    ngtcp2_cid scid = {.datalen = QUIC_SCID_LEN};
    if (getrandom(scid.data, scid.datalen, 0) != (ssize_t)scid.datalen)
        return -1;
    ngtcp2_ssize tlen = ngtcp2_crypto_generate_retry_token(
        token, env->retry_key, sizeof(env->retry_key), hd->version,
        (const ngtcp2_sockaddr *)peer, peer_len, &scid, &hd->dcid, now);
    if (tlen < 0) return -1;
    tx_send_one(env->fd, peer, peer_len, buf,
            ngtcp2_crypto_write_retry(buf, sizeof(buf), hd->version, &hd->scid,
                                      &scid, &hd->dcid, token, (size_t)tlen));
    return 0;
}

int quic_retry_check(quic_env *env, const ngtcp2_pkt_hd *hd,
                     const struct sockaddr *peer, socklen_t peer_len,
                     uint64_t now, ngtcp2_cid *odcid, int *retried) {
    *odcid = hd->dcid;
    *retried = 0;
    if (hd->token.len && hd->token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
        if (ngtcp2_crypto_verify_retry_token(
                odcid, hd->token.base, hd->token.len, env->retry_key,
                sizeof(env->retry_key), hd->version,
                (const ngtcp2_sockaddr *)peer, peer_len, &hd->dcid,
                RETRY_TOKEN_TTL, now) == 0) {
            *retried = 1;
            return RETRY_ACCEPT;
        }
        uint8_t buf[1500];
        tx_send_one(env->fd, peer, peer_len, buf,
                ngtcp2_crypto_write_connection_close(
                    buf, sizeof(buf), hd->version, &hd->scid, &hd->dcid,
                    NGTCP2_INVALID_TOKEN, NULL, 0));
        return RETRY_REFUSED;
    }
    /* (a NEW_TOKEN token is never issued here: any other token is ignored) */
    if (env->handshaking < env->lim.max_handshakes) return RETRY_ACCEPT;
    return send_retry(env, hd, peer, peer_len, now) == 0 ? RETRY_SENT
                                                         : RETRY_REFUSED;
}
