"""Adds a fake-but-realistic h2c suite (the layout the h2c shell script writes) to a fake raw run,
built from the REAL h2load fixtures in tests/fixtures/h2load/ (nghttp2 1.52 stdout and a real
--log-file), with per-server speed factors and per-rep jitter.

    python tests/unit/make_fake_h2c.py /tmp/raw            # http1 + h2c suites -> /tmp/raw/<run_id>/
    python tests/unit/make_fake_h2c.py /tmp/raw --no-http1 # h2c suite only

From tests: `from make_fake_h2c import make_fake_h2c_run`.
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from httplab.parse.h2log import compact_log, histogram_from, write_compact
from make_fake_run import (join_suite, make_fake_run, write_meta, write_server_json, write_suite_done,
                           write_verify)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "h2load"


@dataclass(frozen=True)
class FakeH2Scenario:
    name: str
    route: str
    method: str
    size_bytes: int
    connections: int
    fixture: str  # throughput-run stdout stem in tests/fixtures/h2load


H2_SCENARIOS: tuple[FakeH2Scenario, ...] = (
    FakeH2Scenario("get_ping_c50", "/ping", "GET", 0, 50, "clean_ping"),
    FakeH2Scenario("get_ping_c100", "/ping", "GET", 0, 100, "clean_ping"),
    FakeH2Scenario("get_ping_c200", "/ping", "GET", 0, 200, "clean_ping"),
    FakeH2Scenario("get_echo_s64_c100", "/echo", "GET", 64, 100, "clean_ping"),
    FakeH2Scenario("get_echo_s4096_c100", "/echo", "GET", 4096, 100, "echo_4k"),
    FakeH2Scenario("post_echo_b1024_c100", "/echo", "POST", 1024, 100, "post_1k"),
)
SPEED = {"evloop": 3.0, "go": 1.0, "h2o": 2.4, "nginx": 1.8}
CPU_US = {"evloop": 4.0, "go": 14.0, "h2o": 5.0, "nginx": 7.0}
RSS_KB = {"evloop": 2_300, "go": 11_000, "h2o": 9_000, "nginx": 4_500}
LOG_SLOWDOWN = 0.85  # the latency run's req/s relative to the throughput run


def _h2_size(n: float) -> str:
    """h2load's binary size format: '641.27KB', '1.25MB', '0B'."""
    for unit, scale in (("GB", 1024.0**3), ("MB", 1024.0**2), ("KB", 1024.0)):
        if n >= scale:
            return f"{n / scale:.2f}{unit}"
    return f"{n:.0f}B"


def scale_h2load_text(text: str, factor: float) -> tuple[str, int]:
    """(text, done) of a real h2load stdout with request and byte counts scaled by factor and the
    request times by 1/factor; req/s and the byte rate recomputed over the 2 s main duration."""
    main = float(re.search(r"and (\d+(?:\.\d+)?)s of main duration", text).group(1))
    m = re.search(r"requests: (\d+) total", text)
    done = int(round(int(m.group(1)) * factor))
    text = re.sub(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed",
                  lambda mm: (f"requests: {done} total, {done} started, {done} done, "
                              f"{done - int(mm.group(2))} succeeded, {mm.group(2)} failed"), text)
    text = re.sub(r"status codes: (\d+) 2xx", lambda mm: f"status codes: {int(round(int(mm.group(1)) * factor))} 2xx",
                  text)
    total = None

    def traffic(mm: re.Match) -> str:
        nonlocal total
        total = int(round(int(mm.group(1)) * factor))
        return f"traffic: {_h2_size(total)} ({total}) total"
    text = re.sub(r"traffic: \S+ \((\d+)\) total", traffic, text)
    text = re.sub(r"finished in (\S+), \S+ req/s, \S+/s",
                  lambda mm: f"finished in {mm.group(1)}, {done / main:.2f} req/s, {_h2_size(total / main)}/s",
                  text)

    def times(mm: re.Match) -> str:
        vals = []
        for tok in mm.group(2).split()[:4]:
            num, unit = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)", tok).groups()
            us = float(num) * {"us": 1, "ms": 1e3, "s": 1e6}[unit] / factor
            vals.append(f"{us:.0f}us" if us < 1000 else f"{us / 1000:.2f}ms")
        return mm.group(1) + "".join(f"{v:>12}" for v in vals) + mm.group(3)
    text = re.sub(r"^(time for request:)((?:\s+\S+){4})(\s+\S+%)$", times, text, flags=re.M)
    return text, done


def _fake_log(factor: float, done: int):
    """Compact form of the real log fixture, durations / factor, counts rescaled to `done` lines."""
    real = compact_log(FIXTURES / "log_ping.log.tsv")
    vals = np.maximum(1, np.round(real.hist_values_us / factor)).astype(np.int64)
    counts = real.hist_counts.astype(np.float64) * done / real.requests
    counts = np.floor(counts).astype(np.int64)
    counts[np.argmax(counts)] += done - int(counts.sum())
    uniq, inv = np.unique(vals, return_inverse=True)
    merged = np.bincount(inv, weights=counts).astype(np.int64)
    first = real.first_start_us
    return histogram_from(uniq, merged, {200: done}, first, first + 2_000_000, "r.lat.log")


