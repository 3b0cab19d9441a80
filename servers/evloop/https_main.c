/* https_bench_server: the same server behind TLS -- HTTP/1.1 and h2 chosen
 * by ALPN on one port. Same flags as http_bench_server, plus CERT and KEY
 * (PEM files) after PORT and --handshake-timeout. */
#include "cli.h"
#include "net/tls.h"
#include "net/workers.h"
#include "protocols.h"

int main(int argc, char **argv) {
    cli_args a;

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
    /* Connections (and their SSL objects) are gone before the context. */
    int rc = workers_serve(&a.cfg, setsize);
    tls_server_free(ts);
    return rc;
}
