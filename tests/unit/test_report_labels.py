"""The reports' mislabels, each fixed where it is produced and each caught by
httplab.report.audit.mislabels: a peak transfer read off GET /ping, a compiler's version printed as
a server's, a core count that is not the run's, a latency Δ worded faster/slower, a share printed
as a Δ, a geometric mean printed as ± its larger side, a legend naming a server twice."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from httplab.lab.suites import suite_module
from httplab.report.audit import mislabels
from httplab.report.engine import server_version, tools_table
from httplab.report.fmt import fmt_kilo, fmt_mean_ci
from httplab.report.history.page import legend_names
from httplab.report.summary import summary_block, transfer_scenarios
from httplab.stats import RatioCI, format_delta
from httplab.stats.cells import MeanCI
from httplab.stats.metrics import METRICS
from httplab.tidy.rawrun import build_frames
from make_fake_run import make_fake_run

ROOT = Path(__file__).resolve().parents[2]
HTTP1_RUN = "20261206T032534Z-vm"      # the seed suites' run: C uring ran GET /ping only
FOUR_CORE_RUN = "20261126T014054Z-vm"  # the 16-core machine: load tool on CPUs 12-15


# ---------------------------------------------------------------- 1. peak transfer
def test_peak_transfer_is_read_over_the_suites_transfer_scenarios(tmp_path):
    runs = build_frames(make_fake_run(tmp_path / "raw"))[0]
    declared = transfer_scenarios("http1")
    assert declared and all(s.startswith("post_echo_") for s in declared)
    # a server that ran GET /ping only: its peak transfer is no /ping figure
    ping_only = runs[runs["scenario"].str.startswith("get_ping")].copy()
    ping_only["server"] = "evloop_uring"
    block = summary_block(pd.concat([runs, ping_only]), [], servers=["evloop", "evloop_uring", "go"],
                          baseline="go", suite="http1")
    lines = [ln for ln in block.splitlines() if ln.startswith("Peak transfer:")]
    assert len(lines) == 3
    assert not any("GET /ping" in ln for ln in lines), lines
    assert "not measured" in next(ln for ln in lines if ln.startswith("Peak transfer: C uring"))
    assert all("POST /echo" in ln for ln in lines if "not measured" not in ln), lines
    assert transfer_scenarios(None) is None and transfer_scenarios("backends") is None


# ---------------------------------------------------------------- 2. versions
@pytest.mark.parametrize("recorded, printed", [
    ("evloop (this checkout, git b617bb3), gcc 12.2.0, nghttp2 1.52.0", "git b617bb3, built with gcc 12.2.0"),
    ("io_uring floor responder (this checkout, git b617bb3), liburing 2.3-3, gcc 12.2.0", "git b617bb3, built with gcc 12.2.0"),
    ("g++ 12.2.0", "built with g++ 12.2.0"),
    ("Boost 1.74.0.3, g++ 12.2.0", "1.74.0.3, built with g++ 12.2.0"),
    ("rustc 1.95.0 (59807616e 2026-04-14)", "built with rustc 1.95.0"),
    ("axum 0.8.9, tokio 1.54.1, rustc 1.95.0 (59807616e 2026-04-14)", "0.8.9, built with rustc 1.95.0"),
    ("net/http, go1.26.8, golang.org/x/net v0.62.0", "go1.26.8"),
    ("nginx version: nginx/1.22.1", "1.22.1"),
    ("Python 3.11.7", "Python 3.11.7"),
])
def test_a_server_version_is_its_own_and_the_compiler_is_named(recorded, printed):
    assert server_version(recorded) == printed


def test_the_tools_table_prints_no_compiler_version_as_a_servers(tmp_path):
    meta = json.loads((ROOT / "raw" / HTTP1_RUN / "meta.json").read_text())
    (tmp_path / "x.md").write_text("# x\n\n" + tools_table(meta) + "\n")
    assert "| server C (evloop) | git " in (tmp_path / "x.md").read_text()
    assert mislabels(tmp_path) == []


# ---------------------------------------------------------------- 3. cores
@pytest.mark.parametrize("client, server, says", [
    ("1", "0", "The load generator has one core (CPU 1)"),
    ("12-15", "0-11", "The load generator has four cores (CPU 12-15)"),
])
def test_the_cost_note_gives_the_runs_recorded_cores(client, server, says):
    note = suite_module("http1").cost_note(SimpleNamespace(run=SimpleNamespace(meta={"client_cpus": client,
                                                                                    "server_cpus": server})))
    assert note.startswith(says), note
    assert ("the server's one core was" in note) == (server == "0")


def test_the_cost_note_of_the_four_core_run_passes_the_audit(tmp_path):
    meta = json.loads((ROOT / "raw" / FOUR_CORE_RUN / "meta.json").read_text())
    note = suite_module("http1").cost_note(SimpleNamespace(run=SimpleNamespace(meta=meta)))
    (tmp_path / "http1.md").write_text("# x\n\n" + note + "\n")
    assert mislabels(tmp_path, ROOT / "data" / FOUR_CORE_RUN) == []


# ---------------------------------------------------------------- 4. latency words
def test_latency_deltas_are_lower_or_higher_never_faster():
    for name in ("lat_p50_us", "lat_p99_us", "lat_p999_us"):
        m = METRICS[name]
        assert m.better.startswith("lower ") and m.worse.startswith("higher "), m
        assert "faster" not in (m.better, m.worse) and "slower" not in (m.better, m.worse)
    assert (METRICS["lat_p99_us"].better, METRICS["req_per_s"].better) == ("lower P99", "faster")


# ---------------------------------------------------------------- 5. Δ = ratio − 1
def test_a_delta_is_the_ratio_less_one():
    # POST at 65 % of root
    assert format_delta(RatioCI(-0.35, -0.42, -0.27, 12, 12, 0.95)) == "−35% [−42%, −27%]"


# ---------------------------------------------------------------- 6. asymmetric intervals
def test_a_geometric_mean_is_printed_with_its_bounds():
    cell = MeanCI(113_899.0, 105_911.0, 122_489.0, 12, 0.95)
    assert fmt_mean_ci(cell) == "113,899 [105,911 – 122,489] (n=12)"
    assert fmt_mean_ci(MeanCI(10.0, 8.0, 12.0, 5, 0.95), fmt_kilo) == "10 ± 2 (n=5)"   # symmetric: ±


# ---------------------------------------------------------------- 7. legend
def test_the_history_legend_names_each_server_once():
    names = legend_names(["evloop", "go", "lang_go_std", "nginx"])
    assert len(set(names.values())) == 4
    assert names["evloop"] == "C (evloop)" and names["nginx"] == "nginx"
    assert names["go"] != names["lang_go_std"] and all("Go net/http" in names[s] for s in ("go", "lang_go_std"))


# ---------------------------------------------------------------- the audit catches each kind
PLANTED = [
    # (report name, run whose data it is checked against, line, what the audit says)
    ("http1.md", HTTP1_RUN, "Peak transfer: C uring 14.10 MiB/s [13.07 MiB/s, 15.20 MiB/s] (GET /ping, 200 conns)",
     "peak transfer"),
    ("http1.md", HTTP1_RUN, "Peak transfer: C 1.03 GiB/s [962.61 MiB/s, 1.14 GiB/s] (GET /echo 4 KiB, 100 conns)",
     "peak transfer"),
    ("x.md", None, "| Tool | Version |\n|---|---|\n| `gcc` | 12.2.0 |\n| server C (evloop) | 12.2.0 |", "compiler"),
    ("http1.md", FOUR_CORE_RUN, "The load generator has one core. When it saturates, …", "load generator has one"),
    ("x.md", None, "| Scenario | Server | n | P99 | Δ P99 vs Go |\n|:--|:--|:--|:--|:--|\n"
     "| a | C | 5 | 1.2 ms [1.0 ms – 1.4 ms] | −78% [−81%, −76%] faster |", "latency Δ"),
    ("x.md", None, "- P99 at 10,000 req/s against C: Go +290% [+153%, +502%] slower; nginx …", "latency Δ"),
    ("x.md", None, "| Server | Δ POST vs root |\n|:--|:--|\n| Go net/http | 65% [58%, 73%] slower |", "share"),
    ("x.md", None, "n = ok runs per cell.\n\n| Connections | C req/s |\n|:--|:--|\n| 100 | 113,899 ± 8,591 (n=12) |",
     "± its larger side"),
    ("x.md", None, "- The knee: C 37,125 ± 3,137 (n=5) req/s (34% of its capacity)", "± its larger side"),
    ("history.md", None, "![8 panels: req/s of each server (C (evloop), C (evloop, io_uring), Go net/http, nginx, "
     "Go net/http, Rust std::net (8-thread pool)) in every committed run](x.png)", "names Go net/http twice"),
]


@pytest.mark.parametrize("name, run_id, planted, says", PLANTED)
def test_each_kind_of_mislabel_is_caught(tmp_path, name, run_id, planted, says):
    (tmp_path / name).write_text("# x\n\n" + planted + "\n")
    bad = mislabels(tmp_path, ROOT / "data" / run_id if run_id else None)
    assert len(bad) == 1 and says in bad[0], bad
    from httplab.report.audit import main
    (tmp_path / "ok.md").write_text("# ok\n\n| a | b |\n|---|---|\n| x | +5% [+1%, +9%] faster |\n")
    assert main([str(tmp_path), str(ROOT / "data" / (run_id or HTTP1_RUN))]) == 1


@pytest.mark.parametrize("planted", [
    "Peak transfer: C 1.63 GiB/s [1.55 GiB/s, 1.73 GiB/s] (POST /echo 64 KiB, 100 conns)",
    "Peak transfer: C uring not measured (it ran none of the scenarios the peak transfer is read on)",
    "| Tool | Version |\n|---|---|\n| `gcc` | 12.2.0 |\n| server C (evloop) | git b617bb3, built with gcc 12.2.0 |",
    "The load generator has one core (CPU 1). … how close the server's one core was to full.",
    "| Scenario | Server | n | P99 | Δ P99 vs Go |\n|:--|:--|:--|:--|:--|\n| a | C | 5 | 1.2 ms [1.0 ms – 1.4 ms] | −78% [−81%, −76%] lower P99 |",
    "| Server | Δ POST vs root |\n|:--|:--|\n| Go net/http | −35% [−42%, −27%] slower |",
    "| Position | n runs | req/s vs the point's mean |\n|:--|:--|:--|\n| 1 | 97 | −0.4% ± 2.1% |",
])
def test_the_right_labels_pass(tmp_path, planted):
    (tmp_path / "http1.md").write_text("# x\n\n" + planted + "\n")
    assert mislabels(tmp_path, ROOT / "data" / HTTP1_RUN) == []


@pytest.mark.parametrize("server_cpus, server, named, short", [
    ("0", "evloop", "C (evloop)", "C"),                          # the two-core runs: one process, its plain name
    ("0-11", "evloop", "C (evloop), 12 cores", "C ×12"),         # the 16-core runs: twelve workers, said so
    ("0-11", "evloop@1", "C (evloop), 1 core", "C ×1"),          # pinned to its own count: that count
    ("0-11", "go", "Go net/http, 12 cores", "Go ×12"),
    ("0-11", "evloop~aa", "C (evloop), 12 cores, A/A copy", "C ×12 A/A"),
])
def test_a_server_is_named_with_the_cores_its_run_gave_it(server_cpus, server, named, short):
    """'C' is one process in the two-core runs and twelve workers in the 16-core ones: every name a
    report prints (title, Servers row, findings, and every table's columns and rows) says the cores
    (issue: the same name stood for both). The report's context sets it once per report."""
    from httplab.lab.hoststate import parse_cpu_list
    from httplab.lab.servers import display_name, name_servers_for_run, short_name
    try:
        name_servers_for_run(len(parse_cpu_list(server_cpus) or []))
        assert display_name(server) == named
        assert short_name(server) == short
    finally:
        name_servers_for_run(None)


def test_a_16_core_report_names_its_columns_with_the_cores():
    """The committed seed-conditions run's context: its tables' columns read "C ×12", not "C"."""
    from httplab.report import engine as R
    from httplab.lab.servers import name_servers_for_run, short_name
    run = "20261126T013741Z-vm"
    if not (ROOT / "data" / run / "estimates.parquet").is_file():
        pytest.skip("the run is not in data/")
    try:
        ctx = R.open_report("http1", run_dir=ROOT / "raw" / run, out_dir=ROOT / "data" / run, baseline="go")
        assert short_name("evloop") == "C ×12" and short_name("evloop@1") == "C ×1"
        from httplab.report.tables import cost_table
        cells = cost_table(ctx.runs, **ctx.stat_args()).to_string()
        assert "C (evloop), 12 cores" in cells and "Go net/http, 12 cores" in cells
    finally:
        name_servers_for_run(None)
