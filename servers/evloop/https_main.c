/* https_bench_server: the same server behind TLS -- HTTP/1.1 and h2 chosen
 * by ALPN on one port. Same flags as http_bench_server, plus CERT and KEY
 * (PEM files) after PORT and --handshake-timeout. */
#include <stdio.h>

#include "cli.h"
#include "protocols.h"
#include "server.h"
#include "tls.h"

int main(int argc, char **argv) {
    cli_args a;
    server s;

    cli_parse(argc, argv, 1, &a);
    int setsize = cli_process_setup();
    unsigned char alpn[64];
    size_t alpn_len = protocols_alpn_wire(a.cfg.conn.protocols,
                                          a.cfg.conn.nprotocols, alpn,
                                          sizeof(alpn));
    tls_server *ts = tls_server_new(a.cert_file, a.key_file, alpn, alpn_len);
    if (!ts) return 1;
    a.cfg.conn.setup = tls_conn_setup;
    a.cfg.conn.setup_arg = ts;
    int rc = 0;
    if (server_init(&s, &a.cfg, setsize) < 0) {
        rc = 1;
    } else {
        fprintf(stderr, "%s: listening on %s:%d\n", a.cfg.prog,
                a.cfg.bind_addr, s.bound_port);
        server_run(&s);
    }
    /* Connections (and their SSL objects) go before the context. */
    server_free(&s);
    tls_server_free(ts);
    return rc;
}
