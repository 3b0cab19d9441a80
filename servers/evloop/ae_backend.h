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
