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
 * after its connection is gone. */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ae.h"
#include "ae_backend.h"

#define UR_ENTRIES 4096
#define UR_CQ_ENTRIES 16384
/* Provided receive buffers (a power of two of them). */
#define UR_NBUFS 512
#define UR_BUF_SIZE 4096
#define UR_BGID 7
/* The most one send takes: the output high-water mark, as TLS does. */
#define UR_SEND_MAX (256 * 1024)
/* Input beyond this stays in the kernel: the recv is not re-armed until
 * the connection has taken some (backpressure). */
#define UR_IN_MAX (64 * 1024)
#define UR_SPARE_SENDS 64
/* A spare send keeps its buffer up to this size. */
#define UR_SEND_KEEP (16 * 1024)

/* Connections accepted by a multishot accept and not taken yet: past this
 * the accept is cancelled until the server catches up (backpressure, as
 * UR_IN_MAX for input; the rest wait in the kernel's backlog). The cancel
 * reaches the kernel with the next submission, and a burst of connects may
 * all be accepted before it does, so the queue grows past this when it
 * must: an accepted connection is never dropped. */
#define UR_ACCEPT_MAX 128

enum { OP_RECV = 1, OP_POLL = 2, OP_SEND = 3, OP_IGNORE = 4, OP_ACCEPT = 5 };

typedef struct send_op {
    char *buf;
    size_t cap;
    int fd;
    uint32_t gen;
    struct send_op *next;  /* spare list */
    struct send_op *bprev, *bnext; /* in flight (uring_state.busy) */
} send_op;

typedef struct ufd {
    uint32_t gen;
    unsigned adopted : 1, recv_armed : 1, send_busy : 1, eof : 1,
        shut_pending : 1, queued : 1, listener : 1;
    int want;  /* the loop's mask */
    int pmask; /* mask of the armed poll (non-adopted fds) */
    int err;   /* sticky errno from a recv or send */
    size_t sent; /* a finished send's bytes, not yet reported by sendv */
    struct send_op *inflight; /* its send in flight, if any */
    int revents; /* poll results not yet reported */
    char *in;
    size_t in_off, in_len, in_cap;
    /* A listener's accepted fds (a ring of acc_cap, a power of two), and the
     * generation it was adopted with: each multishot accept armed on it
     * takes a new generation (so a cancelled one's last completion is told
     * from the live one's), and the fds of every accept from gen_base on
     * are still this listener's. recv_armed means an accept is armed. */
    int *acc;
    unsigned acc_head, acc_len, acc_cap;
    uint32_t gen_base;
} ufd;

typedef struct uring_state {
    struct io_uring ring;
    struct io_uring_buf_ring *br;
    char *bufs;
    unsigned returned;
    ufd *fds;
    int setsize;
    /* fds that may be ready: checked every poll, kept while they are */
    int *queue;
    int nqueue;
    int maxfired;
    send_op *spare;
    int nspare;
    send_op *busy; /* sends in flight: finished (or freed) at destroy */
    /* Input queues of UR_BUF_SIZE, kept for reuse: a connection holds one
     * only while it has input not yet taken, so an idle one holds none. */
    char *spare_in[UR_SPARE_SENDS];
    int nspare_in;
} uring_state;

/* ---- user data: (gen, fd, op) for recv/poll, the send_op for sends ---- */

/* The generation bits user data has room for: generations are compared
 * within these. */
#define UR_GEN_MASK 0x1fffffffu

static int gen_is(const ufd *u, uint32_t gen) {
    return (u->gen & UR_GEN_MASK) == gen;
}

static uint64_t ud_fd(uint32_t gen, int fd, int op) {
    return ((uint64_t)gen << 32 | (uint32_t)fd) << 3 | (uint64_t)op;
}

static struct io_uring_sqe *sqe_get(uring_state *st) {
    struct io_uring_sqe *s = io_uring_get_sqe(&st->ring);
    if (!s) {
        io_uring_submit(&st->ring);
        s = io_uring_get_sqe(&st->ring);
    }
    return s;
}

static void enqueue(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    if (u->queued) return;
    u->queued = 1;
    st->queue[st->nqueue++] = fd;
}

static void give_back(uring_state *st, unsigned bid) {
    io_uring_buf_ring_add(st->br, st->bufs + (size_t)bid * UR_BUF_SIZE,
                          UR_BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(UR_NBUFS), (int)st->returned);
    st->returned++;
}

