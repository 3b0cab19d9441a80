"""Run against run (httplab.stats.compare, stats.comparable, report.compare): a planted regression
is flagged, an A/A pair flags nothing, runs of other machines, CPU sets or tools are refused
unless forced (and then the differences are listed), and the index links comparisons."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from httplab.report import compare as K
from httplab.report import compare_tables as T
from httplab.report.index import collect_comparisons, render, render_comparisons
from httplab.stats import compare as C
from httplab.stats import compare_io as io
from httplab.stats.comparable import blocking, differences
from httplab.stats.frames import Cells, noise_floors
from httplab.stats.metrics import METRICS
from httplab.tidy.read import read_frame
from make_fake_run import make_fake_run

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ("20261121T061254Z-vm", "20261121T074814Z-vm", "20261121T083658Z-vm", "20261123T092401Z-vm")
SCENARIOS = ("get_ping_c100", "post_echo_b1024_c100", "get_echo_s64_c100")


def runs(run_id: str, seed: int, reps: int = 5, servers: tuple[str, ...] = ("evloop", "go"),
         scale: dict[str, dict[str, float]] | None = None, sigma: float = 0.03) -> pd.DataFrame:
    """A synthetic runs frame (the columns stats.frames.Cells reads): lognormal noise around fixed
    centres; scale[server][metric] multiplies a server's centre."""
    rng = np.random.default_rng(seed)
    centre = {"req_per_s": 100_000.0, "cpu_us_per_req": 10.0, "lat_p99_us": 2_000.0}
    rows = []
    for server in servers:
        for scenario in SCENARIOS:
            for rep in range(1, reps + 1):
                row = {"run_id": run_id, "suite": "http1", "scenario": scenario, "server": server, "rep": rep,
                       "status": "ok", "client_bound": False, "noisy": False}
                for m, c in centre.items():
                    row[m] = c * (scale or {}).get(server, {}).get(m, 1.0) * math.exp(rng.normal(0, sigma))
                rows.append(row)
    return pd.DataFrame(rows)


def verdicts(df: pd.DataFrame, server: str, metric: str) -> set[str]:
    return set(df[(df["server"] == server) & (df["metric"] == metric)]["verdict"])


# ---------------------------------------------------------------- the verdicts
def test_a_planted_20_percent_regression_is_flagged():
    a = runs("A", seed=1)
    b = runs("B", seed=2, scale={"evloop": {"req_per_s": 0.8, "cpu_us_per_req": 1.25}})
    df = C.run_vs_run(a, b)
    assert verdicts(df, "evloop", "req_per_s") == {C.REGRESSION}
    assert verdicts(df, "evloop", "cpu_us_per_req") == {C.REGRESSION}
    rows = df[(df["server"] == "evloop") & (df["metric"] == "req_per_s")]
    assert ((rows["ratio"] > 0.75) & (rows["ratio"] < 0.85) & (rows["hi"] < 0.95)).all()
    # nothing else changed: no finding anywhere else
    rest = df[~((df["server"] == "evloop") & df["metric"].isin(["req_per_s", "cpu_us_per_req"]))]
    assert not set(rest["verdict"]) & {C.REGRESSION, C.IMPROVEMENT, C.POSSIBLE_REGRESSION, C.POSSIBLE_IMPROVEMENT}
    assert (df["p_holm"] >= df["p_value"] - 1e-12).all()   # Holm only raises p-values
    assert set(df["floor_source"]) == {C.FLOOR_DEFAULT} and set(df["noise_floor"]) == {C.DEFAULT_FLOOR}


def test_the_opposite_change_is_an_improvement_and_findings_come_first():
    a = runs("A", seed=3)
    b = runs("B", seed=4, scale={"go": {"req_per_s": 1.3, "lat_p99_us": 0.7}})
    df = C.findings_first(C.run_vs_run(a, b))
    assert verdicts(df, "go", "req_per_s") == {C.IMPROVEMENT} and verdicts(df, "go", "lat_p99_us") == {C.IMPROVEMENT}
    assert set(df["verdict"].iloc[:6]) == {C.IMPROVEMENT}


