/* json: validates a JSON text (RFC 8259) and writes it back out compactly
 * in one pass, without building a tree and without allocating per value.
 *
 * - One value of any type, with optional whitespace around it.
 * - Arrays and objects nest at most JSON_MAX_DEPTH deep (JSON_TOO_DEEP).
 * - Numbers are checked against the grammar and copied as sent: no float
 *   round trip, no precision lost, no range limit.
 * - Strings: escapes are decoded (\u surrogate pairs joined; a lone
 *   surrogate is invalid), raw bytes must be well-formed UTF-8, control
 *   characters must be escaped. Each string is then re-escaped the
 *   canonical json_str way.
 * - A repeated name in an object keeps only its last member
 *   (json_members).
 *
 * The output is never longer than the input (whitespace is dropped, every
 * escape is written in at most as many bytes as it was read from), so
 * `out` is reserved once and the parser writes without bounds checks. */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>

#include "http/sbuf.h"
#include "json_str.h"

#define JSON_MAX_DEPTH 64

/* Appends the re-serialization of in[0..n) to out. `work` is scratch (its
 * contents are kept; it is only used past its len). JSON_OK, JSON_INVALID,
 * JSON_TOO_DEEP or JSON_NOMEM; on error out->len is unchanged. */
int json_reserialize(const char *in, size_t n, sbuf *out, sbuf *work);

#endif
