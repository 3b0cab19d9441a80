/* quic_cid: the endpoint's table from connection ID to connection. A QUIC
 * datagram names its connection by the destination CID, which the server
 * chose (several per connection, retired and replaced over its life), or,
 * before the client has seen one of ours, the client's original one. An
 * entry is made when ngtcp2 issues a CID and dropped when it retires it,
 * so the table allocates on those events only, never per packet. */
#ifndef QUIC_CID_H
#define QUIC_CID_H

#include <stddef.h>
#include <stdint.h>

typedef struct cid_entry cid_entry;

typedef struct cid_map {
    cid_entry **buckets;
    size_t mask; /* buckets - 1 (a power of two) */
    size_t n;
} cid_map;

/* 0, or -1 on allocation failure. */
int cid_map_init(cid_map *m, size_t buckets);
void cid_map_free(cid_map *m);
/* 0; -1 if the id is taken or memory ran out. */
int cid_map_put(cid_map *m, const uint8_t *id, size_t len, void *val);
void *cid_map_get(const cid_map *m, const uint8_t *id, size_t len);
void cid_map_del(cid_map *m, const uint8_t *id, size_t len);

#endif
