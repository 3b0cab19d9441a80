"""The netns host mode's smoke run of scripts/test.sh (LAB_NETNS_SMOKE_DIR: raw/, data/, reports/ of
`run_all.sh --quick --hosts netns --clients 2 --suites http1,h2c`, two servers, one rep): both suites
ran every point without an error from both client namespaces at once, the merged counts are the
hosts' sums, the mode and the hosts are recorded and said in the report header, and no namespace is
left behind."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from smoke_runs import the_run

from httplab.lab.hosts import suite_hosts
from httplab.tidy.rawrun import load_run

from client_hosts_checks import check_merged_counts  # (beside this file: pytest puts its dir on sys.path)

SMOKE = os.environ.get("LAB_NETNS_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_NETNS_SMOKE_DIR not set (scripts/test.sh sets it)")


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


def test_both_suites_ran_cleanly_across_the_namespaces(run_dir: Path) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["complete"] is True and meta["params"]["hosts"] == "netns"
    runs = load_run(run_dir).runs
    assert set(runs["suite"]) == {"http1", "h2c"}
    assert (runs["status"] == "ok").all(), runs[["suite", "server", "scenario", "fail_reason"]]
    assert (runs["req_per_s"] > 0).all() and runs["cpu_us_per_req"].notna().all()
    assert meta["params"]["client_hosts"] == 2 and (runs["client_hosts"] == 2).all()
    assert check_merged_counts(run_dir, runs, 2) == len(runs) >= 8
    for suite in ("http1", "h2c"):
        h = suite_hosts(run_dir, suite)
        assert h is not None and h.mode == "netns" and h.server_addr == "10.231.0.1"
        assert [x.role for x in h.hosts] == ["server", "client", "client"] and all(x.netns for x in h.hosts)
        assert [x.addr for x in h.hosts[1:]] == ["10.231.0.11", "10.231.0.12"]


def test_the_report_header_names_the_mode(run_dir: Path) -> None:
    md = (Path(SMOKE) / "reports" / run_dir.name / "http1.md").read_text()
    assert "| Hosts | netns: server host 10.231.0.1" in md


def test_no_namespace_is_left() -> None:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "-srv" not in out and "-cli" not in out, out
