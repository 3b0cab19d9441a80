/* conn: a connection's lifecycle -- created on accept, its protocol chosen,
 * input read and handed to the handler, flushed once per turn, timed out,
 * lingered and closed -- and the set that holds them. How bytes move (the
 * transports of a plain socket, the output queue) is conn_io.c. */
#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn_io.h"

#define F_CLOSE_AFTER_FLUSH 1u /* handler is done: close once drained */
#define F_PAUSED 2u            /* handler stopped on a full output queue */
#define F_PEER_EOF 4u          /* read returned 0 */
#define F_LINGER 8u            /* write side shut, draining input */
#define F_DIRTY 16u            /* on set->dirty */
#define F_HANDSHAKE 32u        /* transport handshake not finished */
#define F_HS_WRITE 64u         /* ... and it waits to write, not to read */
#define F_RPENDING 128u        /* on set->rpending */

/* After our last response, keep reading (and discarding) for this long
 * before close(): closing with unread input makes the kernel send RST, which
 * can destroy the response the peer has not read yet (e.g. a 413 sent while
 * the client is still uploading). */
#define CONN_LINGER_MS 1000

/* ---- protocol selection (the table is conn_config.protocols) ---- */

static const protocol *fallback_protocol(const conn_config *cfg) {
    for (size_t i = 0; i < cfg->nprotocols; i++)
        if (cfg->protocols[i].fallback) return &cfg->protocols[i];
    return NULL;
}

/* Picks the protocol from the first bytes: the first whose sniff says YES,
 * or the fallback once none can still say it; NULL while one might. */
static const protocol *select_by_bytes(const conn_config *cfg,
                                       const char *buf, size_t len) {
    int maybe = 0;
    for (size_t i = 0; i < cfg->nprotocols; i++) {
        const protocol *p = &cfg->protocols[i];
        int r = p->sniff ? p->sniff(buf, len) : PROTO_SNIFF_NO;
        if (r == PROTO_SNIFF_YES) return p;
        maybe |= r == PROTO_SNIFF_MAYBE;
    }
    return maybe ? NULL : fallback_protocol(cfg);
}

/* The protocol TLS agreed on (ALPN); without one, the fallback. */
static const protocol *select_by_alpn(const conn_config *cfg, const char *id,
                                      size_t len) {
    for (size_t i = 0; id && i < cfg->nprotocols; i++) {
        const char *a = cfg->protocols[i].alpn;
        if (a && strlen(a) == len && memcmp(a, id, len) == 0)
            return &cfg->protocols[i];
    }
    return fallback_protocol(cfg);
}

/* ---- lifecycle ---- */

static void conn_event(aeEventLoop *el, int fd, void *data, int mask);

/* Free buffers kept per kind: enough for the connections active in one
 * loop turn to cycle through without malloc, few enough that an idle
 * server holds at most a few MiB. */
#define CONN_POOL_KEEP 64

void conn_set_init(conn_set *set, aeEventLoop *el, const conn_config *cfg) {
    memset(set, 0, sizeof(*set));
    set->el = el;
    set->cfg = cfg;
    bufpool_init(&set->rbufs, CONN_RBUF_SIZE, CONN_POOL_KEEP);
    bufpool_init(&set->obufs, CONN_OBUF_SIZE, CONN_POOL_KEEP);
    bufpool_init(&set->segbufs, CONN_MAX_SEGS * sizeof(out_seg),
                 CONN_POOL_KEEP);
}

/* ---- buffers on demand ---- */

static int take_rbuf(conn *c) {
    if (c->rbuf) return 0;
    c->rbuf = bufpool_take(&c->set->rbufs);
    return c->rbuf ? 0 : -1;
}

/* Gives rbuf back once nothing is buffered and the handler is between
 * requests (an HTTP/1 body being read keeps its head in rbuf). */
static void trim_rbuf(conn *c) {
    if (!c->rbuf || c->rstart != c->rend || c->phase == CONN_PHASE_BODY)
        return;
    bufpool_give(&c->set->rbufs, c->rbuf);
    c->rbuf = NULL;
    c->rstart = c->rend = 0;
}


