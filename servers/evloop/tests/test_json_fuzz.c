/* Fuzzing the JSON parser/serializer and the query route, deterministically
 * (fixed PRNG seed), under the ASan/UBSan build of the tests.
 *
 * JSON: 200k inputs -- seed documents with 1..4 mutations each, plus some
 * random strings over a JSON-heavy alphabet. For each:
 *   - the verdict (OK / INVALID / TOO_DEEP) must equal that of a separate,
 *     deliberately different reference validator below (recursive, decodes
 *     code points arithmetically instead of using range tables);
 *   - accepted input: the output is no longer than the input, the reference
 *     accepts it, and re-serializing it gives the same bytes (the canonical
 *     form is a fixed point).
 * Query: 50k mutated query strings through GET /something; every JSON
 * answer must re-serialize to itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/json.h"
#include "http/routes.h"
#include "test.h"

#define FUZZ_JSON_RUNS 200000
#define FUZZ_QUERY_RUNS 50000
#define FUZZ_MAX 4096

/* ---- PRNG: xorshift64*, fixed seed so failures reproduce ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

/* ---- reference validator ---- */

typedef struct ref {
    const unsigned char *p, *end;
} ref;

static int ref_value(ref *r, int depth);

static void ref_ws(ref *r) {
    while (r->p < r->end && strchr(" \t\r\n", *r->p) && *r->p) r->p++;
}

static int ref_hex4(ref *r, uint32_t *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        if (r->p == r->end) return 0;
        unsigned char c = *r->p++;
        uint32_t d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10u;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10u;
        else return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

/* One raw UTF-8 character: decode, then judge the code point. */
static int ref_utf8(ref *r) {
    unsigned char c = *r->p++;
    int more;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) more = 1, cp = c & 0x1Fu, min = 0x80;
    else if ((c & 0xF0) == 0xE0) more = 2, cp = c & 0x0Fu, min = 0x800;
    else if ((c & 0xF8) == 0xF0) more = 3, cp = c & 0x07u, min = 0x10000;
    else return 0;
    while (more--) {
        if (r->p == r->end || (*r->p & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (*r->p++ & 0x3Fu);
    }
    return cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

static int ref_string(ref *r) {
    r->p++; /* '"' */
    while (r->p < r->end) {
        unsigned char c = *r->p;
        if (c == '"') {
            r->p++;
            return 1;
        }
        if (c < 0x20) return 0;
        if (c >= 0x80) {
            if (!ref_utf8(r)) return 0;
            continue;
        }
        r->p++;
        if (c != '\\') continue;
        if (r->p == r->end) return 0;
        c = *r->p++;
        if (c == 'u') {
            uint32_t v, w;
            if (!ref_hex4(r, &v)) return 0;
            if (v >= 0xDC00 && v <= 0xDFFF) return 0;
            if (v >= 0xD800 && v <= 0xDBFF) {
                if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
                    return 0;
                r->p += 2;
                if (!ref_hex4(r, &w) || w < 0xDC00 || w > 0xDFFF) return 0;
            }
        } else if (!c || !strchr("\"\\/bfnrt", c)) {
            return 0;
        }
    }
    return 0;
}

static int ref_digit(ref *r) {
    return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

static int ref_number(ref *r) {
    if (r->p < r->end && *r->p == '-') r->p++;
    if (!ref_digit(r)) return 0;
    if (*r->p++ != '0')
        while (ref_digit(r)) r->p++;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (!ref_digit(r)) return 0;
        while (ref_digit(r)) r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
        if (!ref_digit(r)) return 0;
        while (ref_digit(r)) r->p++;
    }
    return 1;
}

/* JSON_OK, JSON_INVALID or JSON_TOO_DEEP; depth = containers already open. */
static int ref_container(ref *r, int depth, int obj) {
    int rc;
    if (depth == JSON_MAX_DEPTH) return JSON_TOO_DEEP;
    r->p++;
    ref_ws(r);
    if (r->p < r->end && *r->p == (obj ? '}' : ']')) {
        r->p++;
        return JSON_OK;
    }
    for (;;) {
        if (obj) {
            ref_ws(r);
            if (r->p == r->end || *r->p != '"' || !ref_string(r))
                return JSON_INVALID;
            ref_ws(r);
            if (r->p == r->end || *r->p++ != ':') return JSON_INVALID;
        }
        if ((rc = ref_value(r, depth + 1)) != JSON_OK) return rc;
        ref_ws(r);
        if (r->p == r->end) return JSON_INVALID;
        unsigned char c = *r->p++;
        if (c == (obj ? '}' : ']')) return JSON_OK;
        if (c != ',') return JSON_INVALID;
    }
}

static int ref_value(ref *r, int depth) {
    static const char *const words[] = {"true", "false", "null"};
    ref_ws(r);
    if (r->p == r->end) return JSON_INVALID;
    switch (*r->p) {
    case '[': return ref_container(r, depth, 0);
    case '{': return ref_container(r, depth, 1);
    case '"': return ref_string(r) ? JSON_OK : JSON_INVALID;
    default: break;
    }
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i], n) == 0) {
            r->p += n;
            return JSON_OK;
        }
    }
    return ref_number(r) ? JSON_OK : JSON_INVALID;
}

