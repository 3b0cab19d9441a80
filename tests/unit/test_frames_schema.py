"""The published schema: the frames a run writes are the ones docs/data.md describes, validated on
write and read; a frame of the wrong shape is refused with the file named; the older per-suite
layout of data/ still reads."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from httplab.stats.schema import all_frames, render_docs
from httplab.stats.write import read_stats, run_stats, write_run
from httplab.tidy.rawrun import load_run
from httplab.tidy.read import read_frame
from httplab.tidy.schema import SchemaError, validate
from make_fake_run import make_fake_run

ROOT = Path(__file__).resolve().parents[2]


def test_docs_show_the_current_schema():
    text = (ROOT / "docs" / "data.md").read_text()
    assert render_docs(text) == text, "docs/data.md is stale: python -m httplab schema-docs docs/data.md"
    for name in ("runs", "latency", "estimates", "comparisons", "claims", "claim_points", "idle_memory"):
        assert f"<!-- schema:{name} -->" in text
    assert set(all_frames()) == {"runs", "latency", "estimates", "comparisons", "claims", "claim_points", "idle_memory"}


def test_a_run_writes_all_four_frames_and_reads_them_back(tmp_path):
    run = load_run(make_fake_run(tmp_path / "raw"))
    out = tmp_path / "data"
    written = {p.name for p in write_run(run, out)}
    assert {"runs.parquet", "latency.parquet", "estimates.parquet", "estimates.csv",
            "comparisons.parquet", "comparisons.csv"} <= written
    runs = read_frame(out, "runs")
    assert len(runs) == len(run.runs) and runs["requests"].dtype == "Int64"
    est, cmp = read_stats(out, "estimates"), read_stats(out, "comparisons")
    assert len(est) and len(cmp)
    assert (cmp["lo"].dropna() > 0).all() and (est["lo"].dropna() > 0).all()   # never below zero
    assert set(pd.read_csv(out / "comparisons.csv").columns) == set(cmp.columns)


def test_a_frame_of_the_wrong_shape_is_refused_with_its_file(tmp_path):
    run = load_run(make_fake_run(tmp_path / "raw"))
    bad = run.runs.copy()
    bad["requests"] = bad["requests"].astype("float64")
    with pytest.raises(SchemaError, match=r"runs \(x.parquet\).*requests.*int\?"):
        validate(bad, "runs", "x.parquet")
    with pytest.raises(SchemaError, match="columns"):
        validate(run.runs.drop(columns=["cpu_pct"]), "runs", "y.parquet")
    out = tmp_path / "data"
    out.mkdir()
    bad.to_parquet(out / "runs.parquet")
    with pytest.raises(SchemaError, match=str(out / "runs.parquet")):
        read_frame(out, "runs")


def test_older_per_suite_layout_still_reads(tmp_path):
    """data/<run_id>/ as older code wrote it: http1 in runs.parquet, the other suites
    in <suite>_runs.parquet, float counts, no window columns."""
    run = load_run(make_fake_run(tmp_path / "raw"))
    old = run.runs.drop(columns=["window_s", "window_end"]).copy()
    old["requests"] = old["requests"].astype("float64")
    out = tmp_path / "data"
    out.mkdir()
    half = len(old) // 2
    old.iloc[:half].to_parquet(out / "runs.parquet")
    old.iloc[half:].assign(suite="h2c").to_parquet(out / "h2c_runs.parquet")
    got = read_frame(out, "runs")
    assert len(got) == len(old) and set(got["suite"]) == {"http1", "h2c"}
    assert got["window_s"].isna().all() and got["requests"].dtype == "Int64"
    assert got["requests"].sum() == int(np.nansum(old["requests"]))


def test_estimates_and_comparisons_agree_with_each_other(tmp_path):
    run = load_run(make_fake_run(tmp_path / "raw"))
    rs = run_stats(run.runs)
    row = rs.comparisons[(rs.comparisons["metric"] == "req_per_s") & (rs.comparisons["kind"] == "server")].iloc[0]
    a = rs.estimate((row["a_suite"], row["a_scenario"], row["a_server"]), "req_per_s")
    b = rs.estimate((row["b_suite"], row["b_scenario"], row["b_server"]), "req_per_s")
    if not row["paired"]:   # unpaired: the ratio is exactly the ratio of the two estimates
        assert row["ratio"] == pytest.approx(a["estimate"] / b["estimate"])
    back = rs.compare("req_per_s", (row["b_suite"], row["b_scenario"], row["b_server"]),
                      (row["a_suite"], row["a_scenario"], row["a_server"]))
    assert back["ratio"] == pytest.approx(1 / row["ratio"]) and back["lo"] == pytest.approx(1 / row["hi"])
