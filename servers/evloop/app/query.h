/* query: application/x-www-form-urlencoded query strings, without copies.
 *
 * Parameters are separated by '&'; empty ones ("a=1&&b=2") are skipped, a
 * parameter without '=' has an empty value. Components are decoded with
 * '+' as a space and %XX as the byte XX; a '%' not followed by two hex
 * digits is malformed (the caller answers 400). Decoded bytes are not
 * checked for UTF-8 here: the text route passes them through. */
#ifndef QUERY_H
#define QUERY_H

#include <stddef.h>
#include <sys/types.h>

typedef struct query_param {
    const char *name, *value; /* raw (still encoded) */
    size_t name_len, value_len;
} query_param;

typedef struct query_iter {
    const char *p, *end;
} query_iter;

void query_iter_init(query_iter *it, const char *q, size_t n);
/* The next non-empty parameter: 1, or 0 at the end. */
int query_next(query_iter *it, query_param *out);

/* Decodes src[0..n) into dst, which has room for n bytes (decoding never
 * grows). Returns the decoded length, or -1 for a malformed escape. */
ssize_t query_decode(const char *src, size_t n, char *dst);

/* Whether src[0..n) decodes to exactly the NUL-terminated lit (malformed:
 * no). Needs no buffer: used to look for json=true before any output. */
int query_decoded_eq(const char *src, size_t n, const char *lit);

#endif
