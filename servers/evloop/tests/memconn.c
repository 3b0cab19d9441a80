/* memconn: the in-memory transport and scripted peer (see memconn.h). */
#include "memconn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "app/app.h"
#include "cli.h"
#include "net/date_cache.h"
#include "net/gather.h"

/* Turns without progress after which the connections count as idle
 * (MEMCONN_WRITE_EAGAIN makes every other turn a quiet one). */
#define IDLE_TURNS 3
/* Each turn with progress moves at least one byte; no test sends or
 * receives anywhere near this many one byte at a time. */
#define MAX_TURNS 2000000L

static volatile unsigned sink;

/* ---- buffers ---- */

static void buf_append(memconn_buf *b, const void *p, size_t n) {
    if (!n) return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) cap *= 2;
        char *nb = realloc(b->data, cap);
        if (!nb) abort();
        b->data = nb;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static uint32_t rng(memconn *p) {
    uint32_t x = p->rng ? p->rng : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return p->rng = x;
}

static void violation(memconn *p, const char *what) {
    if (!p->violations++)
        snprintf(p->violation, sizeof(p->violation), "%s", what);
}

/* ---- the transport ---- */

static ssize_t mc_read(conn *c, char *buf, size_t len) {
    memconn *p = c->tp_data;
    p->reads++;
    if (p->in_pos == p->in.len) {
        if (p->eof) {
            p->eofs++;
            p->env->progress++;
            return 0;
        }
        errno = EAGAIN;
        return -1;
    }
    size_t n = p->in.len - p->in_pos;
    if (p->chunk && n > p->chunk) n = p->chunk;
    if (n > len) n = len;
    memcpy(buf, p->in.data + p->in_pos, n);
    p->in_pos += n;
    p->env->progress += n;
    return (ssize_t)n;
}

static ssize_t mc_writev(conn *c, const struct iovec *iov, int iovcnt) {
    memconn *p = c->tp_data;
    unsigned char now[sizeof(p->pend)];
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        const unsigned char *b = iov[i].iov_base;
        total += iov[i].iov_len;
        /* Every segment offered must be valid memory, both ends. */
        if (iov[i].iov_len) sink += b[0] + b[iov[i].iov_len - 1];
    }
    if (!total) violation(p, "writev offered 0 bytes");
    /* What was offered and not taken comes again, unchanged. */
    size_t got = iov_copy(iov, iovcnt, 0, now, p->pend_len);
    if (got != p->pend_len || memcmp(now, p->pend, got))
        violation(p, "bytes not taken were not offered again unchanged");

    p->calls++;
    size_t take = total;
    switch (p->write_mode) {
    case MEMCONN_WRITE_STALL: take = 0; break;
    case MEMCONN_WRITE_EAGAIN:
        if (p->calls & 1) take = 0;
        break;
    case MEMCONN_WRITE_SHORT: {
        size_t max = p->short_max ? p->short_max : 16384;
        if (total > 1) take = 1 + rng(p) % (total < max ? total : max);
        break;
    }
    default: break;
    }
    p->pend_len = iov_copy(iov, iovcnt, take, p->pend, sizeof(p->pend));
    if (!take) {
        errno = EAGAIN;
        return -1;
    }
    size_t left = take;
    for (int i = 0; i < iovcnt && left; i++) {
        size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
        buf_append(&p->out, iov[i].iov_base, k);
        left -= k;
    }
    p->writevs++;
    p->env->progress += take;
    return (ssize_t)take;
}

static void mc_shutdown_write(conn *c) {
    memconn *p = c->tp_data;
    p->shut_wr = 1;
    p->env->progress++;
}

static void mc_close(conn *c) {
    memconn *p = c->tp_data;
    p->closed = 1;
    p->c = NULL;
    p->env->progress++;
    c->tp_data = NULL;
}

static const transport mc_transport = {
    .read = mc_read,
    .writev = mc_writev,
    .shutdown_write = mc_shutdown_write,
    .close = mc_close,
};

