/* http_bench_server: single-threaded event-loop HTTP/1.1 + h2c benchmark
 * server (cleartext; https_main.c is the TLS twin). */
#include "cli.h"
#include "net/workers.h"

int main(int argc, char **argv) {
    cli_args a;
    cli_parse(argc, argv, 0, &a);
    int setsize = cli_process_setup();
    return workers_serve(&a.cfg, setsize);
}
