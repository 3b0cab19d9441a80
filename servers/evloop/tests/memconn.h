/* memconn: an in-memory transport and a scripted peer, for driving whole
 * connections of the real server (conn.c, h1.c, h2*.c, the routes) in unit
 * tests without a socket.
 *
 * A memconn_env is what server.c keeps -- an event loop and a conn_set with
 * its conn_config -- without the listener, the signals or the sweep timer.
 * Each connection sits on an eventfd, which is always readable and
 * writable, so the loop has its event ready on every turn; the config's
 * setup hook swaps the socket transport for this one. memconn_run turns
 * the loop (aeProcessEvents, whose before-sleep hook flushes output as the
 * server's does) until no connection makes progress.
 *
 * The peer (memconn) is a script: the bytes it sends (appended at any
 * time), how reads hand them out (chunks of at most `chunk` bytes, down to
 * 1), whether EOF follows, and how it takes our output (all of it, short
 * writes, every other writev EAGAIN, or nothing at all). What the server
 * writes lands in a growable buffer. The transport checks the writev
 * contract on the way: no empty writev, both ends of every iovec readable
 * (ASan), and bytes not taken offered again unchanged.
 *
 * Deterministic: no real socket, Date frozen at the epoch; timeouts fire
 * only when a test calls memconn_timeout with a clock of its choosing. */
#ifndef EVLOOP_MEMCONN_H
#define EVLOOP_MEMCONN_H

#include <stddef.h>
#include <stdint.h>

#include "loop/ae.h"
#include "net/conn.h"

enum {
    MEMCONN_WRITE_ALL,    /* writev takes everything offered */
    MEMCONN_WRITE_SHORT,  /* takes 1..short_max bytes (pseudo-random) */
    MEMCONN_WRITE_EAGAIN, /* every other writev fails with EAGAIN */
    MEMCONN_WRITE_STALL   /* every writev fails with EAGAIN */
};

typedef struct memconn_buf {
    char *data;
    size_t len, cap;
} memconn_buf;

struct memconn_env;

typedef struct memconn {
    /* ---- the script (set before or between runs) ---- */
    memconn_buf in; /* everything the peer has sent so far */
    size_t in_pos;  /* how much of it the server has read */
    size_t chunk;   /* most bytes one read returns; 0: as many as fit */
    int eof;        /* once in is read, reads return 0 (else EAGAIN) */
    int write_mode; /* MEMCONN_WRITE_* */
    size_t short_max; /* MEMCONN_WRITE_SHORT: 0 means 16384 */
    uint32_t rng;

    /* ---- what the peer saw ---- */
    memconn_buf out;   /* every byte the server wrote, in order */
    unsigned reads;    /* read calls */
    unsigned writevs;  /* writev calls that took bytes */
    unsigned eofs;     /* reads that returned 0 */
    int shut_wr;       /* the server shut its write side */
    int closed;        /* the connection is gone (transport close hook) */
    int violations;    /* writev contract broken (see above) */
    char violation[160];

    /* ---- internal ---- */
    struct memconn_env *env;
    conn *c;
    unsigned calls; /* every writev call */
    unsigned char pend[64]; /* start of what the last writev left */
    size_t pend_len;
} memconn;

typedef struct memconn_env {
    aeEventLoop *el;
    conn_set set;
    conn_config cfg;
    memconn *opening; /* the peer the next conn_create attaches to */
    unsigned long long progress; /* bytes read/written, EOFs, closes */
    long turns;
    int spun; /* memconn_run gave up: progress without end */
} memconn_env;

/* A config as the command line makes it (cli_parse: the defaults of
 * cli_defaults plus the values derived from them), with `flags` (a
 * NULL-terminated list such as {"--max-body", "100", NULL}, or NULL).
 * Exits on a flag the command line does not know. */
void memconn_config(conn_config *cfg, const char *const *flags);

/* Sets up the loop and the connection set; cfg NULL: the defaults. Also
 * freezes Date at the epoch and readies the routes. 0 or -1. */
int memconn_env_init(memconn_env *e, const conn_config *cfg);
/* Closes every connection left and frees the loop. Peers outlive it. */
void memconn_env_free(memconn_env *e);

void memconn_init(memconn *p);
void memconn_free(memconn *p);

/* Opens a server connection whose peer is p. NULL on failure. */
conn *memconn_open(memconn_env *e, memconn *p);

/* The peer sends more bytes (read by the server on the next turns). */
void memconn_send(memconn *p, const void *data, size_t n);
void memconn_send_str(memconn *p, const char *s);

/* Turns the loop until nothing moves for a few turns or no connection is
 * left. Returns the turns taken, or -1 (and sets e->spun) past a bound
 * no input can need. */
long memconn_run(memconn_env *e);

/* Now on the loop's clock, plus ms. */
long long memconn_now(const memconn_env *e, long long plus_ms);
/* conn_check_timeout on p's connection with that clock, if it is open,
 * as the server's sweep would. */
void memconn_timeout(memconn *p, long long now);
/* conn_check_timeout with a clock past every deadline. */
void memconn_expire(memconn *p);

/* The output as a C string is not safe (binary); these help assertions. */
int memconn_out_has(const memconn *p, const char *s);
size_t memconn_out_count(const memconn *p, const char *s);

#endif
