/* conn + h2 through the in-memory transport (memconn.h), with libnghttp2's
 * client session as the peer: it encodes our requests and decodes what the
 * server sends, so every assertion is on frames a real client received
 * (:status, headers, DATA, GOAWAY), after nghttp2 has checked them against
 * the protocol (a frame it rejects fails the case). Prior knowledge and
 * h2c Upgrade from HTTP/1.1. */
#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

#include "memconn.h"
#include "test.h"

#define SUITE "conn_h2"
#define MAX_STREAMS 128

/* ---- the client ---- */

typedef struct cstream {
    int32_t id;
    int status;
    char ctype[64];
    char allow[64];
    long long clen; /* content-length, -1 absent */
    memconn_buf body;
    int closed;
    uint32_t close_err;
    int data_frames;
    /* Request body we send: src[0..len), of which off sent; `held` makes
     * the provider defer (an upload still under way). */
    const char *src;
    size_t len, off;
    int held;
} cstream;

typedef struct client {
    nghttp2_session *ng;
    memconn_env env;
    memconn p;
    size_t out_read; /* bytes of p.out fed to the session */
    cstream st[MAX_STREAMS];
    int nst;
    int goaways;
    uint32_t goaway_err;
    int32_t goaway_last;
    int settings; /* SETTINGS frames (not ACKs) received */
    int first_frame_type; /* -1 before any */
    int recv_error;       /* mem_recv failed: the server broke HTTP/2 */
    int ok;
} client;

static cstream *find(client *cl, int32_t id) {
    for (int i = 0; i < cl->nst; i++)
        if (cl->st[i].id == id) return &cl->st[i];
    return NULL;
}

static void buf_add(memconn_buf *b, const void *p, size_t n) {
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->len < n) cap *= 2;
        b->data = realloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void copy_value(char *dst, size_t cap, const uint8_t *v, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *ud) {
    cstream *s = find(ud, frame->hd.stream_id);
    (void)ng;
    (void)flags;
    if (!s) return 0;
    if (namelen == 7 && !memcmp(name, ":status", 7)) {
        char v[8];
        copy_value(v, sizeof(v), value, valuelen);
        s->status = atoi(v);
    } else if (namelen == 12 && !memcmp(name, "content-type", 12)) {
        copy_value(s->ctype, sizeof(s->ctype), value, valuelen);
    } else if (namelen == 5 && !memcmp(name, "allow", 5)) {
        copy_value(s->allow, sizeof(s->allow), value, valuelen);
    } else if (namelen == 14 && !memcmp(name, "content-length", 14)) {
        char v[24];
        copy_value(v, sizeof(v), value, valuelen);
        s->clen = atoll(v);
    }
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id,
                   const uint8_t *data, size_t len, void *ud) {
    cstream *s = find(ud, id);
    (void)ng;
    (void)flags;
    if (s) buf_add(&s->body, data, len);
    return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *ud) {
    client *cl = ud;
    (void)ng;
    if (cl->first_frame_type < 0) cl->first_frame_type = frame->hd.type;
    switch (frame->hd.type) {
    case NGHTTP2_GOAWAY:
        cl->goaways++;
        cl->goaway_err = frame->goaway.error_code;
        cl->goaway_last = frame->goaway.last_stream_id;
        break;
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) cl->settings++;
        break;
    case NGHTTP2_DATA: {
        cstream *s = find(cl, frame->hd.stream_id);
        if (s) s->data_frames++;
        break;
    }
    default: break;
    }
    return 0;
}

static int on_close(nghttp2_session *ng, int32_t id, uint32_t err, void *ud) {
    cstream *s = find(ud, id);
    (void)ng;
    if (s) {
        s->closed = 1;
        s->close_err = err;
    }
    return 0;
}

static ssize_t read_src(nghttp2_session *ng, int32_t id, uint8_t *buf,
                        size_t length, uint32_t *flags,
                        nghttp2_data_source *source, void *ud) {
    cstream *s = source->ptr;
    (void)ng;
    (void)id;
    (void)ud;
    size_t n = s->len - s->off;
    if (n > length) n = length;
    if (!n && s->held) return NGHTTP2_ERR_DEFERRED;
    memcpy(buf, s->src + s->off, n);
    s->off += n;
    if (s->off == s->len && !s->held) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}


/* A client session and a server connection joined by a memconn. */
static void client_open(client *cl, const char *const *flags) {
    nghttp2_session_callbacks *cbs;
    conn_config cfg;
    memset(cl, 0, sizeof(*cl));
    cl->first_frame_type = -1;
    memconn_config(&cfg, flags);
    memconn_init(&cl->p);
    cl->ok = memconn_env_init(&cl->env, &cfg) == 0 &&
             memconn_open(&cl->env, &cl->p) != NULL;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
    cl->ok = cl->ok && nghttp2_session_client_new(&cl->ng, cbs, cl) == 0;
    nghttp2_session_callbacks_del(cbs);
}

