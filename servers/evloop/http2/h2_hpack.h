/* h2_hpack: response header blocks without an encoder's state (RFC 7541).
 *
 * Every field is a static-table index or a literal "without indexing"
 * whose name is a static-table index, so the peer's dynamic table never
 * changes and a block depends on nothing but its own fields: the parts that
 * do not change (server, a route's content-type) can be built once, and a
 * response costs a few memcpys instead of a run of nghttp2's deflater (which
 * hashes every field against its dynamic table). Values go out without
 * Huffman coding: ours are short, and decoding them is cheaper for the
 * peer. Request blocks are decoded by h2_hpack_dec.c. */
#ifndef H2_HPACK_H
#define H2_HPACK_H

#include <stddef.h>
#include <stdint.h>

/* Static-table indexes of the names we send (RFC 7541 appendix A). */
enum {
    HPACK_STATUS = 8, /* :status, with 200 as index 8 itself */
    HPACK_ALLOW = 22,
    HPACK_CONTENT_LENGTH = 28,
    HPACK_CONTENT_TYPE = 31,
    HPACK_DATE = 33,
    HPACK_SERVER = 54
};

/* The most a field written here takes: 1 + 5 bytes of index, 5 bytes of
 * length, the value. */
#define HPACK_FIELD_MAX(vlen) (11 + (vlen))

/* An integer with an N-bit prefix (RFC 7541 5.1); `first` holds the bits
 * above the prefix in the first byte. Returns the bytes written (at most
 * 6 for a 32-bit value). */
size_t hpack_put_int(uint8_t *p, uint8_t first, int prefix_bits, uint32_t v);
/* :status: one byte for the codes the static table has (200, 204, 206,
 * 304, 400, 404, 500), else a literal with the three digits. */
size_t hpack_put_status(uint8_t *p, int code);
/* A literal field without indexing, name from the static table. */
size_t hpack_put_field(uint8_t *p, unsigned name_index, const char *value,
                       size_t vlen);

#endif
