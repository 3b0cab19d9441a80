#include "routes_shootout.h"

#include <string.h>

#include "http/http_status.h"
#include "json.h"
#include "json_members.h"
#include "query.h"

static const char HELLO_JSON[] = "{\"message\":\"Hello, World!\",\"query\":{";

static void text(route_response *res, int status, const char *body) {
    res->status = status;
    res->content_type = "text/plain";
    res->body = body;
    res->body_len = strlen(body);
    res->body_in_scratch = 0;
}

static void fail(route_response *res, int rc, const char *why400) {
    if (rc == JSON_NOMEM) text(res, 500, "Internal Server Error\n");
    else text(res, 400, why400);
}

static void from_scratch(route_response *res, route_scratch *s,
                         const char *ctype) {
    res->status = 200;
    res->content_type = ctype;
    res->body = s->out.data;
    res->body_len = s->out.len;
    res->body_in_scratch = 1;
}

/* One "name=value\n" line per parameter, decoded straight into the body:
 * decoding never grows, so raw length + 2 bytes is enough room. */
static int query_text(const route_request *req, sbuf *out) {
    query_iter it;
    query_param qp;
    query_iter_init(&it, req->query, req->query_len);
    while (query_next(&it, &qp)) {
        if (sbuf_reserve(out, qp.name_len + qp.value_len + 2) < 0)
            return JSON_NOMEM;
        char *o = out->data + out->len;
        ssize_t n = query_decode(qp.name, qp.name_len, o);
        if (n < 0) return JSON_INVALID;
        o += n;
        *o++ = '=';
        if ((n = query_decode(qp.value, qp.value_len, o)) < 0)
            return JSON_INVALID;
        o += n;
        *o++ = '\n';
        out->len = (size_t)(o - out->data);
    }
    return JSON_OK;
}

/* Decodes a component into the free space past work->len (transient: the
 * next push overwrites it) and appends it as a JSON string. */
static int put_component(sbuf *out, sbuf *work, const char *raw, size_t n) {
    if (sbuf_reserve(work, n) < 0) return JSON_NOMEM;
    char *tmp = work->data + work->len;
    ssize_t dn = query_decode(raw, n, tmp);
    if (dn < 0) return JSON_INVALID;
    return json_put_string(out, tmp, (size_t)dn);
}

/* {"message":"Hello, World!","query":{name:value,...}} with the names'
 * members recorded, so that a repeated name keeps its last value exactly
 * as in a parsed JSON object. */
static int query_json(const route_request *req, route_scratch *s) {
    query_iter it;
    query_param qp;
    size_t mark = s->work.len;
    int rc;

    if (sbuf_put(&s->out, HELLO_JSON, sizeof(HELLO_JSON) - 1) < 0)
        return JSON_NOMEM;
    size_t first = s->out.len;
    query_iter_init(&it, req->query, req->query_len);
    while (query_next(&it, &qp)) {
        if ((s->out.len != first && sbuf_put(&s->out, ",", 1) < 0) ||
            json_members_push(&s->work, s->out.len) < 0)
            return JSON_NOMEM;
        rc = put_component(&s->out, &s->work, qp.name, qp.name_len);
        if (rc != JSON_OK) return rc;
        if (sbuf_put(&s->out, ":", 1) < 0) return JSON_NOMEM;
        rc = put_component(&s->out, &s->work, qp.value, qp.value_len);
        if (rc != JSON_OK) return rc;
    }
    size_t end = s->out.len;
    if (json_members_dedup(s->out.data, &end, &s->work, mark) < 0)
        return JSON_NOMEM;
    s->out.len = end;
    return sbuf_put(&s->out, "}}", 2) < 0 ? JSON_NOMEM : JSON_OK;
}

void shootout_get_something(const route_request *req, route_response *res) {
    route_scratch *s = req->scratch;
    query_iter it;
    query_param qp;
    int json = 0, rc;

    if (!s) {
        fail(res, JSON_NOMEM, NULL);
        return;
    }
    /* json=true anywhere switches the format, so look before writing. */
    query_iter_init(&it, req->query, req->query_len);
    while (!json && query_next(&it, &qp))
        json = query_decoded_eq(qp.name, qp.name_len, "json") &&
               query_decoded_eq(qp.value, qp.value_len, "true");

    s->out.len = 0;
    size_t work_len = s->work.len;
    rc = json ? query_json(req, s) : query_text(req, &s->out);
    s->work.len = work_len;
    if (rc != JSON_OK) {
        fail(res, rc, json ? "Bad Request: malformed percent escape or "
                             "non-UTF-8 query\n"
                           : "Bad Request: malformed percent escape\n");
        return;
    }
    from_scratch(res, s, json ? "application/json" : "text/plain");
}

/* Room for ",\"bytes\":" + 20 digits + "}". */
#define TAIL_MAX 32

void shootout_post_something(const route_request *req, route_response *res) {
    static const char head[] = "{\"received\":";
    route_scratch *s = req->scratch;
    int rc;

    if (!s) {
        fail(res, JSON_NOMEM, NULL);
        return;
    }
    s->out.len = 0;
    if (sbuf_put(&s->out, head, sizeof(head) - 1) < 0) rc = JSON_NOMEM;
    else rc = json_reserialize(req->body, req->body_len, &s->out, &s->work);
    if (rc == JSON_OK && sbuf_reserve(&s->out, TAIL_MAX) < 0) rc = JSON_NOMEM;
    if (rc != JSON_OK) {
        fail(res, rc, "Bad Request: invalid JSON\n");
        return;
    }

    char *o = s->out.data + s->out.len;
    memcpy(o, ",\"bytes\":", 9);
    o += 9;
    o += fmt_u64(o, req->body_len);
    *o++ = '}';
    s->out.len = (size_t)(o - s->out.data);
    from_scratch(res, s, "application/json");
}