static int mc_setup(conn *c, void *arg) {
    memconn_env *e = arg;
    memconn *p = e->opening;
    if (!p) return -1;
    c->tp = &mc_transport;
    c->tp_data = p;
    p->c = c;
    p->env = e;
    return 0;
}

/* ---- the environment ---- */

void memconn_config(conn_config *cfg, const char *const *flags) {
    char prog[] = "memconn", port[] = "0";
    char *argv[40] = {prog, port};
    int argc = 2;
    while (flags && *flags && argc < 39) argv[argc++] = (char *)*flags++;
    argv[argc] = NULL;
    cli_args a;
    cli_parse(argc, argv, 0, &a);
    *cfg = a.cfg.conn;
}

static void before_sleep(aeEventLoop *el, void *data) {
    (void)el;
    conn_set_flush(data);
}

/* Keeps epoll_wait from blocking: a connection may watch nothing at all. */
static long long guard_timer(aeEventLoop *el, long long id, void *data) {
    (void)el;
    (void)id;
    (void)data;
    return 0;
}

int memconn_env_init(memconn_env *e, const conn_config *cfg) {
    memset(e, 0, sizeof(*e));
    if (cfg) e->cfg = *cfg;
    else memconn_config(&e->cfg, NULL);
    e->cfg.setup = mc_setup;
    e->cfg.setup_arg = e;
    app_init();
    date_cache_update(0);
    e->el = aeCreateEventLoop(1024, NULL);
    if (!e->el) return -1;
    conn_set_init(&e->set, e->el, &e->cfg);
    aeSetBeforeSleepProc(e->el, before_sleep, &e->set);
    if (aeCreateTimeEvent(e->el, 0, guard_timer, NULL) <= 0) {
        aeDeleteEventLoop(e->el);
        e->el = NULL;
        return -1;
    }
    return 0;
}

void memconn_env_free(memconn_env *e) {
    if (!e->el) return;
    conn_set_close_all(&e->set);
    aeDeleteEventLoop(e->el);
    e->el = NULL;
}

void memconn_init(memconn *p) { memset(p, 0, sizeof(*p)); }

void memconn_free(memconn *p) {
    free(p->in.data);
    free(p->out.data);
    memset(p, 0, sizeof(*p));
}

conn *memconn_open(memconn_env *e, memconn *p) {
    int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC); /* always ready */
    if (fd < 0) return NULL;
    p->env = e;
    e->opening = p;
    conn *c = conn_create(&e->set, fd);
    e->opening = NULL;
    if (!c) {
        close(fd);
        p->c = NULL;
        return NULL;
    }
    return c;
}

void memconn_send(memconn *p, const void *data, size_t n) {
    buf_append(&p->in, data, n);
}

void memconn_send_str(memconn *p, const char *s) {
    memconn_send(p, s, strlen(s));
}

long memconn_run(memconn_env *e) {
    int idle = 0;
    long turns = 0;
    while (e->set.n && idle < IDLE_TURNS) {
        if (turns++ >= MAX_TURNS) {
            e->spun = 1;
            return -1;
        }
        unsigned long long before = e->progress;
        aeProcessEvents(e->el);
        idle = e->progress == before ? idle + 1 : 0;
    }
    e->turns += turns;
    return turns;
}

long long memconn_now(const memconn_env *e, long long plus_ms) {
    return aeNowMs(e->el) + plus_ms;
}

void memconn_timeout(memconn *p, long long now) {
    if (p->c) conn_check_timeout(p->c, now);
}

void memconn_expire(memconn *p) {
    if (p->env) memconn_timeout(p, memconn_now(p->env, 1LL << 40));
}

int memconn_out_has(const memconn *p, const char *s) {
    size_t n = strlen(s);
    return p->out.len >= n && memmem(p->out.data, p->out.len, s, n) != NULL;
}

size_t memconn_out_count(const memconn *p, const char *s) {
    size_t n = strlen(s), count = 0;
    const char *at = p->out.data, *end = p->out.data + p->out.len;
    while (n && at && (size_t)(end - at) >= n &&
           (at = memmem(at, (size_t)(end - at), s, n))) {
        count++;
        at += n;
    }
    return count;
}
