/* floor: the lab's "floor" responder.
 *
 * It accepts connections, reads whatever arrives and answers every request it
 * sees with the same fixed reply ("pong"). It does not parse HTTP: the only thing
 * it looks for is the blank line that ends a request head (so pipelined requests
 * each get a reply). Request bodies are not supported. The point is to show how
 * fast the measurement setup itself goes (kernel, loopback, load generator) when a
 * server does almost no work; a real server cannot beat it.
 *
 *   floor PORT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

#define MAX_FDS 65536
#define READ_BUF 65536
#define MAX_BATCH 256

static const char REPLY[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\npong";
#define REPLY_LEN (sizeof(REPLY) - 1)

/* How much of "\r\n\r\n" the previous read of each fd ended with, so a
 * terminator split across two reads still counts once. */
static unsigned char matched[MAX_FDS];
static char out[MAX_BATCH * REPLY_LEN];

static int count_heads(int fd, const char *p, size_t n) {
    static const char term[] = "\r\n\r\n";
    int heads = 0;
    unsigned m = matched[fd];
    for (size_t i = 0; i < n; i++) {
        if (p[i] == term[m]) m++;
        else m = (p[i] == '\r') ? 1 : 0;
        if (m == 4) { heads++; m = 0; }
    }
    matched[fd] = (unsigned char)m;
    return heads;
}

/* One read per readiness event: epoll is level-triggered, so input left in the
 * socket is reported again, and a second read would mostly meet an empty socket
 * (a syscall per request that returns EAGAIN). */
static void serve(int ep, int fd) {
    static char buf[READ_BUF];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
        return;
    }
    int heads = count_heads(fd, buf, (size_t)n);
    while (heads > 0) {
        int k = heads > MAX_BATCH ? MAX_BATCH : heads;
        /* A blocking-style write of a few hundred bytes into an empty socket
         * buffer; a client that stops reading is simply dropped. */
        if (write(fd, out, (size_t)k * REPLY_LEN) < 0) {
            epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
            close(fd);
            return;
        }
        heads -= k;
    }
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) { fprintf(stderr, "usage: floor PORT [ADDR]\n"); return 2; }
    /* The address: 127.0.0.1, or the server host's in the netns host mode. */
    const char *addr = argc == 3 ? argv[2] : "127.0.0.1";
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); }
    for (int i = 0; i < MAX_BATCH; i++) memcpy(out + i * REPLY_LEN, REPLY, REPLY_LEN);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "floor: bad ADDR %s (an IPv4 address)\n", addr);
        return 2;
    }
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 4096) < 0) {
        perror("floor: bind/listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls };
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    fprintf(stderr, "floor: listening on %s:%s\n", addr, argv[1]);

    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd != ls) { serve(ep, fd); continue; }
            int c;
            while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                if (c >= MAX_FDS) { close(c); continue; }
                setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                matched[c] = 0;
                struct epoll_event cev = { .events = EPOLLIN, .data.fd = c };
                epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
            }
        }
    }
}
