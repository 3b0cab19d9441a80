#include "app.h"

#include <string.h>

#include "http/routes.h"
#include "routes_shootout.h"

static char echo_fill[APP_ECHO_MAX];

static int eq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return n == m && memcmp(s, lit, m) == 0;
}

int app_parse_size(const char *query, size_t query_len, size_t *size) {
    *size = APP_ECHO_DEFAULT;
    if (!query) return 0;

    const char *p = query, *end = query + query_len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pend = amp ? amp : end;
        const char *eqs = memchr(p, '=', (size_t)(pend - p));
        const char *kend = eqs ? eqs : pend;

        if (eq(p, (size_t)(kend - p), "size")) {
            /* First "size" wins; every malformed value is a client error
             * rather than silently falling back to the default. */
            size_t n = 0;
            const char *v = eqs ? eqs + 1 : pend;
            if (v == pend) return -1;
            for (; v < pend; v++) {
                if (*v < '0' || *v > '9') return -1;
                n = n * 10 + (size_t)(*v - '0');
                if (n > APP_ECHO_MAX) return -1; /* also stops overflow */
            }
            *size = n;
            return 0;
        }
        p = amp ? amp + 1 : end;
    }
    return 0;
}

/* HEAD is answered as GET; the protocol layer drops the body. */
static int is_get(const route_request *req) {
    return route_method_is(req, "GET") || route_method_is(req, "HEAD");
}

static void root(const route_request *req, route_response *res) {
    /* The shoot-out's routes answer any other method with 404. */
    if (is_get(req)) route_text(res, 200, "Hello, World!");
    else route_text(res, 404, "Not Found\n");
}

static void something(const route_request *req, route_response *res) {
    if (is_get(req)) shootout_get_something(req, res);
    else if (route_method_is(req, "POST")) shootout_post_something(req, res);
    else route_text(res, 404, "Not Found\n");
}

static void ping(const route_request *req, route_response *res) {
    if (!is_get(req)) {
        route_text(res, 405, "Method Not Allowed\n");
        res->allow = "GET, HEAD";
        return;
    }
    route_text(res, 200, "pong");
}

static void echo(const route_request *req, route_response *res) {
    if (is_get(req)) {
        size_t n;
        if (app_parse_size(req->query, req->query_len, &n) < 0) {
            route_text(res, 400, "Bad Request: size must be 0..1048576\n");
            return;
        }
        res->status = 200;
        res->content_type = "text/plain";
        res->body = echo_fill;
        res->body_len = n;
    } else if (route_method_is(req, "POST")) {
        res->status = 200;
        res->content_type = "application/octet-stream";
        res->body_is_request = 1;
    } else {
        route_text(res, 405, "Method Not Allowed\n");
        res->allow = "GET, HEAD, POST";
    }
}

static const route app_routes[] = {
    {"/", root},
    {"/something", something},
    {"/ping", ping},
    {"/echo", echo},
};

void app_init(void) {
    memset(echo_fill, 'x', sizeof(echo_fill));
    routes_set(app_routes, sizeof(app_routes) / sizeof(app_routes[0]));
}
