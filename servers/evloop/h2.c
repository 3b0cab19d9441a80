/* h2: session lifecycle and the input side of the HTTP/2 handler.
 *
 * Every read is fed whole to nghttp2_session_mem_recv; its callbacks build
 * per-stream request state and, when a stream's request is complete
 * (END_STREAM on HEADERS or DATA), answer it right there. So every stream
 * in a read is answered, however many arrive. Then h2_pump moves the
 * resulting frames into the output queue, which the connection writes once
 * per loop turn. */
#include "h2.h"

#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"
#include "h2_mem.h"
#include "h2_wire.h"

/* Largest decoded HTTP2-Settings we accept: 6 bytes per setting, and only
 * a handful of settings exist. */
#define H2_UPGRADE_SETTINGS_MAX 256

/* Of nghttp2_submit_*'s errors only NOMEM matters; the others mean the
 * stream is already gone, which is fine for a late reset or GOAWAY. */
static int nomem(int rv) { return rv == NGHTTP2_ERR_NOMEM; }

/* ---- nghttp2 callbacks ---- */

static h2_stream *stream_of(h2_conn *h, int32_t id) {
    return h->dying ? NULL : nghttp2_session_get_stream_user_data(h->ng, id);
}

/* Frames that make us work but carry no request: PING, SETTINGS, PRIORITY
 * and empty DATA. nghttp2 bounds the acks it queues for a peer that does not
 * read them (max_outbound_ack); this token bucket bounds a peer that reads
 * them as fast as it floods. Returns -1 when the bucket is empty. */
static int flood_take(h2_conn *h) {
    const conn_config *cfg = h->c->cfg;
    long long now = conn_now(h->c);
    h->flood_tokens += (double)(now - h->flood_at) * cfg->h2_flood_rate / 1e3;
    if (h->flood_tokens > cfg->h2_flood_burst)
        h->flood_tokens = cfg->h2_flood_burst;
    h->flood_at = now;
    if (h->flood_tokens < 1) return -1;
    h->flood_tokens -= 1;
    return 0;
}

/* GOAWAY(ENHANCE_YOUR_CALM) queued; parsing stops and the connection closes
 * once it is written. */
