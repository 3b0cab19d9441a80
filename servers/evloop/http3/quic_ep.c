#include "http3/quic_ep.h"

#include "http3/quic_reset.h"
#include "http3/quic_retry.h"
#include "http3/quic_tx.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Datagrams read per readable event before the loop gets a say. */
#define READS_PER_EVENT 64
/* A QUIC datagram is at most the path MTU; 64 KiB takes any UDP payload,
 * and a GRO read of many. */
#define RX_BUF 65536

struct quic_ep {
    aeEventLoop *el;
    quic_env env;
    long long timer_id; /* -1: none */
    uint64_t timer_at;  /* what it was set for (ns) */
    uint8_t rx[RX_BUF];
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* An Initial of a version we do not speak is answered with the ones we do. */
static void send_version_negotiation(quic_ep *ep, const ngtcp2_version_cid *vc,
                                     const struct sockaddr *peer,
                                     socklen_t peer_len) {
    static const uint32_t versions[] = {NGTCP2_PROTO_VER_V1};
    uint8_t buf[256], r;
    r = (uint8_t)now_ns();
    ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(
        buf, sizeof(buf), r, vc->scid, vc->scidlen, vc->dcid, vc->dcidlen,
        versions, 1);
    tx_send_one(ep->env.fd, peer, peer_len, buf, n);
}

static void dispatch(quic_ep *ep, const struct sockaddr *peer,
                     socklen_t peer_len, const uint8_t *data, size_t len,
                     uint64_t now) {
    ngtcp2_version_cid vc;
    int rv = ngtcp2_pkt_decode_version_cid(&vc, data, len, QUIC_SCID_LEN);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        send_version_negotiation(ep, &vc, peer, peer_len);
        return;
    }
    if (rv != 0) return;
    quic_conn *qc = cid_map_get(&ep->env.cids, vc.dcid, vc.dcidlen);
    if (qc) {
        quic_conn_read(qc, peer, peer_len, data, len, now);
        return;
    }
    /* Not a connection of ours: only a client's first Initial makes one. A
     * short header naming an ID of our length is a connection we no longer
     * hold, told so by a Stateless Reset; anything else is dropped. */
    if (!(data[0] & 0x80)) {
        if (vc.dcidlen == QUIC_SCID_LEN)
            quic_reset_send(&ep->env, vc.dcid, len, peer, peer_len, now);
        return;
    }
    ngtcp2_pkt_hd hd;
    ngtcp2_cid odcid;
    int retried;
    if (ngtcp2_accept(&hd, data, len) != 0 ||
        quic_retry_check(&ep->env, &hd, peer, peer_len, now, &odcid, &retried) != RETRY_ACCEPT)
        return;
    quic_conn_accept(&ep->env, &hd, &odcid, retried, peer, peer_len, data, len, now);
}

static long long on_timer(aeEventLoop *el, long long id, void *arg);

/* ms until a deadline (ns), rounded up: the loop's timers count in ms. */
static long long delay_ms(uint64_t at, uint64_t now) {
    return at <= now ? 0 : (long long)((at - now + 999999) / 1000000);
}

/* The loop timer follows the heap's earliest deadline. */
static void rearm(quic_ep *ep, uint64_t now) {
    heap_node *top = heap_top(&ep->env.timers);
    if (!top) return; /* a pending timer finds nothing and ends itself */
    if (ep->timer_id >= 0 && ep->timer_at <= top->at) return;
    if (ep->timer_id >= 0) aeDeleteTimeEvent(ep->el, ep->timer_id);
    ep->timer_id = aeCreateTimeEvent(ep->el, delay_ms(top->at, now), on_timer, ep);
    ep->timer_at = top->at;
}

static long long on_timer(aeEventLoop *el, long long id, void *arg) {
    (void)el, (void)id;
    quic_ep *ep = arg;
    uint64_t now = now_ns();
    /* each connection due now once: one whose deadline stays in the past
     * waits for the next turn rather than spinning here */
    size_t due = ep->env.timers.n;
    heap_node *top;
    while (due-- > 0 && (top = heap_top(&ep->env.timers)) && top->at <= now)
        quic_conn_expire(quic_conn_of(top), now);
    top = heap_top(&ep->env.timers);
    if (!top) {
        ep->timer_id = -1;
        return AE_NOMORE;
    }
    ep->timer_at = top->at;
    return delay_ms(top->at, now);
}

/* One read: a datagram, or with GRO several of one sender glued together
 * (*seg: their size, the last may be shorter; 0: one datagram). */
