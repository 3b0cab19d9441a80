/* h2_wire: the byte-level pieces of HTTP/2 needed before any frame is read
 * -- recognising the client connection preface (to pick the handler) and
 * decoding the HTTP2-Settings of an Upgrade request (RFC 7540 3.2). Pure
 * functions, so they are unit-tested without a socket. */
#ifndef H2_WIRE_H
#define H2_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN (sizeof(H2_PREFACE) - 1)

enum {
    H2_PREFACE_NO,      /* not HTTP/2 prior knowledge */
    H2_PREFACE_PARTIAL, /* a prefix of the preface: wait for more bytes */
    H2_PREFACE_YES      /* the complete preface */
};

/* Classifies the first bytes of a connection. An empty buffer is PARTIAL. */
int h2_preface_check(const char *buf, size_t len);

/* Decodes base64url without padding (the HTTP2-Settings value; trailing
 * '=' is tolerated). Returns the decoded length, or -1 if the input is not
 * base64url or would not fit in cap bytes. */
ssize_t h2_base64url_decode(const char *in, size_t len, uint8_t *out,
                            size_t cap);

#endif
