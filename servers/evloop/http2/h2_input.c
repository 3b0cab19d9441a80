/* h2_input: frames in -- the connection's state machine (RFC 9113 5, 6).
 *
 * The read buffer is taken frame by frame; a frame is handled only once it
 * is whole (our SETTINGS_MAX_FRAME_SIZE is the default 16384, so one always
 * fits in rbuf), and its header is checked as soon as its 9 bytes are in.
 * A request whose header block ends the stream is answered right there,
 * into the output queue, so every stream of one read is answered in the
 * same turn. Errors follow section 5.4: a connection error queues GOAWAY
 * and stops reading; a stream error resets that stream and goes on. */
#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"
#include "h2_frame.h"
#include "h2_wire.h"
#include "net/bucket.h"

/* What a handler tells the frame loop. */
enum { IN_OK = 0, IN_STOP = 1, IN_ABORT = -1 };

static int conn_error(h2_conn *h, uint32_t code) {
    return h2_goaway(h, code, 1) < 0 ? IN_ABORT : IN_STOP;
}

static int ok_or_abort(int rv) { return rv < 0 ? IN_ABORT : IN_OK; }

/* Frames that make us work but carry no request: PING, SETTINGS, PRIORITY,
 * empty DATA. The output queue's high-water mark bounds a peer that does
 * not read our acks; this bounds one that reads them as fast as it floods. */
static int flood(h2_conn *h) {
    const conn_config *cfg = h->c->cfg;
    return bucket_take(&h->flood_tokens, &h->flood_at, conn_now(h->c),
                cfg->h2_flood_burst, cfg->h2_flood_rate);
}

/* Client streams are odd; one above the highest opened is idle. */
static int is_idle(const h2_conn *h, uint32_t id) {
    return !(id & 1) || id > h->last_id;
}

int h2_refuse(h2_conn *h, h2_stream *st, int status) {
    st->flags |= H2S_DISCARD;
    free(st->body);
    st->body = NULL;
    st->blen = st->bcap = 0;
    h->held -= st->held;
    st->held = 0;
    size_t n = st->unconsumed;
    st->unconsumed = 0;
    if (h2_credit(h, st, n) < 0) return -1;
    if (st->flags & H2S_RESPONDED) return 0;
    return h2_respond_error(h, st, status);
}

/* A complete request: run the route. */
static int answer(h2_conn *h, h2_stream *st) {
    route_request rq;
    h2_stream_request(st, &rq);
    return h2_respond(h, st, &rq);
}

/* ---- header blocks ---- */

static void on_field(h2_conn *h, h2_stream *st, const hpack_field *f) {
    if (!st || (st->flags & (H2S_MALFORMED | H2S_NOMEM))) return;
    /* RFC 9113 6.5.2 counts a field as name + value + 32. Past the limit the
     * rest is ignored and the stream answered 431. */
    uint32_t limit = h->c->cfg->h2_max_header_list;
    if (st->hdr_bytes <= limit)
        st->hdr_bytes += (uint32_t)(f->nlen + f->vlen + 32);
    if (st->hdr_bytes > limit) {
        st->flags |= H2S_HDR_BIG;
        return;
    }
    switch (h2_head_field(&st->head, f)) {
    case H2H_OK: break;
    case H2H_MALFORMED: st->flags |= H2S_MALFORMED; break;
    default: st->flags |= H2S_NOMEM; break;
    }
}

static void emit(void *arg, const hpack_field *f) {
    h2_conn *h = arg;
    on_field(h, h->hdr_stream, f);
}

/* Keeps n bytes of a field that goes on in the next fragment. */
static int keep_tail(h2_conn *h, const uint8_t *p, size_t n) {
    if (n > h->tail_cap) {
        uint8_t *nb = realloc(h->tail, n);
        if (!nb) return -1;
        h->tail = nb;
        h->tail_cap = n;
    }
    memmove(h->tail, p, n);
    h->tail_len = n;
    return 0;
}

/* Decodes one fragment of a header block; hdr_stream (NULL for a block we
 * only keep HPACK in step with) gets its fields. A field split between
 * fragments is kept (tail) and decoded with the next one. Returns 0, or -1
 * for a COMPRESSION_ERROR. */
