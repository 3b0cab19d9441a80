"""The C server under hostile clients (docs/hostile-clients.md): every case of attack_cases.py
against a fresh ASan/UBSan server, with a legitimate client asking GET /ping
every 20 ms throughout. Each case must leave the server alive and clean
(no sanitizer report, exit 0 on SIGTERM), keep its peak RSS and CPU under the
case's bounds, answer every legitimate request, and cut the attacker off the
way the limit says (servers/evloop/README.md, "Limits")."""
from __future__ import annotations

import os
import pathlib

import pytest

from attack_run import CASES, ServerProcess, evloop_argv, run_case

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("EVLOOP_BIN",
                                  REPO / "build/asan/http_bench_server"))
# Worst legitimate latency allowed. The target for the -O2 server is 100 ms;
# the ASan build on two shared cores (server, attacker and this client) runs
# several times slower than that server, so the test allows 250 ms for the
# worst request and 50 ms for the 99th percentile.
WORST_MS, P99_MS = 250.0, 50.0


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_attack(case):
    if not BIN.exists():
        pytest.fail(f"{BIN} is not built (make -C servers/evloop asan)")
    srv = ServerProcess(evloop_argv(BIN, case), nofile=case.prlimit_nofile)
    try:
        r = run_case(case, srv)
    finally:
        rc = srv.terminate()
    report = srv.sanitizer_report()
    assert report is None, report
    assert r.alive, "server died under " + case.name + ": " + srv.stderr()[-2000:]
    assert rc == 0, f"exit {rc} on SIGTERM: {srv.stderr()[-2000:]}"
    assert r.cut_off, f"{case.name}: not cut off as {case.limit} says: {r.outcome}"
    assert r.rss_growth_mib <= case.rss_growth_mib, (
        f"peak RSS grew {r.rss_growth_mib:.1f} MiB > {case.rss_growth_mib}")
    assert r.cpu_s <= case.cpu_s, f"server CPU {r.cpu_s} s > {case.cpu_s} s"
    assert not r.legit_failures, f"legitimate client failed: {r.legit_failures}"
    assert r.legit_requests > 10, "the legitimate client made too few requests"
    assert r.legit_worst_ms <= WORST_MS and r.legit_p99_ms <= P99_MS, (
        f"legitimate latency worst {r.legit_worst_ms} ms, p99 {r.legit_p99_ms} ms "
        f"({r.legit_requests} requests during the attack, {r.legit_reconnects} reconnects)")
