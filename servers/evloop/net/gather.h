/* gather: one contiguous copy of the head of an iovec list.
 *
 * For a transport that must hand a single buffer to a single write call:
 * TLS encrypts what one SSL_write_ex gets, so the segments of a loop turn's
 * output (response heads in obuf, bodies by reference) are copied here
 * first. The copy also stays put while the write is retried, which OpenSSL
 * requires after SSL_ERROR_WANT_WRITE. */
#ifndef GATHER_H
#define GATHER_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct gather {
    char *buf;
    size_t cap;
    size_t len; /* bytes staged; 0 when empty */
} gather;

/* Copies the first bytes of iov, at most max of them, into g, which must be
 * empty. Returns the number of bytes staged (also g->len), or -1 when out
 * of memory (g stays empty). */
ssize_t gather_fill(gather *g, const struct iovec *iov, int iovcnt,
                    size_t max);
/* The staged bytes were written: g is empty again. A buffer that a burst
 * grew beyond keep bytes is released, so idle connections stay small. */
void gather_done(gather *g, size_t keep);
void gather_free(gather *g);

/* Copies up to n bytes of the iovec list, starting at its byte off, to dst;
 * returns how many (fewer when the list ends first). */
size_t iov_copy(const struct iovec *iov, int iovcnt, size_t off, void *dst,
                size_t n);

#endif