static int inflate(h2_conn *h, const uint8_t *in, size_t len, int final) {
    if (h->tail_len) {
        size_t n = h->tail_len;
        if (n + len > h->tail_cap) {
            uint8_t *nb = realloc(h->tail, n + len);
            if (!nb) return -1;
            h->tail = nb;
            h->tail_cap = n + len;
        }
        memcpy(h->tail + n, in, len);
        in = h->tail;
        len += n;
    }
    long r = hpack_decode(&h->hpack, in, len, final, emit, h);
    if (r < 0) return -1;
    if ((size_t)r < len) return keep_tail(h, in + r, len - (size_t)r);
    h->tail_len = 0;
    if (final && h->tail) {
        free(h->tail);
        h->tail = NULL;
        h->tail_cap = 0;
    }
    return 0;
}

/* The block of hdr_stream ended: judge the request and answer it. */
static int end_of_block(h2_conn *h) {
    h2_stream *st = h->hdr_stream;
    int end_stream = h->hdr_end_stream, trailers = h->hdr_trailers;
    h->hdr_id = 0;
    h->hdr_stream = NULL;
    if (!st) return IN_OK;
    if (st->flags & H2S_NOMEM) return ok_or_abort(h2_reset(h, st, H2E_INTERNAL_ERROR));
    if (st->flags & H2S_HDR_BIG) {
        /* Answered 431 although the rules were not all checked: the rest
         * of the list was not read. */
        if (end_stream) st->flags |= H2S_REMOTE_DONE;
        return ok_or_abort(h2_refuse(h, st, 431));
    }
    /* 8.1: trailers end the stream; 8.1.1: a body must match its declared
     * content-length. A malformed request is a stream PROTOCOL_ERROR. */
    if ((st->flags & H2S_MALFORMED) || h2_head_finish(&st->head) != H2H_OK ||
        (trailers && !end_stream) ||
        (end_stream && st->head.has_clen && st->head.clen != st->blen &&
         !(st->flags & H2S_DISCARD)))
        return ok_or_abort(h2_reset(h, st, H2E_PROTOCOL_ERROR));
    if (!trailers && st->head.has_clen && st->head.clen > h->c->cfg->max_body)
        /* Refused before any of the body is read. */
        return ok_or_abort(h2_refuse(h, st, 413));
    if (!end_stream) return IN_OK;
    st->flags |= H2S_REMOTE_DONE;
    if (st->flags & H2S_RESPONDED) {
        /* Answered early; now the peer is done too. */
        if (!(st->flags & H2S_WAITING)) h2_stream_close(h, st, 0);
        return IN_OK;
    }
    return ok_or_abort(answer(h, st));
}

static int on_headers(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    const uint8_t *in;
    size_t len;
    uint32_t id = hd->stream_id;
    h2_stream *st = NULL;
    int reset_by_us, self_dep = 0;

    if (h2_frame_content(hd, pl, &in, &len) < 0)
        return conn_error(h, H2E_PROTOCOL_ERROR);
    if (hd->flags & H2FL_PRIORITY) {
        const uint8_t *pr = pl + ((hd->flags & H2FL_PADDED) ? 1 : 0);
        uint32_t dep = h2_get31(pr);
        self_dep = dep == id; /* 5.3.1: a stream error */
    }
    if (!(id & 1)) return conn_error(h, H2E_PROTOCOL_ERROR);
    h->hdr_trailers = 0;
    if (id > h->last_id) {
        /* A new stream. After our GOAWAY, new streams are ignored (6.8);
         * over the advertised limit, refused (5.1.2). Either way its block
         * is decoded, to keep HPACK in step. */
        h->last_id = id;
        if (h->goaway_sent) {
            st = NULL;
        } else if (h->nlive >= H2_MAX_STREAMS || self_dep) {
            if (h2_reset_id(h, id, self_dep ? H2E_PROTOCOL_ERROR
                                            : H2E_REFUSED_STREAM) < 0)
                return IN_ABORT;
        } else if (!(st = h2_stream_open(h, id))) {
            if (h2_reset_id(h, id, H2E_INTERNAL_ERROR) < 0) return IN_ABORT;
        }
    } else if ((st = h2_stream_find(h, id))) {
        /* Trailers on an open stream; on a half-closed one, STREAM_CLOSED. */
        if (st->flags & H2S_REMOTE_DONE)
            return conn_error(h, H2E_STREAM_CLOSED);
        h->hdr_trailers = 1;
        h2_head_trailers(&st->head);
        st->flags &= ~(H2S_MALFORMED | H2S_HDR_BIG);
        if (self_dep) {
            if (h2_reset(h, st, H2E_PROTOCOL_ERROR) < 0) return IN_ABORT;
            st = NULL;
        }
    } else if (h2_stream_was_closed(h, id, &reset_by_us)) {
        return conn_error(h, H2E_STREAM_CLOSED);
    } else {
        /* 5.1.1: below the highest id, never opened -- out of order. */
        return conn_error(h, H2E_PROTOCOL_ERROR);
    }
    h->hdr_id = id;
    h->hdr_stream = st;
    h->hdr_end_stream = hd->flags & H2FL_END_STREAM;
    h->continuations = 0;
    if (st && !h->hdr_trailers) st->t_recv = conn_now(h->c);
    int final = hd->flags & H2FL_END_HEADERS;
    if (inflate(h, in, len, final) < 0)
        return conn_error(h, H2E_COMPRESSION_ERROR);
    return final ? end_of_block(h) : IN_OK;
}

