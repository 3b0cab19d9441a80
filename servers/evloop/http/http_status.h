/* http_status: the one table of HTTP status codes, shared by HTTP/1 and
 * HTTP/2, and the decimal formatter both use for numbers on the wire.
 *
 * A route may answer any code from 100 to 599: the registered ones (IANA's
 * HTTP Status Code Registry) carry their reason phrase, others an empty one
 * (RFC 9112 4: the phrase is optional). So a new route with a new code is a
 * change in the routes alone. */
#ifndef HTTP_STATUS_H
#define HTTP_STATUS_H

#include <stddef.h>
#include <stdint.h>

/* Codes outside this range are the server's mistake; they are sent as 500. */
#define HTTP_STATUS_MIN 100
#define HTTP_STATUS_MAX 599

/* The code to send for what a route or handler asked for. */
int http_status_valid(int code);
/* The reason phrase, *len bytes (not terminated): "Created" for 201, empty
 * for a code nobody registered. */
const char *http_status_reason(int code, size_t *len);
/* The three digits of a valid code, without a terminator. */
void http_status_digits(int code, char out[3]);
/* The body of a short text/plain error answer: "Not Found\n". Static. */
const char *http_status_error_body(int code, size_t *len);

/* Writes v in decimal at p (at most 20 bytes, no terminator); returns the
 * number of bytes written. */
size_t fmt_u64(char *p, uint64_t v);

#endif
