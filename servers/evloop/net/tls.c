#include "tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gather.h"

/* Most plaintext one SSL_write_ex takes: the output high-water mark, so a
 * whole turn's output normally goes in one call. A 1 MiB response leaves
 * over several turns instead of costing a 1 MiB copy per connection. */
#define TLS_WRITE_MAX (256 * 1024)
/* A write buffer grown beyond this by a burst is freed once written. */
#define TLS_WBUF_KEEP (64 * 1024)

/* Room for the server's ALPN ids, wire format. */
#define TLS_ALPN_MAX 64

struct tls_server {
    SSL_CTX *ctx;
    /* The server's ALPN ids, in order of preference. */
    unsigned char alpn[TLS_ALPN_MAX];
    unsigned alpn_len;
};

typedef struct tls_conn {
    SSL *ssl;
    /* Plaintext handed to SSL_write_ex. While it is staged (wb.len > 0) a
     * write is in progress and must be retried with exactly these bytes. */
    gather wb;
    unsigned broken : 1;   /* fatal error: no more SSL calls but SSL_free */
    unsigned more : 1;     /* read stopped on a full buffer, not on the
                              socket running dry */
    unsigned notified : 1; /* close_notify already attempted */
} tls_conn;

/* ---- transport ---- */

/* OpenSSL's error queue is per thread, not per connection: an entry left
 * behind by one connection would make SSL_get_error misreport the next
 * call on another. So it is cleared before each call that may fail, and
 * after a failure has been dealt with. */
static int fail(tls_conn *t) {
    t->broken = 1;
    ERR_clear_error();
    errno = ECONNRESET;
    return -1;
}

static int tls_handshake(conn *c, const char **alpn, size_t *alpn_len) {
    tls_conn *t = c->tp_data;
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        const unsigned char *p = NULL;
        unsigned int n = 0;
        SSL_get0_alpn_selected(t->ssl, &p, &n);
        *alpn = n ? (const char *)p : NULL;
        *alpn_len = n;
        return TP_DONE;
    }
    switch (SSL_get_error(t->ssl, r)) {
    case SSL_ERROR_WANT_READ: return TP_WANT_READ;
    case SSL_ERROR_WANT_WRITE: return TP_WANT_WRITE;
    default:
        /* Not TLS (a plain "GET / HTTP/1.1"), garbage, or a hello we
         * refuse: OpenSSL has sent its alert where it could. */
        fail(t);
        return TP_ERROR;
    }
}

/* Drains OpenSSL into buf until it holds nothing more, needs the socket
 * again (WANT_READ), or buf is full. A record is 16 KiB at most, so one call per readable event
 * would strand whatever else arrived; and with read-ahead, records that
 * OpenSSL already took off the socket are not announced by epoll, so a
 * full buffer leaves 'more' set for tls_pending. */
static ssize_t tls_read(conn *c, char *buf, size_t len) {
    tls_conn *t = c->tp_data;
    size_t total = 0;

    t->more = 0;
    if (t->broken) return fail(t);
    while (total < len) {
        size_t n;
        ERR_clear_error();
        if (SSL_read_ex(t->ssl, buf + total, len - total, &n)) {
            total += n;
            /* Nothing left in OpenSSL (no record bytes read ahead, nothing
             * decrypted): the next SSL_read would only meet an empty
             * socket -- a read(2) per request that returns EAGAIN. Any more
             * input is still in the socket, so epoll reports it. */
            if (!SSL_has_pending(t->ssl)) return (ssize_t)total;
            continue;
        }
        switch (SSL_get_error(t->ssl, 0)) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE: /* cannot happen: renegotiation is off */
            if (total) return (ssize_t)total;
            errno = EAGAIN;
            return -1;
        case SSL_ERROR_ZERO_RETURN:
            /* close_notify, or (SSL_OP_IGNORE_UNEXPECTED_EOF) a bare EOF:
             * like read() returning 0. Later calls return 0 again. */
            return (ssize_t)total;
        default:
            if (total) {
                /* Hand over what arrived intact; the error recurs on the
                 * next call, which then closes. */
                ERR_clear_error();
                return (ssize_t)total;
            }
            return fail(t);
        }
    }
    t->more = 1;
    return (ssize_t)total;
}

