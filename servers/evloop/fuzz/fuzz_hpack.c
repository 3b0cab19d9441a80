/* hpack: our HPACK decoder (h2_hpack_dec) against nghttp2's inflater, on a
 * sequence of header blocks decoded in order with one decoder each, as one
 * connection's requests are.
 *
 * Input: blocks, each a small header and then its bytes:
 *     L [L2] A B block...
 * L < 0xf0 is the block's length; otherwise the length is (L & 0x0f) << 8 |
 * L2 (up to 4095). A short input's last block is what is left. A and B cut
 * the block into three fragments at len * A / 255 and len * B / 255 (in
 * either order; a fragment may be empty, so two fragments when the cuts
 * meet or one lies at an end).
 *
 * Our decoder gets the fragments as h2_input.c's inflate() feeds it
 * CONTINUATION frames: final = 0 on all but the last, and what a call did not
 * consume (a field that goes on in the next fragment) put in front of the
 * next one; each call's input is an exactly-sized heap copy, so ASan sees a
 * read one byte too far. nghttp2 (nghttp2_hd_inflate_hd2, in_final = 1, then
 * nghttp2_hd_inflate_end_headers) gets the whole block: it is the reference.
 *
 * Checked, block after block until either side fails one (the table is then
 * undefined, so nothing after it is compared):
 *   - a block nghttp2 decodes, ours decodes too, with exactly the same fields
 *     (names, values, order); a block ours decodes, nghttp2 decodes too --
 *     except for the one difference below;
 *   - each call consumes at most its input, a final call all of it;
 *   - every field's syntax_ok is nghttp2_check_header_name(name) &&
 *     nghttp2_check_header_value_rfc9113(value) (for all fields, memo or
 *     not); a field's memo, when not NULL, is live memory (read and written
 *     back, so ASan sees a memo into a freed entry);
 *   - after each block both decoded: the dynamic tables agree entry by
 *     entry (ours read back through indexed fields 62.., a block that leaves
 *     the table as it is), d.count, d.size and d.max_size are nghttp2's, d.size
 *     is the sum over the entries of name + value + 32, and
 *     d.size <= d.max_size <= 4096.
 *
 * Where the two decoders legitimately differ (RFC 7541), looked for in
 * nghttp2 1.52's lib/nghttp2_hd.c and nghttp2_hd_huffman.c:
 *   1. Integer length (5.1: "Integer encodings that exceed implementation
 *      limits -- in value or octet length -- MUST be treated as decoding
 *      errors"). Ours reads at most four continuation octets (values up to
 *      2^28 + 2^N - 2) and refuses an integer that needs a fifth; nghttp2
 *      reads up to five (any value that fits 32 bits). Every integer a valid
 *      block carries is far smaller (a string <= 65536, an index <= 61 +
 *      128, a size update <= 4096) and needs at most three, so the two part
 *      only on integers padded with redundant zero continuation octets
 *      (0x7f 0x80 0x80 0x80 0x80 0x00 is a 127-byte string length): nghttp2
 *      accepts them, ours refuses. Skipped: when nghttp2 accepts a block
 *      that holds an integer with five or more continuation octets (found by
 *      walking the block, below), ours must refuse it (checked), and
 *      comparing stops there.
 *   Looked at and found equal, so nothing is skipped for them:
 *   2. Integers above 2^28: both refuse them, as every HPACK integer has a
 *      bound far below (nghttp2 checks each against its bound, ours too, and
 *      refuses anything past four continuation octets first).
 *   3. String length (5.2, 4.1's limit on what a peer must buffer): ours
 *      refuses a literal longer than HPACK_STRING_MAX, 65536 octets as
 *      encoded, and so does nghttp2 (NGHTTP2_HD_MAX_NV, 65536, on the encoded
 *      length too, also for Huffman); a length over it is refused by both as
 *      soon as it is read, whether or not the string's octets follow.
 *      (scripts/fuzz.sh caps inputs at 4096 bytes, so a string that long is
 *      only ever claimed by its length, never present.)
 *   4. Table size updates (4.2, 6.3): both allow any number, each at most
 *      4096 (our SETTINGS_HEADER_TABLE_SIZE, nghttp2's default setting), only
 *      before the block's first field.
 *   5. Huffman (5.2): both refuse EOS in a string and padding longer than 7
 *      bits or not all ones; an empty Huffman string is "".
 *   6. An entry larger than the table (4.4): both empty the table and insert
 *      nothing. Index 0 and an index past the table (2.3.3): both refuse.
 *   7. Field syntax (RFC 9113 8.2.1): neither decoder refuses a block for it
 *      (nghttp2's session checks later; ours sets syntax_ok), so it is
 *      compared through syntax_ok only.
 */
#include <nghttp2/nghttp2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http2/h2_hpack_dec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) __builtin_trap();                                         \
    } while (0)

