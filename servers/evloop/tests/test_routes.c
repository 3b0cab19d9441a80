/* Route tests: the size parameter's edge cases and the route table (the
 * generated /something answers are in test_query.c and test_json.c). */
#include <string.h>

#include "app/app.h"
#include "http/routes.h"
#include "test.h"

typedef struct size_case {
    const char *query; /* NULL: no '?' at all */
    int ok;
    size_t size;
} size_case;

static const size_case sizes[] = {
    {NULL, 1, 64},
    {"", 1, 64},
    {"size=0", 1, 0},
    {"size=1", 1, 1},
    {"size=10", 1, 10},
    {"size=007", 1, 7},
    {"size=1048576", 1, 1048576},
    {"size=1048577", 0, 0},
    {"size=99999999999999999999999999", 0, 0},
    {"size=", 0, 0},
    {"size", 0, 0},
    {"size=-1", 0, 0},
    {"size=+1", 0, 0},
    {"size=abc", 0, 0},
    {"size=10abc", 0, 0},
    {"size=1 ", 0, 0},
    {"size=0x10", 0, 0},
    {"size=1.5", 0, 0},
    {"size=%31", 0, 0},
    {"a=1&size=5", 1, 5},
    {"size=5&a=1", 1, 5},
    {"size=5&size=x", 1, 5},
    {"a=b&c", 1, 64},
    {"sizes=5", 1, 64},
    {"xsize=5", 1, 64},
    {"SIZE=5", 1, 64},
    {"&&size=3&&", 1, 3},
};

static void run_size(const size_case *sc) {
    T_BEGIN;
    size_t n = 12345;
    int r = app_parse_size(sc->query, sc->query ? strlen(sc->query) : 0, &n);
    T_CHECK((r == 0) == sc->ok);
    if (sc->ok) T_CHECK(n == sc->size);
    T_END("size", sc->query ? sc->query : "(no query)");
}

typedef struct route_case {
    const char *method, *path, *query;
    int status;
    const char *ctype, *allow, *body;
    int echo;
} route_case;

static const route_case routes[] = {
    {"GET", "/ping", NULL, 200, "text/plain", NULL, "pong", 0},
    {"HEAD", "/ping", NULL, 200, "text/plain", NULL, "pong", 0},
    {"POST", "/ping", NULL, 405, "text/plain", "GET, HEAD", NULL, 0},
    {"DELETE", "/ping", NULL, 405, "text/plain", "GET, HEAD", NULL, 0},
    {"GET", "/echo", NULL, 200, "text/plain", NULL, NULL, 0},
    {"GET", "/echo", "size=3", 200, "text/plain", NULL, "xxx", 0},
    {"GET", "/echo", "size=-3", 400, "text/plain", NULL, NULL, 0},
    {"POST", "/echo", NULL, 200, "application/octet-stream", NULL, NULL, 1},
    {"PUT", "/echo", NULL, 405, "text/plain", "GET, HEAD, POST", NULL, 0},
    {"get", "/ping", NULL, 405, "text/plain", "GET, HEAD", NULL, 0},
    {"GET", "/nope", NULL, 404, "text/plain", NULL, NULL, 0},
    {"GET", "/ping/", NULL, 404, "text/plain", NULL, NULL, 0},
    /* The shoot-out: GET/HEAD on "/", and anything else there is 404. */
    {"GET", "/", NULL, 200, "text/plain", NULL, "Hello, World!", 0},
    {"HEAD", "/", NULL, 200, "text/plain", NULL, "Hello, World!", 0},
    {"GET", "/", "a=1", 200, "text/plain", NULL, "Hello, World!", 0},
    {"POST", "/", NULL, 404, "text/plain", NULL, NULL, 0},
    {"DELETE", "/", NULL, 404, "text/plain", NULL, NULL, 0},
    {"PUT", "/something", NULL, 404, "text/plain", NULL, NULL, 0},
    {"DELETE", "/something", NULL, 404, "text/plain", NULL, NULL, 0},
    {"GET", "/something/else", NULL, 404, "text/plain", NULL, NULL, 0},
    {"GET", "/somethingelse", NULL, 404, "text/plain", NULL, NULL, 0},
    {"GET", "/something", "foo=bar", 200, "text/plain", NULL, "foo=bar\n", 0},
    {"HEAD", "/something", "foo=bar", 200, "text/plain", NULL, "foo=bar\n",
     0},
    {"POST", "/something", NULL, 400, "text/plain", NULL, NULL, 0},
    {"GET", "/PING", NULL, 404, "text/plain", NULL, NULL, 0},
};

static void run_route(const route_case *rc, route_scratch *s) {
    T_BEGIN;
    char name[96];
    route_request rq = {rc->method, strlen(rc->method), rc->path,
                        strlen(rc->path), rc->query,
                        rc->query ? strlen(rc->query) : 0, "abc", 3, s};
    route_response rs;
    routes_handle(&rq, &rs);
    T_CHECK(rs.status == rc->status);
    T_CHECK(rs.content_type && strcmp(rs.content_type, rc->ctype) == 0);
    T_CHECK((rs.allow == NULL) == (rc->allow == NULL));
    if (rc->allow && rs.allow) T_CHECK(strcmp(rs.allow, rc->allow) == 0);
    T_CHECK(rs.body_is_request == rc->echo);
    if (rc->body) {
        T_CHECK(rs.body_len == strlen(rc->body));
        T_CHECK(memcmp(rs.body, rc->body, rs.body_len) == 0);
    }
    snprintf(name, sizeof(name), "%s %s%s%s", rc->method, rc->path,
             rc->query ? "?" : "", rc->query ? rc->query : "");
    T_END("routes", name);
    route_scratch_reset(s, 4096);
}

void test_routes(void) {
    app_init();
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        run_size(&sizes[i]);
    route_scratch s = {0};
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        run_route(&routes[i], &s);
    route_scratch_free(&s);
}
