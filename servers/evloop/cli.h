/* cli: the command line and process setup shared by http_bench_server and
 * https_bench_server (which takes CERT and KEY after PORT and accepts
 * --handshake-timeout). */
#ifndef CLI_H
#define CLI_H

#include "net/server.h"

typedef struct cli_args {
    server_config cfg;
    const char *cert_file, *key_file; /* TLS only */
    int h3; /* TLS only: HTTP/3 over QUIC on the same port number (UDP) */
} cli_args;

/* Every limit at its default (README.md lists them). */
void cli_defaults(server_config *cfg);
/* Fills a from argv; on a bad command line prints usage and exits 2. */
void cli_parse(int argc, char **argv, int tls, cli_args *a);
/* SIGPIPE ignored, RLIMIT_NOFILE raised, routes ready. Returns the event
 * loop's fd table size. */
int cli_process_setup(void);

#endif