#define STATIC_COUNT 61

/* ---- a block's fields, as one byte string: nlen name vlen value ... ---- */

typedef struct fields {
    uint8_t *buf;
    size_t len, cap, n;
} fields;

static void put(fields *fs, const void *p, size_t n) {
    if (fs->len + n > fs->cap) {
        size_t cap = fs->cap ? fs->cap : 256;
        while (cap < fs->len + n) cap *= 2;
        fs->buf = realloc(fs->buf, cap);
        CHECK(fs->buf != NULL);
        fs->cap = cap;
    }
    if (n) memcpy(fs->buf + fs->len, p, n);
    fs->len += n;
}

static void add_field(fields *fs, const uint8_t *name, size_t nlen,
                      const uint8_t *value, size_t vlen) {
    uint32_t l = (uint32_t)nlen;
    put(fs, &l, sizeof(l));
    put(fs, name, nlen);
    l = (uint32_t)vlen;
    put(fs, &l, sizeof(l));
    put(fs, value, vlen);
    fs->n++;
}

static int same(const fields *a, const fields *b) {
    return a->n == b->n && a->len == b->len &&
           (a->len == 0 || !memcmp(a->buf, b->buf, a->len));
}

/* ---- ours ---- */

static int ref_syntax(const uint8_t *name, size_t nlen, const uint8_t *value,
                      size_t vlen) {
    return nghttp2_check_header_name(name, nlen) &&
           nghttp2_check_header_value_rfc9113(value, vlen);
}

static void emit(void *arg, const hpack_field *f) {
    CHECK((f->name != NULL || f->nlen == 0) &&
          (f->value != NULL || f->vlen == 0));
    CHECK((f->syntax_ok != 0) ==
          ref_syntax(f->name, f->nlen, f->value, f->vlen));
    if (f->memo) {
        volatile uint8_t *m = f->memo;
        *m = *m;
    }
    add_field(arg, f->name, f->nlen, f->value, f->vlen);
}

/* Decodes blk[0..len) in the three fragments [0,c1) [c1,c2) [c2,len), the
 * unconsumed rest of each carried into the next. 0 or -1. */
static int ours_block(hpack_decoder *d, const uint8_t *blk, size_t len,
                      size_t c1, size_t c2, fields *out) {
    const size_t ends[3] = {c1, c2, len};
    uint8_t *tail = NULL;
    size_t tail_len = 0, pos = 0;
    int rc = 0;
    for (int k = 0; k < 3; k++) {
        int final = k == 2;
        size_t flen = ends[k] - pos, n = tail_len + flen;
        uint8_t *in = malloc(n ? n : 1);
        CHECK(in != NULL);
        if (tail_len) memcpy(in, tail, tail_len);
        if (flen) memcpy(in + tail_len, blk + pos, flen);
        pos = ends[k];
        free(tail);
        tail = NULL;
        long r = hpack_decode(d, in, n, final, emit, out);
        if (r < 0) {
            free(in);
            rc = -1;
            break;
        }
        CHECK((size_t)r <= n);
        if (final) CHECK((size_t)r == n);
        tail_len = n - (size_t)r;
        if (tail_len) {
            tail = malloc(tail_len);
            CHECK(tail != NULL);
            memcpy(tail, in + r, tail_len);
        }
        free(in);
    }
    free(tail);
    return rc;
}

/* ---- nghttp2 ---- */

static int ng_block(nghttp2_hd_inflater *inf, const uint8_t *in, size_t len,
                    fields *out) {
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, len, 1);
        if (r < 0) return -1;
        CHECK((size_t)r <= len);
        in += r;
        len -= (size_t)r;
        if (flags & NGHTTP2_HD_INFLATE_EMIT)
            add_field(out, nv.name, nv.namelen, nv.value, nv.valuelen);
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return 0;
        }
        /* in_final: nghttp2 ends a block with FINAL or an error */
        CHECK((flags & NGHTTP2_HD_INFLATE_EMIT) || len > 0);
    }
}

/* ---- difference 1: integers with five or more continuation octets ---- */

/* Reads an integer with an N-bit prefix at *p; returns its continuation
 * octets (-1: the block ends inside it). The value, capped, in *v. */
static int int_octets(const uint8_t **p, const uint8_t *end, int prefix,
                      uint64_t *v) {
    uint64_t max = (1u << prefix) - 1;
    if (*p == end) return -1;
    *v = **p & max;
    (*p)++;
    if (*v < max) return 0;
    int k = 0;
    for (;;) {
        if (*p == end) return -1;
        uint8_t b = *(*p)++;
        if (k < 9) *v += (uint64_t)(b & 0x7f) << (7 * k);
        k++;
        if (!(b & 0x80)) return k;
    }
}