conn *conn_create(conn_set *s, int fd) {
    conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->fd = fd;
    c->set = s;
    c->cfg = s->cfg;
    c->tp = &conn_plain_transport;
    int ok = !s->cfg->setup || s->cfg->setup(c, s->cfg->setup_arg) == 0;
    /* Plain TCP on a completion loop: its I/O goes through the loop. (TLS
     * reads and writes the socket itself, so it stays on readiness.) */
    if (ok && c->tp == &conn_plain_transport && aeAdopt(s->el, fd) == 0)
        c->tp = &conn_loop_transport;
    if (!ok ||
        aeCreateFileEvent(s->el, fd, AE_READABLE, conn_event, c) != AE_OK) {
        if (ok && c->tp->close) c->tp->close(c);
        if (c->tp == &conn_loop_transport) aeRelease(s->el, fd);
        free(c);
        return NULL;
    }
    c->mask = AE_READABLE;
    /* The capacity rbuf has once taken; no buffer is held until a read. */
    c->rcap = CONN_RBUF_SIZE;
    /* The header timeout runs from accept: a client that connects and
     * sends nothing is a slowloris too. */
    conn_set_phase(c, CONN_PHASE_HEAD);
    if (c->tp->handshake) {
        /* The handshake has its own, usually shorter, limit; the header
         * timeout starts once it is done. */
        c->flags |= F_HANDSHAKE;
        c->deadline = aeNowMs(s->el) + s->cfg->handshake_timeout_ms;
    }

    c->next = s->all;
    if (s->all) s->all->prev = c;
    s->all = c;
    s->n++;
    return c;
}

static void dirty_remove(conn *c) {
    conn_set *s = c->set;
    if (!(c->flags & F_DIRTY)) return;
    if (c->dprev) c->dprev->dnext = c->dnext;
    else s->dirty = c->dnext;
    if (c->dnext) c->dnext->dprev = c->dprev;
    c->dprev = c->dnext = NULL;
    c->flags &= ~F_DIRTY;
}

static void rpending_remove(conn *c) {
    conn_set *s = c->set;
    if (!(c->flags & F_RPENDING)) return;
    if (c->rprev) c->rprev->rnext = c->rnext;
    else s->rpending = c->rnext;
    if (c->rnext) c->rnext->rprev = c->rprev;
    c->rprev = c->rnext = NULL;
    c->flags &= ~F_RPENDING;
}

static void read_pending(conn_set *s);

static long long pending_reads_timer(aeEventLoop *el, long long id,
                                     void *data) {
    conn_set *s = data;
    (void)el;
    (void)id;
    s->rpending_timer = 0;
    read_pending(s);
    return AE_NOMORE;
}

/* A timer due now makes the next poll return at once, so this input is
 * read after this turn's flush, like a socket event would be: output still
 * leaves in one write per connection per turn. */
static void schedule_pending_reads(conn_set *s) {
    if (s->rpending_timer) return;
    long long id = aeCreateTimeEvent(s->el, 0, pending_reads_timer, s);
    s->rpending_timer = id > 0 ? id : 0;
}

static void rpending_add(conn *c) {
    conn_set *s = c->set;
    if (c->flags & F_RPENDING) return;
    c->rprev = NULL;
    c->rnext = s->rpending;
    if (s->rpending) s->rpending->rprev = c;
    s->rpending = c;
    c->flags |= F_RPENDING;
    schedule_pending_reads(s);
}

static void dirty_add(conn *c) {
    conn_set *s = c->set;
    if (c->flags & F_DIRTY) return;
    c->dprev = NULL;
    c->dnext = s->dirty;
    if (s->dirty) s->dirty->dprev = c;
    s->dirty = c;
    c->flags |= F_DIRTY;
}

void conn_close(conn *c) {
    conn_set *s = c->set;

    if (c->mask) aeDeleteFileEvent(s->el, c->fd, c->mask);
    if (c->tp->close) c->tp->close(c); /* TLS close_notify needs the fd */
    if (c->tp == &conn_loop_transport) aeRelease(s->el, c->fd);
    close(c->fd);
    if (c->proto && c->proto->detach) c->proto->detach(c);
    conn_io_discard(c);
    bufpool_give(&s->rbufs, c->rbuf);
    dirty_remove(c);
    rpending_remove(c);
    if (c->prev) c->prev->next = c->next;
    else s->all = c->next;
    if (c->next) c->next->prev = c->prev;
    s->n--;
    free(c);
}

