/* floor_uring: the lab's floor responder on io_uring.
 *
 * The same work as servers/floor/floor.c (accept, read, answer every request head
 * with a fixed "pong", no HTTP parsing), with the other syscall model: one
 * io_uring_enter per loop turn submits every send the previous turn queued
 * and waits for the next completions, so no request costs a syscall of its
 * own. Beside the epoll floor it measures what the setup allows under each
 * model (the backends suite).
 *
 *   - accept: one multishot accept on the listener; every new connection is
 *     a completion.
 *   - receive: one multishot recv per connection, taking buffers from a
 *     ring of provided buffers (the kernel picks one per completion; we give
 *     it back once the heads in it are counted).
 *   - send: the fixed replies from one static buffer, MSG_WAITALL so a short
 *     send is finished by the kernel; successful sends post no completion
 *     (IOSQE_CQE_SKIP_SUCCESS). Every reply is the same bytes, so two sends
 *     in flight on one socket cannot garble each other.
 *   - close: only once the connection's recv has ended (the peer closed or
 *     reset it): an armed recv holds the file, so closing earlier would not
 *     close the socket. A failed send needs nothing: the same broken socket
 *     ends the recv too (and its fd may be another connection's by then).
 *
 *   floor_uring PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 65536
#define MAX_BATCH 256
#define RING_ENTRIES 4096
#define CQ_ENTRIES 32768
/* Provided receive buffers: a power of two of them. Request heads here are
 * ~100 bytes; pipelined batches fit in 4 KiB. */
#define NBUFS 4096
#define BUF_SIZE 4096
#define BGID 1

static const char REPLY[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\npong";
#define REPLY_LEN (sizeof(REPLY) - 1)

enum { OP_ACCEPT = 1, OP_RECV, OP_SEND };

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufs;
static unsigned returned; /* buffers given back this turn, not yet published */
/* How much of "\r\n\r\n" the previous recv of each fd ended with. */
static unsigned char matched[MAX_FDS];
static char out[MAX_BATCH * REPLY_LEN];

static uint64_t tag(int op, int fd) { return (uint64_t)op << 32 | (uint32_t)fd; }

static struct io_uring_sqe *sqe_get(void) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) { /* the queue is full: submit what is there */
        io_uring_submit(&ring);
        s = io_uring_get_sqe(&ring);
    }
    if (!s) {
        fprintf(stderr, "floor_uring: no submission queue entry\n");
        exit(1);
    }
    return s;
}

static void arm_accept(int ls) {
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_multishot_accept(s, ls, NULL, NULL, 0);
    io_uring_sqe_set_data64(s, tag(OP_ACCEPT, ls));
}

static void arm_recv(int fd) {
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = BGID;
    io_uring_sqe_set_data64(s, tag(OP_RECV, fd));
}

static void send_replies(int fd, int heads) {
    while (heads > 0) {
        int k = heads > MAX_BATCH ? MAX_BATCH : heads;
        struct io_uring_sqe *s = sqe_get();
        io_uring_prep_send(s, fd, out, (size_t)k * REPLY_LEN, MSG_WAITALL);
        s->flags |= IOSQE_CQE_SKIP_SUCCESS;
        io_uring_sqe_set_data64(s, tag(OP_SEND, fd));
        heads -= k;
    }
}

static int count_heads(int fd, const char *p, size_t n) {
    static const char term[] = "\r\n\r\n";
    int heads = 0;
    unsigned m = matched[fd];
    for (size_t i = 0; i < n; i++) {
        if (p[i] == term[m]) m++;
        else m = (p[i] == '\r') ? 1 : 0;
        if (m == 4) {
            heads++;
            m = 0;
        }
    }
    matched[fd] = (unsigned char)m;
    return heads;
}

static void give_back(unsigned bid) {
    io_uring_buf_ring_add(br, bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(NBUFS), (int)returned);
    returned++;
}

