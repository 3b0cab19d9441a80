/* fuzz_conn: the whole-connection harness (see fuzz_conn.h).
 *
 * One server and one event loop live for the whole fuzzing process. Each
 * iteration opens one connection on an eventfd -- epoll accepts it, and it
 * stays readable and writable, so the loop always has the connection's
 * event ready -- and conn_config.setup installs the in-memory
 * transport below in place of the socket. The loop is then turned by hand
 * (aeProcessEvents, whose before-sleep hook flushes output exactly as the
 * server's does) until the connection makes no more progress; the knob's
 * ending runs (EOF, timeouts, shutdown); and whatever is left is closed.
 *
 * Deterministic: no socket, no sweep timer -- timeouts fire only when the
 * harness calls conn_check_timeout with a made-up clock far in the future --
 * and the Date header is frozen at the epoch.
 *
 * Checked beyond "no sanitizer report":
 *   - the ends of every iovec handed to writev are read (ASan: no segment
 *     points into freed or foreign memory); what a short or failed writev
 *     did not take is offered again unchanged; and the output starts as its
 *     protocol says: "HTTP/1.1 " for HTTP/1, a SETTINGS frame on stream 0
 *     for HTTP/2 (RFC 9113 3.4);
 *   - after every loop turn the connection's bookkeeping holds: input
 *     window inside rbuf, segment list inside its array, obuf segments
 *     inside obuf, out_pending equal to the unwritten segment bytes, and
 *     no output buffer held once the queue is empty;
 *   - liveness: while the peer is still sending and reading, the connection
 *     never sits idle with unread input and no output (it would hang until
 *     a timeout), and a connection never spins without end;
 *   - every iteration closes its connection (the server's count is 0). */
#include "fuzz_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "app/app.h"
#include "cli.h"
#include "http/routes.h"
#include "http2/h2_wire.h"
#include "loop/ae.h"
#include "net/conn.h"
#include "net/date_cache.h"
#include "net/gather.h"
#include "net/server.h"

/* Far more loop turns than any input can need (each turn reads or writes
 * at least one byte while there is progress): more is a livelock. */
#define MAX_TURNS 200000
/* Turns without progress after which the connection is considered idle. */
#define IDLE_TURNS 3

enum { END_EOF, END_TIMEOUT, END_SHUTDOWN, END_TIMEOUT_EOF };

static struct {
    const uint8_t *in;
    size_t len, pos;
    uint32_t rng;
    size_t max_chunk;
    int eof;        /* reads at the end return 0 (else EAGAIN) */
    int short_writes, eagain_writes, stalled;
    unsigned calls;
    unsigned long long progress; /* bytes read or written, EOFs seen */
    unsigned char head[16];      /* the first output bytes */
    size_t head_len;
    unsigned char pend[64]; /* the start of what writev did not take */
    size_t pend_len;
} fz;
/* Where the bytes read from each segment go, so that no read is optimized
 * away (and ASan checks each one). */
static volatile unsigned sink;

/* The connection set as server.c keeps one, without a listener. */
static aeEventLoop *loop;
static conn_set set;
static conn_config cfg_now;
/* The command line's defaults, and tight limits (see limits_for). */
static server_config cfg_default, cfg_tight;
/* FUZZ_CONN_TRACE=1 in the environment: the output goes to stderr, for a
 * person replaying one input (scripts/fuzz.sh --replay). */
static int trace;
static long long fake_now;

static uint32_t rng(void) {
    uint32_t x = fz.rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return fz.rng = x;
}

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "fuzz_conn: %s:%d: check failed: %s\n",         \
                    __FILE__, __LINE__, #cond);                             \
            abort();                                                        \
        }                                                                   \
    } while (0)

/* ---- the in-memory transport ---- */

static ssize_t fz_read(conn *c, char *buf, size_t len) {
    (void)c;
    if (fz.pos == fz.len) {
        if (fz.eof) {
            fz.progress++;
            return 0;
        }
        errno = EAGAIN;
        return -1;
    }
    size_t n = 1 + rng() % fz.max_chunk;
    if (n > fz.len - fz.pos) n = fz.len - fz.pos;
    if (n > len) n = len;
    memcpy(buf, fz.in + fz.pos, n);
    fz.pos += n;
    fz.progress += n;
    return (ssize_t)n;
}