static int ref_validate(const char *s, size_t n) {
    ref r = {(const unsigned char *)s, (const unsigned char *)s + n};
    int rc = ref_value(&r, 0);
    if (rc != JSON_OK) return rc;
    ref_ws(&r);
    return r.p == r.end ? JSON_OK : JSON_INVALID;
}

/* ---- inputs ---- */

static const char *const seeds[] = {
    "{\"name\":\"benchmark\",\"value\":42,\"tags\":[\"a\",\"b\"]}",
    "{\"name\": \"Zo\xC3\xAB \xE2\x9C\x93 \xE5\x90\x8D \xF0\x9F\x98\x80\", "
    "\"escapes\": \"q \\\" b \\\\ s \\/ t \\t n \\n c \\u0001\", "
    "\"ints\": [0, -1, 42, 9007199254740991], "
    "\"floats\": [3.25, -0.5, 1e-07, 6.02e+23, 1.5E300], "
    "\"flags\": [true, false, null], "
    "\"nested\": {\"a\": {\"b\": {\"c\": [1, [2, [3, {\"d\": \"deep\"}]]]}}, "
    "\"empty\": {}, \"list\": []}, \"\": \"empty key\"}",
    "[\"\\ud83d\\ude00\", \"\\u00e9\", \"\\uDBFF\\uDFFF\", \"\\u0000\"]",
    "{\"a\":1,\"b\":2,\"a\":3,\"c\":{\"x\":[],\"x\":{}}}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "  -0.0e-0  ",
    "\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"",
    "[1,2,3,4,5,6,7,8,9,10,11,12,13]",
    "{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,"
    "\"k9\":9,\"k1\":10,\"k2\":11}",
    "true",
    "null",
    "\"\xF4\x8F\xBF\xBF\xC2\x80\xEF\xBF\xBF\"",
};

/* Bytes mutations pick from: mostly JSON's own characters, so mutants
 * stay close to the grammar's edges, and sometimes any byte. */
static const char alphabet[] = "{}[]:,\"\\ \n0123456789-+.eEtrufalsn/ubfu"
                               "DdCc\x80\xBF\xC3\xE2\xED\xF0\xF4\xFF";

static unsigned char random_byte(void) {
    if (below(4) == 0) return (unsigned char)below(256);
    return (unsigned char)alphabet[below(sizeof(alphabet) - 1)];
}

static size_t mutate(char *buf, size_t n) {
    int rounds = 1 + (int)below(4);
    while (rounds--) {
        size_t at = below(n + 1);
        switch (below(6)) {
        case 0: /* replace */
            if (n) buf[below(n)] = (char)random_byte();
            break;
        case 1: /* insert */
            if (n < FUZZ_MAX) {
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = (char)random_byte();
                n++;
            }
            break;
        case 2: { /* delete a short range */
            size_t k = 1 + below(4);
            if (at + k <= n) {
                memmove(buf + at, buf + at + k, n - at - k);
                n -= k;
            }
            break;
        }
        case 3: { /* duplicate a range in place */
            size_t k = below(32);
            if (at + k <= n && n + k <= FUZZ_MAX) {
                memmove(buf + at + k, buf + at, n - at);
                n += k;
            }
            break;
        }
        case 4: { /* splice in part of another seed */
            const char *s = seeds[below(sizeof(seeds) / sizeof(seeds[0]))];
            size_t sl = strlen(s), from = below(sl), k = below(sl - from + 1);
            if (n + k <= FUZZ_MAX) {
                memmove(buf + at + k, buf + at, n - at);
                memcpy(buf + at, s + from, k);
                n += k;
            }
            break;
        }
        default: /* truncate */
            n = at;
            break;
        }
    }
    return n;
}