static int tls_pending(conn *c) {
    tls_conn *t = c->tp_data;
    /* SSL_has_pending, not SSL_pending: with read-ahead, whole records may
     * wait undecrypted in OpenSSL's buffer while SSL_pending says 0. */
    return t->more && !t->broken && SSL_has_pending(t->ssl);
}

/* One SSL_write_ex per call. The iovecs are gathered into wb (one record
 * stream instead of a record per segment, and one copy of each byte), then
 * written in full or not at all:
 *  - SSL_MODE_ENABLE_PARTIAL_WRITE stays off. With it, SSL_write_ex returns
 *    after each record, so a turn's output would take many calls.
 *  - Without it, a write cut short by a full socket buffer returns
 *    WANT_WRITE and OpenSSL remembers how far it got; the retry must pass
 *    the same bytes and length. They are still in wb and wb is not touched
 *    until the write completes, so the buffer also keeps its address and
 *    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER is not needed; leaving it off lets
 *    OpenSSL catch a retry with another buffer (SSL_R_BAD_WRITE_RETRY).
 * Until the write completes we report 0 bytes taken (EAGAIN), so the
 * output queue keeps the bytes too and the connection keeps waiting for
 * EPOLLOUT; new output queued meanwhile follows in the next call. */
static ssize_t tls_writev(conn *c, const struct iovec *iov, int iovcnt) {
    tls_conn *t = c->tp_data;
    size_t w;

    if (t->broken) return fail(t);
    if (t->wb.len == 0 && gather_fill(&t->wb, iov, iovcnt, TLS_WRITE_MAX) <= 0)
        return fail(t); /* out of memory (the queue is never empty here) */
    ERR_clear_error();
    if (SSL_write_ex(t->ssl, t->wb.buf, t->wb.len, &w)) {
        gather_done(&t->wb, TLS_WBUF_KEEP);
        return (ssize_t)w;
    }
    switch (SSL_get_error(t->ssl, 0)) {
    case SSL_ERROR_WANT_WRITE:
    case SSL_ERROR_WANT_READ: /* renegotiation is off: not expected */
        errno = EAGAIN;
        return -1;
    default: return fail(t);
    }
}

/* Best effort, once: a close_notify tells the peer the response was not
 * truncated. Not after a fatal error (OpenSSL forbids it), nor during the
 * handshake, nor in the middle of a write (the alert would land inside an
 * unfinished record stream). A full socket buffer means no close_notify;
 * we do not wait for the peer's. */
