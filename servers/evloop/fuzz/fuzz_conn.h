/* fuzz_conn: one connection of the real server -- conn.c, h1.c, h2*.c and
 * the routes -- driven over an in-memory transport, with no socket. Shared
 * by the conn_h1 and conn_h2 fuzz targets.
 *
 * Input layout: two knob bytes, then the bytes the peer sends.
 *   byte 0: bits 0-1  how the peer ends: 0 EOF; 1 every timeout fires;
 *                     2 graceful server shutdown; 3 timeout, then EOF
 *           bits 2-3  how the peer reads our output: bit 2 short writes,
 *                     bit 3 every other writev is EAGAIN
 *           bits 4-5  limits: the defaults; --max-body 0; tight ones
 *                     (--max-body 100, --h2-conn-memory 300, header list
 *                     256, 1 CONTINUATION, reset and flood buckets of 2
 *                     and 4 that never refill); --max-body 10000
 *           bit 6     (conn_h2) an empty SETTINGS frame after the preface
 *           bit 7     the peer reads nothing until its input is all sent
 *                     (backpressure), then reads everything
 *   byte 1: low nibble k: reads hand out 1..2^k bytes each (k = 15: up to
 *           the whole 32 KiB buffer); high nibble seeds the size sequence.
 */
#ifndef FUZZ_CONN_H
#define FUZZ_CONN_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_CONN_KNOBS 2

/* Sets up the server and its loop (once; fuzz_conn_run does it too), from
 * LLVMFuzzerInitialize so that the first input's run allocates no more than
 * any other's (libFuzzer runs an input again when its mallocs and frees
 * differ, looking for a leak). */
void fuzz_conn_init(void);

/* Runs one connection: prefix (may be empty) and then data[KNOBS..n) are
 * what the peer sends. Every iteration ends with the connection closed and
 * all its memory freed. */
void fuzz_conn_run(const uint8_t *data, size_t n, const char *prefix,
                   size_t prefix_len, int prefix_settings);

#endif
