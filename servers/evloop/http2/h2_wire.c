#include "h2_wire.h"

#include <string.h>

int h2_preface_check(const char *buf, size_t len) {
    size_t n = len < H2_PREFACE_LEN ? len : H2_PREFACE_LEN;
    if (memcmp(buf, H2_PREFACE, n) != 0) return H2_PREFACE_NO;
    return n == H2_PREFACE_LEN ? H2_PREFACE_YES : H2_PREFACE_PARTIAL;
}

static int b64url_value(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '-') return 62;
    if (ch == '_') return 63;
    return -1;
}

ssize_t h2_base64url_decode(const char *in, size_t len, uint8_t *out,
                            size_t cap) {
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;

    /* Some clients pad although RFC 7540 3.2.1 says not to; padding carries
     * no data, so accept it at the end only. */
    while (len && in[len - 1] == '=') len--;
    if (len % 4 == 1) return -1; /* 6 bits cannot make a byte */
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value(in[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == cap) return -1;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return (ssize_t)n;
}
