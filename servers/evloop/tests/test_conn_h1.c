/* conn + h1 through the in-memory transport (memconn.h): whole HTTP/1.x
 * connections of the real server, asserted on the bytes the peer receives
 * and on what the transport saw (reads, writevs, half-close, close).
 * Also the protocol table's choice on cleartext: the h2 preface gets
 * SETTINGS, anything else HTTP/1. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "memconn.h"
#include "test.h"

#define SUITE "conn_h1"
#define SUITE_PROTO "conn_proto"
#define DATE "Thu, 01 Jan 1970 00:00:00 GMT"

/* ---- a strict parser for our responses ---- */

typedef struct resp {
    int status;
    const char *line; /* status line, without CRLF */
    size_t line_len;
    const char *hdrs; /* the header lines, CRLF-terminated each */
    size_t hdrs_len;
    long long clen; /* -1: absent */
    const char *body;
    size_t body_len;
} resp;

/* Parses one response at buf. A response to HEAD (head_only) has no body
 * whatever its Content-Length says. Returns the bytes it spans, 0 if
 * incomplete, -1 if malformed. */
static long parse_resp(const char *buf, size_t len, int head_only, resp *r) {
    memset(r, 0, sizeof(*r));
    r->clen = -1;
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end) return 0;
    const char *eol = memmem(buf, len, "\r\n", 2);
    if ((size_t)(eol - buf) < 12 || memcmp(buf, "HTTP/1.1 ", 9) != 0 ||
        buf[12] != ' ')
        return -1;
    r->status = atoi(buf + 9);
    r->line = buf;
    r->line_len = (size_t)(eol - buf);
    r->hdrs = eol + 2;
    r->hdrs_len = (size_t)(end + 2 - r->hdrs);
    for (const char *p = r->hdrs; p < end + 2;) {
        const char *e = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
        if (!memchr(p, ':', (size_t)(e - p))) return -1;
        if ((size_t)(e - p) > 16 && !strncasecmp(p, "Content-Length: ", 16))
            r->clen = atoll(p + 16);
        p = e + 2;
    }
    size_t head = (size_t)(end + 4 - buf);
    size_t blen = head_only || r->clen < 0 ? 0 : (size_t)r->clen;
    if (len - head < blen) return 0;
    r->body = buf + head;
    r->body_len = blen;
    return (long)(head + blen);
}

/* The value of header `name` (exact "Name: value" line), or NULL. */
static const char *hdr(const resp *r, const char *name, size_t *vlen) {
    size_t n = strlen(name);
    for (const char *p = r->hdrs; p < r->hdrs + r->hdrs_len;) {
        const char *e =
            memmem(p, (size_t)(r->hdrs + r->hdrs_len - p), "\r\n", 2);
        if ((size_t)(e - p) >= n + 2 && !strncasecmp(p, name, n) &&
            p[n] == ':' && p[n + 1] == ' ') {
            *vlen = (size_t)(e - p - n - 2);
            return p + n + 2;
        }
        p = e + 2;
    }
    return NULL;
}

static int hdr_is(const resp *r, const char *name, const char *value) {
    size_t n;
    const char *v = hdr(r, name, &n);
    return v && n == strlen(value) && memcmp(v, value, n) == 0;
}

static int has_hdr(const resp *r, const char *name) {
    size_t n;
    return hdr(r, name, &n) != NULL;
}

static int body_is(const resp *r, const char *s) {
    return r->body_len == strlen(s) && memcmp(r->body, s, r->body_len) == 0;
}

static int line_is(const resp *r, const char *s) {
    return r->line_len == strlen(s) && memcmp(r->line, s, r->line_len) == 0;
}

/* Splits the whole output into responses; heads[i] says whether the i-th
 * answers a HEAD (NULL: none does). Returns how many parsed cleanly and
 * covered the output exactly, or -1. */
static int split(const memconn *p, const int *heads, resp *out, int max) {
    size_t off = 0;
    int n = 0;
    while (off < p->out.len) {
        if (n == max) return -1;
        long k = parse_resp(p->out.data + off, p->out.len - off,
                            heads ? heads[n] : 0, &out[n]);
        if (k <= 0) return -1;
        off += (size_t)k;
        n++;
    }
    return n;
}

/* ---- one connection, start to finish ---- */

typedef struct script {
    const char *in;
    size_t in_len; /* 0: strlen(in) */
    size_t chunk;
    int write_mode;
    int eof;
    uint32_t rng; /* seeds short write sizes; 0: a fixed default */
    const char *const *flags; /* command-line limits, NULL-terminated */
} script;

typedef struct run {
    memconn_env env;
    memconn p;
    int ok;
} run;

/* Opens a connection, sends the input as the script says and runs the loop
 * until nothing moves. The connection stays as it is (open, lingering or
 * closed) for the test to go on with; run_end closes and frees. */
