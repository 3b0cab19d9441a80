/* tls tests: the TLS transport against an in-process OpenSSL client over a
 * non-blocking socketpair. A server send buffer of a few KiB makes the
 * paths that loopback TCP almost never takes happen every time: a
 * handshake and SSL_write_ex cut short by WANT_WRITE and retried with the
 * same staged bytes, reads that stop on a full buffer with records still
 * inside OpenSSL (tls_pending), close_notify, and hellos that are not TLS.
 * The certificate is a throwaway P-256 one made here (fast under ASan). */
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/tls.h"
#include "test.h"

static char cert_path[64], key_path[64], dir_path[32];

/* Writes a self-signed certificate and its key as PEM files; 0 or -1. */
static int make_cert(void) {
    int ok = 0;
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    FILE *f;

    strcpy(dir_path, "/tmp/evloop_tls_XXXXXX");
    if (!pkey || !x || !mkdtemp(dir_path)) goto out;
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir_path);
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir_path);
    X509_NAME *name = X509_get_subject_name(x);
    if (!X509_set_version(x, 2) ||
        !ASN1_INTEGER_set(X509_get_serialNumber(x), 1) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), 3600) ||
        !X509_set_pubkey(x, pkey) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                    (const unsigned char *)"localhost", -1,
                                    -1, 0) ||
        !X509_set_issuer_name(x, name) || !X509_sign(x, pkey, EVP_sha256()))
        goto out;
    if (!(f = fopen(cert_path, "w"))) goto out;
    ok = PEM_write_X509(f, x);
    fclose(f);
    if (!ok || !(f = fopen(key_path, "w"))) goto out;
    ok = PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL);
    fclose(f);
out:
    X509_free(x);
    EVP_PKEY_free(pkey);
    return ok ? 0 : -1;
}

static void remove_cert(void) {
    unlink(cert_path);
    unlink(key_path);
    rmdir(dir_path);
}

/* One server connection (the real transport) and one client SSL. */
typedef struct pair {
    conn c;
    SSL *cl;
    int cfd;
} pair;

static int pair_open(pair *p, tls_server *ts, SSL_CTX *cctx, int sndbuf) {
    int sv[2];
    memset(p, 0, sizeof(*p));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return -1;
    if (sndbuf)
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    p->c.fd = sv[0];
    p->cfd = sv[1];
    if (tls_conn_setup(&p->c, ts) < 0) return -1;
    p->cl = SSL_new(cctx);
    SSL_set_fd(p->cl, p->cfd);
    SSL_set_connect_state(p->cl);
    return 0;
}

static void pair_close(pair *p) {
    if (p->c.tp && p->c.tp->close) p->c.tp->close(&p->c);
    SSL_free(p->cl);
    close(p->c.fd);
    close(p->cfd);
    ERR_clear_error();
}

/* Steps both sides until done; returns the server's last result, with the
 * number of TP_WANT_WRITE seen in *wants_write. */
static int handshake(pair *p, const char **alpn, size_t *alpn_len,
                     int *wants_write) {
    int srv = TP_WANT_READ, cli_done = 0;
    for (int i = 0; i < 10000 && !(srv == TP_DONE && cli_done); i++) {
        if (srv != TP_DONE) {
            srv = p->c.tp->handshake(&p->c, alpn, alpn_len);
            if (srv == TP_ERROR) return srv;
            if (srv == TP_WANT_WRITE && wants_write) ++*wants_write;
        }
        if (!cli_done) {
            /* The client reads little per step, so the server's flight
             * (certificate, tickets) overfills the small buffer. */
            int r = SSL_do_handshake(p->cl);
            if (r == 1) cli_done = 1;
            else if (SSL_get_error(p->cl, r) != SSL_ERROR_WANT_READ &&
                     SSL_get_error(p->cl, r) != SSL_ERROR_WANT_WRITE)
                return TP_ERROR;
        }
    }
    return srv == TP_DONE && cli_done ? TP_DONE : TP_ERROR;
}

