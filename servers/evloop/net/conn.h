/* conn: one client connection -- buffers, transport, output queue, timers.
 *
 * Bytes flow in one direction through three small pieces:
 *
 *   transport (plain socket or TLS) --read--> rbuf
 *   rbuf --on_data--> protocol handler (HTTP/1 or HTTP/2)
 *   handler --conn_out_*--> output queue --writev--> transport
 *
 * The handler is picked by TLS ALPN, or else from the first bytes (the
 * HTTP/2 client preface selects h2); HTTP/1.1 may hand over to h2 later
 * (Upgrade: h2c). Output is queued as a list of segments (ranges of the
 * connection's obuf, static memory, or heap blocks handed over) and written
 * with a single writev per loop turn from the loop's before-sleep hook, so
 * every response produced from one read leaves in one syscall. While output
 * is pending we stop reading (backpressure), which bounds memory per
 * connection. */
#ifndef CONN_H
#define CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bufpool.h"
#include "loop/ae.h"

#define CONN_RBUF_SIZE (32 * 1024)
#define CONN_OBUF_SIZE (16 * 1024)
#define CONN_MAX_SEGS 256
/* A handler pauses once this much output is queued; the rest of the
 * pipelined input waits until the queue drains. */
#define CONN_OUT_HIGH_WATER (256 * 1024)

struct conn;

struct route_request;

/* One application protocol a connection can speak, and the ways it is
 * chosen. The server hands conn.c a table of them (protocols.c), in order of
 * preference; conn.c consults it at accept time and HTTP/1.1 for Upgrade, so
 * no file but the table knows which protocols exist. */
typedef struct protocol {
    const char *alpn; /* its TLS ALPN id: "h2", "http/1.1" */
    const struct proto_handler *handler;
    /* Cleartext prior knowledge: does a connection that starts with these
     * bytes speak this protocol? PROTO_SNIFF_*. NULL: never chosen so. */
    int (*sniff)(const char *buf, size_t len);
    /* Chosen when nothing else is: the first bytes match no sniff, or TLS
     * agreed on no ALPN id we know. Exactly one entry has it. */
    int fallback;
    /* HTTP/1.1 Upgrade (cleartext only): the token in Upgrade, the one
     * header the switch needs, and the switch itself, which answers rq
     * over the new protocol. 0 (the caller returns PROTO_SWITCH at once),
     * or -1 with nothing changed. NULL: no upgrade to it. */
    const char *upgrade_token;
    const char *upgrade_header;
    int (*upgrade)(struct conn *c, const char *value, size_t value_len,
                   const struct route_request *rq);
} protocol;

enum { PROTO_SNIFF_NO, PROTO_SNIFF_MAYBE, PROTO_SNIFF_YES };

/* What every connection of a server shares: the limits of the command line
 * (cli.c) and how its transport is set up. */
typedef struct conn_config {
    uint64_t max_body;
    long long header_timeout_ms;
    long long idle_timeout_ms;
    /* Output queued for a peer that takes none of it for this long: close
     * (a client that never reads its responses). */
    long long send_timeout_ms;
    /* A request body must arrive within body_timeout_ms of its head, plus
     * one second per body_min_rate bytes received (mod_reqtimeout's
     * "body=T,MinRate=R"); 0 disables the rate term. HTTP/2 applies it per
     * stream, and send_timeout_ms to a stream whose response is stuck behind
     * the peer's flow-control window. */
    long long body_timeout_ms;
    uint64_t body_min_rate;
    /* HTTP/2: request-body bytes one connection may hold before we stop
     * returning flow-control credit (WINDOW_UPDATE); never below max_body. */
    uint64_t h2_conn_memory;
    /* HTTP/2: the decoded header list a stream may send (431 above). */
    uint32_t h2_max_header_list;
    /* HTTP/2: CONTINUATION frames after one HEADERS (h2_input.c enforces). */
    uint32_t h2_max_continuations;
    /* HTTP/2 token buckets (burst, then per second): RST_STREAM from the
     * client (rapid reset) and the frames that cost us work but carry no
     * request -- PING, SETTINGS, PRIORITY, empty DATA (h2_input.c). */
    uint32_t h2_reset_burst, h2_reset_rate;
    uint32_t h2_flood_burst, h2_flood_rate;
    /* A connection whose transport has a handshake (TLS) must finish it
     * within this many ms of accept. */
    long long handshake_timeout_ms;
    /* Optional, run on every accepted connection before its first event:
     * installs another transport (tls_conn_setup). 0, or -1 to refuse. */
    int (*setup)(struct conn *c, void *arg);
    void *setup_arg;
    /* The protocols, in order of preference (protocols.c). */
    const protocol *protocols;
    size_t nprotocols;
} conn_config;

