#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "routes.h"

/* The loop's fd table is sized from RLIMIT_NOFILE, capped so an "unlimited"
 * hard limit does not cost a huge table. */
#define MAX_SETSIZE (1 << 20)

static void usage(const char *prog, int tls) {
    fprintf(stderr,
            "usage: %s PORT%s [--bind ADDR] [--max-body BYTES]\n"
            "       [--header-timeout MS] [--idle-timeout MS]%s\n",
            prog, tls ? " CERT KEY" : "",
            tls ? " [--handshake-timeout MS]" : "");
    exit(2);
}

/* Digits only, in [min, max]. */
static unsigned long long parse_num(const cli_args *a, int tls, const char *s,
                                    unsigned long long min,
                                    unsigned long long max, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
        fprintf(stderr, "%s: bad %s: %s\n", a->cfg.prog, what, s);
        usage(a->cfg.prog, tls);
    }
    return v;
}

void cli_parse(int argc, char **argv, int tls, cli_args *a) {
    const char *prog = tls ? "https_bench_server" : "http_bench_server";
    int npos = 0; /* positionals seen: PORT, then CERT and KEY for TLS */

    memset(a, 0, sizeof(*a));
    a->cfg.prog = prog;
    a->cfg.bind_addr = "127.0.0.1";
    a->cfg.port = -1;
    a->cfg.max_body = 16777216;
    a->cfg.header_timeout_ms = 10000;
    a->cfg.idle_timeout_ms = 60000;
    a->cfg.handshake_timeout_ms = 10000;

    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (s[0] != '-') {
            if (npos == 0) a->cfg.port = (int)parse_num(a, tls, s, 0, 65535,
                                                        "port");
            else if (tls && npos == 1) a->cert_file = s;
            else if (tls && npos == 2) a->key_file = s;
            else usage(prog, tls);
            npos++;
            continue;
        }
        if (i + 1 >= argc) usage(prog, tls);
        const char *v = argv[++i];
        if (!strcmp(s, "--bind")) a->cfg.bind_addr = v;
        else if (!strcmp(s, "--max-body"))
            a->cfg.max_body = parse_num(a, tls, v, 0, (1ULL << 40),
                                        "max body");
        else if (!strcmp(s, "--header-timeout"))
            a->cfg.header_timeout_ms =
                (long long)parse_num(a, tls, v, 1, 86400000, "header timeout");
        else if (!strcmp(s, "--idle-timeout"))
            a->cfg.idle_timeout_ms =
                (long long)parse_num(a, tls, v, 1, 86400000, "idle timeout");
        else if (tls && !strcmp(s, "--handshake-timeout"))
            a->cfg.handshake_timeout_ms = (long long)parse_num(
                a, tls, v, 1, 86400000, "handshake timeout");
        else usage(prog, tls);
    }
    if (npos != (tls ? 3 : 1)) usage(prog, tls);
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

int cli_process_setup(void) {
    /* A peer that resets mid-write must cost us an EPIPE, not the process
     * (OpenSSL's socket BIO writes with write(2), not send(MSG_NOSIGNAL)). */
    signal(SIGPIPE, SIG_IGN);
    int setsize = raise_fd_limit();
    routes_init();
    return setsize;
}
