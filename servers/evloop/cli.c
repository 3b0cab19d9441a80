#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "app/app.h"
#include "loop/ae.h"
#include "protocols.h"

/* The loop's fd table is sized from RLIMIT_NOFILE, capped so an "unlimited"
 * hard limit does not cost a huge table. */
#define MAX_SETSIZE (1 << 20)

/* The numeric flags: one row each, so a new limit is one line here plus
 * its field in server_config (and its row in README.md). */
enum { NUM_U64, NUM_MS, NUM_SIZE, NUM_U32 };
typedef struct num_flag {
    const char *name;
    int tls_only;
    int kind;
    size_t off; /* in server_config */
    unsigned long long min, max;
} num_flag;

#define CFG(f) offsetof(server_config, f)
#define DAY_MS 86400000ULL
static const num_flag num_flags[] = {
    {"--max-body", 0, NUM_U64, CFG(conn.max_body), 0, 1ULL << 40},
    {"--header-timeout", 0, NUM_MS, CFG(conn.header_timeout_ms), 1, DAY_MS},
    {"--idle-timeout", 0, NUM_MS, CFG(conn.idle_timeout_ms), 1, DAY_MS},
    {"--send-timeout", 0, NUM_MS, CFG(conn.send_timeout_ms), 1, DAY_MS},
    {"--body-timeout", 0, NUM_MS, CFG(conn.body_timeout_ms), 1, DAY_MS},
    {"--body-min-rate", 0, NUM_U64, CFG(conn.body_min_rate), 0, 1ULL << 40},
    {"--max-conns", 0, NUM_SIZE, CFG(max_conns), 1, 1ULL << 24},
    {"--workers", 0, NUM_U32, CFG(workers), 1, 256},
    {"--h2-conn-memory", 0, NUM_U64, CFG(conn.h2_conn_memory), 1, 1ULL << 40},
    {"--h2-max-header-list", 0, NUM_U32, CFG(conn.h2_max_header_list), 256,
     1U << 24},
    {"--h2-max-continuations", 0, NUM_U32, CFG(conn.h2_max_continuations), 0,
     1U << 16},
    {"--h2-reset-burst", 0, NUM_U32, CFG(conn.h2_reset_burst), 1, 1U << 30},
    {"--h2-reset-rate", 0, NUM_U32, CFG(conn.h2_reset_rate), 0, 1U << 30},
    {"--h2-flood-burst", 0, NUM_U32, CFG(conn.h2_flood_burst), 1, 1U << 30},
    {"--h2-flood-rate", 0, NUM_U32, CFG(conn.h2_flood_rate), 0, 1U << 30},
    {"--handshake-timeout", 1, NUM_MS, CFG(conn.handshake_timeout_ms), 1, DAY_MS},
    {"--h3-max-handshakes", 1, NUM_U32, CFG(h3_max_handshakes), 0, 1U << 24},
    /* (below 256 KiB a connection's handshake and first streams may not fit) */
    {"--h3-conn-memory", 1, NUM_U64, CFG(h3_conn_memory), 262144, 1ULL << 40},
};
#define N_NUM_FLAGS (sizeof(num_flags) / sizeof(num_flags[0]))

static void usage(const char *prog, int tls) {
    char loops[128];
    aeBackendNames(loops, sizeof(loops));
    fprintf(stderr, "usage: %s PORT%s [--bind ADDR] [--loop %s] [--loop-fallback yes|no]%s", prog,
            tls ? " CERT KEY" : "", loops, tls ? " [--h3 yes|no]" : "");
    for (size_t i = 0; i < N_NUM_FLAGS; i++)
        if (tls || !num_flags[i].tls_only)
            fprintf(stderr, "%s[%s N]", i % 3 == 0 ? "\n       " : " ",
                    num_flags[i].name);
    fprintf(stderr, "\n(see servers/evloop/README.md for each limit)\n");
    exit(2);
}

/* yes (1) or no (0); anything else exits 2. */
static int yes_no(const char *prog, const char *flag, const char *v) {
    if (strcmp(v, "yes") && strcmp(v, "no")) {
        fprintf(stderr, "%s: bad %s: %s (yes or no)\n", prog, flag, v);
        exit(2);
    }
    return !strcmp(v, "yes");
}

