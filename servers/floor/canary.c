/* canary: the machine's own speed, measured the same way in every suite of every run, so that
 * figures from two runs (or two machines) can be set side by side through it.
 *
 *   canary cpu SECONDS              a fixed integer workload on the CPU it is pinned to
 *   canary pingpong SECONDS A B     one byte back and forth over loopback TCP, the echoing
 *                                   thread on CPU A, the sending one on CPU B
 *
 * Each prints one JSON object on stdout. The two parts take apart what an HTTP server's req/s
 * is made of on a machine: how fast its cores compute (cpu), and how fast its kernel wakes a
 * thread and moves a small message through the loopback TCP stack (pingpong: a round trip is two
 * sends, two receives and two wake-ups). The floor responder's req/s (measured by the harness
 * beside these) is the third part: the two together under a real load tool.
 *
 * Why a program of our own: the work must be the same, instruction for instruction, on every
 * machine and in every run (a library's benchmark changes with its version), and it must be
 * built with the same flags as the floor responder beside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "canary: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void pin(int cpu)
{
    cpu_set_t set;
    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        die("pin");
}

/* ---------------------------------------------------------------- cpu */

/* One batch: a xorshift stream mixed into a 4 KiB table that stays in L1, with a data-dependent
 * index, so the loop is neither optimised away nor memory-bound: it measures the core's integer
 * pipeline and its L1, which is what a small HTTP server spends most of its user time on. */
#define TABLE 512
#define BATCH 1000000

static uint64_t batch(uint64_t *t, uint64_t x)
{
    for (int i = 0; i < BATCH; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t *slot = &t[x & (TABLE - 1)];
        *slot = (*slot + x) * 0x9E3779B97F4A7C15ull;
        x += *slot >> 29;
    }
    return x;
}

static int run_cpu(double seconds)
{
    static uint64_t table[TABLE];
    uint64_t x = 0x2545F4914F6CDD1Dull;
    long batches = 0;
    double t0 = now_s(), t;
    do {
        x = batch(table, x);
        batches++;
        t = now_s() - t0;
    } while (t < seconds);
    /* printing the checksum keeps the compiler from dropping the work */
    printf("{\"kind\": \"cpu\", \"batches\": %ld, \"ops_per_batch\": %d, \"seconds\": %.6f, "
           "\"mops_per_s\": %.3f, \"checksum\": \"%016llx\"}\n",
           batches, BATCH, t, (double)batches * BATCH / t / 1e6, (unsigned long long)x);
    return 0;
}

/* ---------------------------------------------------------------- pingpong */

struct echo { int listener; int cpu; };

static void *echo_thread(void *arg)
{
    struct echo *e = arg;
    char b;
    pin(e->cpu);
    int fd = accept(e->listener, NULL, NULL);
    if (fd < 0)
        die("accept");
    for (;;) {
        ssize_t n = recv(fd, &b, 1, 0);
        if (n <= 0)
            break;
        if (send(fd, &b, 1, 0) != 1)
            break;
    }
    close(fd);
    return NULL;
}

static int run_pingpong(double seconds, int echo_cpu, int send_cpu)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) < 0)
        die("listen on 127.0.0.1");
    struct echo e = { l, echo_cpu };
    pthread_t th;
    if (pthread_create(&th, NULL, echo_thread, &e) != 0)
        die("thread");
    pin(send_cpu);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("connect");
    /* one byte at a time: without TCP_NODELAY Nagle would hold the next byte for the ACK */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char b = 'x';
    long trips = 0;
    double t0 = now_s(), t;
    do {
        /* 256 round trips between clock reads: the read costs less than 1 % of them */
        for (int i = 0; i < 256; i++) {
            if (send(fd, &b, 1, 0) != 1 || recv(fd, &b, 1, MSG_WAITALL) != 1)
                die("round trip");
        }
        trips += 256;
        t = now_s() - t0;
    } while (t < seconds);
    close(fd);
    pthread_join(th, NULL);
    close(l);
    printf("{\"kind\": \"pingpong\", \"round_trips\": %ld, \"seconds\": %.6f, \"round_trips_per_s\": %.1f, "
           "\"echo_cpu\": %d, \"send_cpu\": %d}\n", trips, t, (double)trips / t, echo_cpu, send_cpu);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "cpu") == 0)
        return run_cpu(atof(argv[2]));
    if (argc == 5 && strcmp(argv[1], "pingpong") == 0)
        return run_pingpong(atof(argv[2]), atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: canary cpu SECONDS | canary pingpong SECONDS ECHO_CPU SEND_CPU\n");
    return 2;
}
