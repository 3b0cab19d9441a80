/* h2_conn: the per-connection HTTP/2 state of the lab's own codec, shared by
 * h2.c (lifecycle, deadlines, upgrade), h2_input.c (frames in), h2_stream.c
 * (request state), h2_credit.c (flow-control credit) and h2_out.c (frames
 * out). Internal to the h2 handler; everything else uses h2.h.
 *
 * Why our own codec: nghttp2's session was ~70 % of the server's user-space
 * instructions on h2c GET /ping (docs/evidence/issue17/), for bookkeeping a
 * server that answers every request at once does not need (a priority tree,
 * an outbound item queue, a deflater's dynamic table). nghttp2 stays for
 * its public field-syntax checks (nghttp2_check_*). */
#ifndef H2_CONN_H
#define H2_CONN_H

#include <stdint.h>

#include "h2_head.h"
#include "h2_hpack_dec.h"
#include "h2_settings.h"
#include "http/routes.h"
#include "net/conn.h"

/* Advertised SETTINGS_MAX_CONCURRENT_STREAMS. */
#define H2_MAX_STREAMS 128
/* Receive windows. The per-stream one lets a 1 MiB upload arrive without
 * waiting for a WINDOW_UPDATE round trip; the connection one lets several
 * such streams share the connection. Credit is returned only while the
 * connection holds less than --h2-conn-memory of bodies, so one connection
 * holds at most that plus this connection window. */
#define H2_STREAM_WINDOW (1 << 20)
#define H2_CONN_WINDOW (4 << 20)
/* Scratch kept per pooled stream object. Generated bodies that fit are
 * copied into DATA frames; bigger ones leave with the stream, so this only
 * needs to hold a small answer and the work space for building it. */
#define H2_KEEP_SCRATCH 2048
/* Recently closed stream ids remembered, to tell a frame on a closed stream
 * (STREAM_CLOSED) from one on a stream never opened (PROTOCOL_ERROR). */
#define H2_CLOSED_RING 16

enum {
    H2S_RESPONDED = 1u,     /* a response was started */
    H2S_DISCARD = 2u,       /* answered early (413/408/431): drop DATA */
    H2S_BODY_REFD = 4u,     /* output segments point into body (not owned) */
    H2S_HDR_BIG = 8u,       /* header list over --h2-max-header-list */
    H2S_MALFORMED = 16u,    /* a field broke RFC 9113 8.2/8.3 */
    H2S_REMOTE_DONE = 32u,  /* END_STREAM received: half-closed (remote) */
    H2S_WAITING = 64u,      /* on h2_conn's sending list */
    H2S_NOMEM = 128u        /* out of memory for this stream's headers */
};

typedef struct h2_stream {
    uint32_t id;
    unsigned flags;
    /* The request's fields as they are decoded (h2_head): the rules, and
     * :method/:path copied. */
    h2_head head;
    /* Deadlines (loop ms): the request began at t_open; its body must keep
     * up --body-min-rate from there and never pause for --body-timeout
     * (t_recv). The response last moved at t_sent; stuck longer than
     * --send-timeout (the peer's window stays shut), it is reset. */
    long long t_open, t_sent, t_recv;
    uint32_t hdr_bytes; /* decoded header list so far (RFC 9113 6.5.2) */
    /* Flow control: what we may still send, and what the peer may. */
    int64_t send_window;
    int64_t recv_window;
    /* DATA bytes kept in body and counted in h2_conn.held; those whose
     * credit we withheld (over --h2-conn-memory); and those consumed but
     * not yet announced in a WINDOW_UPDATE. */
    size_t held, unconsumed, credit;
    /* Request body, grown as DATA arrives; freed (or handed to the output
     * queue) when the stream closes. */
    char *body;
    size_t blen, bcap;
    /* Response body being sent: static memory, scratch, or body itself. */
    const char *out;
    size_t out_len, out_off;
    /* Generated response bodies; kept with the pooled object. */
    route_scratch scratch;
    struct h2_stream *prev, *next; /* h2_conn.live, or next in the pool */
    struct h2_stream *wnext;       /* h2_conn's sending list */
} h2_stream;

