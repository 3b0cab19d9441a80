/* routes: the router between the protocol handlers and the application.
 * The application installs its table at start-up (routes_set); a request
 * is answered by the route whose path equals its own, and a path in no
 * route is 404. A route is a pure function from a request to a response
 * description: it does no I/O, and the protocol layer turns the description
 * into bytes. Static answers allocate nothing. Generated ones are written
 * into a scratch buffer that the protocol layer owns per connection
 * (HTTP/1) or per stream (h2) and reuses, so they allocate only while that
 * buffer is still growing. */
#ifndef ROUTES_H
#define ROUTES_H

#include <stddef.h>

#include "sbuf.h"

/* Where generated bodies go: `out` holds the response body, `work` is
 * scratch for decoding and JSON bookkeeping. Both start out empty (zeroed)
 * and are reset by their owner after each request. */
typedef struct route_scratch {
    sbuf out;
    sbuf work;
} route_scratch;

/* After a request: keeps buffers up to keep_cap bytes for the next one. */
void route_scratch_reset(route_scratch *s, size_t keep_cap);
void route_scratch_free(route_scratch *s);

typedef struct route_request {
    const char *method;
    size_t method_len;
    const char *path;
    size_t path_len;
    const char *query; /* may be NULL */
    size_t query_len;
    const char *body;
    size_t body_len;
    /* Required by the routes that generate their body; without it they
     * answer 500. */
    route_scratch *scratch;
} route_request;

typedef struct route_response {
    int status;
    const char *content_type;
    const char *allow; /* Allow header for 405, else NULL */
    /* Body: static bytes that outlive the response, or -- when
     * body_is_request is set -- the request body itself (echo), or -- when
     * body_in_scratch is set -- req->scratch->out.data[0..body_len), which
     * stays valid until the scratch is reset or written again. */
    const char *body;
    size_t body_len;
    int body_is_request;
    int body_in_scratch;
} route_response;

typedef void (*route_fn)(const route_request *req, route_response *res);

/* One path and what answers it (every method: the route decides). */
typedef struct route {
    const char *path;
    route_fn handle;
} route;

/* The table routes_handle looks paths up in, in order; it must outlive
 * every request. Until one is set every path is 404. */
void routes_set(const route *table, size_t n);
/* Zeroes res and lets the route for req->path fill it. */
void routes_handle(const route_request *req, route_response *res);

/* For routes: whether the request's method is exactly `method`, and a
 * text/plain answer from a static string. */
int route_method_is(const route_request *req, const char *method);
void route_text(route_response *res, int status, const char *body);

#endif
