#include "http3/quic_tx.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/uio.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
/* The kernel cuts at most 64 segments from one send (UDP_MAX_SEGMENTS). */
#define GSO_MAX_SEGS 64

void tx_begin(quic_tx *t, uint8_t *buf, size_t cap, size_t pkt_max, int fd,
              const struct sockaddr *peer, socklen_t peer_len, int *gso_off) {
    *t = (quic_tx){.buf = buf, .cap = cap, .pkt_max = pkt_max, .fd = fd,
                   .peer = peer, .peer_len = peer_len, .gso_off = gso_off};
}

void tx_send_one(int fd, const struct sockaddr *peer, socklen_t peer_len,
                 const uint8_t *p, ssize_t n) {
    while (n > 0 && sendto(fd, p, (size_t)n, 0, peer, peer_len) < 0 && errno == EINTR) {
    }
}

static int send_gso(const quic_tx *t) {
    struct iovec iov = {t->buf, t->off};
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_name = (void *)t->peer, .msg_namelen = t->peer_len,
                       .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t seg = (uint16_t)t->seg;
    memcpy(CMSG_DATA(c), &seg, sizeof(seg));
    ssize_t rv;
    while ((rv = sendmsg(t->fd, &m, 0)) < 0 && errno == EINTR) {
    }
    /* EIO/EINVAL/ENOPROTOOPT: no GSO here (a device or kernel without it) */
    return rv < 0 && errno != EAGAIN && errno != ENOBUFS ? -1 : 0;
}

void tx_flush(quic_tx *t) {
    if (t->nseg > 1 && !*t->gso_off) {
        if (send_gso(t) == 0) {
            t->off = t->nseg = 0;
            return;
        }
        *t->gso_off = 1;
    }
    for (size_t at = 0; at < t->off; at += t->seg)
        tx_send_one(t->fd, t->peer, t->peer_len, t->buf + at,
                    (ssize_t)(t->off - at < t->seg ? t->off - at : t->seg));
    t->off = t->nseg = 0;
}

uint8_t *tx_room(quic_tx *t, size_t *room) {
    if (t->nseg && (t->nseg == GSO_MAX_SEGS || t->cap - t->off < t->seg))
        tx_flush(t);
    /* after the first packet, the rest of the batch must fit its size */
    *room = t->nseg ? t->seg : t->pkt_max;
    if (*room > t->cap - t->off) *room = t->cap - t->off;
    return t->buf + t->off;
}

void tx_commit(quic_tx *t, size_t n) {
    if (!n) return;
    if (!t->nseg) t->seg = n;
    t->off += n;
    t->nseg++;
    /* a packet below the path's full size ends its batch: only the last
     * segment may be short, and a short first one would hold the rest of
     * the batch to its size */
    if (n < t->pkt_max) tx_flush(t);
}
