#include "http3/quic_conn.h"

#include "http3/quic_mem.h"
#include "http3/quic_reset.h"
#include "http3/quic_tx.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <ngtcp2/ngtcp2_crypto.h>

#define SCID_LEN QUIC_SCID_LEN
/* Packets written per turn before the loop gets a say; the rest goes out on
 * the next turn (the deadline is set to now). */
#define MAX_PKTS_PER_WRITE 64
#define PKT_BUF 1500

struct quic_conn {
    quic_env *env;
    quic_conn *prev, *next;           /* env->all */
    quic_conn *pend_prev, *pend_next; /* env->pending */
    int is_pending;
    int handshaking; /* counted in env->handshaking */
    ngtcp2_conn *conn;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    h3_app *app;
    heap_node timer;
    ngtcp2_cid odcid; /* the client's first DCID, also in env->cids */
    struct sockaddr_storage peer;
    socklen_t peer_len;
    ngtcp2_connection_close_error ccerr;
    int app_error; /* ccerr holds an HTTP/3 error to close with */
    uint64_t now;  /* of the datagram being read (ns) */
    quic_mem mem;  /* what ngtcp2 and nghttp3 hold for it, capped */
};

quic_conn *quic_conn_of(heap_node *node) {
    return (quic_conn *)((char *)node - offsetof(quic_conn, timer));
}

/* xorshift64*, seeded from the kernel once: ngtcp2 asks for randomness it
 * does not need to be secret (packet-number skips, PADDING choices);
 * connection IDs and reset tokens come from getrandom(2). */
static uint64_t rng_state;
static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx) {
    (void)ctx;
    if (!rng_state && getrandom(&rng_state, sizeof(rng_state), 0) < 0)
        rng_state = 0x9e3779b97f4a7c15ULL;
    rng_state |= 1;
    for (size_t i = 0; i < len; i++) {
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        dest[i] = (uint8_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 56);
    }
}

static int random_bytes(uint8_t *p, size_t n) {
    return getrandom(p, n, 0) == (ssize_t)n ? 0 : -1;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref) {
    return ((quic_conn *)ref->user_data)->conn;
}

