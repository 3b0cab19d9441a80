/* h2_head: the HTTP/2 rules for a request's header fields (RFC 9113 8.2,
 * 8.3), one decoded field at a time, and what the routes need from them.
 *
 * The codec decodes a header block with its own HPACK decoder
 * (h2_hpack_dec.h) and hands each field here. A field that breaks the rules
 * makes the request malformed: a stream error PROTOCOL_ERROR (RST_STREAM),
 * not a connection error. A decoded field is valid only during the
 * decoder's callback, so :method and :path are copied (inline up to
 * H2_HEAD_INLINE bytes). */
#ifndef H2_HEAD_H
#define H2_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "h2_hpack_dec.h"

#define H2_HEAD_INLINE 256

enum { H2H_OK = 0, H2H_MALFORMED = -1, H2H_NOMEM = -2 };

typedef struct h2_head {
    int trailers;       /* checking a trailer block: no pseudo-fields */
    unsigned seen;      /* pseudo-fields seen (bits) */
    int regular;        /* a regular field came: no pseudo-field after it */
    int has_clen;
    uint64_t clen;
    /* method and path, copied into heap if set, else inline_buf (no
     * pointer into the struct itself, so it can be copied). */
    char inline_buf[H2_HEAD_INLINE];
    char *heap;
    size_t cap, used;
    size_t moff, mlen, poff, plen;
} h2_head;

/* Starts a request (trailers 0) or trailer block (1). */
void h2_head_init(h2_head *h, int trailers);
/* A trailer block follows the request's: no pseudo-fields from here on;
 * :method, :path and content-length stay. */
void h2_head_trailers(h2_head *h);
/* One decoded field (its syntax_ok and memo as h2_hpack_dec says). H2H_OK, H2H_MALFORMED, or H2H_NOMEM. */
int h2_head_field(h2_head *h, const hpack_field *f);
/* The block ended: a request must have had :method, :scheme and :path
 * (CONNECT, which we do not serve, is malformed here too). */
int h2_head_finish(const h2_head *h);
const char *h2_head_method(const h2_head *h, size_t *len);
const char *h2_head_path(const h2_head *h, size_t *len);
void h2_head_free(h2_head *h);

#endif
