/* Chunked decoder tests: each input is decoded whole, one byte at a time,
 * split in two at every offset, and in place; all must agree. */
#include <stdlib.h>
#include <string.h>

#include "http1/chunked.h"
#include "test.h"

#define SUITE "chunked"

typedef struct result {
    ssize_t code; /* >0: consumed total; else CHUNKED_* */
    char *out;
    size_t out_len;
} result;

/* Feeds in[0..len) in pieces of at most `step` bytes (0: first piece is
 * `split` bytes, then the rest). Every piece is an exactly-sized heap copy so
 * ASan catches over-reads. */
static result feed(const char *in, size_t len, uint64_t max_body, size_t step,
                   size_t split) {
    chunked_decoder d;
    result res = {CHUNKED_NEED_MORE, malloc(len + 1), 0};
    size_t pos = 0;

    chunked_init(&d, max_body);
    while (pos < len) {
        size_t n = step ? step : (pos == 0 ? split : len - pos);
        if (n > len - pos) n = len - pos;
        if (n == 0) n = len - pos;
        char *piece = malloc(n);
        memcpy(piece, in + pos, n);
        size_t w;
        ssize_t r = chunked_decode(&d, piece, n, res.out + res.out_len, &w);
        free(piece);
        res.out_len += w;
        if (r == CHUNKED_NEED_MORE) {
            pos += n;
            continue;
        }
        res.code = r >= 0 ? (ssize_t)pos + r : r;
        return res;
    }
    return res;
}

static result feed_in_place(const char *in, size_t len, uint64_t max_body) {
    chunked_decoder d;
    result res = {0, malloc(len + 1), 0};
    memcpy(res.out, in, len);
    chunked_init(&d, max_body);
    res.code = chunked_decode(&d, res.out, len, res.out, &res.out_len);
    return res;
}

static int same(const result *a, const result *b) {
    /* On errors only the code must agree: how much data got out before the
     * error depends on where the input was cut. */
    if (a->code != b->code) return 0;
    if (a->code < 0 && a->code != CHUNKED_NEED_MORE) return 1;
    return a->out_len == b->out_len && memcmp(a->out, b->out, a->out_len) == 0;
}

typedef struct ccase {
    const char *name;
    const char *in;
    size_t len;
    uint64_t max_body; /* 0: unlimited */
    ssize_t code;      /* expected; -100: consumed == whole input */
    const char *out;   /* expected body when complete */
    ssize_t consumed;  /* when code is success and not whole input */
} ccase;

#define WHOLE (-100)
#define S(lit) lit, sizeof(lit) - 1