static ssize_t read_one(int fd, uint8_t *buf, size_t cap,
                        struct sockaddr_storage *peer, socklen_t *peer_len,
                        size_t *seg) {
    struct iovec iov = {buf, cap};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_name = peer, .msg_namelen = sizeof(*peer),
                       .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
    ssize_t n;
    while ((n = recvmsg(fd, &m, 0)) < 0 && errno == EINTR) {
    }
    *peer_len = m.msg_namelen;
    *seg = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); n > 0 && c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int gso;
            memcpy(&gso, CMSG_DATA(c), sizeof(gso));
            if (gso > 0) *seg = (size_t)gso;
        }
    return n;
}

static void on_readable(aeEventLoop *el, int fd, void *arg, int mask) {
    (void)el, (void)mask;
    quic_ep *ep = arg;
    uint64_t now = now_ns();
    for (int i = 0; i < READS_PER_EVENT; i++) {
        struct sockaddr_storage peer;
        socklen_t peer_len;
        size_t seg;
        ssize_t n = read_one(fd, ep->rx, sizeof(ep->rx), &peer, &peer_len, &seg);
        if (n < 0) break; /* EAGAIN: drained */
        if (!seg) seg = (size_t)n;
        for (size_t at = 0; at < (size_t)n; at += seg)
            dispatch(ep, (struct sockaddr *)&peer, peer_len, ep->rx + at,
                     (size_t)n - at < seg ? (size_t)n - at : seg, now);
    }
    quic_env_flush(&ep->env, now);
    rearm(ep, now);
}

static int bind_udp(const h3_config *cfg, quic_env *env) {
    struct addrinfo hints = {0}, *res;
    char port[16];
    int one = 1;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", cfg->port);
    int gai = getaddrinfo(cfg->bind_addr, port, &hints, &res);
    if (gai) {
        fprintf(stderr, "https_bench_server: bad address %s: %s\n", cfg->bind_addr,
                gai_strerror(gai));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        (cfg->reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
        fprintf(stderr, "https_bench_server: cannot bind UDP %s:%d for HTTP/3: %s\n",
                cfg->bind_addr ? cfg->bind_addr : "*", cfg->port, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    /* A burst of handshakes (100 clients at once) outruns the default
     * 208 KiB receive buffer; a dropped Initial costs its client a 1 s
     * retransmission timeout. 4 MiB, as the kernel's rmem_max allows, or
     * beyond it where we may (root: SO_RCVBUFFORCE). */
    int size = 4 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    /* GRO: a burst from one client arrives as one read (read_one splits
     * it); a kernel without it just delivers datagrams one by one */
    setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    env->local_len = sizeof(env->local);
    getsockname(fd, (struct sockaddr *)&env->local, &env->local_len);
    env->fd = fd;
    return 0;
}

quic_ep *quic_ep_start(aeEventLoop *el, const h3_config *cfg) {
    quic_ep *ep = calloc(1, sizeof(*ep));
    if (!ep) return NULL;
    ep->el = el;
    ep->timer_id = -1;
    ep->env.fd = -1;
    ep->env.lim = cfg->lim;
    /* a GSO batch: at most 64 KiB of UDP payload per send */
    ep->env.tx_cap = 64000;
    if (getrandom(ep->env.retry_key, sizeof(ep->env.retry_key), 0) !=
            (ssize_t)sizeof(ep->env.retry_key) ||
        getrandom(ep->env.reset_key, sizeof(ep->env.reset_key), 0) !=
            (ssize_t)sizeof(ep->env.reset_key) ||
        !(ep->env.tx = malloc(ep->env.tx_cap)) ||
        cid_map_init(&ep->env.cids, 4096) < 0 ||
        !(ep->env.tls = quic_tls_new(cfg->cert_file, cfg->key_file)) ||
        bind_udp(cfg, &ep->env) < 0 ||
        aeCreateFileEvent(el, ep->env.fd, AE_READABLE, on_readable, ep) != AE_OK) {
        quic_ep_stop(ep);
        return NULL;
    }
    return ep;
}

void quic_ep_stop(quic_ep *ep) {
    if (!ep) return;
    while (ep->env.all) quic_conn_free(ep->env.all);
    if (ep->timer_id >= 0) aeDeleteTimeEvent(ep->el, ep->timer_id);
    if (ep->env.fd >= 0) {
        aeDeleteFileEvent(ep->el, ep->env.fd, AE_READABLE);
        close(ep->env.fd);
    }
    quic_tls_free(ep->env.tls);
    heap_free(&ep->env.timers);
    cid_map_free(&ep->env.cids);
    free(ep->env.tx);
    free(ep);
}