static int on_continuation(h2_conn *h, const h2_frame_hd *hd,
                           const uint8_t *pl) {
    if (!h->hdr_id) return conn_error(h, H2E_PROTOCOL_ERROR);
    /* A block that never ends (the CONTINUATION flood): the decoder limits
     * each field to 64 KiB, this limits the frames. */
    if (++h->continuations > h->c->cfg->h2_max_continuations)
        return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    int final = hd->flags & H2FL_END_HEADERS;
    if (inflate(h, pl, hd->length, final) < 0)
        return conn_error(h, H2E_COMPRESSION_ERROR);
    return final ? end_of_block(h) : IN_OK;
}

static int on_data(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    const uint8_t *in;
    size_t len;
    uint32_t id = hd->stream_id;
    int reset_by_us;

    if (h2_frame_content(hd, pl, &in, &len) < 0)
        return conn_error(h, H2E_PROTOCOL_ERROR);
    if (is_idle(h, id)) return conn_error(h, H2E_PROTOCOL_ERROR);
    /* 6.9.1: the whole frame, padding included, counts against both
     * windows. */
    if (hd->length > h->recv_window)
        return conn_error(h, H2E_FLOW_CONTROL_ERROR);
    h->recv_window -= hd->length;
    if (len == 0 && !(hd->flags & H2FL_END_STREAM) && flood(h) < 0)
        return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    h2_stream *st = h2_stream_find(h, id);
    if (!st) {
        /* Closed: its credit goes back to the connection; DATA we caused
         * by resetting it is expected, anything else is STREAM_CLOSED. */
        if (h2_credit(h, NULL, hd->length) < 0) return IN_ABORT;
        if (h2_stream_was_closed(h, id, &reset_by_us) && reset_by_us)
            return IN_OK;
        return ok_or_abort(h2_reset_id(h, id, H2E_STREAM_CLOSED));
    }
    if (st->flags & H2S_REMOTE_DONE) {
        if (h2_credit(h, NULL, hd->length) < 0) return IN_ABORT;
        return ok_or_abort(h2_reset(h, st, H2E_STREAM_CLOSED));
    }
    if (hd->length > st->recv_window) {
        if (h2_credit(h, NULL, hd->length) < 0) return IN_ABORT;
        return ok_or_abort(h2_reset(h, st, H2E_FLOW_CONTROL_ERROR));
    }
    st->recv_window -= hd->length;
    st->t_recv = conn_now(h->c);
    int end = hd->flags & H2FL_END_STREAM;
    size_t pad = hd->length - len;
    if (st->flags & H2S_DISCARD) {
        if (h2_credit(h, st, hd->length) < 0) return IN_ABORT;
    } else {
        if (st->head.has_clen && len > st->head.clen - st->blen) {
            if (h2_credit(h, NULL, hd->length) < 0) return IN_ABORT;
            return ok_or_abort(h2_reset(h, st, H2E_PROTOCOL_ERROR));
        }
        switch (h2_stream_append(st, in, len, h->c->cfg->max_body)) {
        case H2_BODY_OK:
            st->held += len;
            h->held += len;
            /* Padding is consumed at once; the content when we let it. */
            if (h2_credit(h, st, pad) < 0 || h2_credit(h, st, len) < 0)
                return IN_ABORT;
            break;
        case H2_BODY_TOO_LARGE:
            if (h2_refuse(h, st, 413) < 0 ||
                h2_credit(h, NULL, hd->length) < 0)
                return IN_ABORT;
            /* The refusal may have finished the stream already. */
            if (!h2_stream_find(h, id)) return IN_OK;
            break;
        default:
            if (h2_credit(h, NULL, hd->length) < 0) return IN_ABORT;
            return ok_or_abort(h2_reset(h, st, H2E_INTERNAL_ERROR));
        }
    }
    if (!end) return IN_OK;
    if (st->head.has_clen && st->blen != st->head.clen &&
        !(st->flags & H2S_DISCARD))
        return ok_or_abort(h2_reset(h, st, H2E_PROTOCOL_ERROR));
    st->flags |= H2S_REMOTE_DONE;
    if (st->flags & H2S_RESPONDED) {
        if (!(st->flags & H2S_WAITING)) h2_stream_close(h, st, 0);
        return IN_OK;
    }
    return ok_or_abort(answer(h, st));
}

