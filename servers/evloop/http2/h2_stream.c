/* h2_stream: stream objects (pooled per loop) and request bodies. A closed
 * stream's withheld credit goes back through h2_credit.c. */
#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"

/* First allocation for a body of unknown length; doubled from there. */
#define H2_BODY_INITIAL (16 * 1024)
/* Stream objects kept for reuse, per loop thread rather than per
 * connection: a burst on one connection is served without malloc, and an
 * idle connection holds none. */
#define H2_POOL_MAX 1024

static __thread h2_stream *pool;
static __thread size_t pool_n;

h2_stream *h2_stream_open(h2_conn *h, uint32_t id) {
    h2_stream *st = pool;
    route_scratch scratch = {0};
    if (st) {
        pool = st->next;
        pool_n--;
        scratch = st->scratch; /* the object is recycled, its buffers too */
    } else if (!(st = malloc(sizeof(*st)))) {
        return NULL;
    }
    /* Everything before the header's inline buffer, and what follows it:
     * the 256 inline bytes need no clearing. */
    memset(st, 0, offsetof(h2_stream, head));
    h2_head_init(&st->head, 0);
    memset(&st->t_open, 0, sizeof(*st) - offsetof(h2_stream, t_open));
    st->scratch = scratch;
    st->id = id;
    st->t_open = st->t_sent = st->t_recv = conn_now(h->c);
    st->send_window = h->peer.initial_window_size;
    st->recv_window = H2_STREAM_WINDOW;
    st->next = h->live;
    if (h->live) h->live->prev = st;
    h->live = st;
    h->nlive++;
    return st;
}

h2_stream *h2_stream_find(h2_conn *h, uint32_t id) {
    if (h->last_found && h->last_found->id == id) return h->last_found;
    for (h2_stream *st = h->live; st; st = st->next)
        if (st->id == id) return h->last_found = st;
    return NULL;
}

int h2_stream_was_closed(const h2_conn *h, uint32_t id, int *reset_by_us) {
    for (unsigned i = 0; i < H2_CLOSED_RING; i++)
        if (h->closed[i].id == id) {
            *reset_by_us = h->closed[i].reset_by_us;
            return 1;
        }
    return 0;
}

static void unlink_waiting(h2_conn *h, h2_stream *st) {
    h2_stream **pp = &h->wait_head, *prev = NULL;
    while (*pp && *pp != st) {
        prev = *pp;
        pp = &(*pp)->wnext;
    }
    if (!*pp) return;
    *pp = st->wnext;
    if (h->wait_tail == st) h->wait_tail = prev;
    st->wnext = NULL;
    st->flags &= ~H2S_WAITING;
}

static void recycle(h2_stream *st) {
    if (pool_n >= H2_POOL_MAX) {
        route_scratch_free(&st->scratch);
        free(st);
        return;
    }
    route_scratch_reset(&st->scratch, H2_KEEP_SCRATCH);
    st->next = pool;
    pool = st;
    pool_n++;
}

void h2_stream_close(h2_conn *h, h2_stream *st, int reset_by_us) {
    if (st->flags & H2S_WAITING) unlink_waiting(h, st);
    h2_head_free(&st->head);
    h->held -= st->held;
    /* Credit withheld from a stream that is gone still counts against the
     * connection window: return it, or the connection would starve. */
    if (st->unconsumed) h2_credit(h, NULL, st->unconsumed);
    if (st->body) {
        /* Queued DATA may still point into the body (a stream reset in the
         * middle of its response): the queue frees it once that is out. */
        if (st->flags & H2S_BODY_REFD)
            conn_out_give(h->c, st->body, st->body, 0);
        else free(st->body);
        st->body = NULL;
    }
    h->closed[h->closed_pos].id = st->id;
    h->closed[h->closed_pos].reset_by_us = reset_by_us;
    h->closed_pos = (h->closed_pos + 1) % H2_CLOSED_RING;
    if (h->last_found == st) h->last_found = NULL;
    if (h->hdr_stream == st) h->hdr_stream = NULL;
    if (h->upgraded == st) h->upgraded = NULL;
    if (st->prev) st->prev->next = st->next;
    else h->live = st->next;
    if (st->next) st->next->prev = st->prev;
    h->nlive--;
    st->prev = NULL;
    recycle(st);
}

void h2_stream_free_all(h2_conn *h) {
    h2_stream *st, *next;
    /* Output segments die with the connection too, so bodies go now. */
    for (st = h->live; st; st = next) {
        next = st->next;
        h2_head_free(&st->head);
        free(st->body);
        st->body = NULL;
        recycle(st);
    }
    h->live = h->wait_head = h->wait_tail = NULL;
    h->last_found = h->hdr_stream = h->upgraded = NULL;
    h->nlive = 0;
}

int h2_stream_append(h2_stream *st, const uint8_t *p, size_t n,
                     uint64_t max_body) {
    if (n == 0) return H2_BODY_OK;
    if (n > max_body - st->blen) return H2_BODY_TOO_LARGE;
    if (st->blen + n > st->bcap) {
        size_t cap = st->bcap ? st->bcap * 2 : H2_BODY_INITIAL;
        /* A declared length is exact (a stream whose DATA disagrees is
         * reset), so one allocation usually suffices. It is trusted only up
         * to the stream window, though: 128 streams each declaring 16 MiB
         * and sending a byte must not reserve 2 GiB. */
        if (!st->bcap && st->head.has_clen)
            cap = st->head.clen < H2_STREAM_WINDOW ? (size_t)st->head.clen
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

void h2_stream_request(h2_stream *st, route_request *rq) {
    size_t mlen, plen;
    const char *m = h2_head_method(&st->head, &mlen);
    const char *path = h2_head_path(&st->head, &plen);
    const char *q = memchr(path, '?', plen);

    memset(rq, 0, sizeof(*rq));
    rq->method = m;
    rq->method_len = mlen;
    rq->path = path;
    rq->path_len = q ? (size_t)(q - path) : plen;
    rq->query = q ? q + 1 : NULL;
    rq->query_len = q ? plen - (size_t)(q + 1 - path) : 0;
    rq->body = st->body;
    rq->body_len = st->blen;
    rq->scratch = &st->scratch;
}
