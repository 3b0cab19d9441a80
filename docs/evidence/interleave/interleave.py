"""Interleaved slices against contiguous runs: how close in time must a pair's two runs be?

docs/method.md ("Interleaved slices") reads this study. Outside the harness, with the lab's own binaries
(build/bench after scripts/build.sh), the servers on CPU 0 and wrk (one thread, 100 connections,
GET /ping) on CPU 1, the servers started once and kept up:

  interleave.py series SECONDS          one wrk run against the floor; the loopback device's packet count
                                        every 0.25 s (two packets per request here): the run's own rate
                                        over time
  interleave.py contiguous REPS         per rep, every server's 1 s wrk run, one after the other, in a
                                        random order (the harness's design at 1 s)
  interleave.py sliced REPS [SLICE]     per rep, one wrk per server, all started stopped (SIGSTOP) and
                                        given SLICE seconds (0.25) in turn until each has had 1 s; a
                                        tool's rate is its requests over the seconds it ran
  interleave.py analyse FILE...         the spread of every pair's per-rep log ratio, per design
  interleave.py bias REF FILE...        per server, sliced against contiguous, each relative to REF
                                        (DESIGNS=sliced-0.1,sliced-0.25: two other designs)

With the CPU time of each server's threads (schedstat) read around its run or its whole sliced
window, each line also gives "server.cpu=CPU_us_per_request". SERVERS=floor,evloop picks the servers (default: floor, evloop, a second evloop (the A/A copy), Go's
net/http server with GOMAXPROCS=1, floor_uring); any other name is one of the lab's servers, started
with scripts/serve.sh on CPU 0 as the suites start it (its manifest's command). ROUTE=/ loads another
route than /ping (the languages suite's servers serve /). Lines printed: "DESIGN REP server=req_per_s
...".
"""
from __future__ import annotations

import ctypes
import itertools
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "build" / "bench"
COMMANDS = {
    "floor": [str(BENCH / "floor"), "{port}", "127.0.0.1"],
    "floor_uring": [str(BENCH / "floor_uring"), "{port}", "127.0.0.1"],
    "evloop": [str(BENCH / "http_bench_server"), "{port}", "--bind", "127.0.0.1", "--workers", "1"],
    "evloop_aa": [str(BENCH / "http_bench_server"), "{port}", "--bind", "127.0.0.1", "--workers", "1"],
    "go": [str(BENCH / "go_http_bench"), "{port}", "127.0.0.1"],
}
FIRST_PORT = 19991
SYS_TGKILL = 234  # x86-64


ROUTE = os.environ.get("ROUTE", "/ping")


def wrk(port: int, seconds: int) -> list[str]:
    return ["taskset", "-c", "1", "wrk", "-t1", "-c100", f"-d{seconds}s", "--timeout", "10s",
            f"http://127.0.0.1:{port}{ROUTE}"]


def servers_up(names: list[str]) -> tuple[dict[str, int], list[subprocess.Popen]]:
    ports, procs = {}, []
    for i, name in enumerate(names):
        ports[name] = FIRST_PORT + i
        env = dict(os.environ, GOMAXPROCS="1", SERVER_CPUS="0", CLIENT_CPUS="1")
        if name in COMMANDS:
            cmd = ["taskset", "-c", "0", *(a.format(port=ports[name]) for a in COMMANDS[name])]
        else:
            # serve.sh pins the server itself, and refuses a machine it sees as one core: it must
            # not inherit this script's own pinning to the client CPU
            cmd = [str(ROOT / "scripts" / "serve.sh"), name, str(ports[name])]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      preexec_fn=lambda: os.sched_setaffinity(0, range(os.cpu_count()))))
    for name, port in ports.items():
        for _ in range(200):
            if subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}{ROUTE}"]).returncode == 0:
                break
            time.sleep(0.05)
        else:
            for p in procs:
                p.terminate()
            raise SystemExit(f"{name} did not answer on port {port}")
    return ports, procs


