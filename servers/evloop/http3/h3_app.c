#include "http3/h3_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_status.h"
#include "http/routes.h"
#include "http/sbuf.h"
#include "net/conn.h"
#include "net/date_cache.h"

/* :method and :path are kept (the route needs them); other fields are read
 * and dropped. A path longer than this is 414, as HTTP/1.1's line limit. */
#define H3_HEAD_MAX 8192
/* What a finished stream keeps of its buffers for the next one. */
#define H3_KEEP 2048

typedef struct h3_stream {
    struct h3_stream *next_free;      /* in the pool */
    struct h3_stream *prev, *next;    /* in the live list */
    int64_t id;
    char head[H3_HEAD_MAX]; /* method, then path */
    size_t method_len, path_len;
    int error;    /* a status chosen before the route (413, 414, 400) */
    int ended;    /* the request is complete (or was answered early) */
    long long t_open, t_recv; /* ms: its head began; its last body byte */
    uint64_t received;        /* body bytes received, kept or not */
    sbuf body;    /* the request body */
    size_t owed;  /* body bytes taken in whose credit is withheld */
    route_scratch scratch;
    /* the response, alive until nghttp3 closes the stream */
    const char *out;
    size_t out_len;
    int sent; /* the body was handed to nghttp3 */
    char status[4], clen[24];
    nghttp3_nv nv[6];
} h3_stream;

struct h3_app {
    nghttp3_conn *h3;
    ngtcp2_conn *qc;
    h3_limits lim;
    h3_stream *free; /* finished streams, reused: no allocation per request */
    h3_stream *live; /* open ones, freed with the connection */
    size_t pooled;
    uint64_t held;   /* request-body bytes the live streams hold */
    uint64_t now;        /* ns: h3_app_clock */
    uint64_t next_check; /* ns: no request is late before this */
};

#define NS_PER_MS 1000000ULL

/* A stream from the pool (or a new one while the pool is empty). */
static h3_stream *stream_get(h3_app *a, int64_t id) {
    h3_stream *st = a->free;
    if (st) {
        a->free = st->next_free;
        a->pooled--;
    } else if (!(st = calloc(1, sizeof(*st)))) {
        return NULL;
    }
    st->id = id;
    st->method_len = st->path_len = 0;
    st->error = 0;
    st->ended = 0;
    st->t_open = st->t_recv = (long long)(a->now / NS_PER_MS);
    st->received = 0;
    st->out = NULL;
    st->out_len = 0;
    st->sent = 0;
    st->owed = 0;
    st->prev = NULL;
    st->next = a->live;
    if (a->live) a->live->prev = st;
    a->live = st;
    return st;
}

static void stream_free(h3_stream *st) {
    sbuf_free(&st->body);
    route_scratch_free(&st->scratch);
    free(st);
}

/* Data the application has taken in returns its credit to the peer. */
static void consumed(h3_app *a, int64_t id, size_t n) {
    ngtcp2_conn_extend_max_stream_offset(a->qc, id, n);
    ngtcp2_conn_extend_max_offset(a->qc, n);
}

/* A body that leaves memory (its stream ended, or 413 dropped it) lowers
 * what the connection holds, and the credit withheld from the others comes
 * back while the connection stays within its budget. */
static void release_body(h3_app *a, h3_stream *st) {
    a->held -= st->body.len;
    if (st->owed) {
        /* its own stream may be gone: the connection's credit still counts */
        ngtcp2_conn_extend_max_offset(a->qc, st->owed);
        ngtcp2_conn_extend_max_stream_offset(a->qc, st->id, st->owed);
        st->owed = 0;
    }
    for (h3_stream *o = a->live; o && a->held <= a->lim.conn_memory; o = o->next)
        if (o->owed) {
            consumed(a, o->id, o->owed);
            o->owed = 0;
        }
}

