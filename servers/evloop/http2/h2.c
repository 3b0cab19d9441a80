/* h2: the HTTP/2 handler's lifecycle -- attach and detach, what comes after
 * each read (output, credit, the connection's next deadline), late streams,
 * idle timeout and graceful shutdown, and the h2c Upgrade from HTTP/1.1.
 * Frames in: h2_input.c; frames out: h2_out.c. */
#include "h2.h"

#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"
#include "h2_frame.h"
#include "h2_wire.h"

/* Largest decoded HTTP2-Settings we accept: 6 bytes per setting, and only
 * a handful of settings exist. */
#define H2_UPGRADE_SETTINGS_MAX 256

static void h2_conn_free(h2_conn *h) {
    h2_stream_free_all(h);
    hpack_decoder_free(&h->hpack);
    free(h->tail);
    free(h);
}

/* Connection state with the protocol's initial values; nothing queued. */
static h2_conn *h2_conn_new(conn *c) {
    const conn_config *cfg = c->cfg;
    h2_conn *h = calloc(1, sizeof(*h));
    if (!h) return NULL;
    hpack_decoder_init(&h->hpack);
    h->c = c;
    h2_settings_defaults(&h->peer);
    h->send_window = H2_DEFAULT_WINDOW;
    h->recv_window = H2_DEFAULT_WINDOW;
    h->flood_tokens = cfg->h2_flood_burst;
    h->reset_tokens = cfg->h2_reset_burst;
    h->flood_at = h->reset_at = conn_now(c);
    return h;
}

/* The stream's request body is still arriving (and wanted). */
static int receiving(const h2_stream *st) {
    return !(st->flags & (H2S_DISCARD | H2S_REMOTE_DONE));
}

/* When a live stream is late, or 0 if it is not waiting on anyone: a body
 * still arriving has the body deadline (rate since t_open, pause since
 * t_recv), a response stuck behind the peer's window the send timeout. */
static long long stream_deadline(h2_conn *h, h2_stream *st) {
    /* Stream 1 of an h2c upgrade is answered once the client's preface
     * arrives; a client that never sends it has the header timeout. */
    if (st == h->upgraded) return st->t_open + h->c->cfg->header_timeout_ms;
    if (receiving(st))
        return conn_body_deadline(h->c, st->t_open, st->blen, st->t_recv);
    if (st->flags & H2S_WAITING)
        return st->t_sent + h->c->cfg->send_timeout_ms;
    return 0;
}

/* How soon a connection with open streams looks at their deadlines when
 * none is known yet: the shorter of the two stream limits. */
static long long stream_check_ms(const conn_config *cfg) {
    return cfg->body_timeout_ms < cfg->send_timeout_ms ? cfg->body_timeout_ms
                                                       : cfg->send_timeout_ms;
}

/* After input or an event: move waiting output, return withheld credit,
 * pick the timeout, and tell the connection what comes next. */
static int h2_settle(conn *c, h2_conn *h) {
    if (h->failed) return PROTO_CLOSE;
    if (h->wait_head && h2_send_waiting(h) < 0) return PROTO_ABORT;
    if (h->withheld && h2_return_credit(h) < 0) return PROTO_ABORT;
    if (!h->nlive) {
        /* Nothing in flight: after a GOAWAY either way, we are done. */
        if (h->goaway_sent || h->peer_goaway) return PROTO_CLOSE;
        conn_set_phase(c, CONN_PHASE_IDLE); /* renewed by every event */
    } else if (c->phase != CONN_PHASE_BODY) {
        /* Streams are open. Their deadlines are looked at only when this
         * one passes (h2_on_timeout), so traffic costs no scan per read. */
        conn_set_deadline(c, CONN_PHASE_BODY,
                          conn_now(c) + stream_check_ms(c->cfg));
    }
    /* Input left unread or output left unsent for want of room: go on once
     * the queue drained. */
    if (conn_out_full(c)) return PROTO_PAUSED;
    return PROTO_NEED_MORE;
}

/* ---- proto_handler ---- */

static int h2_attach(conn *c) {
    h2_conn *h = h2_conn_new(c);
    if (!h) return -1;
    if (h2_send_preface(h) < 0) {
        h2_conn_free(h);
        return -1;
    }
    c->proto_data = h;
    return 0;
}

static void h2_detach(conn *c) {
    if (c->proto_data) h2_conn_free(c->proto_data);
    c->proto_data = NULL;
}

static int h2_on_data(conn *c) {
    h2_conn *h = c->proto_data;
    /* Waiting responses first: they were there before this input. */
    if (h->wait_head && h2_send_waiting(h) < 0) return PROTO_ABORT;
    if (c->rend > c->rstart && h2_read_frames(h) < 0) return PROTO_ABORT;
    if (h->upgraded && h->settings_seen && !h->failed) {
        /* The client's preface arrived: stream 1's answer may go now. */
        h2_stream *st = h->upgraded;
        h->upgraded = NULL;
        if (h2_submit(h, st, &h->upgraded_rs, h->upgraded_head) < 0)
            return PROTO_ABORT;
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
        nx = st->next; /* only st itself may close below */
        long long at = stream_deadline(h, st);
        if (!at) continue;
        if (at > now) {
            if (!next || at < next) next = at;
        } else if (st == h->upgraded) {
            return 1; /* no preface: the peer does not speak HTTP/2 */
        } else if (receiving(st)) {
            if (h2_refuse(h, st, 408) < 0) return -1;
        } else if (h2_reset(h, st, H2E_CANCEL) < 0) {
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
    if (h2_goaway(h, H2E_NO_ERROR, 1) < 0) return PROTO_ABORT;
    return PROTO_CLOSE;
}

static int h2_on_shutdown(conn *c) {
    h2_conn *h = c->proto_data;
    /* Streams up to the last one we opened still finish; later ones are
     * ignored. Once none is left, h2_settle says PROTO_CLOSE. */
    if (h2_goaway(h, H2E_NO_ERROR, 0) < 0) return PROTO_ABORT;
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

    if (n < 0 || n % 6 != 0 || !(h = h2_conn_new(c))) return -1;
    /* The settings count as the client's first SETTINGS frame (RFC 7540
     * 3.2.1), acknowledged by nobody; a bad one means no upgrade. */
    if (h2_settings_apply(&h->peer, payload, (size_t)n) != H2E_NO_ERROR ||
        !(st = h2_stream_open(h, 1)) ||
        conn_out_copy(c, switching, sizeof(switching) - 1) < 0 ||
        h2_send_preface(h) < 0) {
        h2_conn_free(h);
        return -1;
    }
    /* The request becomes stream 1, half-closed (remote). */
    st->flags |= H2S_REMOTE_DONE;
    h->last_id = 1;
    /* The route runs now, while rq (in the HTTP/1 read buffer) is valid;
     * only bodiless GET/HEAD are upgraded, so its body is static or in
     * stream 1's scratch, which lives as long as the stream. The
     * response itself is started once the client's preface arrived: some
     * clients (curl 7.88) can take only 32 KiB of HTTP/2 data together
     * with the 101, and a 64 KiB first window would exceed it. */
    route_request srq = *rq;
    srq.scratch = &st->scratch;
    routes_handle(&srq, &h->upgraded_rs);
    h->upgraded_head = h2_is_head(rq);
    h->upgraded = st;
    /* Point of no return: the HTTP/1 state is freed here. */
    conn_set_proto(c, &h2_handler, h);
    return 0;
}
