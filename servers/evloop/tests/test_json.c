/* JSON tests: documents of many shapes through json_reserialize (exact
 * output or exact error), the string serializer, UTF-8 edge cases, the
 * depth limit, and POST /something. */
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/json.h"
#include "app/utf8.h"
#include "http/routes.h"
#include "test.h"

typedef struct json_case {
    const char *in;
    size_t len;      /* 0: strlen(in) */
    int rc;          /* expected result */
    const char *out; /* expected output when JSON_OK */
} json_case;

#define OK(in, out) {in, 0, JSON_OK, out}
#define BAD(in) {in, 0, JSON_INVALID, NULL}

static const json_case cases[] = {
    /* Scalars at the top level (RFC 8259 allows any value). */
    OK("0", "0"), OK("-0", "-0"), OK("42", "42"), OK("true", "true"),
    OK("false", "false"), OK("null", "null"), OK("\"\"", "\"\""),
    OK(" \t\r\n 1 \t\r\n ", "1"),
    /* Numbers stay as sent: precision, exponents, huge values. */
    OK("3.25", "3.25"), OK("-0.5", "-0.5"), OK("1e-07", "1e-07"),
    OK("6.02E+23", "6.02E+23"), OK("1.5e300", "1.5e300"), OK("1e400", "1e400"),
    OK("123456789012345678901234567890", "123456789012345678901234567890"),
    OK("0.000000000000000000001", "0.000000000000000000001"),
    OK("[0,-1,9007199254740993]", "[0,-1,9007199254740993]"),
    BAD("01"), BAD("-"), BAD("+1"), BAD(".5"), BAD("1."), BAD("1.e5"),
    BAD("1e"), BAD("1e+"), BAD("0x10"), BAD("1_000"), BAD("NaN"),
    BAD("Infinity"), BAD("-Infinity"), BAD("--1"), BAD("1.5.5"), BAD("- 1"),
    BAD("00"), BAD("-01"),
    /* Literals. */
    BAD("tru"), BAD("truee"), BAD("True"), BAD("nul"), BAD("fals"),
    BAD("nulll"), BAD("undefined"),
    /* Containers and whitespace. */
    OK("[]", "[]"), OK("{}", "{}"), OK("[ ]", "[]"), OK("{ }", "{}"),
    OK("[[[]]]", "[[[]]]"), OK("[{}, {}]", "[{},{}]"),
    OK("{\"a\" : [1 , 2] , \"b\" : {\"c\" : null}}",
       "{\"a\":[1,2],\"b\":{\"c\":null}}"),
    OK("{\"name\":\"benchmark\",\"value\":42,\"tags\":[\"a\",\"b\"]}",
       "{\"name\":\"benchmark\",\"value\":42,\"tags\":[\"a\",\"b\"]}"),
    OK("{\"\":1}", "{\"\":1}"),
    BAD(""), BAD(" "), BAD("["), BAD("]"), BAD("{"), BAD("}"), BAD("[1"),
    BAD("[1,"), BAD("[1,]"), BAD("[,1]"), BAD("[1 2]"), BAD("{\"a\"}"),
    BAD("{\"a\":}"), BAD("{\"a\":1,}"), BAD("{,}"), BAD("{a:1}"),
    BAD("{'a':1}"), BAD("{\"a\" 1}"), BAD("{1:1}"), BAD("[1]]"), BAD("[1]x"),
    BAD("{\"a\":1}}"), BAD("[}"), BAD("{]"), BAD("1 2"), BAD("[1] [2]"),
    BAD("{\"a\":1 \"b\":2}"), BAD("\xEF\xBB\xBF[]"), /* no BOM */
    BAD("/* c */ 1"), BAD("[\v1]"), BAD("[\f1]"),
    /* Strings: escapes are decoded, then written the canonical way. */
    OK("\"a\\\"b\\\\c\\/d\"", "\"a\\\"b\\\\c/d\""),
    OK("\"\\b\\f\\n\\r\\t\"", "\"\\b\\f\\n\\r\\t\""),
    OK("\"\\u0008\\u000C\\u000a\"", "\"\\b\\f\\n\""),
    OK("\"\\u0000\\u001f\\u0001\"", "\"\\u0000\\u001f\\u0001\""),
    OK("\"\\u0022\\u005C\\u002F\\u0041\"", "\"\\\"\\\\/A\""),
    OK("\"\\u00e9\\u00E9\"", "\"\xC3\xA9\xC3\xA9\""),
    OK("\"\\u2713\"", "\"\xE2\x9C\x93\""),
    OK("\"\\uFFFF\"", "\"\xEF\xBF\xBF\""),
    OK("\"\\ud83d\\ude00\"", "\"\xF0\x9F\x98\x80\""),
    OK("\"\\uD800\\uDC00\"", "\"\xF0\x90\x80\x80\""),
    OK("\"\\uDBFF\\uDFFF\"", "\"\xF4\x8F\xBF\xBF\""),
    OK("\"\x7F\"", "\"\x7F\""),
    BAD("\"\\x41\""), BAD("\"\\a\""), BAD("\"\\'\""), BAD("\"\\U0041\""),
    BAD("\"\\u004\""), BAD("\"\\u00g0\""), BAD("\"\\u\""), BAD("\"\\\""),
    BAD("\"\\"), BAD("\"abc"), BAD("\"a\nb\""), BAD("\"a\tb\""),
    BAD("\"\x01\""), BAD("\"\x1f\""),
    /* Surrogates must pair up: high then low, both escaped. */
    BAD("\"\\ud83d\""), BAD("\"\\ude00\""), BAD("\"\\ude00\\ud83d\""),
    BAD("\"\\ud83d\\ud83d\""), BAD("\"\\ud83dx\""), BAD("\"\\ud83d\\n\""),
    BAD("\"\\ud83d\\u0041\""), BAD("\"\\ud83d\\ude0\""),
    BAD("\"\\ud83d\xED\xB8\x80\""),
    /* Raw UTF-8: kept as is when well-formed. */
    OK("\"Zo\xC3\xAB \xE2\x9C\x93 \xE5\x90\x8D \xF0\x9F\x98\x80\"",
       "\"Zo\xC3\xAB \xE2\x9C\x93 \xE5\x90\x8D \xF0\x9F\x98\x80\""),
    OK("\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\"",
       "\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\""),
    BAD("\"\x80\""), BAD("\"\xBF\""), BAD("\"\xC0\x80\""), BAD("\"\xC1\xBF\""),
    BAD("\"\xC2\""), BAD("\"\xC2\x41\""), BAD("\"\xE0\x80\x80\""),
    BAD("\"\xE0\x9F\xBF\""), BAD("\"\xED\xA0\x80\""), BAD("\"\xED\xBF\xBF\""),
    BAD("\"\xE2\x9C\""), BAD("\"\xF0\x80\x80\x80\""), BAD("\"\xF0\x8F\xBF\xBF\""),
    BAD("\"\xF4\x90\x80\x80\""), BAD("\"\xF5\x80\x80\x80\""), BAD("\"\xFF\""),
    BAD("\"\xFE\""), BAD("\"\xF0\x9F\x98\""), BAD("\xE2\x9C\x93"),
    BAD("[\"a\"\xC3\xA9]"),
    /* Repeated names: one member each, with the last value. */
    OK("{\"a\":1,\"a\":2}", "{\"a\":2}"),
    OK("{\"a\":1,\"b\":2,\"a\":3}", "{\"b\":2,\"a\":3}"),
    OK("{\"a\":1,\"\\u0061\":2}", "{\"a\":2}"),
    OK("{\"a\":{\"x\":1,\"x\":2},\"a\":[3]}", "{\"a\":[3]}"),
    OK("{\"a\":{\"x\":1,\"x\":2},\"b\":[3]}", "{\"a\":{\"x\":2},\"b\":[3]}"),
    OK("[{\"k\":1,\"k\":1},{\"k\":2}]", "[{\"k\":1},{\"k\":2}]"),
    OK("{\"a\\\"\":1,\"a\\\\\":2,\"a\\\"\":3}", "{\"a\\\\\":2,\"a\\\"\":3}"),
    OK("{\"ab\":1,\"a\":2,\"abc\":3}", "{\"ab\":1,\"a\":2,\"abc\":3}"),
    /* Embedded NUL inside the document is not JSON (raw control). */
    {"\"a\0b\"", 5, JSON_INVALID, NULL},
    {"[1]\0", 4, JSON_INVALID, NULL},
};