static void client_close(client *cl) {
    memconn_env_free(&cl->env);
    memconn_free(&cl->p);
    nghttp2_session_del(cl->ng);
    for (int i = 0; i < cl->nst; i++) free(cl->st[i].body.data);
}

static int client_settings(client *cl) {
    return nghttp2_submit_settings(cl->ng, NGHTTP2_FLAG_NONE, NULL, 0);
}

/* Moves bytes both ways until neither side has any: the client's frames
 * into the peer's input, the loop turned, the server's output fed to the
 * client session. */
static void pump_rounds(client *cl, int rounds) {
    for (int round = 0; round < rounds && cl->ok; round++) {
        const uint8_t *d;
        ssize_t n;
        size_t sent = 0;
        while ((n = nghttp2_session_mem_send(cl->ng, &d)) > 0) {
            memconn_send(&cl->p, d, (size_t)n);
            sent += (size_t)n;
        }
        if (n < 0) cl->ok = 0;
        if (memconn_run(&cl->env) < 0) cl->ok = 0;
        size_t got = cl->p.out.len - cl->out_read;
        if (got) {
            ssize_t r = nghttp2_session_mem_recv(
                cl->ng, (const uint8_t *)cl->p.out.data + cl->out_read, got);
            if (r < 0 || (size_t)r != got) cl->recv_error = 1;
            cl->out_read += got;
        }
        if (!sent && !got) return;
    }
}

static void pump(client *cl) { pump_rounds(cl, 100000); }

static cstream *new_stream(client *cl) {
    if (cl->nst == MAX_STREAMS) return NULL;
    cstream *s = &cl->st[cl->nst++];
    memset(s, 0, sizeof(*s));
    s->clen = -1;
    return s;
}

/* Submits a request; body NULL: none. Returns the stream (its id set) or
 * NULL. */
static cstream *request(client *cl, const char *method, const char *path,
                        const char *body, size_t blen, int held,
                        int send_clen) {
    char clen[24];
    nghttp2_nv nv[6];
    size_t n = 0;
#define NV(k, v)                                                            \
    nv[n++] = (nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k),       \
                           strlen(v), NGHTTP2_NV_FLAG_NONE}
    NV(":method", method);
    NV(":scheme", "http");
    NV(":authority", "test");
    NV(":path", path);
    if (send_clen) {
        snprintf(clen, sizeof(clen), "%zu", blen);
        NV("content-length", clen);
    }
#undef NV
    cstream *s = new_stream(cl);
    if (!s) return NULL;
    s->src = body;
    s->len = blen;
    s->held = held;
    nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_src};
    int32_t id = nghttp2_submit_request(cl->ng, NULL, nv, n,
                                        body || held ? &dp : NULL, s);
    if (id < 0) {
        cl->nst--;
        return NULL;
    }
    s->id = id;
    return s;
}

static cstream *get(client *cl, const char *path) {
    return request(cl, "GET", path, NULL, 0, 0, 0);
}