/* Back to the pool; beyond the concurrent limit, freed. */
static void stream_put(h3_app *a, h3_stream *st) {
    if (st->prev) st->prev->next = st->next;
    else a->live = st->next;
    if (st->next) st->next->prev = st->prev;
    release_body(a, st);
    sbuf_reset(&st->body, H3_KEEP);
    route_scratch_reset(&st->scratch, H3_KEEP);
    if (a->pooled >= a->lim.max_streams) {
        stream_free(st);
        return;
    }
    st->next_free = a->free;
    a->free = st;
    a->pooled++;
}


static int on_acked(nghttp3_conn *c, int64_t id, uint64_t n, void *ud,
                    void *sud) {
    (void)c, (void)id, (void)n, (void)ud, (void)sud;
    return 0; /* the body stays until the stream closes */
}

static int on_stream_close(nghttp3_conn *c, int64_t id, uint64_t code,
                           void *ud, void *sud) {
    (void)c, (void)id, (void)code;
    h3_app *a = ud;
    if (sud) stream_put(a, sud);
    /* A request stream's end lets the peer open another. */
    if (ngtcp2_is_bidi_stream(id)) ngtcp2_conn_extend_max_streams_bidi(a->qc, 1);
    return 0;
}

static int on_begin_headers(nghttp3_conn *c, int64_t id, void *ud,
                            void *sud) {
    (void)sud;
    h3_app *a = ud;
    h3_stream *st = stream_get(a, id);
    if (!st) return NGHTTP3_ERR_CALLBACK_FAILURE;
    nghttp3_conn_set_stream_user_data(c, id, st);
    uint64_t late = a->now + (uint64_t)a->lim.body_timeout_ms * NS_PER_MS;
    if (late < a->next_check) a->next_check = late;
    return 0;
}

static int on_header(nghttp3_conn *c, int64_t id, int32_t token,
                     nghttp3_rcbuf *name, nghttp3_rcbuf *value,
                     uint8_t flags, void *ud, void *sud) {
    (void)c, (void)id, (void)name, (void)flags, (void)ud;
    h3_stream *st = sud;
    if (!st || (token != NGHTTP3_QPACK_TOKEN__METHOD &&
                token != NGHTTP3_QPACK_TOKEN__PATH))
        return 0;
    nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
    size_t used = st->method_len + st->path_len;
    if (v.len > H3_HEAD_MAX - used) {
        st->error = 414;
        return 0;
    }
    if (token == NGHTTP3_QPACK_TOKEN__METHOD) {
        if (st->method_len) return 0; /* nghttp3 refuses duplicates */
        /* the path may already be there: move it up */
        memmove(st->head + v.len, st->head, st->path_len);
        memcpy(st->head, v.base, v.len);
        st->method_len = v.len;
    } else {
        memcpy(st->head + st->method_len + st->path_len, v.base, v.len);
        st->path_len = v.len;
    }
    return 0;
}

static int on_data(nghttp3_conn *c, int64_t id, const uint8_t *data,
                   size_t len, void *ud, void *sud) {
    (void)c;
    h3_app *a = ud;
    h3_stream *st = sud;
    if (st) {
        st->received += len;
        st->t_recv = (long long)(a->now / NS_PER_MS);
    }
    if (!st || st->error) {
        consumed(a, id, len); /* read and dropped */
        return 0;
    }
    if (len > a->lim.max_body - st->body.len) {
        st->error = 413; /* the rest is read and dropped */
        consumed(a, id, len);
        release_body(a, st);
        sbuf_reset(&st->body, H3_KEEP);
        return 0;
    }
    if (sbuf_put(&st->body, data, len) < 0) return NGHTTP3_ERR_CALLBACK_FAILURE;
    a->held += len;
    /* Over the connection's budget the bytes are kept but not credited: the
     * client can send no more than its windows allow until bodies leave. */
    if (a->held <= a->lim.conn_memory) consumed(a, id, len);
    else st->owed += len;
    return 0;
}