static void run_case(const json_case *jc, sbuf *out, sbuf *work) {
    T_BEGIN;
    size_t n = jc->len ? jc->len : strlen(jc->in);
    out->len = 0;
    /* A prefix already in out must survive (routes append after it). */
    sbuf_put(out, "P", 1);
    int rc = json_reserialize(jc->in, n, out, work);
    T_CHECK(rc == jc->rc);
    T_CHECK(out->data[0] == 'P');
    T_CHECK(work->len == 0);
    if (rc == JSON_OK && jc->out) {
        T_CHECK(out->len - 1 == strlen(jc->out));
        T_CHECK(memcmp(out->data + 1, jc->out, out->len - 1) == 0);
        T_CHECK(out->len - 1 <= n); /* never longer than the input */
    }
    if (rc != JSON_OK) T_CHECK(out->len == 1);
    T_END("json", jc->in);
}

/* n nested arrays (or objects "{"k":...}") around 0. */
static char *nested(int n, int objects, size_t *len) {
    size_t cap = (size_t)n * 6 + 2;
    char *s = malloc(cap), *p = s;
    for (int i = 0; i < n; i++) {
        if (objects) {
            memcpy(p, "{\"k\":", 5);
            p += 5;
        } else {
            *p++ = '[';
        }
    }
    *p++ = '0';
    for (int i = 0; i < n; i++) *p++ = objects ? '}' : ']';
    *len = (size_t)(p - s);
    return s;
}

