/* Parser tests. Every input is parsed whole and as every prefix (the
 * "need more" protocol: a client delivering it byte by byte, or split at any
 * offset); the first definitive answer must equal the whole-input answer. */
#include <stdlib.h>
#include <string.h>

#include "http1/http1_parser.h"
#include "test.h"

#define SUITE "parser"

static int same_span(const char *a, const char *abase, size_t alen,
                     const char *b, const char *bbase, size_t blen) {
    if (alen != blen || (a == NULL) != (b == NULL)) return 0;
    return a == NULL || a - abase == b - bbase;
}

static int req_equal(const h1_request *a, const char *ab, const h1_request *b,
                     const char *bb) {
    if (!same_span(a->method, ab, a->method_len, b->method, bb, b->method_len) ||
        !same_span(a->target, ab, a->target_len, b->target, bb, b->target_len) ||
        !same_span(a->path, ab, a->path_len, b->path, bb, b->path_len) ||
        !same_span(a->query, ab, a->query_len, b->query, bb, b->query_len) ||
        a->major != b->major || a->minor != b->minor ||
        a->num_headers != b->num_headers)
        return 0;
    for (size_t i = 0; i < a->num_headers; i++) {
        const h1_header *x = &a->headers[i], *y = &b->headers[i];
        if (!same_span(x->name, ab, x->name_len, y->name, bb, y->name_len) ||
            !same_span(x->value, ab, x->value_len, y->value, bb, y->value_len))
            return 0;
    }
    return 1;
}

/* Parses buf whole, then every prefix from an exactly-sized heap copy (so
 * ASan sees any read past the end). Returns the whole-input result in *out;
 * *why is set when the incremental answers disagree with it. */
static ssize_t parse_every_way(const char *buf, size_t len, h1_request *out,
                               const char **why) {
    static h1_request tmp;
    ssize_t whole = h1_parse_request(buf, len, out);
    int decided = 0;

    *why = NULL;
    for (size_t k = 0; k <= len; k++) {
        char *copy = malloc(k ? k : 1);
        memcpy(copy, buf, k);
        ssize_t r = h1_parse_request(copy, k, &tmp);
        if (r == H1_PARSE_NEED_MORE) {
            if (decided) *why = "need-more after a definitive answer";
        } else if (r != whole) {
            *why = "a prefix gave a different answer";
        } else if (r > 0 && !req_equal(&tmp, copy, out, buf)) {
            *why = "a prefix parsed differently";
        } else if (r > 0 && (size_t)r > k) {
            *why = "consumed more than given";
        } else {
            decided = 1;
        }
        free(copy);
        if (*why) break;
    }
    if (!*why && whole != H1_PARSE_NEED_MORE && !decided)
        *why = "no prefix reached the answer";
    return whole;
}

typedef struct valid_case {
    const char *name;
    const char *in;
    size_t extra; /* bytes after the head (body / next request) */
    const char *method, *path, *query;
    int major, minor;
    size_t nheaders;
    const char *hname, *hvalue; /* last header, if any */
} valid_case;

