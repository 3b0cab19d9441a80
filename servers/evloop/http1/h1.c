#include "h1.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chunked.h"
#include "http/http_status.h"
#include "http/routes.h"
#include "http1_parser.h"
#include "net/date_cache.h"

/* Static bodies up to this size are copied next to their head: a few bytes
 * of memcpy are cheaper than an extra iovec, and keep a pipelined batch of
 * small responses in one contiguous range. Larger ones go out by reference. */
#define H1_INLINE_BODY 128
/* Request bodies read into the body buffer are handed to the output queue
 * (echo) instead of copied when at least this big. */
#define H1_GIVE_BODY (16 * 1024)
/* The most a declared Content-Length reserves before its bytes arrive. */
#define H1_BODY_FIRST (1 << 20)
/* Body buffers above this are freed after the request, not kept. */
#define H1_KEEP_BODY_CAP (64 * 1024)
/* Reads need at least this much free room behind a buffered head. */
#define H1_MIN_READ_ROOM 4096
/* Enough for any head we produce. */
#define H1_HEAD_RESERVE 512

enum { ST_HEAD, ST_BODY_CL, ST_BODY_CHUNKED, ST_DEAD };
enum { CONN_HDR_NONE, CONN_HDR_CLOSE, CONN_HDR_KEEP_ALIVE };

/* What dispatch needs from a parsed head. Kept as offsets from the head's
 * first byte, so the head can be moved while its body streams in. */
typedef struct h1_info {
    size_t m_off, m_len, p_off, p_len, q_off, q_len;
    int has_query;
    int minor;
    int keep_alive;
    int is_head;
} h1_info;

typedef struct h1_state {
    int state;
    /* rbuf[rstart .. rstart+scanned) holds no complete head; the stateless
     * parser is only re-run once a new line has ended. */
    size_t scanned;
    /* Request whose body is being read: head at rbuf[hstart, +hlen), next
     * body byte at rbuf[bpos]. */
    h1_info info;
    size_t hstart, hlen, bpos;
    uint64_t clen;
    long long body_start; /* loop ms when the head of that request ended */
    char *body; /* reused across requests */
    size_t blen, bcap;
    chunked_decoder dec;
    /* Generated response bodies; reused across requests, trimmed back to
     * H1_KEEP_BODY_CAP after each. */
    route_scratch scratch;
} h1_state;

/* ---- response assembly ---- */

