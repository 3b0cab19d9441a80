/* routes: the benchmark application, as a pure function from a request to a
 * response description. It does no I/O and allocates nothing; the protocol
 * layer turns the description into bytes. */
#ifndef ROUTES_H
#define ROUTES_H

#include <stddef.h>

/* GET /echo?size=N answers N bytes of 'x'. N is capped at 1 MiB so that one
 * static buffer, filled once at start, backs every such response by
 * reference (writev), with no per-request fill or allocation. */
#define ROUTES_ECHO_MAX 1048576
#define ROUTES_ECHO_DEFAULT 64

typedef struct route_request {
    const char *method;
    size_t method_len;
    const char *path;
    size_t path_len;
    const char *query; /* may be NULL */
    size_t query_len;
    const char *body;
    size_t body_len;
} route_request;

typedef struct route_response {
    int status;
    const char *content_type;
    const char *allow; /* Allow header for 405, else NULL */
    /* Body: static bytes that outlive the response, or -- when
     * body_is_request is set -- the request body itself (echo). */
    const char *body;
    size_t body_len;
    int body_is_request;
} route_response;

void routes_init(void);
void routes_handle(const route_request *req, route_response *res);

/* Finds "size" in a query string. Absent: ROUTES_ECHO_DEFAULT. Returns -1 if
 * its value is empty, not all digits, or above ROUTES_ECHO_MAX. */
int routes_parse_size(const char *query, size_t query_len, size_t *size);

#endif