void conn_set_phase(conn *c, conn_phase phase) {
    const conn_config *cfg = c->cfg;
    /* (a body's deadline depends on its progress: conn_set_deadline) */
    long long t = phase == CONN_PHASE_HEAD ? cfg->header_timeout_ms
                                           : cfg->idle_timeout_ms;
    conn_set_deadline(c, phase, aeNowMs(c->set->el) + t);
}

void conn_set_deadline(conn *c, conn_phase phase, long long at) {
    c->phase = phase;
    c->deadline = at;
}

long long body_deadline(long long timeout_ms, uint64_t min_rate,
                        long long start, uint64_t received, long long last) {
    long long at = start + timeout_ms;
    /* Each min_rate bytes buy one more second: a client must keep up the
     * rate on average, so one byte a second cannot hold a request. */
    if (min_rate)
        at += (long long)(received / min_rate) * 1000 +
              (long long)(received % min_rate * 1000 / min_rate);
    /* ... and credit earned early does not cover a long pause later. */
    long long pause = last + timeout_ms;
    return at < pause ? at : pause;
}

long long conn_body_deadline(const conn *c, long long start,
                             uint64_t received, long long last) {
    return body_deadline(c->cfg->body_timeout_ms, c->cfg->body_min_rate,
                         start, received, last);
}

long long conn_now(const conn *c) { return aeNowMs(c->set->el); }


/* ---- event handling ---- */

static void update_interest(conn *c) {
    int want;
    if (c->flags & F_HANDSHAKE)
        want = c->flags & F_HS_WRITE ? AE_WRITABLE : AE_READABLE;
    else if (c->flags & F_LINGER) want = AE_READABLE;
    else if (c->out_pending) want = AE_WRITABLE; /* backpressure */
    else if ((c->flags & (F_PAUSED | F_PEER_EOF | F_CLOSE_AFTER_FLUSH)) ||
             c->rend == c->rcap)
        want = AE_NONE;
    else want = AE_READABLE;
    if (want == c->mask) return;
    if (c->mask & ~want) aeDeleteFileEvent(c->set->el, c->fd, c->mask & ~want);
    if ((want & ~c->mask) &&
        aeCreateFileEvent(c->set->el, c->fd, want & ~c->mask, conn_event, c) !=
            AE_OK)
        want &= c->mask;
    c->mask = want;
}

/* Applies a handler's PROTO_* result. Returns -1 if c is gone. */
static int conn_apply(conn *c, int r) {
    switch (r) {
    case PROTO_NEED_MORE:
        /* A half-closed peer gets answers to what it sent, then we close. */
        if (c->flags & F_PEER_EOF) c->flags |= F_CLOSE_AFTER_FLUSH;
        return 0;
    case PROTO_PAUSED:
        c->flags |= F_PAUSED;
        return 0;
    case PROTO_CLOSE:
        c->flags |= F_CLOSE_AFTER_FLUSH;
        return 0;
    default:
        conn_close(c);
        return -1;
    }
}

/* Runs the protocol handler over buffered input. Returns -1 if c is gone. */
static int conn_process(conn *c) {
    int late = 0;
    if (!c->proto) {
        const protocol *p =
            select_by_bytes(c->cfg, c->rbuf + c->rstart, c->rend - c->rstart);
        const proto_handler *ph = p ? p->handler : NULL;
        if (!ph) {
            if (c->flags & F_PEER_EOF) {
                conn_close(c);
                return -1;
            }
            return 0;
        }
        if (ph->attach(c) < 0) {
            conn_close(c);
            return -1;
        }
        c->proto = ph;
        /* Chosen after a graceful shutdown began (its first bytes were
         * still arriving): conn_begin_shutdown could not announce it. */
        late = c->set->shutting_down;
    }
    c->flags &= ~F_PAUSED;
    int r;
    while ((r = c->proto->on_data(c)) == PROTO_SWITCH) {
    }
    /* Announced now, after the request that came with the first bytes
     * (HTTP/2: GOAWAY naming it as the last stream processed). */
    if (late && c->proto->on_shutdown &&
        (r == PROTO_NEED_MORE || r == PROTO_PAUSED))
        r = c->proto->on_shutdown(c);
    return conn_apply(c, r);
}

