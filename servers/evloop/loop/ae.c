#include "ae.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ae_backend.h"

/* At most this many ready fds are handled per wait; more simply wait for
 * the next turn (the backend reports them again). */
#define AE_MAX_FIRED 1024

typedef struct aeFileEvent {
    int mask;
    aeFileProc *proc;
    void *clientData;
} aeFileEvent;

/* Timers live in an unsorted singly linked list: the server has a handful
 * (date refresh, timeout sweep, shutdown deadline), so a linear scan is
 * cheaper and simpler than keeping a heap. */
typedef struct aeTimeEvent {
    long long id;
    long long when;
    aeTimeProc *proc;
    void *clientData;
    int deleted;
    struct aeTimeEvent *next;
} aeTimeEvent;

struct aeEventLoop {
    const aeBackend *api;
    void *apiState;
    int setsize;
    int stop;
    long long now;
    aeFileEvent *events;
    aeFired *fired;
    aeTimeEvent *timers;
    long long nextTimerId;
    aeBeforeSleepProc *beforeSleep;
    void *beforeSleepData;
};

static long long monoMs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Backends other than epoll, registered by their files at start-up. */
#define AE_MAX_BACKENDS 8
static const aeBackend *extraBackends[AE_MAX_BACKENDS];
static int nExtraBackends;

void aeRegisterBackend(const aeBackend *b) {
    if (nExtraBackends < AE_MAX_BACKENDS) extraBackends[nExtraBackends++] = b;
}

static const aeBackend *aeFindBackend(const char *name) {
    if (!name || strcmp(name, aeBackendEpoll.name) == 0) return &aeBackendEpoll;
    for (int i = 0; i < nExtraBackends; i++)
        if (strcmp(name, extraBackends[i]->name) == 0) return extraBackends[i];
    return NULL;
}

int aeAdopt(aeEventLoop *el, int fd) {
    if (!el->api->adopt) {
        errno = ENOTSUP;
        return -1;
    }
    return el->api->adopt(el->apiState, fd);
}

int aeAccept(aeEventLoop *el, int fd) {
    if (el->api->accept) return el->api->accept(el->apiState, fd);
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

ssize_t aeRecv(aeEventLoop *el, int fd, char *buf, size_t len) {
    return el->api->recv(el->apiState, fd, buf, len);
}

ssize_t aeSendv(aeEventLoop *el, int fd, const struct iovec *iov, int iovcnt) {
    return el->api->sendv(el->apiState, fd, iov, iovcnt);
}

void aeShutdownWrite(aeEventLoop *el, int fd) {
    el->api->shutdown_write(el->apiState, fd);
}

void aeRelease(aeEventLoop *el, int fd) {
    if (el->api->release) el->api->release(el->apiState, fd);
}

size_t aeBackendNames(char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "%s", aeBackendEpoll.name);
    for (int i = 0; i < nExtraBackends && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, ", %s", extraBackends[i]->name);
    return n;
}

aeEventLoop *aeCreateEventLoop(int setsize, const char *backend) {
    const aeBackend *api = aeFindBackend(backend);
    if (!api) {
        errno = ENOENT;
        return NULL;
    }
    aeEventLoop *el = calloc(1, sizeof(*el));
    if (!el) return NULL;
    el->api = api;
    int maxfired = setsize < AE_MAX_FIRED ? setsize : AE_MAX_FIRED;
    el->setsize = setsize;
    el->events = calloc((size_t)setsize, sizeof(*el->events));
    el->fired = calloc((size_t)maxfired, sizeof(*el->fired));
    el->apiState = api->create(setsize, maxfired);
    if (!el->events || !el->fired || !el->apiState) {
        int e = el->apiState ? ENOMEM : errno;
        if (el->apiState) api->destroy(el->apiState);
        free(el->events);
        free(el->fired);
        free(el);
        errno = e;
        return NULL;
    }
    el->nextTimerId = 1;
    el->now = monoMs();
    return el;
}

void aeDeleteEventLoop(aeEventLoop *el) {
    if (!el) return;
    aeTimeEvent *te = el->timers;
    while (te) {
        aeTimeEvent *next = te->next;
        free(te);
        te = next;
    }
    el->api->destroy(el->apiState);
    free(el->events);
    free(el->fired);
    free(el);
}