static int arm_recv(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = sqe_get(st);
    if (!s) return -1;
    io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = UR_BGID;
    io_uring_sqe_set_data64(s, ud_fd(u->gen, fd, OP_RECV));
    u->recv_armed = 1;
    return 0;
}

/* Arms a multishot accept on a listener, under a new generation. */
static int arm_accept(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = sqe_get(st);
    if (!s) return -1;
    u->gen++;
    io_uring_prep_multishot_accept(s, fd, NULL, NULL,
                                   SOCK_NONBLOCK | SOCK_CLOEXEC);
    io_uring_sqe_set_data64(s, ud_fd(u->gen, fd, OP_ACCEPT));
    u->recv_armed = 1;
    return 0;
}

/* Whether a listener's accept should be armed: watched, room in its ring,
 * no error waiting to be reported. */
static int accept_wanted(const ufd *u) {
    return (u->want & AE_READABLE) && !u->recv_armed && !u->err &&
           u->acc_len < UR_ACCEPT_MAX;
}

static int cancel(uring_state *st, uint64_t ud) {
    struct io_uring_sqe *s = sqe_get(st);
    if (!s) return -1;
    io_uring_prep_cancel64(s, ud, 0);
    io_uring_sqe_set_data64(s, OP_IGNORE);
    return 0;
}

static int arm_poll(uring_state *st, int fd, int mask) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = sqe_get(st);
    if (!s) return -1;
    unsigned ev = (mask & AE_READABLE ? POLLIN : 0) |
                  (mask & AE_WRITABLE ? POLLOUT : 0);
    /* One-shot, re-armed after each completion: a poll armed on an fd that
     * is still readable completes at once, so readiness is reported every
     * turn while it lasts, as level-triggered epoll does (a multishot poll
     * only reports new wake-ups, and input left unread would stall). */
    io_uring_prep_poll_add(s, fd, ev);
    io_uring_sqe_set_data64(s, ud_fd(u->gen, fd, OP_POLL));
    u->pmask = mask;
    return 0;
}

/* ---- backend hooks ---- */

static void busy_remove(uring_state *st, send_op *op) {
    if (op->bprev) op->bprev->bnext = op->bnext;
    else st->busy = op->bnext;
    if (op->bnext) op->bnext->bprev = op->bprev;
    op->bprev = op->bnext = NULL;
}

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
        busy_remove(st, op);
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
    for (unsigned i = 0; i < UR_NBUFS; i++) give_back(st, i);
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
            if (cancel(st, ud_fd(u->gen, fd, OP_ACCEPT)) < 0) return -1;
            u->recv_armed = 0;
        }
        if (accept_wanted(u) && arm_accept(st, fd) < 0) return -1;
        enqueue(st, fd);
        return 0;
    }
    if (u->adopted) {
        if ((newmask & AE_READABLE) && !u->recv_armed && !u->eof && !u->err &&
            u->in_len - u->in_off < UR_IN_MAX && arm_recv(st, fd) < 0)
            return -1;
        /* Not cancelled when AE_READABLE goes: a connection drops it for
         * every response in flight, and input is bounded by UR_IN_MAX. */
        enqueue(st, fd); /* writable now, or input already queued */
        return 0;
    }
    if (newmask == u->pmask) return 0;
    if (u->pmask) {
        struct io_uring_sqe *s = sqe_get(st);
        if (!s) return -1;
        io_uring_prep_poll_remove(s, ud_fd(u->gen, fd, OP_POLL));
        io_uring_sqe_set_data64(s, OP_IGNORE);
        /* A new generation, so the removed poll's last completion is
         * told from the new one's. */
        u->gen++;
        u->pmask = 0;
    }
    return newmask ? arm_poll(st, fd, newmask) : 0;
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
    int live = u->adopted && gen_is(u, gen);
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
        give_back(st, bid);
    }
    if (!live) return;
    /* Backpressure: past UR_IN_MAX not taken, input stays in the kernel
     * until the connection catches up (uring_recv arms the recv again). */
    if (u->recv_armed && (c->flags & IORING_CQE_F_MORE) &&
        u->in_len - u->in_off >= UR_IN_MAX)
        cancel(st, ud_fd(u->gen, fd, OP_RECV));
    if (c->res == 0) u->eof = 1;
    else if (c->res < 0 && c->res != -ENOBUFS && c->res != -ECANCELED)
        u->err = -c->res;
    if (!(c->flags & IORING_CQE_F_MORE)) {
        u->recv_armed = 0;
        /* Ended by the kernel (no buffers left, or it chose to): again,
         * if still wanted and the connection is keeping up. */
        if ((u->want & AE_READABLE) && !u->eof && !u->err &&
            u->in_len - u->in_off < UR_IN_MAX)
            arm_recv(st, fd);
    }
    enqueue(st, fd);
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
    if (!ours || !gen_is(u, gen)) return;
    if (c->res < 0 && c->res != -ECANCELED) u->err = -c->res;
    if (u->recv_armed && (c->flags & IORING_CQE_F_MORE) &&
        u->acc_len >= UR_ACCEPT_MAX) {
        cancel(st, ud_fd(u->gen, fd, OP_ACCEPT));
        u->recv_armed = 0;
    }
    if (!(c->flags & IORING_CQE_F_MORE)) {
        u->recv_armed = 0;
        if (accept_wanted(u)) arm_accept(st, fd);
    }
    enqueue(st, fd);
}