def test_an_aa_pair_flags_nothing():
    same = C.run_vs_run(runs("A", seed=5), runs("A", seed=5))
    assert set(same["verdict"]) == {C.NO_CLEAR} and np.allclose(same["ratio"], 1.0)
    drawn = C.run_vs_run(runs("A", seed=6), runs("B", seed=7))
    assert set(drawn["verdict"]) <= {C.NO_CLEAR, C.BELOW_FLOOR}


def test_a_committed_run_against_itself_and_scaled():
    a = read_frame(ROOT / "data" / COMMITTED[0], "runs")
    assert set(C.run_vs_run(a, a)["verdict"]) <= {C.NO_CLEAR, C.NO_INTERVAL}
    b = a.copy()
    evloop = b["server"] == "evloop"
    b.loc[evloop, "req_per_s"] *= 0.8
    b.loc[evloop, "cpu_us_per_req"] *= 1.25
    df = C.run_vs_run(a, b)
    flagged = df[df["verdict"].isin([C.REGRESSION, C.POSSIBLE_REGRESSION])]
    assert set(flagged["server"]) == {"evloop"} and set(flagged["metric"]) == {"req_per_s", "cpu_us_per_req"}
    assert not (df["verdict"] == C.IMPROVEMENT).any()
    planted = df[(df["server"] == "evloop") & df["metric"].isin(["req_per_s", "cpu_us_per_req"])]
    # Many of evloop's points spread 10-20 % run to run in this run: at n = 5 a side and with Holm
    # over 240 comparisons, a 20 % change shows beyond the floor at the quieter ones only (19 of
    # the 50 rows); the others say "no clear difference", never the wrong direction.
    assert (planted["verdict"] == C.REGRESSION).mean() > 0.3


def test_fewer_than_five_runs_show_the_ratio_without_an_interval():
    df = C.run_vs_run(runs("A", seed=8, reps=3), runs("B", seed=9, reps=3, scale={"evloop": {"req_per_s": 0.5}}))
    assert set(df["verdict"]) == {C.NO_INTERVAL}
    assert df["lo"].isna().all() and df["ratio"].notna().all() and (df["reason"] == "CI needs ≥ 5 runs").all()
    row = df[(df["server"] == "evloop") & (df["metric"] == "req_per_s")].iloc[0]
    assert T.delta_text(row).endswith("(n=3/3, CI needs ≥ 5 runs)")


def test_failed_runs_are_left_out():
    a, b = runs("A", seed=10), runs("B", seed=11)
    b.loc[(b["server"] == "go") & (b["rep"] <= 2), ["status", "req_per_s"]] = ["failed", 1.0]
    df = C.run_vs_run(a, b)
    go = df[(df["server"] == "go") & (df["metric"] == "req_per_s")]
    assert (go["n_b"] == 3).all() and (go["verdict"] == C.NO_INTERVAL).all()


def test_the_aa_floor_is_the_larger_of_the_two_runs_and_copies_are_not_compared():
    a = runs("A", seed=12, servers=("evloop", "evloop~aa", "go"), sigma=0.03)
    b = runs("B", seed=13, servers=("evloop", "evloop~aa", "go"), sigma=0.08)
    df = C.run_vs_run(a, b)
    assert "evloop~aa" not in set(df["server"])
    fa, fb = noise_floors(Cells(a)), noise_floors(Cells(b))
    for (suite, metric), f in fb.items():
        rows = df[(df["suite"] == suite) & (df["metric"] == metric)]
        assert np.allclose(rows["noise_floor"], max(f, fa.get((suite, metric), 0.0)))
    assert set(df["floor_source"]) == {C.FLOOR_B}   # the noisier run has the larger floor