static int flooded(nghttp2_session *ng) {
    nghttp2_session_terminate_session(ng, NGHTTP2_ENHANCE_YOUR_CALM);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* RFC 7540 5.1.1: a new stream id must exceed every earlier one, else
 * connection error PROTOCOL_ERROR. nghttp2 silently ignores a HEADERS for an
 * unknown lower id (it cannot tell "never opened" from "long closed"), so
 * we check here: a HEADERS below the highest id seen, for a stream nghttp2
 * does not know, cannot be a trailer or a retry -- it opens a stream out of
 * order. */
static int on_begin_frame(nghttp2_session *ng, const nghttp2_frame_hd *hd,
                          void *user_data) {
    h2_conn *h = user_data;
    if ((hd->type == NGHTTP2_PING || hd->type == NGHTTP2_SETTINGS ||
         hd->type == NGHTTP2_PRIORITY) &&
        flood_take(h) < 0)
        return flooded(ng);
    if (hd->type != NGHTTP2_HEADERS || !(hd->stream_id & 1)) return 0;
    if (hd->stream_id > h->max_client_stream) {
        h->max_client_stream = hd->stream_id;
        return 0;
    }
    if (hd->stream_id < h->max_client_stream &&
        !nghttp2_session_find_stream(ng, hd->stream_id)) {
        /* Queue GOAWAY, then stop parsing: h2_on_data sends it and closes. */
        nghttp2_session_terminate_session(ng, NGHTTP2_PROTOCOL_ERROR);
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame,
                            void *user_data) {
    h2_conn *h = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS ||
        frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    h2_stream *st = h2_stream_open(h, frame->hd.stream_id);
    h->hdr_stream = st;
    /* Out of memory for one stream: reset it, keep the connection. */
    if (!st) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    nghttp2_session_set_stream_user_data(ng, frame->hd.stream_id, st);
    return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     nghttp2_rcbuf *name, nghttp2_rcbuf *value, uint8_t flags,
                     void *user_data) {
    h2_conn *h = user_data;
    (void)ng;
    (void)flags;
    /* Trailers (HCAT_HEADERS) carry nothing the routes use. */
    if (frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    /* The block's stream, found once in on_begin_headers rather than in
     * nghttp2's stream map for every field. */
    h2_stream *st = h->hdr_stream;
    if (!st || st->id != frame->hd.stream_id || h->dying) return 0;
    nghttp2_vec n = nghttp2_rcbuf_get_buf(name);
    nghttp2_vec v = nghttp2_rcbuf_get_buf(value);
    /* RFC 9113 6.5.2 counts a field as name + value + 32. Past the limit the
     * rest is ignored and the stream answered 431 (on_frame_recv). */
    uint32_t limit = h->c->cfg->h2_max_header_list;
    if (st->hdr_bytes <= limit)
        st->hdr_bytes += (uint32_t)(n.len + v.len + 32);
    if (st->hdr_bytes > limit) st->flags |= H2S_HDR_BIG;
    else h2_stream_on_header(st, n, value, v);
    return 0;
}

/* Returns a stream's DATA bytes to the peer's flow-control window. */
static int give_credit(h2_conn *h, int32_t id, size_t n) {
    return n && nghttp2_session_consume(h->ng, id, n) == NGHTTP2_ERR_NOMEM
               ? -1
               : 0;
}

/* The request cannot be served (413 body too large, 431 headers too large,
 * 408 body too slow): answer now. Later DATA is dropped, and once the
 * response is out the rest of the upload is cancelled (on_frame_send). */
static int refuse(h2_conn *h, h2_stream *st, int status) {
    st->flags |= H2S_DISCARD;
    free(st->body);
    st->body = NULL;
    st->blen = st->bcap = 0;
    h->held -= st->held;
    st->held = 0;
    if (give_credit(h, st->id, st->unconsumed) < 0) return -1;
    st->unconsumed = 0;
    if (st->flags & H2S_RESPONDED) return 0;
    return h2_respond_error(h, st, status);
}

/* Keeps a DATA chunk's credit back while the connection holds
 * --h2-conn-memory of bodies: the peer's window shuts, so a client that
 * uploads without reading its answers cannot make us buffer more. */
static int credit(h2_conn *h, h2_stream *st, size_t n) {
    if (h->held <= h->c->cfg->h2_conn_memory)
        return give_credit(h, st->id, n);
    st->unconsumed += n;
    h->withheld = 1;
    return 0;
}

/* Once the connection is under its budget again, every stream gets back
 * the credit kept from it. */
static int return_credit(h2_conn *h) {
    if (!h->withheld || h->held > h->c->cfg->h2_conn_memory) return 0;
    h->withheld = 0;
    for (h2_stream *st = h->live; st; st = st->next) {
        if (give_credit(h, st->id, st->unconsumed) < 0) return -1;
        st->unconsumed = 0;
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id,
                         const uint8_t *data, size_t len, void *user_data) {
    h2_conn *h = user_data;
    h2_stream *st = stream_of(h, id);
    (void)flags;
    if (!st || (st->flags & H2S_DISCARD)) /* dropped: credit goes back */
        return give_credit(h, id, len) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
    st->t_recv = conn_now(h->c);
    switch (h2_stream_append(st, data, len, h->c->cfg->max_body)) {
    case H2_BODY_OK:
        st->held += len;
        h->held += len;
        return credit(h, st, len) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
    case H2_BODY_TOO_LARGE:
        return refuse(h, st, 413) < 0 || give_credit(h, id, len) < 0
                   ? NGHTTP2_ERR_CALLBACK_FAILURE
                   : 0;
    default:
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id,
                                  NGHTTP2_INTERNAL_ERROR);
        st->flags |= H2S_DISCARD | H2S_RESPONDED;
        return give_credit(h, id, len) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
    }
}

static int answer(h2_conn *h, h2_stream *st) {
    route_request rq;
    if (h2_stream_request(st, &rq) < 0) return h2_respond_error(h, st, 400);
    return h2_respond(h, st, &rq);
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *user_data) {
    h2_conn *h = user_data;
    h2_stream *st;
    int rv = 0;

    if (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    /* An empty DATA that does not end the stream is a flood frame (a
     * padded one counts too: padding is not content). */
    if (frame->hd.type == NGHTTP2_DATA &&
        frame->hd.length == frame->data.padlen &&
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && flood_take(h) < 0)
        return flooded(ng);
    if (!(st = stream_of(h, frame->hd.stream_id))) return 0;
    if (frame->hd.type == NGHTTP2_HEADERS &&
        frame->headers.cat == NGHTTP2_HCAT_REQUEST &&
        (st->flags & H2S_HDR_BIG))
        rv = refuse(h, st, 431);
    else if (frame->hd.type == NGHTTP2_HEADERS &&
             frame->headers.cat == NGHTTP2_HCAT_REQUEST &&
             (st->flags & H2S_HAS_CLEN) &&
             st->declared_len > h->c->cfg->max_body)
        /* Refused before any of the body is read. */
        rv = refuse(h, st, 413);
    else if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
             !(st->flags & H2S_RESPONDED))
        rv = answer(h, st);
    return rv < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *user_data) {
    h2_stream *st;
    if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) ||
        (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS))
        return 0;
    st = stream_of(user_data, frame->hd.stream_id);
    /* Our 413 (or 408, 431) is complete but the client is still
     * uploading: RFC 7540 8.1 lets us stop it with RST_STREAM(NO_ERROR). */
    if (st && (st->flags & H2S_DISCARD) &&
        !nghttp2_session_get_stream_remote_close(ng, st->id) &&
        nomem(nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, st->id,
                                        NGHTTP2_NO_ERROR)))
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t err,
                           void *user_data) {
    h2_conn *h = user_data;
    h2_stream *st = stream_of(h, id);
    (void)err;
    if (!st) return 0;
    if (st == h->upgraded) h->upgraded = NULL;
    if (st == h->hdr_stream) h->hdr_stream = NULL;
    nghttp2_session_set_stream_user_data(ng, id, NULL);
    h2_stream_close(h, st);
    return 0;
}

