#include "h2_hpack_dec.h"

#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "h2_hpack_tables.h"

struct hpack_entry {
    uint8_t *buf; /* name, then value */
    uint32_t nlen, vlen;
    uint8_t memo;
    uint8_t syntax_ok;
};

/* What the parsing steps return besides 0: the block breaks the rules, or
 * the field goes on in the next fragment. */
enum { BAD = -1, MORE = -2 };

/* The most entries a 4096-byte table holds (32 bytes of overhead each). */
#define HPACK_MAX_ENTRIES (HPACK_TABLE_SIZE / 32)
#define HPACK_FIRST_CAP 8

/* ---- Huffman: a 4-bit state machine built once from the code ---- */

enum { HUF_EMIT = 1, HUF_FAIL = 2 };

typedef struct huf_step {
    uint8_t next; /* the tree node after these four bits (0: the root) */
    uint8_t flags;
    uint8_t sym;
} huf_step;

/* The code's tree has 257 leaves, so 256 inner nodes; leaves are stored as
 * -(symbol + 1), and 0 means "no child yet" (the root is nobody's child). */
static int16_t huf_child[256][2];
static uint8_t huf_depth[256];
static uint8_t huf_ones[256]; /* the path from the root is all 1 bits */
static huf_step huf_table[256][16];
static pthread_once_t huf_once = PTHREAD_ONCE_INIT;

static void huf_build(void) {
    int nodes = 1;
    huf_ones[0] = 1;
    for (int sym = 0; sym <= HPACK_EOS; sym++) {
        uint32_t code = hpack_huffman_code[sym];
        int len = hpack_huffman_len[sym], node = 0;
        for (int i = len - 1; i > 0; i--) {
            int b = (int)(code >> i) & 1;
            if (!huf_child[node][b]) {
                huf_child[node][b] = (int16_t)nodes;
                huf_depth[nodes] = (uint8_t)(huf_depth[node] + 1);
                huf_ones[nodes] = (uint8_t)(huf_ones[node] && b);
                nodes++;
            }
            node = huf_child[node][b];
        }
        huf_child[node][code & 1] = (int16_t)(-(sym + 1));
    }
    /* Each nibble from each node: the shortest code is 5 bits, so four bits
     * finish at most one symbol. */
    for (int n = 0; n < 256; n++)
        for (int v = 0; v < 16; v++) {
            huf_step s = {0, 0, 0};
            int state = n;
            for (int k = 3; k >= 0; k--) {
                int c = huf_child[state][(v >> k) & 1];
                if (c >= 0) {
                    state = c;
                    continue;
                }
                if (-c - 1 == HPACK_EOS) { /* 5.2: EOS inside a string */
                    s.flags = HUF_FAIL;
                    break;
                }
                s.flags = HUF_EMIT;
                s.sym = (uint8_t)(-c - 1);
                state = 0;
            }
            s.next = (uint8_t)state;
            huf_table[n][v] = s;
        }
}

/* Decodes n Huffman-coded bytes into out (room for n * 8 / 5 bytes).
 * Returns the decoded length, or -1: EOS in the string, or padding longer
 * than 7 bits or not a prefix of EOS (all ones) (RFC 7541 5.2). */
static long huf_decode(const uint8_t *in, size_t n, uint8_t *out) {
    unsigned state = 0;
    uint8_t *o = out;
    for (size_t i = 0; i < n; i++) {
        const huf_step *s = &huf_table[state][in[i] >> 4];
        if (s->flags & HUF_FAIL) return -1;
        if (s->flags & HUF_EMIT) *o++ = s->sym;
        s = &huf_table[s->next][in[i] & 15];
        if (s->flags & HUF_FAIL) return -1;
        if (s->flags & HUF_EMIT) *o++ = s->sym;
        state = s->next;
    }
    if (state && !(huf_ones[state] && huf_depth[state] <= 7)) return -1;
    return (long)(o - out);
}

/* Huffman output: one buffer per loop thread (decoding is synchronous and
 * fields are used only during the callback). Grows to the largest string
 * seen, which the frame size and CONTINUATION limit bound. */
static __thread uint8_t *scratch;
static __thread size_t scratch_cap;

static uint8_t *scratch_reserve(size_t n) {
    if (n <= scratch_cap) return scratch;
    size_t cap = scratch_cap ? scratch_cap : 1024;
    while (cap < n) cap *= 2;
    uint8_t *p = realloc(scratch, cap);
    if (!p) return NULL;
    scratch = p;
    scratch_cap = cap;
    return p;
}

