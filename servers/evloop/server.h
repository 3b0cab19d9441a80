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
    /* The event loop's backend (ae_backend.h); NULL: the default, epoll. */
    const char *loop_backend;
    uint64_t max_body;
    long long header_timeout_ms;
    long long idle_timeout_ms;
    /* Output queued for a peer that takes none of it for this long: close
     * (a client that never reads its responses). */
    long long send_timeout_ms;
    /* A request body must arrive within body_timeout_ms of its head, plus
     * one second per body_min_rate bytes received (mod_reqtimeout's
     * "body=T,MinRate=R"); 0 disables the rate term. HTTP/2 applies it per
     * stream, and send_timeout_ms to a stream whose response is stuck behind
     * the peer's flow-control window. */
    long long body_timeout_ms;
    uint64_t body_min_rate;
    /* Open connections; at the limit idle ones are closed to make room,
     * else accepting pauses until one closes. */
    size_t max_conns;
    /* HTTP/2: request-body bytes one connection may hold before we stop
     * returning flow-control credit (WINDOW_UPDATE); never below max_body. */
    uint64_t h2_conn_memory;
    /* HTTP/2: the decoded header list a stream may send (431 above). */
    uint32_t h2_max_header_list;
    /* HTTP/2: CONTINUATION frames after one HEADERS (nghttp2 enforces). */
    uint32_t h2_max_continuations;
    /* HTTP/2 token buckets (burst, then per second): RST_STREAM from the
     * client (rapid reset; nghttp2 enforces) and the frames that cost us
     * work but carry no request -- PING, SETTINGS, PRIORITY, empty DATA. */
    uint32_t h2_reset_burst, h2_reset_rate;
    uint32_t h2_flood_burst, h2_flood_rate;
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
    int accept_full; /* accepting paused at cfg.max_conns */
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