static ssize_t fz_writev(conn *c, const struct iovec *iov, int iovcnt) {
    unsigned char now[sizeof(fz.pend)];
    size_t total = 0;
    (void)c;
    for (int i = 0; i < iovcnt; i++) {
        total += iov[i].iov_len;
        /* Read both ends of every segment offered: a segment must be valid
         * memory from the moment it is queued (ASan poisons the whole of a
         * freed block). */
        const unsigned char *p = iov[i].iov_base;
        if (iov[i].iov_len) sink += p[0] + p[iov[i].iov_len - 1];
    }
    CHECK(total > 0);
    /* What was offered and not taken comes again, unchanged. */
    size_t got = iov_copy(iov, iovcnt, 0, now, fz.pend_len);
    CHECK(got == fz.pend_len && !memcmp(now, fz.pend, got));

    fz.calls++;
    size_t take = total;
    if (fz.stalled || (fz.eagain_writes && (fz.calls & 1))) take = 0;
    else if (fz.short_writes && total > 1)
        take = 1 + rng() % (total < 16384 ? total : 16384);
    if (fz.head_len < sizeof(fz.head))
        fz.head_len += iov_copy(iov, iovcnt, 0, fz.head + fz.head_len,
                                  take < sizeof(fz.head) - fz.head_len
                                      ? take
                                      : sizeof(fz.head) - fz.head_len);
    fz.pend_len = iov_copy(iov, iovcnt, take, fz.pend, sizeof(fz.pend));
    if (trace) {
        size_t left = take;
        for (int i = 0; i < iovcnt && left; i++) {
            size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
            fwrite(iov[i].iov_base, 1, k, stderr);
            left -= k;
        }
    }
    if (!take) {
        errno = EAGAIN;
        return -1;
    }
    fz.progress += take;
    return (ssize_t)take;
}

static void fz_shutdown_write(conn *c) { (void)c; }

static const transport fz_transport = {
    .read = fz_read,
    .writev = fz_writev,
    .shutdown_write = fz_shutdown_write,
};

static int fz_setup(conn *c, void *arg) {
    (void)arg;
    c->tp = &fz_transport;
    return 0;
}

/* ---- checks ---- */

static void check_conn(const conn *c) {
    CHECK(c->rstart <= c->rend && c->rend <= c->rcap);
    CHECK(c->seg_head <= c->nsegs && c->nsegs <= CONN_MAX_SEGS);
    CHECK(c->olen <= c->ocap);
    /* Buffers are held only while something is in them. */
    if (!c->rbuf) CHECK(c->rstart == 0 && c->rend == 0);
    if (!c->segs) CHECK(c->nsegs == 0 && c->out_pending == 0);
    if (!c->obuf) CHECK(c->olen == 0);
    if (c->out_pending == 0) CHECK(!c->obuf && !c->segs);
    size_t pending = 0;
    for (int i = c->seg_head; i < c->nsegs; i++) {
        const out_seg *sg = &c->segs[i];
        if (!sg->ptr) CHECK(sg->off + sg->len <= c->olen);
        pending += sg->len;
    }
    if (c->seg_head < c->nsegs) {
        CHECK(c->seg_off <= c->segs[c->seg_head].len);
        pending -= c->seg_off;
    }
    CHECK(pending == c->out_pending);
}

static void check_output_start(int h2) {
    if (fz.head_len < 9) return;
    if (h2) {
        /* length(3) type flags stream(4): SETTINGS, no ACK, stream 0 */
        CHECK(fz.head[3] == 0x04 && fz.head[4] == 0 &&
              !memcmp(fz.head + 5, "\0\0\0\0", 4));
    } else {
        CHECK(!memcmp(fz.head, "HTTP/1.1 ", 9));
    }
}

/* ---- driving the loop ---- */

static void before_sleep(aeEventLoop *el, void *data) {
    (void)el;
    conn_set_flush(data);
}

/* Never let epoll_wait block: the connection may watch nothing at all. */
static long long guard_timer(aeEventLoop *el, long long id, void *data) {
    (void)el;
    (void)id;
    (void)data;
    return 0;
}

/* A configuration as the command line makes it (exits on a flag it does
 * not know, which would show at once). */
static void config(server_config *cfg, char **flags) {
    char prog[] = "fuzz", port[] = "0";
    char *argv[32] = {prog, port};
    int argc = 2;
    while (*flags && argc < 31) argv[argc++] = *flags++;
    argv[argc] = NULL;
    cli_args a;
    cli_parse(argc, argv, 0, &a);
    *cfg = a.cfg;
    cfg->conn.setup = fz_setup;
}

void fuzz_conn_init(void) {
    static int done;
    if (done) return;
    done = 1;
    /* The defaults, so that limits added to the command line apply here;
     * and limits so tight that short inputs reach them. Rates of 0 refill
     * nothing: the buckets do not depend on the clock. */
    char *none[] = {NULL};
    char *tight[] = {"--max-body", "100", "--h2-conn-memory", "300",
                     "--h2-max-header-list", "256",
                     "--h2-max-continuations", "1", "--h2-reset-burst", "2",
                     "--h2-reset-rate", "0", "--h2-flood-burst", "4",
                     "--h2-flood-rate", "0", NULL};
    config(&cfg_default, none);
    config(&cfg_tight, tight);
    app_init();
    date_cache_update(0);
    /* server_init without the socket, the signalfd and the timers. */
    cfg_now = cfg_default.conn;
    trace = getenv("FUZZ_CONN_TRACE") && *getenv("FUZZ_CONN_TRACE") == '1';
    loop = aeCreateEventLoop(1024, NULL);
    CHECK(loop);
    conn_set_init(&set, loop, &cfg_now);
    aeSetBeforeSleepProc(loop, before_sleep, &set);
    CHECK(aeCreateTimeEvent(loop, 0, guard_timer, NULL) > 0);
    fake_now = 1LL << 40;
}

