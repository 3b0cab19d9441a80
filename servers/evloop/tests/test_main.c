#include <stdlib.h>

#include "test.h"

static int passed, failed;

void t_case(const char *suite, const char *name, int ok, const char *why) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL [%s] %s: %s\n", suite, name, why ? why : "");
}

int main(void) {
    test_parser();
    test_chunked();
    test_routes();
    test_h2_wire();
    test_gather();
    test_quic_table();
    test_quic_mem();
    test_tls();
    test_query();
    test_json();
    test_json_fuzz();
    test_http_status();
    test_protocols();
    test_h2_frame();
    test_h2_hpack();
    test_h2_head();
    test_h2_hpack_dec();
    test_h2_settings();
    test_conn_h1();
    test_conn_h2();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
