#include "h2_head.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

enum { P_METHOD = 1, P_SCHEME = 2, P_PATH = 4, P_AUTHORITY = 8 };

static int eq(const uint8_t *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return n == m && memcmp(s, lit, m) == 0;
}

static const char *base(const h2_head *h) {
    return h->heap ? h->heap : h->inline_buf;
}

void h2_head_init(h2_head *h, int trailers) {
    memset(h, 0, offsetof(h2_head, inline_buf));
    h->trailers = trailers;
    h->heap = NULL;
    h->cap = H2_HEAD_INLINE;
    h->used = h->moff = h->mlen = h->poff = h->plen = 0;
}

void h2_head_trailers(h2_head *h) {
    h->trailers = 1;
    h->regular = 0;
}

void h2_head_free(h2_head *h) {
    free(h->heap);
    h->heap = NULL;
    h->cap = H2_HEAD_INLINE;
}

/* Appends v to buf; its offset in *off. */
static int keep(h2_head *h, const uint8_t *v, size_t n, size_t *off) {
    if (h->used + n > h->cap) {
        size_t cap = h->cap * 2;
        while (cap < h->used + n) cap *= 2;
        char *nb = malloc(cap);
        if (!nb) return H2H_NOMEM;
        memcpy(nb, base(h), h->used);
        free(h->heap);
        h->heap = nb;
        h->cap = cap;
    }
    memcpy((h->heap ? h->heap : h->inline_buf) + h->used, v, n);
    *off = h->used;
    h->used += n;
    return H2H_OK;
}

/* A check of a field's value, remembered in the field's table entry (its
 * memo bits) once passed: an indexed :authority is checked once, not per
 * request. */
enum { MEMO_METHOD = 1, MEMO_PATH = 2, MEMO_AUTHORITY = 4 };

static int passes(const hpack_field *f, uint8_t bit,
                  int (*check)(const uint8_t *, size_t)) {
    if (f->memo && (*f->memo & bit)) return 1;
    if (!check(f->value, f->vlen)) return 0;
    if (f->memo) *f->memo |= bit;
    return 1;
}

static int pseudo(h2_head *h, const hpack_field *f) {
    const uint8_t *name = f->name, *value = f->value;
    size_t nlen = f->nlen, vlen = f->vlen;
    unsigned bit;
    /* 8.3: pseudo-fields only in requests, before every regular field,
     * each at most once, and only the request ones we know. */
    if (h->trailers || h->regular) return H2H_MALFORMED;
    if (eq(name, nlen, ":method")) bit = P_METHOD;
    else if (eq(name, nlen, ":scheme")) bit = P_SCHEME;
    else if (eq(name, nlen, ":path")) bit = P_PATH;
    else if (eq(name, nlen, ":authority")) bit = P_AUTHORITY;
    else return H2H_MALFORMED;
    if (h->seen & bit) return H2H_MALFORMED;
    h->seen |= bit;
    if (bit == P_METHOD) {
        if (!passes(f, MEMO_METHOD, nghttp2_check_method)) return H2H_MALFORMED;
        h->mlen = vlen;
        return keep(h, value, vlen, &h->moff);
    }
    if (bit == P_PATH) {
        /* 8.3.1: not empty. */
        if (vlen == 0 || !passes(f, MEMO_PATH, nghttp2_check_path))
            return H2H_MALFORMED;
        h->plen = vlen;
        return keep(h, value, vlen, &h->poff);
    }
    if (bit == P_AUTHORITY && !passes(f, MEMO_AUTHORITY, nghttp2_check_authority))
        return H2H_MALFORMED;
    return H2H_OK;
}

static int parse_clen(const uint8_t *v, size_t n, uint64_t *out) {
    uint64_t x = 0;
    if (n == 0 || n > 19) return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        x = x * 10 + (uint64_t)(v[i] - '0');
    }
    *out = x;
    return 0;
}

int h2_head_field(h2_head *h, const hpack_field *f) {
    const uint8_t *name = f->name, *value = f->value;
    size_t nlen = f->nlen, vlen = f->vlen;
    if (nlen && name[0] == ':') return pseudo(h, f);
    h->regular = 1;
    /* 8.2.1: lowercase token characters; values without NUL, CR, LF or
     * surrounding whitespace (checked by the decoder, once per table
     * entry). */
    if (!f->syntax_ok) return H2H_MALFORMED;
    /* 8.2.2: connection-specific fields are malformed; TE only "trailers". */
    switch (nlen) {
    case 2:
        if (eq(name, nlen, "te") && !eq(value, vlen, "trailers"))
            return H2H_MALFORMED;
        break;
    case 7:
        if (eq(name, nlen, "upgrade")) return H2H_MALFORMED;
        break;
    case 10:
        if (eq(name, nlen, "connection") || eq(name, nlen, "keep-alive"))
            return H2H_MALFORMED;
        break;
    case 14:
        if (eq(name, nlen, "content-length")) {
            uint64_t v;
            /* one value; a repeat must agree (RFC 9110 8.6) */
            if (parse_clen(value, vlen, &v) < 0 || (h->has_clen && v != h->clen))
                return H2H_MALFORMED;
            h->has_clen = 1;
            h->clen = v;
        }
        break;
    case 16:
        if (eq(name, nlen, "proxy-connection")) return H2H_MALFORMED;
        break;
    case 17:
        if (eq(name, nlen, "transfer-encoding")) return H2H_MALFORMED;
        break;
    default: break;
    }
    return H2H_OK;
}

int h2_head_finish(const h2_head *h) {
    if (h->trailers) return H2H_OK;
    unsigned need = P_METHOD | P_SCHEME | P_PATH;
    if ((h->seen & need) != need) return H2H_MALFORMED;
    /* CONNECT has no :scheme/:path and a different shape; not served. */
    if (h->mlen == 7 && memcmp(base(h) + h->moff, "CONNECT", 7) == 0)
        return H2H_MALFORMED;
    return H2H_OK;
}

const char *h2_head_method(const h2_head *h, size_t *len) {
    *len = h->mlen;
    return base(h) + h->moff;
}

const char *h2_head_path(const h2_head *h, size_t *len) {
    *len = h->plen;
    return base(h) + h->poff;
}
