/* h2_credit: flow-control credit for the peer's DATA -- what we owe back,
 * announced in WINDOW_UPDATE frames once half a window is owed, and withheld
 * while the connection holds --h2-conn-memory of request bodies. */
#include "h2_conn.h"
#include "h2_frame.h"

int h2_send_window_update(h2_conn *h, uint32_t id, uint32_t increment) {
    uint8_t f[13];
    return conn_out_copy(h->c, f, h2_write_window_update(f, id, increment));
}

/* Announces credit once half a window is owed: one WINDOW_UPDATE per half
 * window of DATA rather than one per frame, and the peer never runs dry
 * while it has sent less than half. A stream whose request is complete
 * needs none: nothing more may arrive on it. */
static int announce(h2_conn *h, h2_stream *st) {
    if (st && !(st->flags & H2S_REMOTE_DONE) &&
        st->credit >= H2_STREAM_WINDOW / 2) {
        if (h2_send_window_update(h, st->id, (uint32_t)st->credit) < 0)
            return -1;
        st->recv_window += (int64_t)st->credit;
        st->credit = 0;
    }
    if (h->credit >= H2_CONN_WINDOW / 2) {
        if (h2_send_window_update(h, 0, (uint32_t)h->credit) < 0) return -1;
        h->recv_window += (int64_t)h->credit;
        h->credit = 0;
    }
    return 0;
}

static int give(h2_conn *h, h2_stream *st, size_t n) {
    if (!n) return 0;
    h->credit += n;
    if (st) st->credit += n;
    return announce(h, st);
}

int h2_credit(h2_conn *h, h2_stream *st, size_t n) {
    /* Keeps a chunk's credit back while the connection holds
     * --h2-conn-memory of bodies: the peer's window shuts, so a client that
     * uploads without reading its answers cannot make us buffer more. */
    if (st && !(st->flags & H2S_DISCARD) &&
        h->held > h->c->cfg->h2_conn_memory) {
        st->unconsumed += n;
        h->withheld = 1;
        return 0;
    }
    return give(h, st, n);
}

int h2_return_credit(h2_conn *h) {
    if (!h->withheld || h->held > h->c->cfg->h2_conn_memory) return 0;
    h->withheld = 0;
    for (h2_stream *st = h->live; st; st = st->next) {
        size_t n = st->unconsumed;
        st->unconsumed = 0;
        if (give(h, st, n) < 0) return -1;
    }
    return 0;
}