static int on_settings(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    if (flood(h) < 0) return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    if (hd->flags & H2FL_ACK) return IN_OK;
    uint32_t old_initial = h->peer.initial_window_size;
    uint32_t old_table = h->peer.header_table_size;
    uint32_t code = h2_settings_apply(&h->peer, pl, hd->length);
    if (code) return conn_error(h, code);
    if (h->peer.header_table_size < old_table) h->table_update = 1;
    if (h->peer.initial_window_size != old_initial)
        for (h2_stream *st = h->live; st; st = st->next)
            if (h2_window_rebase(&st->send_window, old_initial,
                                 h->peer.initial_window_size) < 0)
                return conn_error(h, H2E_FLOW_CONTROL_ERROR);
    uint8_t ack[9];
    if (conn_out_copy(h->c, ack, h2_write_settings_ack(ack)) < 0)
        return IN_ABORT;
    return ok_or_abort(h2_send_waiting(h));
}

static int on_window_update(h2_conn *h, const h2_frame_hd *hd,
                            const uint8_t *pl) {
    uint32_t inc = h2_get31(pl);
    uint32_t id = hd->stream_id;
    if (id == 0) {
        if (inc == 0) return conn_error(h, H2E_PROTOCOL_ERROR);
        if (h2_window_add(&h->send_window, inc) < 0)
            return conn_error(h, H2E_FLOW_CONTROL_ERROR);
        return ok_or_abort(h2_send_waiting(h));
    }
    if (is_idle(h, id)) return conn_error(h, H2E_PROTOCOL_ERROR);
    h2_stream *st = h2_stream_find(h, id);
    if (!st) return IN_OK; /* closed: WINDOW_UPDATE may still be in flight */
    if (inc == 0) return ok_or_abort(h2_reset(h, st, H2E_PROTOCOL_ERROR));
    if (h2_window_add(&st->send_window, inc) < 0)
        return ok_or_abort(h2_reset(h, st, H2E_FLOW_CONTROL_ERROR));
    return ok_or_abort(h2_send_waiting(h));
}

static int on_rst_stream(h2_conn *h, const h2_frame_hd *hd) {
    const conn_config *cfg = h->c->cfg;
    if (is_idle(h, hd->stream_id)) return conn_error(h, H2E_PROTOCOL_ERROR);
    /* Rapid reset (CVE-2023-44487): every reset counts, also one that
     * arrives after we answered -- answering is the work it makes us do. */
    if (bucket_take(&h->reset_tokens, &h->reset_at, conn_now(h->c),
             cfg->h2_reset_burst, cfg->h2_reset_rate) < 0)
        return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    h2_stream *st = h2_stream_find(h, hd->stream_id);
    if (st) h2_stream_close(h, st, 0);
    return IN_OK;
}

static int on_priority(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    if (flood(h) < 0) return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    uint32_t dep = h2_get31(pl);
    if (dep != hd->stream_id) return IN_OK; /* no priority tree: ignored */
    h2_stream *st = h2_stream_find(h, hd->stream_id);
    if (st) return ok_or_abort(h2_reset(h, st, H2E_PROTOCOL_ERROR));
    return ok_or_abort(h2_reset_id(h, hd->stream_id, H2E_PROTOCOL_ERROR));
}