static int body_is_x(const cstream *s, size_t n) {
    if (s->body.len != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (s->body.data[i] != 'x') return 0;
    return 1;
}

static int body_is(const cstream *s, const char *p, size_t n) {
    return s->body.len == n && (!n || memcmp(s->body.data, p, n) == 0);
}

#define T_CLIENT_OK(cl)                                                     \
    do {                                                                    \
        T_CHECK((cl)->ok);                                                  \
        T_CHECK(!(cl)->recv_error);                                         \
        T_CHECK(!(cl)->env.spun);                                           \
        T_CHECK((cl)->p.violations == 0);                                   \
    } while (0)

/* A request on a fresh prior-knowledge connection. */
static void client_start(client *cl, const char *const *flags, size_t chunk) {
    client_open(cl, flags);
    cl->p.chunk = chunk;
    if (client_settings(cl) != 0) cl->ok = 0;
}

/* ---- cases ---- */

static void case_ping(void) {
    static const size_t chunks[] = {0, 1, 5};
    for (size_t i = 0; i < 3; i++) {
        T_BEGIN;
        client cl;
        client_start(&cl, NULL, chunks[i]);
        cstream *s = get(&cl, "/ping");
        pump(&cl);
        T_CLIENT_OK(&cl);
        T_CHECK(s && s->closed && s->close_err == 0);
        T_CHECK(s && s->status == 200 && body_is(s, "pong", 4) &&
                s->clen == 4 && !strcmp(s->ctype, "text/plain"));
        /* The server's SETTINGS came first, and what it advertises. */
        T_CHECK(cl.first_frame_type == NGHTTP2_SETTINGS && cl.settings == 1);
        T_CHECK(nghttp2_session_get_remote_settings(
                    cl.ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 128);
        T_CHECK(!cl.p.closed && cl.goaways == 0);
        client_close(&cl);
        T_END(SUITE, i == 0 ? "GET /ping: SETTINGS first, 200 pong"
                     : i == 1 ? "GET /ping, input a byte at a time"
                              : "GET /ping, input 5 bytes at a time");
    }
}

static void case_echo_sizes(void) {
    static const size_t sizes[] = {0,     1,     64,     2047,  2048,
                                   16384, 16385, 100000, 1048576};
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s[9];
    char path[64];
    for (size_t i = 0; i < 9; i++) {
        snprintf(path, sizeof(path), "/echo?size=%zu", sizes[i]);
        s[i] = get(&cl, path);
        /* One at a time: each alone against the initial 64 KiB window. */
        pump(&cl);
        T_CHECK(s[i] && s[i]->closed && s[i]->close_err == 0);
        T_CHECK(s[i] && s[i]->status == 200 &&
                s[i]->clen == (long long)sizes[i]);
        T_CHECK(s[i] && body_is_x(s[i], sizes[i]));
    }
    T_CLIENT_OK(&cl);
    /* Past 16 KiB, DATA spans frames (the peer's default max frame). */
    T_CHECK(s[5] && s[5]->data_frames == 1);
    T_CHECK(s[6] && s[6]->data_frames == 2);
    T_CHECK(s[8] && s[8]->data_frames >= 64);
    T_CHECK(!cl.p.closed);
    client_close(&cl);
    T_END(SUITE, "GET /echo?size=0..1048576: exact bodies; > 16 KiB in "
                 "several DATA frames; > 64 KiB through WINDOW_UPDATEs");
}

static void case_echo_parallel_big(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s[4];
    char path[64];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "/echo?size=%d", 200000 + i);
        s[i] = get(&cl, path);
    }
    pump(&cl);
    T_CLIENT_OK(&cl);
    for (int i = 0; i < 4; i++)
        T_CHECK(s[i] && s[i]->status == 200 &&
                body_is_x(s[i], (size_t)(200000 + i)));
    client_close(&cl);
    T_END(SUITE, "four 200 KB answers at once share the connection window");
}

static void case_post_echo(void) {
    static const size_t sizes[] = {0, 10, 5000, 70000, 300000};
    for (int bytewise = 0; bytewise <= 1; bytewise++) {
        T_BEGIN;
        client cl;
        client_start(&cl, NULL, bytewise ? 1 : 0);
        size_t n = bytewise ? 2 : 5;
        char *bodies[5];
        cstream *s[5];
        for (size_t i = 0; i < n; i++) {
            bodies[i] = malloc(sizes[i] + 1);
            for (size_t k = 0; k < sizes[i]; k++)
                bodies[i][k] = (char)('a' + (k * 7 + i) % 26);
            s[i] = request(&cl, "POST", "/echo", bodies[i], sizes[i], 0,
                           i % 2);
            pump(&cl);
        }
        T_CLIENT_OK(&cl);
        for (size_t i = 0; i < n; i++) {
            T_CHECK(s[i] && s[i]->closed && s[i]->status == 200);
            T_CHECK(s[i] && !strcmp(s[i]->ctype, "application/octet-stream"));
            T_CHECK(s[i] && body_is(s[i], bodies[i], sizes[i]));
            free(bodies[i]);
        }
        client_close(&cl);
        T_END(SUITE, bytewise ? "POST /echo, input a byte at a time"
                              : "POST /echo of 0, 10, 5000, 70000, 300000 "
                                "bytes (with and without content-length)");
    }
}

static void case_big_uploads(void) {
    T_BEGIN;
    /* Three uploads of 2 MiB + a bit at once: each past the 1 MiB stream
     * window and together past the 4 MiB connection window, so they finish
     * only if the server hands credit back (WINDOW_UPDATE). */
    enum { N = 3 };
    size_t len = (2u << 20) + 123;
    client cl;
    client_start(&cl, NULL, 0);
    char *bodies[N];
    cstream *s[N];
    for (int i = 0; i < N; i++) {
        bodies[i] = malloc(len);
        for (size_t k = 0; k < len; k++)
            bodies[i][k] = (char)('0' + (k / 1000 + (size_t)i) % 10);
        s[i] = request(&cl, "POST", "/echo", bodies[i], len, 0, i != 1);
    }
    pump(&cl);
    T_CLIENT_OK(&cl);
    for (int i = 0; i < N; i++) {
        T_CHECK(s[i] && s[i]->closed && s[i]->status == 200);
        T_CHECK(s[i] && body_is(s[i], bodies[i], len));
        free(bodies[i]);
    }
    client_close(&cl);
    T_END(SUITE, "three 2 MiB uploads at once: past both receive windows, "
                 "all echoed");
}

