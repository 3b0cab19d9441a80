/* h2_out: responses and the frames a server sends.
 *
 * Every frame is written straight into the connection's output queue, which
 * is flushed once per loop turn: the frames of every stream answered in one
 * read leave in one writev. A response's header block is built from
 * pre-encoded pieces (h2_hpack: no dynamic table, so no per-field hashing);
 * small bodies are copied next to their headers, bodies of at least
 * H2_NO_COPY_MIN bytes go out by reference (the static 'x' buffer, or the
 * stream's own body handed to the queue with its last frame). DATA is sent
 * within both send windows; a stream that has to wait sits on the
 * connection's sending list, which a WINDOW_UPDATE, a SETTINGS change or
 * a drained output queue resumes. */
#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"
#include "h2_frame.h"
#include "h2_hpack.h"
#include "http/http_status.h"
#include "net/date_cache.h"

/* DATA payloads at least this big go out by reference; smaller ones are
 * copied, since an extra iovec costs more than a short memcpy and copies
 * keep a batch of small responses in one contiguous obuf range. */
#define H2_NO_COPY_MIN 2048
/* The most a header block of ours takes: the table size update, :status,
 * server, date, content-length, and content-type and allow up to this
 * length each. Longer values are a route's mistake and answered 500. */
#define H2_VALUE_MAX 256
#define H2_BLOCK_MAX (8 + 3 * 11 + 3 + 6 + 29 + 20 + 2 * HPACK_FIELD_MAX(H2_VALUE_MAX))

static int out_frame(h2_conn *h, const uint8_t *p, size_t n) {
    return conn_out_copy(h->c, p, n);
}