static size_t make_input(char *buf) {
    if (below(10) == 0) { /* random string */
        size_t n = below(64);
        for (size_t i = 0; i < n; i++) buf[i] = (char)random_byte();
        return n;
    }
    const char *s = seeds[below(sizeof(seeds) / sizeof(seeds[0]))];
    size_t n = strlen(s);
    memcpy(buf, s, n);
    return mutate(buf, n);
}

static void fuzz_json(void) {
    T_BEGIN;
    char *buf = malloc(FUZZ_MAX);
    sbuf out = {0}, again = {0}, work = {0};
    long accepted = 0;
    char name[64];

    for (long i = 0; i < FUZZ_JSON_RUNS && !t_why; i++) {
        size_t n = make_input(buf);
        out.len = 0;
        int rc = json_reserialize(buf, n, &out, &work);
        T_CHECK(rc == ref_validate(buf, n));
        T_CHECK(work.len == 0);
        if (rc != JSON_OK) continue;
        accepted++;
        T_CHECK(out.len <= n);
        T_CHECK(ref_validate(out.data, out.len) == JSON_OK);
        again.len = 0;
        T_CHECK(json_reserialize(out.data, out.len, &again, &work) == JSON_OK);
        T_CHECK(again.len == out.len &&
                memcmp(again.data, out.data, out.len) == 0);
        if (t_why) fprintf(stderr, "fuzz input %ld: %.*s\n", i, (int)n, buf);
    }
    /* Guard against a fuzzer that only ever produces garbage. */
    T_CHECK(accepted > FUZZ_JSON_RUNS / 20);
    free(buf);
    sbuf_free(&out);
    sbuf_free(&again);
    sbuf_free(&work);
    snprintf(name, sizeof(name), "%d inputs, %ld accepted", FUZZ_JSON_RUNS,
             accepted);
    T_END("json fuzz", name);
}

static const char *const query_seeds[] = {
    "json=true&x=1&name=Zo%C3%AB&x=2",
    "a=1&b=x%20y&c=%E2%9C%93",
    "json=true&q=%22%5C%0A%01/%7F&&k",
    "a=1&a=2&plus=x+y&=v&flag",
};

static void fuzz_query(void) {
    T_BEGIN;
    char buf[FUZZ_MAX];
    route_scratch s = {0};
    sbuf again = {0}, work = {0};
    long json_answers = 0;

    for (long i = 0; i < FUZZ_QUERY_RUNS && !t_why; i++) {
        const char *seed = query_seeds[below(4)];
        size_t n = strlen(seed);
        memcpy(buf, seed, n);
        n = mutate(buf, n);
        route_request rq = {"GET", 3, "/something", 10, buf, n, NULL, 0, &s};
        route_response rs;
        routes_handle(&rq, &rs);
        T_CHECK(rs.status == 200 || rs.status == 400);
        if (rs.status == 200 && strcmp(rs.content_type, "application/json") == 0) {
            json_answers++;
            again.len = 0;
            T_CHECK(json_reserialize(rs.body, rs.body_len, &again, &work) ==
                    JSON_OK);
            T_CHECK(again.len == rs.body_len &&
                    memcmp(again.data, rs.body, rs.body_len) == 0);
        }
        route_scratch_reset(&s, 4096);
    }
    T_CHECK(json_answers > FUZZ_QUERY_RUNS / 20);
    route_scratch_free(&s);
    sbuf_free(&again);
    sbuf_free(&work);
    T_END("query fuzz", "50000 queries through GET /something");
}

void test_json_fuzz(void) {
    app_init();
    fuzz_json();
    fuzz_query();
}
