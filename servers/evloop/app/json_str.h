/* json_str: JSON string literals on output. Shared by the JSON parser (which
 * re-escapes what it decoded) and by routes that serialize their own data,
 * so that every string we send is escaped the same, canonical way:
 * '"' and '\' escaped, control characters as \b \f \n \r \t or \u00XX, '/'
 * and everything else (DEL, all non-ASCII) as raw UTF-8. */
#ifndef JSON_STR_H
#define JSON_STR_H

#include <stddef.h>

#include "http/sbuf.h"

/* Results shared by the json_* modules. */
enum { JSON_OK = 0, JSON_INVALID = -1, JSON_TOO_DEEP = -2, JSON_NOMEM = -3 };

/* 1 for the bytes that stand for themselves inside a string literal (0x20..
 * 0x7F without '"' and '\'); loops copy runs of them without branching on
 * each case. */
extern const unsigned char json_plain[256];

/* Writes ASCII byte c (< 0x80) as it appears inside a string literal: 1, 2
 * or 6 bytes. Returns the new write position. */
char *json_escape_ascii(char *o, unsigned char c);

/* Appends s[0..n) as a quoted string literal. JSON_INVALID if s is not
 * well-formed UTF-8 (JSON text must be), else JSON_OK or JSON_NOMEM. */
int json_put_string(sbuf *out, const char *s, size_t n);

#endif