static int new_cid(ngtcp2_conn *c, ngtcp2_cid *cid, uint8_t *token,
                   size_t cidlen, void *ud) {
    (void)c;
    quic_conn *qc = ud;
    cid->datalen = cidlen;
    if (random_bytes(cid->data, cidlen) < 0 ||
        quic_reset_token(qc->env, cid->data, cidlen, token) < 0 ||
        cid_map_put(&qc->env->cids, cid->data, cidlen, qc) < 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int remove_cid(ngtcp2_conn *c, const ngtcp2_cid *cid, void *ud) {
    (void)c;
    quic_conn *qc = ud;
    cid_map_del(&qc->env->cids, cid->data, cid->datalen);
    return 0;
}

/* HTTP/3 on a connection whose handshake is done (or whose first stream
 * data came with it). Failing (no memory, or the connection's cap reached:
 * quic_mem.h), it closes with H3_INTERNAL_ERROR. */
static int start_app(quic_conn *qc) {
    if (qc->app) return 0;
    qc->app = h3_app_new(qc->conn, &qc->env->lim.h3, &qc->mem.h3);
    if (qc->app) return 0;
    ngtcp2_connection_close_error_set_application_error(
        &qc->ccerr, NGHTTP3_H3_INTERNAL_ERROR, NULL, 0);
    qc->app_error = 1;
    return -1;
}

static void handshake_over(quic_conn *qc) {
    if (!qc->handshaking) return;
    qc->handshaking = 0;
    qc->env->handshaking--;
}

static int handshake_done(ngtcp2_conn *c, void *ud) {
    (void)c;
    handshake_over(ud);
    return start_app(ud) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

/* An nghttp3 error closes the connection with its HTTP/3 error code. */
static int h3_failed(quic_conn *qc, int rv) {
    ngtcp2_connection_close_error_set_application_error(
        &qc->ccerr, nghttp3_err_infer_quic_app_error_code(rv), NULL, 0);
    qc->app_error = 1;
    return NGTCP2_ERR_CALLBACK_FAILURE;
}

static int recv_stream_data(ngtcp2_conn *c, uint32_t flags, int64_t id,
                            uint64_t off, const uint8_t *data, size_t len,
                            void *ud, void *sud) {
    (void)off, (void)sud;
    quic_conn *qc = ud;
    if (start_app(qc)) return NGTCP2_ERR_CALLBACK_FAILURE;
    h3_app_clock(qc->app, qc->now);
    nghttp3_ssize n = nghttp3_conn_read_stream(
        h3_app_conn(qc->app), id, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) return h3_failed(qc, (int)n);
    /* What nghttp3 consumed itself (framing, QPACK); DATA payload is
     * credited by the application as it takes it (h3_app.c). */
    ngtcp2_conn_extend_max_stream_offset(c, id, (uint64_t)n);
    ngtcp2_conn_extend_max_offset(c, (uint64_t)n);
    return 0;
}

static int acked_stream_data(ngtcp2_conn *c, int64_t id, uint64_t off,
                             uint64_t len, void *ud, void *sud) {
    (void)c, (void)off, (void)sud;
    quic_conn *qc = ud;
    if (!qc->app) return 0;
    int rv = nghttp3_conn_add_ack_offset(h3_app_conn(qc->app), id, len);
    return rv ? h3_failed(qc, rv) : 0;
}

static int stream_close(ngtcp2_conn *c, uint32_t flags, int64_t id,
                        uint64_t code, void *ud, void *sud) {
    (void)sud;
    quic_conn *qc = ud;
    if (!qc->app) return 0;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    int rv = nghttp3_conn_close_stream(h3_app_conn(qc->app), id, code);
    if (rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) return h3_failed(qc, rv);
    /* a unidirectional stream of the client's that ended makes room for
     * another (request streams get theirs back in h3_app.c) */
    if (!ngtcp2_is_bidi_stream(id) && !ngtcp2_conn_is_local_stream(c, id))
        ngtcp2_conn_extend_max_streams_uni(c, 1);
    return 0;
}

static int stream_read_shut(ngtcp2_conn *c, int64_t id, uint64_t code,
                            void *ud, void *sud) {
    (void)c, (void)code, (void)sud;
    quic_conn *qc = ud;
    if (!qc->app) return 0;
    int rv = nghttp3_conn_shutdown_stream_read(h3_app_conn(qc->app), id);
    return rv ? h3_failed(qc, rv) : 0;
}

static int stream_reset(ngtcp2_conn *c, int64_t id, uint64_t final_size,
                        uint64_t code, void *ud, void *sud) {
    (void)final_size;
    return stream_read_shut(c, id, code, ud, sud);
}

static int max_remote_bidi(ngtcp2_conn *c, uint64_t max, void *ud) {
    (void)c;
    quic_conn *qc = ud;
    if (qc->app) nghttp3_conn_set_max_client_streams_bidi(h3_app_conn(qc->app), max);
    return 0;
}

static int max_stream_data(ngtcp2_conn *c, int64_t id, uint64_t max,
                           void *ud, void *sud) {
    (void)c, (void)max, (void)sud;
    quic_conn *qc = ud;
    if (!qc->app) return 0;
    int rv = nghttp3_conn_unblock_stream(h3_app_conn(qc->app), id);
    return rv ? h3_failed(qc, rv) : 0;
}

static const ngtcp2_callbacks callbacks = {
    .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
    .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
    .handshake_completed = handshake_done,
    .encrypt = ngtcp2_crypto_encrypt_cb,
    .decrypt = ngtcp2_crypto_decrypt_cb,
    .hp_mask = ngtcp2_crypto_hp_mask_cb,
    .recv_stream_data = recv_stream_data,
    .acked_stream_data_offset = acked_stream_data,
    .stream_close = stream_close,
    .rand = rand_cb,
    .get_new_connection_id = new_cid,
    .remove_connection_id = remove_cid,
    .update_key = ngtcp2_crypto_update_key_cb,
    .stream_reset = stream_reset,
    .extend_max_remote_streams_bidi = max_remote_bidi,
    .extend_max_stream_data = max_stream_data,
    .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
    .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
    .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
    .stream_stop_sending = stream_read_shut,
    .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

static ngtcp2_path path_of(quic_conn *qc) {
    return (ngtcp2_path){
        .local = {(ngtcp2_sockaddr *)&qc->env->local, qc->env->local_len},
        .remote = {(ngtcp2_sockaddr *)&qc->peer, qc->peer_len},
    };
}


static void set_timer(quic_conn *qc, uint64_t at) {
    /* (a heap that cannot grow leaves the connection to its next packet) */
    heap_set(&qc->env->timers, &qc->timer, at);
}

static int write_loop(quic_conn *qc, quic_tx *tx, uint64_t now);

/* Writes what ngtcp2 and nghttp3 have to send, batched for GSO (quic_tx.h):
 * 0, or an ngtcp2 error. */
static int write_pkts(quic_conn *qc, uint64_t now) {
    quic_env *env = qc->env;
    quic_tx tx;
    size_t pkt_max = ngtcp2_conn_get_path_max_tx_udp_payload_size(qc->conn);
    if (pkt_max > PKT_BUF) pkt_max = PKT_BUF;
    tx_begin(&tx, env->tx, env->tx_cap, pkt_max, env->fd,
             (struct sockaddr *)&qc->peer, qc->peer_len, &env->gso_off);
    int rv = write_loop(qc, &tx, now);
    tx_flush(&tx);
    return rv;
}

/* The packets ngtcp2 and nghttp3 have for one connection, into tx. */
static int write_loop(quic_conn *qc, quic_tx *tx, uint64_t now) {
    for (int pkts = 0; pkts < MAX_PKTS_PER_WRITE;) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        nghttp3_conn *h3 = qc->app ? h3_app_conn(qc->app) : NULL;
        if (h3 && ngtcp2_conn_get_max_data_left(qc->conn)) {
            nvec = nghttp3_conn_writev_stream(h3, &sid, &fin, vec, 16);
            if (nvec < 0) return h3_failed(qc, (int)nvec);
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
        if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
        ngtcp2_ssize written = -1;
        size_t room;
        uint8_t *buf = tx_room(tx, &room);
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(
            qc->conn, NULL, NULL, buf, room, &written, flags, sid,
            (const ngtcp2_vec *)vec, (size_t)nvec, now);
        if (n < 0) {
            switch (n) {
            case NGTCP2_ERR_STREAM_DATA_BLOCKED:
                nghttp3_conn_block_stream(h3, sid);
                continue;
            case NGTCP2_ERR_STREAM_SHUT_WR:
                nghttp3_conn_shutdown_stream_write(h3, sid);
                continue;
            case NGTCP2_ERR_WRITE_MORE: {
                int rv = nghttp3_conn_add_write_offset(h3, sid, (size_t)written);
                if (rv) return h3_failed(qc, rv);
                continue;
            }
            default:
                ngtcp2_connection_close_error_set_transport_error_liberr(
                    &qc->ccerr, (int)n, NULL, 0);
                return (int)n;
            }
        }
        if (written >= 0 && h3) {
            int rv = nghttp3_conn_add_write_offset(h3, sid, (size_t)written);
            if (rv) return h3_failed(qc, rv);
        }
        if (n == 0) break;
        tx_commit(tx, (size_t)n);
        pkts++;
        if (pkts == MAX_PKTS_PER_WRITE) {
            ngtcp2_conn_update_pkt_tx_time(qc->conn, now);
            set_timer(qc, now);
            return 0;
        }
    }
    ngtcp2_conn_update_pkt_tx_time(qc->conn, now);
    /* the next of ngtcp2's timers and the requests' (h3_app_deadline) */
    uint64_t at = ngtcp2_conn_get_expiry(qc->conn);
    if (qc->app && h3_app_deadline(qc->app) < at) at = h3_app_deadline(qc->app);
    set_timer(qc, at);
    return 0;
}

/* The end of a connection after an error: one CONNECTION_CLOSE where the
 * error is ours to report, then it is gone (a closing period that answers
 * late packets with the close again is left to the peer's timers). */
static void close_conn(quic_conn *qc, int rv, uint64_t now) {
    /* the cap (quic_mem.h) has done its work: the close itself must not
     * fail for want of memory */
    qc->mem.cap = 0;
    if (rv != NGTCP2_ERR_DRAINING && rv != NGTCP2_ERR_IDLE_CLOSE &&
        rv != NGTCP2_ERR_DROP_CONN && rv != NGTCP2_ERR_HANDSHAKE_TIMEOUT &&
        !ngtcp2_conn_is_in_closing_period(qc->conn) &&
        !ngtcp2_conn_is_in_draining_period(qc->conn)) {
        uint8_t buf[PKT_BUF];
        if (!qc->app_error && rv != NGTCP2_ERR_CALLBACK_FAILURE)
            ngtcp2_connection_close_error_set_transport_error_liberr(
                &qc->ccerr, rv, NULL, 0);
        ngtcp2_path path = path_of(qc);
        ngtcp2_ssize n = ngtcp2_conn_write_connection_close(
            qc->conn, &path, NULL, buf, sizeof(buf), &qc->ccerr, now);
        tx_send_one(qc->env->fd, (struct sockaddr *)&qc->peer, qc->peer_len, buf, n);
    }
    quic_conn_free(qc);
}

int quic_conn_read(quic_conn *qc, const struct sockaddr *peer,
                   socklen_t peer_len, const uint8_t *data, size_t len,
                   uint64_t now) {
    ngtcp2_path path = path_of(qc);
    path.remote.addr = (ngtcp2_sockaddr *)peer;
    path.remote.addrlen = peer_len;
    ngtcp2_pkt_info pi = {0};
    qc->now = now;
    int rv = ngtcp2_conn_read_pkt(qc->conn, &path, &pi, data, len, now);
    if (rv != 0) {
        close_conn(qc, rv, now);
        return -1;
    }
    if (!qc->is_pending) {
        quic_env *env = qc->env;
        qc->is_pending = 1;
        qc->pend_prev = NULL;
        qc->pend_next = env->pending;
        if (env->pending) env->pending->pend_prev = qc;
        env->pending = qc;
    }
    return 0;
}

static void unpend(quic_conn *qc) {
    if (!qc->is_pending) return;
    qc->is_pending = 0;
    if (qc->pend_prev) qc->pend_prev->pend_next = qc->pend_next;
    else qc->env->pending = qc->pend_next;
    if (qc->pend_next) qc->pend_next->pend_prev = qc->pend_prev;
}

void quic_env_flush(quic_env *env, uint64_t now) {
    while (env->pending) {
        quic_conn *qc = env->pending;
        unpend(qc);
        int rv = write_pkts(qc, now);
        if (rv != 0) close_conn(qc, rv, now);
    }
}

int quic_conn_expire(quic_conn *qc, uint64_t now) {
    int rv = ngtcp2_conn_handle_expiry(qc->conn, now);
    if (rv == 0 && qc->app) {
        int e = h3_app_expire(qc->app, now);
        if (e) rv = h3_failed(qc, e);
    }
    if (rv == 0) rv = write_pkts(qc, now);
    if (rv != 0) {
        close_conn(qc, rv, now);
        return -1;
    }
    return 0;
}

quic_conn *quic_conn_accept(quic_env *env, const ngtcp2_pkt_hd *hd,
                            const ngtcp2_cid *odcid, int retried,
                            const struct sockaddr *peer, socklen_t peer_len,
                            const uint8_t *data, size_t len, uint64_t now) {
    if (env->nconns >= env->lim.max_conns || peer_len > sizeof(struct sockaddr_storage))
        return NULL;
    quic_conn *qc = calloc(1, sizeof(*qc));
    if (!qc) return NULL;
    qc->env = env;
    quic_mem_init(&qc->mem, env->lim.conn_memory);
    qc->timer.index = HEAP_NONE;
    qc->timer.at = UINT64_MAX;
    memcpy(&qc->peer, peer, peer_len);
    qc->peer_len = peer_len;
    qc->odcid = hd->dcid;
    ngtcp2_connection_close_error_default(&qc->ccerr);

    ngtcp2_cid scid = {.datalen = SCID_LEN};
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = now;
    settings.rand_ctx.native_handle = NULL;
    settings.handshake_timeout = (uint64_t)env->lim.handshake_timeout_ms * NGTCP2_MILLISECONDS;
    ngtcp2_transport_params_default(&params);
    params.initial_max_stream_data_bidi_remote = env->lim.stream_window;
    params.initial_max_stream_data_bidi_local = env->lim.stream_window;
    params.initial_max_stream_data_uni = env->lim.stream_window;
    params.initial_max_data = env->lim.conn_window;
    params.initial_max_streams_bidi = env->lim.h3.max_streams;
    /* the client's control and QPACK streams, and room for stream types
     * of extensions (or GREASE), which nghttp3 reads and discards */
    params.initial_max_streams_uni = 8;
    params.max_idle_timeout = (uint64_t)env->lim.idle_timeout_ms * NGTCP2_MILLISECONDS;
    params.original_dcid = *odcid;
    if (retried) {
        /* the Retry's SCID, which the client now sends to */
        params.retry_scid = hd->dcid;
        params.retry_scid_present = 1;
        settings.token = hd->token;
    }
    params.stateless_reset_token_present = 1;
    params.active_connection_id_limit = 7;
    ngtcp2_path path = path_of(qc);

    if (random_bytes(scid.data, scid.datalen) < 0 ||
        quic_reset_token(env, scid.data, scid.datalen, params.stateless_reset_token) < 0 ||
        ngtcp2_conn_server_new(&qc->conn, &hd->scid, &scid, &path, hd->version,
                               &callbacks, &settings, &params, &qc->mem.ng, qc) != 0) {
        free(qc);
        return NULL;
    }
    qc->ref.get_conn = get_conn;
    qc->ref.user_data = qc;
    qc->tls = quic_tls_session(env->tls, &qc->ref);
    if (!qc->tls || cid_map_put(&env->cids, scid.data, scid.datalen, qc) < 0) {
        if (qc->tls) gnutls_deinit(qc->tls);
        ngtcp2_conn_del(qc->conn);
        free(qc);
        return NULL;
    }
    ngtcp2_conn_set_tls_native_handle(qc->conn, qc->tls);
    /* the client's retransmitted Initials still carry its own DCID */
    cid_map_put(&env->cids, hd->dcid.data, hd->dcid.datalen, qc);
    env->nconns++;
    env->handshaking++;
    qc->handshaking = 1;
    qc->next = env->all;
    if (env->all) env->all->prev = qc;
    env->all = qc;
    if (quic_conn_read(qc, peer, peer_len, data, len, now) < 0) return NULL;
    return qc;
}

void quic_conn_free(quic_conn *qc) {
    quic_env *env = qc->env;
    /* every CID of ours the table still maps here (ngtcp2 holds at most
     * active_connection_id_limit + a few retiring ones: 16 is the common
     * case, the heap the rare one) */
    ngtcp2_cid some[16], *ids = some;
    size_t n = ngtcp2_conn_get_num_scid(qc->conn);
    if (n > sizeof(some) / sizeof(some[0]) && !(ids = malloc(n * sizeof(*ids))))
        abort(); /* a dangling entry would be worse */
    ngtcp2_conn_get_scid(qc->conn, ids);
    for (size_t i = 0; i < n; i++)
        if (cid_map_get(&env->cids, ids[i].data, ids[i].datalen) == qc)
            cid_map_del(&env->cids, ids[i].data, ids[i].datalen);
    if (ids != some) free(ids);
    if (cid_map_get(&env->cids, qc->odcid.data, qc->odcid.datalen) == qc)
        cid_map_del(&env->cids, qc->odcid.data, qc->odcid.datalen);
    heap_remove(&env->timers, &qc->timer);
    unpend(qc);
    h3_app_free(qc->app);
    ngtcp2_conn_del(qc->conn);
    gnutls_deinit(qc->tls);
    env->nconns--;
    handshake_over(qc);
    if (qc->prev) qc->prev->next = qc->next;
    else env->all = qc->next;
    if (qc->next) qc->next->prev = qc->prev;
    free(qc);
}