static int on_ping(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    if (flood(h) < 0) return conn_error(h, H2E_ENHANCE_YOUR_CALM);
    if (hd->flags & H2FL_ACK) return IN_OK;
    uint8_t f[17];
    return ok_or_abort(conn_out_copy(h->c, f, h2_write_ping_ack(f, pl)));
}

static int on_frame(h2_conn *h, const h2_frame_hd *hd, const uint8_t *pl) {
    /* 6.10: nothing but the block's CONTINUATION frames may come while a
     * header block is open. */
    if (h->hdr_id &&
        (hd->type != H2F_CONTINUATION || hd->stream_id != h->hdr_id))
        return conn_error(h, H2E_PROTOCOL_ERROR);
    /* 3.4: the preface's first frame is SETTINGS. */
    if (!h->settings_seen) {
        if (hd->type != H2F_SETTINGS || (hd->flags & H2FL_ACK))
            return conn_error(h, H2E_PROTOCOL_ERROR);
        h->settings_seen = 1;
    }
    switch (hd->type) {
    case H2F_DATA: return on_data(h, hd, pl);
    case H2F_HEADERS: return on_headers(h, hd, pl);
    case H2F_PRIORITY: return on_priority(h, hd, pl);
    case H2F_RST_STREAM: return on_rst_stream(h, hd);
    case H2F_SETTINGS: return on_settings(h, hd, pl);
    case H2F_PING: return on_ping(h, hd, pl);
    case H2F_GOAWAY: h->peer_goaway = 1; return IN_OK;
    case H2F_WINDOW_UPDATE: return on_window_update(h, hd, pl);
    case H2F_CONTINUATION: return on_continuation(h, hd, pl);
    default: return IN_OK; /* 4.1: unknown types are ignored */
    }
}

int h2_read_frames(h2_conn *h) {
    conn *c = h->c;
    const uint8_t *p = (const uint8_t *)c->rbuf + c->rstart;
    size_t left = c->rend - c->rstart;
    int rv = IN_OK;

    if (!h->preface_done) {
        switch (h2_preface_check((const char *)p, left)) {
        case H2_PREFACE_NO:
            /* 3.4: not HTTP/2 -- say so and close. */
            c->rstart = c->rend = 0;
            return h2_goaway(h, H2E_PROTOCOL_ERROR, 1);
        case H2_PREFACE_PARTIAL: return 0;
        default: break;
        }
        h->preface_done = 1;
        p += H2_PREFACE_LEN;
        left -= H2_PREFACE_LEN;
    }
    while (left >= H2_FRAME_HEADER_LEN && !h->failed) {
        h2_frame_hd hd;
        h2_frame_read_hd(p, &hd);
        h2_frame_fault f = h2_frame_check(&hd, H2_DEFAULT_MAX_FRAME);
        if (f.code && !f.stream_only) {
            rv = conn_error(h, f.code);
            break;
        }
        if (left < H2_FRAME_HEADER_LEN + hd.length) break; /* partial */
        /* Output full: the rest waits until it drained (PROTO_PAUSED). */
        if (conn_out_full(c)) break;
        const uint8_t *pl = p + H2_FRAME_HEADER_LEN;
        p += H2_FRAME_HEADER_LEN + hd.length;
        left -= H2_FRAME_HEADER_LEN + hd.length;
        if (f.code) {
            /* A PRIORITY of the wrong size: that stream's error alone. */
            h2_stream *st = h2_stream_find(h, hd.stream_id);
            rv = ok_or_abort(st ? h2_reset(h, st, f.code)
                                : h2_reset_id(h, hd.stream_id, f.code));
        } else {
            rv = on_frame(h, &hd, pl);
        }
        if (rv != IN_OK) break;
    }
    /* What is left is part of a frame (or input after an error, dropped):
     * moved to the front so the rest of the frame has room. */
    if (h->failed || left == 0) {
        c->rstart = c->rend = 0;
    } else {
        size_t off = (size_t)((const char *)p - c->rbuf);
        if (off) memmove(c->rbuf, p, left);
        c->rstart = 0;
        c->rend = left;
    }
    return rv == IN_ABORT ? -1 : 0;
}
