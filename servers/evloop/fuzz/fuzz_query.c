/* query: the whole input is a query string. It goes through the parameter
 * iterator, the percent-decoder and GET /something (text and JSON answers),
 * and through /echo's size parser.
 *
 * Checked beyond "no sanitizer report":
 *   - the iterator yields exactly the non-empty '&'-separated parameters,
 *     in order, pointing into the input: name up to the first '=', the
 *     rest the value;
 *   - query_decode never writes past its output: every component is
 *     decoded into an exactly-sized heap buffer (decoding never grows), and
 *     the result equals a separate byte-at-a-time reference decoder's
 *     (malformed escapes included);
 *   - query_decoded_eq agrees with decoding and comparing;
 *   - GET /something answers 400 exactly when some component is malformed
 *     (or, for the JSON answer, decodes to non-UTF-8); the text answer is
 *     the decoded "name=value\n" lines; the JSON answer has the fixed frame
 *     and re-serializes to itself;
 *   - app_parse_size accepts only sizes up to APP_ECHO_MAX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/json.h"
#include "app/query.h"
#include "app/utf8.h"
#include "http/routes.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The application's routes, installed once. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    app_init();
    return 0;
}

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) __builtin_trap();                                         \
    } while (0)

static int hexv(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reference: one byte at a time. -1 when malformed. */
static ssize_t ref_decode(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '+') out[o++] = ' ';
        else if (c != '%') out[o++] = (char)c;
        else {
            if (n - i < 3) return -1;
            int h = hexv((unsigned char)s[i + 1]),
                l = hexv((unsigned char)s[i + 2]);
            if (h < 0 || l < 0) return -1;
            out[o++] = (char)(h * 16 + l);
            i += 2;
        }
    }
    return (ssize_t)o;
}

/* Decodes s[0..n) both ways and compares; returns the decoded length (-1:
 * malformed) with the bytes in *out (malloc'd, caller frees). */
static ssize_t decode(const char *s, size_t n, char **out) {
    char *dst = malloc(n ? n : 1), *ref = malloc(n ? n : 1);
    ssize_t r = query_decode(s, n, dst);
    ssize_t rr = ref_decode(s, n, ref);
    CHECK(r == rr);
    if (r >= 0) CHECK((size_t)r <= n && memcmp(dst, ref, (size_t)r) == 0);
    static const char *const lits[] = {"json", "true", ""};
    for (int i = 0; i < 3; i++) {
        size_t ll = strlen(lits[i]);
        int eq = r >= 0 && (size_t)r == ll && memcmp(ref, lits[i], ll) == 0;
        CHECK(query_decoded_eq(s, n, lits[i]) == eq);
    }
    free(ref);
    *out = dst;
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* No bytes come as NULL: a target without '?' has no query at all. */
    const char *q = size ? (const char *)data : NULL;
    query_iter it;
    query_param p;
    size_t pos = 0;
    int malformed = 0, json = 0, bad_utf8 = 0;
    /* The text answer as it must be, built from the reference decoder. */
    char *expect = malloc(size + 2 * size + 2);
    size_t elen = 0;

    query_iter_init(&it, q, size);
    while (query_next(&it, &p)) {
        /* The next non-empty segment of the input. */
        while (pos < size && q[pos] == '&') pos++;
        CHECK(pos < size && p.name == q + pos);
        const char *amp = memchr(q + pos, '&', size - pos);
        size_t seg = (amp ? (size_t)(amp - q) : size) - pos;
        const char *eqs = memchr(q + pos, '=', seg);
        CHECK(p.name_len == (eqs ? (size_t)(eqs - p.name) : seg));
        if (eqs) CHECK(p.value == eqs + 1 && p.value_len == seg - p.name_len - 1);
        else CHECK(p.value_len == 0);
        pos += seg;

        char *name, *value;
        ssize_t nn = decode(p.name, p.name_len, &name);
        ssize_t vn = decode(p.value, p.value_len, &value);
        if (nn < 0 || vn < 0) malformed = 1;
        else {
            if (nn == 4 && !memcmp(name, "json", 4) && vn == 4 &&
                !memcmp(value, "true", 4))
                json = 1;
            if (!utf8_valid(name, (size_t)nn) ||
                !utf8_valid(value, (size_t)vn))
                bad_utf8 = 1;
            memcpy(expect + elen, name, (size_t)nn);
            elen += (size_t)nn;
            expect[elen++] = '=';
            memcpy(expect + elen, value, (size_t)vn);
            elen += (size_t)vn;
            expect[elen++] = '\n';
        }
        free(name);
        free(value);
    }
    while (pos < size && q[pos] == '&') pos++;
    CHECK(pos == size);

    route_scratch s = {0};
    route_request rq = {"GET", 3, "/something", 10, q, size, NULL, 0, &s};
    route_response rs;
    routes_handle(&rq, &rs);
    if (malformed || (json && bad_utf8)) {
        CHECK(rs.status == 400);
    } else if (!json) {
        CHECK(rs.status == 200 && !strcmp(rs.content_type, "text/plain"));
        /* (an empty answer may have a NULL body) */
        CHECK(rs.body_len == elen &&
              (elen == 0 || !memcmp(rs.body, expect, elen)));
    } else {
        static const char head[] = "{\"message\":\"Hello, World!\",\"query\":{";
        CHECK(rs.status == 200 &&
              !strcmp(rs.content_type, "application/json"));
        CHECK(rs.body_len >= sizeof(head) + 1 &&
              !memcmp(rs.body, head, sizeof(head) - 1) &&
              !memcmp(rs.body + rs.body_len - 2, "}}", 2));
        sbuf again = {0}, work = {0};
        CHECK(json_reserialize(rs.body, rs.body_len, &again, &work) ==
              JSON_OK);
        CHECK(again.len == rs.body_len &&
              !memcmp(again.data, rs.body, rs.body_len));
        sbuf_free(&again);
        sbuf_free(&work);
    }
    route_scratch_free(&s);
    free(expect);

    size_t n;
    if (app_parse_size(q, size, &n) == 0) CHECK(n <= APP_ECHO_MAX);
    return 0;
}
