/* workers: the server's processes. With --workers 1 (the default) the
 * server runs in this process. With N > 1, N worker processes each run
 * their own loop on their own listening socket of the same port
 * (SO_REUSEPORT: the kernel spreads new connections over them, as nginx's
 * reuseport does), worker i pinned to the i-th CPU this process may use
 * (round robin when there are fewer CPUs than workers). The parent only
 * starts them, prints "listening" once all are bound, passes SIGTERM and
 * SIGINT on (each worker shuts down gracefully), and waits. A worker that
 * dies unasked stops the others: a benchmark server that lost a worker
 * would go on measuring something else. Limits such as --max-conns apply
 * per worker. */
#ifndef WORKERS_H
#define WORKERS_H

#include "server.h"

/* Serves cfg until a graceful shutdown; returns the process exit code. */
int workers_serve(const server_config *cfg, int setsize);

#endif
