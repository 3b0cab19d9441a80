/* ae_backend: the hooks between ae.c and the kernel's event mechanism.
 *
 * ae.c keeps everything that does not depend on the mechanism -- the
 * fd-indexed table of callbacks, the timers, the before-sleep hook, the
 * cached clock -- and asks a backend only to watch fds and to wait, as
 * Redis's ae asks ae_epoll.c or ae_kqueue.c. Adding a backend is one file
 * that defines an aeBackend and registers it (AE_REGISTER_BACKEND below),
 * plus its name in the Makefile's AE_BACKENDS; `--loop NAME` picks it at
 * start-up. epoll is always built: it is the default and the fallback.
 *
 * The contract is readiness: the backend reports which fds can be read or
 * written, and the owner of the fd does the I/O itself. A completion
 * backend (io_uring) fits behind the same hooks by keeping its own queue of
 * submitted receives and sends and reporting, per fd, "input is waiting"
 * (AE_READABLE) and "the socket took what was submitted" (AE_WRITABLE);
 * the connection's transport then takes input from the backend's completed
 * buffers instead of calling read(2) (see transport in conn.h). */
#ifndef AE_BACKEND_H
#define AE_BACKEND_H

#include <sys/types.h>
#include <sys/uio.h>

/* One fd that is ready, with AE_READABLE and/or AE_WRITABLE. Errors and
 * hangups are reported as both, so the owner's next read or write sees the
 * failure and cleans up. */
typedef struct aeFired {
    int fd;
    int mask;
} aeFired;

typedef struct aeBackend {
    const char *name;
    /* setsize bounds the fds (fd < setsize); one poll reports at most
     * maxfired of them. NULL on failure, with errno set (ENOSYS, EPERM:
     * the mechanism is missing or forbidden here). */
    void *(*create)(int setsize, int maxfired);
    void (*destroy)(void *state);
    /* Changes what fd is watched for from oldmask to newmask (either may
     * be AE_NONE; newmask AE_NONE stops watching). 0, or -1 with errno. */
    int (*watch)(void *state, int fd, int oldmask, int newmask);
    /* Waits at most timeout_ms (-1: no limit) and fills fired[] (maxfired
     * long) with the ready fds. Returns how many; 0 on timeout or
     * interruption. */
    int (*poll)(void *state, aeFired *fired, int timeout_ms);

    /* Completion I/O: NULL in a readiness backend (epoll). An fd handed to
     * adopt does its reads and writes through the backend from then on:
     * recv and sendv return like read(2) and writev(2) (EAGAIN: nothing
     * received yet / a send still in flight), sendv copies what it takes;
     * shutdown_write waits for the sends in flight; release comes right
     * before close(2) and drops the fd's requests. Readiness keeps its
     * meaning: AE_READABLE while input, EOF or an error waits to be taken,
     * AE_WRITABLE while no send is in flight. A listening socket can be
     * adopted too: accept then returns like accept4(2) with SOCK_NONBLOCK
     * | SOCK_CLOEXEC, from connections the backend accepted ahead, and
     * AE_READABLE means one (or an error) waits. */
    int (*adopt)(void *state, int fd);
    int (*accept)(void *state, int fd);
    ssize_t (*recv)(void *state, int fd, char *buf, size_t len);
    ssize_t (*sendv)(void *state, int fd, const struct iovec *iov, int iovcnt);
    void (*shutdown_write)(void *state, int fd);
    void (*release)(void *state, int fd);
} aeBackend;

extern const aeBackend aeBackendEpoll;

/* Makes a backend known to aeCreateEventLoop by name. */
void aeRegisterBackend(const aeBackend *b);
/* A backend file registers itself before main() runs. */
#define AE_REGISTER_BACKEND(b)                                              \
    __attribute__((constructor)) static void ae_register_##b(void) {       \
        aeRegisterBackend(&(b));                                            \
    }

#endif