static void run_start(run *r, const script *s) {
    conn_config cfg;
    memconn_config(&cfg, s->flags);
    memconn_init(&r->p);
    r->ok = memconn_env_init(&r->env, &cfg) == 0;
    r->p.chunk = s->chunk;
    r->p.write_mode = s->write_mode;
    r->p.eof = s->eof;
    r->p.rng = s->rng;
    r->ok = r->ok && memconn_open(&r->env, &r->p) != NULL;
    if (s->in)
        memconn_send(&r->p, s->in, s->in_len ? s->in_len : strlen(s->in));
    if (r->ok) r->ok = memconn_run(&r->env) >= 0;
}

static void run_end(run *r) {
    memconn_env_free(&r->env);
    memconn_free(&r->p);
}

#define T_RUN_OK(r)                                                         \
    do {                                                                    \
        T_CHECK((r)->ok);                                                   \
        T_CHECK(!(r)->env.spun);                                            \
        T_CHECK((r)->p.violations == 0);                                    \
    } while (0)

static const char GET_PING[] = "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n";

/* ---- cases ---- */

static void case_ping_exact(void) {
    T_BEGIN;
    run r;
    resp rs;
    run_start(&r, &(script){.in = GET_PING});
    T_RUN_OK(&r);
    long n = parse_resp(r.p.out.data, r.p.out.len, 0, &rs);
    T_CHECK(n > 0 && (size_t)n == r.p.out.len);
    if (n > 0) {
        T_CHECK(line_is(&rs, "HTTP/1.1 200 OK"));
        T_CHECK(hdr_is(&rs, "Server", "evloop"));
        T_CHECK(hdr_is(&rs, "Date", DATE));
        T_CHECK(hdr_is(&rs, "Content-Type", "text/plain"));
        T_CHECK(hdr_is(&rs, "Content-Length", "4"));
        T_CHECK(!has_hdr(&rs, "Connection")); /* 1.1 keep-alive: implied */
        T_CHECK(body_is(&rs, "pong"));
    }
    /* Keep-alive: the connection waits for the next request. */
    T_CHECK(!r.p.closed && !r.p.shut_wr);
    T_CHECK(r.p.writevs == 1);
    /* The peer goes away: the connection closes, nothing more is said. */
    size_t before = r.p.out.len;
    r.p.eof = 1;
    memconn_run(&r.env);
    T_CHECK(r.p.closed && r.p.out.len == before);
    run_end(&r);
    T_END(SUITE, "GET /ping: status line, Server/Date/Content-Type/Length, "
                 "body pong, stays open, closes on EOF");
}

/* The same input in one chunk and one byte at a time gives the same bytes. */
static int same_output(const char *in, size_t in_len, int write_mode,
                       memconn_buf *first, int *ok) {
    static const size_t chunks[] = {0, 1, 2, 3, 7, 64};
    int same = 1;
    memconn_buf ref = {0};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        run r;
        run_start(&r, &(script){.in = in, .in_len = in_len,
                                .chunk = chunks[i], .write_mode = write_mode});
        *ok = *ok && r.ok && !r.env.spun && r.p.violations == 0;
        if (i == 0) {
            ref.data = malloc(r.p.out.len + 1);
            memcpy(ref.data, r.p.out.data, r.p.out.len);
            ref.len = r.p.out.len;
        } else if (r.p.out.len != ref.len ||
                   memcmp(r.p.out.data, ref.data, ref.len) != 0) {
            same = 0;
        }
        run_end(&r);
    }
    if (first) *first = ref;
    else free(ref.data);
    return same;
}

static void case_ping_bytewise(void) {
    T_BEGIN;
    int ok = 1;
    memconn_buf ref;
    T_CHECK(same_output(GET_PING, 0, MEMCONN_WRITE_ALL, &ref, &ok));
    T_CHECK(ok);
    T_CHECK(ref.len > 4 && memcmp(ref.data + ref.len - 4, "pong", 4) == 0);
    free(ref.data);
    T_END(SUITE, "GET /ping: 1, 2, 3, 7, 64-byte reads give the one-chunk "
                 "output");
}

static void case_pipelined(void) {
    T_BEGIN;
    static const char in[] =
        "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n"
        "GET /echo?size=5 HTTP/1.1\r\nHost: a\r\n\r\n"
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
        "HEAD /ping HTTP/1.1\r\nHost: a\r\n\r\n"
        "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    static const int heads[] = {0, 0, 0, 0, 1, 0};
    run r;
    resp rs[8];
    run_start(&r, &(script){.in = in});
    T_RUN_OK(&r);
    T_CHECK(split(&r.p, heads, rs, 8) == 6);
    T_CHECK(r.p.writevs == 1); /* every answer of one read: one writev */
    T_CHECK(rs[0].status == 200 && body_is(&rs[0], "pong"));
    T_CHECK(rs[1].status == 200 && body_is(&rs[1], "xxxxx"));
    T_CHECK(rs[2].status == 200 && body_is(&rs[2], "abc") &&
            hdr_is(&rs[2], "Content-Type", "application/octet-stream"));
    T_CHECK(rs[3].status == 404);
    T_CHECK(rs[4].status == 200 && rs[4].clen == 4);
    T_CHECK(rs[5].status == 200 && body_is(&rs[5], "Hello, World!"));
    T_CHECK(!r.p.closed && !r.p.shut_wr);
    run_end(&r);
    {
        int ok = 1;
        T_CHECK(same_output(in, 0, MEMCONN_WRITE_ALL, NULL, &ok));
        T_CHECK(ok);
    }
    T_END(SUITE, "six pipelined requests: answered in order in one writev; "
                 "byte-at-a-time gives the same bytes");
}

