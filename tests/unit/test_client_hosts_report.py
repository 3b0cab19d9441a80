"""The report's per-host table (httplab.report.client_hosts) on a real two-client-host netns capture
(tests/fixtures/multihost/real): one row per point and host, the hosts' shares of each point adding
up to the whole, and nothing at all for a run loaded from one host."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from httplab.report.client_hosts import client_hosts_table, has_client_hosts
from httplab.tidy.rawrun import load_run

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "multihost" / "real" / "20261124T091323Z-vm"
REFERENCE = sorted((Path(__file__).resolve().parents[2] / "raw").glob("2026*"))[0]


def test_one_row_per_point_and_host_whose_shares_make_the_whole() -> None:
    run = load_run(REAL).suite("h2c")
    df = client_hosts_table(run.client_hosts, run.runs)
    ok = run.runs[run.runs["status"] == "ok"]
    assert len(df) == 2 * len(ok.groupby(["suite", "server", "scenario"]))
    assert list(df.columns) == ["Server", "Scenario", "Host", "n", "req/s (share)", "cores busy",
                                "client-bound", "start"]
    assert set(df["Host"]) == {"10.231.0.11", "10.231.0.12"}
    shares = df["req/s (share)"].str.extract(r"\(([\d.]+)%\)")[0].astype(float)
    for _, g in df.assign(share=shares).groupby(["Server", "Scenario"]):
        assert abs(g["share"].sum() - 100.0) < 0.2, g
    assert "exact merge" in df.attrs["caption"] and df.attrs["key_columns"][-1] == "Host"


def test_a_whole_run_of_several_suites_says_which_suite_each_row_is() -> None:
    run = load_run(REAL)
    df = client_hosts_table(run.client_hosts, run.runs)
    assert list(df["Suite"]) == ["h2c", "h2c", "http1", "http1"] and df.attrs["key_columns"][0] == "Suite"


def test_a_run_from_one_host_has_no_table() -> None:
    run = load_run(REFERENCE)
    assert not has_client_hosts(run.client_hosts)
    assert client_hosts_table(run.client_hosts, run.runs).empty
    assert client_hosts_table(pd.DataFrame(), run.runs).empty
