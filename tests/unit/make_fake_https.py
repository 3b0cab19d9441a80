"""Adds a fake-but-realistic https suite (seed 002: HTTPS/1.1 with wrk, HTTPS/2 with h2load and
ALPN) to a fake raw run, built from the REAL TLS captures in tests/fixtures/tls/ (wrk over TLS with
the lab's Lua hook, h2load over TLS, `openssl s_client -brief` reports, certificate.txt), with
per-server speed factors and per-rep jitter.

    python tests/unit/make_fake_https.py /tmp/raw             # http1 + h2c + https -> /tmp/raw/<run_id>/
    python tests/unit/make_fake_https.py /tmp/raw --alone     # https suite only
    python tests/unit/make_fake_https.py /tmp/raw --into raw/20261121T061254Z-vm-copy
                                                              # add https to an existing (copied) run

From tests: `from make_fake_https import make_fake_https_run, add_https_suite`.
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from httplab.parse.h2log import histogram_from, read_compact, write_compact
from make_fake_h2c import make_fake_h2c_run, scale_h2load_text
from make_fake_run import (join_suite, scale_wrk_capture, write_meta, write_server_json, write_suite_done,
                           write_verify)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tls"


@dataclass(frozen=True)
class FakeHttpsScenario:
    name: str
    protocol: str  # h1 | h2
    route: str
    method: str
    size_bytes: int
    connections: int
    fixture: str  # stem in tests/fixtures/tls (wrk: .wrk.json/.stdout.txt; h2load: .stdout.txt)


HTTPS_SCENARIOS: tuple[FakeHttpsScenario, ...] = (
    FakeHttpsScenario("h1_get_ping_c50", "h1", "/ping", "GET", 0, 50, "h1_ping"),
    FakeHttpsScenario("h1_get_ping_c100", "h1", "/ping", "GET", 0, 100, "h1_ping"),
    FakeHttpsScenario("h1_get_ping_c500", "h1", "/ping", "GET", 0, 500, "h1_ping"),
    FakeHttpsScenario("h1_get_echo_s1024_c100", "h1", "/echo", "GET", 1024, 100, "h1_echo_1k"),
    FakeHttpsScenario("h2_get_ping_c50", "h2", "/ping", "GET", 0, 50, "h2_ping"),
    FakeHttpsScenario("h2_get_ping_c100", "h2", "/ping", "GET", 0, 100, "h2_ping"),
    FakeHttpsScenario("h2_get_echo_s64_c100", "h2", "/echo", "GET", 64, 100, "h2_ping"),
    FakeHttpsScenario("h2_get_echo_s4096_c100", "h2", "/echo", "GET", 4096, 100, "h2_echo_4k"),
    FakeHttpsScenario("h2_post_echo_b4096_c100", "h2", "/echo", "POST", 4096, 100, "h2_post_4k"),
)
SPEED = {"evloop": 1.9, "go": 1.0, "h2o": 1.7, "nginx": 1.5}
H1_SPEED = {"evloop": 0.97, "go": 1.0, "h2o": 1.05, "nginx": 1.1}  # HTTPS/1.1: TLS-bound, close
CPU_US = {"evloop": 9.0, "go": 21.0, "h2o": 10.0, "nginx": 11.0}
RSS_KB = {"evloop": 6_100, "go": 14_800, "h2o": 12_000, "nginx": 7_300}
LOG_SLOWDOWN = 0.85


def _perturb_wrk(stem: str, factor: float) -> tuple[str, str]:
    """(hook json, stdout) of a real wrk-over-TLS fixture: requests × factor, latencies / factor."""
    return scale_wrk_capture(FIXTURES / f"{stem}.wrk.json", FIXTURES / f"{stem}.stdout.txt", factor)


def _fake_log(factor: float, done: int):
    """The real TLS latency-run histogram (compact form), durations / factor, counts rescaled."""
    real = read_compact(FIXTURES / "h2_ping.lat.h2log.json")
    vals = np.maximum(1, np.round(real.hist_values_us / factor)).astype(np.int64)
    counts = np.floor(real.hist_counts.astype(np.float64) * done / real.hist_counts.sum()).astype(np.int64)
    counts[np.argmax(counts)] += done - int(counts.sum())
    uniq, inv = np.unique(vals, return_inverse=True)
    merged = np.bincount(inv, weights=counts).astype(np.int64)
    return histogram_from(uniq, merged, {200: done}, 0, 2_000_000, "r.lat.log")


def add_https_suite(run_dir: str | Path, servers: tuple[str, ...] = ("evloop", "go", "h2o", "nginx"),
                    reps: int = 5, scenarios: tuple[FakeHttpsScenario, ...] = HTTPS_SCENARIOS,
                    no_post: tuple[str, ...] = ("h2o", "nginx"),
                    alpn_mismatch: tuple[tuple[str, str, int], ...] = (("go", "h2_get_ping_c100", 3),),
                    h2load_h1: tuple[tuple[str, str, int], ...] = (("evloop", "h2_get_echo_s64_c100", 2),),
                    missing_tls: tuple[tuple[str, str, int], ...] = (),
                    certificate: bool = True, seed: int = 11) -> Path:
    """Write raw/<run_id>/https/ into an existing run dir and add "https" to meta.json's suites.

    no_post: servers without POST /echo (the reference servers). alpn_mismatch: h2 points whose
    tls.txt is the real s_client report of a TLS 1.2 handshake that negotiated ALPN http/1.1
    (failed: ALPN mismatch). h2load_h1: h2 points whose throughput run is the real `h2load --h1`
    capture (Application protocol: http/1.1; failed by the h2load loader). missing_tls: points
    written without r<rep>.tls.txt (failed)."""
    run_dir = Path(run_dir)
    rng = np.random.default_rng(seed)
    suite_dir = join_suite(run_dir, "https", {"openssl": "OpenSSL 3.0.22 25 Aug 2026"})
    if certificate:
        (suite_dir / "certificate.txt").write_text((FIXTURES / "certificate.txt").read_text())
    lat_text = (FIXTURES / "h2_ping.lat.stdout.txt").read_text()
    for server in servers:
        srv_dir = suite_dir / server
        write_verify(srv_dir, reps,
                     "PASS GET /ping (HTTPS/1.1) -> 200, Content-Length 4, body ok\n"
                     "PASS GET /ping (HTTPS/2, ALPN h2) -> 200, body ok\n"
                     "PASS GET /echo?size=1024 (HTTPS/2, ALPN h2) -> 200, body ok\n")
        for sc in scenarios:
            if server in no_post and sc.method == "POST":
                continue
            sdir = srv_dir / sc.name
            sdir.mkdir(exist_ok=True)
            tool = "wrk" if sc.protocol == "h1" else "h2load"
            (sdir / "scenario.json").write_text(json.dumps({
                "suite": "https", "protocol": sc.protocol, "tls": True, "tool": tool, "server": server,
                "scenario": sc.name, "route": sc.route, "method": sc.method, "size_bytes": sc.size_bytes,
                "connections": sc.connections, "streams": 10 if sc.protocol == "h2" else 1, "pipeline": 1,
                "client_threads": 1, "duration_s": 2 if tool == "h2load" else 1, "warmup_s": 1,
                "url": f"https://127.0.0.1:18443{sc.route}"}))
            for rep in range(1, reps + 1):
                key = (server, sc.name, rep)
                speed = (H1_SPEED if sc.protocol == "h1" else SPEED).get(server, 1.0)
                factor = speed * (1 + rng.normal(0, 0.02))
                if sc.protocol == "h1":
                    jtext, stdout = _perturb_wrk(sc.fixture, factor)
                    doc = json.loads(jtext)
                    (sdir / f"r{rep}.wrk.json").write_text(jtext)
                    (sdir / f"r{rep}.stdout.txt").write_text(stdout)
                    done, wall = doc["summary"]["requests"], doc["summary"]["duration_us"] / 1e6
                    tls_fixture = "h1_tls13.brief.tls.txt"
                else:
                    if key in h2load_h1:
                        thr = (FIXTURES / "h2_as_h1.stdout.txt").read_text()
                        done = int(re.search(r"(\d+) done", thr).group(1))
                    else:
                        thr, done = scale_h2load_text((FIXTURES / f"{sc.fixture}.stdout.txt").read_text(), factor)
                    lat, lat_done = scale_h2load_text(lat_text, factor * LOG_SLOWDOWN * (1 + rng.normal(0, 0.01)))
                    (sdir / f"r{rep}.stdout.txt").write_text(thr)
                    (sdir / f"r{rep}.lat.stdout.txt").write_text(lat)
                    (sdir / f"r{rep}.lat.stderr.txt").write_text("")
                    write_compact(_fake_log(factor * LOG_SLOWDOWN, lat_done), sdir / f"r{rep}.lat.h2log.json")
                    wall = 2.0
                    tls_fixture = "h1_tls12.full.tls.txt" if key in alpn_mismatch else "h2_tls13.brief.tls.txt"
                (sdir / f"r{rep}.stderr.txt").write_text("")
                if key not in missing_tls:
                    (sdir / f"r{rep}.tls.txt").write_text((FIXTURES / tls_fixture).read_text())
                cpu_s = done * CPU_US.get(server, 12.0) * (1 + rng.normal(0, 0.03)) / 1e6
                write_server_json(sdir / f"r{rep}.server.json", pids=[4444], before=3000 + 43 * rep,
                                  cpu_s=cpu_s, wall_s=wall, rss_kb=RSS_KB.get(server, 8000),
                                  rss_peak_kb=RSS_KB.get(server, 8000) + 60 * rep)
                run = {"rep": rep, "start_utc": "2026-11-21T12:46:00Z", "end_utc": "2026-11-21T12:46:07Z",
                       "exit_code": 0, "server_alive": True, "cmd": f"{tool} ... {sc.route}"}
                if tool == "h2load":
                    run["lat_exit_code"] = 0
                (sdir / f"r{rep}.run.json").write_text(json.dumps(run))
    write_suite_done(suite_dir, "2026-11-21T13:05:00Z")
    return run_dir


def make_fake_https_run(raw_root: str | Path, run_id: str = "20261121T120000Z-fakehttps",
                        with_others: bool = True, reps: int = 5, **kw) -> Path:
    """A fake run with an https suite and, by default, the http1 and h2c suites beside it (for
    the TLS-cost tables). Without them the run dir only has meta.json and https/."""
    if with_others:
        run_dir = make_fake_h2c_run(raw_root, run_id, with_http1=True, reps=reps)
    else:
        run_dir = Path(raw_root) / run_id
        write_meta(run_dir, start_utc="2026-11-21T12:00:00Z", end_utc="2026-11-21T13:05:00Z")
    return add_https_suite(run_dir, reps=reps, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_root", nargs="?")
    ap.add_argument("--run-id", default="20261121T120000Z-fakehttps")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--alone", action="store_true", help="no http1/h2c suites")
    ap.add_argument("--into", help="add the https suite to this existing run dir instead")
    args = ap.parse_args()
    if args.into:
        print(add_https_suite(args.into, reps=args.reps))
    else:
        print(make_fake_https_run(args.raw_root, args.run_id, not args.alone, args.reps))


if __name__ == "__main__":
    main()