static void case_post_cl(void) {
    T_BEGIN;
    char in[4096];
    char body[1201];
    for (int i = 0; i < 1200; i++) body[i] = (char)('a' + i % 26);
    body[1200] = 0;
    snprintf(in, sizeof(in),
             "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1200\r\n\r\n%s"
             "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n",
             body);
    memconn_buf ref;
    int ok = 1;
    T_CHECK(same_output(in, 0, MEMCONN_WRITE_ALL, &ref, &ok));
    T_CHECK(ok);
    memconn fake = {.out = ref};
    resp rs[3];
    T_CHECK(split(&fake, NULL, rs, 3) == 2);
    T_CHECK(rs[0].status == 200 && rs[0].clen == 1200 && body_is(&rs[0], body));
    T_CHECK(rs[1].status == 200 && body_is(&rs[1], "pong"));
    free(ref.data);
    T_END(SUITE, "POST /echo Content-Length 1200, then GET: echoed, in any "
                 "read split down to 1 byte");
}

static void case_post_chunked(void) {
    T_BEGIN;
    static const char in[] =
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n"
        "1;ext=1\r\n,\r\n"
        "A\r\n wide worl\r\n"
        "1\r\nd\r\n"
        "0\r\nX-Trailer: t\r\n\r\n"
        "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n";
    memconn_buf ref;
    int ok = 1;
    T_CHECK(same_output(in, 0, MEMCONN_WRITE_ALL, &ref, &ok));
    T_CHECK(ok);
    memconn fake = {.out = ref};
    resp rs[3];
    T_CHECK(split(&fake, NULL, rs, 3) == 2);
    T_CHECK(rs[0].status == 200 && body_is(&rs[0], "hello, wide world") &&
            hdr_is(&rs[0], "Content-Length", "17"));
    T_CHECK(rs[1].status == 200 && body_is(&rs[1], "pong"));
    free(ref.data);
    T_END(SUITE, "POST /echo chunked (extension, trailer), then GET: "
                 "decoded and echoed, in any read split down to 1 byte");
}

