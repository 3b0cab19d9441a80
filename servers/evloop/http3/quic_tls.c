#include "http3/quic_tls.h"

#include <stdio.h>
#include <stdlib.h>

#include <ngtcp2/ngtcp2_crypto_gnutls.h>

struct quic_tls {
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
};

/* TLS 1.3 only, with the AEADs QUIC allows (RFC 9001 5.3: no CCM_8), and no
 * middlebox compatibility mode, which QUIC forbids (RFC 9001 8.4). */
#define QUIC_PRIORITY                                                     \
    "%DISABLE_TLS13_COMPAT_MODE:NORMAL:-VERS-ALL:+VERS-TLS1.3:"           \
    "-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM"

quic_tls *quic_tls_new(const char *cert_file, const char *key_file) {
    quic_tls *t = calloc(1, sizeof(*t));
    const char *err = NULL;
    int rv;
    if (!t) return NULL;
    if ((rv = gnutls_certificate_allocate_credentials(&t->cred)) < 0 ||
        (rv = gnutls_certificate_set_x509_key_file(
             t->cred, cert_file, key_file, GNUTLS_X509_FMT_PEM)) < 0 ||
        (rv = gnutls_priority_init(&t->prio, QUIC_PRIORITY, &err)) < 0) {
        fprintf(stderr, "https_bench_server: QUIC TLS (%s, %s): %s%s%s\n",
                cert_file, key_file, gnutls_strerror(rv), err ? " at " : "",
                err ? err : "");
        quic_tls_free(t);
        return NULL;
    }
    return t;
}

void quic_tls_free(quic_tls *t) {
    if (!t) return;
    if (t->prio) gnutls_priority_deinit(t->prio);
    if (t->cred) gnutls_certificate_free_credentials(t->cred);
    free(t);
}

gnutls_session_t quic_tls_session(quic_tls *t, ngtcp2_crypto_conn_ref *ref) {
    static const gnutls_datum_t h3 = {(unsigned char *)"h3", 2};
    gnutls_session_t s;
    if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) < 0)
        return NULL;
    if (gnutls_priority_set(s, t->prio) < 0 ||
        ngtcp2_crypto_gnutls_configure_server_session(s) != 0 ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0 ||
        gnutls_alpn_set_protocols(s, &h3, 1, GNUTLS_ALPN_MANDATORY) < 0) {
        gnutls_deinit(s);
        return NULL;
    }
    gnutls_session_set_ptr(s, ref);
    return s;
}
