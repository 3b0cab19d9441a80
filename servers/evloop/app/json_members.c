#include "json_members.h"

#include <stdint.h>
#include <string.h>

#include "json_str.h"

/* Up to this many members, comparing every pair is cheaper than setting up
 * a hash table (and the benchmark's documents have three). */
#define DEDUP_PAIRWISE_MAX 8

/* Offsets are kept in a byte buffer with no alignment promise, so they are
 * read and written with memcpy (a plain load or store once compiled). */
static size_t key_at(const char *keys, size_t i) {
    size_t v;
    memcpy(&v, keys + i * sizeof(size_t), sizeof(v));
    return v;
}

int json_members_push(sbuf *work, size_t off) {
    return sbuf_put(work, &off, sizeof(off)) < 0 ? JSON_NOMEM : JSON_OK;
}

/* Length of the serialized string literal at s (from '"' to '"'). Our own
 * output, so it is well-formed: only '\' needs care. */
static size_t literal_len(const char *s) {
    size_t i = 1;
    for (;;) {
        if (s[i] == '\\') i += 2;
        else if (s[i] == '"') return i + 1;
        else i++;
    }
}

static int same_name(const char *base, size_t a, size_t b) {
    size_t la = literal_len(base + a), lb = literal_len(base + b);
    return la == lb && memcmp(base + a, base + b, la) == 0;
}

/* FNV-1a: short keys, no adversary worth a keyed hash (the table is per
 * object and per request; probing stays linear in the worst case). */
static uint32_t name_hash(const char *s) {
    size_t n = literal_len(s);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* Sets drop[i] for each member whose name occurs again later. */
static void mark_pairwise(const char *base, const char *keys, size_t m,
                          unsigned char *drop) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
            if (same_name(base, key_at(keys, i), key_at(keys, j))) {
                drop[i] = 1;
                break;
            }
}

/* The same with an open-addressing table of member index + 1 (0: empty),
 * filled from the last member backwards: whoever finds its name already
 * there has a later twin. */
static void mark_hashed(const char *base, const char *keys, size_t m,
                        unsigned char *drop, uint32_t *table, size_t tcap) {
    memset(table, 0, tcap * sizeof(*table));
    for (size_t i = m; i-- > 0;) {
        size_t k = key_at(keys, i);
        size_t slot = name_hash(base + k) & (tcap - 1);
        for (;; slot = (slot + 1) & (tcap - 1)) {
            if (!table[slot]) {
                table[slot] = (uint32_t)(i + 1);
                break;
            }
            if (same_name(base, key_at(keys, table[slot] - 1), k)) {
                drop[i] = 1;
                break;
            }
        }
    }
}

int json_members_dedup(char *base, size_t *end, sbuf *work, size_t mark) {
    size_t m = (work->len - mark) / sizeof(size_t);
    if (m < 2) {
        work->len = mark;
        return JSON_OK;
    }
    if (m >= UINT32_MAX / 2) { /* the table holds 32-bit indexes */
        work->len = mark;
        return JSON_NOMEM;
    }

    /* Scratch past work->len: the drop flags, then (for big objects) the
     * table, kept at least half empty so probes stay short. */
    size_t tcap = 0, flags = (m + 7) & ~(size_t)7;
    if (m > DEDUP_PAIRWISE_MAX)
        for (tcap = 16; tcap < 2 * m; tcap *= 2) {}
    if (sbuf_reserve(work, flags + tcap * sizeof(uint32_t) + 8) < 0)
        return JSON_NOMEM;
    const char *keys = work->data + mark; /* after the reserve: may move */
    unsigned char *drop = (unsigned char *)work->data + work->len;
    memset(drop, 0, m);
    if (tcap) {
        /* Align the table for uint32_t loads. */
        uintptr_t t = (uintptr_t)(drop + flags);
        t = (t + 3) & ~(uintptr_t)3;
        mark_hashed(base, keys, m, drop, (uint32_t *)t, tcap);
    } else {
        mark_pairwise(base, keys, m, drop);
    }

    /* Compact: member i spans [key i, key i+1 - 1) (the comma excluded),
     * the last one up to *end. The write position never passes the read
     * position, so memmove in place is safe. */
    size_t first = key_at(keys, 0), w = first;
    for (size_t i = 0; i < m; i++) {
        size_t from = key_at(keys, i);
        size_t to = i + 1 < m ? key_at(keys, i + 1) - 1 : *end;
        if (drop[i]) continue;
        if (w != first) base[w++] = ',';
        memmove(base + w, base + from, to - from);
        w += to - from;
    }
    *end = w;
    work->len = mark;
    return JSON_OK;
}