void conn_set_proto(conn *c, const proto_handler *ph, void *proto_data) {
    if (c->proto && c->proto->detach) c->proto->detach(c);
    c->proto = ph;
    c->proto_data = proto_data;
}

static int conn_idle(const conn *c) {
    return c->out_pending == 0 && c->rstart == c->rend &&
           (c->phase == CONN_PHASE_IDLE || !c->proto);
}

/* Our side is done: shut the write side and drain input until the peer
 * closes or the linger time is up. */
static void conn_end(conn *c) {
    if (c->set->shutting_down || (c->flags & F_PEER_EOF)) {
        conn_close(c);
        return;
    }
    c->tp->shutdown_write(c);
    c->flags |= F_LINGER;
    c->flags &= ~F_PAUSED;
    c->deadline = aeNowMs(c->set->el) + CONN_LINGER_MS;
    update_interest(c);
}

/* Flush; while the queue drains completely, let a paused handler continue
 * with the pipelined input it left behind. May free c. */
static void conn_service(conn *c) {
    for (;;) {
        int r = conn_io_flush(c);
        if (r < 0) {
            conn_close(c);
            return;
        }
        if (r == 0) break;
        if (c->flags & F_CLOSE_AFTER_FLUSH) {
            if (!(c->flags & F_LINGER)) conn_end(c);
            return;
        }
        if (c->set->shutting_down && conn_idle(c)) {
            conn_close(c);
            return;
        }
        if (!(c->flags & F_PAUSED)) break;
        if (conn_process(c) < 0) return;
    }
    update_interest(c);
    /* Reading resumes, but the transport may already hold the next input
     * (TLS records read ahead): the socket will not announce it. */
    if ((c->mask & AE_READABLE) && !(c->flags & F_LINGER) &&
        c->tp->pending && c->tp->pending(c))
        rpending_add(c);
    /* Between requests, the read buffer goes back to the pool: the next
     * read takes one again (lingering reads discard into theirs). */
    if (!(c->flags & F_LINGER) && c->out_pending == 0) trim_rbuf(c);
}

void conn_set_flush(conn_set *s) {
    conn *c;
    while ((c = s->dirty)) {
        dirty_remove(c);
        conn_service(c);
    }
}

static void conn_linger_read(conn *c) {
    if (take_rbuf(c) < 0) {
        conn_close(c);
        return;
    }
    for (;;) {
        ssize_t n = c->tp->read(c, c->rbuf, c->rcap);
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        conn_close(c);
        return;
    }
}

static void conn_readable(conn *c) {
    if (c->flags & F_LINGER) {
        conn_linger_read(c);
        return;
    }
    if (c->rend == c->rcap) return; /* a 0-byte read would look like EOF */
    if (take_rbuf(c) < 0) {
        conn_close(c); /* out of memory: this connection goes, not others */
        return;
    }
    ssize_t n = c->tp->read(c, c->rbuf + c->rend, c->rcap - c->rend);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        conn_close(c); /* ECONNRESET and friends: nothing to answer */
        return;
    }
    if (n == 0) c->flags |= F_PEER_EOF;
    else c->rend += (size_t)n;
    if (conn_process(c) < 0) return;
    /* The write happens in before-sleep, once for everything this read
     * produced. */
    dirty_add(c);
}

static void read_pending(conn_set *s) {
    conn *c;
    while ((c = s->rpending)) {
        rpending_remove(c);
        /* Still reading? A timeout or shutdown may have changed that. */
        if ((c->mask & AE_READABLE) && !(c->flags & F_LINGER))
            conn_readable(c);
    }
}

/* Drives the transport's handshake; once done, the agreed protocol (ALPN)
 * picks the handler, and no ALPN the fallback (RFC 9113 3.3: over TLS, h2
 * is entered through ALPN only, never by its preface). */
