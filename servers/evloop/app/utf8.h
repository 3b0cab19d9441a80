/* utf8: well-formedness checks and encoding (Unicode 15, table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF). JSON text must be
 * UTF-8 (RFC 8259 8.1), and so must every string we serialize. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the well-formed sequence at p, or 0 if it is malformed
 * or cut off by the end of the n available bytes (n >= 1). */
size_t utf8_seq(const unsigned char *p, size_t n);
/* Whether all of s[0..n) is well-formed. */
int utf8_valid(const char *s, size_t n);
/* Writes the 1..4 bytes of code point cp (not a surrogate, <= U+10FFFF);
 * returns how many. */
size_t utf8_encode(uint32_t cp, char *o);

#endif