static SSL_CTX *client_ctx(const char *alpn, size_t alpn_len, int version) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    if (alpn)
        SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)alpn,
                                (unsigned int)alpn_len);
    if (version) {
        SSL_CTX_set_min_proto_version(ctx, version);
        SSL_CTX_set_max_proto_version(ctx, version);
    }
    return ctx;
}

static void test_alpn(tls_server *ts) {
    static const struct {
        const char *offer;
        size_t len;
        const char *want; /* NULL: no ALPN agreed */
    } cases[] = {
        {"\x02h2\x08http/1.1", 12, "h2"},
        {"\x08http/1.1\x02h2", 12, "h2"}, /* server preference */
        {"\x08http/1.1", 9, "http/1.1"},
        {"\x06spdy/3", 7, NULL},
        {NULL, 0, NULL},
    };
    T_BEGIN;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int v = 0; v < 2; v++) {
            SSL_CTX *cctx = client_ctx(cases[i].offer, cases[i].len,
                                       v ? TLS1_2_VERSION : TLS1_3_VERSION);
            pair p;
            const char *alpn = "unset";
            size_t alpn_len = 99;
            T_CHECK(pair_open(&p, ts, cctx, 0) == 0);
            T_CHECK(handshake(&p, &alpn, &alpn_len, NULL) == TP_DONE);
            if (cases[i].want)
                T_CHECK(alpn && alpn_len == strlen(cases[i].want) &&
                        memcmp(alpn, cases[i].want, alpn_len) == 0);
            else
                T_CHECK(alpn == NULL && alpn_len == 0);
            T_CHECK(SSL_version(p.cl) == (v ? TLS1_2_VERSION
                                              : TLS1_3_VERSION));
            pair_close(&p);
            SSL_CTX_free(cctx);
        }
    }
    T_END("tls", "ALPN h2 / http/1.1 / none, TLS 1.2 and 1.3");
}

/* The server's flight and 1 MiB of output through a ~4 KiB send buffer:
 * every WANT_WRITE is retried with the same staged bytes (OpenSSL would
 * fail with SSL_R_BAD_WRITE_RETRY otherwise) and the client gets the
 * bytes exactly, in order. */
static void test_write_retries(tls_server *ts) {
    SSL_CTX *cctx = client_ctx("\x02h2", 3, 0);
    size_t total = 1 << 20, done = 0, got = 0;
    char *src = malloc(total), *dst = malloc(total);
    const char *alpn;
    size_t alpn_len;
    int hs_wants = 0, eagain = 0, calls = 0;
    pair p;
    T_BEGIN;
    for (size_t i = 0; i < total; i++) src[i] = (char)(i * 7 + i / 4096);
    T_CHECK(pair_open(&p, ts, cctx, 4096) == 0);
    T_CHECK(handshake(&p, &alpn, &alpn_len, &hs_wants) == TP_DONE);
    for (int i = 0; i < 1000000 && got < total; i++) {
        if (done < total) {
            /* The unwritten rest, as three segments like the queue's. */
            size_t rest = total - done, a = rest / 3, b = rest / 3;
            struct iovec iov[3] = {{src + done, a},
                                   {src + done + a, b},
                                   {src + done + a + b, rest - a - b}};
            ssize_t w = p.c.tp->writev(&p.c, iov, 3);
            calls++;
            if (w > 0) done += (size_t)w;
            else T_CHECK(errno == EAGAIN);
            if (w < 0) eagain++;
        }
        size_t n;
        if (SSL_read_ex(p.cl, dst + got, 3000, &n)) got += n;
    }
    T_CHECK(got == total && done == total);
    T_CHECK(memcmp(src, dst, total) == 0);
    T_CHECK(eagain > 0);     /* the retry path really ran */
    T_CHECK(calls - eagain == 4); /* 1 MiB in 256 KiB writes */
    pair_close(&p);
    SSL_CTX_free(cctx);
    free(src);
    free(dst);
    T_END("tls", "WANT_WRITE retried with the staged bytes, 1 MiB exact");
}