static void case_large_echo(void) {
    T_BEGIN;
    /* Bodies of 16 KiB and more are handed to the output queue, not
     * copied; 40000 bytes also need more than one read buffer fill when
     * sent after the head. */
    size_t blen = 40000;
    char *in = malloc(blen + 256);
    int hl = snprintf(in, 256,
                      "POST /echo HTTP/1.1\r\nHost: a\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      blen);
    for (size_t i = 0; i < blen; i++) in[hl + i] = (char)('A' + i % 23);
    memcpy(in + hl + blen, GET_PING, sizeof(GET_PING) - 1);
    size_t in_len = (size_t)hl + blen + sizeof(GET_PING) - 1;
    static const int modes[] = {MEMCONN_WRITE_ALL, MEMCONN_WRITE_SHORT,
                                MEMCONN_WRITE_EAGAIN};
    memconn_buf ref = {0};
    for (size_t m = 0; m < 3; m++) {
        for (size_t chunk = 0; chunk <= 1000; chunk += 1000) {
            run r;
            resp rs[3];
            run_start(&r, &(script){.in = in, .in_len = in_len,
                                    .chunk = chunk, .write_mode = modes[m]});
            T_RUN_OK(&r);
            T_CHECK(split(&r.p, NULL, rs, 3) == 2);
            T_CHECK(rs[0].status == 200 && rs[0].body_len == blen &&
                    memcmp(rs[0].body, in + hl, blen) == 0);
            T_CHECK(rs[1].status == 200 && body_is(&rs[1], "pong"));
            if (!ref.data) {
                ref.data = malloc(r.p.out.len);
                memcpy(ref.data, r.p.out.data, r.p.out.len);
                ref.len = r.p.out.len;
            } else {
                T_CHECK(r.p.out.len == ref.len &&
                        memcmp(r.p.out.data, ref.data, ref.len) == 0);
            }
            run_end(&r);
        }
    }
    free(ref.data);
    free(in);
    T_END(SUITE, "POST /echo 40000 bytes + GET: same bytes for whole, "
                 "short and EAGAIN writes, 1000-byte or whole reads");
}

static void case_head(void) {
    T_BEGIN;
    static const char in[] = "HEAD /echo?size=300 HTTP/1.1\r\nHost: a\r\n\r\n"
                             "HEAD /ping HTTP/1.1\r\nHost: a\r\n\r\n"
                             "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n";
    static const int heads[] = {1, 1, 0};
    run r;
    resp rs[4];
    run_start(&r, &(script){.in = in});
    T_RUN_OK(&r);
    T_CHECK(split(&r.p, heads, rs, 4) == 3);
    T_CHECK(rs[0].status == 200 && rs[0].clen == 300 && rs[0].body_len == 0);
    T_CHECK(rs[1].status == 200 && rs[1].clen == 4 && rs[1].body_len == 0);
    /* Had a HEAD answer carried a body, the GET's would not parse here. */
    T_CHECK(rs[2].status == 200 && body_is(&rs[2], "pong"));
    run_end(&r);
    T_END(SUITE, "HEAD: GET's Content-Length, no body (the next response "
                 "follows the head directly)");
}

static void case_404_405(void) {
    T_BEGIN;
    static const char in[] =
        "GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n"
        "DELETE /ping HTTP/1.1\r\nHost: a\r\n\r\n"
        "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
        "POST /ping HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
        "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n";
    run r;
    resp rs[6];
    run_start(&r, &(script){.in = in});
    T_RUN_OK(&r);
    T_CHECK(split(&r.p, NULL, rs, 6) == 5);
    T_CHECK(line_is(&rs[0], "HTTP/1.1 404 Not Found") &&
            !has_hdr(&rs[0], "Allow"));
    T_CHECK(line_is(&rs[1], "HTTP/1.1 405 Method Not Allowed") &&
            hdr_is(&rs[1], "Allow", "GET, HEAD"));
    T_CHECK(rs[2].status == 405 && hdr_is(&rs[2], "Allow", "GET, HEAD, POST"));
    T_CHECK(rs[3].status == 405 && hdr_is(&rs[3], "Allow", "GET, HEAD"));
    T_CHECK(rs[4].status == 200 && body_is(&rs[4], "pong"));
    T_CHECK(!r.p.closed && !r.p.shut_wr); /* none of these ends it */
    run_end(&r);
    T_END(SUITE, "404 without Allow; 405 with Allow per route; the "
                 "connection lives on");
}

/* An error that ends the connection: one response with Connection: close,
 * the write side shut, nothing after it answered, closed on EOF. */
static void expect_fatal(const char *in, const char *const *flags,
                         int status, const char *name) {
    T_BEGIN;
    run r;
    resp rs[3];
    run_start(&r, &(script){.in = in, .flags = flags});
    T_RUN_OK(&r);
    T_CHECK(split(&r.p, NULL, rs, 3) == 1);
    T_CHECK(rs[0].status == status && hdr_is(&rs[0], "Connection", "close"));
    T_CHECK(hdr_is(&rs[0], "Content-Type", "text/plain"));
    T_CHECK(r.p.shut_wr);
    r.p.eof = 1;
    memconn_run(&r.env);
    T_CHECK(r.p.closed);
    run_end(&r);
    T_END(SUITE, name);
}

static void case_malformed(void) {
    expect_fatal("GET /ping HTTP/1.1 extra\r\n\r\n"
                 "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n",
                 NULL, 400, "request line of four fields: 400, close, the "
                            "next request unanswered");
    expect_fatal("G(T /ping HTTP/1.1\r\nHost: a\r\n\r\n", NULL, 400,
                 "bad method token: 400 then close");
    expect_fatal("GET /ping HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n",
                 NULL, 400,
                 "header line without colon: 400 then close");
    expect_fatal("GET /ping HTTP/2.5\r\n\r\n", NULL, 505,
                 "HTTP/2.5: 505 then close");
    expect_fatal("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                 "Content-Length: 6\r\n\r\nhello!",
                 NULL, 400, "conflicting Content-Length: 400 then close");
    {
        /* A line that is no HTTP at all gets no HTTP answer. */
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = "HELLO there friend\r\n\r\n"});
        T_RUN_OK(&r);
        T_CHECK(r.p.out.len == 0 && r.p.shut_wr);
        r.p.eof = 1;
        memconn_run(&r.env);
        T_CHECK(r.p.closed);
        run_end(&r);
        T_END(SUITE, "other protocol's line: closed without an answer");
    }
}

static void case_413(void) {
    static const char *const limit[] = {"--max-body", "100", NULL};
    expect_fatal("POST /echo HTTP/1.1\r\nHost: a\r\n"
                 "Content-Length: 101\r\n\r\n",
                 limit,
                 413, "--max-body 100, Content-Length 101: 413 before the "
                      "body, then close");
    {
        char in[512];
        char body[201];
        memset(body, 'q', 200);
        body[200] = 0;
        snprintf(in, sizeof(in),
                 "POST /echo HTTP/1.1\r\nHost: a\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n"
                 "c8\r\n%s\r\n0\r\n\r\n", body);
        expect_fatal(in, limit, 413, "--max-body 100, chunked body of 200: "
                                     "413 then close");
    }
    {
        T_BEGIN;
        char in[512];
        char body[101];
        memset(body, 'q', 100);
        body[100] = 0;
        snprintf(in, sizeof(in),
                 "POST /echo HTTP/1.1\r\nHost: a\r\n"
                 "Content-Length: 100\r\n\r\n%s",
                 body);
        run r;
        resp rs[2];
        run_start(&r, &(script){.in = in, .flags = limit, .chunk = 1});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1);
        T_CHECK(rs[0].status == 200 && body_is(&rs[0], body));
        run_end(&r);
        T_END(SUITE, "--max-body 100, a body of exactly 100: echoed");
    }
}

