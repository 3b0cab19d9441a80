#include "http3/quic_cid.h"

#include <stdlib.h>
#include <string.h>

#define CID_MAX 20 /* RFC 9000 17.2 */

struct cid_entry {
    cid_entry *next;
    void *val;
    uint8_t len;
    uint8_t id[CID_MAX];
};

/* Our CIDs are random, so their first bytes already hash well; FNV-1a
 * covers the client's original DCID, which is its own choice. */
static size_t hash(const uint8_t *id, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ id[i]) * 1099511628211ULL;
    return (size_t)h;
}

int cid_map_init(cid_map *m, size_t buckets) {
    size_t n = 1;
    while (n < buckets) n <<= 1;
    m->buckets = calloc(n, sizeof(*m->buckets));
    m->mask = n - 1;
    m->n = 0;
    return m->buckets ? 0 : -1;
}

void cid_map_free(cid_map *m) {
    if (!m->buckets) return;
    for (size_t i = 0; i <= m->mask; i++)
        for (cid_entry *e = m->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(m->buckets);
    m->buckets = NULL;
}

static cid_entry **find(const cid_map *m, const uint8_t *id, size_t len) {
    cid_entry **p = &m->buckets[hash(id, len) & m->mask];
    for (; *p; p = &(*p)->next)
        if ((*p)->len == len && memcmp((*p)->id, id, len) == 0) break;
    return p;
}

int cid_map_put(cid_map *m, const uint8_t *id, size_t len, void *val) {
    if (len > CID_MAX || *find(m, id, len)) return -1;
    cid_entry *e = malloc(sizeof(*e));
    if (!e) return -1;
    e->val = val;
    e->len = (uint8_t)len;
    memcpy(e->id, id, len);
    cid_entry **head = &m->buckets[hash(id, len) & m->mask];
    e->next = *head;
    *head = e;
    m->n++;
    return 0;
}

void *cid_map_get(const cid_map *m, const uint8_t *id, size_t len) {
    if (len > CID_MAX) return NULL;
    cid_entry *e = *find(m, id, len);
    return e ? e->val : NULL;
}

void cid_map_del(cid_map *m, const uint8_t *id, size_t len) {
    if (len > CID_MAX) return;
    cid_entry **p = find(m, id, len);
    if (!*p) return;
    cid_entry *e = *p;
    *p = e->next;
    free(e);
    m->n--;
}