/* Every open connection of one loop. The server owns one; only conn.c
 * touches its lists. */
typedef struct conn_set {
    aeEventLoop *el;
    const conn_config *cfg;
    struct conn *all; /* for sweeps and shutdown */
    size_t n;
    struct conn *dirty; /* output to flush this turn */
    /* Connections whose transport holds input no socket event will report;
     * read by a zero-delay timer, i.e. in the next loop turn. */
    struct conn *rpending;
    long long rpending_timer;
    int shutting_down;
    /* Buffers a connection holds only while it has input or output in
     * flight (see conn): read buffers, output buffers, segment arrays. */
    bufpool rbufs, obufs, segbufs;
    /* writev's iovec array: built and used within one flush, so one per
     * set serves every connection. */
    struct iovec iov[CONN_MAX_SEGS];
} conn_set;

/* What transport.handshake returns. */
enum { TP_DONE, TP_WANT_READ, TP_WANT_WRITE, TP_ERROR };

/* How bytes reach the wire: plain TCP (conn.c) or TLS (tls.c), installed
 * by conn_config.setup. read and writev return like read(2) and
 * writev(2), with errno EAGAIN when the call would block. writev may take
 * fewer bytes than offered; what it did not take is offered again, in the
 * same order, on the next call. */
typedef struct transport {
    ssize_t (*read)(struct conn *c, char *buf, size_t len);
    ssize_t (*writev)(struct conn *c, const struct iovec *iov, int iovcnt);
    void (*shutdown_write)(struct conn *c);
    /* The rest may be NULL (plain TCP has none of them). */
    /* Runs before any read: TP_DONE, TP_WANT_READ or TP_WANT_WRITE (call
     * again on that event), or TP_ERROR (close). On TP_DONE, *alpn and
     * *alpn_len are the protocol id the peer and we agreed on (valid as
     * long as the connection), or NULL and 0 for none. */
    int (*handshake)(struct conn *c, const char **alpn, size_t *alpn_len);
    /* Input the transport holds that no socket event will announce (TLS
     * records already taken off the socket when read's buffer filled). */
    int (*pending)(struct conn *c);
    /* Right before the socket is closed: say goodbye, free tp_data. */
    void (*close)(struct conn *c);
} transport;

/* Whether the connection runs over a secured transport (only TLS has a
 * handshake step). */
static inline int conn_is_tls(const struct conn *c);

/* What a protocol handler's on_data tells the connection. */
enum {
    PROTO_NEED_MORE, /* consumed what it could; wants more input */
    PROTO_PAUSED,    /* output queue is full; call again once it drained */
    PROTO_CLOSE,     /* close once queued output is written */
    PROTO_ABORT,     /* close now, drop queued output */
    PROTO_SWITCH     /* c->proto was replaced (conn_set_proto): run the new
                        handler over the remaining input */
};

typedef struct proto_handler {
    const char *name;
    int (*attach)(struct conn *c); /* set up c->proto_data; 0 or -1 */
    /* Consume input from c->rbuf[rstart..rend), queue output. */
    int (*on_data)(struct conn *c);
    void (*detach)(struct conn *c);
    /* The phase's deadline passed (c->phase says which: a head too slow, a
     * body under its minimum rate, an idle keep-alive). The handler may
     * queue a last word (HTTP/1 408, HTTP/2 GOAWAY) and return PROTO_CLOSE,
     * return PROTO_ABORT to close at once, or deal with it itself (HTTP/2
     * resets only the late streams), re-arm the deadline and return
     * PROTO_NEED_MORE. Optional: without it the connection is closed. */
    int (*on_timeout)(struct conn *c, long long now);
    /* Optional. Graceful shutdown began: announce it and return a PROTO_*
     * result as on_data does (PROTO_CLOSE once nothing is in flight).
     * Without it an idle connection is closed at once. */
    int (*on_shutdown)(struct conn *c);
} proto_handler;

/* Which timeout applies while no output is pending. */
typedef enum {
    CONN_PHASE_HEAD, /* waiting for a request head: header timeout */
    CONN_PHASE_BODY, /* reading a body: body timeout plus minimum rate */
    CONN_PHASE_IDLE  /* between requests: idle timeout */
} conn_phase;

typedef struct out_seg {
    const char *ptr; /* NULL: the range [off, off+len) of obuf */
    size_t off;
    size_t len;
    void *owned; /* freed once written */
} out_seg;

