/* server: the listening socket and the loop-level chores (accept, the
 * timeout sweep, Date refresh, signals, graceful shutdown). It owns the
 * loop and the connection set; connections know neither it nor each
 * other's protocols (conn.h). */
#ifndef SERVER_H
#define SERVER_H

#include <stdint.h>
#include <stddef.h>

#include "conn.h"
#include "loop/ae.h"

/* Something else the loop serves beside the TCP listener (the HTTP/3
 * endpoint, on the same port number over UDP): started on each worker's
 * loop once the TCP port is bound, stopped before the loop goes. start
 * returns its state, or NULL to fail the server's start. */
typedef struct server_extra {
    void *(*start)(aeEventLoop *el, int port, int reuseport, void *arg);
    void (*stop)(void *state);
    void *arg;
} server_extra;

typedef struct server_config {
    const char *prog; /* for messages; NULL: "http_bench_server" */
    const char *bind_addr;
    int port;
    /* The event loop's backend (ae_backend.h); NULL: the default, epoll. */
    const char *loop_backend;
    /* Where loop_backend is refused here: stop (1) rather than say so and
     * serve on epoll (0), for a benchmark that must measure that loop. */
    int loop_strict;
    /* Open connections (per worker); at the limit idle ones are closed to
     * make room, else accepting pauses until one closes. */
    size_t max_conns;
    /* Processes serving the port (workers.c); above 1 every listening
     * socket is bound with SO_REUSEPORT. */
    uint32_t workers;
    /* HTTP/3 (https_bench_server --h3 yes): QUIC handshakes in progress
     * before a new client must prove its address with a Retry. */
    uint32_t h3_max_handshakes;
    /* HTTP/3: what ngtcp2 and nghttp3 may hold for one connection (bytes;
     * http3/quic_mem.h); past it that connection is closed. */
    uint64_t h3_conn_memory;
    /* What every connection gets: limits, timeouts, the transport. */
    conn_config conn;
    server_extra extra; /* start NULL: none */
} server_config;

typedef struct server {
    server_config cfg;
    aeEventLoop *el;
    int listen_fd;
    int signal_fd;
    int bound_port;
    conn_set conns; /* every open connection */
    long long accept_resume_timer;
    int accept_full; /* accepting paused at cfg.max_conns */
    long long sweep_ms;
    void *extra_state; /* cfg.extra's */
} server;

/* A socket bound to cfg's address (SO_REUSEPORT with workers) and, with
 * do_listen, listening; the port it got in *bound_port (port 0 picks one).
 * The fd, or -1 with a message on stderr. */
int server_bind(const server_config *cfg, int do_listen, int *bound_port);
/* Binds, listens, and sets up the loop. Returns 0, or -1 with a message on
 * stderr. */
int server_init(server *s, const server_config *cfg, int setsize);
/* Runs until a graceful shutdown completes. */
void server_run(server *s);
void server_free(server *s);

#endif
