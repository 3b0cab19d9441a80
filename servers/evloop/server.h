/* server: the listening socket, the connection registry, and the loop-level
 * chores (accept, timeout sweep, Date refresh, graceful shutdown). */
#ifndef SERVER_H
#define SERVER_H

#include <stdint.h>
#include <stddef.h>

#include "ae.h"

struct conn;

typedef struct server_config {
    const char *prog; /* for messages; NULL: "http_bench_server" */
    const char *bind_addr;
    int port;
    uint64_t max_body;
    long long header_timeout_ms;
    long long idle_timeout_ms;
    /* A connection whose transport has a handshake (TLS) must finish it
     * within this many ms of accept. */
    long long handshake_timeout_ms;
    /* Optional, run on every accepted connection before its first event:
     * installs another transport (tls_conn_setup). 0, or -1 to refuse. */
    int (*conn_setup)(struct conn *c, void *arg);
    void *conn_setup_arg;
} server_config;

typedef struct server {
    server_config cfg;
    aeEventLoop *el;
    int listen_fd;
    int signal_fd;
    int bound_port;
    struct conn *conns; /* every open connection, for sweeps and shutdown */
    size_t nconns;
    struct conn *dirty; /* connections with output to flush this turn */
    /* Connections whose transport holds input no epoll event will report;
     * read by a zero-delay timer, i.e. in the next loop turn. */
    struct conn *rpending;
    long long rpending_timer;
    int shutting_down;
    long long accept_resume_timer;
    long long sweep_ms;
} server;

/* Binds, listens, and sets up the loop. Returns 0, or -1 with a message on
 * stderr. */
int server_init(server *s, const server_config *cfg, int setsize);
/* Makes sure conn_read_pending runs in the next loop turn. */
void server_schedule_pending_reads(server *s);
/* Runs until a graceful shutdown completes. */
void server_run(server *s);
void server_free(server *s);

#endif