static void case_routes(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *a = get(&cl, "/nope");
    cstream *b = request(&cl, "DELETE", "/ping", NULL, 0, 0, 0);
    cstream *c = request(&cl, "PUT", "/echo", "zz", 2, 0, 1);
    cstream *d = request(&cl, "HEAD", "/echo?size=5000", NULL, 0, 0, 0);
    cstream *e = get(&cl, "/echo?size=abc");
    cstream *f = get(&cl, "/");
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(a && a->status == 404 && !a->allow[0]);
    T_CHECK(b && b->status == 405 && !strcmp(b->allow, "GET, HEAD"));
    T_CHECK(c && c->status == 405 && !strcmp(c->allow, "GET, HEAD, POST"));
    T_CHECK(d && d->closed && d->status == 200 && d->clen == 5000 &&
            d->body.len == 0 && d->data_frames == 0);
    T_CHECK(e && e->status == 400);
    T_CHECK(f && f->status == 200 && body_is(f, "Hello, World!", 13));
    client_close(&cl);
    T_END(SUITE, "404; 405 with allow; HEAD: content-length, no DATA; 400 "
                 "for a bad size");
}

static void case_many_streams(void) {
    static const size_t chunks[] = {0, 7};
    for (size_t ci = 0; ci < 2; ci++) {
        T_BEGIN;
        client cl;
        client_start(&cl, NULL, chunks[ci]);
        cl.p.write_mode = ci ? MEMCONN_WRITE_SHORT : MEMCONN_WRITE_ALL;
        enum { N = 50 };
        cstream *s[N];
        char bodies[N][32];
        char path[64];
        for (int i = 0; i < N; i++) {
            if (i % 3 == 2) {
                snprintf(bodies[i], sizeof(bodies[i]), "body of stream %d", i);
                s[i] = request(&cl, "POST", "/echo", bodies[i],
                               strlen(bodies[i]), 0, 1);
            } else if (i % 3 == 1) {
                snprintf(path, sizeof(path), "/echo?size=%d", i * 401);
                s[i] = get(&cl, path);
            } else {
                s[i] = get(&cl, "/ping");
            }
        }
        pump(&cl);
        T_CLIENT_OK(&cl);
        int answered = 0;
        for (int i = 0; i < N; i++) {
            if (!s[i]) continue;
            T_CHECK(s[i]->closed && s[i]->close_err == 0 &&
                    s[i]->status == 200);
            if (i % 3 == 2)
                T_CHECK(body_is(s[i], bodies[i], strlen(bodies[i])));
            else if (i % 3 == 1) T_CHECK(body_is_x(s[i], (size_t)i * 401));
            else T_CHECK(body_is(s[i], "pong", 4));
            answered += s[i]->closed && s[i]->status == 200;
        }
        T_CHECK(answered == N);
        T_CHECK(!cl.p.closed);
        client_close(&cl);
        T_END(SUITE, ci ? "50 concurrent streams, 7-byte reads, short "
                          "writes: each its own answer"
                        : "50 concurrent streams (GET, echo, POST) on one "
                          "connection: each its own answer");
    }
}

static void case_413(void) {
    static const char *const limit[] = {"--max-body", "100", NULL};
    T_BEGIN;
    client cl;
    client_start(&cl, limit, 0);
    char big[300];
    memset(big, 'b', sizeof(big));
    cstream *a = request(&cl, "POST", "/echo", big, 101, 0, 1);
    cstream *b = request(&cl, "POST", "/echo", big, 300, 0, 0);
    cstream *c = request(&cl, "POST", "/echo", big, 100, 0, 1);
    pump(&cl);
    cstream *d = get(&cl, "/ping");
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(a && a->status == 413);
    T_CHECK(b && b->status == 413);
    T_CHECK(c && c->status == 200 && body_is(c, big, 100));
    T_CHECK(d && d->status == 200 && body_is(d, "pong", 4));
    T_CHECK(!cl.p.closed && cl.goaways == 0);
    client_close(&cl);
    T_END(SUITE, "--max-body 100: 413 by content-length and by DATA, 100 "
                 "bytes echoed, the connection lives");
}