static const valid_case valid[] = {
    {"minimal", "GET / HTTP/1.1\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 0, NULL, NULL},
    {"host", "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n", 0, "GET", "/ping", NULL, 1, 1, 1, "Host", "a"},
    {"query", "GET /echo?size=10 HTTP/1.0\r\n\r\n", 0, "GET", "/echo", "size=10", 1, 0, 0, NULL, NULL},
    {"empty query", "GET /x? HTTP/1.1\r\n\r\n", 0, "GET", "/x", "", 1, 1, 0, NULL, NULL},
    {"two '?'", "GET /x?a?b HTTP/1.1\r\n\r\n", 0, "GET", "/x", "a?b", 1, 1, 0, NULL, NULL},
    {"body follows", "POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 5, "POST", "/echo", NULL, 1, 1, 1, "Content-Length", "5"},
    {"pipelined next", "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", 19, "GET", "/a", NULL, 1, 1, 0, NULL, NULL},
    {"leading CRLFs", "\r\n\r\nGET / HTTP/1.1\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 0, NULL, NULL},
    {"OWS trimmed", "GET / HTTP/1.1\r\nX:  a b \t\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X", "a b"},
    {"empty value", "GET / HTTP/1.1\r\nX:\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X", ""},
    {"only OWS value", "GET / HTTP/1.1\r\nX: \t \r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X", ""},
    {"obs-text value", "GET / HTTP/1.1\r\nX: \xff\xfe\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X", "\xff\xfe"},
    {"tab inside value", "GET / HTTP/1.1\r\nX: a\tb\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X", "a\tb"},
    {"tchar method", "M-SEARCH * HTTP/1.1\r\n\r\n", 0, "M-SEARCH", "*", NULL, 1, 1, 0, NULL, NULL},
    {"odd tchar name", "GET / HTTP/1.1\r\nX-a_b!#$%&'*+.^`|~9: v\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "X-a_b!#$%&'*+.^`|~9", "v"},
    {"absolute-form", "GET http://h/p?q=1 HTTP/1.1\r\n\r\n", 0, "GET", "http://h/p", "q=1", 1, 1, 0, NULL, NULL},
    {"version 2.0 parses", "GET / HTTP/2.0\r\n\r\n", 0, "GET", "/", NULL, 2, 0, 0, NULL, NULL},
    {"version 1.2 parses", "GET / HTTP/1.2\r\n\r\n", 0, "GET", "/", NULL, 1, 2, 0, NULL, NULL},
    {"colon in value", "GET / HTTP/1.1\r\nHost: a:80\r\n\r\n", 0, "GET", "/", NULL, 1, 1, 1, "Host", "a:80"},
    {"several headers", "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n", 0, "POST", "/echo", NULL, 1, 1, 3, "Expect", "100-continue"},
    {"h2 preface head", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 6, "PRI", "*", NULL, 2, 0, 0, NULL, NULL},
};

static int span_is(const char *p, size_t n, const char *s) {
    if (!s) return p == NULL;
    return p && n == strlen(s) && memcmp(p, s, n) == 0;
}

static void run_valid(const valid_case *vc) {
    T_BEGIN;
    h1_request req;
    const char *why;
    size_t len = strlen(vc->in);
    ssize_t r = parse_every_way(vc->in, len, &req, &why);
    T_CHECK(r == (ssize_t)(len - vc->extra));
    if (r > 0) {
        T_CHECK(span_is(req.method, req.method_len, vc->method));
        T_CHECK(span_is(req.path, req.path_len, vc->path));
        T_CHECK(span_is(req.query, req.query_len, vc->query));
        T_CHECK(req.major == vc->major && req.minor == vc->minor);
        T_CHECK(req.num_headers == vc->nheaders);
        if (vc->hname && req.num_headers) {
            const h1_header *h = &req.headers[req.num_headers - 1];
            T_CHECK(span_is(h->name, h->name_len, vc->hname));
            T_CHECK(span_is(h->value, h->value_len, vc->hvalue));
        }
    }
    if (why) t_why = why;
    T_END(SUITE, vc->name);
}

typedef struct bad_case {
    const char *name;
    const char *in;
    size_t len;
} bad_case;

#define S(lit) lit, sizeof(lit) - 1

static const bad_case bad[] = {
    {"double space", S("GET  / HTTP/1.1\r\n\r\n")},
    {"leading space", S(" GET / HTTP/1.1\r\n\r\n")},
    {"empty method", S("/ HTTP/1.1\r\n\r\n")},
    {"bad method char", S("G(T / HTTP/1.1\r\n\r\n")},
    {"method with @", S("GE@ / HTTP/1.1\r\n\r\n")},
    {"missing target", S("GET HTTP/1.1\r\n\r\n")},
    {"tab in target", S("GET /a\tb HTTP/1.1\r\n\r\n")},
    {"DEL in target", S("GET /a\x7f HTTP/1.1\r\n\r\n")},
    {"NUL in target", S("GET /a\0b HTTP/1.1\r\n\r\n")},
    {"NUL in method", S("G\0T / HTTP/1.1\r\n\r\n")},
    {"lowercase proto", S("GET / http/1.1\r\n\r\n")},
    {"HTTX", S("GET / HTTX/1.1\r\n\r\n")},
    {"version letter", S("GET / HTTP/1.a\r\n\r\n")},
    {"version two digits", S("GET / HTTP/11.1\r\n\r\n")},
    {"version no dot", S("GET / HTTP/1-1\r\n\r\n")},
    {"trailing space", S("GET / HTTP/1.1 \r\n\r\n")},
    {"bare LF request line", S("GET / HTTP/1.1\n\r\n")},
    {"bare LF end", S("GET / HTTP/1.1\r\nA: b\n\n")},
    {"bare CR request line", S("GET / HTTP/1.1\rX\r\n\r\n")},
    {"bare CR in value", S("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n")},
    {"bare CR end", S("GET / HTTP/1.1\r\n\rX")},
    {"space before colon", S("GET / HTTP/1.1\r\nHost : a\r\n\r\n")},
    {"tab before colon", S("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n")},
    {"space in name", S("GET / HTTP/1.1\r\nFoo Bar: a\r\n\r\n")},
    {"empty name", S("GET / HTTP/1.1\r\n: a\r\n\r\n")},
    {"no colon", S("GET / HTTP/1.1\r\nFoo\r\n\r\n")},
    {"obs-fold SP", S("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n")},
    {"obs-fold HTAB", S("GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n")},
    {"first line folded", S("GET / HTTP/1.1\r\n A: b\r\n\r\n")},
    {"NUL in value", S("GET / HTTP/1.1\r\nA: b\0c\r\n\r\n")},
    {"NUL in name", S("GET / HTTP/1.1\r\nA\0: b\r\n\r\n")},
    {"CTL in value", S("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n")},
    {"DEL in value", S("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n")},
    {"LF in value", S("GET / HTTP/1.1\r\nA: b\nc\r\n\r\n")},
    {"non-tchar name", S("GET / HTTP/1.1\r\nA(b): c\r\n\r\n")},
    {"8-bit name", S("GET / HTTP/1.1\r\n\xc3\xa9: c\r\n\r\n")},
    {"CR CR prefix", S("\r\rGET / HTTP/1.1\r\n\r\n")},
    {"binary junk", S("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")},
    {"only spaces", S("     ")},
};

static void run_bad(const bad_case *bc) {
    T_BEGIN;
    h1_request req;
    const char *why;
    size_t len = bc->len;
    ssize_t r = parse_every_way(bc->in, len, &req, &why);
    T_CHECK(r == H1_PARSE_ERROR);
    if (why) t_why = why;
    T_END(SUITE, bc->name);
}

static void run_need_more(const char *name, const char *in) {
    T_BEGIN;
    h1_request req;
    const char *why;
    ssize_t r = parse_every_way(in, strlen(in), &req, &why);
    T_CHECK(r == H1_PARSE_NEED_MORE);
    if (why) t_why = why;
    T_END(SUITE, name);
}

static void run_header_count(size_t n) {
    T_BEGIN;
    char *buf = malloc(32 + n * 16), *p = buf;
    h1_request req;
    const char *why;
    char name[64];
    p += sprintf(p, "GET / HTTP/1.1\r\n");
    for (size_t i = 0; i < n; i++) p += sprintf(p, "H%zu: v%zu\r\n", i, i);
    p += sprintf(p, "\r\n");
    ssize_t r = parse_every_way(buf, (size_t)(p - buf), &req, &why);
    if (n <= H1_MAX_HEADERS) {
        T_CHECK(r == p - buf);
        T_CHECK(req.num_headers == n);
    } else {
        T_CHECK(r == H1_PARSE_ERROR);
    }
    if (why) t_why = why;
    free(buf);
    snprintf(name, sizeof(name), "%zu headers", n);
    T_END(SUITE, name);
}

static void run_long_value(void) {
    T_BEGIN;
    size_t vlen = 8000;
    char *buf = malloc(vlen + 64), *p = buf;
    h1_request req;
    const char *why;
    p += sprintf(p, "GET / HTTP/1.1\r\nBig: ");
    memset(p, 'v', vlen);
    p += vlen;
    p += sprintf(p, "\r\n\r\n");
    ssize_t r = parse_every_way(buf, (size_t)(p - buf), &req, &why);
    T_CHECK(r == p - buf);
    T_CHECK(req.num_headers == 1 && req.headers[0].value_len == vlen);
    if (why) t_why = why;
    free(buf);
    T_END(SUITE, "8000-byte value");
}

/* ---- semantics ---- */

typedef struct sem_case {
    const char *name;
    const char *headers; /* lines, each ending in \r\n */
    int result;
    int has_cl;
    uint64_t cl;
    int chunked, close, keep_alive, upgrade, expect;
} sem_case;

static const sem_case sems[] = {
    {"no framing", "", H1_SEM_OK, 0, 0, 0, 0, 0, 0, 0},
    {"CL 5", "Content-Length: 5\r\n", H1_SEM_OK, 1, 5, 0, 0, 0, 0, 0},
    {"CL 0", "content-length: 0\r\n", H1_SEM_OK, 1, 0, 0, 0, 0, 0, 0},
    {"CL max u64", "Content-Length: 18446744073709551615\r\n", H1_SEM_OK, 1, UINT64_MAX, 0, 0, 0, 0, 0},
    {"CL overflow", "Content-Length: 18446744073709551616\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL huge", "Content-Length: 99999999999999999999999\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL empty", "Content-Length:\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL letters", "Content-Length: 5a\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL negative", "Content-Length: -1\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL plus", "Content-Length: +5\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL inner space", "Content-Length: 1 2\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL list", "Content-Length: 5, 5\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL dup same", "Content-Length: 5\r\nContent-Length: 5\r\n", H1_SEM_OK, 1, 5, 0, 0, 0, 0, 0},
    {"CL dup differ", "Content-Length: 5\r\nContent-Length: 6\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"TE chunked", "Transfer-Encoding: chunked\r\n", H1_SEM_OK, 0, 0, 1, 0, 0, 0, 0},
    {"TE Chunked case", "transfer-encoding: ChUnKeD\r\n", H1_SEM_OK, 0, 0, 1, 0, 0, 0, 0},
    {"TE gzip", "Transfer-Encoding: gzip\r\n", H1_SEM_NOT_IMPLEMENTED, 0, 0, 0, 0, 0, 0, 0},
    {"TE gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n", H1_SEM_NOT_IMPLEMENTED, 0, 0, 0, 0, 0, 0, 0},
    {"TE chunked twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", H1_SEM_NOT_IMPLEMENTED, 0, 0, 0, 0, 0, 0, 0},
    {"TE empty", "Transfer-Encoding:\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"CL + TE", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"TE + CL", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", H1_SEM_BAD_REQUEST, 0, 0, 0, 0, 0, 0, 0},
    {"Connection close", "Connection: close\r\n", H1_SEM_OK, 0, 0, 0, 1, 0, 0, 0},
    {"Connection Keep-Alive", "Connection: Keep-Alive\r\n", H1_SEM_OK, 0, 0, 0, 0, 1, 0, 0},
    {"Connection list", "Connection: foo,  CLOSE , upgrade\r\n", H1_SEM_OK, 0, 0, 0, 1, 0, 1, 0},
    {"Connection closed (no)", "Connection: closed\r\n", H1_SEM_OK, 0, 0, 0, 0, 0, 0, 0},
    {"Expect", "Expect: 100-Continue\r\n", H1_SEM_OK, 0, 0, 0, 0, 0, 0, 1},
    {"Expect other", "Expect: 200-ok\r\n", H1_SEM_OK, 0, 0, 0, 0, 0, 0, 0},
};

static void run_sem(const sem_case *sc) {
    T_BEGIN;
    char buf[512];
    h1_request req;
    h1_semantics sem;
    int n = snprintf(buf, sizeof(buf), "POST / HTTP/1.1\r\nHost: t\r\n%s\r\n", sc->headers);
    ssize_t r = h1_parse_request(buf, (size_t)n, &req);
    T_CHECK(r == n);
    if (r == n) {
        int s = h1_request_semantics(&req, &sem);
        T_CHECK(s == sc->result);
        if (s == H1_SEM_OK) {
            T_CHECK(sem.has_content_length == sc->has_cl);
            T_CHECK(sem.content_length == sc->cl);
            T_CHECK(sem.chunked == sc->chunked);
            T_CHECK(sem.conn_close == sc->close);
            T_CHECK(sem.conn_keep_alive == sc->keep_alive);
            T_CHECK(sem.conn_upgrade == sc->upgrade);
            T_CHECK(sem.expect_continue == sc->expect);
        }
    }
    T_END("semantics", sc->name);
}

/* Host: exactly one on HTTP/1.1, at most one on HTTP/1.0 (RFC 9112 3.2). */
static void run_host(const char *name, const char *head, int want) {
    T_BEGIN;
    h1_request req;
    h1_semantics sem;
    size_t n = strlen(head);
    T_CHECK(h1_parse_request(head, n, &req) == (ssize_t)n);
    T_CHECK(h1_request_semantics(&req, &sem) == want);
    T_END("host", name);
}

static void test_tokens(void) {
    T_BEGIN;
    T_CHECK(h1_has_token("h2c", 3, "h2c"));
    T_CHECK(h1_has_token("H2C", 3, "h2c"));
    T_CHECK(h1_has_token("websocket, h2c", 14, "h2c"));
    T_CHECK(h1_has_token(" h2c ,foo", 9, "h2c"));
    T_CHECK(h1_has_token("a,\th2c\t", 7, "h2c"));
    T_CHECK(!h1_has_token("h2", 2, "h2c"));
    T_CHECK(!h1_has_token("h2c2", 4, "h2c"));
    T_CHECK(!h1_has_token("xh2c", 4, "h2c"));
    T_CHECK(!h1_has_token("", 0, "h2c"));
    T_CHECK(!h1_has_token("h2 c", 4, "h2c"));
    /* The length bounds the scan, not a NUL. */
    T_CHECK(!h1_has_token("foo, h2c", 4, "h2c"));
    T_END("parser", "token lists (Upgrade, Connection)");
}

void test_parser(void) {
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        run_valid(&valid[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        run_bad(&bad[i]);
    run_need_more("empty input", "");
    run_need_more("request line only", "GET / HTTP/1.1\r\n");
    run_need_more("missing final LF", "GET / HTTP/1.1\r\nA: b\r\n\r");
    run_need_more("CRLF only", "\r\n");
    run_header_count(0);
    run_header_count(1);
    run_header_count(H1_MAX_HEADERS);
    run_header_count(H1_MAX_HEADERS + 1);
    run_long_value();
    for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++)
        run_sem(&sems[i]);
    run_host("1.1 with Host", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", H1_SEM_OK);
    run_host("1.1 without Host", "GET / HTTP/1.1\r\nX: a\r\n\r\n", H1_SEM_BAD_REQUEST);
    run_host("1.1 two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", H1_SEM_BAD_REQUEST);
    run_host("1.0 without Host", "GET / HTTP/1.0\r\n\r\n", H1_SEM_OK);
    run_host("1.0 two Hosts", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", H1_SEM_BAD_REQUEST);
    test_tokens();
}
