/* conn_io: what conn.c asks of conn_io.c (internal to the two; handlers use
 * conn.h's conn_out_*). */
#ifndef CONN_IO_H
#define CONN_IO_H

#include "conn.h"

/* A plain socket read and written directly, and the same socket adopted by
 * a completion loop (io_uring: aeRecv, aeSendv). */
extern const transport conn_plain_transport;
extern const transport conn_loop_transport;

/* One writev of everything queued. Returns 1 when drained, 0 when output
 * remains (socket buffer full), -1 on a fatal error. */
int conn_io_flush(conn *c);
/* Drops the output queue: the memory its segments own is freed and its
 * buffers go back to the set's pools. */
void conn_io_discard(conn *c);

#endif