static void case_shutdown(void) {
    {
        T_BEGIN;
        client cl;
        client_start(&cl, NULL, 0);
        cstream *s = get(&cl, "/ping");
        pump(&cl);
        conn_set_begin_shutdown(&cl.env.set);
        pump(&cl);
        T_CLIENT_OK(&cl);
        T_CHECK(s && s->status == 200);
        T_CHECK(cl.goaways == 1 && cl.goaway_err == NGHTTP2_NO_ERROR &&
                cl.goaway_last == 1);
        T_CHECK(cl.p.closed);
        client_close(&cl);
        T_END(SUITE, "graceful shutdown, idle: GOAWAY(NO_ERROR, last 1), "
                     "then closed");
    }
    {
        T_BEGIN;
        client cl;
        client_start(&cl, NULL, 0);
        static const char part1[] = "first half, ";
        static const char whole[] = "first half, second half";
        cstream *s = request(&cl, "POST", "/echo", whole, sizeof(part1) - 1,
                             1, 0);
        pump(&cl);
        T_CHECK(s && !s->closed && s->status == 0);
        conn_set_begin_shutdown(&cl.env.set);
        pump(&cl);
        T_CHECK(cl.goaways == 1 && cl.goaway_err == NGHTTP2_NO_ERROR &&
                s && cl.goaway_last == s->id);
        T_CHECK(!cl.p.closed);
        if (s) {
            s->len = sizeof(whole) - 1;
            s->held = 0;
            nghttp2_session_resume_data(cl.ng, s->id);
        }
        pump(&cl);
        T_CLIENT_OK(&cl);
        T_CHECK(s && s->status == 200 &&
                body_is(s, whole, sizeof(whole) - 1));
        T_CHECK(cl.p.closed);
        client_close(&cl);
        T_END(SUITE, "graceful shutdown mid-upload: GOAWAY(last = it), the "
                     "upload finishes and is answered, then closed");
    }
}

static void case_idle_timeout(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s = get(&cl, "/ping");
    pump(&cl);
    T_CHECK(s && s->status == 200);
    /* Before the idle timeout (60 s): nothing. */
    memconn_timeout(&cl.p, memconn_now(&cl.env, 50000));
    pump(&cl);
    T_CHECK(cl.goaways == 0 && !cl.p.closed);
    memconn_expire(&cl.p);
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(cl.goaways == 1 && cl.goaway_err == NGHTTP2_NO_ERROR);
    T_CHECK(cl.p.shut_wr);
    cl.p.eof = 1;
    pump(&cl);
    T_CHECK(cl.p.closed);
    client_close(&cl);
    T_END(SUITE, "idle past --idle-timeout: GOAWAY(NO_ERROR), write side "
                 "shut, closed on EOF");
}

static void case_body_timeout(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s = request(&cl, "POST", "/echo", "abc", 3, 1, 0);
    pump(&cl);
    memconn_expire(&cl.p);
    pump(&cl);
    cstream *t = get(&cl, "/ping");
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(s && s->status == 408);
    T_CHECK(t && t->status == 200 && body_is(t, "pong", 4));
    T_CHECK(!cl.p.closed && cl.goaways == 0);
    client_close(&cl);
    T_END(SUITE, "a stalled upload: 408 on its stream, the connection and "
                 "the next stream live");
}

static void case_write_modes(void) {
    T_BEGIN;
    static const int modes[] = {MEMCONN_WRITE_ALL, MEMCONN_WRITE_SHORT,
                                MEMCONN_WRITE_EAGAIN};
    memconn_buf ref = {0};
    for (int m = 0; m < 3; m++) {
        client cl;
        client_start(&cl, NULL, 0);
        cl.p.write_mode = modes[m];
        cl.p.rng = 12345;
        cstream *a = get(&cl, "/echo?size=150000");
        cstream *b = request(&cl, "POST", "/echo", "hello", 5, 0, 1);
        cstream *c = get(&cl, "/ping");
        pump(&cl);
        T_CLIENT_OK(&cl);
        T_CHECK(a && body_is_x(a, 150000));
        T_CHECK(b && body_is(b, "hello", 5));
        T_CHECK(c && body_is(c, "pong", 4));
        if (m == 1) T_CHECK(cl.p.writevs > 10);
        if (!m) {
            ref.data = malloc(cl.p.out.len);
            memcpy(ref.data, cl.p.out.data, cl.p.out.len);
            ref.len = cl.p.out.len;
        } else {
            T_CHECK(cl.p.out.len == ref.len &&
                    !memcmp(cl.p.out.data, ref.data, ref.len));
        }
        client_close(&cl);
    }
    free(ref.data);
    T_END(SUITE, "short and EAGAIN writes: the same byte stream as whole "
                 "writes");
}

static void case_half_close(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 3);
    cstream *a = get(&cl, "/ping");
    cstream *b = get(&cl, "/echo?size=30000");
    const uint8_t *d;
    ssize_t k;
    while ((k = nghttp2_session_mem_send(cl.ng, &d)) > 0)
        memconn_send(&cl.p, d, (size_t)k);
    cl.p.eof = 1;
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(a && a->status == 200 && body_is(a, "pong", 4));
    T_CHECK(b && b->status == 200 && body_is_x(b, 30000));
    T_CHECK(cl.p.closed);
    client_close(&cl);
    T_END(SUITE, "two requests then EOF (half-close): both answered, then "
                 "closed");
}

