#include "routes.h"

#include <string.h>

static const route *table;
static size_t ntable;

void routes_set(const route *t, size_t n) {
    table = t;
    ntable = n;
}

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

int route_method_is(const route_request *req, const char *method) {
    return eq(req->method, req->method_len, method);
}

void route_text(route_response *res, int status, const char *body) {
    res->status = status;
    res->content_type = "text/plain";
    res->body = body;
    res->body_len = strlen(body);
}

void routes_handle(const route_request *req, route_response *res) {
    memset(res, 0, sizeof(*res));
    for (size_t i = 0; i < ntable; i++)
        if (eq(req->path, req->path_len, table[i].path)) {
            table[i].handle(req, res);
            return;
        }
    route_text(res, 404, "Not Found\n");
}
