/* conn_io: how a connection's bytes move -- the transports of a plain
 * socket (read/writev, or the completion loop's aeRecv/aeSendv) and the
 * output queue: segments queued by the handlers with conn_out_*, written
 * with one writev per flush. conn.c decides when; this file only moves
 * bytes and knows neither protocols nor timers beyond the send deadline. */
#include "conn_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- plain TCP transport ---- */

static ssize_t plain_read(conn *c, char *buf, size_t len) {
    return read(c->fd, buf, len);
}

static ssize_t plain_writev(conn *c, const struct iovec *iov, int iovcnt) {
    return writev(c->fd, iov, iovcnt);
}

static void plain_shutdown_write(conn *c) { shutdown(c->fd, SHUT_WR); }

const transport conn_plain_transport = {
    .read = plain_read,
    .writev = plain_writev,
    .shutdown_write = plain_shutdown_write,
};

/* The same over a loop with completion I/O (io_uring): the loop receives
 * into its buffers and sends from a copy, and the calls below only move
 * bytes (ae_backend.h). Chosen when the loop adopts the fd. */
static ssize_t loop_read(conn *c, char *buf, size_t len) {
    return aeRecv(c->set->el, c->fd, buf, len);
}

static ssize_t loop_writev(conn *c, const struct iovec *iov, int iovcnt) {
    return aeSendv(c->set->el, c->fd, iov, iovcnt);
}

static void loop_shutdown_write(conn *c) { aeShutdownWrite(c->set->el, c->fd); }

const transport conn_loop_transport = {
    .read = loop_read,
    .writev = loop_writev,
    .shutdown_write = loop_shutdown_write,
};

/* The output queue is empty: its buffers go back (a grown obuf is freed,
 * so a burst does not stay with the connection). */
static void release_out(conn *c) {
    if (c->obuf) {
        if (c->ocap == CONN_OBUF_SIZE) bufpool_give(&c->set->obufs, c->obuf);
        else free(c->obuf);
    }
    bufpool_give(&c->set->segbufs, c->segs);
    c->obuf = NULL;
    c->segs = NULL;
    c->ocap = c->olen = 0;
    c->nsegs = c->seg_head = 0;
    c->seg_off = 0;
}

void conn_io_discard(conn *c) {
    for (int i = c->seg_head; i < c->nsegs; i++) free(c->segs[i].owned);
    release_out(c);
}

static int take_segs(conn *c) {
    if (c->segs) return 0;
    c->segs = bufpool_take(&c->set->segbufs);
    return c->segs ? 0 : -1;
}

/* ---- output queue ---- */

char *conn_out_reserve(conn *c, size_t n) {
    if (!c->obuf) {
        if (!(c->obuf = bufpool_take(&c->set->obufs))) return NULL;
        c->ocap = CONN_OBUF_SIZE;
        c->olen = 0;
    }
    if (c->ocap - c->olen < n) {
        size_t cap = c->ocap * 2;
        while (cap - c->olen < n) cap *= 2;
        /* Segments address obuf by offset, so moving it is safe. */
        char *nb = realloc(c->obuf, cap);
        if (!nb) return NULL;
        c->obuf = nb;
        c->ocap = cap;
    }
    return c->obuf + c->olen;
}

int conn_out_commit(conn *c, size_t n) {
    if (n == 0) return 0;
    if (take_segs(c) < 0) return -1;
    out_seg *last = c->nsegs > c->seg_head ? &c->segs[c->nsegs - 1] : NULL;
    if (last && !last->ptr && last->off + last->len == c->olen) {
        /* Adjacent to the previous obuf range: grow it, one iovec fewer. */
        last->len += n;
    } else {
        if (c->nsegs == CONN_MAX_SEGS) return -1;
        c->segs[c->nsegs++] = (out_seg){NULL, c->olen, n, NULL};
    }
    c->olen += n;
    c->out_pending += n;
    return 0;
}

int conn_out_copy(conn *c, const void *p, size_t n) {
    char *dst = conn_out_reserve(c, n);
    if (!dst) return -1;
    memcpy(dst, p, n);
    return conn_out_commit(c, n);
}

static int out_push(conn *c, void *mem, const void *p, size_t n) {
    if (c->nsegs == CONN_MAX_SEGS || take_segs(c) < 0) {
        free(mem);
        return -1;
    }
    c->segs[c->nsegs++] = (out_seg){p, 0, n, mem};
    c->out_pending += n;
    return 0;
}

int conn_out_ref(conn *c, const void *p, size_t n) {
    return n ? out_push(c, NULL, p, n) : 0;
}

int conn_out_give(conn *c, void *mem, const void *p, size_t n) {
    if (n == 0 && c->out_pending == 0) {
        free(mem); /* nothing queued can still point into it */
        return 0;
    }
    return out_push(c, mem, p, n);
}

int conn_out_full(const conn *c) {
    /* Keep room for one more response (head + body + interim segments). */
    return c->out_pending >= CONN_OUT_HIGH_WATER ||
           c->nsegs + 4 > CONN_MAX_SEGS;
}

/* One writev of everything queued. Returns 1 when drained, 0 when output
 * remains (socket buffer full), -1 on a fatal error. A short write means the
 * kernel buffer is full, so we wait for EPOLLOUT instead of trying again. */
int conn_io_flush(conn *c) {
    if (c->out_pending == 0) return 1;

    long long now = aeNowMs(c->set->el);
    /* The stall clock starts at the first attempt, not at queueing: output
     * queued this turn (e.g. right after a TLS handshake) is flushed in
     * before-sleep, after the sweep timer may already have looked. */
    if (!c->wdeadline) c->wdeadline = now + c->cfg->send_timeout_ms;

    struct iovec *iov = c->set->iov;
    int n = 0;
    size_t skip = c->seg_off;
    for (int i = c->seg_head; i < c->nsegs; i++, n++) {
        const out_seg *sg = &c->segs[i];
        const char *base = sg->ptr ? sg->ptr : c->obuf + sg->off;
        iov[n].iov_base = (void *)(base + skip);
        iov[n].iov_len = sg->len - skip;
        skip = 0;
    }
    ssize_t w;
    do {
        w = c->tp->writev(c, iov, n);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;

    c->wdeadline = now + c->cfg->send_timeout_ms;
    c->out_pending -= (size_t)w;
    size_t left = (size_t)w;
    while (left) {
        out_seg *sg = &c->segs[c->seg_head];
        size_t rest = sg->len - c->seg_off;
        if (left < rest) {
            c->seg_off += left;
            break;
        }
        left -= rest;
        free(sg->owned);
        sg->owned = NULL;
        c->seg_head++;
        c->seg_off = 0;
    }
    if (c->out_pending) return 0;

    /* Zero-length segments left at the tail only carry memory to free. */
    conn_io_discard(c);
    c->wdeadline = 0; /* disarmed until output is attempted again */
    /* The idle timeout counts from when the last response left. */
    if (c->phase == CONN_PHASE_IDLE)
        c->deadline = now + c->cfg->idle_timeout_ms;
    return 1;
}
