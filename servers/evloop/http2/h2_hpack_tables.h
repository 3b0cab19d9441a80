/* h2_hpack_tables: RFC 7541's fixed tables, as data (h2_hpack_tables.c). */
#ifndef H2_HPACK_TABLES_H
#define H2_HPACK_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define HPACK_STATIC_COUNT 61
#define HPACK_EOS 256

typedef struct hpack_static_entry {
    const char *name;
    size_t nlen;
    const char *value;
    size_t vlen;
} hpack_static_entry;

/* Indexes 1..61; entry 0 is a placeholder. */
extern const hpack_static_entry hpack_static_table[HPACK_STATIC_COUNT + 1];
extern const uint32_t hpack_huffman_code[257];
extern const uint8_t hpack_huffman_len[257];

#endif