def test_verdict_rules():
    m = METRICS["req_per_s"]
    cpu = METRICS["cpu_us_per_req"]
    v = C.run_verdict
    assert v(0.8, 0.75, 0.85, 0.001, m, 0.05) == C.REGRESSION
    assert v(0.8, 0.75, 0.85, 0.001, cpu, 0.05) == C.IMPROVEMENT
    assert v(0.93, 0.90, 0.97, 0.001, m, 0.05) == C.POSSIBLE_REGRESSION
    assert v(0.97, 0.96, 0.98, 0.001, m, 0.05) == C.BELOW_FLOOR
    assert v(0.99, 0.90, 1.05, 0.5, m, 0.05) == C.NO_CLEAR
    assert v(0.8, 0.75, 0.85, 0.2, m, 0.05) == C.NO_CLEAR          # not after Holm
    assert v(0.8, math.nan, math.nan, math.nan, m, 0.05) == C.NO_INTERVAL
    assert v(0.8, 0.75, 0.85, 0.001, m, 0.05, both_client_bound=True) == C.BOTH_CLIENT_BOUND
    assert v(1.25, 1.2, 1.3, 0.001, cpu, 0.05, both_client_bound=True) == C.REGRESSION


# ---------------------------------------------------------------- refusals
META = {"run_id": "x", "complete": True, "server_cpus": "0", "client_cpus": "1",
        "host": {"cpu_model": "AMD EPYC", "cores": 2, "kernel": "Linux 6.18", "hostname": "vm"},
        "tools": {"wrk": "wrk 4.1.0", "h2load": "h2load nghttp2/1.52.0", "oha": "oha 1.16.0"},
        "params": {"duration_s": 4, "reps": 5}}


def _meta(**change) -> dict:
    m = json.loads(json.dumps(META))
    for path, value in change.items():
        *parents, key = path.split("__")
        d = m
        for p in parents:
            d = d[p]
        d[key] = value
    return m


@pytest.mark.parametrize("change,what", [
    ({"server_cpus": "0-1"}, "server_cpus"), ({"client_cpus": "2"}, "client_cpus"),
    ({"tools__wrk": "wrk 4.2.0"}, "tools.wrk"), ({"tools__oha": "oha 1.17.0"}, "tools.oha"),
    ({"host__cpu_model": "Intel Xeon"}, "host.cpu_model"), ({"host__hostname": "other"}, "host.hostname"),
    ({"host__kernel": "Linux 6.19"}, "host.kernel"), ({"host__cores": 4}, "host.cores"),
    ({"params__blocks": "sliced"}, "params.blocks"),
])
def test_a_difference_of_machine_cpus_or_tools_is_refused_unless_forced(change, what):
    diffs = differences(META, _meta(**change))
    assert [d.what for d in blocking(diffs)] == [what]
    assert what in K.refusal_of(diffs, force=False) and "--force" in K.refusal_of(diffs, force=False)
    assert K.refusal_of(diffs, force=True) == ""
    md = T.differences_markdown(diffs, forced=True)
    assert "--force" in md and f"**{what}**" in md


def test_what_does_not_block():
    b = _meta(params__duration_s=3)
    del b["tools"]["oha"]               # a tool only one run recorded is not compared ...
    diffs = differences(META, b)
    assert not blocking(diffs) and [d.what for d in diffs] == ["params.duration_s"]
    del b["tools"]["wrk"]               # ... but the load tools always are
    assert [d.what for d in blocking(differences(META, b))] == ["tools.wrk"]


def _raw_pair(tmp_path: Path, **change) -> tuple[Path, Path, Path]:
    raw = tmp_path / "raw"
    a = make_fake_run(raw, "20260101T000000Z-a", start_utc="2026-01-01T00:00:00Z", seed=1)
    b = make_fake_run(raw, "20260102T000000Z-b", start_utc="2026-01-02T00:00:00Z", seed=2)
    meta = json.loads((b / "meta.json").read_text())
    for k, v in change.items():
        meta[k] = v
    (b / "meta.json").write_text(json.dumps(meta))
    return raw, a, b


