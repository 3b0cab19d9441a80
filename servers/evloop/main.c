/* http_bench_server: single-threaded event-loop HTTP/1.1 benchmark server. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "routes.h"
#include "server.h"

/* The loop's fd table is sized from RLIMIT_NOFILE, capped so an "unlimited"
 * hard limit does not cost a huge table. */
#define MAX_SETSIZE (1 << 20)

static void usage(void) {
    fprintf(stderr,
            "usage: http_bench_server PORT [--bind ADDR] [--max-body BYTES]\n"
            "                         [--header-timeout MS] "
            "[--idle-timeout MS]\n");
    exit(2);
}

/* Digits only, in [min, max]. */
static unsigned long long parse_num(const char *s, unsigned long long min,
                                    unsigned long long max, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
        fprintf(stderr, "http_bench_server: bad %s: %s\n", what, s);
        usage();
    }
    return v;
}

/* 500+ connections need more than the usual soft limit of 1024 fds. */
static int raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return 1024;
    if (rl.rlim_cur != rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > MAX_SETSIZE)
        return MAX_SETSIZE;
    return (int)rl.rlim_cur;
}

int main(int argc, char **argv) {
    server_config cfg = {
        .bind_addr = "127.0.0.1",
        .port = -1,
        .max_body = 16777216,
        .header_timeout_ms = 10000,
        .idle_timeout_ms = 60000,
    };
    server s;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            if (cfg.port >= 0) usage();
            cfg.port = (int)parse_num(a, 0, 65535, "port");
            continue;
        }
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--bind")) cfg.bind_addr = v;
        else if (!strcmp(a, "--max-body"))
            cfg.max_body = parse_num(v, 0, (1ULL << 40), "max body");
        else if (!strcmp(a, "--header-timeout"))
            cfg.header_timeout_ms =
                (long long)parse_num(v, 1, 86400000, "header timeout");
        else if (!strcmp(a, "--idle-timeout"))
            cfg.idle_timeout_ms =
                (long long)parse_num(v, 1, 86400000, "idle timeout");
        else usage();
    }
    if (cfg.port < 0) usage();

    /* A peer that resets mid-write must cost us an EPIPE, not the process. */
    signal(SIGPIPE, SIG_IGN);
    int setsize = raise_fd_limit();
    routes_init();

    if (server_init(&s, &cfg, setsize) < 0) {
        server_free(&s);
        return 1;
    }
    fprintf(stderr, "http_bench_server: listening on %s:%d\n", cfg.bind_addr,
            s.bound_port);
    server_run(&s);
    server_free(&s);
    return 0;
}
