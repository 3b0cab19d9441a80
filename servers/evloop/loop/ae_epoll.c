/* ae_epoll: the Linux epoll backend of ae (see ae_backend.h), the default.
 * Level-triggered: a ready fd that is not fully drained is reported again
 * on the next turn, so a bounded ready array loses nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ae.h"
#include "ae_backend.h"

typedef struct epoll_state {
    int epfd;
    int maxevents;
    struct epoll_event *events;
} epoll_state;

static void epoll_destroy(void *state) {
    epoll_state *st = state;
    if (!st) return;
    if (st->epfd >= 0) close(st->epfd);
    free(st->events);
    free(st);
}

static void *epoll_create_state(int setsize, int maxfired) {
    epoll_state *st = calloc(1, sizeof(*st));
    (void)setsize; /* epoll keeps its per-fd state in the kernel */
    if (!st) return NULL;
    st->maxevents = maxfired;
    st->events = calloc((size_t)maxfired, sizeof(*st->events));
    st->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!st->events || st->epfd < 0) {
        int e = errno;
        epoll_destroy(st);
        errno = e;
        return NULL;
    }
    return st;
}

static int epoll_watch(void *state, int fd, int oldmask, int newmask) {
    epoll_state *st = state;
    struct epoll_event ee = {0};
    int op = oldmask == AE_NONE ? EPOLL_CTL_ADD
           : newmask == AE_NONE ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    if (newmask & AE_READABLE) ee.events |= EPOLLIN;
    if (newmask & AE_WRITABLE) ee.events |= EPOLLOUT;
    ee.data.fd = fd;
    return epoll_ctl(st->epfd, op, fd, &ee);
}

static int epoll_poll(void *state, aeFired *fired, int timeout_ms) {
    epoll_state *st = state;
    int n = epoll_wait(st->epfd, st->events, st->maxevents, timeout_ms);
    if (n < 0) return 0; /* EINTR: the caller just runs its timers */
    for (int i = 0; i < n; i++) {
        uint32_t ev = st->events[i].events;
        int mask = 0;
        if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) mask |= AE_READABLE;
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) mask |= AE_WRITABLE;
        fired[i].fd = st->events[i].data.fd;
        fired[i].mask = mask;
    }
    return n;
}

/* Not registered by constructor: ae.c names it as the default, so it is
 * linked in even from a static archive (the fuzzers). */
const aeBackend aeBackendEpoll = {
    .name = "epoll",
    .create = epoll_create_state,
    .destroy = epoll_destroy,
    .watch = epoll_watch,
    .poll = epoll_poll,
};
