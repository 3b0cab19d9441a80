"""Builds a small fake-but-realistic raw run (the layout the shell scripts write) from the real wrk
fixtures in tests/fixtures/wrk/, with per-server speed factors and per-rep jitter so that the
statistics have something to chew on.

    python tests/unit/make_fake_run.py /tmp/raw            # -> /tmp/raw/<run_id>/...
    python tests/unit/make_fake_run.py /tmp/raw --reps 3 --run-id 20260101T000000Z-x

From tests: `from make_fake_run import make_fake_run`.
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wrk"


@dataclass(frozen=True)
class FakeScenario:
    name: str
    route: str
    method: str
    size_bytes: int
    connections: int
    pipeline: int
    fixture: str  # stem in tests/fixtures/wrk


DEFAULT_SCENARIOS: tuple[FakeScenario, ...] = (
    FakeScenario("get_ping_c50", "/ping", "GET", 0, 50, 1, "clean_ping"),
    FakeScenario("get_ping_c100", "/ping", "GET", 0, 100, 1, "clean_ping"),
    FakeScenario("get_echo_s64_c100", "/echo", "GET", 64, 100, 1, "latency_ping"),
    FakeScenario("get_echo_s4096_c100", "/echo", "GET", 4096, 100, 1, "latency_ping"),
    FakeScenario("post_echo_b1024_c100", "/echo", "POST", 1024, 100, 1, "post_1k"),
    FakeScenario("pipeline_ping_d16_c100", "/ping", "GET", 0, 100, 16, "pipeline_16"),
)
# speed factor (requests multiplier) and CPU-µs per request of each fake server
SPEED = {"evloop": 1.18, "go": 1.0, "nginx": 1.10, "floor": 1.5}
CPU_US = {"evloop": 6.0, "go": 9.5, "nginx": 7.0, "floor": 3.0}
RSS_KB = {"evloop": 2_100, "go": 9_800, "nginx": 4_300, "floor": 900}


def scale_wrk_capture(json_path: Path, stdout_path: Path, factor: float,
                      tail: float = 1.0) -> tuple[str, str]:
    """(hook json, stdout) of a real wrk capture with requests and bytes × factor, latencies /
    factor, and (tail > 1) latencies above the median × tail, as a server with a long tail."""
    doc = json.loads(json_path.read_text())
    text = stdout_path.read_text()
    s = doc["summary"]
    s["requests"] = int(round(s["requests"] * factor))
    s["bytes"] = int(round(s["bytes"] * factor))
    hist = doc["latency_hist"]
    total, cum, median = sum(c for _, c in hist), 0, hist[-1][0]
    for v, c in hist:
        cum += c
        if cum >= total / 2:
            median = v
            break
    merged: dict[int, int] = {}
    for v, c in hist:
        key = max(1, int(round(v / factor * (tail if v > median else 1.0))))
        merged[key] = merged.get(key, 0) + c
    doc["latency_hist"] = [[v, c] for v, c in sorted(merged.items())]
    lat = doc["latency"]
    for k in ("min", "max", "mean", "stdev", "p50", "p90", "p99", "p999"):
        lat[k] = lat[k] / factor * (tail if k in ("p90", "p99", "p999", "max") else 1.0)
    if tail != 1.0:
        lat["max"] = max(v for v, _ in doc["latency_hist"])
    rps = s["requests"] / (s["duration_us"] / 1e6)
    text = re.sub(r"^(\s*)\d+ requests in", lambda m: f"{m.group(1)}{s['requests']} requests in", text,
                  flags=re.M)
    text = re.sub(r"^Requests/sec:\s+\S+", f"Requests/sec: {rps:10.2f}", text, flags=re.M)
    return json.dumps(doc), text


def _perturb(stem: str, factor: float) -> tuple[str, str]:
    return scale_wrk_capture(FIXTURES / f"{stem}.wrk.json", FIXTURES / f"{stem}.stdout.txt", factor)


def write_meta(run_dir: Path, *, start_utc: str, end_utc: str | None, complete: bool = True,
               suites: tuple[str, ...] = (), params: dict | None = None,
               tools: dict[str, str] | None = None) -> None:
    """A fake run's meta.json, shaped like create_run_meta's (scripts/lib.sh)."""
    meta = {
        "run_id": run_dir.name, "profile": "quick", "start_utc": start_utc, "end_utc": end_utc,
        "complete": complete, "suites": list(suites), "server_cpus": "0", "client_cpus": "1",
        "host": {"cpu_model": "Fake CPU @ 3.0GHz", "cores": 2, "kernel": "6.1.0-fake"},
        "tools": dict(tools or {}), "git": {"commit": "0" * 40, "dirty": False},
    }
    if params is not None:
        meta["params"] = params
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1))


def join_suite(run_dir: Path, suite: str, tools: dict[str, str] | None = None) -> Path:
    """Adds suite (and the tool versions it needs, unless already there) to meta.json; returns
    the suite's folder, created."""
    meta_path = run_dir / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["suites"] = sorted(set(meta.get("suites") or []) | {suite})
    for tool, version in (tools or {}).items():
        meta.setdefault("tools", {}).setdefault(tool, version)
    meta_path.write_text(json.dumps(meta, indent=1))
    suite_dir = run_dir / suite
    suite_dir.mkdir(parents=True, exist_ok=True)
    return suite_dir