static void send_close_notify(tls_conn *t) {
    if (t->notified || t->broken || t->wb.len || !SSL_is_init_finished(t->ssl))
        return;
    t->notified = 1;
    ERR_clear_error();
    (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
}

static void tls_shutdown_write(conn *c) {
    send_close_notify(c->tp_data);
    /* The lingering drain that follows still reads through SSL_read and
     * ends at the peer's close_notify or EOF. */
    shutdown(c->fd, SHUT_WR);
}

static void tls_close(conn *c) {
    tls_conn *t = c->tp_data;
    send_close_notify(t);
    SSL_free(t->ssl);
    gather_free(&t->wb);
    free(t);
    c->tp_data = NULL;
}

static const transport tls_transport = {
    .read = tls_read,
    .writev = tls_writev,
    .shutdown_write = tls_shutdown_write,
    .handshake = tls_handshake,
    .pending = tls_pending,
    .close = tls_close,
};

int tls_conn_setup(conn *c, void *arg) {
    tls_server *ts = arg;
    tls_conn *t = calloc(1, sizeof(*t));
    if (!t) return -1;
    /* SSL_set_fd makes a socket BIO that does not own the fd: conn.c
     * closes it, after tls_close. */
    if (!(t->ssl = SSL_new(ts->ctx)) || SSL_set_fd(t->ssl, c->fd) != 1) {
        SSL_free(t->ssl);
        free(t);
        ERR_clear_error();
        return -1;
    }
    SSL_set_accept_state(t->ssl);
    c->tp = &tls_transport;
    c->tp_data = t;
    return 0;
}

/* ---- context ---- */

/* Server preference (the protocol table's order): h2 when the client offers
 * it. A client whose list has none of ours gets no ALPN answer and the
 * table's fallback, as a client without ALPN. */
static int select_alpn(SSL *ssl, const unsigned char **out,
                       unsigned char *outlen, const unsigned char *in,
                       unsigned int inlen, void *arg) {
    const tls_server *ts = arg;
    unsigned char *sel;
    (void)ssl;
    if (SSL_select_next_proto(&sel, outlen, ts->alpn, ts->alpn_len, in,
                              inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *ctx_error(SSL_CTX *ctx, const char *what,
                          const char *file) {
    fprintf(stderr, "https_bench_server: %s%s%s\n", what, file ? " " : "",
            file ? file : "");
    ERR_print_errors_fp(stderr);
    SSL_CTX_free(ctx);
    return NULL;
}

static SSL_CTX *new_ctx(const char *cert_file, const char *key_file) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) return ctx_error(NULL, "SSL_CTX_new failed", NULL);

    /* The highest common version wins, so 1.3 whenever the client has it. */
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
        return ctx_error(ctx, "cannot set TLS 1.2 as minimum", NULL);
    /* - NO_RENEGOTIATION: RFC 7540 9.2.1 forbids it for h2, and it is the
     *   only way SSL_read could need to write or SSL_write to read.
     * - IGNORE_UNEXPECTED_EOF: a peer that closes without close_notify
     *   (common) reads as EOF, so a half-closed client still gets its
     *   answers, as over TCP. HTTP's own framing detects truncation.
     * The TLS 1.2 list below holds forward-secret AEAD suites only, as RFC
     * 7540 9.2.2 requires for h2, so any of them may be chosen; TLS 1.3
     * suites are OpenSSL's defaults. The client's order decides, as in
     * nginx's and h2o's defaults, so one client config makes every server
     * of the lab negotiate the same cipher. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_IGNORE_UNEXPECTED_EOF |
                                 SSL_OP_NO_COMPRESSION);
    if (!SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20"))
        return ctx_error(ctx, "no usable TLS 1.2 cipher", NULL);
    /* Read-ahead: one read(2) takes as many records as fit in OpenSSL's
     * buffer, instead of two reads (header, body) per record. tls_pending
     * covers the records it takes early. */
    SSL_CTX_set_read_ahead(ctx, 1);
    /* Session cache and tickets stay at OpenSSL's defaults. */
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1)
        return ctx_error(ctx, "cannot load certificate", cert_file);
    if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1)
        return ctx_error(ctx, "cannot load private key", key_file);
    if (SSL_CTX_check_private_key(ctx) != 1)
        return ctx_error(ctx, "key does not match certificate", key_file);
    return ctx;
}

tls_server *tls_server_new(const char *cert_file, const char *key_file,
                           const unsigned char *alpn, size_t alpn_len) {
    tls_server *ts = calloc(1, sizeof(*ts));
    if (!ts || !alpn_len || alpn_len > sizeof(ts->alpn)) {
        fprintf(stderr, "https_bench_server: %s\n",
                ts ? "bad ALPN list" : "out of memory");
        free(ts);
        return NULL;
    }
    memcpy(ts->alpn, alpn, alpn_len);
    ts->alpn_len = (unsigned)alpn_len;
    if (!(ts->ctx = new_ctx(cert_file, key_file))) {
        free(ts);
        return NULL;
    }
    SSL_CTX_set_alpn_select_cb(ts->ctx, select_alpn, ts);
    return ts;
}

void tls_server_free(tls_server *ts) {
    if (!ts) return;
    SSL_CTX_free(ts->ctx);
    free(ts);
}
