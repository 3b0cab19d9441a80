/* http1_parser: h1_parse_request and h1_request_semantics on arbitrary
 * bytes (the whole input is the buffer; each prefix is parsed from its own
 * exactly-sized copy, so ASan sees any read past the end).
 *
 * Checked beyond "no sanitizer report":
 *   - a complete head's length is within the input, and every pointer the
 *     parser returns (method, target, path, query, header names and values,
 *     the Upgrade value) lies inside the head;
 *   - what it returns obeys the grammar it enforces: method and field names
 *     are non-empty tokens; the target is non-empty visible bytes; path and
 *     query split the target at its first '?'; values hold no CR, LF or NUL
 *     and no leading or trailing whitespace; versions are single digits; at
 *     most H1_MAX_HEADERS fields;
 *   - being stateless, the verdict does not depend on how the head arrived:
 *     a prefix of a complete head is NEED_MORE; a prefix of erroneous input
 *     is NEED_MORE or the same error; more bytes after a complete head
 *     change nothing (same length, same fields);
 *   - semantics: chunked only with Transfer-Encoding and never with
 *     Content-Length; the verdict is the same for the same head. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http1/http1_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) __builtin_trap();                                         \
    } while (0)

static int tchar(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int inside(const char *p, size_t n, const char *base, size_t len) {
    return p >= base && n <= len && (size_t)(p - base) <= len - n;
}

static ssize_t parse_copy(const char *buf, size_t len, h1_request *req) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    ssize_t r = h1_parse_request(copy, len, req);
    /* Rebase the pointers onto buf, so callers compare them with buf. */
#define REBASE(p) ((p) = buf + ((p) - copy))
    if (r > 0) {
        REBASE(req->method);
        REBASE(req->target);
        REBASE(req->path);
        if (req->query) REBASE(req->query);
        for (size_t i = 0; i < req->num_headers; i++) {
            REBASE(req->headers[i].name);
            REBASE(req->headers[i].value);
        }
    }
#undef REBASE
    free(copy);
    return r;
}

static void check_request(const h1_request *rq, const char *buf, size_t n) {
    CHECK(rq->method_len > 0 && inside(rq->method, rq->method_len, buf, n));
    for (size_t i = 0; i < rq->method_len; i++)
        CHECK(tchar((unsigned char)rq->method[i]));
    CHECK(rq->target_len > 0 && inside(rq->target, rq->target_len, buf, n));
    for (size_t i = 0; i < rq->target_len; i++) {
        unsigned char c = (unsigned char)rq->target[i];
        CHECK(c > 0x20 && c != 0x7f);
    }
    const char *q = memchr(rq->target, '?', rq->target_len);
    CHECK(rq->path == rq->target);
    if (q) {
        CHECK(rq->path_len == (size_t)(q - rq->target));
        CHECK(rq->query == q + 1);
        CHECK(rq->query_len == rq->target_len - rq->path_len - 1);
    } else {
        CHECK(rq->path_len == rq->target_len && !rq->query &&
              rq->query_len == 0);
    }
    CHECK(rq->major >= 0 && rq->major <= 9 && rq->minor >= 0 &&
          rq->minor <= 9);
    CHECK(rq->num_headers <= H1_MAX_HEADERS);
    for (size_t i = 0; i < rq->num_headers; i++) {
        const h1_header *h = &rq->headers[i];
        CHECK(h->name_len > 0 && inside(h->name, h->name_len, buf, n));
        for (size_t k = 0; k < h->name_len; k++)
            CHECK(tchar((unsigned char)h->name[k]));
        CHECK(inside(h->value, h->value_len, buf, n));
        for (size_t k = 0; k < h->value_len; k++) {
            unsigned char c = (unsigned char)h->value[k];
            CHECK(c != '\r' && c != '\n' && c != 0);
        }
        if (h->value_len) {
            CHECK(h->value[0] != ' ' && h->value[0] != '\t');
            CHECK(h->value[h->value_len - 1] != ' ' &&
                  h->value[h->value_len - 1] != '\t');
        }
    }
}

static int same_request(const h1_request *a, const h1_request *b) {
    if (a->method != b->method || a->method_len != b->method_len ||
        a->target != b->target || a->target_len != b->target_len ||
        a->query != b->query || a->query_len != b->query_len ||
        a->major != b->major || a->minor != b->minor ||
        a->num_headers != b->num_headers)
        return 0;
    for (size_t i = 0; i < a->num_headers; i++)
        if (a->headers[i].name != b->headers[i].name ||
            a->headers[i].name_len != b->headers[i].name_len ||
            a->headers[i].value != b->headers[i].value ||
            a->headers[i].value_len != b->headers[i].value_len)
            return 0;
    return 1;
}

static h1_request req, req2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *buf = (const char *)data;
    ssize_t r = h1_parse_request(buf, size, &req);

    CHECK(r == H1_PARSE_ERROR || r == H1_PARSE_NEED_MORE || r > 0);
    if (r > 0) {
        CHECK((size_t)r <= size);
        check_request(&req, buf, (size_t)r);
        /* The same head, cut right after its end: same answer. */
        CHECK(parse_copy(buf, (size_t)r, &req2) == r);
        CHECK(same_request(&req, &req2));
        /* One byte short: not complete yet. */
        CHECK(parse_copy(buf, (size_t)r - 1, &req2) == H1_PARSE_NEED_MORE);
        CHECK(parse_copy(buf, (size_t)r / 2, &req2) == H1_PARSE_NEED_MORE);

        h1_semantics sem, sem2;
        int v = h1_request_semantics(&req, &sem);
        CHECK(v == H1_SEM_OK || v == H1_SEM_BAD_REQUEST ||
              v == H1_SEM_NOT_IMPLEMENTED);
        CHECK(h1_request_semantics(&req, &sem2) == v);
        if (v == H1_SEM_OK) {
            CHECK(!sem.chunked ||
                  (sem.has_transfer_encoding && !sem.has_content_length));
            CHECK(!sem.has_transfer_encoding || sem.chunked);
            CHECK(sem.host_count <= 1);
            CHECK(!sem.upgrade ||
                  inside(sem.upgrade, sem.upgrade_len, buf, (size_t)r));
        }
    } else {
        /* Any prefix is NEED_MORE or the same verdict; the full input's
         * verdict is an error only if some prefix is not NEED_MORE or the
         * whole is. */
        size_t cut = size / 2;
        ssize_t r2 = parse_copy(buf, cut, &req2);
        CHECK(r2 == H1_PARSE_NEED_MORE || r2 == r);
        if (size) {
            r2 = parse_copy(buf, size - 1, &req2);
            CHECK(r2 == H1_PARSE_NEED_MORE || r2 == r);
        }
    }
    return 0;
}