def test_check_refuses_and_force_overrides(tmp_path, capsys):
    raw, a, b = _raw_pair(tmp_path, server_cpus="0-1")
    data = tmp_path / "data"
    args = ["check", a.name, b.name, "--raw", str(raw), "--data", str(data)]
    assert K.main(args) == 1
    assert "server_cpus" in capsys.readouterr().err
    assert not data.exists()                        # nothing built or written before the refusal
    assert K.main(args + ["--force"]) == 0
    out, err = capsys.readouterr()
    assert out.split("\n")[:3] == [a.name, b.name, f"{a.name}__vs__{b.name}"] and "server_cpus" in err
    assert (data / a.name / "runs.parquet").is_file()   # built from raw/ when absent


def test_a_missing_run_or_no_common_point_is_refused(tmp_path, capsys):
    raw, a, b = _raw_pair(tmp_path)
    assert K.main(["check", a.name, "nope", "--raw", str(raw), "--data", str(tmp_path / "data")]) == 1
    assert "'nope' not found" in capsys.readouterr().err
    other = make_fake_run(raw, "20260103T000000Z-c", servers=("h2o",), seed=3)
    assert K.main(["check", a.name, other.name, "--raw", str(raw), "--data", str(tmp_path / "data")]) == 1
    assert "no point" in capsys.readouterr().err


# ---------------------------------------------------------------- files, text, index, notebook
def test_open_comparison_writes_the_frame_and_the_summary_reads_it(tmp_path, capsys):
    raw, a, b = _raw_pair(tmp_path)
    out = tmp_path / "reports" / "compare" / f"{a.name}__vs__{b.name}"
    cmp = K.open_comparison(a.name, b.name, raw_root=raw, data_root=tmp_path / "data",
                            reports_root=tmp_path / "reports", start=ROOT)
    assert cmp.out_dir == out and not cmp.refusal and set(cmp.built) == {a.name, b.name}
    assert {p.name for p in cmp.written} == {"comparisons.parquet", "comparisons.csv", "compare.json"}
    back = io.read_comparisons(out)
    assert len(back) == len(cmp.frame) and set(pd.read_csv(out / "comparisons.csv").columns) == set(back.columns)
    assert K.main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"B {b.name} against A {a.name}: ") and "Δ B vs A [CI]" in text


def test_summary_lists_findings_first_and_forced_differences():
    a = runs("A", seed=1)
    b = runs("B", seed=2, scale={"evloop": {"req_per_s": 0.8}})
    df = C.run_vs_run(a, b)
    diffs = differences(META, _meta(tools__wrk="wrk 4.2.0"))
    text = T.summary_text(df, "A", "B", forced=True, diffs=diffs)
    lines = text.splitlines()
    assert "WARNING" in lines[1] and "tools.wrk" in lines[2]
    table = lines[lines.index(next(x for x in lines if x.startswith("verdict"))) + 1:]
    assert all(x.startswith("regression") for x in table[:len(SCENARIOS)])
    assert not any(x.startswith("regression") for x in table[len(SCENARIOS):])


def test_index_links_every_comparison(tmp_path):
    reports = tmp_path / "reports"
    d = reports / "compare" / "A__vs__B"
    d.mkdir(parents=True)
    (d / "compare.html").write_text("x")
    (d / "compare.md").write_text("x")
    df = C.run_vs_run(runs("A", seed=1), runs("B", seed=2, scale={"evloop": {"req_per_s": 0.8}}))
    io.write_frame(df, d)
    io.write_facts(d, "A", "B", True, [], 0.95, 0.05)
    (reports / "compare" / "empty").mkdir()          # no report in it: not listed
    found = collect_comparisons(reports)
    assert [c.name for c in found] == ["A__vs__B"] and found[0].forced
    assert dict(found[0].counts) == {"regression": 3}
    page = render([], found)
    assert 'href="compare/A__vs__B/compare.html"' in page and 'href="compare/A__vs__B/compare.md"' in page
    assert "3 regression" in page and "forced" in page
    assert render_comparisons([]) == ""


