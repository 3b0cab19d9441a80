/* http1_parser: a stateless, zero-copy HTTP/1.x request-head parser.
 *
 * In the style of picohttpparser: the caller owns the bytes, the parser only
 * records pointers and lengths into them. Being stateless, a partial head is
 * handled by calling again with more bytes (same start); the answer for the
 * complete head never depends on how it was split. */
#ifndef HTTP1_PARSER_H
#define HTTP1_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define H1_MAX_HEADERS 64

#define H1_PARSE_ERROR (-1)
#define H1_PARSE_NEED_MORE (-2)

typedef struct h1_header {
    const char *name;
    size_t name_len;
    const char *value; /* OWS-trimmed */
    size_t value_len;
} h1_header;

typedef struct h1_request {
    const char *method;
    size_t method_len;
    const char *target; /* request-target as sent */
    size_t target_len;
    const char *path; /* target up to '?' */
    size_t path_len;
    const char *query; /* after '?'; NULL when there is no '?' */
    size_t query_len;
    int major, minor; /* single digits; the caller decides what it serves */
    size_t num_headers;
    h1_header headers[H1_MAX_HEADERS];
} h1_request;

/* Returns the length of the head (request line, fields, empty line) when
 * complete, H1_PARSE_NEED_MORE when buf is a valid prefix, H1_PARSE_ERROR on
 * malformed input (bad tokens, bare CR/LF, NUL/CTL, space before ':',
 * obs-fold, more than H1_MAX_HEADERS fields). */
ssize_t h1_parse_request(const char *buf, size_t len, h1_request *req);

/* The fields that change how the message is framed or the connection is
 * handled, pulled out of the header list in one pass. */
typedef struct h1_semantics {
    int has_content_length;
    uint64_t content_length;
    int has_transfer_encoding;
    int chunked;
    int conn_close;
    int conn_keep_alive;
    int conn_upgrade;
    int expect_continue;
    int host_count;
    const char *upgrade; /* Upgrade header value, NULL if absent */
    size_t upgrade_len;
} h1_semantics;

#define H1_SEM_OK 0
#define H1_SEM_BAD_REQUEST (-1)     /* answer 400 */
#define H1_SEM_NOT_IMPLEMENTED (-2) /* unsupported transfer coding: 501 */

/* Content-Length must be digits only; repeats must agree; overflow is an
 * error. Transfer-Encoding may only be exactly "chunked", and never together
 * with Content-Length (request smuggling). An HTTP/1.1 request needs exactly
 * one Host field, an HTTP/1.0 one at most one (RFC 9112 3.2). */
int h1_request_semantics(const h1_request *req, h1_semantics *sem);

/* True when the comma-separated header value contains token (ASCII
 * case-insensitive, optional whitespace around elements): Upgrade,
 * Connection. */
int h1_has_token(const char *value, size_t len, const char *token);

#endif