def tree(pid: int) -> list[int]:
    """pid and its descendants (a server of several processes: nginx's workers, uvicorn's)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def cpu_ns(pid: int) -> int:
    """The process tree's CPU time so far, every thread's (schedstat: nanoseconds, not 10 ms ticks)."""
    return sum(int((task / "schedstat").read_text().split()[0])
               for p in tree(pid) for task in Path(f"/proc/{p}/task").iterdir())


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]


def contiguous(ports: dict[str, int], pids: dict[str, int]) -> dict[str, float]:
    names = list(ports)
    random.shuffle(names)
    rates = {}
    for name in names:
        c0 = cpu_ns(pids[name])
        out = subprocess.run(wrk(ports[name], 1), capture_output=True, text=True, check=True).stdout
        rates[name] = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        rates[f"{name}.cpu"] = (cpu_ns(pids[name]) - c0) / 1000 / int(re.search(r"(\d+) requests in ", out).group(1))
    return rates


def sliced(ports: dict[str, int], pids: dict[str, int], slice_s: float, active_s: float = 1.0) -> dict[str, float]:
    """Each tool starts stopped (its shell stops itself before exec), runs only in its slices, and is
    ended by SIGINT to its main thread (wrk's sleep ends the run; a process-directed signal may land on
    the worker thread instead, which then stops loading while main sleeps on)."""
    names = list(ports)
    random.shuffle(names)
    procs = {n: subprocess.Popen(["sh", "-c", 'kill -STOP $$; exec "$@"', "sh", *wrk(ports[n], 600)],
                                 stdout=subprocess.PIPE, text=True) for n in names}
    for p in procs.values():
        while state(p.pid) != "T":
            time.sleep(0.002)
    ran = dict.fromkeys(names, 0.0)
    cpu0 = {n: cpu_ns(pids[n]) for n in names}
    # FREEZE=1: each server is stopped too outside its own slices (its whole process tree), so
    # that nothing of it runs in another server's seconds (a runtime's idle-time work: Go's GC)
    freeze = os.environ.get("FREEZE") == "1"
    trees = {n: tree(pids[n]) for n in names}

    def servers(n: str, sig: int) -> None:
        for p in trees[n] if freeze else ():
            os.kill(p, sig)
    for n in names:
        servers(n, signal.SIGSTOP)
    for _ in range(round(active_s / slice_s)):
        for n in names:
            t0 = time.monotonic()
            servers(n, signal.SIGCONT)
            os.kill(procs[n].pid, signal.SIGCONT)
            time.sleep(slice_s)
            os.kill(procs[n].pid, signal.SIGSTOP)
            servers(n, signal.SIGSTOP)
            ran[n] += time.monotonic() - t0
    for n in names:
        servers(n, signal.SIGCONT)
    libc = ctypes.CDLL(None, use_errno=True)
    rates = {}
    for n in names:
        p = procs[n]
        libc.syscall(SYS_TGKILL, p.pid, p.pid, signal.SIGINT)
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGCONT)
        out = p.communicate()[0]
        ran[n] += time.monotonic() - t0  # the tail: wrk's worker stops at its next 100 ms tick
        requests = int(re.search(r"(\d+) requests in ", out).group(1))
        rates[n] = requests / ran[n]
        rates[f"{n}.cpu"] = (cpu_ns(pids[n]) - cpu0[n]) / 1000 / requests
    return rates


def series(seconds: int) -> None:
    def lo_packets() -> int:
        for line in Path("/proc/net/dev").read_text().splitlines():
            if line.strip().startswith("lo:"):
                return int(line.split()[2])
        raise SystemExit("no lo in /proc/net/dev")
    ports, procs = servers_up(["floor"])
    tool = subprocess.Popen(wrk(ports["floor"], seconds + 2), stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    t0, prev, counts = time.monotonic(), lo_packets(), []
    for k in range(1, 4 * seconds + 1):
        time.sleep(max(0.0, t0 + 0.25 * k - time.monotonic()))
        cur = lo_packets()
        counts.append(cur - prev)
        prev = cur
    tool.wait()
    for p in procs:
        p.terminate()
    print(" ".join(map(str, counts)))


def read_reps(files: list[str]) -> dict[str, list[dict[str, float]]]:
    """The study's lines, per design: each rep's {server or server.cpu: log of its figure}."""
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for f in files:
        for line in open(f):
            parts = line.split()
            if len(parts) > 2 and "=" in parts[2]:
                rows[parts[0]].append({k: math.log(float(v)) for k, v in (p.split("=") for p in parts[2:])})
    return rows


def analyse(files: list[str]) -> None:
    rows = read_reps(files)
    for design, reps in rows.items():
        for metric, unit in (("", "req/s"), (".cpu", "CPU-us per request")):
            names = sorted(k for k in reps[0] if "." not in k and f"{k}{metric}" in reps[0])
            if len(names) < 2:
                continue
            sds = sorted(statistics.stdev(r[a + metric] - r[b + metric] for r in reps)
                         for a, b in itertools.combinations(names, 2))
            scale = 1000 if not metric else 1
            means = " ".join(f"{n} {math.exp(statistics.mean(r[n + metric] for r in reps)) / scale:.{0 if not metric else 2}f}"
                             for n in names)
            print(f"{design}, {unit}: {len(reps)} reps, {len(sds)} pairs; s of a pair's log ratio: median "
                  f"{statistics.median(sds):.3f}, max {sds[-1]:.3f}; geometric means{' (k)' if not metric else ''} {means}")


def bias(files: list[str], ref: str, design_a: str = "sliced-0.25", design_b: str = "contiguous") -> None:
    """Per server, how its figure relative to REF's differs between two designs (by default sliced
    and contiguous): exp(mean log(x/ref) in A − mean log(x/ref) in B) − 1, with a 95 % interval from
    the two designs' spreads (each rep a pair in its own design; the designs' reps independent)."""
    rows = read_reps(files)
    sliced_rows, contiguous_rows = rows[design_a], rows[design_b]
    for metric, unit in (("", "req/s"), (".cpu", "CPU-us per request")):
        common = set.intersection(*(set(r) for r in sliced_rows + contiguous_rows))
        names = sorted(k for k in common if "." not in k and k != ref and f"{k}{metric}" in common)
        out = []
        for n in names:
            d = [[r[n + metric] - r[ref + metric] for r in rs] for rs in (sliced_rows, contiguous_rows)]
            diff = statistics.mean(d[0]) - statistics.mean(d[1])
            se = math.sqrt(sum(statistics.variance(x) / len(x) for x in d))
            out.append(f"{n} {math.expm1(diff):+.1%} [{math.expm1(diff - 1.96 * se):+.1%}, {math.expm1(diff + 1.96 * se):+.1%}]")
        if names:
            print(f"{design_a} against {design_b}, {unit}, relative to {ref} ({len(sliced_rows)} and "
                  f"{len(contiguous_rows)} reps): " + "; ".join(out))


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "analyse":
        return analyse(args)
    if mode == "bias":
        designs = os.environ.get("DESIGNS", "sliced-0.25,contiguous").split(",")
        return bias(args[1:], args[0], *designs)
    if mode == "series":
        return series(int(args[0]))
    names = os.environ.get("SERVERS", "floor,evloop,evloop_aa,go,floor_uring").split(",")
    ports, procs = servers_up(names)
    pids = {n: p.pid for n, p in zip(names, procs)}
    try:
        for rep in range(int(args[0])):
            if mode == "contiguous":
                rates, label = contiguous(ports, pids), "contiguous"
            else:
                slice_s = float(args[1]) if len(args) > 1 else 0.25
                rates, label = sliced(ports, pids, slice_s), f"sliced{'-frozen' if os.environ.get('FREEZE') == '1' else ''}-{slice_s}"
            print(label, rep, " ".join(f"{n}={v:.0f}" if "." not in n else f"{n}={v:.4f}"
                                       for n, v in sorted(rates.items())), flush=True)
    finally:
        for p in procs:
            p.terminate()


if __name__ == "__main__":
    main()