static void on_recv(int fd, const struct io_uring_cqe *c) {
    if (c->res > 0) {
        unsigned bid = c->flags >> IORING_CQE_BUFFER_SHIFT;
        send_replies(fd, count_heads(fd, bufs + (size_t)bid * BUF_SIZE, (size_t)c->res));
        give_back(bid);
        if (!(c->flags & IORING_CQE_F_MORE)) arm_recv(fd); /* the kernel ended it */
        return;
    }
    if (c->res == -ENOBUFS) { /* every buffer was in use: try again */
        arm_recv(fd);
        return;
    }
    /* EOF or an error; with no F_MORE the recv is over, so close now. */
    if (!(c->flags & IORING_CQE_F_MORE)) close(fd);
}

static void on_accept(int ls, const struct io_uring_cqe *c) {
    static const int one = 1;
    if (c->res >= 0) {
        int fd = c->res;
        if (fd >= MAX_FDS) {
            close(fd);
        } else {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            matched[fd] = 0;
            arm_recv(fd);
        }
    }
    if (!(c->flags & IORING_CQE_F_MORE)) arm_accept(ls);
}

static int setup_ring(void) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = CQ_ENTRIES;
    int r = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
    if (r == -EINVAL) { /* a kernel before 6.1: without the task-run flags */
        memset(&p, 0, sizeof p);
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = CQ_ENTRIES;
        r = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
    }
    return r;
}

static int setup_buffers(void) {
    if (posix_memalign((void **)&br, 4096, NBUFS * sizeof(struct io_uring_buf)) ||
        !(bufs = malloc((size_t)NBUFS * BUF_SIZE)))
        return -ENOMEM;
    io_uring_buf_ring_init(br);
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)br, .ring_entries = NBUFS,
                                   .bgid = BGID};
    int r = io_uring_register_buf_ring(&ring, &reg, 0);
    if (r < 0) return r;
    for (unsigned i = 0; i < NBUFS; i++) give_back(i);
    io_uring_buf_ring_advance(br, (int)returned);
    returned = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: floor_uring PORT [ADDR]\n");
        return 2;
    }
    /* The address: 127.0.0.1, or the server host's in the netns host mode. */
    const char *addr = argc == 3 ? argv[2] : "127.0.0.1";
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    for (int i = 0; i < MAX_BATCH; i++) memcpy(out + i * REPLY_LEN, REPLY, REPLY_LEN);

    int r = setup_ring();
    if (r < 0) {
        fprintf(stderr, "floor_uring: io_uring is not available here (%s); "
                        "/proc/sys/kernel/io_uring_disabled or a seccomp filter may forbid it\n",
                strerror(-r));
        return 1;
    }
    if ((r = setup_buffers()) < 0) {
        fprintf(stderr, "floor_uring: provided buffer ring: %s (kernel 5.19+ needed)\n",
                strerror(-r));
        return 1;
    }

    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "floor_uring: bad ADDR %s (an IPv4 address)\n", addr);
        return 2;
    }
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 4096) < 0) {
        perror("floor_uring: bind/listen");
        return 1;
    }
    arm_accept(ls);
    fprintf(stderr, "floor_uring: listening on %s:%s\n", addr, argv[1]);

    for (;;) {
        /* One syscall a turn: this turn's sends and re-arms out, the next
         * completions in. */
        r = io_uring_submit_and_wait(&ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            fprintf(stderr, "floor_uring: io_uring_enter: %s\n", strerror(-r));
            return 1;
        }
        struct io_uring_cqe *c;
        unsigned head, n = 0;
        io_uring_for_each_cqe(&ring, head, c) {
            int op = (int)(c->user_data >> 32), fd = (int)(uint32_t)c->user_data;
            if (op == OP_RECV) on_recv(fd, c); /* failed sends: see the top */
            else if (op == OP_ACCEPT) on_accept(fd, c);
            n++;
        }
        io_uring_cq_advance(&ring, n);
        if (returned) {
            io_uring_buf_ring_advance(br, (int)returned);
            returned = 0;
        }
    }
}
