/* chunked: an incremental decoder for the chunked transfer coding
 * (RFC 9112 7.1).
 *
 * The decoder keeps its position in a small state struct, so input may be
 * fed in pieces of any size, down to one byte at a time. Chunk data is
 * copied to dst; since output never exceeds input, dst == src (decoding in
 * place) is allowed. Extensions and trailer fields are checked for bad
 * bytes and skipped. */
#ifndef CHUNKED_H
#define CHUNKED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CHUNKED_ERROR (-1)
#define CHUNKED_NEED_MORE (-2) /* all input consumed, body not finished */
#define CHUNKED_TOO_LARGE (-3) /* decoded size would exceed max_body */

/* Bounds on the bytes we skip, so a peer cannot keep us busy forever on a
 * single "line". */
#define CHUNKED_MAX_EXT_LINE 4096
#define CHUNKED_MAX_TRAILERS 16384

typedef struct chunked_decoder {
    int state;
    uint64_t remaining; /* chunk-size being parsed, then data left in it */
    uint64_t total;     /* decoded bytes so far */
    uint64_t max_body;
    size_t skipped; /* bytes of the current extension / the trailer section */
} chunked_decoder;

void chunked_init(chunked_decoder *d, uint64_t max_body);

/* Decodes src[0..len). Writes chunk data at dst (room for len bytes, or
 * max_body - total, whichever is smaller, is enough) and sets *dst_len to the
 * bytes written. Returns the bytes of src consumed when the body (including
 * the trailer section) is complete -- anything after that belongs to the next
 * message -- or one of the negative codes above. */
ssize_t chunked_decode(chunked_decoder *d, const char *src, size_t len,
                       char *dst, size_t *dst_len);

#endif
