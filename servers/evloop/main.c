/* http_bench_server: single-threaded event-loop HTTP/1.1 + h2c benchmark
 * server (cleartext; https_main.c is the TLS twin). */
#include <stdio.h>

#include "cli.h"
#include "server.h"

int main(int argc, char **argv) {
    cli_args a;
    server s;

    cli_parse(argc, argv, 0, &a);
    int setsize = cli_process_setup();
    if (server_init(&s, &a.cfg, setsize) < 0) {
        server_free(&s);
        return 1;
    }
    fprintf(stderr, "%s: listening on %s:%d\n", a.cfg.prog, a.cfg.bind_addr,
            s.bound_port);
    server_run(&s);
    server_free(&s);
    return 0;
}
