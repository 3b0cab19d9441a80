#include "server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "date_cache.h"

/* Accepts per readable event: bounded so a connect storm cannot starve the
 * connections we already have. */
#define ACCEPTS_PER_EVENT 64
/* Out of fds: stop accepting for a while instead of spinning on a listener
 * that stays readable. */
#define ACCEPT_BACKOFF_MS 100
/* Graceful shutdown: in-flight work gets this long, then we close all. */
#define SHUTDOWN_GRACE_MS 900

static void accept_handler(aeEventLoop *el, int fd, void *data, int mask);

static long long accept_resume(aeEventLoop *el, long long id, void *data) {
    server *s = data;
    (void)id;
    s->accept_resume_timer = 0;
    if (s->listen_fd >= 0)
        aeCreateFileEvent(el, s->listen_fd, AE_READABLE, accept_handler, s);
    return AE_NOMORE;
}

/* Stops watching the listener; before_sleep resumes once a connection has
 * closed. New clients wait in the kernel's backlog meanwhile. */
static void pause_accepting(server *s) {
    aeDeleteFileEvent(s->el, s->listen_fd, AE_READABLE);
    s->accept_full = 1;
}

static void accept_handler(aeEventLoop *el, int fd, void *data, int mask) {
    server *s = data;
    (void)mask;
    for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
        if (s->conns.n >= s->cfg.max_conns &&
            conn_set_reclaim(&s->conns, ACCEPTS_PER_EVENT - (size_t)i) == 0) {
            pause_accepting(s);
            return;
        }
        int cfd = aeAccept(el, fd);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM) {
                aeDeleteFileEvent(el, fd, AE_READABLE);
                s->accept_resume_timer =
                    aeCreateTimeEvent(el, ACCEPT_BACKOFF_MS, accept_resume, s);
            }
            return;
        }
        /* Responses are written whole; Nagle would only add latency. */
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (!conn_create(&s->conns, cfd)) close(cfd);
    }
}

static long long shutdown_deadline(aeEventLoop *el, long long id, void *data) {
    server *s = data;
    (void)id;
    conn_set_close_all(&s->conns);
    aeStop(el);
    return AE_NOMORE;
}

static void begin_shutdown(server *s) {
    if (s->conns.shutting_down) return;
    if (s->listen_fd >= 0) {
        aeDeleteFileEvent(s->el, s->listen_fd, AE_READABLE);
        /* Stops listening now, whoever else holds the socket: an io_uring
         * accept still being cancelled keeps it open past close(2), and
         * the ring's teardown at exit is deferred, so without this a
         * connect could still succeed after the process had gone. */
        shutdown(s->listen_fd, SHUT_RDWR);
        aeRelease(s->el, s->listen_fd);
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    if (s->accept_resume_timer) {
        aeDeleteTimeEvent(s->el, s->accept_resume_timer);
        s->accept_resume_timer = 0;
    }
    conn_set_begin_shutdown(&s->conns);
    aeCreateTimeEvent(s->el, SHUTDOWN_GRACE_MS, shutdown_deadline, s);
}

static void signal_handler(aeEventLoop *el, int fd, void *data, int mask) {
    server *s = data;
    struct signalfd_siginfo si;
    (void)el;
    (void)mask;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) begin_shutdown(s);
}

static void before_sleep(aeEventLoop *el, void *data) {
    server *s = data;
    conn_set_flush(&s->conns);
    if (s->accept_full && s->conns.n < s->cfg.max_conns && s->listen_fd >= 0 &&
        !s->conns.shutting_down) {
        s->accept_full = 0;
        aeCreateFileEvent(el, s->listen_fd, AE_READABLE, accept_handler, s);
    }
    if (s->conns.shutting_down && s->conns.n == 0) aeStop(el);
}

static long long sweep_timer(aeEventLoop *el, long long id, void *data) {
    server *s = data;
    (void)id;
    conn_set_sweep(&s->conns, aeNowMs(el));
    return s->sweep_ms;
}

static long long date_timer(aeEventLoop *el, long long id, void *data) {
    (void)el;
    (void)id;
    (void)data;
    date_cache_update(time(NULL));
    /* Sample often enough that the header is never more than ~0.1 s
     * behind the second boundary; a time() call is a vDSO read. */
    return 100;
}

