#include "workers.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *prog_of(const server_config *cfg) {
    return cfg->prog ? cfg->prog : "http_bench_server";
}

static int serve_one(const server_config *cfg, int setsize, int ready_fd) {
    server s;
    int rc = 0;
    if (server_init(&s, cfg, setsize) < 0) {
        rc = 1;
    } else {
        if (ready_fd < 0)
            fprintf(stderr, "%s: listening on %s:%d\n", prog_of(cfg),
                    cfg->bind_addr, s.bound_port);
        else if (write(ready_fd, "r", 1) != 1 || close(ready_fd) < 0)
            rc = 1;
        if (!rc) server_run(&s);
    }
    server_free(&s);
    return rc;
}

/* The i-th CPU of the set this process may run on (round robin), or -1. */
static int nth_cpu(const cpu_set_t *allowed, unsigned i) {
    int n = CPU_COUNT(allowed);
    if (n <= 0) return -1;
    unsigned want = i % (unsigned)n;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, allowed) && want-- == 0) return cpu;
    return -1;
}

static void signal_all(const pid_t *pids, unsigned n, int sig) {
    for (unsigned i = 0; i < n; i++)
        if (pids[i] > 0) kill(pids[i], sig);
}

/* Waits for the workers: SIGTERM/SIGINT is passed on to them (each shuts
 * down gracefully), and a worker that ends unasked ends the rest. Returns
 * the exit code: 0 if every worker ended cleanly after being asked. */
static int supervise(const server_config *cfg, const sigset_t *set,
                     pid_t *pids, unsigned n) {
    unsigned live = n;
    int stopping = 0, rc = 0;
    while (live) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig == SIGTERM || sig == SIGINT) {
            if (!stopping) signal_all(pids, n, SIGTERM);
            stopping = 1;
            continue;
        }
        if (sig != SIGCHLD) continue;
        pid_t p;
        int st;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
            unsigned i = 0;
            while (i < n && pids[i] != p) i++;
            if (i == n) continue;
            pids[i] = 0;
            live--;
            int clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (!clean || !stopping) {
                rc = 1;
                fprintf(stderr, "%s: worker %u (pid %d) %s %d%s\n",
                        prog_of(cfg), i, (int)p,
                        WIFSIGNALED(st) ? "killed by signal" : "exited with",
                        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                        stopping ? "" : "; stopping the other workers");
            }
            if (!stopping) signal_all(pids, n, SIGTERM);
            stopping = 1;
        }
    }
    return rc;
}

int workers_serve(const server_config *base, int setsize) {
    if (base->workers <= 1) return serve_one(base, setsize, -1);

    server_config cfg = *base;
    unsigned n = cfg.workers;
    sigset_t set;
    cpu_set_t allowed;
    int ready[2], hold = -1, rc = 1;
    unsigned forked = 0, up = 0;
    pid_t *pids = calloc(n, sizeof(*pids));
    if (!pids) return 1;

    /* Blocked before any fork, so no signal is lost between the forks and
     * sigwaitinfo; the workers unblock nothing they need (server_init
     * takes SIGTERM/SIGINT through a signalfd). */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* Port 0: one port for all, picked here and held (bound, never
     * listening, so it takes no connections) until every worker is bound. */
    if (cfg.port == 0) {
        int port;
        if ((hold = server_bind(&cfg, 0, &port)) < 0) goto out;
        cfg.port = port;
    }
    if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) CPU_ZERO(&allowed);
    if (pipe2(ready, O_CLOEXEC) < 0) goto out;
    for (unsigned i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "%s: fork: %s\n", prog_of(&cfg), strerror(errno));
            break;
        }
        if (p == 0) {
            close(ready[0]);
            if (hold >= 0) close(hold);
            /* Worker i on the i-th CPU it may use: with as many CPUs as
             * workers, each loop has a core of its own. */
            int cpu = nth_cpu(&allowed, i);
            if (cpu >= 0) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof(one), &one);
            }
            exit(serve_one(&cfg, setsize, ready[1]));
        }
        pids[forked++] = p;
    }
    close(ready[1]);
    char b;
    /* Each worker writes a byte once it listens; the pipe ends when every
     * worker has either done so or died. */
    while (up < forked && read(ready[0], &b, 1) == 1) up++;
    close(ready[0]);
    if (up < n) {
        fprintf(stderr, "%s: only %u of %u workers started\n", prog_of(&cfg),
                up, n);
        signal_all(pids, forked, SIGTERM);
        supervise(&cfg, &set, pids, forked);
        goto out;
    }
    fprintf(stderr, "%s: listening on %s:%d\n", prog_of(&cfg), cfg.bind_addr,
            cfg.port);
    fprintf(stderr, "%s: %u workers (SO_REUSEPORT), pinned in turn to the %d "
                    "CPUs this process may use\n",
            prog_of(&cfg), n, CPU_COUNT(&allowed));
    rc = supervise(&cfg, &set, pids, n);
out:
    if (hold >= 0) close(hold);
    free(pids);
    return rc;
}
