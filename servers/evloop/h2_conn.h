/* h2_conn: the per-connection HTTP/2 state shared by h2.c (session,
 * input), h2_stream.c (request state) and h2_out.c (responses, output).
 * Internal to the h2 handler; everything else uses h2.h. */
#ifndef H2_CONN_H
#define H2_CONN_H

#include <nghttp2/nghttp2.h>
#include <stdint.h>

#include "conn.h"
#include "routes.h"

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

enum {
    H2S_RESPONDED = 1u,  /* a response was submitted */
    H2S_DISCARD = 2u,    /* body over the limit: drop further DATA */
    H2S_BODY_REFD = 4u,  /* output segments point into body (not owned) */
    H2S_HAS_CLEN = 8u,   /* the request carried content-length */
    H2S_HDR_BIG = 16u    /* header list over --h2-max-header-list */
};

typedef struct h2_stream {
    int32_t id;
    unsigned flags;
    /* Kept (incref'd) from the header block rather than copied: nghttp2
     * already owns the decoded strings, and this costs no allocation. */
    nghttp2_rcbuf *method, *path;
    uint64_t declared_len;
    /* Deadlines (loop ms): the request began at t_open; its body must keep
     * up --body-min-rate from there and never pause for --body-timeout
     * (t_recv). The response last moved at t_sent;
     * stuck longer than --send-timeout (the peer's window stays shut), it
     * is reset. */
    long long t_open, t_sent;
    long long t_recv; /* the last DATA byte arrived */
    uint32_t hdr_bytes; /* decoded header list so far (RFC 9113 6.5.2) */
    /* DATA bytes kept in body and counted in h2_conn.held, and those whose
     * flow-control credit we have not returned yet. */
    size_t held, unconsumed;
    /* Request body, grown as DATA arrives; freed (or handed to the output
     * queue) when the stream closes. */
    char *body;
    size_t blen, bcap;
    /* Response body being sent: static memory or body itself. */
    const char *out;
    size_t out_len, out_off;
    /* :status and content-length values: nghttp2 refers to them (NO_COPY)
     * until the HEADERS frame is serialized. */
    char status[3];
    char clen[20];
    /* Generated response bodies. Kept with the pooled object across
     * streams (trimmed to H2_KEEP_SCRATCH on close), so small generated
     * answers cost no allocation; large ones move into `body` (h2_submit). */
    route_scratch scratch;
    struct h2_stream *prev, *next; /* h2_conn.live, or next on h2_conn.spare */
} h2_stream;

typedef struct h2_conn {
    conn *c;
    nghttp2_session *ng;
    h2_stream *live;  /* streams holding state; released at detach */
    h2_stream *spare; /* recycled stream objects: no malloc per request */
    size_t nlive;
    int32_t max_client_stream; /* highest stream id a client HEADERS used */
    /* The stream whose request header block is being decoded. */
    h2_stream *hdr_stream;
    /* Stream 1 of an h2c upgrade: its response waits for the client's
     * preface (see h2_upgrade). */
    h2_stream *upgraded;
    route_response upgraded_rs;
    int upgraded_head;
    int dying; /* inside detach: callbacks must not touch streams */
    /* Request-body bytes held by live streams; while at --h2-conn-memory,
     * credit for new DATA is withheld (streams' unconsumed) until it drops. */
    uint64_t held;
    int withheld;
    /* Token bucket for frames that carry no request (PING, SETTINGS,
     * PRIORITY, empty DATA): --h2-flood-burst, refilled at
     * --h2-flood-rate per second. */
    double flood_tokens;
    long long flood_at;
} h2_conn;

/* ---- h2_stream.c ---- */
h2_stream *h2_stream_open(h2_conn *h, int32_t id);
/* Releases the stream's state and recycles the object. */
void h2_stream_close(h2_conn *h, h2_stream *st);
/* At detach: frees every live and spare stream object. */
void h2_stream_free_all(h2_conn *h);
/* Records a request header field it cares about: name n, value v (whose
 * buffer is kept, not copied, for :method and :path). */
void h2_stream_on_header(h2_stream *st, nghttp2_vec n, nghttp2_rcbuf *value,
                         nghttp2_vec v);
#define H2_BODY_OK 0
#define H2_BODY_TOO_LARGE 1
#define H2_BODY_NOMEM (-1)
/* Appends a DATA chunk, enforcing max_body. */
int h2_stream_append(h2_stream *st, const uint8_t *p, size_t n,
                     uint64_t max_body);
/* The route request for a complete stream; -1 without :method/:path. */
int h2_stream_request(h2_stream *st, route_request *rq);

/* ---- h2_out.c ---- */
/* Runs the route and submits the response (HEADERS + DATA). 0 or -1
 * (nghttp2 out of memory: fatal for the session). */
int h2_respond(h2_conn *h, h2_stream *st, const route_request *rq);
/* Submits the response a route produced. */
int h2_submit(h2_conn *h, h2_stream *st, const route_response *rs,
              int is_head);
int h2_is_head(const route_request *rq);
/* Submits a short text/plain error response (400, 413, 500). */
int h2_respond_error(h2_conn *h, h2_stream *st, int status);
/* Moves serialized frames into the connection's output queue until nghttp2
 * has nothing more or the queue is over its high-water mark. 0 or -1. */
int h2_pump(h2_conn *h);
/* nghttp2_send_data_callback: DATA frames marked NO_COPY. */
int h2_send_data(nghttp2_session *ng, nghttp2_frame *frame,
                 const uint8_t *framehd, size_t length,
                 nghttp2_data_source *source, void *user_data);

#endif
