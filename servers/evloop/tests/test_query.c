/* Query tests: splitting into parameters, percent-decoding, and the two
 * answers of GET /something built from them. */
#include <string.h>

#include "app/query.h"
#include "http/routes.h"
#include "test.h"

/* Parameters of a query, rendered "name|value;" per parameter (raw). */
static void split(const char *q, char *out, size_t cap) {
    query_iter it;
    query_param qp;
    size_t n = 0;
    out[0] = '\0';
    query_iter_init(&it, q, q ? strlen(q) : 0);
    while (query_next(&it, &qp))
        n += (size_t)snprintf(out + n, cap - n, "%.*s|%.*s;",
                              (int)qp.name_len, qp.name, (int)qp.value_len,
                              qp.value);
}

static const struct {
    const char *q, *params;
} splits[] = {
    {NULL, ""},
    {"", ""},
    {"a=1", "a|1;"},
    {"a=1&b=2", "a|1;b|2;"},
    {"a", "a|;"},
    {"a=", "a|;"},
    {"=v", "|v;"},
    {"=", "|;"},
    {"&&a=1&&b&", "a|1;b|;"},
    {"&", ""},
    {"a=b=c", "a|b=c;"},
    {"a=%26&b=%3D", "a|%26;b|%3D;"},
};

static const struct {
    const char *in, *out; /* out NULL: malformed */
} decodes[] = {
    {"", ""},
    {"plain", "plain"},
    {"x+y", "x y"},
    {"x%20y", "x y"},
    {"%2B", "+"},
    {"%2b%2F", "+/"},
    {"%E2%9C%93", "\xE2\x9C\x93"},
    {"%e2%9c%93", "\xE2\x9C\x93"},
    {"%25", "%"},
    {"%2525", "%25"},
    {"++", "  "},
    {"%", NULL},
    {"%2", NULL},
    {"a%", NULL},
    {"%zz", NULL},
    {"%2g", NULL},
    {"%g2", NULL},
    {"%%41", NULL},
    {"ok%4", NULL},
};

static void run_decode(const char *in, const char *want) {
    T_BEGIN;
    char buf[64];
    ssize_t n = query_decode(in, strlen(in), buf);
    if (!want) T_CHECK(n == -1);
    else T_CHECK(n == (ssize_t)strlen(want) && memcmp(buf, want, (size_t)n) == 0);
    /* query_decoded_eq agrees with query_decode. */
    if (want) T_CHECK(query_decoded_eq(in, strlen(in), want));
    else T_CHECK(!query_decoded_eq(in, strlen(in), ""));
    T_END("query decode", in);
}

static void eq_cases(void) {
    T_BEGIN;
    T_CHECK(query_decoded_eq("json", 4, "json"));
    T_CHECK(query_decoded_eq("%6Ason", 6, "json"));
    T_CHECK(query_decoded_eq("tru%65", 6, "true"));
    T_CHECK(!query_decoded_eq("jso", 3, "json"));
    T_CHECK(!query_decoded_eq("jsonx", 5, "json"));
    T_CHECK(!query_decoded_eq("JSON", 4, "json"));
    T_CHECK(!query_decoded_eq("json%", 5, "json"));
    T_CHECK(query_decoded_eq("", 0, ""));
    T_CHECK(query_decoded_eq("a+b", 3, "a b"));
    T_END("query decode", "decoded_eq");
}

/* GET /something through routes_handle, with a scratch like a connection's. */
typedef struct get_case {
    const char *query;
    int status;
    const char *ctype, *body; /* body NULL: not checked */
} get_case;