/* One callbacks table for all sessions (nghttp2 copies it at session
 * creation); built on first use, then reachable for the process lifetime. */
static nghttp2_session_callbacks *callbacks(void) {
    static nghttp2_session_callbacks *cbs;
    if (cbs || nghttp2_session_callbacks_new(&cbs) != 0) return cbs;
    nghttp2_session_callbacks_set_on_begin_frame_callback(cbs, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
                                                            on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback2(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
                                                              on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
                                                           on_stream_close);
    nghttp2_session_callbacks_set_send_data_callback(cbs, h2_send_data);
    return cbs;
}

/* ---- session lifecycle ---- */

static void h2_conn_free(h2_conn *h) {
    h->dying = 1;
    h2_stream_free_all(h);
    nghttp2_session_del(h->ng);
    free(h);
}

/* A server session with our SETTINGS queued as its first frame, and the
 * limits of conn_config applied. */
static h2_conn *h2_conn_new(conn *c) {
    nghttp2_session_callbacks *cbs = callbacks();
    const conn_config *cfg = c->cfg;
    h2_conn *h = calloc(1, sizeof(*h));
    nghttp2_option *opt = NULL;
    const nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, cfg->h2_max_header_list},
    };

    if (!h || !cbs || nghttp2_option_new(&opt) != 0) {
        free(h);
        return NULL;
    }
    /* Credit is returned by hand (credit() in this file), which is what
     * bounds the bodies one connection can make us hold. */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    /* Rapid reset (CVE-2023-44487) and CONTINUATION floods: nghttp2 counts,
     * we set the numbers. */
    nghttp2_option_set_stream_reset_rate_limit(opt, cfg->h2_reset_burst,
                                               cfg->h2_reset_rate);
    nghttp2_option_set_max_continuations(opt, cfg->h2_max_continuations);
    h->c = c;
    h->flood_tokens = cfg->h2_flood_burst;
    h->flood_at = conn_now(c);
    int rv = nghttp2_session_server_new3(&h->ng, cbs, h, opt, h2_mem());
    nghttp2_option_del(opt);
    if (rv != 0) {
        free(h);
        return NULL;
    }
    if (nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, iv,
                                sizeof(iv) / sizeof(iv[0])) != 0 ||
        nghttp2_session_set_local_window_size(h->ng, NGHTTP2_FLAG_NONE, 0,
                                              H2_CONN_WINDOW) != 0) {
        h2_conn_free(h);
        return NULL;
    }
    return h;
}

/* The stream's request body is still arriving (and wanted). */
static int receiving(h2_conn *h, h2_stream *st) {
    return !(st->flags & H2S_DISCARD) &&
           !nghttp2_session_get_stream_remote_close(h->ng, st->id);
}