static void conn_handshake(conn *c) {
    const char *alpn = NULL;
    size_t alpn_len = 0;
    switch (c->tp->handshake(c, &alpn, &alpn_len)) {
    case TP_DONE: break;
    case TP_WANT_READ:
        c->flags &= ~F_HS_WRITE;
        update_interest(c);
        return;
    case TP_WANT_WRITE:
        c->flags |= F_HS_WRITE;
        update_interest(c);
        return;
    default: /* not TLS, or a broken hello: costs only this connection */
        conn_close(c);
        return;
    }
    c->flags &= ~(F_HANDSHAKE | F_HS_WRITE);
    const protocol *p = select_by_alpn(c->cfg, alpn, alpn_len);
    const proto_handler *ph = p ? p->handler : NULL;
    if (!ph || ph->attach(c) < 0) {
        conn_close(c);
        return;
    }
    c->proto = ph;
    conn_set_phase(c, CONN_PHASE_HEAD);
    update_interest(c);
    /* Run the handler once with no input: h2 queues its SETTINGS now
     * rather than after the client's first bytes. */
    if (conn_process(c) < 0) return;
    dirty_add(c);
    /* A request may have come with the client's Finished. */
    conn_readable(c);
}

static void conn_event(aeEventLoop *el, int fd, void *data, int mask) {
    conn *c = data;
    (void)el;
    (void)fd;
    if (c->flags & F_HANDSHAKE) {
        conn_handshake(c);
        return;
    }
    /* A connection watches either WRITABLE (output pending, reads paused)
     * or READABLE, never both, so exactly one branch applies. */
    if (mask & AE_WRITABLE) conn_service(c);
    else if (mask & AE_READABLE) conn_readable(c);
}

void conn_check_timeout(conn *c, long long now) {
    if (c->flags & F_HANDSHAKE) {
        /* A stalled or slow handshake: nothing to say in its protocol. */
        if (now >= c->deadline) conn_close(c);
        return;
    }
    if (c->out_pending) {
        /* A peer that stopped reading our output. Unarmed (0): queued this
         * turn and not tried yet; before-sleep flushes it. */
        if (c->wdeadline && now >= c->wdeadline) conn_close(c);
        return;
    }
    if (now < c->deadline) return;
    if ((c->flags & (F_LINGER | F_CLOSE_AFTER_FLUSH)) || !c->proto ||
        !c->proto->on_timeout) {
        conn_close(c);
        return;
    }
    int r = c->proto->on_timeout(c, now);
    if (r == PROTO_CLOSE) {
        /* A last word was queued (408, GOAWAY): flushed this turn, then we
         * close; a peer that will not take it has the send timeout. */
        c->flags &= ~F_PAUSED;
        c->deadline = now + c->cfg->send_timeout_ms;
    }
    if (conn_apply(c, r) == 0) dirty_add(c);
}

static int conn_reclaimable(const conn *c) {
    return !(c->flags & (F_HANDSHAKE | F_LINGER | F_CLOSE_AFTER_FLUSH)) &&
           conn_idle(c);
}

void conn_begin_shutdown(conn *c) {
    /* Anything mid-request or mid-response is left to finish (handlers
     * answer with "Connection: close" from now on); the server bounds how
     * long that may take. */
    if (c->flags & F_LINGER) {
        conn_close(c);
        return;
    }
    if (c->proto && c->proto->on_shutdown &&
        !(c->flags & F_CLOSE_AFTER_FLUSH)) {
        /* The handler announces the shutdown (GOAWAY) even when idle, so
         * the peer knows not to retry on this connection. */
        c->flags &= ~F_PAUSED;
        if (conn_apply(c, c->proto->on_shutdown(c)) == 0) dirty_add(c);
        return;
    }
    if (conn_idle(c)) conn_close(c);
}

/* ---- the set ---- */

void conn_set_sweep(conn_set *s, long long now) {
    for (conn *c = s->all, *next; c; c = next) {
        next = c->next;
        conn_check_timeout(c, now);
    }
}

size_t conn_set_reclaim(conn_set *s, size_t want) {
    size_t n = 0;
    for (conn *c = s->all, *next; c && n < want; c = next) {
        next = c->next;
        if (conn_reclaimable(c)) {
            conn_close(c);
            n++;
        }
    }
    return n;
}

void conn_set_begin_shutdown(conn_set *s) {
    s->shutting_down = 1;
    for (conn *c = s->all, *next; c; c = next) {
        next = c->next;
        conn_begin_shutdown(c);
    }
}

void conn_set_close_all(conn_set *s) {
    while (s->all) conn_close(s->all);
    if (s->rpending_timer) {
        aeDeleteTimeEvent(s->el, s->rpending_timer);
        s->rpending_timer = 0;
    }
    bufpool_clear(&s->rbufs);
    bufpool_clear(&s->obufs);
    bufpool_clear(&s->segbufs);
}
