/* https_bench_server: the same server behind TLS -- HTTP/1.1 and h2 chosen
 * by ALPN on one port -- and, with --h3 yes, HTTP/3 over QUIC on the same
 * port number over UDP, served by the same loop. Same flags as
 * http_bench_server, plus CERT and KEY (PEM files) after PORT,
 * --handshake-timeout and --h3. */
#include "cli.h"
#include "http3/quic_ep.h"
#include "net/tls.h"
#include "net/workers.h"
#include "protocols.h"

/* HTTP/3's limits beside the command line's: a request stream may send
 * 256 KiB ahead of what the server has read, a connection 1 MiB, and a
 * client may open 100 request streams at once (h2's SETTINGS default). */
#define H3_STREAM_WINDOW (256u << 10)
#define H3_CONN_WINDOW (1u << 20)
#define H3_MAX_STREAMS 100

static void *h3_start(aeEventLoop *el, int port, int reuseport, void *arg) {
    h3_config c = *(const h3_config *)arg;
    c.port = port;
    c.reuseport = reuseport;
    return quic_ep_start(el, &c);
}

static void h3_stop(void *ep) { quic_ep_stop(ep); }

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
    h3_config h3 = {
        .cert_file = a.cert_file, .key_file = a.key_file,
        .bind_addr = a.cfg.bind_addr,
        .lim = {
            .h3 = {.max_body = a.cfg.conn.max_body, .max_streams = H3_MAX_STREAMS,
                   .conn_memory = a.cfg.conn.h2_conn_memory,
                   .body_timeout_ms = a.cfg.conn.body_timeout_ms,
                   .body_min_rate = a.cfg.conn.body_min_rate},
            .stream_window = H3_STREAM_WINDOW, .conn_window = H3_CONN_WINDOW,
            .idle_timeout_ms = a.cfg.conn.idle_timeout_ms,
            .handshake_timeout_ms = a.cfg.conn.handshake_timeout_ms,
            .max_conns = a.cfg.max_conns,
            .max_handshakes = a.cfg.h3_max_handshakes,
            .conn_memory = (size_t)a.cfg.h3_conn_memory,
        },
    };
    if (a.h3) a.cfg.extra = (server_extra){h3_start, h3_stop, &h3};
    /* Connections (and their SSL objects) are gone before the context. */
    int rc = workers_serve(&a.cfg, setsize);
    tls_server_free(ts);
    return rc;
}