/* Turns the loop until nothing moves for IDLE_TURNS turns or no
 * connection is left. */
static void run(void) {
    int idle = 0;
    for (long turns = 0; set.n && idle < IDLE_TURNS; turns++) {
        CHECK(turns < MAX_TURNS);
        unsigned long long before = fz.progress;
        aeProcessEvents(loop);
        for (conn *c = set.all; c; c = c->next) check_conn(c);
        idle = fz.progress == before ? idle + 1 : 0;
    }
}

/* Every deadline the connection has is in the past. */
static void fire_timeouts(void) {
    fake_now += 1LL << 36;
    for (conn *c = set.all, *next; c; c = next) {
        next = c->next;
        conn_check_timeout(c, fake_now);
    }
}

static void shutdown_all(void) {
    conn_set_begin_shutdown(&set);
}

void fuzz_conn_run(const uint8_t *data, size_t n, const char *prefix,
                   size_t prefix_len, int prefix_settings) {
    static const char settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    if (n < FUZZ_CONN_KNOBS) return;
    fuzz_conn_init();

    unsigned k0 = data[0], k1 = data[1];
    if (trace) fprintf(stderr, "[fuzz_conn: %zu input bytes]\n", n);
    /* Limits: defaults; --max-body 0; the tight set; --max-body 10000. */
    cfg_now = (k0 >> 4 & 3) == 2 ? cfg_tight.conn : cfg_default.conn;
    if ((k0 >> 4 & 3) == 1) cfg_now.max_body = 0;
    if ((k0 >> 4 & 3) == 3) cfg_now.max_body = 10000;

    /* What the peer sends: prefix [+ SETTINGS] + the rest of the input. */
    size_t extra = prefix_settings && (k0 & 0x40) ? sizeof(settings) : 0;
    size_t body = n - FUZZ_CONN_KNOBS;
    uint8_t *in = malloc(prefix_len + extra + body + 1);
    CHECK(in);
    memcpy(in, prefix, prefix_len);
    memcpy(in + prefix_len, settings, extra);
    memcpy(in + prefix_len + extra, data + FUZZ_CONN_KNOBS, body);

    memset(&fz, 0, sizeof(fz));
    fz.in = in;
    fz.len = prefix_len + extra + body;
    fz.max_chunk = (size_t)1 << (k1 & 15);
    fz.rng = 0x9E3779B9u * ((k1 >> 4) + 1);
    fz.short_writes = k0 >> 2 & 1;
    fz.eagain_writes = k0 >> 3 & 1;
    fz.stalled = k0 >> 7 & 1;
    int h2 = fz.len >= H2_PREFACE_LEN &&
             !memcmp(in, H2_PREFACE, H2_PREFACE_LEN);

    int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC); /* always ready */
    CHECK(fd >= 0);
    conn *c = conn_create(&set, fd);
    if (!c) {
        close(fd);
        free(in);
        return;
    }
    CHECK(set.n == 1);

    /* The peer sends everything; it reads as the knob says. */
    run();
    if (!fz.stalled && fz.pos < fz.len && set.all) {
        /* Idle with input unread: only a closed connection may do that. */
        c = set.all;
        fprintf(stderr,
                "fuzz_conn: stuck with %zu of %zu input bytes unread "
                "(mask %d, out_pending %zu, flags 0x%x)\n",
                fz.len - fz.pos, fz.len, c->mask, c->out_pending, c->flags);
        abort();
    }
    fz.stalled = 0;
    run();
    check_output_start(h2);

    switch (k0 & 3) {
    case END_EOF: fz.eof = 1; break;
    case END_TIMEOUT:
    case END_TIMEOUT_EOF: fire_timeouts(); break;
    case END_SHUTDOWN: shutdown_all(); break;
    }
    run();
    if ((k0 & 3) == END_TIMEOUT_EOF) {
        fz.eof = 1;
        run();
    }
    /* Whatever is left: linger deadlines and GOAWAYs run out, the peer
     * goes away, and the server's shutdown deadline closes the rest. */
    fire_timeouts();
    run();
    fz.eof = 1;
    run();
    check_output_start(h2);
    while (set.all) conn_close(set.all);
    CHECK(set.n == 0);
    set.shutting_down = 0;
    free(in);
}
