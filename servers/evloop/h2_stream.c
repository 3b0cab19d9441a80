#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"

/* First allocation for a body of unknown length; doubled from there. */
#define H2_BODY_INITIAL (16 * 1024)

h2_stream *h2_stream_open(h2_conn *h, int32_t id) {
    h2_stream *st = h->spare;
    route_scratch scratch = {0};
    if (st) {
        h->spare = st->next;
        scratch = st->scratch; /* the object is recycled, its buffers too */
    } else if (!(st = malloc(sizeof(*st)))) {
        return NULL;
    }
    memset(st, 0, sizeof(*st));
    st->scratch = scratch;
    st->id = id;
    st->t_open = st->t_sent = st->t_recv = conn_now(h->c);
    st->next = h->live;
    if (h->live) h->live->prev = st;
    h->live = st;
    h->nlive++;
    return st;
}

static void release(h2_stream *st) {
    if (st->method) nghttp2_rcbuf_decref(st->method);
    if (st->path) nghttp2_rcbuf_decref(st->path);
    st->method = st->path = NULL;
}

void h2_stream_close(h2_conn *h, h2_stream *st) {
    release(st);
    h->held -= st->held;
    /* Credit withheld from a stream that is gone still counts against the
     * connection window: return it, or the connection would starve. */
    if (st->unconsumed)
        nghttp2_session_consume_connection(h->ng, st->unconsumed);
    if (st->body) {
        /* Queued DATA may still point into the body (a stream reset in the
         * middle of its response): the queue frees it once that is out. */
        if (st->flags & H2S_BODY_REFD)
            conn_out_give(h->c, st->body, st->body, 0);
        else free(st->body);
        st->body = NULL;
    }
    route_scratch_reset(&st->scratch, H2_KEEP_SCRATCH);
    if (st->prev) st->prev->next = st->next;
    else h->live = st->next;
    if (st->next) st->next->prev = st->prev;
    h->nlive--;
    st->prev = NULL;
    st->next = h->spare;
    h->spare = st;
}

void h2_stream_free_all(h2_conn *h) {
    h2_stream *st, *next;
    /* Output segments die with the connection too, so bodies go now. */
    for (st = h->live; st; st = next) {
        next = st->next;
        release(st);
        free(st->body);
        route_scratch_free(&st->scratch);
        free(st);
    }
    for (st = h->spare; st; st = next) {
        next = st->next;
        route_scratch_free(&st->scratch);
        free(st);
    }
    h->live = h->spare = NULL;
    h->nlive = 0;
}

void h2_stream_on_header(h2_stream *st, nghttp2_vec n, nghttp2_rcbuf *value,
                         nghttp2_vec v) {
    nghttp2_rcbuf **slot;
    /* nghttp2 has already checked the block (HTTP messaging rules):
     * pseudo-headers once each and first, content-length all digits. The
     * length picks the one name worth comparing. */
    switch (n.len) {
    case 7:
        if (memcmp(n.base, ":method", 7)) return;
        slot = &st->method;
        break;
    case 5:
        if (memcmp(n.base, ":path", 5)) return;
        slot = &st->path;
        break;
    case 14: {
        if (memcmp(n.base, "content-length", 14)) return;
        uint64_t x = 0;
        for (size_t i = 0; i < v.len && x < (UINT64_MAX - 9) / 10; i++)
            x = x * 10 + (uint64_t)(v.base[i] - '0');
        st->declared_len = x;
        st->flags |= H2S_HAS_CLEN;
        return;
    }
    default: return;
    }
    if (*slot) nghttp2_rcbuf_decref(*slot);
    nghttp2_rcbuf_incref(value);
    *slot = value;
}

int h2_stream_append(h2_stream *st, const uint8_t *p, size_t n,
                     uint64_t max_body) {
    if (n == 0) return H2_BODY_OK;
    if (n > max_body - st->blen) return H2_BODY_TOO_LARGE;
    if (st->blen + n > st->bcap) {
        size_t cap = st->bcap ? st->bcap * 2 : H2_BODY_INITIAL;
        /* A declared length is exact (nghttp2 resets the stream if DATA
         * disagrees), so one allocation usually suffices. It is trusted
         * only up to the stream window, though: 128 streams each declaring
         * 16 MiB and sending a byte must not reserve 2 GiB. */
        if (!st->bcap && (st->flags & H2S_HAS_CLEN))
            cap = st->declared_len < H2_STREAM_WINDOW
                      ? (size_t)st->declared_len
                      : H2_STREAM_WINDOW;
        if (cap == 0) cap = H2_BODY_INITIAL;
        while (cap < st->blen + n) cap *= 2;
        if (cap > max_body) cap = (size_t)max_body;
        char *nb = realloc(st->body, cap);
        if (!nb) return H2_BODY_NOMEM;
        st->body = nb;
        st->bcap = cap;
    }
    memcpy(st->body + st->blen, p, n);
    st->blen += n;
    return H2_BODY_OK;
}

int h2_stream_request(h2_stream *st, route_request *rq) {
    if (!st->method || !st->path) return -1;
    nghttp2_vec m = nghttp2_rcbuf_get_buf(st->method);
    nghttp2_vec p = nghttp2_rcbuf_get_buf(st->path);
    const char *path = (const char *)p.base;
    const char *q = memchr(path, '?', p.len);

    memset(rq, 0, sizeof(*rq));
    rq->method = (const char *)m.base;
    rq->method_len = m.len;
    rq->path = path;
    rq->path_len = q ? (size_t)(q - path) : p.len;
    rq->query = q ? q + 1 : NULL;
    rq->query_len = q ? p.len - (size_t)(q + 1 - path) : 0;
    rq->body = st->body;
    rq->body_len = st->blen;
    rq->scratch = &st->scratch;
    return 0;
}
