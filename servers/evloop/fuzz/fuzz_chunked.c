/* chunked: the incremental chunked-body decoder on arbitrary bytes.
 * Input: byte 0 picks max_body (0, 1, 16, 255, 4096, 1 MiB, 2^40, 2^64-1),
 * byte 1 a split point; the rest is the body as it arrives.
 *
 * The body is decoded four ways: whole, in two pieces cut at the
 * fuzzer-chosen point, one byte at a time, and in place. Every piece comes
 * in its own exactly-sized heap copy and every call gets an exactly-sized
 * output buffer (room for its piece, or max_body - total if smaller), so
 * ASan sees a read or write one byte too far. Checked:
 *   - all four agree on the verdict and, when complete, on the bytes
 *     consumed; when not an error, on the decoded bytes;
 *   - a complete body consumes at most its input and ends in CRLF; the
 *     decoded size never exceeds the bytes consumed nor max_body;
 *   - after the end (S_DONE) the decoder refuses more input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http1/chunked.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) __builtin_trap();                                         \
    } while (0)

typedef struct result {
    ssize_t code; /* consumed (from the body's start) or CHUNKED_* */
    char *out;
    size_t out_len;
} result;

/* One call on a heap copy of src[0..n) with an exactly-sized dst. */
static ssize_t call(chunked_decoder *d, const char *src, size_t n,
                    result *res) {
    uint64_t left = d->max_body - d->total;
    size_t room = (uint64_t)n < left ? n : (size_t)left;
    char *piece = malloc(n ? n : 1), *dst = malloc(room ? room : 1);
    memcpy(piece, src, n);
    size_t w = 0;
    ssize_t r = chunked_decode(d, piece, n, dst, &w);
    CHECK(w <= room);
    CHECK(r == CHUNKED_ERROR || r == CHUNKED_NEED_MORE ||
          r == CHUNKED_TOO_LARGE || (r > 0 && (size_t)r <= n));
    memcpy(res->out + res->out_len, dst, w);
    res->out_len += w;
    free(piece);
    free(dst);
    return r;
}

/* Feeds in[0..len) in pieces of `step` bytes, or (step 0) split bytes and
 * then the rest. */
static result feed(const char *in, size_t len, uint64_t max_body,
                   size_t step, size_t split) {
    chunked_decoder d;
    result res = {CHUNKED_NEED_MORE, malloc(len + 1), 0};
    size_t pos = 0;
    chunked_init(&d, max_body);
    while (pos < len) {
        size_t n = step ? step : (pos == 0 && split ? split : len - pos);
        if (n > len - pos) n = len - pos;
        ssize_t r = call(&d, in + pos, n, &res);
        if (r == CHUNKED_NEED_MORE) {
            pos += n;
            continue;
        }
        res.code = r > 0 ? (ssize_t)pos + r : r;
        if (r > 0) {
            /* Done: anything more belongs to the next message. */
            size_t w;
            char x = '0';
            CHECK(chunked_decode(&d, &x, 1, &x, &w) == CHUNKED_ERROR);
        }
        break;
    }
    CHECK(d.total <= max_body);
    return res;
}

static void check_same(const result *a, const result *b) {
    CHECK(a->code == b->code);
    if (a->code == CHUNKED_ERROR || a->code == CHUNKED_TOO_LARGE) return;
    CHECK(a->out_len == b->out_len &&
          memcmp(a->out, b->out, a->out_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint64_t limits[8] = {0,       1,         16,
                                       255,     4096,      1 << 20,
                                       1ULL << 40, UINT64_MAX};
    if (size < 2) return 0;
    uint64_t max_body = limits[data[0] & 7];
    const char *in = (const char *)data + 2;
    size_t len = size - 2;
    size_t split = len ? data[1] % (len + 1) : 0;

    result whole = feed(in, len, max_body, 0, 0);
    result two = feed(in, len, max_body, 0, split);
    result bytes = feed(in, len, max_body, 1, 0);
    check_same(&whole, &two);
    check_same(&whole, &bytes);

    if (whole.code > 0) {
        CHECK(whole.code >= 5 && (size_t)whole.code <= len); /* "0\r\n\r\n" */
        CHECK(in[whole.code - 2] == '\r' && in[whole.code - 1] == '\n');
    }
    if (whole.code != CHUNKED_ERROR && whole.code != CHUNKED_TOO_LARGE)
        CHECK(whole.out_len <= len && whole.out_len <= max_body);

    /* In place: dst == src. */
    char *buf = malloc(len ? len : 1);
    memcpy(buf, in, len);
    chunked_decoder d;
    size_t w = 0;
    chunked_init(&d, max_body);
    ssize_t r = chunked_decode(&d, buf, len, buf, &w);
    CHECK(r == whole.code);
    if (r != CHUNKED_ERROR && r != CHUNKED_TOO_LARGE)
        CHECK(w == whole.out_len && memcmp(buf, whole.out, w) == 0);
    free(buf);

    free(whole.out);
    free(two.out);
    free(bytes.out);
    return 0;
}