static const ccase cases[] = {
    {"one chunk", S("5\r\nhello\r\n0\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"three chunks", S("3\r\nabc\r\n2\r\nde\r\n1\r\nf\r\n0\r\n\r\n"), 0, WHOLE, "abcdef", 0},
    {"empty body", S("0\r\n\r\n"), 0, WHOLE, "", 0},
    {"hex upper", S("A\r\n0123456789\r\n0\r\n\r\n"), 0, WHOLE, "0123456789", 0},
    {"hex lower", S("a\r\n0123456789\r\n0\r\n\r\n"), 0, WHOLE, "0123456789", 0},
    {"leading zeros", S("0005\r\nhello\r\n000\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"extension", S("5;foo=bar\r\nhello\r\n0;last\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"quoted extension", S("5;a=\"b; c\"\r\nhello\r\n0\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"BWS before ext", S("5 \t;a=b\r\nhello\r\n0\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"trailers", S("5\r\nhello\r\n0\r\nX-T: 1\r\nY: two\r\n\r\n"), 0, WHOLE, "hello", 0},
    {"CRLF in data", S("4\r\n\r\n\r\n\r\n0\r\n\r\n"), 0, WHOLE, "\r\n\r\n", 0},
    {"next message after", S("1\r\nz\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"), 0, 1, "z", 11},
    {"exactly max", S("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n"), 10, WHOLE, "helloworld", 0},
    {"incomplete", S("5\r\nhel"), 0, CHUNKED_NEED_MORE, NULL, 0},
    {"incomplete trailer", S("0\r\nX: y\r\n"), 0, CHUNKED_NEED_MORE, NULL, 0},
    {"bad hex", S("g\r\nabc\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"empty size", S("\r\nabc\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"negative size", S("-1\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"0x prefix", S("0x5\r\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"space before size", S(" 5\r\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"junk after size", S("5x\r\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"data too long", S("5\r\nhelloX\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"bare LF after size", S("5\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"bare CR after size", S("5\rhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"bare LF after data", S("5\r\nhello\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"LF in extension", S("5;a\nb\r\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"NUL in extension", S("5;a\0b\r\nhello\r\n0\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"folded trailer", S("0\r\nX: 1\r\n 2\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"trailer no name", S("0\r\n: v\r\n\r\n"), 0, CHUNKED_ERROR, NULL, 0},
    {"bad final CRLF", S("0\r\n\r\r"), 0, CHUNKED_ERROR, NULL, 0},
    {"overflow", S("fffffffffffffffff\r\n"), UINT64_MAX, CHUNKED_ERROR, NULL, 0},
    {"too large chunk", S("b\r\nhello world\r\n0\r\n\r\n"), 10, CHUNKED_TOO_LARGE, NULL, 0},
    {"too large total", S("5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n"), 10, CHUNKED_TOO_LARGE, NULL, 0},
    {"huge size vs limit", S("ffffffffff\r\n"), 16777216, CHUNKED_TOO_LARGE, NULL, 0},
};

static void run_case(const ccase *cc) {
    T_BEGIN;
    size_t len = cc->len;
    uint64_t max = cc->max_body ? cc->max_body : UINT64_MAX;
    ssize_t want = cc->code == WHOLE ? (ssize_t)len
                 : cc->code == 1 ? cc->consumed : cc->code;

    result whole = feed(cc->in, len, max, 0, len);
    T_CHECK(whole.code == want);
    if (cc->out && whole.code > 0) {
        T_CHECK(whole.out_len == strlen(cc->out));
        T_CHECK(memcmp(whole.out, cc->out, whole.out_len) == 0);
    }
    result bytes = feed(cc->in, len, max, 1, 0);
    T_CHECK(same(&bytes, &whole));
    free(bytes.out);
    for (size_t k = 1; k < len; k++) {
        result split = feed(cc->in, len, max, 0, k);
        T_CHECK(same(&split, &whole));
        free(split.out);
    }
    if (whole.code != CHUNKED_NEED_MORE) {
        result inplace = feed_in_place(cc->in, len, max);
        T_CHECK(same(&inplace, &whole));
        free(inplace.out);
    }
    free(whole.out);
    T_END(SUITE, cc->name);
}

/* A long extension or trailer section is cut off, not skipped forever. */
static void run_limits(void) {
    T_BEGIN;
    size_t n = CHUNKED_MAX_EXT_LINE + 16;
    char *in = malloc(n + 8);
    in[0] = '1';
    in[1] = ';';
    memset(in + 2, 'e', n);
    result r = feed(in, n + 2, UINT64_MAX, 1, 0);
    T_CHECK(r.code == CHUNKED_ERROR);
    free(r.out);
    free(in);

    n = CHUNKED_MAX_TRAILERS + 16;
    in = malloc(n + 8);
    memcpy(in, "0\r\nX: ", 6);
    memset(in + 6, 't', n);
    r = feed(in, n + 6, UINT64_MAX, 1, 0);
    T_CHECK(r.code == CHUNKED_ERROR);
    free(r.out);
    free(in);
    T_END(SUITE, "extension and trailer limits");
}

/* A 1 MiB body in 4 KiB chunks, fed in uneven pieces. */
static void run_big(void) {
    T_BEGIN;
    size_t body = 1 << 20, chunk = 4096, cap = body + (body / chunk) * 16 + 16;
    char *in = malloc(cap), *p = in;
    for (size_t off = 0; off < body; off += chunk) {
        p += sprintf(p, "%zx\r\n", chunk);
        for (size_t i = 0; i < chunk; i++) *p++ = (char)('a' + (off + i) % 26);
        *p++ = '\r';
        *p++ = '\n';
    }
    p += sprintf(p, "0\r\n\r\n");
    result r = feed(in, (size_t)(p - in), 16777216, 777, 0);
    T_CHECK(r.code == p - in);
    T_CHECK(r.out_len == body);
    int ok = 1;
    for (size_t i = 0; i < body && ok; i++) ok = r.out[i] == (char)('a' + i % 26);
    T_CHECK(ok);
    free(r.out);
    free(in);
    T_END(SUITE, "1 MiB in uneven pieces");
}

static void run_after_done(void) {
    T_BEGIN;
    chunked_decoder d;
    char out[8];
    size_t w;
    chunked_init(&d, 100);
    T_CHECK(chunked_decode(&d, "0\r\n\r\n", 5, out, &w) == 5);
    T_CHECK(chunked_decode(&d, "0\r\n\r\n", 5, out, &w) == CHUNKED_ERROR);
    T_END(SUITE, "call after done is an error");
}

void test_chunked(void) {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
    run_limits();
    run_big();
    run_after_done();
}
