/* h1: the HTTP/1.x protocol handler -- request framing (heads, bodies by
 * Content-Length or chunked, pipelining), keep-alive, error answers, and
 * response assembly into the connection's output queue. */
#ifndef H1_H
#define H1_H

#include "net/conn.h"

/* A request head may be at most this long (431 beyond). */
#define H1_MAX_HEAD (16 * 1024)

extern const proto_handler h1_handler;

#endif