def write_verify(srv_dir: Path, reps: int, lines: str) -> None:
    """The route gate's record of every rep (verify.r<rep>.txt), all passed."""
    srv_dir.mkdir(parents=True, exist_ok=True)
    for rep in range(1, reps + 1):
        (srv_dir / f"verify.r{rep}.txt").write_text(lines)


def write_server_json(path: Path, *, pids: list[int], before: int, cpu_s: float, wall_s: float,
                      rss_kb: int, rss_peak_kb: int, client_cpu_s: float | None = None,
                      foreign_s: float = 0.0, steal_s: float = 0.0, rss_start_kb: int | None = None) -> None:
    """The server's /proc sample of one run (r<rep>.server.json), at 100 ticks per second, with a
    per-window peak (rss_peak_method clear_refs); and the window's core counters (r<rep>.cpu.json,
    r<rep>.client.time.txt: see write_cpu_window), the client by default using 60 % of its core."""
    path.write_text(json.dumps({
        "pids": pids, "clk_tck": 100, "cpu_ticks_before": before,
        "cpu_ticks_after": before + int(round(cpu_s * 100)), "wall_s": wall_s,
        "rss_start_kb": rss_start_kb if rss_start_kb is not None else rss_kb - 100,
        "rss_warm_kb": rss_kb, "rss_peak_kb": rss_peak_kb, "rss_peak_method": "clear_refs",
        "rss_kb": rss_kb, "server_alive": True}))
    prefix = path.parent / path.name.removesuffix(".server.json")
    write_cpu_window(prefix, server_cpu_s=cpu_s, wall_s=wall_s,
                     client_cpu_s=0.6 * wall_s if client_cpu_s is None else client_cpu_s,
                     foreign_s=foreign_s, steal_s=steal_s)


def write_cpu_window(prefix: Path, *, server_cpu_s: float, wall_s: float, client_cpu_s: float,
                     foreign_s: float = 0.0, steal_s: float = 0.0) -> None:
    """<prefix>.cpu.json (/proc/stat of CPU 0 = server, CPU 1 = client, around the window) and
    <prefix>.client.time.txt (GNU time's line for the tool). foreign_s: CPU seconds of another
    process on the server's core; steal_s: steal on the client's core."""
    total = int(round(wall_s * 100))

    def cpu(used_s: float, steal: float) -> list[int]:
        user = int(round(used_s * 100 * 0.7))
        system = int(round(used_s * 100)) - user
        st = int(round(steal * 100))
        idle = max(0, total - user - system - st)
        return [user, 0, system, idle, 0, 0, 0, st, 0, 0]

    before = {"0": [1000] * 10, "1": [2000] * 10}
    deltas = {"0": cpu(server_cpu_s + foreign_s, 0.0), "1": cpu(client_cpu_s, steal_s)}
    after = {c: [b + d for b, d in zip(before[c], deltas[c])] for c in before}
    prefix.with_name(prefix.name + ".cpu.json").write_text(json.dumps({
        "clk_tck": 100, "server_cpus": "0", "client_cpus": "1",
        "fields": ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
        "proc_stat_before": before, "proc_stat_after": after}))
    prefix.with_name(prefix.name + ".client.time.txt").write_text(
        f"user_s={client_cpu_s * 0.4:.2f} sys_s={client_cpu_s * 0.6:.2f} wall_s={wall_s:.2f} maxrss_kb=6000 exit=0\n")


def write_suite_done(suite_dir: Path, end_utc: str) -> None:
    """suite.json of a suite that completed."""
    (suite_dir / "suite.json").write_text(json.dumps({
        "suite": suite_dir.name, "status": "complete", "message": "", "end_utc": end_utc}))