static void case_shutdown_fresh(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    pump(&cl);
    T_CHECK(cl.settings == 1 && !cl.p.closed);
    conn_set_begin_shutdown(&cl.env.set);
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(cl.goaways == 1 && cl.goaway_err == NGHTTP2_NO_ERROR &&
            cl.goaway_last == 0);
    T_CHECK(cl.p.closed);
    client_close(&cl);
    T_END(SUITE, "graceful shutdown before any stream: GOAWAY(last 0), "
                 "closed");
}

static void case_zero_window(void) {
    T_BEGIN;
    client cl;
    client_open(&cl, NULL);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0}};
    T_CHECK(nghttp2_submit_settings(cl.ng, NGHTTP2_FLAG_NONE, iv, 1) == 0);
    cstream *s = get(&cl, "/echo?size=100");
    pump(&cl);
    /* Headers go out; DATA waits for window the client never gives. */
    T_CHECK(s && s->status == 200 && s->body.len == 0 && !s->closed);
    memconn_timeout(&cl.p, memconn_now(&cl.env, 5000));
    pump(&cl);
    T_CHECK(s && !s->closed);
    memconn_expire(&cl.p);
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(s && s->closed && s->close_err == NGHTTP2_CANCEL);
    cstream *t = get(&cl, "/ping");
    pump(&cl);
    T_CHECK(t && t->status == 200 && !t->closed); /* "pong" has no window */
    T_CHECK(!cl.p.closed && cl.goaways == 0);
    client_close(&cl);
    T_END(SUITE, "a response held by a zero window: RST_STREAM(CANCEL) past "
                 "--send-timeout, the connection lives");
}

static void case_many_segments(void) {
    T_BEGIN;
    /* 120 streams of 3000 bytes: DATA by reference (a frame header in obuf
     * and a payload segment each), more than the queue's 256 segments in
     * one go. */
    enum { N = 120 };
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s[N];
    char path[64];
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/echo?size=%d", 3000 + i);
        s[i] = get(&cl, path);
    }
    pump(&cl);
    T_CLIENT_OK(&cl);
    int good = 0;
    for (int i = 0; i < N; i++)
        good += s[i] && s[i]->status == 200 &&
                body_is_x(s[i], (size_t)(3000 + i));
    T_CHECK(good == N);
    client_close(&cl);
    T_END(SUITE, "120 streams answered by reference (> 256 segments): all "
                 "complete");
}

static void case_client_reset(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    cstream *s = get(&cl, "/echo?size=1048576");
    pump_rounds(&cl, 2);
    T_CHECK(s && s->status == 200 && s->body.len > 0 &&
            s->body.len < 1048576 && !s->closed);
    if (s) nghttp2_submit_rst_stream(cl.ng, NGHTTP2_FLAG_NONE, s->id,
                                     NGHTTP2_CANCEL);
    pump(&cl);
    size_t got = s ? s->body.len : 0;
    cstream *t = get(&cl, "/echo?size=70000");
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(s && s->closed && s->body.len == got && got < 1048576);
    T_CHECK(t && t->status == 200 && body_is_x(t, 70000));
    T_CHECK(!cl.p.closed && cl.goaways == 0);
    client_close(&cl);
    T_END(SUITE, "the client resets a 1 MiB answer midway: nothing more "
                 "of it, the next stream answered");
}

/* ---- h2c Upgrade ---- */

static size_t b64url(const uint8_t *in, size_t n, char *out) {
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = a[v >> 18 & 63];
        out[o++] = a[v >> 12 & 63];
        if (i + 1 < n) out[o++] = a[v >> 6 & 63];
        if (i + 2 < n) out[o++] = a[v & 63];
    }
    out[o] = 0;
    return o;
}

/* The HTTP/1.1 request that asks for h2c, with the client's settings;
 * also tells the client session that stream 1 is that request. */
static int upgrade_request(client *cl, const char *method, const char *path,
                           char *out, size_t cap) {
    uint8_t payload[64];
    char b64[128];
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 65535},
    };
    ssize_t n = nghttp2_pack_settings_payload(payload, sizeof(payload), iv, 2);
    if (n < 0) return -1;
    b64url(payload, (size_t)n, b64);
    int head = !strcmp(method, "HEAD");
    cstream *s = new_stream(cl);
    if (!s || nghttp2_session_upgrade2(cl->ng, payload, (size_t)n, head, s))
        return -1;
    s->id = 1;
    return snprintf(out, cap,
                    "%s %s HTTP/1.1\r\nHost: test\r\n"
                    "Connection: Upgrade, HTTP2-Settings\r\n"
                    "Upgrade: h2c\r\nHTTP2-Settings: %s\r\n\r\n",
                    method, path, b64);
}

static const char SWITCHING[] = "HTTP/1.1 101 Switching Protocols\r\n";

