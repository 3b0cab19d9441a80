/* quic_tx: a connection's outgoing packets, batched for UDP GSO. Packets of
 * one size go to the kernel as one sendmsg with UDP_SEGMENT, which cuts
 * them into datagrams (a response of several packets, a burst of ACKs and
 * data) for one system call; a shorter packet can only be a batch's last
 * (the kernel's rule), so it closes the batch. Where the kernel refuses GSO
 * the batch goes out packet by packet, and GSO stays off from then on. */
#ifndef QUIC_TX_H
#define QUIC_TX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

typedef struct quic_tx {
    uint8_t *buf;
    size_t cap;         /* of buf: segments × the largest packet */
    size_t off;         /* bytes batched */
    size_t seg;         /* the batch's segment size (its first packet's) */
    size_t nseg;
    size_t pkt_max;     /* the connection's largest packet now */
    int fd;
    const struct sockaddr *peer;
    socklen_t peer_len;
    int *gso_off;       /* shared by the endpoint: set once GSO failed */
} quic_tx;

/* One datagram of n bytes (n <= 0: none, so a writer's error return can be
 * passed straight in). UDP: a full socket buffer drops it, and QUIC's loss
 * recovery sends its contents again; nothing waits on the socket. */
void tx_send_one(int fd, const struct sockaddr *peer, socklen_t peer_len,
                 const uint8_t *p, ssize_t n);

void tx_begin(quic_tx *t, uint8_t *buf, size_t cap, size_t pkt_max, int fd,
              const struct sockaddr *peer, socklen_t peer_len, int *gso_off);
/* Where the next packet is to be written, and its largest size. */
uint8_t *tx_room(quic_tx *t, size_t *room);
/* The packet written at tx_room was n bytes. */
void tx_commit(quic_tx *t, size_t n);
void tx_flush(quic_tx *t);

#endif