/* When a live stream is late, or 0 if it is not waiting on anyone: a body
 * still arriving has the body deadline (rate since t_open, pause since
 * t_recv), a response stuck behind the peer's window the send timeout. */
static long long stream_deadline(h2_conn *h, h2_stream *st) {
    /* Stream 1 of an h2c upgrade is answered once the client's preface
     * arrives; a client that never sends it has the header timeout. */
    if (st == h->upgraded) return st->t_open + h->c->cfg->header_timeout_ms;
    if (receiving(h, st))
        return conn_body_deadline(h->c, st->t_open, st->blen, st->t_recv);
    if ((st->flags & H2S_RESPONDED) && st->out && st->out_off < st->out_len)
        return st->t_sent + h->c->cfg->send_timeout_ms;
    return 0;
}

/* How soon a connection with open streams looks at their deadlines when
 * none is known yet: the shorter of the two stream limits. */
static long long stream_check_ms(const conn_config *cfg) {
    return cfg->body_timeout_ms < cfg->send_timeout_ms ? cfg->body_timeout_ms
                                                       : cfg->send_timeout_ms;
}

/* After input or an event: queue output, pick the timeout, and tell the
 * connection what comes next. */
static int h2_settle(conn *c, h2_conn *h) {
    if (h2_pump(h) < 0) return PROTO_ABORT;
    if (h->withheld) {
        if (return_credit(h) < 0 || h2_pump(h) < 0) return PROTO_ABORT;
    }
    if (!h->nlive) {
        conn_set_phase(c, CONN_PHASE_IDLE); /* renewed by every event */
    } else if (c->phase != CONN_PHASE_BODY) {
        /* Streams are open. Their deadlines are looked at only when this
         * one passes (h2_on_timeout), so traffic costs no scan per read. */
        conn_set_deadline(c, CONN_PHASE_BODY,
                          conn_now(c) + stream_check_ms(c->cfg));
    }
    int want_write = nghttp2_session_want_write(h->ng);
    if (!want_write && !nghttp2_session_want_read(h->ng)) return PROTO_CLOSE;
    if (want_write && conn_out_full(c)) return PROTO_PAUSED;
    return PROTO_NEED_MORE;
}

/* ---- proto_handler ---- */

static int h2_attach(conn *c) {
    h2_conn *h = h2_conn_new(c);
    if (!h) return -1;
    c->proto_data = h;
    return 0;
}

static void h2_detach(conn *c) {
    if (c->proto_data) h2_conn_free(c->proto_data);
    c->proto_data = NULL;
}

static int h2_on_data(conn *c) {
    h2_conn *h = c->proto_data;
    size_t len = c->rend - c->rstart;

    if (len) {
        ssize_t n = nghttp2_session_mem_recv(
            h->ng, (const uint8_t *)c->rbuf + c->rstart, len);
        /* Nothing is left behind: no callback pauses the parser. */
        c->rstart = c->rend = 0;
        if (n < 0) {
            /* Bad preface, flood, or a callback failure: the session is
             * unusable. Send what it queued (a GOAWAY) and close. nghttp2
             * queues none for its own flood limits (unanswered SETTINGS or
             * PING acks, CONTINUATION frames): say ENHANCE_YOUR_CALM then,
             * so the peer knows why (a GOAWAY already queued wins). */
            if (n == NGHTTP2_ERR_FLOODED ||
                n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
                nghttp2_session_terminate_session(h->ng,
                                                  NGHTTP2_ENHANCE_YOUR_CALM);
            return h2_pump(h) < 0 ? PROTO_ABORT : PROTO_CLOSE;
        }
        if (h->upgraded) {
            h2_stream *st = h->upgraded;
            h->upgraded = NULL;
            if (h2_submit(h, st, &h->upgraded_rs, h->upgraded_head) < 0)
                return PROTO_ABORT;
        }
    }
    return h2_settle(c, h);
}

/* Streams that are late: a body under --body-min-rate or paused for
 * --body-timeout gets 408 (then RST_STREAM(NO_ERROR) if the upload goes on);
 * a response the peer's window has held for --send-timeout is reset with
 * CANCEL, which frees what it holds. Then the deadline is re-armed. Returns
 * 0, -1 (out of memory), or 1 when an h2c upgrade's preface never came. */
static int reset_late_streams(conn *c, h2_conn *h, long long now) {
    long long next = 0;
    for (h2_stream *st = h->live, *nx; st; st = nx) {
        nx = st->next; /* nothing below closes a stream synchronously */
        long long at = stream_deadline(h, st);
        if (!at) continue;
        if (at > now) {
            if (!next || at < next) next = at;
        } else if (st == h->upgraded) {
            return 1; /* no preface: the peer does not speak HTTP/2 */
        } else if (receiving(h, st)) {
            if (refuse(h, st, 408) < 0) return -1;
        } else {
            st->out = NULL; /* nothing more to send: no deadline either */
            if (nomem(nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE,
                                                st->id, NGHTTP2_CANCEL)))
                return -1;
        }
    }
    conn_set_deadline(c, CONN_PHASE_BODY,
                      next ? next : now + stream_check_ms(c->cfg));
    return 0;
}

