"""The backends report (suites/backends/report.ipynb and report.py): its
targets and ratios are data (suites/backends/targets.toml) naming points the suite declares and
servers with manifests; the targets are decided as the versus report decides them, per target's own
contestant; the tables and figure read the comparisons frame, on a backends run captured here
(tests/fixtures/backends: `run_all.sh --suites backends --quick --aa --reps 5 --duration 1
--warmup 0`, GET /ping at 100 connections and pipelined)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from httplab.lab.suites import suite_module
B = suite_module("backends")
V = suite_module("versus")
from httplab.stats.write import run_stats
from httplab.lab import servers as S
from httplab.tidy.rawrun import load_run
from notebook_kernel import needs_kernel

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "backends"


def suite_scenarios() -> set[str]:
    text = (ROOT / "suites" / "backends" / "backends.sh").read_text()
    block = re.search(r"^SCENARIOS=\($(.*?)^\)$", text, flags=re.M | re.S)
    assert block
    return {line.strip().strip('"').split()[0] for line in block.group(1).splitlines()
            if line.strip().startswith('"')}


def test_the_targets_are_the_issues():
    got = [(t.scenario, t.contestant, t.reference, t.bound, t.at_most) for t in B.load_targets()]
    assert got[0] == ("get_ping_c100", "evloop_uring", "floor", 0.85, True)
    # never worse than the epoll backend at any connection count of the matrix
    assert sorted(g[0] for g in got[1:]) == ["get_ping_c100", "get_ping_c200", "get_ping_c50", "get_ping_c500"]
    assert all(g[1:] == ("evloop_uring", "evloop", 1.0, True) for g in got[1:])
    assert B.load_targets()[0].words() == "C uring CPU-µs/req ≤ 0.85 × floor's"


def test_every_target_and_ratio_names_a_point_of_the_suite_and_known_servers():
    scenarios, known = suite_scenarios(), set(S.manifests())
    for t in B.load_targets():
        assert t.suite == "backends" and t.scenario in scenarios
        assert {t.contestant, t.reference} <= known
    ratios = B.load_ratios()
    assert ratios[0] == B.Ratio("evloop_uring", "evloop", "the C server: io_uring / epoll")
    assert ("floor_uring", "floor") in {(r.a, r.b) for r in ratios}
    for r in ratios:
        assert {r.a, r.b} <= known


@pytest.mark.parametrize("text, says", [
    ("[[ratio]]\na = 'x'\nb = 'y'\n", "[[ratio]] 1: needs exactly the keys a, b and what"),
    ("[[ratio]]\na = 'x'\nb = ''\nwhat = 'w'\n", "a, b and what must be non-empty strings"),
    ("[[pair]]\na = 'x'\n", "unknown top-level key(s) pair"),
])
def test_a_bad_ratio_is_named(tmp_path, text, says):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(V.TargetsError) as e:
        B.load_ratios(path)
    assert str(path) in str(e.value) and says in str(e.value)


def test_a_target_on_another_suite_is_refused(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[[target]]\nsuite = "http1"\nscenario = "get_ping_c100"\nmetric = "cpu_us_per_req"\n'
                    'contestant = "evloop_uring"\nreference = "floor"\nbound = 1\nat_most = true\nwhat = "w"\n')
    with pytest.raises(V.TargetsError, match="suite 'http1' is not one of backends"):
        B.load_targets(path)


@pytest.fixture(scope="module")
def ctx() -> SimpleNamespace:
    runs_dirs = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    assert len(runs_dirs) == 1, runs_dirs
    run = load_run(runs_dirs[0])
    stats = run_stats(run.runs)
    return SimpleNamespace(runs=run.runs, stats=stats, confidence=0.95,
                           stat_args=lambda: {"confidence": 0.95, "stats": stats})


def test_targets_are_decided_on_each_targets_own_pair(ctx):
    results = V.target_results(ctx.stats, targets=B.load_targets())
    first, row, decision = results[0]
    assert row is not None and (row["a_server"], row["b_server"]) == ("evloop_uring", "floor")
    assert row["paired"] and int(row["n_pairs"]) == 5
    assert decision == V.decide(first, row["ratio"], row["lo"], row["hi"], row["a_client_bound"],
                                row["b_client_bound"], "evloop_uring")
    # the quick capture has /ping at 100 connections only: the other counts say so
    assert [d.status for _, _, d in results[1:]].count(V.NO_DATA) == 3
    t = B.targets_table(ctx.stats)
    assert len(t) == len(results) and t.iloc[0]["Server"].startswith("C (evloop, io_uring): ")
    assert t.iloc[0]["Target met?"] == decision.text()
    md = B.findings_markdown(ctx.stats)
    assert md.startswith("- **HTTP/1.1 GET /ping, 100 conns") and "C uring/floor" in md


def test_gain_tables_and_figures(ctx):
    cpu = B.gain_table(ctx)
    assert list(cpu["Point"]) == ["GET /ping, 100 conns", "GET /ping ×16 pipelined, 100 conns"]
    col = "the C server: io_uring / epoll (C uring/C)"
    row = ctx.stats.compare("cpu_us_per_req", ("backends", "get_ping_c100", "evloop_uring"),
                            ("backends", "get_ping_c100", "evloop"))
    assert cpu.iloc[0][col] == V.ratio_cell(row)
    assert "h2o" in " ".join(cpu.columns) and cpu.iloc[1][[c for c in cpu.columns if "h2o" in c][0]] == "no data"
    rps = B.gain_table(ctx, "req_per_s")
    assert rps.attrs["title"].startswith("req/s")
    fig = B.ratio_plot(ctx)
    assert fig is not None and "3 ratios" in fig.httplab_description and "2 points" in fig.httplab_description
    assert B.cpu_by_connections(ctx) is not None
    assert not B.figures_table(ctx).empty


@needs_kernel
def test_notebook_executes_on_the_captured_run(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    run = next(p for p in FIXTURES.iterdir() if p.is_dir())
    monkeypatch.chdir(ROOT / "suites" / "backends")
    out = tmp_path / "out.ipynb"
    from httplab.stats.write import build_data
    build_data(run, tmp_path / "data")   # the one build step; the notebook reads only data/
    papermill.execute_notebook(str(ROOT / "suites" / "backends" / "report.ipynb"), str(out), kernel_name="httplab",
                               parameters={"run_dir": str(run), "out_dir": str(tmp_path / "data")},
                               progress_bar=False)
    text = json.dumps(json.loads(out.read_text()), ensure_ascii=False)
    assert "The suite's targets against this run" in text and "How the gain moves" in text
    assert "A/A noise floor" in text and "image/png" in text
    assert (tmp_path / "data" / "comparisons.parquet").is_file()