def make_fake_run(raw_root: str | Path, run_id: str = "20261121T120000Z-fake",
                  servers: tuple[str, ...] = ("evloop", "go", "nginx"), reps: int = 5,
                  scenarios: tuple[FakeScenario, ...] = DEFAULT_SCENARIOS,
                  reps_of: dict[str, int] | None = None,
                  failed: tuple[tuple[str, str, int], ...] = (("go", "get_ping_c100", 2),),
                  unfinished: tuple[tuple[str, str, int], ...] = (("evloop", "get_ping_c50", 6),),
                  complete: bool = True, start_utc: str = "2026-11-21T12:00:00Z",
                  seed: int = 1) -> Path:
    """Write raw/<run_id>/ under raw_root and return the run dir.

    reps_of: per-server rep count overriding reps (e.g. {"nginx": 3} to exercise the < 5 rule).
    failed: (server, scenario, rep) points replaced by the real non-2xx fixture (status failed).
    unfinished: (server, scenario, rep) points written without r<rep>.run.json (must be ignored).
    """
    rng = np.random.default_rng(seed)
    run_dir = Path(raw_root) / run_id
    write_meta(run_dir, start_utc=start_utc, end_utc="2026-11-21T12:30:00Z" if complete else None,
               complete=complete, params={"reps": reps, "duration_s": 1, "warmup_s": 1},
               tools={"wrk": "wrk debian/4.1.0-3+b2 [epoll]", "nginx": "nginx/1.22.1"})
    suite_dir = join_suite(run_dir, "http1")
    for server in servers:
        n_reps = (reps_of or {}).get(server, reps)
        srv_dir = suite_dir / server
        write_verify(srv_dir, n_reps,
                     "PASS GET /ping -> 200, Content-Length 4, body ok\n"
                     "PASS GET /echo?size=64 -> 200, Content-Length 64, body ok\n"
                     "PASS POST /echo (1024 B) -> 200, Content-Length 1024, body ok\n")
        for sc in scenarios:
            sdir = srv_dir / sc.name
            sdir.mkdir(exist_ok=True)
            (sdir / "scenario.json").write_text(json.dumps({
                "suite": "http1", "protocol": "h1", "tls": False, "server": server,
                "scenario": sc.name, "route": sc.route, "method": sc.method,
                "size_bytes": sc.size_bytes, "connections": sc.connections, "streams": 1,
                "pipeline": sc.pipeline, "client_threads": 1, "duration_s": 1, "warmup_s": 1,
                "tool": "wrk", "url": f"http://127.0.0.1:18080{sc.route}"}))
            extra = [k[2] for k in unfinished if k[0] == server and k[1] == sc.name]
            for rep in list(range(1, n_reps + 1)) + extra:
                factor = SPEED.get(server, 1.0) * (1 + rng.normal(0, 0.02))
                if (server, sc.name, rep) in failed:
                    jtext = (FIXTURES / "non2xx.wrk.json").read_text()
                    stdout = (FIXTURES / "non2xx.stdout.txt").read_text()
                else:
                    jtext, stdout = _perturb(sc.fixture, factor)
                doc = json.loads(jtext)
                (sdir / f"r{rep}.wrk.json").write_text(jtext)
                (sdir / f"r{rep}.stdout.txt").write_text(stdout)
                (sdir / f"r{rep}.stderr.txt").write_text("")
                requests = doc["summary"]["requests"]
                cpu_s = requests * CPU_US.get(server, 8.0) * (1 + rng.normal(0, 0.03)) / 1e6
                write_server_json(sdir / f"r{rep}.server.json", pids=[4242], before=1000 + 37 * rep,
                                  cpu_s=cpu_s, wall_s=doc["summary"]["duration_us"] / 1e6,
                                  rss_kb=RSS_KB.get(server, 5000),
                                  rss_peak_kb=RSS_KB.get(server, 5000) + 50 * rep)
                if rep in extra:
                    continue  # unfinished: no run.json
                (sdir / f"r{rep}.run.json").write_text(json.dumps({
                    "rep": rep, "start_utc": start_utc, "end_utc": start_utc, "exit_code": 0,
                    "cmd": f"wrk -t1 -c{sc.connections} -d1s ...", "server_alive": True}))
    write_suite_done(suite_dir, "2026-11-21T12:30:00Z")
    return run_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_root")
    ap.add_argument("--run-id", default="20261121T120000Z-fake")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--servers", default="evloop,go,nginx")
    args = ap.parse_args()
    print(make_fake_run(args.raw_root, args.run_id, tuple(args.servers.split(",")), args.reps))


if __name__ == "__main__":
    main()