static void depth(sbuf *out, sbuf *work) {
    static const struct {
        int n, objects, rc;
    } d[] = {
        {1, 0, JSON_OK}, {63, 0, JSON_OK}, {64, 0, JSON_OK},
        {65, 0, JSON_TOO_DEEP}, {100000, 0, JSON_TOO_DEEP},
        {64, 1, JSON_OK}, {65, 1, JSON_TOO_DEEP}, {5000, 1, JSON_TOO_DEEP},
    };
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
        T_BEGIN;
        char name[48];
        size_t n;
        char *s = nested(d[i].n, d[i].objects, &n);
        out->len = 0;
        int rc = json_reserialize(s, n, out, work);
        T_CHECK(rc == d[i].rc);
        if (rc == JSON_OK) T_CHECK(out->len == n && memcmp(out->data, s, n) == 0);
        free(s);
        snprintf(name, sizeof(name), "depth %d %s", d[i].n,
                 d[i].objects ? "objects" : "arrays");
        T_END("json", name);
    }
    /* Unclosed arrays within the limit: plainly invalid. */
    T_BEGIN;
    out->len = 0;
    T_CHECK(json_reserialize("[[[[", 4, out, work) == JSON_INVALID);
    T_END("json", "unclosed arrays");
}

/* Big objects go through the hash table; every name repeated. */
static void big_object(sbuf *out, sbuf *work) {
    T_BEGIN;
    sbuf in = {0}, want = {0};
    char tmp[64];
    sbuf_put(&in, "{", 1);
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(tmp, sizeof(tmp), "%s\"key%d\":%d", i ? "," : "",
                         i % 1000, i);
        sbuf_put(&in, tmp, (size_t)n);
    }
    sbuf_put(&in, "}", 1);
    sbuf_put(&want, "{", 1);
    for (int i = 2000; i < 3000; i++) {
        int n = snprintf(tmp, sizeof(tmp), "%s\"key%d\":%d",
                         i > 2000 ? "," : "", i % 1000, i);
        sbuf_put(&want, tmp, (size_t)n);
    }
    sbuf_put(&want, "}", 1);
    out->len = 0;
    T_CHECK(json_reserialize(in.data, in.len, out, work) == JSON_OK);
    T_CHECK(out->len == want.len &&
            memcmp(out->data, want.data, want.len) == 0);
    sbuf_free(&in);
    sbuf_free(&want);
    T_END("json", "3000 members, 1000 names");
}

static void put_string(sbuf *out) {
    static const struct {
        const char *in;
        size_t len;
        int rc;
        const char *out;
    } c[] = {
        {"", 0, JSON_OK, "\"\""},
        {"plain text", 10, JSON_OK, "\"plain text\""},
        {"q\"b\\s/", 6, JSON_OK, "\"q\\\"b\\\\s/\""},
        {"\x00\x01\x1f\x7f", 4, JSON_OK, "\"\\u0000\\u0001\\u001f\x7f\""},
        {"\b\f\n\r\t", 5, JSON_OK, "\"\\b\\f\\n\\r\\t\""},
        {"\xE2\x9C\x93\xF0\x9F\x98\x80", 7, JSON_OK,
         "\"\xE2\x9C\x93\xF0\x9F\x98\x80\""},
        {"\xFF", 1, JSON_INVALID, NULL},
        {"ok\xE2\x9C", 4, JSON_INVALID, NULL},
        {"\xED\xA0\x80", 3, JSON_INVALID, NULL},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        T_BEGIN;
        out->len = 0;
        int rc = json_put_string(out, c[i].in, c[i].len);
        T_CHECK(rc == c[i].rc);
        if (rc == JSON_OK)
            T_CHECK(out->len == strlen(c[i].out) &&
                    memcmp(out->data, c[i].out, out->len) == 0);
        T_END("json_put_string", c[i].out ? c[i].out : "(invalid)");
    }
}

