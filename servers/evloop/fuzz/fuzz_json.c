/* json: json_reserialize (the one-pass validator and re-serializer behind
 * POST /something) on arbitrary bytes.
 *
 * The output buffer is allocated at exactly what the parser reserves (one
 * byte already in it plus the input's length), so ASan sees any write past
 * the "output is never longer than the input" promise, even on inputs that
 * turn out invalid. Checked:
 *   - the verdict is OK, INVALID or TOO_DEEP; on error the output is left as
 *     it was; the work buffer's contents and length are kept either way;
 *   - an accepted document's output is no longer than the input, is
 *     well-formed UTF-8, compact (no whitespace outside strings), and a
 *     fixed point: re-serializing it gives the same bytes;
 *   - context does not change a value: "[" in "]" and {"k":in} are accepted
 *     (or too deep) and serialize to "[" out "]" and {"k":out}. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/json.h"
#include "app/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) __builtin_trap();                                         \
    } while (0)

/* Re-serializes in[0..n) into an exactly-sized output that already holds
 * one byte ('P'), with a work buffer that already holds "abc". Returns the
 * verdict; *out (malloc'd) and *out_len are the output (empty on error). */
static int reser(const char *in, size_t n, char **out, size_t *out_len) {
    sbuf o = {malloc(n + 1), 1, n + 1};
    sbuf w = {malloc(3), 3, 3};
    o.data[0] = 'P';
    memcpy(w.data, "abc", 3);
    int rc = json_reserialize(in, n, &o, &w);
    CHECK(rc == JSON_OK || rc == JSON_INVALID || rc == JSON_TOO_DEEP);
    CHECK(o.data[0] == 'P');
    CHECK(w.len == 3 && !memcmp(w.data, "abc", 3));
    if (rc != JSON_OK) CHECK(o.len == 1);
    else CHECK(o.len - 1 <= n);
    *out_len = o.len - 1;
    *out = malloc(*out_len + 1);
    memcpy(*out, o.data + 1, *out_len);
    sbuf_free(&o);
    sbuf_free(&w);
    return rc;
}

static void check_compact(const char *s, size_t n) {
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
            else CHECK((unsigned char)c >= 0x20);
        } else {
            CHECK(c != ' ' && c != '\t' && c != '\n' && c != '\r');
            if (c == '"') in_str = 1;
        }
    }
    CHECK(!in_str);
}

/* pre + in + post must be accepted (or too deep) as pre + out + post. */
static void check_wrapped(const char *in, size_t n, const char *out,
                          size_t out_len, const char *pre, const char *post) {
    size_t lp = strlen(pre), lq = strlen(post);
    char *w = malloc(lp + n + lq), *expect = malloc(lp + out_len + lq);
    memcpy(w, pre, lp);
    memcpy(w + lp, in, n);
    memcpy(w + lp + n, post, lq);
    memcpy(expect, pre, lp);
    memcpy(expect + lp, out, out_len);
    memcpy(expect + lp + out_len, post, lq);
    char *got;
    size_t got_len;
    int rc = reser(w, lp + n + lq, &got, &got_len);
    CHECK(rc == JSON_OK || rc == JSON_TOO_DEEP);
    if (rc == JSON_OK)
        CHECK(got_len == lp + out_len + lq &&
              !memcmp(got, expect, got_len));
    free(got);
    free(w);
    free(expect);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* No bytes come as NULL, as an h2 body without DATA does. */
    const char *in = size ? (const char *)data : NULL;
    char *out, *again;
    size_t out_len, again_len;

    int rc = reser(in, size, &out, &out_len);
    if (rc == JSON_OK) {
        CHECK(utf8_valid(out, out_len));
        check_compact(out, out_len);
        CHECK(reser(out, out_len, &again, &again_len) == JSON_OK);
        CHECK(again_len == out_len && !memcmp(again, out, out_len));
        free(again);
        check_wrapped(in, size, out, out_len, "[", "]");
        check_wrapped(in, size, out, out_len, "{\"k\":", "}");
    }
    free(out);
    return 0;
}