static void case_timeouts(void) {
    {
        T_BEGIN;
        run r;
        resp rs[2];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHost:"});
        T_RUN_OK(&r);
        T_CHECK(r.p.out.len == 0);
        /* Well before the header timeout (10 s by default): nothing. */
        memconn_timeout(&r.p, memconn_now(&r.env, 5000));
        memconn_run(&r.env);
        T_CHECK(r.p.out.len == 0 && !r.p.closed);
        memconn_expire(&r.p);
        memconn_run(&r.env);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1);
        T_CHECK(line_is(&rs[0], "HTTP/1.1 408 Request Timeout") &&
                hdr_is(&rs[0], "Connection", "close"));
        T_CHECK(r.p.shut_wr);
        r.p.eof = 1;
        memconn_run(&r.env);
        T_CHECK(r.p.closed);
        run_end(&r);
        T_END(SUITE, "partial head: nothing at 5 s, 408 and close past "
                     "--header-timeout");
    }
    {
        T_BEGIN;
        run r;
        resp rs[2];
        run_start(&r, &(script){.in = "POST /echo HTTP/1.1\r\nHost: a\r\n"
                                      "Content-Length: 10\r\n\r\nabc"});
        T_RUN_OK(&r);
        T_CHECK(r.p.out.len == 0);
        memconn_expire(&r.p);
        memconn_run(&r.env);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1);
        T_CHECK(rs[0].status == 408 && hdr_is(&rs[0], "Connection", "close"));
        run_end(&r);
        T_END(SUITE, "stalled body: 408 and close past --body-timeout");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = GET_PING});
        T_RUN_OK(&r);
        size_t before = r.p.out.len;
        memconn_expire(&r.p);
        memconn_run(&r.env);
        T_CHECK(r.p.closed && r.p.out.len == before);
        run_end(&r);
        T_END(SUITE, "idle keep-alive past --idle-timeout: closed, no "
                     "bytes");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.write_mode = MEMCONN_WRITE_STALL});
        T_RUN_OK(&r);
        memconn_expire(&r.p);
        memconn_run(&r.env);
        T_CHECK(r.p.closed && r.p.out.len == 0);
        run_end(&r);
        T_END(SUITE, "connected and silent: closed at the header timeout "
                     "without a 408");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = "GET /echo?size=100000 HTTP/1.1\r\n"
                                      "Host: a\r\n\r\n",
                                .write_mode = MEMCONN_WRITE_STALL});
        T_RUN_OK(&r);
        T_CHECK(!r.p.closed && r.p.out.len == 0);
        memconn_timeout(&r.p, memconn_now(&r.env, 1000));
        T_CHECK(!r.p.closed);
        memconn_expire(&r.p);
        T_CHECK(r.p.closed);
        run_end(&r);
        T_END(SUITE, "a peer that reads nothing: closed past "
                     "--send-timeout");
    }
}

static void case_keepalive_close(void) {
    {
        T_BEGIN;
        run r;
        resp rs[3];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHost: a\r\n"
                                      "Connection: close\r\n\r\n"
                                      "GET /ping HTTP/1.1\r\nHost: a\r\n"
                                      "\r\n"});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 3) == 1);
        T_CHECK(rs[0].status == 200 && hdr_is(&rs[0], "Connection", "close") &&
                body_is(&rs[0], "pong"));
        T_CHECK(r.p.shut_wr);
        r.p.eof = 1;
        memconn_run(&r.env);
        T_CHECK(r.p.closed);
        run_end(&r);
        T_END(SUITE, "Connection: close: answered with it, write side shut, "
                     "the pipelined next request ignored");
    }
    {
        T_BEGIN;
        run r;
        resp rs[3];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHost: a\r\n"
                                      "Connection: keep-alive\r\n\r\n"});
        T_RUN_OK(&r);
        memconn_send_str(&r.p, "GET /echo?size=3 HTTP/1.1\r\nHost: a\r\n\r\n");
        memconn_run(&r.env);
        T_CHECK(split(&r.p, NULL, rs, 3) == 2);
        T_CHECK(rs[0].status == 200 && !has_hdr(&rs[0], "Connection"));
        T_CHECK(rs[1].status == 200 && body_is(&rs[1], "xxx"));
        T_CHECK(!r.p.shut_wr && !r.p.closed);
        T_CHECK(r.p.writevs == 2);
        run_end(&r);
        T_END(SUITE, "HTTP/1.1 keep-alive: a second request later on the "
                     "same connection");
    }
    {
        T_BEGIN;
        run r;
        resp rs[3];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.0\r\n\r\n"
                                      "GET /ping HTTP/1.0\r\n\r\n"});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 3) == 1);
        T_CHECK(line_is(&rs[0], "HTTP/1.1 200 OK") &&
                hdr_is(&rs[0], "Connection", "close") &&
                body_is(&rs[0], "pong"));
        T_CHECK(r.p.shut_wr);
        run_end(&r);
        T_END(SUITE, "HTTP/1.0: answered, Connection: close, then closed");
    }
    {
        T_BEGIN;
        run r;
        resp rs[3];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.0\r\nConnection: "
                                      "keep-alive\r\n\r\n"
                                      "GET /echo?size=2 HTTP/1.0\r\n\r\n"});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 3) == 2);
        T_CHECK(hdr_is(&rs[0], "Connection", "keep-alive") &&
                body_is(&rs[0], "pong"));
        T_CHECK(hdr_is(&rs[1], "Connection", "close") &&
                body_is(&rs[1], "xx"));
        T_CHECK(r.p.shut_wr);
        run_end(&r);
        T_END(SUITE, "HTTP/1.0 keep-alive: kept for the next request, which "
                     "without it is the last");
    }
    {
        T_BEGIN;
        run r;
        resp rs[2];
        run_start(&r, &(script){.in = "POST /echo HTTP/1.0\r\n"
                                      "Transfer-Encoding: chunked\r\n\r\n"
                                      "2\r\nhi\r\n0\r\n\r\n"});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1 && rs[0].status == 400);
        run_end(&r);
        T_END(SUITE, "HTTP/1.0 with chunked: 400");
    }
}

