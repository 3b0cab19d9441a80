/* ae_uring_sqe: the requests the io_uring backend arms and cancels (see
 * ae_uring.h). */
#include <poll.h>
#include <sys/socket.h>

#include "ae_uring.h"

int ur_arm_recv(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = ur_sqe_get(st);
    if (!s) return -1;
    io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = UR_BGID;
    io_uring_sqe_set_data64(s, ur_ud_fd(u->gen, fd, OP_RECV));
    u->recv_armed = 1;
    return 0;
}

/* Arms a multishot accept on a listener, under a new generation. */
int ur_arm_accept(uring_state *st, int fd) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = ur_sqe_get(st);
    if (!s) return -1;
    u->gen++;
    io_uring_prep_multishot_accept(s, fd, NULL, NULL,
                                   SOCK_NONBLOCK | SOCK_CLOEXEC);
    io_uring_sqe_set_data64(s, ur_ud_fd(u->gen, fd, OP_ACCEPT));
    u->recv_armed = 1;
    return 0;
}


int ur_cancel(uring_state *st, uint64_t ud) {
    struct io_uring_sqe *s = ur_sqe_get(st);
    if (!s) return -1;
    io_uring_prep_cancel64(s, ud, 0);
    io_uring_sqe_set_data64(s, OP_IGNORE);
    return 0;
}

int ur_arm_poll(uring_state *st, int fd, int mask) {
    ufd *u = &st->fds[fd];
    struct io_uring_sqe *s = ur_sqe_get(st);
    if (!s) return -1;
    unsigned ev = (mask & AE_READABLE ? POLLIN : 0) |
                  (mask & AE_WRITABLE ? POLLOUT : 0);
    /* One-shot, re-armed after each completion: a poll armed on an fd that
     * is still readable completes at once, so readiness is reported every
     * turn while it lasts, as level-triggered epoll does (a multishot poll
     * only reports new wake-ups, and input left unread would stall). */
    io_uring_prep_poll_add(s, fd, ev);
    io_uring_sqe_set_data64(s, ur_ud_fd(u->gen, fd, OP_POLL));
    u->pmask = mask;
    return 0;
}
