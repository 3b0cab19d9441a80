/* tls: the TLS transport, on OpenSSL 3.
 *
 * TLS 1.2 and 1.3 (1.3 preferred), ALPN ids of the protocol table ("h2",
 * "http/1.1") on one port.
 * It plugs into a connection as another transport (conn.h): a non-blocking
 * handshake driven by the loop's events, then reads that drain OpenSSL
 * until it wants more from the socket, and one SSL_write_ex per flush.
 * Only https_bench_server links it. */
#ifndef TLS_H
#define TLS_H

#include <stddef.h>

#include "conn.h"

typedef struct tls_server tls_server;

/* Loads the certificate chain and key (PEM). alpn: the ALPN ids we speak,
 * in TLS wire format and order of preference (protocols_alpn_wire). NULL,
 * with the reason on stderr, on failure. */
tls_server *tls_server_new(const char *cert_file, const char *key_file,
                           const unsigned char *alpn, size_t alpn_len);
void tls_server_free(tls_server *ts);

/* conn_config.setup: gives c the TLS transport; arg is the
 * tls_server. 0, or -1 when out of memory. */
int tls_conn_setup(conn *c, void *arg);

#endif
