/* h2: the HTTP/2 protocol handler, on the server's own codec (h2_*.c:
 * frames, HPACK, flow control); libnghttp2 supplies only the field-syntax
 * checks (nghttp2_check_*).
 *
 * Chosen by conn.c when a cleartext connection starts with the client
 * preface (prior knowledge) or TLS agreed on "h2" (ALPN), or entered from
 * HTTP/1.1 through "Upgrade: h2c". Requests go to the same routes as
 * HTTP/1.1. */
#ifndef H2_H
#define H2_H

#include <stddef.h>

#include "http/routes.h"
#include "net/conn.h"

extern const proto_handler h2_handler;

/* Switches c from HTTP/1.1 to h2 (RFC 7540 3.2): queues "101 Switching
 * Protocols", replaces c's handler (freeing the HTTP/1 state) and answers
 * rq -- a complete request without a body -- as stream 1 once the client's
 * preface arrives. settings is the
 * HTTP2-Settings value (base64url). Returns 0 (the caller must return
 * PROTO_SWITCH at once), or -1 with nothing changed: the caller then serves
 * the request over HTTP/1.1 as if Upgrade were absent. */
int h2_upgrade(conn *c, const char *settings, size_t settings_len,
               const route_request *rq);

#endif
