/* h2_out: responses and the output path of the h2 handler.
 *
 * Frames reach the wire in two ways. Whatever nghttp2 serializes (HEADERS,
 * SETTINGS, WINDOW_UPDATE, small DATA) comes out of nghttp2_session_mem_send
 * and is copied into the connection's obuf -- the pointer is only valid
 * until the next call, and the copies of a whole read's frames sit next to
 * each other, so they leave as one iovec. Large DATA payloads use
 * NGHTTP2_DATA_FLAG_NO_COPY: only the 9-byte frame header is copied and the
 * payload is queued by reference (the static 'x' buffer or the stream's
 * body), which saves two memcpys per byte (into nghttp2's frame buffer, then
 * into obuf) on 1 MiB responses and echoed uploads. Nothing is written here:
 * the connection flushes once per loop turn. */
#include <stdlib.h>
#include <string.h>

#include "date_cache.h"
#include "h2_conn.h"
#include "http_status.h"

/* DATA payloads at least this big go out by reference; smaller ones are
 * copied, since an extra iovec costs more than a short memcpy and copies
 * keep a batch of small responses in one contiguous obuf range. */
#define H2_NO_COPY_MIN 2048

/* Static header values, never copied by nghttp2 (NO_COPY flags): names are
 * literals, values are literals, the date cache (rewritten in place, same
 * length) or the stream's clen buffer, which outlives its HEADERS frame. */
static nghttp2_nv nv_static(const char *name, const char *value, size_t vlen) {
    nghttp2_nv nv = {(uint8_t *)name, (uint8_t *)value, strlen(name), vlen,
                     NGHTTP2_NV_FLAG_NO_COPY_NAME |
                         NGHTTP2_NV_FLAG_NO_COPY_VALUE};
    return nv;
}

static ssize_t read_body(nghttp2_session *ng, int32_t stream_id, uint8_t *buf,
                         size_t length, uint32_t *data_flags,
                         nghttp2_data_source *source, void *user_data) {
    h2_stream *st = source->ptr;
    size_t left = st->out_len - st->out_off;
    size_t n = left < length ? left : length;
    (void)ng;
    (void)stream_id;

    if (n == left) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    if (n >= H2_NO_COPY_MIN) {
        /* h2_send_data queues it and advances out_off. */
        *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
        return (ssize_t)n;
    }
    memcpy(buf, st->out + st->out_off, n);
    st->out_off += n;
    st->t_sent = conn_now(((h2_conn *)user_data)->c);
    return (ssize_t)n;
}

static int submit(h2_conn *h, h2_stream *st, int status, const char *ctype,
                  const char *allow, const char *body, size_t len,
                  int is_head) {
    nghttp2_nv nv[6];
    size_t n = 0;
    size_t clen_len = fmt_u64(st->clen, len);

    http_status_digits(status, st->status);
    nv[n++] = nv_static(":status", st->status, 3);
    nv[n++] = nv_static("server", "evloop", 6);
    nv[n++] = nv_static("date", date_cache_get(), DATE_CACHE_LEN);
    nv[n++] = nv_static("content-type", ctype, strlen(ctype));
    nv[n++] = nv_static("content-length", st->clen, clen_len);
    if (allow) nv[n++] = nv_static("allow", allow, strlen(allow));

    st->flags |= H2S_RESPONDED;
    st->out = body;
    st->out_len = len;
    st->out_off = 0;
    st->t_sent = conn_now(h->c);
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    /* HEAD and empty bodies end the stream with the HEADERS frame. */
    int rv = nghttp2_submit_response(h->ng, st->id, nv, n,
                                     is_head || len == 0 ? NULL : &dp);
    /* INVALID_ARGUMENT / STREAM_CLOSED only mean the stream is gone. */
    return rv == NGHTTP2_ERR_NOMEM ? -1 : 0;
}

int h2_submit(h2_conn *h, h2_stream *st, const route_response *rs,
              int is_head) {
    if (rs->body_in_scratch) {
        sbuf *sb = &st->scratch.out;
        if (is_head || sb->len < H2_NO_COPY_MIN)
            /* Copied into DATA frames (read_body) before the stream can
             * close, so the scratch stays with the pooled stream. */
            return submit(h, st, rs->status, rs->content_type, rs->allow,
                          sb->data, sb->len, is_head);
        /* Large: it will go out by reference and may outlive the stream,
         * which is what the body's ownership hand-over already handles.
         * So it takes the place of the request body, which the route has
         * finished reading; the scratch starts afresh next time. */
        free(st->body);
        st->body = sb->data;
        st->blen = sb->len;
        st->bcap = sb->cap;
        *sb = (sbuf){0};
        return submit(h, st, rs->status, rs->content_type, rs->allow,
                      st->body, st->blen, is_head);
    }
    if (rs->body_is_request)
        return submit(h, st, rs->status, rs->content_type, rs->allow,
                      st->body, st->blen, is_head);
    return submit(h, st, rs->status, rs->content_type, rs->allow, rs->body,
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
    return submit(h, st, status, "text/plain", NULL, body, len, 0);
}

int h2_send_data(nghttp2_session *ng, nghttp2_frame *frame,
                 const uint8_t *framehd, size_t length,
                 nghttp2_data_source *source, void *user_data) {
    h2_conn *h = user_data;
    conn *c = h->c;
    h2_stream *st = source->ptr;
    size_t pad = frame->data.padlen;
    const char *src = st->out + st->out_off;
    int r;
    (void)ng;

    /* nghttp2 retries the same frame later (the pump resumes once the
     * queue drained): this is how backpressure reaches big bodies. */
    if (conn_out_full(c)) return NGHTTP2_ERR_WOULDBLOCK;
    char *p = conn_out_reserve(c, 10);
    if (!p) return NGHTTP2_ERR_CALLBACK_FAILURE;
    memcpy(p, framehd, 9);
    if (pad) p[9] = (char)(pad - 1);
    if (conn_out_commit(c, pad ? 10 : 9) < 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;

    st->out_off += length;
    st->t_sent = conn_now(c);
    if (st->out != st->body) {
        r = conn_out_ref(c, src, length); /* static memory */
    } else if (st->out_off == st->out_len) {
        /* The last frame of an echo carries the body's ownership: the
         * queue frees it after this frame (and the earlier ones) left. */
        r = conn_out_give(c, st->body, src, length);
        st->body = NULL;
        st->out = NULL;
        st->flags &= ~H2S_BODY_REFD;
    } else {
        r = conn_out_ref(c, src, length);
        st->flags |= H2S_BODY_REFD;
    }
    if (r < 0) return NGHTTP2_ERR_CALLBACK_FAILURE;

    if (pad > 1) {
        /* We never pad, but honour the frame nghttp2 built. */
        if (!(p = conn_out_reserve(c, pad - 1)))
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        memset(p, 0, pad - 1);
        if (conn_out_commit(c, pad - 1) < 0)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

int h2_pump(h2_conn *h) {
    conn *c = h->c;
    while (!conn_out_full(c)) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(h->ng, &data);
        if (n < 0) return -1;
        if (n == 0) break; /* nothing to send, or a NO_COPY frame blocked */
        if (conn_out_copy(c, data, (size_t)n) < 0) return -1;
    }
    return 0;
}
