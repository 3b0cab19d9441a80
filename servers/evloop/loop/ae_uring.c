/* ae_uring: the io_uring backend of ae (see ae_backend.h), `--loop uring`.
 *
 * Completion I/O for the connections' sockets, readiness for everything
 * else, and one io_uring_enter per loop turn for all of it:
 *
 *   - A connection's fd is adopted (aeAdopt): while the loop watches it for
 *     AE_READABLE a multishot recv is armed on it, filling buffers the
 *     kernel takes from a ring we provide. Each completion's bytes are
 *     copied into the fd's input queue and the buffer goes straight back to
 *     the ring, so a connection that does not read yet holds no ring buffer.
 *     The fd is reported readable while its queue holds bytes, EOF or an
 *     error, and the connection takes them with aeRecv instead of read(2).
 *   - Output: aeSendv copies the iovecs into a send buffer and queues one
 *     send (MSG_WAITALL: the kernel finishes a short one), and reports the
 *     bytes taken once that send has finished, as the TLS transport does;
 *     the fd is reported writable whenever no send of it is in flight. The
 *     sends of a turn go out with the next turn's single io_uring_enter,
 *     which also waits for completions and for the nearest timer.
 *   - Other fds (the listener, the signalfd, TLS sockets, whose I/O OpenSSL
 *     does itself) get a one-shot poll, re-armed after each completion, and
 *     are reported as level-triggered epoll would report them.
 *
 * Stale completions: every request carries the fd's generation, bumped when
 * the fd is released; completions of a released fd's requests only give
 * back what they hold. A send carries its own buffer, so it may finish
 * after its connection is gone.
 *
 * The files: this one (the loop's side), ae_uring_io.c (the fd's side),
 * ae_uring_sqe.c (requests armed and cancelled), ae_uring.h (the state). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ae_uring.h"

/* ---- the loop's side: create, destroy, watch ---- */

static void reap(uring_state *st);

static void uring_destroy(void *state) {
    uring_state *st = state;
    if (!st) return;
    /* The last responses may still be in flight (a connection closes once
     * its output is handed over): give them up to a second to leave, as a
     * close(2) with data in the socket buffer would. */
    if (st->fds) {
        for (int waited = 0; st->busy && waited < 20; waited++) {
            struct io_uring_cqe *c;
            struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 50000000};
            io_uring_submit_and_wait_timeout(&st->ring, &c, 1, &ts, NULL);
            reap(st);
        }
    }
    io_uring_queue_exit(&st->ring);
    while (st->busy) {
        send_op *op = st->busy;
        ur_busy_remove(st, op);
        free(op->buf);
        free(op);
    }
    for (int i = 0; st->fds && i < st->setsize; i++) {
        ufd *u = &st->fds[i];
        free(u->in);
        for (; u->acc_len; u->acc_len--, u->acc_head++)
            close(u->acc[u->acc_head & (u->acc_cap - 1)]);
        free(u->acc);
    }
    while (st->spare) {
        send_op *op = st->spare;
        st->spare = op->next;
        free(op->buf);
        free(op);
    }
    while (st->nspare_in) free(st->spare_in[--st->nspare_in]);
    free(st->fds);
    free(st->queue);
    free(st->br);
    free(st->bufs);
    free(st);
}