/* Skips the 101 head in the output: the rest is HTTP/2 for the client. */
static int skip_101(client *cl) {
    const char *o = cl->p.out.data;
    if (cl->p.out.len < sizeof(SWITCHING) - 1 ||
        memcmp(o, SWITCHING, sizeof(SWITCHING) - 1))
        return -1;
    const char *end = memmem(o, cl->p.out.len, "\r\n\r\n", 4);
    if (!end) return -1;
    cl->out_read = (size_t)(end + 4 - o);
    return 0;
}

static void case_upgrade(void) {
    /* 0: wait for the 101, then the preface; 1: all in one go; 2: all in
     * one go, a byte at a time. */
    for (int mode = 0; mode < 3; mode++) {
        T_BEGIN;
        client cl;
        char req[512];
        client_open(&cl, NULL);
        cl.p.chunk = mode == 2 ? 1 : 0;
        int n = upgrade_request(&cl, "GET", "/echo?size=20000", req,
                                sizeof(req));
        T_CHECK(n > 0 && client_settings(&cl) == 0);
        if (n > 0) memconn_send(&cl.p, req, (size_t)n);
        if (mode == 0) {
            memconn_run(&cl.env);
            T_CHECK(skip_101(&cl) == 0);
            /* The answer waits for the client's preface. */
            T_CHECK(!memconn_out_has(&cl.p, "xxxx"));
        } else {
            const uint8_t *d;
            ssize_t k;
            while ((k = nghttp2_session_mem_send(cl.ng, &d)) > 0)
                memconn_send(&cl.p, d, (size_t)k);
            memconn_run(&cl.env);
            T_CHECK(skip_101(&cl) == 0);
        }
        T_CHECK(cl.p.out.len >= sizeof(SWITCHING) - 1 &&
                memconn_out_count(&cl.p, "HTTP/1.1") == 1);
        cstream *t = get(&cl, "/ping");
        pump(&cl);
        T_CLIENT_OK(&cl);
        cstream *s = find(&cl, 1);
        T_CHECK(s && s->closed && s->status == 200 && body_is_x(s, 20000));
        T_CHECK(t && t->id == 3 && t->status == 200 && body_is(t, "pong", 4));
        T_CHECK(cl.first_frame_type == NGHTTP2_SETTINGS);
        client_close(&cl);
        T_END(SUITE, mode == 0 ? "h2c Upgrade: 101, then stream 1 answered "
                                 "over h2 after the preface, stream 3 too"
                     : mode == 1 ? "h2c Upgrade with the preface in the same "
                                   "write"
                                 : "h2c Upgrade, a byte at a time");
    }
    {
        T_BEGIN;
        client cl;
        char req[512];
        client_open(&cl, NULL);
        int n = upgrade_request(&cl, "HEAD", "/ping", req, sizeof(req));
        T_CHECK(n > 0 && client_settings(&cl) == 0);
        if (n > 0) memconn_send(&cl.p, req, (size_t)n);
        memconn_run(&cl.env);
        T_CHECK(skip_101(&cl) == 0);
        pump(&cl);
        T_CLIENT_OK(&cl);
        cstream *s = find(&cl, 1);
        T_CHECK(s && s->closed && s->status == 200 && s->clen == 4 &&
                s->body.len == 0);
        client_close(&cl);
        T_END(SUITE, "h2c Upgrade of a HEAD: stream 1 has no DATA");
    }
    {
        /* A POST is not upgraded: HTTP/1.1 answers it. */
        T_BEGIN;
        memconn_env env;
        memconn p;
        memconn_init(&p);
        T_CHECK(memconn_env_init(&env, NULL) == 0 && memconn_open(&env, &p));
        memconn_send_str(&p, "POST /echo HTTP/1.1\r\nHost: a\r\n"
                             "Connection: Upgrade, HTTP2-Settings\r\n"
                             "Upgrade: h2c\r\nHTTP2-Settings: \r\n"
                             "Content-Length: 2\r\n\r\nok");
        memconn_run(&env);
        T_CHECK(p.out.len > 12 && !memcmp(p.out.data, "HTTP/1.1 200 ", 13));
        T_CHECK(memconn_out_count(&p, "HTTP/1.1") == 1 &&
                p.out.len >= 2 && !memcmp(p.out.data + p.out.len - 2, "ok", 2));
        memconn_env_free(&env);
        memconn_free(&p);
        T_END(SUITE, "Upgrade: h2c on a POST with a body: served over "
                     "HTTP/1.1");
    }
}

/* An Upgrade the server declines: served over HTTP/1.1 (one response,
 * `extra` expected in its head). With `shutdown`, graceful shutdown begins
 * between the request line and the Upgrade headers. */