/* ---- the dynamic table (RFC 7541 2.3.2, 4) ---- */

void hpack_decoder_init(hpack_decoder *d) {
    memset(d, 0, sizeof(*d));
    d->max_size = HPACK_TABLE_SIZE;
    pthread_once(&huf_once, huf_build);
}

static hpack_entry *entry_at(const hpack_decoder *d, unsigned i) {
    /* i = 0 is the newest. */
    return &d->ents[(d->head + d->cap - 1 - i) % d->cap];
}

static void evict_oldest(hpack_decoder *d) {
    hpack_entry *e = entry_at(d, d->count - 1);
    d->size -= (size_t)e->nlen + e->vlen + 32;
    free(e->buf);
    e->buf = NULL;
    d->count--;
}

static void evict_to(hpack_decoder *d, size_t size) {
    while (d->count && d->size > size) evict_oldest(d);
}

void hpack_decoder_free(hpack_decoder *d) {
    evict_to(d, 0);
    free(d->ents);
    d->ents = NULL;
    d->cap = d->head = 0;
}

static int grow(hpack_decoder *d) {
    unsigned cap = d->cap ? d->cap * 2 : HPACK_FIRST_CAP;
    hpack_entry *ne = malloc(cap * sizeof(*ne));
    if (!ne) return -1;
    /* Oldest first, so the ring starts over at 0. */
    for (unsigned i = 0; i < d->count; i++)
        ne[i] = *entry_at(d, d->count - 1 - i);
    free(d->ents);
    d->ents = ne;
    d->cap = cap;
    d->head = d->count;
    return 0;
}

static int syntax_ok(const uint8_t *name, size_t nlen, const uint8_t *value,
                     size_t vlen) {
    return nghttp2_check_header_name(name, nlen) &&
           nghttp2_check_header_value_rfc9113(value, vlen);
}

/* Inserts a field and emits it from its entry. The strings are copied
 * before anything is evicted: the name may be an entry about to go (4.4).
 * A field larger than the table empties it and is emitted uninserted. */
static int insert_emit(hpack_decoder *d, const uint8_t *name, size_t nlen,
                       const uint8_t *value, size_t vlen, hpack_emit_fn emit,
                       void *arg) {
    size_t need = nlen + vlen + 32;
    if (need > d->max_size) {
        hpack_field f = {name, nlen, value, vlen,
                         syntax_ok(name, nlen, value, vlen), NULL};
        emit(arg, &f);
        evict_to(d, 0);
        return 0;
    }
    uint8_t *buf = malloc(nlen + vlen ? nlen + vlen : 1);
    if (!buf) return BAD;
    memcpy(buf, name, nlen);
    memcpy(buf + nlen, value, vlen);
    evict_to(d, d->max_size - need);
    if (d->count == d->cap && grow(d) < 0) {
        free(buf);
        return BAD;
    }
    hpack_entry *e = &d->ents[d->head];
    d->head = (d->head + 1) % d->cap;
    d->count++;
    d->size += need;
    e->buf = buf;
    e->nlen = (uint32_t)nlen;
    e->vlen = (uint32_t)vlen;
    e->memo = 0;
    e->syntax_ok = (uint8_t)syntax_ok(buf, nlen, buf + nlen, vlen);
    hpack_field f = {buf, nlen, buf + nlen, vlen, e->syntax_ok, &e->memo};
    emit(arg, &f);
    return 0;
}

/* ---- the block ---- */

/* An integer with an N-bit prefix (5.1); values past 2^28 are refused
 * (nothing legitimate is that large). */
static int get_int(const uint8_t **pp, const uint8_t *end, int prefix,
                   uint32_t *out) {
    const uint8_t *p = *pp;
    if (p == end) return MORE;
    uint32_t max = (1u << prefix) - 1, v = *p++ & max;
    if (v == max) {
        int shift = 0;
        uint8_t b;
        do {
            if (p == end) return MORE;
            if (shift > 21) return BAD;
            b = *p++;
            v += (uint32_t)(b & 0x7f) << shift;
            shift += 7;
        } while (b & 0x80);
    }
    *pp = p;
    *out = v;
    return 0;
}

/* A string literal (5.2): its bytes in place, or Huffman-decoded into the
 * thread's scratch at offset *off (advanced past it). Pointers into scratch
 * are made by the caller once both strings are decoded, as a second string
 * may move it. */
