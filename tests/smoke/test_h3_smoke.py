"""The HTTP/3 suite's smoke run of scripts/test.sh (LAB_H3_SMOKE_DIR: raw/, data/, reports/ of
`run_all.sh --quick --suites h3 --servers evloop,go_h3,rust_h3,ngtcp2`, one rep): every server passed the
verify gate over HTTP/3 and was loaded by h3load on the quick points it serves (ngtcp2's example
server serves files: GET /ping only) with every run ok, each point records
the ALPN its handshakes agreed, the server's window ended with the load (h3load's end-of-load
snapshot), and the generic report has the suite's sections."""
from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from smoke_runs import the_run

SMOKE = os.environ.get("LAB_H3_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_H3_SMOKE_DIR not set (scripts/test.sh sets it)")
SERVERS = {"evloop", "go_h3", "rust_h3", "ngtcp2"}
POST = {"evloop", "go_h3", "rust_h3"}      # the servers with an /echo handler


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


@pytest.fixture(scope="module")
def runs(run_dir: Path) -> pd.DataFrame:
    return pd.read_parquet(Path(SMOKE) / "data" / run_dir.name / "runs.parquet")


def _member(run_dir: Path, server: str, suffix: str) -> str:
    with tarfile.open(run_dir / "h3" / f"{server}.tar.xz") as tar:   # the packed suite
        (m,) = [m for m in tar.getmembers() if m.name.endswith(suffix)]
        return tar.extractfile(m).read().decode()  # type: ignore[union-attr]


def test_every_server_ran_the_quick_points_it_serves_ok(run_dir: Path, runs: pd.DataFrame) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["suites"] == ["h3"] and meta["complete"] is True
    assert meta["tools"]["h3load"].startswith("h3load ")
    assert set(runs["server"]) == SERVERS
    assert set(runs["scenario"]) == {"get_ping_c10", "post_echo_b4096_c100"}
    assert set(runs.loc[runs["scenario"] == "post_echo_b4096_c100", "server"]) == POST
    assert (runs["status"] == "ok").all(), runs[["server", "scenario", "fail_reason"]]
    assert (runs["requests"] > 0).all() and (runs["req_per_s"] > 0).all() and (runs["cpu_us_per_req"] > 0).all()
    assert set(runs["alpn"]) == {"h3"} and set(runs["tls_version"]) == {"TLSv1.3"}
    assert set(runs["alpn_source"]) == {"h3load"}
    assert (runs["hist_kind"] == "exact").all() and runs["lat_p99_us"].notna().all()


def test_the_gate_asked_over_http3_and_the_window_ended_with_the_load(run_dir: Path) -> None:
    for server in SERVERS:
        gate = _member(run_dir, server, "verify.r1.txt")
        lines = [x for x in gate.splitlines() if not x.startswith("#")]
        assert len(lines) == (2 if server in POST else 1), gate
        assert all(x.startswith("PASS") and "HTTP/3 200" in x for x in lines), gate
        scen = json.loads(_member(run_dir, server, "get_ping_c10/scenario.json"))
        assert scen["tool"] == "h3load" and scen["protocol"] == "h3" and scen["streams"] == 10
        cpu = json.loads(_member(run_dir, server, "get_ping_c10/r1.cpu.json"))
        assert cpu["window_end"] == "load_end" and cpu["client_cpu_ticks"] is not None


def test_the_report_has_its_sections(run_dir: Path) -> None:
    md = (Path(SMOKE) / "reports" / run_dir.name / "h3.md").read_text()
    for title in ("GET /ping by connections, 10 streams each", "POST /echo by body size", "Verify gate",
                  "Run and machine"):
        assert title in md, title
