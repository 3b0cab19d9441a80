/* protocols: the table of the protocols the server speaks (see protocol in
 * conn.h), in order of preference. The only file that knows them all: a new
 * protocol is its handler plus one row in protocols.c. */
#ifndef PROTOCOLS_H
#define PROTOCOLS_H

#include <stddef.h>

#include "net/conn.h"

extern const protocol protocols_table[];
extern const size_t protocols_count;

/* The table's ALPN ids in TLS wire format (length-prefixed), in order of
 * preference, for the TLS context. Returns the length, or 0 if cap is too
 * small. */
size_t protocols_alpn_wire(const protocol *table, size_t n,
                           unsigned char *out, size_t cap);

#endif