static void case_write_modes(void) {
    T_BEGIN;
    static const char in[] =
        "GET /echo?size=70000 HTTP/1.1\r\nHost: a\r\n\r\n"
        "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n"
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        "GET /echo?size=200 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    static const int modes[] = {MEMCONN_WRITE_SHORT, MEMCONN_WRITE_EAGAIN};
    run ref;
    resp rs[5];
    run_start(&ref, &(script){.in = in});
    T_RUN_OK(&ref);
    T_CHECK(split(&ref.p, NULL, rs, 5) == 4);
    T_CHECK(rs[0].body_len == 70000 && rs[3].body_len == 200 &&
            body_is(&rs[2], "hello"));
    for (size_t m = 0; m < 2; m++) {
        for (uint32_t seed = 1; seed <= 3; seed++) {
            run r;
            run_start(&r, &(script){.in = in, .write_mode = modes[m],
                                    .chunk = seed == 3 ? 1 : 0,
                                    .rng = seed * 7919});
            T_RUN_OK(&r);
            T_CHECK(r.p.out.len == ref.p.out.len &&
                    memcmp(r.p.out.data, ref.p.out.data, r.p.out.len) == 0);
            T_CHECK(r.p.shut_wr);
            if (modes[m] == MEMCONN_WRITE_SHORT) T_CHECK(r.p.writevs > 4);
            run_end(&r);
        }
    }
    run_end(&ref);
    T_END(SUITE, "short writes and EAGAIN writes: the same byte stream as "
                 "whole writes");
}

static void case_backpressure(void) {
    T_BEGIN;
    /* Ten 100 KB answers: more than the 256 KiB the output queue holds, so
     * the server stops reading while the peer reads nothing. */
    memconn_buf in = {0};
    for (int i = 0; i < 10; i++) {
        char line[64];
        int n = snprintf(line, sizeof(line),
                         "GET /echo?size=%d HTTP/1.1\r\nHost: a\r\n\r\n",
                         100000 + i);
        in.data = realloc(in.data, in.len + (size_t)n);
        memcpy(in.data + in.len, line, (size_t)n);
        in.len += (size_t)n;
    }
    run r;
    resp rs[11];
    run_start(&r, &(script){.in = in.data, .in_len = in.len, .chunk = 40,
                            .write_mode = MEMCONN_WRITE_STALL});
    T_RUN_OK(&r);
    T_CHECK(r.p.out.len == 0);
    T_CHECK(r.p.in_pos < in.len); /* reading stopped */
    T_CHECK(!r.p.closed);
    r.p.write_mode = MEMCONN_WRITE_ALL;
    memconn_run(&r.env);
    T_CHECK(r.p.in_pos == in.len);
    T_CHECK(split(&r.p, NULL, rs, 11) == 10);
    for (int i = 0; i < 10; i++)
        T_CHECK(rs[i].status == 200 && rs[i].body_len == (size_t)(100000 + i));
    run_end(&r);
    free(in.data);
    T_END(SUITE, "a peer that does not read: input stops being read, then "
                 "all ten 100 KB answers in order once it reads");
}