/* utf8_seq against a plain decode of every 1..3-byte sequence shape, and
 * encode/seq round trips over all scalar values. */
static void utf8_all(void) {
    T_BEGIN;
    char b[4];
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            /* Surrogates encoded as 3 bytes anyway must be rejected. */
            unsigned char s[3] = {(unsigned char)(0xE0 | (cp >> 12)),
                                  (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
                                  (unsigned char)(0x80 | (cp & 0x3F))};
            T_CHECK(utf8_seq(s, 3) == 0);
            continue;
        }
        size_t n = utf8_encode(cp, b);
        T_CHECK(n == (cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u));
        T_CHECK(utf8_seq((const unsigned char *)b, n) == n);
        if (n > 1) T_CHECK(utf8_seq((const unsigned char *)b, n - 1) == 0);
        if (t_why) break;
    }
    /* Overlong forms of U+0000..U+FFFF in one byte more than needed. */
    for (uint32_t cp = 0; cp < 0x800; cp += 7) {
        unsigned char s[3] = {0xE0, (unsigned char)(0x80 | (cp >> 6)),
                              (unsigned char)(0x80 | (cp & 0x3F))};
        T_CHECK(utf8_seq(s, 3) == 0);
    }
    T_CHECK(utf8_valid("", 0));
    T_CHECK(utf8_valid("a\xC3\xA9", 3));
    T_CHECK(!utf8_valid("a\xC3", 2));
    T_END("utf8", "all scalar values");
}

typedef struct post_case {
    const char *body;
    int status;
    const char *out;
} post_case;

static const post_case posts[] = {
    {"{\"name\":\"benchmark\",\"value\":42,\"tags\":[\"a\",\"b\"]}", 200,
     "{\"received\":{\"name\":\"benchmark\",\"value\":42,\"tags\":[\"a\","
     "\"b\"]},\"bytes\":48}"},
    {" [1, \"two\", 3.5] ", 200, "{\"received\":[1,\"two\",3.5],\"bytes\":17}"},
    {"null", 200, "{\"received\":null,\"bytes\":4}"},
    {"\"just a string\"", 200, "{\"received\":\"just a string\",\"bytes\":15}"},
    {"this is not json", 400, NULL},
    {"{\"a\": 1", 400, NULL},
    {"", 400, NULL},
    {"[1, 2] x", 400, NULL},
};

static void post(route_scratch *s) {
    for (size_t i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
        T_BEGIN;
        const post_case *pc = &posts[i];
        route_request rq = {"POST", 4, "/something", 10, NULL, 0, pc->body,
                            strlen(pc->body), s};
        route_response rs;
        routes_handle(&rq, &rs);
        T_CHECK(rs.status == pc->status);
        if (pc->out) {
            T_CHECK(strcmp(rs.content_type, "application/json") == 0);
            T_CHECK(rs.body_in_scratch);
            T_CHECK(rs.body_len == strlen(pc->out) &&
                    memcmp(rs.body, pc->out, rs.body_len) == 0);
        } else {
            T_CHECK(strcmp(rs.content_type, "text/plain") == 0);
            T_CHECK(!rs.body_in_scratch && rs.body_len > 0);
        }
        T_END("post /something", pc->body);
        route_scratch_reset(s, 4096);
    }
}

/* An h2 stream without DATA hands the route a NULL body of length 0: a
 * 400, with nothing computed from the NULL pointer (the conn_h2 fuzz target
 * found NULL + 0 in json_reserialize; its reproducer is
 * fuzz/regressions/conn_h2/post_something_no_data). */
static void post_no_body(route_scratch *s, sbuf *work) {
    T_BEGIN;
    sbuf out = {0};
    T_CHECK(sbuf_put(&out, "P", 1) == 0);
    T_CHECK(json_reserialize(NULL, 0, &out, work) == JSON_INVALID);
    T_CHECK(out.len == 1 && out.data[0] == 'P');
    route_request rq = {"POST", 4, "/something", 10, NULL, 0, NULL, 0, s};
    route_response rs;
    routes_handle(&rq, &rs);
    T_CHECK(rs.status == 400);
    T_CHECK(strcmp(rs.content_type, "text/plain") == 0);
    sbuf_free(&out);
    route_scratch_reset(s, 4096);
    T_END("post /something", "no body at all (NULL, 0)");
}

void test_json(void) {
    app_init();
    sbuf out = {0}, work = {0};
    route_scratch s = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i], &out, &work);
    depth(&out, &work);
    big_object(&out, &work);
    put_string(&out);
    utf8_all();
    post(&s);
    post_no_body(&s, &work);
    sbuf_free(&out);
    sbuf_free(&work);
    route_scratch_free(&s);
}