typedef struct conn {
    int fd;
    unsigned flags;
    int mask; /* events currently registered with the loop */
    conn_set *set;
    const conn_config *cfg; /* set->cfg */
    const transport *tp;
    void *tp_data; /* the transport's per-connection state (TLS: SSL) */
    const proto_handler *proto;
    void *proto_data;

    /* Input: unconsumed bytes are rbuf[rstart..rend). rbuf (rcap bytes) is
     * taken from the set's pool when a read is about to happen and given
     * back once all input is consumed and nothing refers to it (between
     * requests), so an idle keep-alive connection holds no buffer. */
    char *rbuf;
    size_t rcap, rstart, rend;

    /* Output queue. obuf and segs are taken on first use and given back
     * once the queue has drained. */
    char *obuf;
    size_t ocap, olen;
    out_seg *segs;
    int nsegs, seg_head; /* segs[seg_head..nsegs) are unwritten */
    size_t seg_off;      /* bytes of segs[seg_head] already written */
    size_t out_pending;

    conn_phase phase;
    long long deadline;  /* for the phase */
    long long wdeadline; /* output stall limit, armed by the first flush
                            attempt, renewed on progress, 0 when drained */

    struct conn *prev, *next;   /* set->all */
    struct conn *dprev, *dnext; /* set->dirty */
    struct conn *rprev, *rnext; /* set->rpending */
} conn;

static inline int conn_is_tls(const conn *c) { return c->tp->handshake != NULL; }

/* ---- for the server ---- */

void conn_set_init(conn_set *set, aeEventLoop *el, const conn_config *cfg);
/* Takes ownership of fd; NULL (fd not closed) on failure. */
conn *conn_create(conn_set *set, int fd);
void conn_close(conn *c);
/* Before the loop sleeps: one write per connection with queued output. */
void conn_set_flush(conn_set *set);
/* The server's sweep timer: closes or warns connections past a deadline. */
void conn_set_sweep(conn_set *set, long long now);
/* At --max-conns: closes up to `want` connections with nothing in flight
 * (idle keep-alive, or connected and silent), as nginx reuses its idle
 * connections. Returns how many. */
size_t conn_set_reclaim(conn_set *set, size_t want);
/* Graceful shutdown: idle connections close now, the others are told
 * (GOAWAY, "Connection: close") and close once their work is done. */
void conn_set_begin_shutdown(conn_set *set);
void conn_set_close_all(conn_set *set);
/* For tests and fuzzers that drive the sweep by hand. */
void conn_check_timeout(conn *c, long long now);
void conn_begin_shutdown(conn *c);

/* ---- for protocol handlers ---- */

/* Room for n bytes at the end of obuf; write them, then conn_out_commit(). */
char *conn_out_reserve(conn *c, size_t n);
int conn_out_commit(conn *c, size_t n);
int conn_out_copy(conn *c, const void *p, size_t n);
/* Queue memory that stays valid until written (static data). */
int conn_out_ref(conn *c, const void *p, size_t n);
/* Queue p[0..n) inside heap block mem; mem is freed once written (or at
 * once if this fails). With n == 0, mem is freed once everything queued so
 * far is written: for memory that earlier conn_out_ref segments point into. */
int conn_out_give(conn *c, void *mem, const void *p, size_t n);
/* True when a handler should stop producing (PROTO_PAUSED). */
int conn_out_full(const conn *c);
/* Enters the head or idle phase with its timeout counted from now. */
void conn_set_phase(conn *c, conn_phase phase);
/* Enters a phase with an explicit deadline (loop ms). */
void conn_set_deadline(conn *c, conn_phase phase, long long at);
/* When a body that began at `start`, has `received` bytes so far and last
 * moved at `last` is late: timeout_ms plus a second per min_rate bytes from
 * its start, and at most timeout_ms after its last byte (ms, any clock). */
long long body_deadline(long long timeout_ms, uint64_t min_rate,
                        long long start, uint64_t received, long long last);
/* body_deadline with the connection's --body-timeout and --body-min-rate. */
long long conn_body_deadline(const conn *c, long long start,
                             uint64_t received, long long last);
/* The loop's cached time, for handlers that keep their own clocks. */
long long conn_now(const conn *c);
/* Graceful shutdown has begun: answer what is in flight, start nothing. */
static inline int conn_shutting_down(const conn *c) {
    return c->set->shutting_down;
}
/* Replaces the handler (detaching the old one, which frees its state) --
 * HTTP/1.1 Upgrade. The caller, still inside the old handler's on_data,
 * must return PROTO_SWITCH right away without touching its state. */
void conn_set_proto(conn *c, const proto_handler *ph, void *proto_data);

#endif
