/* The protocol table: the ALPN list TLS offers comes from it, in its order;
 * exactly one entry is the fallback; the h2 row claims the preface. */
#include <string.h>

#include "protocols.h"
#include "test.h"

void test_protocols(void) {
    {
        T_BEGIN;
        unsigned char out[64];
        size_t n = protocols_alpn_wire(protocols_table, protocols_count, out,
                                       sizeof(out));
        T_CHECK(n == 12 && memcmp(out, "\x02h2\x08http/1.1", 12) == 0);
        T_CHECK(protocols_alpn_wire(protocols_table, protocols_count, out,
                                    11) == 0);
        T_END("protocols", "ALPN wire list in the table's order, bounded");
    }
    {
        T_BEGIN;
        int fallbacks = 0;
        const protocol *h2 = NULL;
        for (size_t i = 0; i < protocols_count; i++) {
            fallbacks += protocols_table[i].fallback != 0;
            T_CHECK(protocols_table[i].handler != NULL);
            if (protocols_table[i].sniff) h2 = &protocols_table[i];
        }
        T_CHECK(fallbacks == 1);
        T_CHECK(h2 && strcmp(h2->alpn, "h2") == 0);
        if (h2) {
            static const char pre[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
            T_CHECK(h2->sniff(pre, 24) == PROTO_SNIFF_YES);
            T_CHECK(h2->sniff(pre, 5) == PROTO_SNIFF_MAYBE);
            T_CHECK(h2->sniff("GET / HTTP/1.1\r\n", 16) == PROTO_SNIFF_NO);
            T_CHECK(strcmp(h2->upgrade_token, "h2c") == 0 && h2->upgrade);
        }
        T_END("protocols", "one fallback; h2 by preface and by Upgrade: h2c");
    }
}