static void case_expect_continue(void) {
    T_BEGIN;
    run r;
    resp rs[3];
    run_start(&r, &(script){.in = "POST /echo HTTP/1.1\r\nHost: a\r\n"
                                  "Content-Length: 4\r\n"
                                  "Expect: 100-continue\r\n\r\n"});
    T_RUN_OK(&r);
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    T_CHECK(r.p.out.len == sizeof(cont) - 1 &&
            memcmp(r.p.out.data, cont, sizeof(cont) - 1) == 0);
    memconn_send_str(&r.p, "data");
    memconn_run(&r.env);
    T_CHECK(r.p.out.len > sizeof(cont) - 1);
    if (r.p.out.len > sizeof(cont) - 1) {
        memconn tail = {.out = {r.p.out.data + sizeof(cont) - 1,
                                r.p.out.len - (sizeof(cont) - 1), 0}};
        T_CHECK(split(&tail, NULL, rs, 3) == 1);
        T_CHECK(rs[0].status == 200 && body_is(&rs[0], "data"));
    }
    run_end(&r);
    T_END(SUITE, "Expect: 100-continue: 100 first, then the echo once the "
                 "body came");
}

static void case_head_too_large(void) {
    T_BEGIN;
    size_t n = 20000;
    char *in = malloc(n + 64);
    int k = snprintf(in, 64, "GET /ping HTTP/1.1\r\nHost: a\r\nX-Big: ");
    memset(in + k, 'b', n - (size_t)k);
    run r;
    resp rs[2];
    run_start(&r, &(script){.in = in, .in_len = n, .chunk = 1000});
    T_RUN_OK(&r);
    T_CHECK(split(&r.p, NULL, rs, 2) == 1 && rs[0].status == 431 &&
            hdr_is(&rs[0], "Connection", "close"));
    run_end(&r);
    free(in);
    T_END(SUITE, "a head past 16 KiB: 431 then close");
}

static void case_shutdown(void) {
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = GET_PING});
        size_t before = r.p.out.len;
        conn_set_begin_shutdown(&r.env.set);
        memconn_run(&r.env);
        T_CHECK(r.p.closed && r.p.out.len == before);
        run_end(&r);
        T_END(SUITE, "graceful shutdown: an idle keep-alive connection is "
                     "closed at once");
    }
    {
        T_BEGIN;
        run r;
        resp rs[2];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHost: a\r\n"});
        T_RUN_OK(&r);
        conn_set_begin_shutdown(&r.env.set);
        memconn_run(&r.env);
        T_CHECK(!r.p.closed && r.p.out.len == 0);
        memconn_send_str(&r.p, "\r\n");
        memconn_run(&r.env);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1);
        T_CHECK(rs[0].status == 200 && body_is(&rs[0], "pong") &&
                hdr_is(&rs[0], "Connection", "close"));
        T_CHECK(r.p.closed);
        run_end(&r);
        T_END(SUITE, "graceful shutdown mid-head: the request is answered "
                     "with Connection: close, then closed");
    }
}

static void case_half_close(void) {
    {
        T_BEGIN;
        run r;
        resp rs[3];
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHost: a\r\n\r\n"
                                      "GET /echo?size=3 HTTP/1.1\r\nHost: a"
                                      "\r\n\r\n",
                                .chunk = 9, .eof = 1});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 3) == 2);
        T_CHECK(body_is(&rs[0], "pong") && body_is(&rs[1], "xxx"));
        T_CHECK(r.p.closed && r.p.eofs >= 1);
        run_end(&r);
        T_END(SUITE, "requests then EOF (half-close): both answered, then "
                     "closed");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = "GET /ping HTTP/1.1\r\nHo", .eof = 1});
        T_RUN_OK(&r);
        T_CHECK(r.p.closed && r.p.out.len == 0);
        run_end(&r);
        T_END(SUITE, "EOF in the middle of a head: closed, no answer");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = "POST /echo HTTP/1.1\r\nHost: a\r\n"
                                      "Content-Length: 9\r\n\r\nabc",
                                .eof = 1});
        T_RUN_OK(&r);
        T_CHECK(r.p.closed && r.p.out.len == 0);
        run_end(&r);
        T_END(SUITE, "EOF in the middle of a body: closed, no answer");
    }
}

static void case_many_segments(void) {
    T_BEGIN;
    /* 300 answers of 200 bytes: each body goes out by reference, so a
     * head and a body segment per answer -- more than the 256 segments
     * the queue holds, so the handler pauses and resumes as it drains. */
    enum { N = 300 };
    static const char one[] = "GET /echo?size=200 HTTP/1.1\r\nHost: a\r\n\r\n";
    size_t k = sizeof(one) - 1;
    char *in = malloc(N * k);
    for (int i = 0; i < N; i++) memcpy(in + (size_t)i * k, one, k);
    for (int m = 0; m < 2; m++) {
        run r;
        resp *rs = malloc((N + 1) * sizeof(*rs));
        run_start(&r, &(script){.in = in, .in_len = N * k,
                                .write_mode = m ? MEMCONN_WRITE_SHORT
                                                : MEMCONN_WRITE_ALL});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, N + 1) == N);
        int good = 0;
        for (int i = 0; i < N; i++)
            good += rs[i].status == 200 && rs[i].body_len == 200;
        T_CHECK(good == N);
        T_CHECK(!r.p.closed);
        free(rs);
        run_end(&r);
    }
    free(in);
    T_END(SUITE, "300 pipelined answers by reference (> 256 segments): all "
                 "in order, whole and short writes");
}