def add_h2c_suite(run_dir: str | Path, servers: tuple[str, ...] = ("evloop", "go", "h2o", "nginx"),
                  reps: int = 5, scenarios: tuple[FakeH2Scenario, ...] = H2_SCENARIOS,
                  only: dict[str, tuple[str, ...]] | None = None,
                  failed: tuple[tuple[str, str, int], ...] = (("go", "get_ping_c200", 2),),
                  missing_log: tuple[tuple[str, str, int], ...] = (("evloop", "get_echo_s64_c100", 3),),
                  seed: int = 7) -> Path:
    """Write raw/<run_id>/h2c/ into an existing fake run dir and add "h2c" to meta.json's suites.

    only: server -> scenario names it has (default: nginx only GET /ping, like a reference server
    that serves a subset). failed: points whose throughput run is the real 404 fixture.
    missing_log: points whose r<rep>.lat.h2log.json is missing (failed: 'latency run: ... missing').
    """
    run_dir = Path(run_dir)
    rng = np.random.default_rng(seed)
    only = {"nginx": ("get_ping_c50", "get_ping_c100", "get_ping_c200")} if only is None else only
    suite_dir = join_suite(run_dir, "h2c", {"h2load": "h2load nghttp2/1.52.0"})
    lat_text = (FIXTURES / "log_ping.stdout.txt").read_text()
    for server in servers:
        srv_dir = suite_dir / server
        write_verify(srv_dir, reps,
                     "PASS GET /ping (h2c) -> 200, body ok\n"
                     "PASS GET /echo?size=64 (h2c) -> 200, body ok\n"
                     "PASS POST /echo 1024 B (h2c) -> 200, body ok\n")
        for sc in scenarios:
            if server in only and sc.name not in only[server]:
                continue
            sdir = srv_dir / sc.name
            sdir.mkdir(exist_ok=True)
            (sdir / "scenario.json").write_text(json.dumps({
                "suite": "h2c", "protocol": "h2", "tls": False, "tool": "h2load", "server": server,
                "scenario": sc.name, "route": sc.route, "method": sc.method, "size_bytes": sc.size_bytes,
                "connections": sc.connections, "streams": 10, "pipeline": 1, "client_threads": 1,
                "duration_s": 2, "warmup_s": 1, "url": f"http://127.0.0.1:18080{sc.route}"}))
            for rep in range(1, reps + 1):
                factor = SPEED.get(server, 1.0) * (1 + rng.normal(0, 0.02))
                if (server, sc.name, rep) in failed:
                    thr = (FIXTURES / "not_found.stdout.txt").read_text()
                    done = int(re.search(r"(\d+) done", thr).group(1))
                else:
                    thr, done = scale_h2load_text((FIXTURES / f"{sc.fixture}.stdout.txt").read_text(), factor)
                lat, lat_done = scale_h2load_text(lat_text, factor * LOG_SLOWDOWN * (1 + rng.normal(0, 0.01)))
                (sdir / f"r{rep}.stdout.txt").write_text(thr)
                (sdir / f"r{rep}.stderr.txt").write_text("")
                (sdir / f"r{rep}.lat.stdout.txt").write_text(lat)
                (sdir / f"r{rep}.lat.stderr.txt").write_text("")
                if (server, sc.name, rep) not in missing_log:
                    write_compact(_fake_log(factor * LOG_SLOWDOWN, lat_done), sdir / f"r{rep}.lat.h2log.json")
                cpu_s = done * CPU_US.get(server, 8.0) * (1 + rng.normal(0, 0.03)) / 1e6
                write_server_json(sdir / f"r{rep}.server.json", pids=[4343], before=2000 + 41 * rep,
                                  cpu_s=cpu_s, wall_s=2.0, rss_kb=RSS_KB.get(server, 5000),
                                  rss_peak_kb=RSS_KB.get(server, 5000) + 40 * rep)
                (sdir / f"r{rep}.run.json").write_text(json.dumps({
                    "rep": rep, "start_utc": "2026-11-21T12:31:00Z", "end_utc": "2026-11-21T12:31:07Z",
                    "exit_code": 0, "lat_exit_code": 0, "server_alive": True,
                    "cmd": f"h2load -t1 -c{sc.connections} -m10 -D 2 --warm-up-time=1 ..."}))
    write_suite_done(suite_dir, "2026-11-21T12:45:00Z")
    return run_dir


def make_fake_h2c_run(raw_root: str | Path, run_id: str = "20261121T120000Z-fakeh2", with_http1: bool = True,
                      reps: int = 5, **kw) -> Path:
    """A fake run with an h2c suite (and, by default, an http1 suite beside it, for the
    HTTP/2 vs HTTP/1.1 table). Without http1 the run dir only has meta.json and h2c/."""
    if with_http1:
        run_dir = make_fake_run(raw_root, run_id, reps=reps, failed=(), unfinished=())
    else:
        run_dir = Path(raw_root) / run_id
        write_meta(run_dir, start_utc="2026-11-21T12:00:00Z", end_utc="2026-11-21T12:45:00Z")
    return add_h2c_suite(run_dir, reps=reps, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_root")
    ap.add_argument("--run-id", default="20261121T120000Z-fakeh2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-http1", action="store_true")
    args = ap.parse_args()
    print(make_fake_h2c_run(args.raw_root, args.run_id, not args.no_http1, args.reps))


if __name__ == "__main__":
    main()