int server_bind(const server_config *cfg, int do_listen, int *bound_port) {
    struct addrinfo hints, *res;
    char port[16];
    int fd, one = 1;
    const char *prog = cfg->prog ? cfg->prog : "http_bench_server";

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", cfg->port);
    int gai = getaddrinfo(cfg->bind_addr, port, &hints, &res);
    if (gai) {
        fprintf(stderr, "%s: bad address %s: %s\n", prog, cfg->bind_addr,
                gai_strerror(gai));
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* Workers each listen on their own socket of one port: SO_REUSEPORT
     * makes the kernel spread new connections over them. */
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        (cfg->workers > 1 &&
         setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
        (do_listen && listen(fd, SOMAXCONN) < 0)) {
        fprintf(stderr, "%s: cannot listen on %s:%d: %s\n", prog,
                cfg->bind_addr, cfg->port, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);

    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    *bound_port = cfg->port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            *bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            *bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    return fd;
}

int server_init(server *s, const server_config *cfg, int setsize) {
    sigset_t set;

    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    if (!s->cfg.prog) s->cfg.prog = "http_bench_server";
    s->listen_fd = s->signal_fd = -1;
    const conn_config *cc = &cfg->conn;
    long long t = cc->header_timeout_ms;
    if (cc->idle_timeout_ms < t) t = cc->idle_timeout_ms;
    if (cc->body_timeout_ms < t) t = cc->body_timeout_ms;
    if (cc->send_timeout_ms < t) t = cc->send_timeout_ms;
    if (cc->setup && cc->handshake_timeout_ms < t)
        t = cc->handshake_timeout_ms;
    /* One sweep over all connections replaces a timer per request; run it
     * often enough that a timeout fires within ~1/4 of its length. */
    s->sweep_ms = t / 4 < 10 ? 10 : t / 4 > 1000 ? 1000 : t / 4;
    date_cache_update(time(NULL));

    s->el = aeCreateEventLoop(setsize, cfg->loop_backend);
    if (!s->el && cfg->loop_backend && errno != ENOENT && cfg->loop_strict) {
        fprintf(stderr, "%s: the %s event loop is unavailable here (%s), and "
                        "--loop-fallback no forbids serving on epoll\n",
                s->cfg.prog, cfg->loop_backend, strerror(errno));
        return -1;
    }
    if (!s->el && cfg->loop_backend && errno != ENOENT) {
        /* Built in but refused here (io_uring: ENOSYS on an old kernel,
         * EPERM under /proc/sys/kernel/io_uring_disabled or seccomp): say
         * so and serve on the default loop. */
        fprintf(stderr, "%s: the %s event loop is unavailable here (%s); "
                        "falling back to epoll\n",
                s->cfg.prog, cfg->loop_backend, strerror(errno));
        s->el = aeCreateEventLoop(setsize, NULL);
    }
    if (!s->el) {
        char names[128];
        aeBackendNames(names, sizeof(names));
        if (errno == ENOENT)
            fprintf(stderr, "%s: unknown --loop %s (built in: %s)\n",
                    s->cfg.prog, cfg->loop_backend, names);
        else
            fprintf(stderr, "%s: cannot create the %s event loop: %s\n",
                    s->cfg.prog, cfg->loop_backend ? cfg->loop_backend
                                                   : "default",
                    strerror(errno));
        return -1;
    }
    conn_set_init(&s->conns, s->el, &s->cfg.conn);
    /* Signals arrive as a readable fd, so shutdown runs inside the loop
     * like any other event rather than in a handler. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    s->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (s->signal_fd < 0 ||
        aeCreateFileEvent(s->el, s->signal_fd, AE_READABLE, signal_handler,
                          s) != AE_OK) {
        fprintf(stderr, "%s: signalfd: %s\n", s->cfg.prog, strerror(errno));
        return -1;
    }
    if ((s->listen_fd = server_bind(&s->cfg, 1, &s->bound_port)) < 0)
        return -1;
    /* On a completion loop the listener's accepts go through it as well
     * (multishot accept); elsewhere this is a no-op (ENOTSUP). */
    aeAdopt(s->el, s->listen_fd);
    if (aeCreateFileEvent(s->el, s->listen_fd, AE_READABLE, accept_handler,
                          s) != AE_OK ||
        aeCreateTimeEvent(s->el, s->sweep_ms, sweep_timer, s) < 0 ||
        aeCreateTimeEvent(s->el, 100, date_timer, s) < 0) {
        fprintf(stderr, "%s: loop setup failed\n", s->cfg.prog);
        return -1;
    }
    aeSetBeforeSleepProc(s->el, before_sleep, s);
    if (cfg->extra.start &&
        !(s->extra_state = cfg->extra.start(s->el, s->bound_port,
                                            cfg->workers > 1, cfg->extra.arg)))
        return -1;
    return 0;
}

void server_run(server *s) { aeMain(s->el); }

void server_free(server *s) {
    if (s->extra_state) s->cfg.extra.stop(s->extra_state);
    s->extra_state = NULL;
    if (s->el) conn_set_close_all(&s->conns);
    if (s->listen_fd >= 0) {
        if (s->el) aeRelease(s->el, s->listen_fd);
        close(s->listen_fd);
    }
    if (s->signal_fd >= 0) close(s->signal_fd);
    aeDeleteEventLoop(s->el);
    s->el = NULL;
    s->listen_fd = s->signal_fd = -1;
}