/* Walks a block nghttp2 accepted and says whether an integer in it has five
 * or more continuation octets. */
static int has_long_int(const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    uint64_t v;
    int k;
    while (p < end) {
        uint8_t b = *p;
        if (b & 0x80) { /* indexed */
            if ((k = int_octets(&p, end, 7, &v)) < 0) return 0;
            if (k >= 5) return 1;
            continue;
        }
        if ((b & 0xe0) == 0x20) { /* size update */
            if ((k = int_octets(&p, end, 5, &v)) < 0) return 0;
            if (k >= 5) return 1;
            continue;
        }
        if ((k = int_octets(&p, end, (b & 0xc0) == 0x40 ? 6 : 4, &v)) < 0)
            return 0;
        if (k >= 5) return 1;
        for (int s = v == 0 ? 0 : 1; s < 2; s++) { /* name?, value */
            if ((k = int_octets(&p, end, 7, &v)) < 0) return 0;
            if (k >= 5) return 1;
            if (v > (uint64_t)(end - p)) return 0;
            p += v;
        }
    }
    return 0;
}

/* ---- the tables after a block ---- */

static void probe_emit(void *arg, const hpack_field *f) {
    fields *fs = arg;
    CHECK(f->memo != NULL); /* a table entry's field */
    CHECK((f->syntax_ok != 0) ==
          ref_syntax(f->name, f->nlen, f->value, f->vlen));
    add_field(fs, f->name, f->nlen, f->value, f->vlen);
}

static void check_tables(hpack_decoder *d, nghttp2_hd_inflater *inf) {
    size_t n = nghttp2_hd_inflate_get_num_table_entries(inf);
    CHECK(n >= STATIC_COUNT && d->count == n - STATIC_COUNT);
    CHECK(d->size == nghttp2_hd_inflate_get_dynamic_table_size(inf));
    CHECK(d->max_size == nghttp2_hd_inflate_get_max_dynamic_table_size(inf));
    CHECK(d->size <= d->max_size && d->max_size <= HPACK_TABLE_SIZE);
    size_t sum = 0;
    fields ours = {0}, ref = {0};
    for (size_t i = 0; i < d->count; i++) {
        /* Indexed field 62 + i (7-bit prefix): the newest entry first. An
         * indexed field leaves the table as it is. */
        size_t idx = STATIC_COUNT + 1 + i;
        uint8_t enc[2];
        size_t elen = 1;
        if (idx < 127) {
            enc[0] = (uint8_t)(0x80 | idx);
        } else {
            enc[0] = 0xff;
            enc[1] = (uint8_t)(idx - 127); /* idx <= 61 + 128 */
            elen = 2;
        }
        size_t before = ours.n;
        CHECK(hpack_decode(d, enc, elen, 1, probe_emit, &ours) == (long)elen);
        CHECK(ours.n == before + 1);
        const nghttp2_nv *nv = nghttp2_hd_inflate_get_table_entry(inf, idx);
        CHECK(nv != NULL);
        add_field(&ref, nv->name, nv->namelen, nv->value, nv->valuelen);
        sum += nv->namelen + nv->valuelen + 32;
    }
    CHECK(same(&ours, &ref));
    CHECK(sum == d->size);
    free(ours.buf);
    free(ref.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hpack_decoder d;
    nghttp2_hd_inflater *inf;
    hpack_decoder_init(&d);
    CHECK(nghttp2_hd_inflate_new(&inf) == 0);
    fields ours = {0}, ref = {0};
    size_t pos = 0;
    while (pos < size) {
        /* the block's header: L [L2] A B */
        size_t len = data[pos++];
        if (len >= 0xf0) {
            if (pos == size) break;
            len = (len & 0x0f) << 8 | data[pos++];
        }
        if (size - pos < 2) break;
        unsigned a = data[pos], b = data[pos + 1];
        pos += 2;
        if (len > size - pos) len = size - pos;
        const uint8_t *blk = data + pos;
        pos += len;
        size_t c1 = len * a / 255, c2 = len * b / 255;
        if (c1 > c2) {
            size_t t = c1;
            c1 = c2;
            c2 = t;
        }

        ours.len = ours.n = ref.len = ref.n = 0;
        int ng_ok = ng_block(inf, blk, len, &ref) == 0;
        int our_ok = ours_block(&d, blk, len, c1, c2, &ours) == 0;
        if (ng_ok && has_long_int(blk, len)) {
            CHECK(!our_ok); /* difference 1 */
            break;
        }
        CHECK(ng_ok == our_ok);
        if (!ng_ok) break;
        CHECK(same(&ours, &ref));
        CHECK(d.block_fields == 0);
        check_tables(&d, inf);
    }
    free(ours.buf);
    free(ref.buf);
    nghttp2_hd_inflate_del(inf);
    hpack_decoder_free(&d);
    return 0;
}