/* Reads drain OpenSSL into the buffer; a full buffer mid-record leaves
 * tls_pending set, and reading on gets every byte. */
static void test_reads_and_pending(tls_server *ts) {
    SSL_CTX *cctx = client_ctx("\x08http/1.1", 9, 0);
    size_t total = 100000, got = 0, wrote;
    char *src = malloc(total), *dst = malloc(total + 1);
    const char *alpn;
    size_t alpn_len;
    pair p;
    T_BEGIN;
    memset(src, 'r', total);
    T_CHECK(pair_open(&p, ts, cctx, 0) == 0);
    T_CHECK(handshake(&p, &alpn, &alpn_len, NULL) == TP_DONE);
    T_CHECK(SSL_write_ex(p.cl, src, total, &wrote) && wrote == total);
    ssize_t n = p.c.tp->read(&p.c, dst, 20000);
    T_CHECK(n == 20000);
    T_CHECK(p.c.tp->pending(&p.c)); /* the rest of a record is inside */
    got = (size_t)n;
    while ((n = p.c.tp->read(&p.c, dst + got, total + 1 - got)) > 0)
        got += (size_t)n;
    T_CHECK(n < 0 && errno == EAGAIN);
    T_CHECK(got == total && memcmp(src, dst, total) == 0);
    T_CHECK(!p.c.tp->pending(&p.c));

    /* Our close_notify reaches the client as a clean end. */
    p.c.tp->shutdown_write(&p.c);
    int r = SSL_read_ex(p.cl, dst, 16, &wrote);
    T_CHECK(!r && SSL_get_error(p.cl, 0) == SSL_ERROR_ZERO_RETURN);
    /* The client's close_notify (or a bare EOF) reads as 0. */
    SSL_shutdown(p.cl);
    T_CHECK(p.c.tp->read(&p.c, dst, 16) == 0);
    pair_close(&p);
    SSL_CTX_free(cctx);
    free(src);
    free(dst);
    T_END("tls", "reads drain OpenSSL, pending, close_notify both ways");
}

static void test_not_tls(tls_server *ts) {
    static const char *hellos[] = {
        "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00",
    };
    SSL_CTX *cctx = client_ctx(NULL, 0, 0);
    const char *alpn;
    size_t alpn_len;
    T_BEGIN;
    for (size_t i = 0; i < sizeof(hellos) / sizeof(hellos[0]); i++) {
        pair p;
        T_CHECK(pair_open(&p, ts, cctx, 0) == 0);
        size_t len = i == 2 ? 10 : strlen(hellos[i]);
        T_CHECK(write(p.cfd, hellos[i], len) == (ssize_t)len);
        T_CHECK(p.c.tp->handshake(&p.c, &alpn, &alpn_len) == TP_ERROR);
        pair_close(&p); /* no close_notify attempt after the failure */
    }
    /* Half a record header: wait for more, which the timeout bounds. */
    pair p;
    T_CHECK(pair_open(&p, ts, cctx, 0) == 0);
    T_CHECK(write(p.cfd, "\x16\x03\x01", 3) == 3);
    T_CHECK(p.c.tp->handshake(&p.c, &alpn, &alpn_len) == TP_WANT_READ);
    pair_close(&p);
    SSL_CTX_free(cctx);
    T_END("tls", "plain HTTP, h2c preface, bad hello fail; partial waits");
}

void test_tls(void) {
    T_BEGIN;
    T_CHECK(make_cert() == 0);
    tls_server *ts = t_why ? NULL : tls_server_new(cert_path, key_path,
                                                 (const unsigned char *)"\x02h2\x08http/1.1", 12);
    T_CHECK(ts != NULL);
    remove_cert();
    T_END("tls", "context from PEM files");
    if (!ts) return;
    test_alpn(ts);
    test_write_retries(ts);
    test_reads_and_pending(ts);
    test_not_tls(ts);
    tls_server_free(ts);
}
