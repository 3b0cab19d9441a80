/* h2_hpack_dec: RFC 7541's request examples (appendix C.3, C.4), thousands
 * of blocks from nghttp2's own encoder (Huffman, indexing, eviction, table
 * size updates, never-indexed fields) cut into random fragments, and the
 * blocks section 4, 5 and 6 forbid. */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http2/h2_hpack_dec.h"
#include "test.h"

#define MAX_GOT 64

typedef struct got {
    size_t n;
    char name[MAX_GOT][512], value[MAX_GOT][2048];
    size_t nlen[MAX_GOT], vlen[MAX_GOT];
    int syntax_ok[MAX_GOT];
    uint8_t *memo[MAX_GOT];
} got;

static void collect(void *arg, const hpack_field *f) {
    got *g = arg;
    if (g->n == MAX_GOT || f->nlen > 512 || f->vlen > 2048) return;
    memcpy(g->name[g->n], f->name, f->nlen);
    memcpy(g->value[g->n], f->value, f->vlen);
    g->nlen[g->n] = f->nlen;
    g->vlen[g->n] = f->vlen;
    g->syntax_ok[g->n] = f->syntax_ok;
    g->memo[g->n] = f->memo;
    g->n++;
}

static int is(const got *g, size_t i, const char *n, const char *v) {
    return i < g->n && g->nlen[i] == strlen(n) &&
           !memcmp(g->name[i], n, g->nlen[i]) && g->vlen[i] == strlen(v) &&
           !memcmp(g->value[i], v, g->vlen[i]);
}

/* Decodes a hex string as one whole block. */
static long decode_hex(hpack_decoder *d, const char *hex, got *g) {
    uint8_t buf[256];
    size_t n = 0;
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        unsigned v;
        sscanf(p, "%2x", &v);
        buf[n++] = (uint8_t)v;
        p += 2;
    }
    memset(g, 0, sizeof(*g));
    return hpack_decode(d, buf, n, 1, collect, g);
}

static void rfc_examples(const char *const blocks[3], const char *what) {
    T_BEGIN;
    hpack_decoder d;
    got *g = malloc(sizeof(*g));
    hpack_decoder_init(&d);
    T_CHECK(decode_hex(&d, blocks[0], g) > 0 && g->n == 4);
    T_CHECK(is(g, 0, ":method", "GET") && is(g, 1, ":scheme", "http") &&
            is(g, 2, ":path", "/") && is(g, 3, ":authority", "www.example.com"));
    T_CHECK(d.size == 57 && d.count == 1);
    T_CHECK(decode_hex(&d, blocks[1], g) > 0 && g->n == 5);
    T_CHECK(is(g, 3, ":authority", "www.example.com") &&
            is(g, 4, "cache-control", "no-cache"));
    T_CHECK(d.size == 110 && d.count == 2);
    T_CHECK(decode_hex(&d, blocks[2], g) > 0 && g->n == 5);
    T_CHECK(is(g, 1, ":scheme", "https") && is(g, 2, ":path", "/index.html") &&
            is(g, 3, ":authority", "www.example.com") &&
            is(g, 4, "custom-key", "custom-value"));
    T_CHECK(d.size == 164 && d.count == 3);
    /* An indexed field's memo is its entry's, the same every time
     * (:authority is now index 64, behind custom-key and cache-control). */
    uint8_t *memo = g->memo[3];
    T_CHECK(memo != NULL && g->syntax_ok[4]);
    T_CHECK(decode_hex(&d, "c0", g) > 0 && g->memo[0] == memo);
    hpack_decoder_free(&d);
    free(g);
    T_END("h2_hpack_dec", what);
}

/* ---- against nghttp2's encoder ---- */

static unsigned rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffff;
}

static const char *const names[] = {"user-agent", "accept", "x-trace", "cookie",
                                    "accept-encoding", "x-long", "a", "content-type"};