/* ---- the protocol table on cleartext ---- */

static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
static const char SETTINGS0[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};

/* A SETTINGS frame (not an ACK) on stream 0 opens the output. */
static int starts_with_settings(const memconn *p) {
    const unsigned char *o = (const unsigned char *)p->out.data;
    return p->out.len >= 9 && o[3] == 0x04 && (o[4] & 1) == 0 &&
           !memcmp(o + 5, "\0\0\0\0", 4) &&
           p->out.len >= 9 + ((size_t)o[0] << 16 | (size_t)o[1] << 8 | o[2]);
}

static void case_protocol_choice(void) {
    for (size_t chunk = 0; chunk <= 1; chunk++) {
        T_BEGIN;
        char in[64];
        memcpy(in, PREFACE, 24);
        memcpy(in + 24, SETTINGS0, 9);
        run r;
        run_start(&r, &(script){.in = in, .in_len = 33, .chunk = chunk});
        T_RUN_OK(&r);
        T_CHECK(starts_with_settings(&r.p));
        T_CHECK(!memconn_out_has(&r.p, "HTTP/1.1"));
        T_CHECK(!r.p.closed);
        run_end(&r);
        T_END(SUITE_PROTO, chunk ? "h2 preface a byte at a time: SETTINGS "
                                 "first"
                               : "h2 preface: SETTINGS first");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = PREFACE, .in_len = 23});
        T_RUN_OK(&r);
        T_CHECK(r.p.out.len == 0 && !r.p.closed); /* still undecided */
        memconn_send(&r.p, PREFACE + 23, 1);
        memconn_run(&r.env);
        T_CHECK(starts_with_settings(&r.p));
        run_end(&r);
        T_END(SUITE_PROTO, "23 bytes of the preface: undecided and silent; "
                           "the 24th picks h2");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = PREFACE, .in_len = 10, .eof = 1});
        T_RUN_OK(&r);
        T_CHECK(r.p.closed && r.p.out.len == 0);
        run_end(&r);
        T_END(SUITE_PROTO, "part of the preface, then EOF: closed in silence");
    }
    {
        T_BEGIN;
        run r;
        resp rs[2];
        /* "P" could begin the preface; "PU" cannot. */
        run_start(&r, &(script){.in = "PUT /ping HTTP/1.1\r\nHost: a\r\n"
                                      "Content-Length: 0\r\n\r\n",
                                .chunk = 1});
        T_RUN_OK(&r);
        T_CHECK(split(&r.p, NULL, rs, 2) == 1 && rs[0].status == 405 &&
                hdr_is(&rs[0], "Allow", "GET, HEAD"));
        run_end(&r);
        T_END(SUITE_PROTO, "PUT byte at a time (P is a preface prefix): "
                           "HTTP/1 405");
    }
    {
        T_BEGIN;
        run r;
        run_start(&r, &(script){.in = GET_PING, .chunk = 1});
        T_RUN_OK(&r);
        T_CHECK(r.p.out.len >= 9 && !memcmp(r.p.out.data, "HTTP/1.1 ", 9));
        run_end(&r);
        T_END(SUITE_PROTO, "anything else: HTTP/1");
    }
}

static void case_two_conns(void) {
    T_BEGIN;
    memconn_env env;
    memconn a, b;
    char in[64];
    memcpy(in, PREFACE, 24);
    memcpy(in + 24, SETTINGS0, 9);
    memconn_init(&a);
    memconn_init(&b);
    T_CHECK(memconn_env_init(&env, NULL) == 0);
    T_CHECK(memconn_open(&env, &a) && memconn_open(&env, &b));
    a.chunk = 3;
    b.chunk = 5;
    memconn_send_str(&a, GET_PING);
    memconn_send(&b, in, 33);
    T_CHECK(memconn_run(&env) >= 0);
    T_CHECK(env.set.n == 2);
    T_CHECK(memconn_out_has(&a, "\r\n\r\npong") && !starts_with_settings(&a));
    T_CHECK(starts_with_settings(&b) && !memconn_out_has(&b, "HTTP/1.1"));
    memconn_expire(&a);
    memconn_run(&env);
    T_CHECK(a.closed && !b.closed && env.set.n == 1);
    memconn_env_free(&env);
    T_CHECK(b.closed);
    memconn_free(&a);
    memconn_free(&b);
    T_END(SUITE_PROTO, "two connections on one loop, HTTP/1 and h2: each "
                       "its own answers; closing one leaves the other");
}

void test_conn_h1(void) {
    case_ping_exact();
    case_ping_bytewise();
    case_pipelined();
    case_post_cl();
    case_post_chunked();
    case_large_echo();
    case_head();
    case_404_405();
    case_malformed();
    case_413();
    case_timeouts();
    case_keepalive_close();
    case_write_modes();
    case_backpressure();
    case_many_segments();
    case_expect_continue();
    case_head_too_large();
    case_shutdown();
    case_half_close();
    case_protocol_choice();
    case_two_conns();
}
