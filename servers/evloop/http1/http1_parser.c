#include "http1_parser.h"

#include <string.h>
#include <strings.h>

/* RFC 9110 tchar: the bytes allowed in methods and field names. */
static const unsigned char tchar[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
    /* 0x80..0xff: never tchar */
};

#define NEED_MORE H1_PARSE_NEED_MORE
#define ERROR H1_PARSE_ERROR

/* Expects the two bytes "\r\n" at *pp. A lone CR is never accepted. */
static int expect_crlf(const unsigned char **pp, const unsigned char *end) {
    const unsigned char *p = *pp;
    if (p == end) return NEED_MORE;
    if (*p != '\r') return ERROR;
    if (p + 1 == end) return NEED_MORE;
    if (p[1] != '\n') return ERROR;
    *pp = p + 2;
    return 0;
}

static int parse_version(const unsigned char **pp, const unsigned char *end,
                         h1_request *req) {
    static const char proto[] = "HTTP/";
    const unsigned char *p = *pp;
    for (int i = 0; i < 5; i++, p++) {
        if (p == end) return NEED_MORE;
        if (*p != (unsigned char)proto[i]) return ERROR;
    }
    if (p == end) return NEED_MORE;
    if (*p < '0' || *p > '9') return ERROR;
    req->major = *p++ - '0';
    if (p == end) return NEED_MORE;
    if (*p++ != '.') return ERROR;
    if (p == end) return NEED_MORE;
    if (*p < '0' || *p > '9') return ERROR;
    req->minor = *p++ - '0';
    *pp = p;
    return 0;
}

static int parse_field(const unsigned char **pp, const unsigned char *end,
                       h1_header *h) {
    const unsigned char *p = *pp, *start = p;
    while (p < end && tchar[*p]) p++;
    if (p == end) return NEED_MORE;
    /* An empty name here also rejects obs-fold (a line starting with SP or
     * HTAB) and "Name :" (whitespace before the colon, RFC 9112 5.1). */
    if (p == start || *p != ':') return ERROR;
    h->name = (const char *)start;
    h->name_len = (size_t)(p - start);
    p++;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    start = p;
    const unsigned char *last = p; /* one past the last non-OWS byte */
    for (;;) {
        if (p == end) return NEED_MORE;
        unsigned char c = *p;
        if (c == '\r') break;
        if (c == ' ' || c == '\t') {
            p++;
            continue;
        }
        /* NUL, bare LF and other CTLs are never valid field content. */
        if (c < 0x20 || c == 0x7f) return ERROR;
        last = ++p;
    }
    int r = expect_crlf(&p, end);
    if (r) return r;
    h->value = (const char *)start;
    h->value_len = (size_t)(last - start);
    *pp = p;
    return 0;
}

ssize_t h1_parse_request(const char *buf, size_t len, h1_request *req) {
    const unsigned char *p = (const unsigned char *)buf, *end = p + len;
    const unsigned char *start;
    int r;

    req->num_headers = 0;
    /* RFC 9112 2.2: a server SHOULD ignore empty lines before the
     * request-line (some clients send CRLF after a POST body). */
    while (p < end && *p == '\r') {
        if ((r = expect_crlf(&p, end))) return r;
    }

    start = p;
    while (p < end && tchar[*p]) p++;
    if (p == end) return NEED_MORE;
    if (p == start || *p != ' ') return ERROR;
    req->method = (const char *)start;
    req->method_len = (size_t)(p - start);
    p++;

    /* request-target: visible bytes only (obs-text tolerated); exactly one
     * SP on each side. */
    start = p;
    while (p < end && *p > 0x20 && *p != 0x7f) p++;
    if (p == end) return NEED_MORE;
    if (p == start || *p != ' ') return ERROR;
    req->target = (const char *)start;
    req->target_len = (size_t)(p - start);
    p++;

    if ((r = parse_version(&p, end, req))) return r;
    if ((r = expect_crlf(&p, end))) return r;

    for (;;) {
        if (p == end) return NEED_MORE;
        if (*p == '\r') {
            if ((r = expect_crlf(&p, end))) return r;
            break;
        }
        if (req->num_headers == H1_MAX_HEADERS) return ERROR;
        if ((r = parse_field(&p, end, &req->headers[req->num_headers])))
            return r;
        req->num_headers++;
    }

    const char *q = memchr(req->target, '?', req->target_len);
    req->path = req->target;
    if (q) {
        req->path_len = (size_t)(q - req->target);
        req->query = q + 1;
        req->query_len = req->target_len - req->path_len - 1;
    } else {
        req->path_len = req->target_len;
        req->query = NULL;
        req->query_len = 0;
    }
    return (ssize_t)(p - (const unsigned char *)buf);
}

