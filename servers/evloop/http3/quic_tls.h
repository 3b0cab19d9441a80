/* quic_tls: the TLS 1.3 inside QUIC, on GnuTLS (ngtcp2's crypto backend on
 * Debian 12 is GnuTLS only; the TCP side stays on OpenSSL, net/tls.c). One
 * credential set and priority cache per process, a session per connection,
 * configured by ngtcp2's crypto helper and offering only "h3" by ALPN. */
#ifndef QUIC_TLS_H
#define QUIC_TLS_H

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2_crypto.h>

typedef struct quic_tls quic_tls;

/* Loads the PEM certificate chain and key. NULL with a message on stderr. */
quic_tls *quic_tls_new(const char *cert_file, const char *key_file);
void quic_tls_free(quic_tls *t);

/* A server session for one connection, whose conn_ref ngtcp2's callbacks
 * reach the connection through. NULL on failure. */
gnutls_session_t quic_tls_session(quic_tls *t, ngtcp2_crypto_conn_ref *ref);

#endif
