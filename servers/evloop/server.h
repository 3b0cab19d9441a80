/* server: the listening socket, the connection registry, and the loop-level
 * chores (accept, timeout sweep, Date refresh, graceful shutdown). */
#ifndef SERVER_H
#define SERVER_H

#include <stdint.h>
#include <stddef.h>

#include "ae.h"

struct conn;

typedef struct server_config {
    const char *bind_addr;
    int port;
    uint64_t max_body;
    long long header_timeout_ms;
    long long idle_timeout_ms;
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
    int shutting_down;
    long long accept_resume_timer;
    long long sweep_ms;
} server;

/* Binds, listens, and sets up the loop. Returns 0, or -1 with a message on
 * stderr. */
int server_init(server *s, const server_config *cfg, int setsize);
/* Runs until a graceful shutdown completes. */
void server_run(server *s);
void server_free(server *s);

#endif