/* ---- semantics ------------------------------------------------------- */

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Case-insensitive compare of s[0..n) against a lowercase literal. */
static int ieq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    if (n != m) return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != lit[i]) return 0;
    return 1;
}

/* Iterates the elements of a comma-separated list, trimming OWS and skipping
 * empty elements (RFC 9110 5.6.1). Returns 0 at the end of the list. */
static int next_token(const char **pp, const char *end, const char **tok,
                      size_t *tok_len) {
    const char *p = *pp;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
        if (p == end) return 0;
        const char *s = p;
        while (p < end && *p != ',') p++;
        const char *e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        *tok = s;
        *tok_len = (size_t)(e - s);
        *pp = p;
        return 1;
    }
}

static int parse_content_length(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int h1_request_semantics(const h1_request *req, h1_semantics *sem) {
    size_t te_tokens = 0;
    int te_other = 0;
    const char *tok;
    size_t tok_len;

    memset(sem, 0, sizeof(*sem));
    for (size_t i = 0; i < req->num_headers; i++) {
        const h1_header *h = &req->headers[i];
        const char *v = h->value, *vend = h->value + h->value_len;

        /* Dispatch on length first: most fields are none of these. */
        switch (h->name_len) {
        case 14:
            if (ieq(h->name, 14, "content-length")) {
                uint64_t cl;
                if (parse_content_length(v, h->value_len, &cl) < 0)
                    return H1_SEM_BAD_REQUEST;
                if (sem->has_content_length && cl != sem->content_length)
                    return H1_SEM_BAD_REQUEST;
                sem->has_content_length = 1;
                sem->content_length = cl;
            }
            break;
        case 17:
            if (ieq(h->name, 17, "transfer-encoding")) {
                sem->has_transfer_encoding = 1;
                while (next_token(&v, vend, &tok, &tok_len)) {
                    te_tokens++;
                    if (!ieq(tok, tok_len, "chunked")) te_other = 1;
                }
            }
            break;
        case 10:
            if (ieq(h->name, 10, "connection")) {
                while (next_token(&v, vend, &tok, &tok_len)) {
                    if (ieq(tok, tok_len, "close")) sem->conn_close = 1;
                    else if (ieq(tok, tok_len, "keep-alive"))
                        sem->conn_keep_alive = 1;
                    else if (ieq(tok, tok_len, "upgrade"))
                        sem->conn_upgrade = 1;
                }
            }
            break;
        case 6:
            if (ieq(h->name, 6, "expect") &&
                ieq(h->value, h->value_len, "100-continue"))
                sem->expect_continue = 1;
            break;
        case 4:
            if (ieq(h->name, 4, "host")) sem->host_count++;
            break;
        case 7:
            if (ieq(h->name, 7, "upgrade")) {
                sem->upgrade = h->value;
                sem->upgrade_len = h->value_len;
            }
            break;
        default:
            break;
        }
    }

    /* A missing or repeated Host makes the target ambiguous (RFC 9112 3.2). */
    if (sem->host_count > 1 || (req->minor == 1 && sem->host_count == 0))
        return H1_SEM_BAD_REQUEST;
    if (sem->has_transfer_encoding) {
        /* Both framings at once is the classic smuggling vector: refuse
         * rather than pick one (RFC 9112 6.3). */
        if (sem->has_content_length) return H1_SEM_BAD_REQUEST;
        if (te_tokens == 0) return H1_SEM_BAD_REQUEST;
        if (te_tokens != 1 || te_other) return H1_SEM_NOT_IMPLEMENTED;
        sem->chunked = 1;
    }
    return H1_SEM_OK;
}

static int is_ows(char ch) { return ch == ' ' || ch == '\t'; }

int h1_has_token(const char *value, size_t len, const char *token) {
    size_t tlen = strlen(token);
    const char *p = value, *end = value + len;

    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        const char *s = p;
        while (s < e && is_ows(*s)) s++;
        while (e > s && is_ows(e[-1])) e--;
        if ((size_t)(e - s) == tlen && strncasecmp(s, token, tlen) == 0)
            return 1;
        p = comma ? comma + 1 : end;
    }
    return 0;
}