static char *put(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static int put_head(conn *c, int status, const char *ctype, uint64_t clen,
                    const char *allow, int conn_hdr) {
    char *start = conn_out_reserve(c, H1_HEAD_RESERVE), *p = start;
    if (!p) return -1;
    size_t rlen;
    const char *reason = http_status_reason(status, &rlen);
    memcpy(p, "HTTP/1.1 ", 9);
    http_status_digits(status, p + 9);
    p[12] = ' ';
    memcpy(p + 13, reason, rlen);
    p += 13 + rlen;
    p = put(p, "\r\n");
    p = put(p, "Server: evloop\r\nDate: ");
    memcpy(p, date_cache_get(), DATE_CACHE_LEN);
    p += DATE_CACHE_LEN;
    p = put(p, "\r\nContent-Type: ");
    p = put(p, ctype);
    p = put(p, "\r\nContent-Length: ");
    p += fmt_u64(p, clen);
    p = put(p, "\r\n");
    if (allow) {
        p = put(p, "Allow: ");
        p = put(p, allow);
        p = put(p, "\r\n");
    }
    if (conn_hdr == CONN_HDR_CLOSE) p = put(p, "Connection: close\r\n");
    else if (conn_hdr == CONN_HDR_KEEP_ALIVE)
        p = put(p, "Connection: keep-alive\r\n");
    p = put(p, "\r\n");
    return conn_out_commit(c, (size_t)(p - start));
}

/* Answers with an error and ends the connection: after a framing error we
 * cannot know where the next request would start. */
static int h1_error(conn *c, h1_state *h, int status) {
    size_t n;
    const char *body = http_status_error_body(status, &n);
    h->state = ST_DEAD;
    c->rstart = c->rend = 0;
    if (put_head(c, status, "text/plain", n, NULL, CONN_HDR_CLOSE) < 0 ||
        conn_out_copy(c, body, n) < 0)
        return PROTO_ABORT;
    return PROTO_CLOSE;
}

static void body_trim(h1_state *h) {
    h->blen = 0;
    if (h->bcap > H1_KEEP_BODY_CAP) {
        free(h->body);
        h->body = NULL;
        h->bcap = 0;
    }
}

/* Room for `need` body bytes, growing by doubling but never past `limit`
 * (>= need): the declared length, or the body limit for chunked. */
static int body_reserve(h1_state *h, size_t need, size_t limit) {
    if (need <= h->bcap) return 0;
    size_t cap = h->bcap ? h->bcap : 4096;
    while (cap < need) cap *= 2;
    if (cap > limit) cap = limit;
    char *nb = realloc(h->body, cap);
    if (!nb) return -1;
    h->body = nb;
    h->bcap = cap;
    return 0;
}

/* Runs the route for one complete request and queues its response. The
 * body lives either in rbuf (copied out) or in h->body (handed over when
 * large, so a 16 MiB echo is never copied twice). Generated bodies sit in
 * h->scratch, which the next pipelined request overwrites: small ones are
 * copied, large ones handed over like the echo body. */
static int dispatch(conn *c, h1_state *h, const char *head, const h1_info *in,
                    const char *body, size_t blen, int body_in_buffer) {
    route_request rq = {head + in->m_off, in->m_len, head + in->p_off,
                        in->p_len, in->has_query ? head + in->q_off : NULL,
                        in->q_len, body, blen, &h->scratch};
    route_response rs;
    int keep = in->keep_alive && !conn_shutting_down(c);
    int conn_hdr = !keep ? CONN_HDR_CLOSE
                 : in->minor == 0 ? CONN_HDR_KEEP_ALIVE : CONN_HDR_NONE;
    int r = 0;

    routes_handle(&rq, &rs);
    const char *out = rs.body_is_request ? body : rs.body;
    size_t olen = rs.body_is_request ? blen : rs.body_len;
    if (put_head(c, rs.status, rs.content_type, olen, rs.allow, conn_hdr) < 0)
        return PROTO_ABORT;
    if (!in->is_head && olen) {
        if (rs.body_is_request && body_in_buffer && olen >= H1_GIVE_BODY) {
            r = conn_out_give(c, h->body, out, olen);
            h->body = NULL;
            h->bcap = 0;
        } else if (rs.body_in_scratch && olen >= H1_GIVE_BODY) {
            r = conn_out_give(c, h->scratch.out.data, out, olen);
            h->scratch.out = (sbuf){0};
        } else if (!rs.body_is_request && !rs.body_in_scratch &&
                   olen > H1_INLINE_BODY) {
            r = conn_out_ref(c, out, olen);
        } else {
            r = conn_out_copy(c, out, olen);
        }
        if (r < 0) return PROTO_ABORT;
    }
    route_scratch_reset(&h->scratch, H1_KEEP_BODY_CAP);
    conn_set_phase(c, CONN_PHASE_IDLE);
    if (!keep) {
        h->state = ST_DEAD;
        return PROTO_CLOSE;
    }
    return PROTO_NEED_MORE;
}

/* ---- request bodies ---- */

/* Moves buffered body bytes into h->body and dispatches the request once the
 * body is complete (*done set). Returns a PROTO_* result. */
static int read_body(conn *c, h1_state *h, int *done) {
    const char *src = c->rbuf + h->bpos;
    size_t avail = c->rend - h->bpos;
    uint64_t max_body = c->cfg->max_body;

    *done = 0;
    if (h->state == ST_BODY_CL) {
        size_t n = (size_t)(h->clen - h->blen);
        if (n > avail) n = avail;
        if (body_reserve(h, h->blen + n, (size_t)h->clen) < 0)
            return h1_error(c, h, 500);
        memcpy(h->body + h->blen, src, n);
        h->blen += n;
        h->bpos += n;
        if (h->blen < h->clen) goto need_more;
    } else {
        /* The decoder writes at most avail bytes and never past max_body. */
        uint64_t need = (uint64_t)h->blen + avail;
        size_t out;
        if (need > max_body) need = max_body;
        if (body_reserve(h, (size_t)need + 1, (size_t)max_body + 1) < 0)
            return h1_error(c, h, 500);
        ssize_t r = chunked_decode(&h->dec, src, avail, h->body + h->blen, &out);
        h->blen += out;
        if (r == CHUNKED_TOO_LARGE) return h1_error(c, h, 413);
        if (r == CHUNKED_ERROR) return h1_error(c, h, 400);
        if (r == CHUNKED_NEED_MORE) {
            h->bpos += avail;
            goto need_more;
        }
        h->bpos += (size_t)r;
    }

    *done = 1;
    c->rstart = h->bpos;
    h->state = ST_HEAD;
    int res = dispatch(c, h, c->rbuf + h->hstart, &h->info, h->body, h->blen, 1);
    body_trim(h);
    return res;

need_more:
    /* Everything buffered is in the body now: drop it so the next read
     * lands right behind the head, and keep enough room for reads. */
    c->rend = h->bpos = h->hstart + h->hlen;
    if (c->rcap - c->rend < H1_MIN_READ_ROOM && h->hstart > 0) {
        memmove(c->rbuf, c->rbuf + h->hstart, h->hlen);
        h->hstart = 0;
        c->rstart = 0;
        c->rend = h->bpos = h->hlen;
    }
    /* Progress buys time only at --body-min-rate: a trickle is cut off. */
    conn_set_deadline(c, CONN_PHASE_BODY,
                      conn_body_deadline(c, h->body_start, h->blen,
                                         conn_now(c)));
    return PROTO_NEED_MORE;
}

/* ---- request heads ---- */

static int eq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return n == m && memcmp(s, lit, m) == 0;
}