static const get_case gets[] = {
    {NULL, 200, "text/plain", ""},
    {"", 200, "text/plain", ""},
    {"foo=bar", 200, "text/plain", "foo=bar\n"},
    {"a=1&b=x%20y", 200, "text/plain", "a=1\nb=x y\n"},
    {"a=1&b=x%20y&c=%E2%9C%93", 200, "text/plain",
     "a=1\nb=x y\nc=\xE2\x9C\x93\n"},
    {"a=1&a=2&plus=x+y", 200, "text/plain", "a=1\na=2\nplus=x y\n"},
    {"flag&&=v", 200, "text/plain", "flag=\n=v\n"},
    {"json=false", 200, "text/plain", "json=false\n"},
    {"json=TRUE", 200, "text/plain", "json=TRUE\n"},
    {"json", 200, "text/plain", "json=\n"},
    {"bin=%FF%00", 200, "text/plain", NULL}, /* bytes pass through */
    {"a=%zz", 400, "text/plain", NULL},
    {"a%=1", 400, "text/plain", NULL},
    {"json=true", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\"}}"},
    {"json=true&x=1", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\",\"x\":\"1\"}}"},
    {"x=1&json=true", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"x\":\"1\",\"json\":\"true\"}}"},
    {"%6Ason=tru%65", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\"}}"},
    /* A repeated name: the last value wins. */
    {"json=true&x=1&name=Zo%C3%AB&x=2", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\","
     "\"name\":\"Zo\xC3\xAB\",\"x\":\"2\"}}"},
    {"json=true&json=false", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"false\"}}"},
    /* Escaping: quote, backslash, control characters, '/' as is. */
    {"json=true&q=%22%5C%0A%01/%7F", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\","
     "\"q\":\"\\\"\\\\\\n\\u0001/\x7F\"}}"},
    {"json=true&k", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\",\"k\":\"\"}}"},
    {"json=true&c=%E2%9C%93", 200, "application/json",
     "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\","
     "\"c\":\"\xE2\x9C\x93\"}}"},
    /* Not UTF-8 once decoded: JSON cannot carry it. */
    {"json=true&b=%FF", 400, "text/plain", NULL},
    {"json=true&b=%C0%80", 400, "text/plain", NULL},
    {"json=true&b=%ED%A0%80", 400, "text/plain", NULL},
    {"json=true&%E2%9C=1", 400, "text/plain", NULL},
    {"json=true&b=%zz", 400, "text/plain", NULL},
};

static void run_get(const get_case *gc, route_scratch *s) {
    T_BEGIN;
    route_request rq = {"GET", 3, "/something", 10, gc->query,
                        gc->query ? strlen(gc->query) : 0, NULL, 0, s};
    route_response rs;
    routes_handle(&rq, &rs);
    T_CHECK(rs.status == gc->status);
    T_CHECK(strcmp(rs.content_type, gc->ctype) == 0);
    T_CHECK(rs.body_in_scratch == (gc->status == 200));
    if (gc->body) {
        T_CHECK(rs.body_len == strlen(gc->body));
        T_CHECK(rs.body_len == 0 || memcmp(rs.body, gc->body, rs.body_len) == 0);
    }
    T_END("get /something", gc->query ? gc->query : "(no query)");
    route_scratch_reset(s, 4096);
}

/* Many parameters take the hash-table path of duplicate removal. */
static void many_params(route_scratch *s) {
    T_BEGIN;
    char q[4096], want[8192];
    size_t qn = 0, wn = 0;
    qn += (size_t)snprintf(q + qn, sizeof(q) - qn, "json=true");
    for (int i = 0; i < 100; i++)
        qn += (size_t)snprintf(q + qn, sizeof(q) - qn, "&k%d=%d", i % 40, i);
    wn += (size_t)snprintf(want + wn, sizeof(want) - wn,
                           "{\"message\":\"Hello, World!\",\"query\":"
                           "{\"json\":\"true\"");
    /* Each name survives once, at its last occurrence (i = 60..99). */
    for (int i = 60; i < 100; i++)
        wn += (size_t)snprintf(want + wn, sizeof(want) - wn, ",\"k%d\":\"%d\"",
                               i % 40, i);
    wn += (size_t)snprintf(want + wn, sizeof(want) - wn, "}}");
    route_request rq = {"GET", 3, "/something", 10, q, qn, NULL, 0, s};
    route_response rs;
    routes_handle(&rq, &rs);
    T_CHECK(rs.status == 200);
    T_CHECK(rs.body_len == wn && memcmp(rs.body, want, wn) == 0);
    T_END("get /something", "100 parameters, 40 names");
    route_scratch_reset(s, 4096);
}

static void no_scratch(void) {
    T_BEGIN;
    route_request rq = {"GET", 3, "/something", 10, "a=1", 3, NULL, 0, NULL};
    route_response rs;
    routes_handle(&rq, &rs);
    T_CHECK(rs.status == 500);
    T_END("get /something", "no scratch: 500");
}

void test_query(void) {
    char buf[256];
    route_scratch s = {0};
    for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
        T_BEGIN;
        split(splits[i].q, buf, sizeof(buf));
        T_CHECK(strcmp(buf, splits[i].params) == 0);
        T_END("query split", splits[i].q ? splits[i].q : "(null)");
    }
    for (size_t i = 0; i < sizeof(decodes) / sizeof(decodes[0]); i++)
        run_decode(decodes[i].in, decodes[i].out);
    eq_cases();
    for (size_t i = 0; i < sizeof(gets) / sizeof(gets[0]); i++)
        run_get(&gets[i], &s);
    many_params(&s);
    no_scratch();
    route_scratch_free(&s);
}