static int on_deferred_consume(nghttp3_conn *c, int64_t id, size_t n,
                               void *ud, void *sud) {
    (void)c, (void)sud;
    consumed(ud, id, n);
    return 0;
}

static nghttp3_ssize read_body(nghttp3_conn *c, int64_t id, nghttp3_vec *vec,
                               size_t veccnt, uint32_t *pflags, void *ud,
                               void *sud) {
    (void)c, (void)id, (void)veccnt, (void)ud;
    h3_stream *st = sud;
    *pflags |= NGHTTP3_DATA_FLAG_EOF;
    if (st->sent || st->out_len == 0) return 0;
    st->sent = 1;
    vec[0].base = (uint8_t *)st->out;
    vec[0].len = st->out_len;
    return 1;
}

#define NV(n, v, vl)                                                      \
    ((nghttp3_nv){(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),    \
                  NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE})

static int respond(h3_app *a, h3_stream *st, int status, const char *ctype,
                   const char *allow, const char *body, size_t len,
                   int is_head) {
    static const nghttp3_data_reader dr = {read_body};
    st->out = body;
    st->out_len = is_head ? 0 : len;
    int sl = snprintf(st->status, sizeof(st->status), "%03d", status);
    int cl = snprintf(st->clen, sizeof(st->clen), "%zu", len);
    size_t n = 0;
    st->nv[n++] = NV(":status", st->status, (size_t)sl);
    st->nv[n++] = NV("server", "evloop", 6);
    st->nv[n++] = NV("date", date_cache_get(), DATE_CACHE_LEN);
    st->nv[n++] = NV("content-type", ctype, strlen(ctype));
    st->nv[n++] = NV("content-length", st->clen, (size_t)cl);
    if (allow) st->nv[n++] = NV("allow", allow, strlen(allow));
    return nghttp3_conn_submit_response(a->h3, st->id, st->nv, n, &dr);
}

static int respond_error(h3_app *a, h3_stream *st, int status) {
    size_t len;
    const char *body = http_status_error_body(status, &len);
    return respond(a, st, status, "text/plain", NULL, body, len, 0);
}