/* A request line of three fields whose last is not "HTTP/...": the peer
 * speaks some other protocol (h2spec's "INVALID CONNECTION PREFACE" is
 * one), so an HTTP/1.1 error response would only be garbage to it. */
static int other_protocol(const char *buf, size_t len) {
    const char *lf = memchr(buf, '\n', len);
    const char *end = lf ? lf : buf + len, *sp1, *sp2;
    if (end > buf && end[-1] == '\r') end--;
    if (!(sp1 = memchr(buf, ' ', (size_t)(end - buf))) || sp1 == buf ||
        !(sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) ||
        sp2 == sp1 + 1 || sp2 + 1 == end ||
        memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1)))
        return 0;
    return (size_t)(end - sp2 - 1) < 5 || memcmp(sp2 + 1, "HTTP/", 5) != 0;
}

/* The value of the one `name` field of req; 0 if it is absent or repeated
 * (RFC 7540 3.2.1, for HTTP2-Settings: then we must not upgrade). */
static int single_header(const h1_request *req, const char *name,
                         const char **v, size_t *n) {
    size_t len = strlen(name);
    int found = 0;
    for (size_t i = 0; i < req->num_headers; i++) {
        const h1_header *hd = &req->headers[i];
        if (hd->name_len == len && strncasecmp(hd->name, name, len) == 0) {
            *v = hd->value;
            *n = hd->value_len;
            found++;
        }
    }
    return found == 1;
}

/* The protocol this request asks to switch to (Upgrade), from the table
 * (protocols.c), with the value of the header it needs; NULL to stay.
 * Only bodiless GET and HEAD are upgraded -- RFC 7540 3.2 lets a server
 * ignore Upgrade, and it spares us carrying an HTTP/1 body into the new
 * protocol. Over TLS the protocol is chosen by ALPN, never by Upgrade
 * (RFC 7540 3.3). */