/* Digits only, in [min, max]. */
static unsigned long long parse_num(const cli_args *a, int tls, const char *s,
                                    unsigned long long min,
                                    unsigned long long max, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
        fprintf(stderr, "%s: bad %s: %s (%llu..%llu)\n", a->cfg.prog, what, s,
                min, max);
        usage(a->cfg.prog, tls);
    }
    return v;
}

static void set_num(server_config *cfg, const num_flag *f,
                    unsigned long long v) {
    char *field = (char *)cfg + f->off;
    switch (f->kind) {
    case NUM_U64: *(uint64_t *)(void *)field = v; break;
    case NUM_MS: *(long long *)(void *)field = (long long)v; break;
    case NUM_SIZE: *(size_t *)(void *)field = (size_t)v; break;
    default: *(uint32_t *)(void *)field = (uint32_t)v; break;
    }
}

static const num_flag *find_flag(const char *name, int tls) {
    for (size_t i = 0; i < N_NUM_FLAGS; i++)
        if (!strcmp(name, num_flags[i].name) && (tls || !num_flags[i].tls_only))
            return &num_flags[i];
    return NULL;
}

void cli_defaults(server_config *cfg) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->bind_addr = "127.0.0.1";
    cfg->port = -1;
    cfg->conn.max_body = 16777216;
    cfg->conn.header_timeout_ms = 10000;
    cfg->conn.idle_timeout_ms = 60000;
    cfg->conn.send_timeout_ms = 30000;
    cfg->conn.body_timeout_ms = 10000;
    cfg->conn.body_min_rate = 1024;
    cfg->max_conns = 8192;
    cfg->h3_max_handshakes = 256;
    cfg->h3_conn_memory = 8u << 20;
    cfg->workers = 1;
    cfg->conn.h2_conn_memory = 0; /* = max_body, see cli_parse */
    cfg->conn.h2_max_header_list = 16384;
    cfg->conn.h2_max_continuations = 8;
    cfg->conn.h2_reset_burst = 1000;
    cfg->conn.h2_reset_rate = 33;
    cfg->conn.h2_flood_burst = 1000;
    cfg->conn.h2_flood_rate = 100;
    cfg->conn.handshake_timeout_ms = 10000;
    cfg->conn.protocols = protocols_table;
    cfg->conn.nprotocols = protocols_count;
}

void cli_parse(int argc, char **argv, int tls, cli_args *a) {
    const char *prog = tls ? "https_bench_server" : "http_bench_server";
    int npos = 0; /* positionals seen: PORT, then CERT and KEY for TLS */

    memset(a, 0, sizeof(*a));
    cli_defaults(&a->cfg);
    a->cfg.prog = prog;

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
        const num_flag *f;
        if (!strcmp(s, "--bind")) a->cfg.bind_addr = v;
        else if (!strcmp(s, "--loop")) a->cfg.loop_backend = v;
        else if (!strcmp(s, "--loop-fallback"))
            a->cfg.loop_strict = !yes_no(prog, s, v);
        else if (tls && !strcmp(s, "--h3"))
            a->h3 = yes_no(prog, s, v);
        else if ((f = find_flag(s, tls)))
            set_num(&a->cfg, f, parse_num(a, tls, v, f->min, f->max, f->name));
        else {
            fprintf(stderr, "%s: unknown flag %s\n", prog, s);
            usage(prog, tls);
        }
    }
    if (npos != (tls ? 3 : 1)) usage(prog, tls);
    /* One body of --max-body must always fit, or its upload would stall
     * waiting for credit that only its own completion can free. */
    if (!a->cfg.conn.h2_conn_memory) a->cfg.conn.h2_conn_memory = a->cfg.conn.max_body;
    if (a->cfg.conn.h2_conn_memory < a->cfg.conn.max_body) {
        fprintf(stderr, "%s: --h2-conn-memory must be at least --max-body\n",
                prog);
        usage(prog, tls);
    }
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
    app_init();
    return setsize;
}