static int on_end_stream(nghttp3_conn *c, int64_t id, void *ud, void *sud) {
    (void)c, (void)id;
    h3_app *a = ud;
    h3_stream *st = sud;
    if (!st || st->ended) return 0;
    st->ended = 1;
    if (st->error) return respond_error(a, st, st->error) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
    if (!st->method_len || !st->path_len) return respond_error(a, st, 400) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
    const char *path = st->head + st->method_len;
    const char *q = memchr(path, '?', st->path_len);
    route_request rq = {
        .method = st->head, .method_len = st->method_len,
        .path = path, .path_len = q ? (size_t)(q - path) : st->path_len,
        .query = q ? q + 1 : NULL,
        .query_len = q ? st->path_len - (size_t)(q - path) - 1 : 0,
        .body = st->body.data, .body_len = st->body.len,
        .scratch = &st->scratch,
    };
    route_response rs;
    routes_handle(&rq, &rs);
    const char *body = rs.body;
    size_t len = rs.body_len;
    if (rs.body_is_request) body = st->body.data, len = st->body.len;
    else if (rs.body_in_scratch) body = st->scratch.out.data;
    int is_head = rq.method_len == 4 && memcmp(rq.method, "HEAD", 4) == 0;
    int rv = respond(a, st, rs.status, rs.content_type ? rs.content_type : "text/plain",
                     rs.allow, body, len, is_head);
    return rv ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int on_stop_sending(nghttp3_conn *c, int64_t id, uint64_t code,
                           void *ud, void *sud) {
    (void)c, (void)sud;
    h3_app *a = ud;
    return ngtcp2_conn_shutdown_stream_read(a->qc, id, code) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int on_reset_stream(nghttp3_conn *c, int64_t id, uint64_t code,
                           void *ud, void *sud) {
    (void)c, (void)sud;
    h3_app *a = ud;
    return ngtcp2_conn_shutdown_stream_write(a->qc, id, code) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

/* A request too slow to arrive: 408, its body dropped, and the client asked
 * to stop sending (a server may answer before the request is complete and
 * then STOP_SENDING with H3_NO_ERROR: RFC 9114 section 4.1). */
static int time_out(h3_app *a, h3_stream *st) {
    st->ended = 1;
    st->error = 408;
    release_body(a, st);
    sbuf_reset(&st->body, H3_KEEP);
    int rv = respond_error(a, st, 408);
    if (rv) return rv;
    rv = nghttp3_conn_shutdown_stream_read(a->h3, st->id);
    if (rv) return rv;
    ngtcp2_conn_shutdown_stream_read(a->qc, st->id, NGHTTP3_H3_NO_ERROR);
    return 0;
}

void h3_app_clock(h3_app *a, uint64_t now) { a->now = now; }

uint64_t h3_app_deadline(const h3_app *a) { return a->next_check; }

int h3_app_expire(h3_app *a, uint64_t now) {
    if (now < a->next_check) return 0;
    long long now_ms = (long long)(now / NS_PER_MS);
    uint64_t next = UINT64_MAX;
    for (h3_stream *st = a->live; st; st = st->next) {
        if (st->ended) continue;
        long long at = body_deadline(a->lim.body_timeout_ms, a->lim.body_min_rate,
                                     st->t_open, st->received, st->t_recv);
        if (at <= now_ms) {
            int rv = time_out(a, st);
            if (rv) return rv;
        } else if ((uint64_t)at * NS_PER_MS < next) {
            next = (uint64_t)at * NS_PER_MS;
        }
    }
    a->next_check = next;
    return 0;
}

h3_app *h3_app_new(ngtcp2_conn *qc, const h3_limits *lim,
                   const nghttp3_mem *mem) {
    static const nghttp3_callbacks cb = {
        .acked_stream_data = on_acked,
        .stream_close = on_stream_close,
        .recv_data = on_data,
        .deferred_consume = on_deferred_consume,
        .begin_headers = on_begin_headers,
        .recv_header = on_header,
        .end_stream = on_end_stream,
        .stop_sending = on_stop_sending,
        .reset_stream = on_reset_stream,
    };
    nghttp3_settings s;
    int64_t ctrl, enc, dec;
    h3_app *a = calloc(1, sizeof(*a));
    if (!a) return NULL;
    a->qc = qc;
    a->lim = *lim;
    a->next_check = UINT64_MAX;
    nghttp3_settings_default(&s);
    /* QPACK's dynamic table: as h2o and nginx offer, 4 KiB; streams that may
     * wait on it: every request stream at once. */
    s.qpack_max_dtable_capacity = 4096;
    s.qpack_blocked_streams = lim->max_streams;
    s.max_field_section_size = 16384;
    if (nghttp3_conn_server_new(&a->h3, &cb, &s, mem, a) != 0) {
        free(a);
        return NULL;
    }
    nghttp3_conn_set_max_client_streams_bidi(a->h3, lim->max_streams);
    if (ngtcp2_conn_open_uni_stream(qc, &ctrl, NULL) != 0 ||
        nghttp3_conn_bind_control_stream(a->h3, ctrl) != 0 ||
        ngtcp2_conn_open_uni_stream(qc, &enc, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(qc, &dec, NULL) != 0 ||
        nghttp3_conn_bind_qpack_streams(a->h3, enc, dec) != 0) {
        h3_app_free(a);
        return NULL;
    }
    return a;
}

void h3_app_free(h3_app *a) {
    if (!a) return;
    nghttp3_conn_del(a->h3);
    for (h3_stream *st = a->live, *next; st; st = next) {
        next = st->next;
        stream_free(st);
    }
    for (h3_stream *st = a->free, *next; st; st = next) {
        next = st->next_free;
        stream_free(st);
    }
    free(a);
}

nghttp3_conn *h3_app_conn(h3_app *a) { return a->h3; }
