"""The per-point rules (docs/method.md) on the live smoke runs of scripts/test.sh: every point
records its window (position, the client's CPU, the cores' busy fractions, steal and foreign CPU,
the window's own peak RSS), the order is seeded and balanced, the host is recorded, and the A/A
copy ran on the headline scenarios with its noise floor shown in every report. Two runs: the seed
suites' main run (LAB_SMOKE_DIR), and the versus suites' run beside it (LAB_VERSUS_SMOKE_DIR), both
with five reps and the A/A copy."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from smoke_runs import the_run

from httplab.lab.schedule import balanced_orders, is_balanced
from httplab.tidy.rawrun import load_run

SMOKE = os.environ.get("LAB_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_SMOKE_DIR not set (scripts/test.sh sets it)")

SUITES = {"http1": "http1", "h2c": "h2c", "https": "https", "languages": "languages"}
# The versus suites run their /ping points only, in a run of their own.
VERSUS_SUITES = ("versus_h2c", "versus_tls")
RUNS = {"main": ("LAB_SMOKE_DIR", tuple(SUITES)), "versus": ("LAB_VERSUS_SMOKE_DIR", VERSUS_SUITES)}
HEADLINE = {"http1": {"get_ping_c100"}, "h2c": {"get_ping_c100"}, "https": {"h1_get_ping_c100"},
            "languages": {"get_root_c100"}, "versus_h2c": {"get_ping_c100"},
            "versus_tls": {"h1_get_ping_c100", "h2_get_ping_c100"}}


@pytest.fixture(scope="module", params=sorted(RUNS))
def smoke(request: pytest.FixtureRequest) -> tuple[Path, tuple[str, ...]]:
    """(raw/<run_id>/, its suites) of one smoke run."""
    env, suites = RUNS[request.param]
    if not os.environ.get(env):
        pytest.skip(f"{env} not set (scripts/test.sh sets it)")
    return the_run(os.environ[env]), suites


@pytest.fixture(scope="module")
def run_dir(smoke: tuple[Path, tuple[str, ...]]) -> Path:
    return smoke[0]


@pytest.fixture(scope="module")
def suites(smoke: tuple[Path, tuple[str, ...]]) -> tuple[str, ...]:
    return smoke[1]


@pytest.fixture(scope="module")
def runs(run_dir: Path) -> pd.DataFrame:
    return load_run(run_dir).runs


def test_every_point_records_its_window(runs: pd.DataFrame) -> None:
    assert len(runs) > 0
    for col in ("position", "client_busy", "server_busy", "client_cpu_s", "steal_pct", "foreign_cpu_pct",
                "rss_start_kb", "rss_warm_kb", "rss_peak_kb", "capacity_rps"):
        assert runs[col].notna().all(), (col, runs.loc[runs[col].isna(), ["suite", "server", "scenario", "rep"]])
    assert runs["client_bound"].notna().all() and runs["noisy"].notna().all()
    assert (runs["client_cpu_s"] > 0).all()
    assert ((runs["client_busy"] > 0) & (runs["client_busy"] <= 1)).all()
    assert set(runs["rss_peak_method"]) == {"clear_refs"}
    # the window's peak is at least what the tree held right before it
    assert (runs["rss_peak_kb"] >= runs["rss_warm_kb"] * 0.5).all()


def test_order_is_recorded_balanced_and_matches_positions(run_dir: Path, suites: tuple[str, ...],
                                                          runs: pd.DataFrame) -> None:
    assert set(runs["suite"]) == set(suites)
    for suite in suites:
        doc = json.loads((run_dir / suite / "order.json").read_text())
        assert doc["orders"] == balanced_orders(doc["servers"], doc["reps"], doc["seed"])
        assert is_balanced(doc["orders"])
        sub = runs[runs["suite"] == suite]
        for row in sub.itertuples():
            assert doc["orders"][row.rep - 1].index(row.server) + 1 == row.position, row


def test_host_state_recorded_per_suite(run_dir: Path, suites: tuple[str, ...]) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta.get("host_state") and meta["host_state"].get("cpu_model")
    for suite in suites:
        for when in ("start", "end"):
            doc = json.loads((run_dir / suite / f"host.{when}.json").read_text())
            assert doc.get("cores") == os.cpu_count()


def test_aa_copy_ran_the_headline_scenarios_only(run_dir: Path, suites: tuple[str, ...],
                                                 runs: pd.DataFrame) -> None:
    reps = json.loads((run_dir / "meta.json").read_text())["params"]["reps"]
    copies = runs[runs["aa_of"].notna()]
    assert set(copies["server"]) == {"evloop~aa"} and set(copies["aa_of"]) == {"evloop"}
    assert set(copies["suite"]) == set(suites)
    for suite in suites:
        got = set(copies.loc[copies["suite"] == suite, "scenario"])
        assert got == HEADLINE[suite], (suite, got)
        assert (copies[copies["suite"] == suite].groupby("scenario").size() == reps).all()


@pytest.mark.parametrize("report", sorted(SUITES.values()))
def test_reports_show_the_noise_floor(report: str) -> None:
    md = (Path(SMOKE) / "reports" / the_run(SMOKE).name / f"{report}.md").read_text()
    assert "**A/A noise floor**" in md
    assert "**Noise floor of this run**" in md
    assert "**Client-bound and noisy points**" in md
