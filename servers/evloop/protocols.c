#include "protocols.h"

#include <string.h>

#include "http1/h1.h"
#include "http2/h2.h"
#include "http2/h2_wire.h"

/* Prior-knowledge h2 (RFC 9113 3.3) starts with the client preface. */
static int sniff_h2(const char *buf, size_t len) {
    switch (h2_preface_check(buf, len)) {
    case H2_PREFACE_YES: return PROTO_SNIFF_YES;
    case H2_PREFACE_PARTIAL: return PROTO_SNIFF_MAYBE;
    default: return PROTO_SNIFF_NO;
    }
}

/* h2 first: over TLS the server's preference decides when a client offers
 * both. HTTP/1.x is what anything else is taken to be. */
const protocol protocols_table[] = {
    {
        .alpn = "h2",
        .handler = &h2_handler,
        .sniff = sniff_h2,
        .upgrade_token = "h2c",
        .upgrade_header = "HTTP2-Settings",
        .upgrade = h2_upgrade,
    },
    {
        .alpn = "http/1.1",
        .handler = &h1_handler,
        .fallback = 1,
    },
};
const size_t protocols_count = sizeof(protocols_table) /
                               sizeof(protocols_table[0]);

size_t protocols_alpn_wire(const protocol *table, size_t n,
                           unsigned char *out, size_t cap) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = table[i].alpn ? strlen(table[i].alpn) : 0;
        if (!k) continue;
        if (k > 255 || len + 1 + k > cap) return 0;
        out[len++] = (unsigned char)k;
        memcpy(out + len, table[i].alpn, k);
        len += k;
    }
    return len;
}