static void *uring_create(int setsize, int maxfired) {
    uring_state *st = calloc(1, sizeof(*st));
    if (!st) return NULL;
    st->maxfired = maxfired;
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER |
              IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = UR_CQ_ENTRIES;
    int r = io_uring_queue_init_params(UR_ENTRIES, &st->ring, &p);
    if (r == -EINVAL) { /* before Linux 6.1: without the task-run flags */
        memset(&p, 0, sizeof(p));
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = UR_CQ_ENTRIES;
        r = io_uring_queue_init_params(UR_ENTRIES, &st->ring, &p);
    }
    if (r < 0) {
        free(st);
        errno = -r;
        return NULL;
    }
    st->setsize = setsize;
    st->fds = calloc((size_t)setsize, sizeof(*st->fds));
    st->queue = calloc((size_t)setsize, sizeof(*st->queue));
    st->bufs = malloc((size_t)UR_NBUFS * UR_BUF_SIZE);
    if (!st->fds || !st->queue || !st->bufs ||
        posix_memalign((void **)&st->br, 4096,
                       UR_NBUFS * sizeof(struct io_uring_buf))) {
        uring_destroy(st);
        errno = ENOMEM;
        return NULL;
    }
    io_uring_buf_ring_init(st->br);
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)st->br,
                                   .ring_entries = UR_NBUFS,
                                   .bgid = UR_BGID};
    if ((r = io_uring_register_buf_ring(&st->ring, &reg, 0)) < 0) {
        uring_destroy(st);
        errno = -r; /* before 5.19 there are no provided buffer rings */
        return NULL;
    }
    for (unsigned i = 0; i < UR_NBUFS; i++) ur_give_back(st, i);
    io_uring_buf_ring_advance(st->br, (int)st->returned);
    st->returned = 0;
    return st;
}

static int uring_watch(void *state, int fd, int oldmask, int newmask) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    (void)oldmask;
    u->want = newmask;
    if (u->listener) {
        /* Not watched (the server is full or stopping): cancelled, so new
         * clients wait in the backlog rather than in our ring. */
        if (!(newmask & AE_READABLE) && u->recv_armed) {
            if (ur_cancel(st, ur_ud_fd(u->gen, fd, OP_ACCEPT)) < 0) return -1;
            u->recv_armed = 0;
        }
        if (ur_accept_wanted(u) && ur_arm_accept(st, fd) < 0) return -1;
        ur_enqueue(st, fd);
        return 0;
    }
    if (u->adopted) {
        if ((newmask & AE_READABLE) && !u->recv_armed && !u->eof && !u->err &&
            u->in_len - u->in_off < UR_IN_MAX && ur_arm_recv(st, fd) < 0)
            return -1;
        /* Not cancelled when AE_READABLE goes: a connection drops it for
         * every response in flight, and input is bounded by UR_IN_MAX. */
        ur_enqueue(st, fd); /* writable now, or input already queued */
        return 0;
    }
    if (newmask == u->pmask) return 0;
    if (u->pmask) {
        struct io_uring_sqe *s = ur_sqe_get(st);
        if (!s) return -1;
        io_uring_prep_poll_remove(s, ur_ud_fd(u->gen, fd, OP_POLL));
        io_uring_sqe_set_data64(s, OP_IGNORE);
        /* A new generation, so the removed poll's last completion is
         * told from the new one's. */
        u->gen++;
        u->pmask = 0;
    }
    return newmask ? ur_arm_poll(st, fd, newmask) : 0;
}

/* What an fd is ready for, of what the loop watches: an adopted one from
 * its queue and send state, another from its poll results. */
static int ready_mask(const ufd *u) {
    if (!u->adopted) return u->revents & u->want;
    if (u->listener)
        return (u->want & AE_READABLE) && (u->acc_len || u->err) ? AE_READABLE
                                                                 : 0;
    int m = 0;
    if ((u->want & AE_READABLE) &&
        (u->in_len > u->in_off || u->eof || u->err))
        m |= AE_READABLE;
    if ((u->want & AE_WRITABLE) && (!u->send_busy || u->err))
        m |= AE_WRITABLE;
    return m;
}