static const protocol *upgrade_target(const conn *c, const h1_request *req,
                                      const h1_semantics *sem,
                                      const char **value, size_t *len) {
    if (conn_is_tls(c) || !sem->upgrade || !sem->conn_upgrade ||
        req->minor != 1 || sem->chunked || sem->has_content_length ||
        conn_shutting_down(c) ||
        !(eq(req->method, req->method_len, "GET") ||
          eq(req->method, req->method_len, "HEAD")))
        return NULL;
    for (size_t i = 0; i < c->cfg->nprotocols; i++) {
        const protocol *p = &c->cfg->protocols[i];
        if (p->upgrade &&
            h1_has_token(sem->upgrade, sem->upgrade_len, p->upgrade_token) &&
            single_header(req, p->upgrade_header, value, len))
            return p;
    }
    return NULL;
}

/* Parses and acts on the head at rbuf[rstart..]. *progress is set when a
 * request was consumed or a body started, i.e. on_data should loop. */
static int on_head(conn *c, h1_state *h, int *progress) {
    const char *buf = c->rbuf + c->rstart;
    size_t avail = c->rend - c->rstart;
    h1_request req;
    h1_semantics sem;
    ssize_t n = H1_PARSE_NEED_MORE;

    *progress = 0;
    if (c->phase != CONN_PHASE_HEAD) conn_set_phase(c, CONN_PHASE_HEAD);
    if (h->scanned < avail &&
        memchr(buf + h->scanned, '\n', avail - h->scanned))
        n = h1_parse_request(buf, avail, &req);
    if (n == H1_PARSE_NEED_MORE) {
        h->scanned = avail;
        if (avail >= H1_MAX_HEAD) return h1_error(c, h, 431);
        if (c->rstart) { /* keep the partial head at the buffer start */
            memmove(c->rbuf, buf, avail);
            c->rstart = 0;
            c->rend = avail;
        }
        return PROTO_NEED_MORE;
    }
    h->scanned = 0;
    if (n < 0 && other_protocol(buf, avail)) {
        /* Close without an answer (RFC 7540 3.5 for a bad h2 preface). */
        h->state = ST_DEAD;
        c->rstart = c->rend = 0;
        return PROTO_CLOSE;
    }
    if (n < 0) return h1_error(c, h, 400);
    if (n > H1_MAX_HEAD) return h1_error(c, h, 431);
    if (req.major != 1 || req.minor > 1) return h1_error(c, h, 505);
    switch (h1_request_semantics(&req, &sem)) {
    case H1_SEM_OK: break;
    case H1_SEM_NOT_IMPLEMENTED: return h1_error(c, h, 501);
    default: return h1_error(c, h, 400);
    }
    /* HTTP/1.0 has no chunked coding (RFC 9112 6.1: faulty framing). */
    if (sem.chunked && req.minor == 0) return h1_error(c, h, 400);

    h1_info in = {
        .m_off = (size_t)(req.method - buf), .m_len = req.method_len,
        .p_off = (size_t)(req.path - buf), .p_len = req.path_len,
        .q_off = req.query ? (size_t)(req.query - buf) : 0,
        .q_len = req.query_len, .has_query = req.query != NULL,
        .minor = req.minor,
        .keep_alive = req.minor == 1 ? !sem.conn_close
                                     : sem.conn_keep_alive && !sem.conn_close,
        .is_head = eq(req.method, req.method_len, "HEAD"),
    };
    size_t hlen = (size_t)n;
    uint64_t clen = sem.has_content_length ? sem.content_length : 0;

    /* Refused before anything of the body is read, and before a 100
     * Continue would invite it. */
    if (clen > c->cfg->max_body) return h1_error(c, h, 413);
    const char *uval;
    size_t ulen;
    const protocol *up = upgrade_target(c, &req, &sem, &uval, &ulen);
    if (up) {
        route_request rq = {buf + in.m_off, in.m_len, buf + in.p_off,
                            in.p_len, in.has_query ? buf + in.q_off : NULL,
                            in.q_len, NULL, 0, NULL /* the new protocol's */};
        c->rstart += hlen; /* what follows the head is the new protocol */
        /* On success h (our state) is gone: return without touching it. */
        if (up->upgrade(c, uval, ulen, &rq) == 0) return PROTO_SWITCH;
        c->rstart -= hlen; /* not upgraded: serve it as HTTP/1.1 */
    }
    *progress = 1;
    if (!sem.chunked && clen <= avail - hlen) {
        /* The whole request is buffered: dispatch without copying. */
        c->rstart += hlen + (size_t)clen;
        return dispatch(c, h, buf, &in, buf + hlen, (size_t)clen, 0);
    }
    /* Stream the body into the body buffer; the head stays in rbuf. */
    h->info = in;
    h->hstart = c->rstart;
    h->hlen = hlen;
    h->bpos = c->rstart + hlen;
    h->blen = 0;
    h->clen = clen;
    if (sem.chunked) {
        chunked_init(&h->dec, c->cfg->max_body);
        h->state = ST_BODY_CHUNKED;
    } else {
        /* A declared length is trusted only up to H1_BODY_FIRST: 50
         * connections each declaring 16 MiB and sending a byte must not
         * reserve 800 MiB; past it the buffer grows as bytes arrive. */
        size_t first = clen < H1_BODY_FIRST ? (size_t)clen : H1_BODY_FIRST;
        if (body_reserve(h, first, (size_t)clen) < 0)
            return h1_error(c, h, 500);
        h->state = ST_BODY_CL;
    }
    /* Ask for the body only when the client is waiting for us to. */
    if (sem.expect_continue && req.minor == 1 && h->bpos == c->rend) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (conn_out_copy(c, cont, sizeof(cont) - 1) < 0) return PROTO_ABORT;
    }
    h->body_start = conn_now(c);
    conn_set_deadline(c, CONN_PHASE_BODY,
                      conn_body_deadline(c, h->body_start, 0, h->body_start));
    return PROTO_NEED_MORE;
}

