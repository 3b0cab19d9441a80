"""Runs one attack case against a live server: a fresh server process, the
legitimate client and the /proc watch around the attack, and the figures the
closing note and the tests need. Also a command line, for the figures of other
servers (h2o, Go) started through scripts/serve.sh:

    python tests/attacks/attack_run.py --case all                 # evloop, -O2 build
    python tests/attacks/attack_run.py --server h2o --case h2_ping_flood
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from attack_cases import CASES as TCP_CASES, Case, Outcome  # noqa: E402
from attack_quic import CASES as QUIC_CASES, big_certificate  # noqa: E402
from attack_watch import LegitProcess, ProcWatch  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
CASES = TCP_CASES + QUIC_CASES
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:",
                     "ERROR: LeakSanitizer")
# ASan keeps freed memory in a quarantine (256 MiB by default), which would make
# RSS measure allocation churn instead of what the server holds.
ASAN_OPTIONS = "detect_leaks=1:quarantine_size_mb=16:abort_on_error=0"


@dataclass
class Result:
    case: str
    server: str
    outcome: str
    cut_off: bool
    seconds_to_cut: float | None
    alive: bool
    rss_before_mib: float
    rss_peak_mib: float
    cpu_s: float
    legit_requests: int
    legit_worst_ms: float
    legit_p99_ms: float
    legit_failures: list
    legit_reconnects: int

    @property
    def rss_growth_mib(self) -> float:
        return self.rss_peak_mib - self.rss_before_mib


class ServerProcess:
    """A server started on a free port: `argv` with {port} filled in; ready when
    the port accepts connections (or, for evloop, its "listening on" line)."""

    def __init__(self, argv: list[str], port: int | None = None,
                 nofile: int | None = None, env: dict | None = None):
        e = dict(os.environ)
        e.setdefault("ASAN_OPTIONS", ASAN_OPTIONS)
        e.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        e.update(env or {})

        def limit() -> None:
            os.setpgrp()
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.argv = [a.replace("{port}", str(port or 0)) for a in argv]
        self.proc = subprocess.Popen(self.argv, stderr=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, env=e,
                                     preexec_fn=limit)
        self.lines: list[str] = []
        self.port = port
        ready = threading.Event()

        def read() -> None:
            for raw in self.proc.stderr:
                line = raw.decode(errors="replace")
                self.lines.append(line)
                m = re.search(r"listening on \S+:(\d+)$", line.strip())
                if m and self.port in (None, 0):
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()
        threading.Thread(target=read, daemon=True).start()
        if port:
            _wait_port(port, 15)
        elif not ready.wait(15) or not self.port:
            self.kill()
            raise RuntimeError("server did not start: " + self.stderr())
        if "falling back to epoll" in self.stderr():
            # a pass on another loop (EVLOOP_LOOP) must not quietly run on epoll
            self.kill()
            raise RuntimeError("server is not on the loop asked for: " + self.stderr())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        return "".join(self.lines)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def sanitizer_report(self) -> str | None:
        out = self.stderr()
        return out if any(m in out for m in SANITIZER_MARKERS) else None

    def terminate(self, timeout: float = 5.0) -> int:
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return -9

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def _wait_port(port: int, seconds: float) -> None:
    import socket
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def run_case(case: Case, srv: ServerProcess, server: str = "evloop",
             settle_s: float = 0.5) -> Result:
    pid = srv.pid          # its whole process tree is watched
    if case.setup:
        case.setup()
    legit = LegitProcess(srv.port, h3=case.protocol == "h3").start()
    time.sleep(settle_s)               # the legit client's first answers
    watch = ProcWatch(pid)
    t_attack = time.monotonic()        # the legit client's latency counts from here
    try:
        outcome = case.run(srv.port)
    except Exception as e:  # noqa: BLE001 -- an attack that breaks is a finding
        outcome = Outcome(f"attack client failed: {e!r}", cut_off=False)
    time.sleep(settle_s)
    rss0, peak, cpu = watch.stop()
    stats = legit.stop()
    # latency while the attack ran; every failure of the client counts, before it too
    lat = sorted(stats.latencies_since(t_attack))
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan")
    return Result(case.name, server, outcome.summary, outcome.cut_off,
                  outcome.seconds_to_cut, srv.alive(), round(rss0, 1),
                  round(peak, 1), round(cpu, 2), len(lat),
                  round(max(lat, default=float("nan")), 1), round(p99, 1),
                  [f for _, f in stats.failures][:5], stats.reconnects)


def evloop_argv(binary: pathlib.Path, case: Case) -> list[str]:
    """The C server's command line for a case; EVLOOP_LOOP=NAME adds `--loop NAME` (the test
    command runs the attacks on each event-loop backend). A QUIC case runs the TLS build of the
    same name (https_bench_server) with HTTP/3 on and a large certificate (attack_quic.py)."""
    loop = os.environ.get("EVLOOP_LOOP")
    lead: tuple[str, ...] = ()
    if case.protocol == "h3":
        binary = binary.with_name(binary.name.replace("http_", "https_"))
        lead = (*big_certificate(), "--h3", "yes")
    return [str(binary), "0", *lead, *case.evloop_args, *(("--loop", loop) if loop else ())]


def serve_argv(name: str, mode: str) -> list[str]:
    return [str(REPO / "scripts" / "serve.sh"), name, "{port}", "--mode", mode]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default="evloop",
                    help="evloop (the binary of --bin) or a lab server name "
                         "started with scripts/serve.sh (h2o, go, ...)")
    ap.add_argument("--bin", default=str(REPO / "build/bench/http_bench_server"))
    ap.add_argument("--case", default="all", help="a case name, or all")
    ap.add_argument("--port", type=int, default=18700)
    ap.add_argument("--json", help="append results here (JSON lines)")
    args = ap.parse_args()
    cases = [c for c in CASES if args.case in ("all", c.name)]
    if not cases:
        ap.error(f"unknown case {args.case}; cases: "
                 + ", ".join(c.name for c in CASES))
    for case in cases:
        if args.server == "evloop":
            # pinned like serve.sh pins the other servers
            pin = ["taskset", "-c", os.environ.get("SERVER_CPUS", "0")]
            srv = ServerProcess(pin + evloop_argv(pathlib.Path(args.bin), case),
                                nofile=case.prlimit_nofile)
        else:
            mode = "h2c" if case.protocol == "h2" else "h1"
            srv = ServerProcess(serve_argv(args.server, mode), port=args.port,
                                nofile=case.prlimit_nofile)
        try:
            r = run_case(case, srv, args.server)
        finally:
            srv.terminate()
        line = {**asdict(r), "rss_growth_mib": round(r.rss_growth_mib, 1)}
        print(json.dumps(line), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