static void on_send(uring_state *st, send_op *op, int res) {
    ufd *u = &st->fds[op->fd];
    busy_remove(st, op);
    if (u->adopted && u->gen == op->gen) {
        u->send_busy = 0;
        u->inflight = NULL;
        if (res < 0) u->err = -res;
        else u->sent = (size_t)res;
        if (u->shut_pending) {
            u->shut_pending = 0;
            shutdown(op->fd, SHUT_WR);
        }
        enqueue(st, op->fd);
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
    if (u->adopted || !gen_is(u, gen)) return;
    if (c->res >= 0) {
        if (c->res & (POLLIN | POLLERR | POLLHUP)) u->revents |= AE_READABLE;
        if (c->res & (POLLOUT | POLLERR | POLLHUP)) u->revents |= AE_WRITABLE;
    }
    if (u->pmask) arm_poll(st, fd, u->pmask);
    enqueue(st, fd);
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

/* ---- completion I/O ---- */

static int uring_adopt(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    uint32_t gen = u->gen;
    int queued = u->queued;
    free(u->in);
    free(u->acc);
    memset(u, 0, sizeof(*u));
    u->gen = gen + 1;
    u->queued = (unsigned)queued; /* an entry may still be in the queue */
    u->adopted = 1;
    /* A listening socket: its accepts go through the ring too. */
    int listening = 0;
    socklen_t sl = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &sl) == 0 &&
        listening) {
        if (!(u->acc = malloc(UR_ACCEPT_MAX * sizeof(*u->acc)))) {
            u->adopted = 0;
            errno = ENOMEM;
            return -1;
        }
        u->acc_cap = UR_ACCEPT_MAX;
        u->listener = 1;
        u->gen_base = u->gen & UR_GEN_MASK;
    }
    return 0;
}

static int uring_accept(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (!u->listener)
        return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int r = -1;
    if (u->acc_len) {
        r = u->acc[u->acc_head];
        u->acc_head = (u->acc_head + 1) & (u->acc_cap - 1);
        u->acc_len--;
    } else if (u->err) {
        /* Reported once, as accept4 would (EMFILE: the server backs off
         * and watches the listener again later). */
        errno = u->err;
        u->err = 0;
    } else {
        errno = EAGAIN;
    }
    if (accept_wanted(u)) arm_accept(st, fd);
    return r;
}

static ssize_t uring_recv(void *state, int fd, char *buf, size_t len) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    size_t have = u->in_len - u->in_off;
    if (have) {
        size_t n = have < len ? have : len;
        memcpy(buf, u->in + u->in_off, n);
        u->in_off += n;
        if (u->in_off == u->in_len) {
            u->in_off = u->in_len = 0;
            if (u->in_cap == UR_BUF_SIZE && st->nspare_in < UR_SPARE_SENDS)
                st->spare_in[st->nspare_in++] = u->in;
            else free(u->in);
            u->in = NULL;
            u->in_cap = 0;
        }
        /* Stopped at the limit: receive again once all of it is taken
         * (not sooner, or the queue would hover at the limit and its
         * buffer never be given back). */
        if (!u->recv_armed && (u->want & AE_READABLE) && !u->eof && !u->err &&
            u->in_len == u->in_off)
            arm_recv(st, fd);
        return (ssize_t)n;
    }
    if (u->err) {
        errno = u->err;
        return -1;
    }
    if (u->eof) return 0;
    errno = EAGAIN;
    return -1;
}

