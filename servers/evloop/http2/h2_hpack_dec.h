/* h2_hpack_dec: HPACK decoding of request header blocks (RFC 7541).
 *
 * Why not nghttp2's inflater, which the codec used first: after the first
 * request a client sends nearly every field as an index into its dynamic
 * table, and the inflater still spends ~45 % of the server's user-space
 * instructions per request on h2c GET /ping (reference counts, a field
 * object per emission, and our own syntax checks over the same bytes every
 * time). Here an indexed field costs a table lookup, and a field's syntax
 * (RFC 9113 8.2.1) is checked once, when it enters the table; each entry
 * also carries a few bits its consumer may set (`memo`) to remember checks
 * of its own (h2_head: "a valid :authority"), valid as long as the entry.
 *
 * The dynamic table's entries are allocated as they are inserted (the
 * table is empty until a client indexes something, and an idle connection
 * keeps only what its client indexed, at most SETTINGS_HEADER_TABLE_SIZE
 * bytes plus 32 per entry). Huffman-coded strings are decoded four bits at a
 * time through a table built once from the code (RFC 7541 appendix B). */
#ifndef H2_HPACK_DEC_H
#define H2_HPACK_DEC_H

#include <stddef.h>
#include <stdint.h>

/* Our SETTINGS_HEADER_TABLE_SIZE: the protocol's default, never changed. */
#define HPACK_TABLE_SIZE 4096
/* The longest string literal accepted (as nghttp2 does): a block that
 * spans frames is kept only from its first unfinished field, so this bounds
 * what one connection's decoder holds between frames. */
#define HPACK_STRING_MAX 65536

/* One decoded field. The pointers are valid during the callback only. */
typedef struct hpack_field {
    const uint8_t *name;
    size_t nlen;
    const uint8_t *value;
    size_t vlen;
    /* Name and value pass RFC 9113 8.2.1 (lowercase token name or a
     * pseudo-field name; no NUL, CR or LF in the value, no whitespace at
     * its ends). */
    int syntax_ok;
    /* Bits the consumer may set to remember what it checked about this
     * exact field, while its table entry lives; NULL for a field that is
     * in no table (a literal without indexing). */
    uint8_t *memo;
} hpack_field;

typedef void (*hpack_emit_fn)(void *arg, const hpack_field *f);

typedef struct hpack_entry hpack_entry;

typedef struct hpack_decoder {
    hpack_entry *ents; /* ring of cap entries, newest at head - 1 */
    unsigned cap, head, count;
    size_t size;     /* RFC 7541 4.1: name + value + 32 per entry */
    size_t max_size; /* as the last table size update set it */
    unsigned block_fields; /* fields so far in the current block */
    uint8_t static_memo[62];
} hpack_decoder;

void hpack_decoder_init(hpack_decoder *d);
void hpack_decoder_free(hpack_decoder *d);
/* Decodes a header block's fragment, calling emit for each field in order.
 * final: the block ends with it. Returns the bytes consumed -- all of them,
 * or, when not final, up to the start of a field that continues in the next
 * fragment (the caller keeps the rest and prepends it) -- or -1 for a block
 * that breaks RFC 7541 (a COMPRESSION_ERROR for the connection; the table
 * is then undefined) or no memory. */
long hpack_decode(hpack_decoder *d, const uint8_t *in, size_t len, int final,
                  hpack_emit_fn emit, void *arg);

#endif
