/* h2_head: a request's fields against RFC 9113 8.2 and 8.3, one at a time,
 * as the codec will feed them. */
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "http2/h2_head.h"
#include "test.h"

/* Feeds "name", "value" pairs (NULL-terminated); returns the first non-OK
 * result, or h2_head_finish's. */
static int run(int trailers, const char *const *kv, h2_head *out) {
    h2_head h;
    h2_head_init(&h, trailers);
    int r = H2H_OK;
    for (; *kv && r == H2H_OK; kv += 2) {
        /* As the decoder sends a literal: syntax judged, no memo. */
        hpack_field f = {(const uint8_t *)kv[0], strlen(kv[0]),
                         (const uint8_t *)kv[1], strlen(kv[1]), 0, NULL};
        f.syntax_ok = nghttp2_check_header_name(f.name, f.nlen) &&
                      nghttp2_check_header_value_rfc9113(f.value, f.vlen);
        r = h2_head_field(&h, &f);
    }
    if (r == H2H_OK) r = h2_head_finish(&h);
    if (out) *out = h;
    else h2_head_free(&h);
    return r;
}

#define OKREQ ":method", "GET", ":scheme", "http", ":path", "/ping"

static void test_valid(void) {
    T_BEGIN;
    static const char *const a[] = {OKREQ, ":authority", "x", "user-agent", "h2load",
                                    "te", "trailers", "content-length", "12",
                                    "content-length", "12", NULL};
    h2_head h;
    T_CHECK(run(0, a, &h) == H2H_OK);
    size_t n;
    const char *m = h2_head_method(&h, &n);
    T_CHECK(n == 3 && !memcmp(m, "GET", 3));
    const char *p = h2_head_path(&h, &n);
    T_CHECK(n == 5 && !memcmp(p, "/ping", 5));
    T_CHECK(h.has_clen && h.clen == 12);
    h2_head_free(&h);
    static const char *const t[] = {"x-checksum", "abc", NULL};
    T_CHECK(run(1, t, NULL) == H2H_OK);
    T_END("h2_head", "a request and a trailer block that keep the rules");
}

static void test_malformed(void) {
    T_BEGIN;
    static const char *const cases[][12] = {
        {":method", "GET", ":scheme", "http", NULL},                  /* no :path */
        {":method", "GET", ":path", "/", NULL},                       /* no :scheme */
        {":scheme", "http", ":path", "/", NULL},                      /* no :method */
        {OKREQ, ":path", "/again", NULL},                             /* duplicate */
        {":method", "GET", "accept", "*/*", ":scheme", "http", ":path", "/", NULL}, /* pseudo after regular */
        {OKREQ, ":status", "200", NULL},                              /* response pseudo */
        {OKREQ, ":foo", "x", NULL},                                   /* unknown pseudo */
        {":method", "GET", ":scheme", "http", ":path", "", NULL},     /* empty :path */
        {OKREQ, "Accept", "x", NULL},                                 /* uppercase name */
        {OKREQ, "connection", "keep-alive", NULL},
        {OKREQ, "te", "gzip", NULL},
        {OKREQ, "transfer-encoding", "chunked", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        T_CHECK(run(0, cases[i], NULL) == H2H_MALFORMED);
    static const char *const more[][12] = {
        {OKREQ, "upgrade", "h2c", NULL},
        {OKREQ, "keep-alive", "5", NULL},
        {OKREQ, "proxy-connection", "x", NULL},
        {OKREQ, "content-length", "1x", NULL},
        {OKREQ, "content-length", "1", "content-length", "2", NULL},
        {OKREQ, "x", "bad\nvalue", NULL},
        {":method", "CONNECT", ":scheme", "http", ":path", "/", NULL},
    };
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
        T_CHECK(run(0, more[i], NULL) == H2H_MALFORMED);
    static const char *const trailer_pseudo[] = {":path", "/", NULL};
    T_CHECK(run(1, trailer_pseudo, NULL) == H2H_MALFORMED);
    T_END("h2_head", "RFC 9113 8.2/8.3 violations are malformed (stream error)");
}

static void test_long_path(void) {
    T_BEGIN;
    char *path = malloc(5000);
    path[0] = '/';
    memset(path + 1, 'a', 4998);
    path[4999] = '\0';
    const char *kv[] = {":method", "GET", ":scheme", "http", ":path", path, NULL};
    h2_head h;
    T_CHECK(run(0, kv, &h) == H2H_OK);
    size_t n;
    const char *p = h2_head_path(&h, &n);
    T_CHECK(n == 4999 && !memcmp(p, path, n) && h.heap != NULL);
    h2_head_free(&h);
    free(path);
    T_END("h2_head", "a path longer than the inline buffer is kept whole");
}

void test_h2_head(void) {
    test_valid();
    test_malformed();
    test_long_path();
}