int aeCreateFileEvent(aeEventLoop *el, int fd, int mask, aeFileProc *proc,
                      void *clientData) {
    if (fd < 0 || fd >= el->setsize) {
        errno = ERANGE;
        return AE_ERR;
    }
    aeFileEvent *fe = &el->events[fd];
    int newmask = fe->mask | mask;
    if (newmask != fe->mask && el->api->watch(el->apiState, fd, fe->mask, newmask) < 0)
        return AE_ERR;
    fe->mask = newmask;
    fe->proc = proc;
    fe->clientData = clientData;
    return AE_OK;
}

void aeDeleteFileEvent(aeEventLoop *el, int fd, int mask) {
    if (fd < 0 || fd >= el->setsize) return;
    aeFileEvent *fe = &el->events[fd];
    int newmask = fe->mask & ~mask;
    if (newmask == fe->mask) return;
    /* DEL on an fd that is about to be closed can only fail harmlessly. */
    (void)el->api->watch(el->apiState, fd, fe->mask, newmask);
    fe->mask = newmask;
}

int aeGetFileEvents(aeEventLoop *el, int fd) {
    if (fd < 0 || fd >= el->setsize) return AE_NONE;
    return el->events[fd].mask;
}

long long aeCreateTimeEvent(aeEventLoop *el, long long ms, aeTimeProc *proc,
                            void *clientData) {
    aeTimeEvent *te = malloc(sizeof(*te));
    if (!te) return AE_ERR;
    te->id = el->nextTimerId++;
    te->when = monoMs() + ms;
    te->proc = proc;
    te->clientData = clientData;
    te->deleted = 0;
    te->next = el->timers;
    el->timers = te;
    return te->id;
}

/* Only marks the timer: it may be the one running right now, so the node is
 * reaped at the end of processTimeEvents. */
int aeDeleteTimeEvent(aeEventLoop *el, long long id) {
    for (aeTimeEvent *te = el->timers; te; te = te->next) {
        if (te->id == id && !te->deleted) {
            te->deleted = 1;
            return AE_OK;
        }
    }
    return AE_ERR;
}

void aeSetBeforeSleepProc(aeEventLoop *el, aeBeforeSleepProc *proc,
                          void *clientData) {
    el->beforeSleep = proc;
    el->beforeSleepData = clientData;
}

static long long nearestTimer(const aeEventLoop *el) {
    long long best = -1;
    for (const aeTimeEvent *te = el->timers; te; te = te->next)
        if (!te->deleted && (best < 0 || te->when < best)) best = te->when;
    return best;
}

static void processTimeEvents(aeEventLoop *el) {
    /* Timers created by a callback wait for the next turn, so a callback
     * that re-creates itself cannot spin this loop forever. */
    long long maxId = el->nextTimerId - 1;
    for (aeTimeEvent *te = el->timers; te; te = te->next) {
        if (te->deleted || te->id > maxId || te->when > el->now) continue;
        long long again = te->proc(el, te->id, te->clientData);
        if (again == AE_NOMORE) te->deleted = 1;
        else te->when = el->now + again;
    }
    aeTimeEvent **pp = &el->timers;
    while (*pp) {
        aeTimeEvent *te = *pp;
        if (te->deleted) {
            *pp = te->next;
            free(te);
        } else {
            pp = &te->next;
        }
    }
}

int aeProcessEvents(aeEventLoop *el) {
    if (el->beforeSleep) el->beforeSleep(el, el->beforeSleepData);
    if (el->stop) return 0;

    int timeout = -1;
    long long when = nearestTimer(el);
    if (when >= 0) {
        long long now = monoMs();
        timeout = when > now ? (int)(when - now) : 0;
    }
    int n = el->api->poll(el->apiState, el->fired, timeout);
    el->now = monoMs();

    for (int i = 0; i < n; i++) {
        int fd = el->fired[i].fd;
        aeFileEvent *fe = &el->events[fd];
        /* An earlier callback of this turn may have stopped watching. */
        int mask = el->fired[i].mask & fe->mask;
        if (mask) fe->proc(el, fd, fe->clientData, mask);
    }
    processTimeEvents(el);
    return n;
}

void aeMain(aeEventLoop *el) {
    el->stop = 0;
    while (!el->stop) aeProcessEvents(el);
}

void aeStop(aeEventLoop *el) { el->stop = 1; }

long long aeNowMs(const aeEventLoop *el) { return el->now; }
