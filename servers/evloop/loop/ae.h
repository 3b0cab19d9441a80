/* ae: a tiny single-threaded event loop (file events + ms timers).
 *
 * Shaped after Redis's ae: a fd-indexed table of file events, one callback
 * per fd that is told which of READABLE/WRITABLE fired, a short list of
 * timers, and a hook that runs once per loop turn just before we block.
 * The kernel mechanism (epoll) sits behind ae_backend.h, one file per
 * backend. */
#ifndef AE_H
#define AE_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define AE_OK 0
#define AE_ERR (-1)

#define AE_NONE 0
#define AE_READABLE 1
#define AE_WRITABLE 2

/* A timer callback returns the delay in ms until it runs again, or AE_NOMORE
 * to be deleted (one-shot). */
#define AE_NOMORE (-1)

typedef struct aeEventLoop aeEventLoop;

typedef void aeFileProc(aeEventLoop *el, int fd, void *clientData, int mask);
typedef long long aeTimeProc(aeEventLoop *el, long long id, void *clientData);
typedef void aeBeforeSleepProc(aeEventLoop *el, void *clientData);

/* setsize bounds the fds the loop can watch (fd < setsize). backend names
 * the kernel mechanism (ae_backend.h); NULL is the default, epoll. NULL on
 * failure with errno: ENOENT for a backend not built in, else the
 * backend's own reason (ENOSYS, EPERM where it is unavailable). */
aeEventLoop *aeCreateEventLoop(int setsize, const char *backend);
void aeDeleteEventLoop(aeEventLoop *el);

/* Adds mask to the events watched on fd; proc/clientData replace any
 * previous ones (one callback per fd). */
int aeCreateFileEvent(aeEventLoop *el, int fd, int mask, aeFileProc *proc,
                      void *clientData);
/* Removes mask from the events watched on fd. */
void aeDeleteFileEvent(aeEventLoop *el, int fd, int mask);
int aeGetFileEvents(aeEventLoop *el, int fd);

long long aeCreateTimeEvent(aeEventLoop *el, long long ms, aeTimeProc *proc,
                            void *clientData);
int aeDeleteTimeEvent(aeEventLoop *el, long long id);

void aeSetBeforeSleepProc(aeEventLoop *el, aeBeforeSleepProc *proc,
                          void *clientData);

/* One loop turn: before-sleep hook, wait, file events, due timers. */
int aeProcessEvents(aeEventLoop *el);
void aeMain(aeEventLoop *el);
void aeStop(aeEventLoop *el);

/* Monotonic ms, sampled once per loop turn right after waking up, so that
 * hot paths can stamp deadlines without a clock call each. */
long long aeNowMs(const aeEventLoop *el);

/* Completion I/O (ae_backend.h), where the backend has it (io_uring):
 * aeAdopt hands fd's I/O to the loop, after which aeRecv / aeSendv /
 * aeShutdownWrite replace read(2) / writev(2) / shutdown(SHUT_WR) (and
 * aeAccept accept4(2) on an adopted listener), and aeRelease must precede
 * close(2). aeAdopt returns -1 (errno ENOTSUP) on a
 * readiness backend: the caller then does its own I/O. */
int aeAdopt(aeEventLoop *el, int fd);
/* accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), through the loop
 * where the listener fd was adopted. */
int aeAccept(aeEventLoop *el, int fd);
ssize_t aeRecv(aeEventLoop *el, int fd, char *buf, size_t len);
ssize_t aeSendv(aeEventLoop *el, int fd, const struct iovec *iov, int iovcnt);
void aeShutdownWrite(aeEventLoop *el, int fd);
void aeRelease(aeEventLoop *el, int fd);

/* Writes the built-in backends' names ("epoll, ...") for messages. */
size_t aeBackendNames(char *buf, size_t len);

#endif
