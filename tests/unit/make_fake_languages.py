"""Adds a fake-but-realistic languages suite (seed 003's shoot-out: wrk, 100 connections, five
endpoints, stdlib and production tiers) to a fake raw run, built from REAL wrk captures against the
lab's Go net/http and Rust std::net servers (tests/fixtures/languages/, see its README), with
per-server speed factors, per-endpoint factors, a stretched latency tail for some servers (so the
"P99/P50 > 10×" rule has something to find), and per-rep jitter.

    python tests/unit/make_fake_languages.py /tmp/raw          # -> /tmp/raw/<run_id>/languages/
    python tests/unit/make_fake_languages.py /tmp/raw --into raw/<copied run>

From tests: `from make_fake_languages import make_fake_languages_run, add_languages_suite`.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from make_fake_run import (join_suite, scale_wrk_capture, write_meta, write_server_json, write_suite_done,
                           write_verify)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"

JSON_BODY = '{"name":"benchmark","value":42,"tags":["a","b"]}'


@dataclass(frozen=True)
class FakeLangScenario:
    name: str
    key: str  # fixture suffix: root, query, json, post_json, root_close
    route: str
    method: str


LANG_SCENARIOS: tuple[FakeLangScenario, ...] = (
    FakeLangScenario("get_root_c100", "root", "/", "GET"),
    FakeLangScenario("get_query_c100", "query", "/something?foo=bar", "GET"),
    FakeLangScenario("get_json_c100", "json", "/something?json=true", "GET"),
    FakeLangScenario("post_json_c100", "post_json", "/something", "POST"),
    FakeLangScenario("get_root_close_c100", "root_close", "/", "GET"),
)
ALL_SERVERS: tuple[str, ...] = (
    "lang_go_std", "lang_rust_std", "lang_node_std", "lang_cpp_std", "lang_python_std", "evloop",
    "lang_go_fasthttp", "lang_rust_axum", "lang_node_fastify", "lang_python_uvicorn", "lang_cpp_beast")
# server -> (fixture base "go"|"rust", speed factor); lang_rust_axum and lang_cpp_beast are equal
# on purpose (a tie for the ranking).
PROFILE: dict[str, tuple[str, float]] = {
    "lang_go_std": ("go", 1.0), "lang_rust_std": ("rust", 0.8), "lang_node_std": ("go", 0.7),
    "lang_cpp_std": ("go", 0.6), "lang_python_std": ("go", 0.08), "evloop": ("rust", 1.25),
    "lang_go_fasthttp": ("rust", 1.1), "lang_rust_axum": ("rust", 1.0), "lang_node_fastify": ("go", 0.9),
    "lang_python_uvicorn": ("go", 0.25), "lang_cpp_beast": ("rust", 1.0),
}
# extra factor per (server, endpoint key)
ENDPOINT_FACTOR: dict[tuple[str, str], float] = {
    ("lang_go_std", "json"): 0.85, ("lang_node_std", "post_json"): 0.75, ("lang_cpp_std", "json"): 0.8,
    ("evloop", "root_close"): 1.3,
}
# (server, endpoint key or "*") -> factor applied to latencies above the run's median
TAIL: dict[tuple[str, str], float] = {("lang_python_std", "*"): 60.0, ("lang_cpp_std", "json"): 25.0,
                                      ("lang_node_std", "*"): 3.0}
CPU_US = {"lang_python_std": 110.0, "lang_python_uvicorn": 38.0, "lang_node_std": 16.0,
          "lang_node_fastify": 13.0, "lang_go_std": 11.0, "lang_go_fasthttp": 7.0, "lang_rust_std": 9.0,
          "lang_rust_axum": 7.5, "lang_cpp_std": 12.0, "lang_cpp_beast": 7.5, "evloop": 5.0}
RSS_KB = {"lang_python_std": 20_500, "lang_python_uvicorn": 31_000, "lang_node_std": 62_000,
          "lang_node_fastify": 148_000, "lang_go_std": 13_000, "lang_go_fasthttp": 15_500,
          "lang_rust_std": 2_100, "lang_rust_axum": 4_800, "lang_cpp_std": 4_000, "lang_cpp_beast": 3_600,
          "evloop": 2_200}


def _perturb(stem: str, factor: float, tail: float) -> tuple[str, str]:
    """(hook json, stdout) of a real wrk capture: requests × factor, latencies / factor, and
    latencies above the median × tail."""
    return scale_wrk_capture(FIXTURES / f"{stem}.wrk.json", FIXTURES / f"{stem}.stdout.txt", factor, tail)


def add_languages_suite(run_dir: str | Path, servers: tuple[str, ...] = ALL_SERVERS, reps: int = 5,
                        scenarios: tuple[FakeLangScenario, ...] = LANG_SCENARIOS,
                        failed: tuple[tuple[str, str, int], ...] = (("lang_python_std", "get_root_close_c100", 2),),
                        seed: int = 13) -> Path:
    """Write raw/<run_id>/languages/ into an existing run dir and add "languages" to meta.json.
    failed: points replaced by the real wrk non-2xx fixture of tests/fixtures/wrk (status failed)."""
    run_dir = Path(run_dir)
    rng = np.random.default_rng(seed)
    suite_dir = join_suite(run_dir, "languages")
    wrk_fixtures = FIXTURES.parent / "wrk"
    for server in servers:
        base, speed = PROFILE.get(server, ("go", 1.0))
        srv_dir = suite_dir / server
        write_verify(srv_dir, reps,
                     "PASS GET / -> 200, Content-Length 13, body ok\n"
                     "PASS GET /something?foo=bar -> 200, body ok\n"
                     "PASS GET /something?json=true -> 200, JSON ok\n"
                     f"PASS POST /something {JSON_BODY} -> 200, JSON ok\n")
        for sc in scenarios:
            sdir = srv_dir / sc.name
            sdir.mkdir(exist_ok=True)
            (sdir / "scenario.json").write_text(json.dumps({
                "suite": "languages", "protocol": "h1", "tls": False, "tool": "wrk", "server": server,
                "scenario": sc.name, "route": sc.route, "method": sc.method, "size_bytes": 0,
                "connections": 100, "streams": 1, "pipeline": 1, "client_threads": 1, "duration_s": 1,
                "warmup_s": 1, "url": f"http://127.0.0.1:18080{sc.route}"}))
            tail = TAIL.get((server, sc.key), TAIL.get((server, "*"), 1.0))
            for rep in range(1, reps + 1):
                factor = speed * ENDPOINT_FACTOR.get((server, sc.key), 1.0) * (1 + rng.normal(0, 0.02))
                if (server, sc.name, rep) in failed:
                    jtext = (wrk_fixtures / "non2xx.wrk.json").read_text()
                    stdout = (wrk_fixtures / "non2xx.stdout.txt").read_text()
                else:
                    jtext, stdout = _perturb(f"{base}_{sc.key}", factor, tail)
                doc = json.loads(jtext)
                (sdir / f"r{rep}.wrk.json").write_text(jtext)
                (sdir / f"r{rep}.stdout.txt").write_text(stdout)
                (sdir / f"r{rep}.stderr.txt").write_text("")
                requests = doc["summary"]["requests"]
                wall = doc["summary"]["duration_us"] / 1e6
                cpu_us = CPU_US.get(server, 10.0) * (3.0 if sc.key == "root_close" else 1.0)
                cpu_s = min(requests * cpu_us * (1 + rng.normal(0, 0.03)) / 1e6, 0.98 * wall)
                rss = RSS_KB.get(server, 10_000)
                write_server_json(sdir / f"r{rep}.server.json", pids=[4545, 4546], before=5000 + 31 * rep,
                                  cpu_s=cpu_s, wall_s=wall, rss_kb=rss,
                                  rss_peak_kb=int(rss * (1 + rng.normal(0, 0.02))))
                (sdir / f"r{rep}.run.json").write_text(json.dumps({
                    "rep": rep, "start_utc": "2026-11-21T13:10:00Z", "end_utc": "2026-11-21T13:10:03Z",
                    "exit_code": 0, "server_alive": True, "cmd": f"wrk -t1 -c100 -d1s ... {sc.route}"}))
    write_suite_done(suite_dir, "2026-11-21T13:40:00Z")
    return run_dir


def make_fake_languages_run(raw_root: str | Path, run_id: str = "20261121T120000Z-fakelang",
                            reps: int = 5, **kw) -> Path:
    """A fake run holding only the languages suite."""
    run_dir = Path(raw_root) / run_id
    write_meta(run_dir, start_utc="2026-11-21T13:00:00Z", end_utc="2026-11-21T13:40:00Z",
               params={"reps": reps, "duration_s": 1, "warmup_s": 1},
               tools={"wrk": "wrk debian/4.1.0-3+b2 [epoll]"})
    return add_languages_suite(run_dir, reps=reps, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw_root", nargs="?")
    ap.add_argument("--run-id", default="20261121T120000Z-fakelang")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--into", help="add the languages suite to this existing run dir instead")
    args = ap.parse_args()
    if args.into:
        print(add_languages_suite(args.into, reps=args.reps))
    else:
        print(make_fake_languages_run(args.raw_root, args.run_id, args.reps))


if __name__ == "__main__":
    main()
