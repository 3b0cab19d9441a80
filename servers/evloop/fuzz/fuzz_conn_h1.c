/* conn_h1: arbitrary bytes from a peer through one whole connection --
 * protocol selection, the HTTP/1 handler (framing, pipelining, bodies,
 * 100-continue, errors, Upgrade: h2c), the routes and the output queue --
 * over an in-memory transport (fuzz_conn.c: input and output split as the
 * knob bytes say; the bookkeeping, output and liveness checks listed there).
 * Input: two knob bytes, then what the client sends. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_conn.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_conn_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_conn_run(data, size, "", 0, 0);
    return 0;
}