static void on_recv(uring_state *st, int fd, uint32_t gen,
                    const struct io_uring_cqe *c) {
    ufd *u = &st->fds[fd];
    int live = u->adopted && ur_gen_is(u, gen);
    if (c->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = c->flags >> IORING_CQE_BUFFER_SHIFT;
        if (live && c->res > 0) {
            size_t n = (size_t)c->res;
            if (u->in_off == u->in_len) u->in_off = u->in_len = 0;
            if (!u->in && n <= UR_BUF_SIZE && st->nspare_in) {
                u->in = st->spare_in[--st->nspare_in];
                u->in_cap = UR_BUF_SIZE;
            }
            if (u->in_off && u->in_len + n > u->in_cap) {
                /* Slide what is left to the front before growing. */
                memmove(u->in, u->in + u->in_off, u->in_len - u->in_off);
                u->in_len -= u->in_off;
                u->in_off = 0;
            }
            if (u->in_len + n > u->in_cap) {
                size_t cap = u->in_cap ? u->in_cap : UR_BUF_SIZE;
                while (cap < u->in_len + n) cap *= 2;
                char *nb = realloc(u->in, cap);
                if (!nb) {
                    u->err = ENOMEM;
                } else {
                    u->in = nb;
                    u->in_cap = cap;
                }
            }
            if (!u->err) {
                memcpy(u->in + u->in_len, st->bufs + (size_t)bid * UR_BUF_SIZE, n);
                u->in_len += n;
            }
        }
        ur_give_back(st, bid);
    }
    if (!live) return;
    /* Backpressure: past UR_IN_MAX not taken, input stays in the kernel
     * until the connection catches up (uring_recv arms the recv again). */
    if (u->recv_armed && (c->flags & IORING_CQE_F_MORE) &&
        u->in_len - u->in_off >= UR_IN_MAX)
        ur_cancel(st, ur_ud_fd(u->gen, fd, OP_RECV));
    if (c->res == 0) u->eof = 1;
    else if (c->res < 0 && c->res != -ENOBUFS && c->res != -ECANCELED)
        u->err = -c->res;
    if (!(c->flags & IORING_CQE_F_MORE)) {
        u->recv_armed = 0;
        /* Ended by the kernel (no buffers left, or it chose to): again,
         * if still wanted and the connection is keeping up. */
        if ((u->want & AE_READABLE) && !u->eof && !u->err &&
            u->in_len - u->in_off < UR_IN_MAX)
            ur_arm_recv(st, fd);
    }
    ur_enqueue(st, fd);
}

/* Doubles a listener's ring of accepted fds, keeping their order. */
static int acc_grow(ufd *u) {
    unsigned cap = u->acc_cap * 2;
    int *na = malloc(cap * sizeof(*na));
    if (!na) return -1;
    for (unsigned i = 0; i < u->acc_len; i++)
        na[i] = u->acc[(u->acc_head + i) & (u->acc_cap - 1)];
    free(u->acc);
    u->acc = na;
    u->acc_head = 0;
    u->acc_cap = cap;
    return 0;
}

static void on_accept(uring_state *st, int fd, uint32_t gen,
                      const struct io_uring_cqe *c) {
    ufd *u = &st->fds[fd];
    /* Any of this listener's accepts, the cancelled ones included: their
     * connections are real and must not be dropped. */
    int ours = u->listener && ((gen - u->gen_base) & UR_GEN_MASK) <=
                                  ((u->gen - u->gen_base) & UR_GEN_MASK);
    if (c->res >= 0) {
        if (ours && (u->acc_len < u->acc_cap || acc_grow(u) == 0))
            u->acc[(u->acc_head + u->acc_len++) & (u->acc_cap - 1)] = c->res;
        else
            close(c->res); /* released listener (or out of memory) */
    }
    if (!ours || !ur_gen_is(u, gen)) return;
    if (c->res < 0 && c->res != -ECANCELED) u->err = -c->res;
    if (u->recv_armed && (c->flags & IORING_CQE_F_MORE) &&
        u->acc_len >= UR_ACCEPT_MAX) {
        ur_cancel(st, ur_ud_fd(u->gen, fd, OP_ACCEPT));
        u->recv_armed = 0;
    }
    if (!(c->flags & IORING_CQE_F_MORE)) {
        u->recv_armed = 0;
        if (ur_accept_wanted(u)) ur_arm_accept(st, fd);
    }
    ur_enqueue(st, fd);
}

static void on_send(uring_state *st, send_op *op, int res) {
    ufd *u = &st->fds[op->fd];
    ur_busy_remove(st, op);
    if (u->adopted && u->gen == op->gen) {
        u->send_busy = 0;
        u->inflight = NULL;
        if (res < 0) u->err = -res;
        else u->sent = (size_t)res;
        if (u->shut_pending) {
            u->shut_pending = 0;
            shutdown(op->fd, SHUT_WR);
        }
        ur_enqueue(st, op->fd);
    }
    /* Kept for the next send, but a burst's big buffer is not. */
    if (op->cap > UR_SEND_KEEP) {
        free(op->buf);
        op->buf = NULL;
        op->cap = 0;
    }
    if (st->nspare < UR_SPARE_SENDS) {
        op->next = st->spare;
        st->spare = op;
        st->nspare++;
    } else {
        free(op->buf);
        free(op);
    }
}

