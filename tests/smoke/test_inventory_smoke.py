"""The inventory host mode's smoke run of scripts/test.sh (LAB_INVENTORY_SMOKE_DIR: raw/, data/,
reports/ of `run_all.sh --quick --inventory ... --suites http1,h2c`, run in the server host of
scripts/inventory_netns.sh's stand-in machines: two client hosts reached by Ansible over ssh). Both
suites ran every point from both client hosts at once, the outputs came back per host, the merged
counts are the hosts' sums, each host's facts were gathered, the report header says so, and the
stand-ins are gone."""
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

SMOKE = os.environ.get("LAB_INVENTORY_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_INVENTORY_SMOKE_DIR not set (scripts/test.sh sets it)")


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


def test_both_suites_ran_cleanly_from_both_client_hosts(run_dir: Path) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["complete"] is True
    assert meta["params"]["hosts"] == "inventory" and meta["params"]["client_hosts"] == 2
    facts = meta["hosts"]["facts"]          # every host's facts, gathered when the run began
    assert meta["hosts"]["mode"] == "inventory" and meta["hosts"]["inventory"].endswith("inventory.ini")
    assert sorted(f["name"] for f in facts) == ["client1", "client2", "labserver"]
    assert all(f["cores"] >= 1 and f["kernel"] and f["memory_mb"] > 0 for f in facts), facts
    runs = load_run(run_dir).runs
    assert set(runs["suite"]) == {"http1", "h2c"}
    assert (runs["status"] == "ok").all(), runs[["suite", "server", "scenario", "fail_reason"]]
    assert (runs["req_per_s"] > 0).all() and runs["cpu_us_per_req"].notna().all()
    assert (runs["client_hosts"] == 2).all()
    assert check_merged_counts(run_dir, runs, 2) == len(runs) >= 4


def test_each_hosts_facts_are_recorded(run_dir: Path) -> None:
    for suite in ("http1", "h2c"):
        h = suite_hosts(run_dir, suite)
        assert h is not None and h.mode == "inventory" and h.server_addr == "10.231.0.1"
        assert [x.role for x in h.hosts] == ["server", "client", "client"]
        doc = json.loads((run_dir / suite / "hosts.json").read_text())
        names = [x["name"] for x in doc["hosts"]]
        assert names == ["labserver", "client1", "client2"], names
        for x in doc["hosts"]:
            assert x["cores"] >= 1 and x["cpu_model"] and x["distro"].startswith("Debian"), x
        clients = [x for x in doc["hosts"] if x["role"] == "client"]
        assert [x["addr"] for x in clients] == ["10.231.0.11", "10.231.0.12"]
        assert all(any(t.startswith("wrk=wrk ") for t in x["tools"]) for x in clients), clients
        # the stand-in hosts are this machine's namespaces: its lab builds, named as meta.json does
        for tool in ("wrk_build", "h2load_build"):
            assert all(sum(t.startswith(f"{tool}=") and len(t) > len(tool) + 1 for t in x["tools"]) == 1
                       for x in clients), clients


def test_the_report_header_names_the_mode_and_hosts(run_dir: Path) -> None:
    md = (Path(SMOKE) / "reports" / run_dir.name / "http1.md").read_text()
    line = next(ln for ln in md.splitlines() if ln.startswith("| Hosts |"))
    assert "inventory" in line and "labserver" in line and "client2" in line, line


def test_the_stand_in_hosts_are_gone() -> None:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "-srv" not in out and "-cli" not in out, out
    ps = subprocess.run(["pgrep", "-af", "sshd_config"], capture_output=True, text=True).stdout
    assert str(Path(SMOKE)) not in ps, ps
