/* conn_h2: arbitrary HTTP/2 frames through one whole connection -- the h2
 * handler and its codec (the frame state machine, HPACK decoding, streams,
 * bodies and --max-body, 413 and resets, flow control and the waiting
 * streams, GOAWAY on timeout and shutdown), the routes
 * and the output queue -- over an in-memory transport (fuzz_conn.c). The
 * harness sends the client preface itself (and, if knob bit 6 says so, an
 * empty SETTINGS frame), so every input is frames.
 * Input: two knob bytes, then the frames after the preface. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_conn.h"
#include "http2/h2_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_conn_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_conn_run(data, size, H2_PREFACE, H2_PREFACE_LEN, 1);
    return 0;
}
