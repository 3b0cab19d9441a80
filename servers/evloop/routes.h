/* routes: the benchmark application, as a pure function from a request to a
 * response description. It does no I/O; the protocol layer turns the
 * description into bytes. Static answers allocate nothing. Generated ones
 * (the shoot-out's /something) are written into a scratch buffer that the
 * protocol layer owns per connection (HTTP/1) or per stream (h2) and reuses,
 * so they allocate only while that buffer is still growing. */
#ifndef ROUTES_H
#define ROUTES_H

#include <stddef.h>

#include "sbuf.h"

/* GET /echo?size=N answers N bytes of 'x'. N is capped at 1 MiB so that one
 * static buffer, filled once at start, backs every such response by
 * reference (writev), with no per-request fill or allocation. */
#define ROUTES_ECHO_MAX 1048576
#define ROUTES_ECHO_DEFAULT 64

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

void routes_init(void);
void routes_handle(const route_request *req, route_response *res);

/* Finds "size" in a query string. Absent: ROUTES_ECHO_DEFAULT. Returns -1 if
 * its value is empty, not all digits, or above ROUTES_ECHO_MAX. */
int routes_parse_size(const char *query, size_t query_len, size_t *size);

#endif
