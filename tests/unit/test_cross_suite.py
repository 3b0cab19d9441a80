"""Comparisons across suites (stats.frames.comparisons_frame's suite pairs, report.cross_suite): a
server on a point of one suite against itself on a point of another, or, when it did not run there,
against its TCP twin (an HTTP/3 server's manifest names the server of the same application over
TCP: quic-go's names Go's net/http); the HTTP/3 suite declares its pairs with the https suite's
HTTPS/2 points."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from httplab.report.cross_suite import cross_suite_table
from httplab.stats.write import run_stats

# (suite, scenario, server, req/s, CPU-µs per request)
CELLS = [
    ("h3", "get_ping_c100", "go_h3", 35_000.0, 28.0),
    ("h3", "get_ping_c100", "rust_h3", 70_000.0, 14.0),
    ("h3", "get_ping_c100", "evloop", 90_000.0, 11.0),
    ("https", "h2_get_ping_c100", "go", 60_000.0, 16.0),
    ("https", "h2_get_ping_c100", "evloop", 150_000.0, 6.5),
]


@pytest.fixture(scope="module")
def stats():
    rng = np.random.default_rng(7)
    rows = []
    for rep in range(1, 6):
        for suite, scen, server, rps, cpu in CELLS:
            f = 1.0 + 0.01 * rng.standard_normal()
            rows.append({"run_id": "x", "suite": suite, "scenario": scen, "server": server, "rep": rep,
                         "status": "ok", "req_per_s": rps * f, "cpu_us_per_req": cpu / f,
                         "client_bound": False, "noisy": False})
    return run_stats(pd.DataFrame(rows))


def test_a_server_meets_itself_or_its_tcp_twin_across_suites(stats):
    c = stats.comparisons
    cross = c[(c["kind"] == "suite") & (c["a_suite"] == "h3") & (c["b_suite"] == "https")]
    pairs = set(zip(cross["a_server"], cross["b_server"]))
    # evloop serves both itself; quic-go's server meets Go's net/http (its tcp_twin); quinn's has
    # no twin in the run, so no row
    assert pairs == {("evloop", "evloop"), ("go_h3", "go")}
    go = cross[(cross["a_server"] == "go_h3") & (cross["metric"] == "req_per_s")].iloc[0]
    assert go["ratio"] == pytest.approx(35_000 / 60_000, rel=0.02) and go["lo"] < go["ratio"] < go["hi"]
    assert go["paired"] and int(go["n_pairs"]) == 5 and go["verdict"]   # rep k against rep k, with its verdict


def test_the_generic_report_prints_each_pair_with_its_verdict(stats):
    t = cross_suite_table(stats, "h3")
    assert list(t["Server"]) == ["C (evloop)", "Go quic-go (HTTP/3)"]
    assert list(t["Against"]) == ["C (evloop)", "Go net/http"]
    assert set(t["Point"]) == {"get_ping_c100 against https h2_get_ping_c100"}
    cell = t.loc[t["Server"] == "Go quic-go (HTTP/3)", "Δ req/s"].iloc[0]
    assert cell.startswith("−4") and "[" in cell and cell.endswith("slower")
    assert "between-suite comparison" in t.attrs["caption"] and "tcp_twin" in t.attrs["caption"]
    # a suite whose pairs the run does not hold: no rows, so the section is left out
    assert cross_suite_table(stats, "http1").empty