typedef struct h2_conn {
    conn *c;
    hpack_decoder hpack;
    h2_peer_settings peer;
    /* Connection windows: what we may send, what the peer may send, and
     * consumed bytes not yet announced back. */
    int64_t send_window;
    int64_t recv_window;
    size_t credit;
    h2_stream *live; /* streams holding state */
    size_t nlive;
    h2_stream *last_found; /* lookup cache: most frames name the last one */
    uint32_t last_id;      /* highest client stream id opened */
    struct {
        uint32_t id;
        int reset_by_us; /* late DATA on it is expected, not an error */
    } closed[H2_CLOSED_RING];
    unsigned closed_pos;
    /* A header block being received (HEADERS without END_HEADERS, then
     * CONTINUATION): its stream id (0: none), stream (NULL: decoded and
     * dropped), the HEADERS frame's END_STREAM, whether it is trailers,
     * and how many CONTINUATION frames it took so far. */
    uint32_t hdr_id;
    h2_stream *hdr_stream;
    int hdr_end_stream, hdr_trailers;
    uint32_t continuations;
    /* The start of a field that continues in the next fragment. */
    uint8_t *tail;
    size_t tail_len, tail_cap;
    /* Streams with response bytes waiting for output room or a window. */
    h2_stream *wait_head, *wait_tail;
    /* Input state. */
    int preface_done, settings_seen;
    /* The peer lowered its HPACK table size: our next header block starts
     * with a table size update (RFC 7541 4.2). */
    int table_update;
    /* GOAWAY sent (last stream id in goaway_last); error: close now. */
    int goaway_sent, failed, peer_goaway;
    uint32_t goaway_last;
    /* Stream 1 of an h2c upgrade: its response waits for the client's
     * preface (see h2_upgrade). */
    h2_stream *upgraded;
    route_response upgraded_rs;
    int upgraded_head;
    /* Request-body bytes held by live streams; while over --h2-conn-memory,
     * credit for new DATA is withheld (streams' unconsumed) until it drops. */
    uint64_t held;
    int withheld;
    /* Token buckets: frames that carry no request (PING, SETTINGS,
     * PRIORITY, empty DATA; --h2-flood-*) and RST_STREAM from the client
     * (rapid reset; --h2-reset-*). */
    double flood_tokens, reset_tokens;
    long long flood_at, reset_at;
} h2_conn;

/* ---- h2_stream.c ---- */
h2_stream *h2_stream_open(h2_conn *h, uint32_t id);
/* Releases the stream's state and recycles the object; reset_by_us says
 * whether we ended it with RST_STREAM (late DATA then is no error). */
void h2_stream_close(h2_conn *h, h2_stream *st, int reset_by_us);
/* At detach: frees every live stream object. */
void h2_stream_free_all(h2_conn *h);
h2_stream *h2_stream_find(h2_conn *h, uint32_t id);
/* 1 if id was closed lately (*reset_by_us set), 0 if not remembered. */
int h2_stream_was_closed(const h2_conn *h, uint32_t id, int *reset_by_us);
#define H2_BODY_OK 0
#define H2_BODY_TOO_LARGE 1
#define H2_BODY_NOMEM (-1)
/* Appends a DATA chunk, enforcing max_body. */
int h2_stream_append(h2_stream *st, const uint8_t *p, size_t n,
                     uint64_t max_body);
/* The route request for a complete stream. */
void h2_stream_request(h2_stream *st, route_request *rq);

/* ---- h2_credit.c ---- */
/* DATA bytes consumed: their credit goes back to the peer (WINDOW_UPDATE
 * once half a window is owed), or is withheld while the connection holds
 * --h2-conn-memory of bodies. st may be NULL (connection credit only).
 * 0 or -1 (out of memory). */
int h2_credit(h2_conn *h, h2_stream *st, size_t n);
/* Gives every stream its withheld credit once under the budget again. */
int h2_return_credit(h2_conn *h);
int h2_send_window_update(h2_conn *h, uint32_t id, uint32_t increment);

/* ---- h2_out.c ---- */
/* Our SETTINGS and the connection window's first WINDOW_UPDATE. */
int h2_send_preface(h2_conn *h);
/* Runs the route and starts the response. 0, or -1 (out of memory). */
int h2_respond(h2_conn *h, h2_stream *st, const route_request *rq);
/* Starts the response a route produced. */
int h2_submit(h2_conn *h, h2_stream *st, const route_response *rs,
              int is_head);
int h2_is_head(const route_request *rq);
/* A short text/plain error response (400, 408, 413, 431, 500). */
int h2_respond_error(h2_conn *h, h2_stream *st, int status);
/* Sends the waiting streams' DATA as far as output room and the windows
 * allow; a stream whose response is all queued is finished (closed, or
 * reset with NO_ERROR if its upload is still coming). 0 or -1. */
int h2_send_waiting(h2_conn *h);
/* RST_STREAM(code) queued and the stream closed. 0 or -1. */
int h2_reset(h2_conn *h, h2_stream *st, uint32_t code);
/* RST_STREAM for a stream we hold no state for. */
int h2_reset_id(h2_conn *h, uint32_t id, uint32_t code);
/* GOAWAY(code) naming the last stream we opened; later streams are
 * ignored. fatal: stop reading, close once it is written. */
int h2_goaway(h2_conn *h, uint32_t code, int fatal);

/* ---- h2_input.c ---- */
/* The request cannot be served (413 body too large, 431 headers too large,
 * 408 body too slow): answer now. Later DATA is dropped (its credit goes
 * back at once), and once the response is out the rest of the upload is
 * cancelled with RST_STREAM(NO_ERROR). 0 or -1. */
int h2_refuse(h2_conn *h, h2_stream *st, int status);
/* Reads every whole frame in rbuf[rstart..rend) until output is full or the
 * connection failed; a partial frame stays in rbuf. 0 or -1 (abort). */
int h2_read_frames(h2_conn *h);

#endif
