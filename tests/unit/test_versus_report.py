"""The versus report (suites/versus/report.ipynb and report.py): the targets
(data: suites/versus/targets.toml, beside the parts) decided from the interval, never from the
point estimate, client-bound req/s decided only in the direction its bias allows, the contestant
taken from the run and the manifests, and the tables, figure and notebook on a versus run captured
here (tests/fixtures/versus: `run_all.sh --suites versus --quick --aa --reps 5 --duration 1
--warmup 0` on GET /ping; the machine was busy, so its intervals are wide and several runs noisy)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from httplab.lab.suites import suite_module
V = suite_module("versus")
from httplab.stats.write import run_stats
from httplab.tidy.rawrun import load_run
from notebook_kernel import needs_kernel

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "fixtures" / "versus" / "20261124T000036Z-vm"
NAN = math.nan
CPU_H2C, RPS_H2C, CPU_H2, CPU_H1 = V.load_targets()


def _suite_declarations(suite: str) -> tuple[set[str], set[str]]:
    """(scenario ids, HEADLINE_SCENARIOS) as suites/versus/<part>.sh declares them."""
    text = (ROOT / "suites" / "versus" / f"{suite}.sh").read_text()
    block = re.search(r"^SCENARIOS=\($(.*?)^\)$", text, flags=re.M | re.S)
    head = re.search(r"^HEADLINE_SCENARIOS=(\S*)$", text, flags=re.M)
    assert block and head, suite
    ids = {line.strip().strip('"').split()[0] for line in block.group(1).splitlines()
           if line.strip().startswith('"')}
    return ids, set(head.group(1).split(","))


def test_the_targets_file_holds_the_issues_targets():
    assert [(t.suite, t.scenario, t.metric, t.reference, t.bound, t.at_most) for t in V.load_targets()] == [
        ("versus_h2c", "get_ping_c100", "cpu_us_per_req", "h2o", 0.6, True),
        ("versus_h2c", "get_ping_c100", "req_per_s", "h2o", 1.5, False),
        ("versus_tls", "h2_get_ping_c100", "cpu_us_per_req", "h2o", 0.7, True),
        ("versus_tls", "h1_get_ping_c100", "cpu_us_per_req", "nginx", 1.0, True)]
    assert RPS_H2C.caveat == "where the client core allows" and CPU_H1.what == "HTTPS/1.1 GET /ping"


def test_every_target_is_a_point_its_suite_declares_with_a_reference_server():
    from httplab.lab import servers as S
    for t in V.load_targets():
        ids, headline = _suite_declarations(t.suite)
        assert t.scenario in ids, f"{t.scenario} is not a scenario of suites/versus/{t.suite}.sh"
        assert t.scenario in headline, f"{t.scenario}: the A/A copy does not run it (HEADLINE_SCENARIOS)"
        assert S.tier(t.reference) == "reference", t.reference


def test_the_contestant_comes_from_the_run_and_the_manifests():
    assert V.the_contestant(["nginx", "h2o", "evloop~aa", "evloop"]) == "evloop"
    assert V.the_contestant(["nginx", "h2o"]) == "evloop"     # none in the run: the manifests'
    assert V.the_contestant() == "evloop"


@pytest.mark.parametrize("text, says", [
    ("[[target]]\nsuite = 'versus_h2c'\n", "[[target]] 1: 'scenario' is missing"),
    ("[[target]]\nsuite = 'versus_h2c'\nscenario = 'x'\nmetric = 'rps'\nreference = 'r'\nbound = 1\n"
     "at_most = true\nwhat = 'w'\n", "metric 'rps' is not one of cpu_us_per_req, req_per_s"),
    ("[[target]]\nsuite = 'versus_h2c'\nscenario = 'x'\nmetric = 'req_per_s'\nreference = 'r'\nbound = 0\n"
     "at_most = true\nwhat = 'w'\n", "'bound' must be a ratio > 0"),
    ("[[target]]\nsuite = 'versus_h2c'\nscenario = 'x'\nmetric = 'req_per_s'\nreference = 'r'\nbound = 1\n"
     "at_most = 'yes'\nwhat = 'w'\n", "'at_most' must be a bool"),
    ("[[target]]\nsuite = 'h2c'\nmetric = 'req_per_s'\nscenario = 'x'\nreference = 'r'\nbound = 1\n"
     "at_most = true\nwhat = 'w'\nnote = ''\n", "unknown key(s) note"),
    ("target = 1\n", "'target' must be an array of tables"),
    ("[[target]\n", "not valid TOML"),
])
def test_a_bad_targets_file_is_named(tmp_path, text, says):
    path = tmp_path / "targets.toml"
    path.write_text(text)
    with pytest.raises(V.TargetsError) as e:
        V.load_targets(path)
    assert str(path) in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("target, ratio, lo, hi, status, says", [
    (CPU_H2C, 0.5, 0.45, 0.55, V.MET, "the whole interval [0.45×, 0.55×] is ≤ 0.6×"),
    (CPU_H2C, 0.7, 0.65, 0.75, V.MISSED, "the whole interval [0.65×, 0.75×] is beyond 0.6×"),
    (CPU_H2C, 0.58, 0.5, 0.66, V.OPEN, "the interval [0.50×, 0.66×] holds 0.6×"),   # point below, interval not
    (CPU_H2C, 0.62, 0.59, 0.65, V.OPEN, "holds 0.6×"),
    (CPU_H2C, 0.5, NAN, NAN, V.OPEN, "no interval (the point estimate 0.50× decides nothing"),
    (CPU_H2C, NAN, NAN, NAN, V.NO_DATA, "no ok runs"),
    (RPS_H2C, 1.6, 1.55, 1.65, V.MET, "is ≥ 1.5×"),
    (RPS_H2C, 1.2, 1.1, 1.3, V.MISSED, "beyond 1.5×"),
    (CPU_H1, 1.0, 0.95, 1.0, V.MET, "≤ 1×"),
])
def test_a_target_is_decided_by_its_interval(target, ratio, lo, hi, status, says):
    d = V.decide(target, ratio, lo, hi)
    assert d.status == status and says in d.reason, d


@pytest.mark.parametrize("ratio, lo, hi, c_cb, r_cb, status, says", [
    # the C server client-bound: its true req/s is higher, so only "met" stands
    (1.2, 1.1, 1.3, True, False, V.OPEN, "C was client-bound ⚑: its req/s is the load tool's ceiling, so the true ratio is above"),
    (1.6, 1.55, 1.65, True, False, V.MET, "C was client-bound ⚑: the true ratio lies further that way still"),
    # the reference client-bound: the true ratio is lower, so only "missed" stands
    (1.6, 1.55, 1.65, False, True, V.OPEN, "h2o was client-bound ⚑: its req/s is the load tool's ceiling, so the true ratio is below"),
    (1.2, 1.1, 1.3, False, True, V.MISSED, "beyond 1.5×"),
    (1.6, 1.55, 1.65, True, True, V.OPEN, "both servers client-bound"),
])
def test_client_bound_req_per_s(ratio, lo, hi, c_cb, r_cb, status, says):
    d = V.decide(RPS_H2C, ratio, lo, hi, c_cb, r_cb)
    assert d.status == status and says in d.reason, d


def test_client_bound_does_not_touch_cpu_targets():
    assert V.decide(CPU_H2C, 0.5, 0.45, 0.55, True, True).status == V.MET
    assert CPU_H2C.words() == "C CPU-µs/req ≤ 0.6 × h2o's" and RPS_H2C.words() == "C req/s ≥ 1.5 × h2o's"
    assert V.fmt_ratio(0.7412) == "0.74×" and V.fmt_ratio(0.0123) == "0.012×" and V.fmt_ratio(NAN) == "—"


@pytest.fixture(scope="module")
def ctx() -> SimpleNamespace:
    run = load_run(RUN)
    runs = run.runs
    stats = run_stats(runs)
    return SimpleNamespace(runs=runs, stats=stats, confidence=0.95,
                           stat_args=lambda: {"confidence": 0.95, "stats": stats})


def test_targets_table_reads_the_comparisons_frame(ctx):
    t = V.targets_table(ctx.stats)
    assert len(t) == 4 and len(t.columns) <= 8
    assert list(t["Target"]) == [x.words() for x in V.load_targets()]
    assert t.equals(V.targets_table(ctx.stats, "evloop"))   # the run's contestant by default
    for (target, row, decision), cell, verdict in zip(V.target_results(ctx.stats), t["Measured ratio"], t["Target met?"]):
        assert row is not None and row["paired"] and int(row["n_pairs"]) == 5
        assert (row["a_server"], row["b_server"]) == ("evloop", target.reference)
        assert cell.startswith(V.fmt_ratio(row["ratio"]) + f" [{V.fmt_ratio(row['lo'])}, {V.fmt_ratio(row['hi'])}]")
        assert decision == V.decide(target, row["ratio"], row["lo"], row["hi"], row["a_client_bound"], row["b_client_bound"])
        assert verdict == decision.text()
    # this run: h2c /ping CPU-µs/req C/h2o 0.97× [0.82×, 1.14×], so the 0.6× target is missed
    first = V.target_results(ctx.stats)[0]
    assert first[2].status == V.MISSED and "[0.82×, 1.14×]" in first[2].reason
    assert "5 pairs (paired by rep)" in set(t["Runs"])
    assert t.iloc[0]["Reference"].startswith("h2o: ") and " µs" in t.iloc[0]["C (evloop)"]
    assert "/s" in t.iloc[1]["C (evloop)"]
    md = V.findings_markdown(ctx.stats)
    assert md.count("\n- ") == 3 and "target ≤ 0.6×" in md


def test_the_targets_are_read_from_their_file(ctx, tmp_path):
    path = tmp_path / "targets.toml"
    path.write_text('[[target]]\nsuite = "versus_h2c"\nscenario = "get_ping_c100"\nmetric = "cpu_us_per_req"\n'
                    'reference = "h2o"\nbound = 2\nat_most = true\nwhat = "h2c GET /ping -m10"\n')
    (target, row, decision), = V.target_results(ctx.stats, targets=V.load_targets(path))
    assert target.bound == 2.0 and target.caveat == "" and target.words() == "C CPU-µs/req ≤ 2 × h2o's"
    # the same ratio [0.82×, 1.14×] that misses the file's 0.6× meets a 2× bound
    assert decision.status == V.MET and "[0.82×, 1.14×]" in decision.reason


def test_ratio_table_and_figure(ctx):
    t = V.ratio_table(ctx)
    assert list(t["Point"]) == ["h2c GET /ping", "HTTPS/1.1 GET /ping", "HTTPS/2 GET /ping"]
    assert [c for c in t.columns if c != "Point"] == [
        "C/nginx CPU-µs/req", "C/nginx req/s", "runs vs nginx", "C/h2o CPU-µs/req", "C/h2o req/s", "runs vs h2o"]
    row = ctx.stats.compare("cpu_us_per_req", ("versus_h2c", "get_ping_c100", "evloop"),
                            ("versus_h2c", "get_ping_c100", "nginx"))
    assert t.iloc[0]["C/nginx CPU-µs/req"] == V.ratio_cell(row)
    fig = V.ratio_plot(ctx)
    assert fig is not None and "6 points" in fig.httplab_description
    assert V.ratio_ticks(0.1, 10.0)[0] >= 0.1 and 1.0 in V.ratio_ticks(0.5, 2.0)
    floors = V.noise_floor_tables(ctx)
    assert [f.attrs.get("title") for f in floors] == ["A/A noise floor, versus_h2c", "A/A noise floor, versus_tls"]
    assert not V.figures_table(ctx, "versus_tls").empty


def test_no_versus_suite_says_no_data(ctx):
    empty = SimpleNamespace(runs=ctx.runs.iloc[0:0], stats=run_stats(ctx.runs.iloc[0:0]), confidence=0.95,
                            stat_args=ctx.stat_args)
    assert V.targets_table(empty.stats).empty and V.ratio_table(empty).empty
    assert V.ratio_plot(empty) is None and V.figures_table(empty, "versus_h2c").empty
    assert all(d.status == V.NO_DATA for _, _, d in V.target_results(empty.stats))


def test_notebook_shape():
    nb = nbformat.read(ROOT / "suites" / "versus" / "report.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "httplab"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for p in ("run_dir = None", "out_dir = None", "confidence = 0.95", 'baseline = "h2o"', 'contestant = None',
              'raw_root = "raw"', 'data_root = "data"'):
        assert p in tagged[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert any("open_versus_report" in c.source for c in code)
    assert all(len(c.source.splitlines()) <= 8 for c in code if c not in tagged)  # thin cells


@needs_kernel
def test_notebook_executes_on_the_captured_run(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    monkeypatch.chdir(ROOT / "suites" / "versus")
    out = tmp_path / "out.ipynb"
    from httplab.stats.write import build_data
    build_data(RUN, tmp_path / "data")   # the one build step; the notebook reads only data/
    papermill.execute_notebook(str(ROOT / "suites" / "versus" / "report.ipynb"), str(out), kernel_name="httplab",
                               parameters={"run_dir": str(RUN), "out_dir": str(tmp_path / "data")},
                               progress_bar=False)
    text = json.dumps(json.loads(out.read_text()), ensure_ascii=False)
    assert "The suite's targets against this run" in text and "**missed**" in text
    assert "A/A noise floor, versus_h2c" in text and "image/png" in text
    assert (tmp_path / "data" / "comparisons.parquet").is_file()
