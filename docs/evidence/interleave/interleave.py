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

With the CPU time of each server's threads (schedstat) read around its run or its whole sliced
window, each line also gives "server.cpu=CPU_us_per_request". SERVERS=floor,evloop picks the servers (default: floor, evloop, a second evloop (the A/A copy), Go's
net/http server with GOMAXPROCS=1, floor_uring). Lines printed: "DESIGN REP server=req_per_s ...".
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


def wrk(port: int, seconds: int) -> list[str]:
    return ["taskset", "-c", "1", "wrk", "-t1", "-c100", f"-d{seconds}s", "--timeout", "10s",
            f"http://127.0.0.1:{port}/ping"]


def servers_up(names: list[str]) -> tuple[dict[str, int], list[subprocess.Popen]]:
    ports, procs = {}, []
    for i, name in enumerate(names):
        ports[name] = FIRST_PORT + i
        cmd = [a.format(port=ports[name]) for a in COMMANDS[name]]
        env = dict(os.environ, GOMAXPROCS="1")
        procs.append(subprocess.Popen(["taskset", "-c", "0", *cmd], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for name, port in ports.items():
        for _ in range(200):
            if subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}/ping"]).returncode == 0:
                break
            time.sleep(0.02)
        else:
            raise SystemExit(f"{name} did not answer on port {port}")
    return ports, procs


def cpu_ns(pid: int) -> int:
    """The process's CPU time so far, every thread's (schedstat: nanoseconds, not 10 ms ticks)."""
    return sum(int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir())


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
    for _ in range(round(active_s / slice_s)):
        for n in names:
            t0 = time.monotonic()
            os.kill(procs[n].pid, signal.SIGCONT)
            time.sleep(slice_s)
            os.kill(procs[n].pid, signal.SIGSTOP)
            ran[n] += time.monotonic() - t0
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


def analyse(files: list[str]) -> None:
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for f in files:
        for line in open(f):
            parts = line.split()
            if len(parts) > 2 and "=" in parts[2]:
                rows[parts[0]].append({k: math.log(float(v)) for k, v in (p.split("=") for p in parts[2:])})
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


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "analyse":
        return analyse(args)
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
                rates, label = sliced(ports, pids, slice_s), f"sliced-{slice_s}"
            print(label, rep, " ".join(f"{n}={v:.0f}" if "." not in n else f"{n}={v:.4f}"
                                       for n, v in sorted(rates.items())), flush=True)
    finally:
        for p in procs:
            p.terminate()


if __name__ == "__main__":
    main()