def test_committed_runs_frames_read():
    """pandas ≥ 3 reads parquet text as its str dtype: read_frame still validates them."""
    for run in COMMITTED:
        assert len(read_frame(ROOT / "data" / run, "runs"))


def test_notebook_shape():
    nb = nbformat.read(ROOT / "notebooks" / "compare.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "httplab"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for name in ("run_a = None", "run_b = None", "out_dir = None", "confidence = 0.95", "force = False"):
        assert name in code[0].source
    assert all(not c.outputs and c.execution_count is None for c in code), "commit without outputs"


def test_forest_plot_draws_every_point():
    from httplab.report.compare_plot import delta_tick, forest_plot
    df = C.run_vs_run(runs("A", seed=1), runs("B", seed=2, scale={"evloop": {"req_per_s": 0.8}}))
    frame = runs("A", seed=1).assign(method="GET", route="/ping", connections=100)
    fig = forest_plot(df, "http1", frame)
    assert fig is not None and len(fig.axes) == 3
    assert len(fig.axes[0].get_yticklabels()) == len(SCENARIOS) * 2
    assert forest_plot(df, "h2c", frame) is None
    assert delta_tick(0.8) == "−20%" and delta_tick(1.0) == "0" and delta_tick(1.25) == "+25%"


@pytest.mark.parametrize("args, says", [
    (["--bogus"], "unknown flag '--bogus'"),
    (["A"], "compare.sh takes two runs, RUN_A and RUN_B (got 1)"),
    (["A", "B", "--out"], "--out needs a value"),
    (["A", "B", "--confidence", "95"], "--confidence takes a level like 0.95 (got '95')"),
])
def test_compare_sh_refuses_bad_flags_before_any_work(args, says):
    import subprocess
    r = subprocess.run(["bash", str(ROOT / "scripts" / "compare.sh"), *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and says in r.stderr and "unbound variable" not in r.stderr


# ---------------------------------------------------------------- through the canary (--canary)
def _with_canary(run: Path, floor: float, cpu: float) -> None:
    """The run's http1 part with a canary at its start and end (tests/unit/test_canary.py's files)."""
    from test_canary import WRK, write_canary
    for when, f in (("start", floor), ("end", floor * 1.02)):
        write_canary(run, "http1", when, cpu, 20000.0, WRK.replace("75188.31", f"{f:.2f}"))


def test_two_machines_are_compared_through_their_canaries(tmp_path, capsys):
    """B's machine is another one (host.cpu_model); without --canary that is refused. With it the
    machine no longer blocks, and each req/s Δ is shown again over the floor canary's B/A."""
    raw, a, b = _raw_pair(tmp_path, host={"cpu_model": "Other CPU", "cores": 2, "kernel": "Linux 6", "hostname": "vm"})
    data = tmp_path / "data"
    args = ["check", a.name, b.name, "--raw", str(raw), "--data", str(data)]
    assert K.main(args) == 1 and "--canary" in capsys.readouterr().err
    # a run without a canary cannot be taken through one
    assert K.main(args + ["--canary"]) == 1
    assert "measured no canary" in capsys.readouterr().err
    shutil.rmtree(data)
    _with_canary(a, 50000.0, 150.0)
    _with_canary(b, 60000.0, 180.0)
    assert K.main(args + ["--canary"]) == 0
    cmp = K.open_comparison(a.name, b.name, raw_root=raw, data_root=data, reports_root=tmp_path / "reports",
                            start=ROOT, canary=True)
    assert not cmp.refusal and "canary.csv" in {p.name for p in cmp.written}
    (row,) = cmp.canary.to_dict("records")
    assert row["suite"] == "http1" and row["floor_req_per_s_ratio"] == pytest.approx(1.2)
    assert row["cpu_mops_per_s_ratio"] == pytest.approx(1.2)
    from httplab.stats.canary import through_canary
    t = through_canary(cmp.frame, cmp.canary)
    assert set(t["metric"]) == {"req_per_s", "cpu_us_per_req"} and set(t["suite"]) == {"http1"}
    rps = t[t["metric"] == "req_per_s"].iloc[0]
    assert rps["ratio_equal_machines"] == pytest.approx(rps["ratio"] / 1.2)
    cpu = t[t["metric"] == "cpu_us_per_req"].iloc[0]
    assert cpu["ratio_equal_machines"] == pytest.approx(cpu["ratio"] * 1.2)
    table = T.through_canary_table(cmp.frame, cmp.canary, cmp.runs_b)
    assert len(table) == len(t) and set(table["Canary Δ (floor)"]) == {"+20.0%"}


def test_the_share_the_canary_explains():
    from httplab.stats.canary import explained_share
    assert explained_share(1.2, 1.2) == pytest.approx(1.0)            # all of it the machine
    assert explained_share(1.44, 1.2) == pytest.approx(0.5)           # half of it (on the log scale)
    assert explained_share(1.2, 1.0) == pytest.approx(0.0)            # equally fast machines
    assert explained_share(1 / 1.2, 1.2, scale=-1.0) == pytest.approx(1.0)   # CPU-µs/req falls on a faster machine
    assert math.isnan(explained_share(1.005, 1.2))                   # a Δ within ±1 %: no share


def test_a_load_tools_build_blocks_and_an_old_run_ran_debians():
    """The lab's wrk and h2load keep Debian's version line, so their build is compared on its own:
    a run that predates the record ran Debian's build."""
    lab = _meta(tools__wrk_build="lab build: --lab-connect-wait")
    diffs = blocking(differences(META, lab))
    assert [d.what for d in diffs] == ["tools.wrk_build"]
    assert diffs[0].a.startswith("Debian's (not recorded") and diffs[0].b == "lab build: --lab-connect-wait"
    assert not blocking(differences(lab, json.loads(json.dumps(lab))))


def test_the_design_blocks_and_an_old_run_ran_server_blocks():
    """Interleaved slices read absolute req/s about 5 % below contiguous runs (docs/method.md, "The
    level shift at 32 reps"): a run-vs-run ratio across designs would take that for a change. A run
    without params.blocks ran in server blocks."""
    sliced = _meta(params__blocks="sliced")
    diffs = blocking(differences(META, sliced))
    assert [(d.what, d.a, d.b) for d in diffs] == [("params.blocks", "server", "sliced")]
    assert not differences(META, _meta(params__blocks="server"))
    assert not blocking(differences(sliced, _meta(params__blocks="sliced", params__reps=12)))


def test_the_design_is_compared_per_part_where_the_parts_ran_their_own():
    """The full profile runs a suite in its own design (suite.toml [full], recorded as
    suite_params.<part>): each part both runs ran is compared in the design it ran in."""
    own = _meta(suites=["http1", "latency_h1"], params__blocks="server",
                suite_params={"http1": {"blocks": "sliced"}, "latency_h1": {"blocks": "server"}})
    sliced = _meta(suites=["http1"], params__blocks="sliced")
    assert not blocking(differences(own, sliced))
    server = _meta(suites=["http1", "latency_h1"])
    assert [(d.what, d.a, d.b) for d in blocking(differences(own, server))] == [("params.blocks (http1)", "sliced", "server")]
    assert not [d for d in differences(own, _meta(**{"suites": ["http1"], "params__blocks": "sliced",
                                                     "params__given": ["blocks"]})) if "given" in d.what]