static void on_poll(uring_state *st, int fd, uint32_t gen,
                    const struct io_uring_cqe *c) {
    ufd *u = &st->fds[fd];
    if (u->adopted || !ur_gen_is(u, gen)) return;
    if (c->res >= 0) {
        if (c->res & (POLLIN | POLLERR | POLLHUP)) u->revents |= AE_READABLE;
        if (c->res & (POLLOUT | POLLERR | POLLHUP)) u->revents |= AE_WRITABLE;
    }
    if (u->pmask) ur_arm_poll(st, fd, u->pmask);
    ur_enqueue(st, fd);
}

static void reap(uring_state *st) {
    struct io_uring_cqe *c;
    unsigned head, n = 0;
    io_uring_for_each_cqe(&st->ring, head, c) {
        uint64_t ud = c->user_data;
        int op = (int)(ud & 7);
        if (op == OP_SEND) {
            on_send(st, (send_op *)(uintptr_t)(ud & ~(uint64_t)7), c->res);
        } else if (op == OP_RECV || op == OP_POLL || op == OP_ACCEPT) {
            int fd = (int)(uint32_t)(ud >> 3);
            uint32_t gen = (uint32_t)(ud >> 35);
            if (fd >= 0 && fd < st->setsize) {
                if (op == OP_RECV) on_recv(st, fd, gen, c);
                else if (op == OP_POLL) on_poll(st, fd, gen, c);
                else on_accept(st, fd, gen, c);
            } else if (op == OP_ACCEPT && c->res >= 0) {
                close(c->res);
            }
        }
        n++;
    }
    io_uring_cq_advance(&st->ring, n);
    if (st->returned) {
        io_uring_buf_ring_advance(st->br, (int)st->returned);
        st->returned = 0;
    }
}

/* Reports the queued fds that are ready; keeps in the queue those that may
 * be ready again without a new completion (input left, writable). */
static int collect(uring_state *st, aeFired *fired, int maxfired) {
    int n = 0, keep = 0;
    for (int i = 0; i < st->nqueue; i++) {
        int fd = st->queue[i];
        ufd *u = &st->fds[fd];
        int m = ready_mask(u);
        if (!u->adopted) u->revents = 0;
        if (m && n < maxfired) {
            fired[n].fd = fd;
            fired[n].mask = m;
            n++;
            /* level-triggered: looked at again next turn */
            st->queue[keep++] = fd;
        } else if (m) {
            st->queue[keep++] = fd; /* no room this turn */
        } else {
            u->queued = 0;
        }
    }
    st->nqueue = keep;
    return n;
}

static int uring_poll_fds(void *state, aeFired *fired, int timeout_ms) {
    uring_state *st = state;
    /* Something already ready: submit, take what completed, do not wait. */
    int ready = 0;
    for (int i = 0; i < st->nqueue && !ready; i++)
        ready = ready_mask(&st->fds[st->queue[i]]) != 0;
    struct io_uring_cqe *cqe;
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    if (ready || timeout_ms == 0) {
        io_uring_submit_and_get_events(&st->ring);
    } else {
        int r = io_uring_submit_and_wait_timeout(&st->ring, &cqe, 1,
                                                 timeout_ms < 0 ? NULL : &ts,
                                                 NULL);
        (void)r; /* -ETIME, -EINTR: the caller runs its timers */
    }
    reap(st);
    return collect(st, fired, st->maxfired);
}

static const aeBackend aeBackendUring = {
    .name = "uring",
    .create = uring_create,
    .destroy = uring_destroy,
    .watch = uring_watch,
    .poll = uring_poll_fds,
    .adopt = uring_adopt,
    .accept = uring_accept,
    .recv = uring_recv,
    .sendv = uring_sendv,
    .shutdown_write = uring_shutdown_write,
    .release = uring_release,
};

AE_REGISTER_BACKEND(aeBackendUring)