int h2_send_preface(h2_conn *h) {
    uint8_t f[9 + 3 * 6 + 13];
    const uint32_t iv[][2] = {
        {H2SET_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
        {H2SET_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
        {H2SET_MAX_HEADER_LIST_SIZE, h->c->cfg->h2_max_header_list},
    };
    size_t n = h2_frame_write_hd(f, sizeof(iv) / sizeof(iv[0]) * 6,
                                 H2F_SETTINGS, 0, 0);
    for (size_t i = 0; i < sizeof(iv) / sizeof(iv[0]); i++) {
        f[n++] = (uint8_t)(iv[i][0] >> 8);
        f[n++] = (uint8_t)iv[i][0];
        f[n++] = (uint8_t)(iv[i][1] >> 24);
        f[n++] = (uint8_t)(iv[i][1] >> 16);
        f[n++] = (uint8_t)(iv[i][1] >> 8);
        f[n++] = (uint8_t)iv[i][1];
    }
    n += h2_write_window_update(f + n, 0, H2_CONN_WINDOW - H2_DEFAULT_WINDOW);
    h->recv_window = H2_CONN_WINDOW;
    return out_frame(h, f, n);
}

int h2_reset_id(h2_conn *h, uint32_t id, uint32_t code) {
    uint8_t f[13];
    return out_frame(h, f, h2_write_rst_stream(f, id, code));
}

int h2_reset(h2_conn *h, h2_stream *st, uint32_t code) {
    int rv = h2_reset_id(h, st->id, code);
    h2_stream_close(h, st, 1);
    return rv;
}

int h2_goaway(h2_conn *h, uint32_t code, int fatal) {
    uint8_t f[17];
    if (fatal) h->failed = 1;
    if (h->goaway_sent && code == H2E_NO_ERROR) return 0;
    h->goaway_sent = 1;
    h->goaway_last = h->last_id;
    return out_frame(h, f, h2_write_goaway(f, h->last_id, code));
}

/* ---- header blocks ---- */

/* "server: evloop", encoded once. */
static size_t put_server(uint8_t *p) {
    static uint8_t enc[16];
    static size_t len;
    if (!len) len = hpack_put_field(enc, HPACK_SERVER, "evloop", 6);
    memcpy(p, enc, len);
    return len;
}

static size_t put_block(h2_conn *h, uint8_t *p, int status, const char *ctype,
                        size_t ctype_len, const char *allow, size_t allow_len,
                        size_t body_len) {
    char num[20];
    size_t n = 0;
    if (h->table_update) {
        /* 001xxxxx: our (empty) table's size is now 0, within any limit
         * the peer may have set. */
        p[n++] = 0x20;
        h->table_update = 0;
    }
    n += hpack_put_status(p + n, status);
    n += put_server(p + n);
    n += hpack_put_field(p + n, HPACK_DATE, date_cache_get(), DATE_CACHE_LEN);
    n += hpack_put_field(p + n, HPACK_CONTENT_TYPE, ctype, ctype_len);
    n += hpack_put_field(p + n, HPACK_CONTENT_LENGTH, num,
                         fmt_u64(num, body_len));
    if (allow) n += hpack_put_field(p + n, HPACK_ALLOW, allow, allow_len);
    return n;
}

/* Queues the stream on the sending list (once). */
static void wait_for_room(h2_conn *h, h2_stream *st) {
    if (st->flags & H2S_WAITING) return;
    st->flags |= H2S_WAITING;
    st->wnext = NULL;
    if (h->wait_tail) h->wait_tail->wnext = st;
    else h->wait_head = st;
    h->wait_tail = st;
}

/* The response is all queued: the stream is done, unless the peer is still
 * uploading (an early 413/408/431), which RST_STREAM(NO_ERROR) stops (RFC
 * 9113 8.1). */
static int finish(h2_conn *h, h2_stream *st) {
    if (st->flags & H2S_REMOTE_DONE) {
        h2_stream_close(h, st, 0);
        return 0;
    }
    return h2_reset(h, st, H2E_NO_ERROR);
}

/* DATA frames of st within the windows and the output room. Returns 1 when
 * the body is all queued, 0 when it has to wait, -1 on error. */
static int send_data(h2_conn *h, h2_stream *st) {
    conn *c = h->c;
    while (st->out_off < st->out_len) {
        int64_t win = st->send_window < h->send_window ? st->send_window
                                                       : h->send_window;
        if (win <= 0 || conn_out_full(c)) return 0;
        size_t left = st->out_len - st->out_off;
        size_t n = left;
        if (n > (uint64_t)win) n = (size_t)win;
        if (n > h->peer.max_frame_size) n = h->peer.max_frame_size;
        int last = n == left;
        const char *src = st->out + st->out_off;
        uint8_t *p;
        int r;
        if (n < H2_NO_COPY_MIN) {
            if (!(p = (uint8_t *)conn_out_reserve(c, 9 + n))) return -1;
            h2_frame_write_hd(p, (uint32_t)n, H2F_DATA,
                              last ? H2FL_END_STREAM : 0, st->id);
            memcpy(p + 9, src, n);
            r = conn_out_commit(c, 9 + n);
        } else {
            if (!(p = (uint8_t *)conn_out_reserve(c, 9))) return -1;
            h2_frame_write_hd(p, (uint32_t)n, H2F_DATA,
                              last ? H2FL_END_STREAM : 0, st->id);
            if (conn_out_commit(c, 9) < 0) return -1;
            if (st->out != st->body) {
                r = conn_out_ref(c, src, n); /* static memory */
            } else if (last) {
                /* The last frame of an echo carries the body's ownership:
                 * the queue frees it after this frame (and earlier ones). */
                r = conn_out_give(c, st->body, src, n);
                st->body = NULL;
                st->flags &= ~H2S_BODY_REFD;
            } else {
                r = conn_out_ref(c, src, n);
                st->flags |= H2S_BODY_REFD;
            }
        }
        if (r < 0) return -1;
        st->out_off += n;
        st->send_window -= (int64_t)n;
        h->send_window -= (int64_t)n;
        st->t_sent = conn_now(c);
    }
    return 1;
}

static int start(h2_conn *h, h2_stream *st, int status, const char *ctype,
                 const char *allow, const char *body, size_t len,
                 int is_head) {
    size_t ctype_len = strlen(ctype), allow_len = allow ? strlen(allow) : 0;
    if (ctype_len > H2_VALUE_MAX || allow_len > H2_VALUE_MAX) {
        /* Not something a peer can cause: a route's mistake. */
        body = http_status_error_body(500, &len);
        status = 500;
        ctype = "text/plain";
        ctype_len = 10;
        allow = NULL;
        allow_len = 0;
    }
    uint8_t *p = (uint8_t *)conn_out_reserve(h->c, 9 + H2_BLOCK_MAX);
    if (!p) return -1;
    int end = is_head || len == 0;
    size_t n = put_block(h, p + 9, http_status_valid(status), ctype,
                         ctype_len, allow, allow_len, len);
    h2_frame_write_hd(p, (uint32_t)n, H2F_HEADERS,
                      H2FL_END_HEADERS | (end ? H2FL_END_STREAM : 0), st->id);
    if (conn_out_commit(h->c, 9 + n) < 0) return -1;
    st->flags |= H2S_RESPONDED;
    st->t_sent = conn_now(h->c);
    if (end) return finish(h, st);
    st->out = body;
    st->out_len = len;
    st->out_off = 0;
    int r = send_data(h, st);
    if (r < 0) return -1;
    if (r == 1) return finish(h, st);
    wait_for_room(h, st);
    return 0;
}

int h2_send_waiting(h2_conn *h) {
    h2_stream *st;
    /* Round the list once: a stream still blocked goes to the back. */
    h2_stream *stop = h->wait_tail;
    while ((st = h->wait_head)) {
        h->wait_head = st->wnext;
        if (!h->wait_head) h->wait_tail = NULL;
        st->wnext = NULL;
        st->flags &= ~H2S_WAITING;
        int r = send_data(h, st);
        if (r < 0) return -1;
        if (r == 1) {
            if (finish(h, st) < 0) return -1;
        } else {
            wait_for_room(h, st);
        }
        if (st == stop || conn_out_full(h->c) || h->send_window <= 0) break;
    }
    return 0;
}

int h2_submit(h2_conn *h, h2_stream *st, const route_response *rs,
              int is_head) {
    if (rs->body_in_scratch) {
        sbuf *sb = &st->scratch.out;
        if (is_head || sb->len < H2_NO_COPY_MIN)
            /* Copied into DATA frames while the stream is alive, so the
             * scratch stays with the pooled stream. */
            return start(h, st, rs->status, rs->content_type, rs->allow,
                         sb->data, sb->len, is_head);
        /* Large: it goes out by reference and may outlive the stream,
         * which is what the body's ownership hand-over already handles.
         * So it takes the place of the request body, which the route has
         * finished reading; the scratch starts afresh next time. */
        free(st->body);
        st->body = sb->data;
        st->blen = sb->len;
        st->bcap = sb->cap;
        *sb = (sbuf){0};
        return start(h, st, rs->status, rs->content_type, rs->allow,
                     st->body, st->blen, is_head);
    }
    if (rs->body_is_request)
        return start(h, st, rs->status, rs->content_type, rs->allow, st->body,
                     st->blen, is_head);
    return start(h, st, rs->status, rs->content_type, rs->allow, rs->body,
                 rs->body_len, is_head);
}

int h2_is_head(const route_request *rq) {
    return rq->method_len == 4 && memcmp(rq->method, "HEAD", 4) == 0;
}

int h2_respond(h2_conn *h, h2_stream *st, const route_request *rq) {
    route_response rs;
    routes_handle(rq, &rs);
    return h2_submit(h, st, &rs, h2_is_head(rq));
}

int h2_respond_error(h2_conn *h, h2_stream *st, int status) {
    size_t len;
    const char *body = http_status_error_body(status, &len);
    return start(h, st, status, "text/plain", NULL, body, len, 0);
}
