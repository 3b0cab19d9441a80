/* ae_uring_io: the io_uring backend's completion I/O, as a connection and
 * the listener see it (ae_backend.h): adopt an fd, take accepted fds and
 * received bytes from its queues, hand over a send, shut down, release. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ae_uring.h"

int uring_adopt(void *state, int fd) {
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

int uring_accept(void *state, int fd) {
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
    if (ur_accept_wanted(u)) ur_arm_accept(st, fd);
    return r;
}

ssize_t uring_recv(void *state, int fd, char *buf, size_t len) {
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
            ur_arm_recv(st, fd);
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

ssize_t uring_sendv(void *state, int fd, const struct iovec *iov,
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
    struct io_uring_sqe *s = ur_sqe_get(st);
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

void uring_shutdown_write(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (u->send_busy) u->shut_pending = 1;
    else shutdown(fd, SHUT_WR);
}

void uring_release(void *state, int fd) {
    uring_state *st = state;
    ufd *u = &st->fds[fd];
    if (u->listener) {
        /* Every accept of it, cancelled ones included: an armed accept
         * holds the socket, which would go on listening after close(2). */
        struct io_uring_sqe *s = ur_sqe_get(st);
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
        ur_cancel(st, ur_ud_fd(u->gen, fd, OP_RECV));
    }
    /* A send still in flight here is being abandoned (a peer that stopped
     * reading, an error): it holds the file, so without this the socket
     * would outlive close(2). A graceful close never gets here with one:
     * its bytes counted as taken only once sent. */
    if (u->inflight) {
        ur_cancel(st, (uint64_t)(uintptr_t)u->inflight | OP_SEND);
        shutdown(fd, SHUT_RDWR);
    }
    if (u->pmask) {
        struct io_uring_sqe *s = ur_sqe_get(st);
        if (s) {
            io_uring_prep_poll_remove(s, ur_ud_fd(u->gen, fd, OP_POLL));
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
