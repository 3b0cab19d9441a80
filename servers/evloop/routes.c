#include "routes.h"

#include <string.h>

#include "routes_shootout.h"

static char echo_fill[ROUTES_ECHO_MAX];

void routes_init(void) { memset(echo_fill, 'x', sizeof(echo_fill)); }

void route_scratch_reset(route_scratch *s, size_t keep_cap) {
    sbuf_reset(&s->out, keep_cap);
    sbuf_reset(&s->work, keep_cap);
}

void route_scratch_free(route_scratch *s) {
    sbuf_free(&s->out);
    sbuf_free(&s->work);
}

static int eq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return n == m && memcmp(s, lit, m) == 0;
}

int routes_parse_size(const char *query, size_t query_len, size_t *size) {
    *size = ROUTES_ECHO_DEFAULT;
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
                if (n > ROUTES_ECHO_MAX) return -1; /* also stops overflow */
            }
            *size = n;
            return 0;
        }
        p = amp ? amp + 1 : end;
    }
    return 0;
}

static void text(route_response *res, int status, const char *body) {
    res->status = status;
    res->content_type = "text/plain";
    res->body = body;
    res->body_len = strlen(body);
}

void routes_handle(const route_request *req, route_response *res) {
    /* HEAD is answered as GET; the protocol layer drops the body. */
    int get = eq(req->method, req->method_len, "GET") ||
              eq(req->method, req->method_len, "HEAD");
    int post = eq(req->method, req->method_len, "POST");

    memset(res, 0, sizeof(*res));
    if (eq(req->path, req->path_len, "/")) {
        /* The shoot-out's routes answer any other method with 404. */
        if (get) text(res, 200, "Hello, World!");
        else text(res, 404, "Not Found\n");
    } else if (eq(req->path, req->path_len, "/something")) {
        if (get) shootout_get_something(req, res);
        else if (post) shootout_post_something(req, res);
        else text(res, 404, "Not Found\n");
    } else if (eq(req->path, req->path_len, "/ping")) {
        if (!get) {
            text(res, 405, "Method Not Allowed\n");
            res->allow = "GET, HEAD";
            return;
        }
        text(res, 200, "pong");
    } else if (eq(req->path, req->path_len, "/echo")) {
        if (get) {
            size_t n;
            if (routes_parse_size(req->query, req->query_len, &n) < 0) {
                text(res, 400, "Bad Request: size must be 0..1048576\n");
                return;
            }
            res->status = 200;
            res->content_type = "text/plain";
            res->body = echo_fill;
            res->body_len = n;
        } else if (post) {
            res->status = 200;
            res->content_type = "application/octet-stream";
            res->body_is_request = 1;
        } else {
            text(res, 405, "Method Not Allowed\n");
            res->allow = "GET, HEAD, POST";
        }
    } else {
        text(res, 404, "Not Found\n");
    }
}