/* ---- handler ---- */

static int h1_on_data(conn *c) {
    h1_state *h = c->proto_data;
    int r, progress;

    for (;;) {
        switch (h->state) {
        case ST_DEAD:
            c->rstart = c->rend = 0;
            return PROTO_CLOSE;
        case ST_BODY_CL:
        case ST_BODY_CHUNKED:
            r = read_body(c, h, &progress);
            if (r != PROTO_NEED_MORE || !progress) return r;
            break;
        default:
            if (c->rstart == c->rend) {
                c->rstart = c->rend = 0;
                h->scanned = 0;
                return PROTO_NEED_MORE;
            }
            if (conn_out_full(c)) return PROTO_PAUSED;
            r = on_head(c, h, &progress);
            if (r != PROTO_NEED_MORE || !progress) return r;
            break;
        }
    }
}

static int h1_on_timeout(conn *c, long long now) {
    h1_state *h = c->proto_data;
    (void)now;
    switch (c->phase) {
    case CONN_PHASE_HEAD:
        /* Only a client that sent part of a head is told why. */
        if (h->state == ST_HEAD && c->rend > c->rstart && c->out_pending == 0)
            return h1_error(c, h, 408);
        return PROTO_CLOSE;
    case CONN_PHASE_BODY:
        /* The body fell behind --body-min-rate (or stalled). */
        return c->out_pending == 0 ? h1_error(c, h, 408) : PROTO_ABORT;
    default:
        /* No goodbye for an idle keep-alive connection: just close. */
        return PROTO_ABORT;
    }
}

static int h1_attach(conn *c) {
    h1_state *h = calloc(1, sizeof(*h));
    if (!h) return -1;
    h->state = ST_HEAD;
    c->proto_data = h;
    return 0;
}

static void h1_detach(conn *c) {
    h1_state *h = c->proto_data;
    if (!h) return;
    free(h->body);
    route_scratch_free(&h->scratch);
    free(h);
    c->proto_data = NULL;
}

const proto_handler h1_handler = {
    .name = "http/1.1",
    .attach = h1_attach,
    .on_data = h1_on_data,
    .detach = h1_detach,
    .on_timeout = h1_on_timeout,
    /* No goodbye on shutdown: an idle HTTP/1 connection is simply closed;
     * busy ones answer with "Connection: close". */
};
