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

#include "conn.h"
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

/* At --max-conns: close connections that have nothing in flight (idle
 * keep-alive, or connected and silent), as nginx reuses its idle
 * connections, so that a crowd of idle sockets cannot lock out new clients.
 * Returns how many were closed. */
static size_t reclaim_idle(server *s, size_t want) {
    size_t n = 0;
    for (conn *c = s->conns, *next; c && n < want; c = next) {
        next = c->next;
        if (conn_reclaimable(c)) {
            conn_close(c);
            n++;
        }
    }
    return n;
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
        if (s->nconns >= s->cfg.max_conns &&
            reclaim_idle(s, ACCEPTS_PER_EVENT - (size_t)i) == 0) {
            pause_accepting(s);
            return;
        }
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
        if (!conn_create(s, cfd)) close(cfd);
    }
}

static long long shutdown_deadline(aeEventLoop *el, long long id, void *data) {
    server *s = data;
    (void)id;
    while (s->conns) conn_close(s->conns);
    aeStop(el);
    return AE_NOMORE;
}

static void begin_shutdown(server *s) {
    if (s->shutting_down) return;
    s->shutting_down = 1;
    if (s->listen_fd >= 0) {
        aeDeleteFileEvent(s->el, s->listen_fd, AE_READABLE);
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    if (s->accept_resume_timer) {
        aeDeleteTimeEvent(s->el, s->accept_resume_timer);
        s->accept_resume_timer = 0;
    }
    for (conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        conn_begin_shutdown(c);
    }
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
    conn_flush_dirty(s);
    if (s->accept_full && s->nconns < s->cfg.max_conns && s->listen_fd >= 0 &&
        !s->shutting_down) {
        s->accept_full = 0;
        aeCreateFileEvent(el, s->listen_fd, AE_READABLE, accept_handler, s);
    }
    if (s->shutting_down && s->nconns == 0) aeStop(el);
}

static long long sweep_timer(aeEventLoop *el, long long id, void *data) {
    server *s = data;
    long long now = aeNowMs(el);
    (void)id;
    for (conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        conn_check_timeout(c, now);
    }
    return s->sweep_ms;
}

static long long pending_reads_timer(aeEventLoop *el, long long id,
                                     void *data) {
    server *s = data;
    (void)el;
    (void)id;
    s->rpending_timer = 0;
    conn_read_pending(s);
    return AE_NOMORE;
}

void server_schedule_pending_reads(server *s) {
    /* A timer due now makes the next epoll_wait return at once, so this
     * input is read after this turn's flush, like a socket event would be:
     * output still leaves in one write per connection per turn. */
    if (s->rpending_timer) return;
    long long id = aeCreateTimeEvent(s->el, 0, pending_reads_timer, s);
    s->rpending_timer = id > 0 ? id : 0;
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

static int listen_on(server *s) {
    struct addrinfo hints, *res;
    char port[16];
    int fd, one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", s->cfg.port);
    int gai = getaddrinfo(s->cfg.bind_addr, port, &hints, &res);
    if (gai) {
        fprintf(stderr, "%s: bad address %s: %s\n", s->cfg.prog,
                s->cfg.bind_addr, gai_strerror(gai));
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
        listen(fd, SOMAXCONN) < 0) {
        fprintf(stderr, "%s: cannot listen on %s:%d: %s\n", s->cfg.prog,
                s->cfg.bind_addr, s->cfg.port, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);

    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    s->bound_port = s->cfg.port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            s->bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            s->bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    s->listen_fd = fd;
    return 0;
}

int server_init(server *s, const server_config *cfg, int setsize) {
    sigset_t set;

    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    if (!s->cfg.prog) s->cfg.prog = "http_bench_server";
    s->listen_fd = s->signal_fd = -1;
    long long t = cfg->header_timeout_ms;
    if (cfg->idle_timeout_ms < t) t = cfg->idle_timeout_ms;
    if (cfg->body_timeout_ms < t) t = cfg->body_timeout_ms;
    if (cfg->send_timeout_ms < t) t = cfg->send_timeout_ms;
    if (cfg->conn_setup && cfg->handshake_timeout_ms < t)
        t = cfg->handshake_timeout_ms;
    /* One sweep over all connections replaces a timer per request; run it
     * often enough that a timeout fires within ~1/4 of its length. */
    s->sweep_ms = t / 4 < 10 ? 10 : t / 4 > 1000 ? 1000 : t / 4;
    date_cache_update(time(NULL));

    s->el = aeCreateEventLoop(setsize, cfg->loop_backend);
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
    if (listen_on(s) < 0) return -1;
    if (aeCreateFileEvent(s->el, s->listen_fd, AE_READABLE, accept_handler,
                          s) != AE_OK ||
        aeCreateTimeEvent(s->el, s->sweep_ms, sweep_timer, s) < 0 ||
        aeCreateTimeEvent(s->el, 100, date_timer, s) < 0) {
        fprintf(stderr, "%s: loop setup failed\n", s->cfg.prog);
        return -1;
    }
    aeSetBeforeSleepProc(s->el, before_sleep, s);
    return 0;
}

void server_run(server *s) { aeMain(s->el); }

void server_free(server *s) {
    if (s->el) {
        while (s->conns) conn_close(s->conns);
    }
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->signal_fd >= 0) close(s->signal_fd);
    aeDeleteEventLoop(s->el);
    s->el = NULL;
    s->listen_fd = s->signal_fd = -1;
}
