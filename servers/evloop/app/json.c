#include "json.h"

#include <stdint.h>
#include <string.h>

#include "json_members.h"
#include "utf8.h"

typedef struct parser {
    const unsigned char *p, *end;
    char *base; /* out->data: member offsets are relative to it */
    char *o;    /* write position */
    sbuf *work;
    int depth;
    /* Per open container: is it an object, where its '{' was written, and
     * where its member records start in work. */
    unsigned char is_obj[JSON_MAX_DEPTH];
    size_t obj_at[JSON_MAX_DEPTH];
    size_t mark[JSON_MAX_DEPTH];
} parser;

static void skip_ws(parser *ps) {
    const unsigned char *p = ps->p, *end = ps->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    ps->p = p;
}

static int hex_val(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20; /* fold to lower case */
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Four hex digits at p (the caller checked they are in range); -1 if any is
 * not a hex digit. */
static int32_t hex4(const unsigned char *p) {
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_val(p[i]);
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The escape at ps->p (on the '\'). Appends its canonical form. */
static int escape(parser *ps) {
    const unsigned char *p = ps->p, *end = ps->end;
    int32_t cp;

    if (end - p < 2) return JSON_INVALID;
    switch (p[1]) {
    case '"': case '\\': case '/': cp = p[1]; break;
    case 'b': cp = '\b'; break;
    case 'f': cp = '\f'; break;
    case 'n': cp = '\n'; break;
    case 'r': cp = '\r'; break;
    case 't': cp = '\t'; break;
    case 'u':
        if (end - p < 6 || (cp = hex4(p + 2)) < 0) return JSON_INVALID;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return JSON_INVALID; /* lone low */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* A high surrogate must be followed by an escaped low one. */
            int32_t lo;
            if (end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
                (lo = hex4(p + 8)) < 0xDC00 || lo > 0xDFFF)
                return JSON_INVALID;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        ps->p = p + 6;
        ps->o = cp < 0x80 ? json_escape_ascii(ps->o, (unsigned char)cp)
                          : ps->o + utf8_encode((uint32_t)cp, ps->o);
        return JSON_OK;
    default: return JSON_INVALID;
    }
    ps->p = p + 2;
    ps->o = json_escape_ascii(ps->o, (unsigned char)cp);
    return JSON_OK;
}

/* The string literal at ps->p (on its '"'). */
static int string(parser *ps) {
    const unsigned char *end = ps->end;
    int rc;

    ps->p++;
    *ps->o++ = '"';
    for (;;) {
        /* Copy the run of bytes that need no attention in one go. */
        const unsigned char *p = ps->p, *run = p;
        while (p < end && json_plain[*p]) p++;
        memcpy(ps->o, run, (size_t)(p - run));
        ps->o += p - run;
        ps->p = p;
        if (p == end) return JSON_INVALID; /* unterminated */
        if (*p == '"') break;
        if (*p == '\\') {
            if ((rc = escape(ps)) != JSON_OK) return rc;
        } else if (*p >= 0x80) {
            size_t k = utf8_seq(p, (size_t)(end - p));
            if (!k) return JSON_INVALID;
            memcpy(ps->o, p, k);
            ps->o += k;
            ps->p = p + k;
        } else {
            return JSON_INVALID; /* raw control character */
        }
    }
    ps->p++;
    *ps->o++ = '"';
    return JSON_OK;
}

static const unsigned char *digits(const unsigned char *p,
                                   const unsigned char *end) {
    while (p < end && *p >= '0' && *p <= '9') p++;
    return p;
}

/* -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)? , copied verbatim.
 * What follows is checked by the caller (so "01" fails there). */
static int number(parser *ps) {
    const unsigned char *p = ps->p, *end = ps->end, *start = p, *q;

    if (*p == '-') p++;
    if (p == end) return JSON_INVALID;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') p = digits(p, end);
    else return JSON_INVALID;
    if (p < end && *p == '.') {
        q = digits(p + 1, end);
        if (q == p + 1) return JSON_INVALID;
        p = q;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        q = digits(p, end);
        if (q == p) return JSON_INVALID;
        p = q;
    }
    memcpy(ps->o, start, (size_t)(p - start));
    ps->o += p - start;
    ps->p = p;
    return JSON_OK;
}

static int literal(parser *ps, const char *word, size_t n) {
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return JSON_INVALID;
    memcpy(ps->o, word, n);
    ps->o += n;
    ps->p += n;
    return JSON_OK;
}

static int open_container(parser *ps, int obj) {
    if (ps->depth == JSON_MAX_DEPTH) return JSON_TOO_DEEP;
    ps->is_obj[ps->depth] = (unsigned char)obj;
    ps->obj_at[ps->depth] = (size_t)(ps->o - ps->base);
    ps->mark[ps->depth] = ps->work->len;
    ps->depth++;
    *ps->o++ = obj ? '{' : '[';
    ps->p++;
    return JSON_OK;
}

static int close_container(parser *ps) {
    int d = --ps->depth;
    if (ps->is_obj[d]) {
        size_t end = (size_t)(ps->o - ps->base);
        if (json_members_dedup(ps->base, &end, ps->work, ps->mark[d]) < 0)
            return JSON_NOMEM;
        ps->o = ps->base + end;
    }
    *ps->o++ = ps->is_obj[d] ? '}' : ']';
    ps->p++;
    return JSON_OK;
}

/* A member name and its ':'; the value follows. */
static int member_name(parser *ps) {
    int rc;
    skip_ws(ps);
    if (ps->p == ps->end || *ps->p != '"') return JSON_INVALID;
    if (json_members_push(ps->work, (size_t)(ps->o - ps->base)) < 0)
        return JSON_NOMEM;
    if ((rc = string(ps)) != JSON_OK) return rc;
    skip_ws(ps);
    if (ps->p == ps->end || *ps->p != ':') return JSON_INVALID;
    ps->p++;
    *ps->o++ = ':';
    return JSON_OK;
}

/* One value, or the start of a container. Sets *opened when a container
 * was opened and it is not empty (its first element or member is next). */
static int value(parser *ps, int *opened) {
    *opened = 0;
    skip_ws(ps);
    if (ps->p == ps->end) return JSON_INVALID;
    switch (*ps->p) {
    case '{':
    case '[': {
        int obj = *ps->p == '{', rc = open_container(ps, obj);
        if (rc != JSON_OK) return rc;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == (obj ? '}' : ']'))
            return close_container(ps);
        *opened = 1;
        return obj ? member_name(ps) : JSON_OK;
    }
    case '"': return string(ps);
    case 't': return literal(ps, "true", 4);
    case 'f': return literal(ps, "false", 5);
    case 'n': return literal(ps, "null", 4);
    default: return number(ps);
    }
}

/* The loop alternates between "a value is due" and "a value just ended";
 * an explicit stack instead of recursion keeps deep input from costing C
 * stack, and the depth limit bounds the stack itself. */
static int parse(parser *ps) {
    int rc, opened;
    for (;;) {
        if ((rc = value(ps, &opened)) != JSON_OK) return rc;
        if (opened) continue;
        /* After a value: a separator or the end of containers. */
        for (;;) {
            skip_ws(ps);
            if (ps->depth == 0)
                return ps->p == ps->end ? JSON_OK : JSON_INVALID;
            if (ps->p == ps->end) return JSON_INVALID;
            unsigned char c = *ps->p;
            int obj = ps->is_obj[ps->depth - 1];
            if (c == ',') {
                ps->p++;
                *ps->o++ = ',';
                if (obj && (rc = member_name(ps)) != JSON_OK) return rc;
                break; /* the next value */
            }
            if (c != (obj ? '}' : ']')) return JSON_INVALID;
            if ((rc = close_container(ps)) != JSON_OK) return rc;
        }
    }
}

int json_reserialize(const char *in, size_t n, sbuf *out, sbuf *work) {
    /* No bytes are no JSON text. Said here because an empty body may come
     * as NULL (an h2 stream with no DATA), and NULL + 0 below would be
     * undefined behaviour (found by the conn_h2 fuzz target). */
    if (n == 0) return JSON_INVALID;
    if (sbuf_reserve(out, n) < 0) return JSON_NOMEM;
    parser ps = {
        .p = (const unsigned char *)in,
        .end = (const unsigned char *)in + n,
        .base = out->data,
        .o = out->data + out->len,
        .work = work,
    };
    size_t work_len = work->len;
    int rc = parse(&ps);
    work->len = work_len; /* drop member records left by an error */
    if (rc == JSON_OK) out->len = (size_t)(ps.o - out->data);
    return rc;
}