static int h2_on_timeout(conn *c, long long now) {
    h2_conn *h = c->proto_data;
    if (c->phase == CONN_PHASE_BODY && h->nlive) {
        /* Closed without a word: a peer that sent no preface after our
         * 101 cannot read HTTP/2 frames. */
        if (reset_late_streams(c, h, now) != 0) return PROTO_ABORT;
        return h2_settle(c, h);
    }
    /* Idle keep-alive: GOAWAY(NO_ERROR); closed once it is written. */
    if (nghttp2_session_terminate_session(h->ng, NGHTTP2_NO_ERROR) != 0 ||
        h2_pump(h) < 0)
        return PROTO_ABORT;
    return PROTO_CLOSE;
}

static int h2_on_shutdown(conn *c) {
    h2_conn *h = c->proto_data;
    /* Streams up to the last one we processed still finish; later ones
     * are refused. Once none is left, want_read/want_write drop to 0 and
     * h2_settle says PROTO_CLOSE. */
    int rv = nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE,
                                   nghttp2_session_get_last_proc_stream_id(
                                       h->ng),
                                   NGHTTP2_NO_ERROR, NULL, 0);
    if (nomem(rv)) return PROTO_ABORT;
    return h2_settle(c, h);
}

const proto_handler h2_handler = {
    .name = "h2c",
    .attach = h2_attach,
    .on_data = h2_on_data,
    .detach = h2_detach,
    .on_timeout = h2_on_timeout,
    .on_shutdown = h2_on_shutdown,
};

/* ---- HTTP/1.1 Upgrade ---- */

int h2_upgrade(conn *c, const char *settings, size_t settings_len,
               const route_request *rq) {
    static const char switching[] = "HTTP/1.1 101 Switching Protocols\r\n"
                                    "Connection: Upgrade\r\n"
                                    "Upgrade: h2c\r\n\r\n";
    uint8_t payload[H2_UPGRADE_SETTINGS_MAX];
    ssize_t n = h2_base64url_decode(settings, settings_len, payload,
                                    sizeof(payload));
    h2_conn *h;
    h2_stream *st;

    if (n < 0 || !(h = h2_conn_new(c))) return -1;
    /* The request becomes stream 1, half-closed (remote); the settings
     * count as the client's first SETTINGS frame. */
    if (nghttp2_session_upgrade2(h->ng, payload, (size_t)n, h2_is_head(rq),
                                 NULL) != 0 ||
        !(st = h2_stream_open(h, 1)) ||
        conn_out_copy(c, switching, sizeof(switching) - 1) < 0) {
        h2_conn_free(h);
        return -1;
    }
    nghttp2_session_set_stream_user_data(h->ng, 1, st);
    h->max_client_stream = 1;
    /* The route runs now, while rq (in the HTTP/1 read buffer) is valid;
     * only bodiless GET/HEAD are upgraded, so its body is static or in
     * stream 1's scratch, which lives as long as the stream. The
     * response itself is submitted once the client's preface arrived:
     * some clients (curl 7.88) can take only 32 KiB of HTTP/2 data
     * together with the 101, and a 64 KiB first window would exceed it. */
    route_request srq = *rq;
    srq.scratch = &st->scratch;
    routes_handle(&srq, &h->upgraded_rs);
    h->upgraded_head = h2_is_head(rq);
    h->upgraded = st;
    /* Point of no return: the HTTP/1 state is freed here. */
    conn_set_proto(c, &h2_handler, h);
    return 0;
}