typedef struct str_ref {
    const uint8_t *raw; /* NULL: in scratch at off */
    size_t off, len;
} str_ref;

static int get_string(const uint8_t **pp, const uint8_t *end, size_t *off,
                      str_ref *s) {
    if (*pp == end) return MORE;
    int huffman = **pp & 0x80;
    uint32_t n;
    int r = get_int(pp, end, 7, &n);
    if (r) return r;
    if (n > HPACK_STRING_MAX) return BAD;
    if (n > (size_t)(end - *pp)) return MORE;
    const uint8_t *p = *pp;
    *pp += n;
    if (!huffman) {
        *s = (str_ref){p, 0, n};
        return 0;
    }
    uint8_t *buf = scratch_reserve(*off + (size_t)n * 8 / 5 + 1);
    if (!buf) return BAD;
    long k = huf_decode(p, n, buf + *off);
    if (k < 0) return BAD;
    *s = (str_ref){NULL, *off, (size_t)k};
    *off += (size_t)k;
    return 0;
}

static const uint8_t *str_ptr(const str_ref *s) {
    return s->raw ? s->raw : scratch + s->off;
}

/* The name and value of index i: 0 or -1 (0, or past the table). */
static int lookup(hpack_decoder *d, uint32_t i, hpack_field *f) {
    if (i == 0) return -1;
    if (i <= HPACK_STATIC_COUNT) {
        const hpack_static_entry *s = &hpack_static_table[i];
        *f = (hpack_field){(const uint8_t *)s->name, s->nlen,
                           (const uint8_t *)s->value, s->vlen, 1,
                           &d->static_memo[i]};
        return 0;
    }
    i -= HPACK_STATIC_COUNT + 1;
    if (i >= d->count) return -1;
    hpack_entry *e = entry_at(d, i);
    *f = (hpack_field){e->buf, e->nlen, e->buf + e->nlen, e->vlen,
                       e->syntax_ok, &e->memo};
    return 0;
}

/* One field (or table size update) at *pp. 0, BAD or MORE. */
static int field(hpack_decoder *d, const uint8_t **pp, const uint8_t *end,
                 hpack_emit_fn emit, void *arg) {
    uint8_t b = **pp;
    uint32_t idx;
    hpack_field f;
    int r;
    if (b & 0x80) { /* 6.1: indexed field */
        if ((r = get_int(pp, end, 7, &idx))) return r;
        if (lookup(d, idx, &f) < 0) return BAD;
        emit(arg, &f);
        d->block_fields++;
        return 0;
    }
    if ((b & 0xe0) == 0x20) { /* 6.3: table size update */
        /* 4.2: only at the start of a block, and within our setting. */
        if (d->block_fields) return BAD;
        if ((r = get_int(pp, end, 5, &idx))) return r;
        if (idx > HPACK_TABLE_SIZE) return BAD;
        d->max_size = idx;
        evict_to(d, idx);
        return 0;
    }
    /* 6.2: a literal, with incremental indexing (01), or without / never
     * indexed (0000 / 0001). */
    int indexing = (b & 0xc0) == 0x40;
    size_t off = 0;
    str_ref name = {0}, value;
    hpack_field nf = {0};
    if ((r = get_int(pp, end, indexing ? 6 : 4, &idx))) return r;
    if (idx && lookup(d, idx, &nf) < 0) return BAD;
    if (!idx && (r = get_string(pp, end, &off, &name))) return r;
    if ((r = get_string(pp, end, &off, &value))) return r;
    const uint8_t *np = idx ? nf.name : str_ptr(&name);
    size_t nlen = idx ? nf.nlen : name.len;
    const uint8_t *vp = str_ptr(&value);
    d->block_fields++;
    if (indexing) return insert_emit(d, np, nlen, vp, value.len, emit, arg);
    f = (hpack_field){np, nlen, vp, value.len,
                      syntax_ok(np, nlen, vp, value.len), NULL};
    emit(arg, &f);
    return 0;
}

long hpack_decode(hpack_decoder *d, const uint8_t *in, size_t len, int final,
                  hpack_emit_fn emit, void *arg) {
    const uint8_t *p = in, *end = in + len;
    while (p < end) {
        const uint8_t *start = p;
        int r = field(d, &p, end, emit, arg);
        if (r == BAD || (r == MORE && final)) return -1;
        if (r == MORE) return (long)(start - in);
    }
    if (final) d->block_fields = 0;
    return (long)len;
}
