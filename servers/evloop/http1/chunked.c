#include "chunked.h"

#include <string.h>

enum {
    S_SIZE_FIRST,  /* first hex digit of chunk-size */
    S_SIZE,        /* more hex digits, or what ends the size */
    S_SIZE_WS,     /* BWS between the size and ';' */
    S_EXT,         /* chunk-ext, skipped up to CR */
    S_SIZE_LF,     /* LF ending the chunk-size line */
    S_DATA,        /* chunk-data */
    S_DATA_CR,     /* CRLF after chunk-data */
    S_DATA_LF,
    S_TRAILER_START, /* start of a trailer line or the final CRLF */
    S_TRAILER,       /* inside a trailer field line */
    S_TRAILER_LF,
    S_END_LF,
    S_DONE
};

void chunked_init(chunked_decoder *d, uint64_t max_body) {
    memset(d, 0, sizeof(*d));
    d->state = S_SIZE_FIRST;
    d->max_body = max_body;
}

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Bytes allowed inside skipped extension / trailer text: visible, SP, HTAB
 * and obs-text; never NUL, a bare LF or other controls. */
static int textbyte(unsigned char c) {
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

ssize_t chunked_decode(chunked_decoder *d, const char *src, size_t len,
                       char *dst, size_t *dst_len) {
    const unsigned char *in = (const unsigned char *)src;
    size_t i = 0, out = 0;
    int v;

    *dst_len = 0;
    if (d->state == S_DONE) return CHUNKED_ERROR;
    while (i < len) {
        unsigned char c = in[i];
        switch (d->state) {
        case S_SIZE_FIRST:
        case S_SIZE:
            if ((v = hexval(c)) >= 0) {
                if (d->remaining > (UINT64_MAX >> 4)) goto error;
                d->remaining = (d->remaining << 4) | (uint64_t)v;
                /* Refuse as soon as the size is known, before any data. */
                if (d->remaining > d->max_body - d->total) goto too_large;
                d->state = S_SIZE;
            } else if (d->state == S_SIZE_FIRST) {
                goto error;
            } else if (c == ';') {
                d->state = S_EXT;
                d->skipped = 0;
            } else if (c == ' ' || c == '\t') {
                d->state = S_SIZE_WS;
            } else if (c == '\r') {
                d->state = S_SIZE_LF;
            } else {
                goto error;
            }
            i++;
            break;
        case S_SIZE_WS:
            if (c == ';') {
                d->state = S_EXT;
                d->skipped = 0;
            } else if (c == '\r') {
                d->state = S_SIZE_LF;
            } else if (c != ' ' && c != '\t') {
                goto error;
            }
            i++;
            break;
        case S_EXT:
            if (c == '\r') d->state = S_SIZE_LF;
            else if (!textbyte(c) || ++d->skipped > CHUNKED_MAX_EXT_LINE)
                goto error;
            i++;
            break;
        case S_SIZE_LF:
            if (c != '\n') goto error;
            i++;
            if (d->remaining == 0) {
                d->state = S_TRAILER_START;
                d->skipped = 0;
            } else {
                d->state = S_DATA;
            }
            break;
        case S_DATA: {
            size_t n = len - i;
            if ((uint64_t)n > d->remaining) n = (size_t)d->remaining;
            /* memmove: dst may alias src (in-place decoding). */
            memmove(dst + out, in + i, n);
            out += n;
            i += n;
            d->remaining -= n;
            d->total += n;
            if (d->remaining == 0) d->state = S_DATA_CR;
            break;
        }
        case S_DATA_CR:
            if (c != '\r') goto error;
            d->state = S_DATA_LF;
            i++;
            break;
        case S_DATA_LF:
            if (c != '\n') goto error;
            d->state = S_SIZE_FIRST;
            i++;
            break;
        case S_TRAILER_START:
            if (c == '\r') {
                d->state = S_END_LF;
            } else if (c == ' ' || c == '\t' || !textbyte(c) || c == ':') {
                /* obs-fold or an empty field name */
                goto error;
            } else {
                d->state = S_TRAILER;
                if (++d->skipped > CHUNKED_MAX_TRAILERS) goto error;
            }
            i++;
            break;
        case S_TRAILER:
            if (c == '\r') d->state = S_TRAILER_LF;
            else if (!textbyte(c) || ++d->skipped > CHUNKED_MAX_TRAILERS)
                goto error;
            i++;
            break;
        case S_TRAILER_LF:
            if (c != '\n') goto error;
            d->state = S_TRAILER_START;
            i++;
            break;
        case S_END_LF:
            if (c != '\n') goto error;
            i++;
            d->state = S_DONE;
            *dst_len = out;
            return (ssize_t)i;
        default:
            goto error;
        }
    }
    *dst_len = out;
    return CHUNKED_NEED_MORE;

error:
    *dst_len = out;
    return CHUNKED_ERROR;
too_large:
    *dst_len = out;
    return CHUNKED_TOO_LARGE;
}
