/* ae_uring.h: the state of the io_uring backend and how its requests are
 * submitted, shared by its three files (internal to them; the loop knows
 * the backend only as aeBackendUring, ae_backend.h):
 *
 *   ae_uring.c      the loop's side: create, watch, poll (submit, wait,
 *                   reap completions, report ready fds), destroy
 *   ae_uring_io.c   the fd's side: adopt, accept, recv, sendv, shutdown,
 *                   release -- the completion I/O a connection asks for
 *   ae_uring_sqe.c  requests armed and cancelled (multishot recv and
 *                   accept, one-shot polls) */
#ifndef AE_URING_H
#define AE_URING_H

#include <liburing.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

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

static inline int ur_gen_is(const ufd *u, uint32_t gen) {
    return (u->gen & UR_GEN_MASK) == gen;
}

static inline uint64_t ur_ud_fd(uint32_t gen, int fd, int op) {
    return ((uint64_t)gen << 32 | (uint32_t)fd) << 3 | (uint64_t)op;
}

static inline struct io_uring_sqe *ur_sqe_get(uring_state *st) {
    struct io_uring_sqe *s = io_uring_get_sqe(&st->ring);
    if (!s) {
        io_uring_submit(&st->ring);
        s = io_uring_get_sqe(&st->ring);
    }
    return s;
}

static inline void ur_enqueue(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    if (u->queued) return;
    u->queued = 1;
    st->queue[st->nqueue++] = fd;
}

static inline void ur_give_back(uring_state *st, unsigned bid) {
    io_uring_buf_ring_add(st->br, st->bufs + (size_t)bid * UR_BUF_SIZE,
                          UR_BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(UR_NBUFS), (int)st->returned);
    st->returned++;
}

/* Whether a listener's accept should be armed: watched, room in its ring,
 * no error waiting to be reported. */
static inline int ur_accept_wanted(const ufd *u) {
    return (u->want & AE_READABLE) && !u->recv_armed && !u->err &&
           u->acc_len < UR_ACCEPT_MAX;
}

static inline void ur_busy_remove(uring_state *st, send_op *op) {
    if (op->bprev) op->bprev->bnext = op->bnext;
    else st->busy = op->bnext;
    if (op->bnext) op->bnext->bprev = op->bprev;
    op->bprev = op->bnext = NULL;
}

/* ---- ae_uring_sqe.c ---- */
/* Each 0, or -1 when the submission queue has no room even after a submit. */
int ur_arm_recv(uring_state *st, int fd);
int ur_arm_accept(uring_state *st, int fd);
int ur_cancel(uring_state *st, uint64_t ud);
int ur_arm_poll(uring_state *st, int fd, int mask);

/* ---- ae_uring_io.c: the completion-I/O hooks (ae_backend.h) ---- */
int uring_adopt(void *state, int fd);
int uring_accept(void *state, int fd);
ssize_t uring_recv(void *state, int fd, char *buf, size_t len);
ssize_t uring_sendv(void *state, int fd, const struct iovec *iov, int iovcnt);
void uring_shutdown_write(void *state, int fd);
void uring_release(void *state, int fd);

#endif