static void nghttp2_blocks(void) {
    T_BEGIN;
    unsigned seed = 17;
    int bad = 0;
    for (int round = 0; round < 40 && !bad; round++) {
        nghttp2_hd_deflater *def;
        hpack_decoder d;
        size_t max = round % 3 == 0 ? 4096 : round % 3 == 1 ? 256 : 0;
        if (nghttp2_hd_deflate_new(&def, 4096) != 0) {
            bad = 1;
            break;
        }
        if (max != 4096) nghttp2_hd_deflate_change_table_size(def, max);
        hpack_decoder_init(&d);
        got *g = malloc(sizeof(*g));
        for (int blk = 0; blk < 50 && !bad; blk++) {
            nghttp2_nv nv[12];
            char vals[12][1200];
            size_t n = 1 + rnd(&seed) % 12;
            for (size_t i = 0; i < n; i++) {
                const char *nm = names[rnd(&seed) % 8];
                /* few distinct values, so many fields end up indexed; some
                 * long enough to evict everything or not fit at all */
                size_t vl = rnd(&seed) % 5 == 0 ? rnd(&seed) % 1100 : rnd(&seed) % 20;
                unsigned pick = rnd(&seed) % 4;
                for (size_t k = 0; k < vl; k++) vals[i][k] = (char)('a' + (k * 7 + pick) % 26);
                nv[i] = (nghttp2_nv){(uint8_t *)nm, (uint8_t *)vals[i], strlen(nm), vl,
                                     rnd(&seed) % 7 == 0 ? NGHTTP2_NV_FLAG_NO_INDEX
                                                         : NGHTTP2_NV_FLAG_NONE};
            }
            if (blk == 25 && max) /* a size update in mid-stream */
                nghttp2_hd_deflate_change_table_size(def, max / 2);
            uint8_t out[16384];
            ssize_t len = nghttp2_hd_deflate_hd(def, out, sizeof(out), nv, n);
            if (len < 0) {
                bad = 2;
                break;
            }
            /* Fed in up to three random fragments, as CONTINUATION frames
             * cut it: what a fragment leaves undecoded goes first into the
             * next one. */
            memset(g, 0, sizeof(*g));
            uint8_t pend[16384 + 64];
            size_t plen = 0, off = 0;
            for (int part = 0; part < 3; part++) {
                size_t take = part == 2 ? (size_t)len - off
                                        : rnd(&seed) % ((size_t)len - off + 1);
                memcpy(pend + plen, out + off, take);
                plen += take;
                off += take;
                long r = hpack_decode(&d, pend, plen, part == 2, collect, g);
                if (r < 0) {
                    bad = 3;
                    break;
                }
                memmove(pend, pend + r, plen - (size_t)r);
                plen -= (size_t)r;
            }
            if (bad) break;
            if (g->n != n) bad = 4;
            for (size_t i = 0; i < n && !bad; i++)
                if (g->nlen[i] != nv[i].namelen || g->vlen[i] != nv[i].valuelen ||
                    memcmp(g->name[i], nv[i].name, nv[i].namelen) ||
                    memcmp(g->value[i], nv[i].value, nv[i].valuelen) || !g->syntax_ok[i])
                    bad = 5;
        }
        free(g);
        hpack_decoder_free(&d);
        nghttp2_hd_deflate_del(def);
    }
    if (bad) printf("  nghttp2_blocks: failure kind %d\n", bad);
    T_CHECK(!bad);
    T_END("h2_hpack_dec", "2000 blocks from nghttp2's encoder (Huffman, indexing, "
                          "eviction, size updates), in random fragments");
}

static long decode_bytes(const char *b, size_t n, int final) {
    hpack_decoder d;
    got g;
    hpack_decoder_init(&d);
    memset(&g, 0, sizeof(g));
    long r = hpack_decode(&d, (const uint8_t *)b, n, final, collect, &g);
    hpack_decoder_free(&d);
    return r;
}

static void bad_blocks(void) {
    T_BEGIN;
    /* 6.1: index 0, and an index past the (empty) dynamic table */
    T_CHECK(decode_bytes("\x80", 1, 1) < 0);
    T_CHECK(decode_bytes("\xbe", 1, 1) < 0);
    /* 4.2: a size update after a field; above our 4096 */
    T_CHECK(decode_bytes("\x82\x20", 2, 1) < 0);
    T_CHECK(decode_bytes("\x3f\xe1\x1f", 3, 1) == 3);
    T_CHECK(decode_bytes("\x3f\xe2\x1f", 3, 1) < 0);
    /* 5.2: Huffman "a" (00011) padded with ones is fine; padding of more
     * than 7 bits, or of zeros, or the EOS symbol itself, is not */
    T_CHECK(decode_bytes("\x40\x01z\x81\x1f", 5, 1) == 5);
    T_CHECK(decode_bytes("\x40\x01z\x82\x1f\xff", 6, 1) < 0);
    T_CHECK(decode_bytes("\x40\x01z\x81\x18", 5, 1) < 0);
    T_CHECK(decode_bytes("\x40\x01z\x84\xff\xff\xff\xff", 8, 1) < 0);
    /* 5.1: an integer too large */
    T_CHECK(decode_bytes("\xff\xff\xff\xff\xff\xff\x01", 7, 1) < 0);
    /* a field cut short: an error at the block's end, kept for later in
     * the middle (nothing consumed) */
    T_CHECK(decode_bytes("\x82\x40\x05hel", 6, 1) < 0);
    T_CHECK(decode_bytes("\x82\x40\x05hel", 6, 0) == 1);
    /* a string over the 64 KiB limit (its length alone says so) */
    T_CHECK(decode_bytes("\x40\x7f\x81\x80\x04", 5, 0) < 0);
    T_END("h2_hpack_dec", "blocks RFC 7541 forbids: bad indexes, late or large size "
                          "updates, bad Huffman padding, EOS, huge integers, cut fields");
}

static void syntax(void) {
    T_BEGIN;
    hpack_decoder d;
    got g;
    hpack_decoder_init(&d);
    memset(&g, 0, sizeof(g));
    /* literals: "Upper" as a name, a value with CR, then a good one */
    static const char b[] = "\x00\x05Upper\x01v" "\x00\x01x\x03" "a\rb" "\x40\x01x\x01y";
    T_CHECK(hpack_decode(&d, (const uint8_t *)b, sizeof(b) - 1, 1, collect, &g) > 0);
    T_CHECK(g.n == 3 && !g.syntax_ok[0] && !g.syntax_ok[1] && g.syntax_ok[2]);
    T_CHECK(g.memo[0] == NULL && g.memo[2] != NULL);
    hpack_decoder_free(&d);
    T_END("h2_hpack_dec", "field syntax judged (RFC 9113 8.2.1), memo only for table entries");
}

void test_h2_hpack_dec(void) {
    static const char *const c3[3] = {
        "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "8286 84be 5808 6e6f 2d63 6163 6865",
        "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"};
    static const char *const c4[3] = {
        "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        "8286 84be 5886 a8eb 1064 9cbf",
        "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"};
    rfc_examples(c3, "RFC 7541 C.3: three requests without Huffman, table sizes");
    rfc_examples(c4, "RFC 7541 C.4: the same with Huffman coding");
    nghttp2_blocks();
    bad_blocks();
    syntax();
}