static void upgrade_declined(const char *settings, int shutdown,
                             const char *extra, const char *name) {
    T_BEGIN;
    memconn_env env;
    memconn p;
    char req[512];
    memconn_init(&p);
    T_CHECK(memconn_env_init(&env, NULL) == 0 && memconn_open(&env, &p));
    memconn_send_str(&p, "GET /ping HTTP/1.1\r\nHost: a\r\n");
    memconn_run(&env);
    if (shutdown) {
        conn_set_begin_shutdown(&env.set);
        memconn_run(&env);
    }
    snprintf(req, sizeof(req), "Connection: Upgrade, HTTP2-Settings\r\n"
             "Upgrade: h2c\r\nHTTP2-Settings: %s\r\n\r\n", settings);
    memconn_send_str(&p, req);
    memconn_run(&env);
    T_CHECK(p.violations == 0 && !env.spun);
    T_CHECK(p.out.len > 13 && !memcmp(p.out.data, "HTTP/1.1 200 ", 13));
    T_CHECK(memconn_out_count(&p, "HTTP/1.1") == 1);
    T_CHECK(!memconn_out_has(&p, "Upgrade"));
    T_CHECK(p.out.len >= 4 && !memcmp(p.out.data + p.out.len - 4, "pong", 4));
    if (extra) T_CHECK(memconn_out_has(&p, extra));
    memconn_env_free(&env);
    memconn_free(&p);
    T_END(SUITE, name);
}

static void case_upgrade_declined(void) {
    upgrade_declined("not*base64url!", 0, NULL,
                     "h2c Upgrade with a bad HTTP2-Settings: served over "
                     "HTTP/1.1");
    upgrade_declined("AAMAAABkAAQAAP__", 1, "Connection: close",
                     "h2c Upgrade during graceful shutdown: served over "
                     "HTTP/1.1 with Connection: close");
}


/* Shutdown while only part of the preface has arrived: no protocol yet, so
 * the announcement waits for it; then the request that came with the first
 * bytes is answered and GOAWAY names it (RFC 9113 6.8). */
static void case_shutdown_undecided(void) {
    T_BEGIN;
    client cl;
    client_start(&cl, NULL, 0);
    const uint8_t *d;
    ssize_t k;
    memconn_buf all = {0};
    cstream *s = get(&cl, "/ping");
    while ((k = nghttp2_session_mem_send(cl.ng, &d)) > 0)
        buf_add(&all, d, (size_t)k);
    memconn_send(&cl.p, all.data, 10);
    memconn_run(&cl.env);
    conn_set_begin_shutdown(&cl.env.set);
    memconn_run(&cl.env);
    T_CHECK(!cl.p.closed && cl.p.out.len == 0);
    memconn_send(&cl.p, all.data + 10, all.len - 10);
    pump(&cl);
    T_CLIENT_OK(&cl);
    T_CHECK(s && s->status == 200);
    T_CHECK(cl.goaways == 1 && cl.goaway_err == NGHTTP2_NO_ERROR &&
            cl.goaway_last == 1);
    T_CHECK(cl.p.closed);
    free(all.data);
    client_close(&cl);
    T_END(SUITE, "shutdown mid-preface: the request is answered, then "
                 "GOAWAY(last 1), closed");
}

/* An h2c upgrade whose client never sends the preface: stream 1 waits for
 * it no longer than --header-timeout, then the connection is closed. */
static void case_upgrade_no_preface(void) {
    T_BEGIN;
    client cl;
    char req[512];
    client_open(&cl, NULL);
    int n = upgrade_request(&cl, "GET", "/ping", req, sizeof(req));
    memconn_send(&cl.p, req, (size_t)n);
    memconn_run(&cl.env);
    T_CHECK(cl.p.out.len > 0 && !cl.p.closed); /* 101 and SETTINGS */
    memconn_timeout(&cl.p, memconn_now(&cl.env, 1000));
    memconn_run(&cl.env);
    T_CHECK(!cl.p.closed); /* within the header timeout */
    memconn_timeout(&cl.p, memconn_now(&cl.env, 3600 * 1000));
    memconn_run(&cl.env);
    T_CHECK(cl.p.closed);
    client_close(&cl);
    T_END(SUITE, "h2c Upgrade without a preface: closed after the header "
                 "timeout");
}

void test_conn_h2(void) {
    case_ping();
    case_echo_sizes();
    case_echo_parallel_big();
    case_post_echo();
    case_big_uploads();
    case_routes();
    case_many_streams();
    case_many_segments();
    case_413();
    case_shutdown();
    case_idle_timeout();
    case_half_close();
    case_shutdown_fresh();
    case_zero_window();
    case_client_reset();
    case_body_timeout();
    case_write_modes();
    case_upgrade();
    case_upgrade_declined();
    case_shutdown_undecided();
    case_upgrade_no_preface();
}