static ssize_t uring_sendv(void *state, int fd, const struct iovec *iov,
                           int iovcnt) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (u->err) {
        errno = u->err;
        return -1;
    }
    if (u->send_busy) {
        errno = EAGAIN;
        return -1;
    }
    /* The bytes are taken only once they are sent, as TLS does: the
     * connection keeps them queued meanwhile, so its output limits (the
     * high-water mark, --send-timeout) see a peer that does not read. It
     * offers the same bytes again, and is told how many left. */
    if (u->sent) {
        size_t n = u->sent;
        u->sent = 0;
        return (ssize_t)n;
    }
    size_t total = 0;
    for (int i = 0; i < iovcnt && total < UR_SEND_MAX; i++)
        total += iov[i].iov_len;
    if (total > UR_SEND_MAX) total = UR_SEND_MAX;
    send_op *op = st->spare;
    if (op) {
        st->spare = op->next;
        st->nspare--;
    } else if (!(op = calloc(1, sizeof(*op)))) {
        errno = ENOMEM;
        return -1;
    }
    if (op->cap < total) {
        char *nb = realloc(op->buf, total);
        if (!nb) {
            free(op->buf);
            free(op);
            errno = ENOMEM;
            return -1;
        }
        op->buf = nb;
        op->cap = total;
    }
    size_t off = 0;
    for (int i = 0; i < iovcnt && off < total; i++) {
        size_t k = iov[i].iov_len < total - off ? iov[i].iov_len : total - off;
        memcpy(op->buf + off, iov[i].iov_base, k);
        off += k;
    }
    struct io_uring_sqe *s = sqe_get(st);
    if (!s) {
        op->next = st->spare;
        st->spare = op;
        st->nspare++;
        errno = EAGAIN;
        return -1;
    }
    op->fd = fd;
    op->gen = u->gen;
    io_uring_prep_send(s, fd, op->buf, total, MSG_WAITALL | MSG_NOSIGNAL);
    io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)op | OP_SEND);
    op->bprev = NULL;
    op->bnext = st->busy;
    if (st->busy) st->busy->bprev = op;
    st->busy = op;
    u->send_busy = 1;
    u->inflight = op;
    errno = EAGAIN;
    return -1;
}

static void uring_shutdown_write(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (u->send_busy) u->shut_pending = 1;
    else shutdown(fd, SHUT_WR);
}

static void uring_release(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (u->listener) {
        /* Every accept of it, cancelled ones included: an armed accept
         * holds the socket, which would go on listening after close(2). */
        struct io_uring_sqe *s = sqe_get(st);
        if (s) {
            io_uring_prep_cancel_fd(s, fd, IORING_ASYNC_CANCEL_ALL);
            io_uring_sqe_set_data64(s, OP_IGNORE);
        }
        while (u->acc_len) {
            close(u->acc[u->acc_head]);
            u->acc_head = (u->acc_head + 1) & (u->acc_cap - 1);
            u->acc_len--;
        }
        free(u->acc);
    } else if (u->recv_armed) {
        cancel(st, ud_fd(u->gen, fd, OP_RECV));
    }
    /* A send still in flight here is being abandoned (a peer that stopped
     * reading, an error): it holds the file, so without this the socket
     * would outlive close(2). A graceful close never gets here with one:
     * its bytes counted as taken only once sent. */
    if (u->inflight) {
        cancel(st, (uint64_t)(uintptr_t)u->inflight | OP_SEND);
        shutdown(fd, SHUT_RDWR);
    }
    if (u->pmask) {
        struct io_uring_sqe *s = sqe_get(st);
        if (s) {
            io_uring_prep_poll_remove(s, ud_fd(u->gen, fd, OP_POLL));
            io_uring_sqe_set_data64(s, OP_IGNORE);
        }
    }
    /* The cancels must reach the kernel before the fd number is reused. */
    io_uring_submit(&st->ring);
    free(u->in);
    uint32_t gen = u->gen;
    int queued = u->queued;
    memset(u, 0, sizeof(*u));
    u->gen = gen + 1;
    u->queued = (unsigned)queued; /* still in the queue array: dropped there */
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
