"""The findings block that opens each report: the seed's claims beside this run's rows of the
statistics frames, on the committed reference run."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from httplab.report import engine as R
from httplab.report import findings as F

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "raw" / "20261123T092401Z-vm"


@pytest.fixture(scope="module")
def built():
    """The reference run's committed data/ (the reports read only data/; that it is what raw/
    rebuilds to is test_committed_runs_rebuild's to check)."""
    out = ROOT / "data" / RUN.name
    if not RUN.is_dir() or not (out / "estimates.parquet").is_file():
        pytest.skip("the reference run is not in raw/ and data/")
    return out


@pytest.fixture(scope="module")
def http1(built):
    return R.open_report("http1", run_dir=RUN, out_dir=built, baseline="go", start=ROOT)


def test_seed_points_reproduce_the_seed_summaries():
    # the ranges the seeds print are their own tables' ratios, rounded
    for suite, claim, lo, hi in [("http1", 0, 0.18, 0.24), ("h2c", 0, 2.94, 4.05), ("https", 1, 2.09, 2.78)]:
        ratios = [p.ratio - 1 for p in F.seed_of(suite).claims[claim].points]
        assert round(min(ratios), 2) == pytest.approx(lo, abs=0.01)
        assert round(max(ratios), 2) == pytest.approx(hi, abs=0.01)


def test_claims_table_reads_the_comparisons_rows(http1):
    table = F.claims_table(http1)
    claims = F.seed_of("http1").claims   # its three tables and "wins every scenario" over all of them
    assert list(table.iloc[:, 0])[:len(claims)] == [c.what for c in claims] and len(claims) == 4
    assert len(table.columns) <= 8
    # ours ÷ seed's, per scenario: the smallest over GET /ping is the comparisons row's ratio over the seed's
    ping = F.seed_of("http1").claims[0]
    per = []
    for p in ping.points:
        row = http1.stats.compare("req_per_s", ("http1", p.scenario, "evloop"), ("http1", p.scenario, "go"))
        per.append(float(row["ratio"]) / p.ratio)
    # not measured under the seed's conditions (one server core, not twelve shared): the ratio over
    # the seed's would only restate the core difference, so the cell says so instead
    assert table.iloc[0, 3] == "not comparable (1 core here, 12 in the seed)"
    assert "only a run under the seed's conditions" in " ".join(F.reasons(http1))
    # every Δ cell carries an interval
    assert all("[" in cell for cell in table.iloc[:3, 2])


def test_under_the_seeds_conditions_our_ratio_is_set_over_the_seeds(http1, monkeypatch):
    """A run of the seed-conditions profile (meta profile "seed") prints ours ÷ the seed's, and
    reads the claims with the contestant single-threaded (<contestant>@1) where the run has it."""
    monkeypatch.setitem(http1.run.meta, "profile", "seed")
    assert F.seed_conditions(http1)
    assert F.seed_contestant(http1, "evloop") == "evloop"     # the reference run has no evloop@1
    table = F.claims_table(http1)
    per = []
    for p in F.seed_of("http1").claims[0].points:
        row = http1.stats.compare("req_per_s", ("http1", p.scenario, "evloop"), ("http1", p.scenario, "go"))
        per.append(float(row["ratio"]) / p.ratio)
    assert table.iloc[0, 3] == f"{min(per):.2f}× to {max(per):.2f}×"
    text = " ".join(F.reasons(http1))
    assert "Conditions: the seed's" in text and "not comparable" not in text


def test_reasons_come_from_the_run(http1):
    text = " ".join(F.reasons(http1))
    meta = http1.run.meta
    assert f"(CPU {meta['server_cpus']})" in text and meta["host"]["cpu_model"] in text
    floor = http1.noise.pct("req_per_s")
    assert floor is not None and math.isfinite(floor) and f"±{floor:.0f} %" in text
    md = F.findings_markdown(http1)
    assert md.startswith("## Findings") and "Seed 000" in md and "where the seed measured +15 % to +60 %" in md


def test_languages_findings_set_the_seed_ranking_beside_ours(built):
    ctx = R.open_report("languages", run_dir=RUN, out_dir=built, baseline="lang_go_std", start=ROOT)
    table = F.languages_table(ctx)
    assert list(table.iloc[:, 0]) == ["Go", "Rust", "JavaScript", "C++", "Python"]
    assert table.iloc[4, 1] == "8.5K"
    assert all("(n=5)" in c for c in table.iloc[:, 3])


def test_seed_chart_sets_each_seed_ratio_beside_ours(http1):
    from httplab.report import plots as P
    fig = F.seed_chart(http1)
    assert P.description(fig).endswith("not comparable: 1 core per server here, 12 in the seed.")
    data, (w, _) = P.png_bytes(fig)
    assert w == P.WIDTH_PX
    points = F._chart_points(http1)
    # each scenario once, though "wins every scenario" holds the rows of the other three claims again
    assert [p[0] for p in points] == list(dict.fromkeys(p.scenario for c in F.seed_of("http1").claims for p in c.points))
    assert all(lo <= est <= hi for _, _, est, lo, hi, _ in points)
    assert "seed vs this run" in P.description(fig)
