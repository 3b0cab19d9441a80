"""Several client hosts per measured point: each host's files read, the hosts merged
exactly into the point's runs row (counts and histograms summed, the union window), the fail rules
(a missing host file, a host's exit code, start skew), the client columns and the client_hosts
frame; a point of one host is untouched.

The two-host fixture (tests/fixtures/multihost/run, make_fixture.py there) is real wrk and h2load
output of the reference run, rep 1 as client host 1 and rep 2 as client host 2, with hand-written
host records; tests/fixtures/multihost/real is a slice of a real two-host netns run, checked with the
same identities."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from httplab.parse.client_hosts import client_foreign_pct, read_client_host, start_skew_s
from httplab.parse.cpuwindow import read_client_time
from httplab.parse.errors import RawFormatError
from httplab.parse.h2load_loader import load_h2load_point
from httplab.parse.h2log import read_compact
from httplab.lab.hosts import suite_hosts
from httplab.parse import loaders
from httplab.parse.loaders import load_host_point, register_loader
from httplab.parse.loadresult import LoadResult
from httplab.parse.merge import MIXTURE_GRID, merge_histograms, merge_results
from httplab.parse.percentiles import weighted_percentiles
from httplab.parse.wrk import read_wrk_json
from httplab.parse.wrk_loader import load_wrk_point
from httplab.tidy import bounds, schema
from httplab.tidy.rawrun import (RUNS_COLUMNS, build_all_frames, build_frames, load_run,
                                 write_tidy)
from httplab.tidy.read import read_frame
from make_fake_run import make_fake_run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "multihost"
RUN = FIXTURE / "run" / "20261125T000000Z-mh"
REAL = FIXTURE / "real"
WRK_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wrk"
POINT = ("evloop", "get_ping_c50")


@pytest.fixture
def run(tmp_path) -> Path:
    dest = tmp_path / RUN.name
    shutil.copytree(RUN, dest)
    return dest


def _point(run_dir: Path, suite: str) -> Path:
    return run_dir / suite / POINT[0] / POINT[1]


def _edit_json(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))


def _row(runs: pd.DataFrame, suite: str) -> pd.Series:
    return runs[runs["suite"] == suite].iloc[0]


def _nearest_rank(samples: np.ndarray, q: float) -> float:
    """The q-th percentile of raw samples by nearest rank (independent of weighted_percentiles)."""
    s = np.sort(samples)
    return float(s[max(1, math.ceil(q / 100 * len(s))) - 1])


# ---------------------------------------------------------------- loaders read one host's files
def test_loaders_read_one_hosts_files_and_name_them(run):
    d = _point(run, "http1")
    for host in (1, 2):
        res = load_wrk_point(d, 1, host=host)
        hook = read_wrk_json(d / f"r1.h{host}.wrk.json")
        assert res.requests == hook.requests and res.source_files[0].endswith(f"r1.h{host}.wrk.json")
    assert load_wrk_point(d, 1) is None          # the single-host name is not there
    (d / "r1.h2.wrk.json").write_text('{"tool": "wrk"')
    with pytest.raises(RawFormatError, match=r"r1\.h2\.wrk\.json"):
        load_wrk_point(d, 1, host=2)

    h = _point(run, "h2c")
    res = load_h2load_point(h, 1, host=2)
    assert res.notes == () and res.requests == 2085310
    assert res.source_files[0].endswith("r1.h2.stdout.txt")
    _edit_json(h / "r1.h2.lat.host.json", exit_code=3)
    assert "latency run: h2load exited with code 3" in load_h2load_point(h, 1, host=2).notes
    (h / "r1.h1.lat.host.json").unlink()
    assert "latency run: r1.h1.lat.host.json missing" in load_h2load_point(h, 1, host=1).notes


def test_a_loader_without_host_argument_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "_LOADERS", dict(loaders._LOADERS))
    register_loader("onehost", lambda scenario_dir, rep: None)
    with pytest.raises(TypeError, match="'onehost'"):
        load_host_point("onehost", tmp_path, 1, 1)


def test_host_json_is_typed_and_a_bad_one_named(run):
    d = _point(run, "http1")
    h = read_client_host(d / "r1.h2.host.json", 2)
    assert (h.host, h.addr, h.cpus, h.exit_code) == (2, "10.231.0.12", "1", 0)
    assert 0 < h.busy <= 1 and h.started < h.ended
    with pytest.raises(RawFormatError, match=r"r1\.h2\.host\.json.*key 'host'.*client host 1"):
        read_client_host(d / "r1.h2.host.json", 1)
    doc = json.loads((d / "r1.h2.host.json").read_text())
    del doc["started"]
    (d / "r1.h2.host.json").write_text(json.dumps(doc))
    with pytest.raises(RawFormatError, match=r"r1\.h2\.host\.json, key 'started': missing key"):
        read_client_host(d / "r1.h2.host.json")
    _edit_json(d / "r1.h1.host.json", proc_stat_after={"0": [1] * 10})
    with pytest.raises(RawFormatError, match=r"r1\.h1\.host\.json.*CPU 1"):
        read_client_host(d / "r1.h1.host.json")


# ---------------------------------------------------------------- the merge identities
def check_merge_identities(run_dir: Path) -> None:
    """For every several-host point of the run: the runs row is the exact merge of its hosts."""
    runs, latency, hosts = build_all_frames(run_dir)
    multi = runs[runs["client_hosts"] > 1]
    assert len(multi) > 0
    for _, row in multi.iterrows():
        d = run_dir / row["suite"] / row["server"] / row["scenario"]
        n = int(row["client_hosts"])
        mine = hosts[(hosts["suite"] == row["suite"]) & (hosts["server"] == row["server"])
                     & (hosts["scenario"] == row["scenario"]) & (hosts["rep"] == row["rep"])]
        assert list(mine["host"]) == list(range(1, n + 1))
        tool = json.loads((d / "scenario.json").read_text())["tool"]
        results = [load_host_point(tool, d, int(row["rep"]), i) for i in range(1, n + 1)]
        records = [read_client_host(d / f"r{row['rep']}.h{i}.host.json", i) for i in range(1, n + 1)]
        # counts add up
        assert row["requests"] == sum(r.requests for r in results) == mine["requests"].sum()
        assert row["errors"] == sum(r.total_errors for r in results)
        # the window is the union of the hosts' windows
        union = (max(h.started + r.duration_s for h, r in zip(records, results))
                 - min(h.started for h in records))
        assert row["req_per_s"] == pytest.approx(row["requests"] / union)
        assert row["client_start_skew_ms"] == pytest.approx(1e3 * start_skew_s(records))
        if any(r.hist_kind != "exact" for r in results):
            continue
        # the histogram is the sum of the hosts' histograms, value by value
        total: dict[float, int] = {}
        for r in results:
            for v, c in zip(r.hist_values_us, r.hist_counts):
                total[float(v)] = total.get(float(v), 0) + int(c)
        merged = merge_results(results, records)
        assert dict(zip(map(float, merged.hist_values_us), map(int, merged.hist_counts))) == {
            v: c for v, c in total.items() if c > 0}
        lat = latency[(latency["suite"] == row["suite"]) & (latency["server"] == row["server"])
                      & (latency["scenario"] == row["scenario"]) & (latency["rep"] == row["rep"])]
        assert lat["count"].sum() == sum(int(r.hist_counts.sum()) for r in results)
        # percentiles of the merged histogram = those of all the hosts' samples together
        samples = np.concatenate([np.repeat(r.hist_values_us, r.hist_counts) for r in results])
        for q, col in ((50, "lat_p50_us"), (90, "lat_p90_us"), (99, "lat_p99_us"), (99.9, "lat_p999_us")):
            assert row[col] == _nearest_rank(samples, q), col
        assert row["lat_max_us"] == samples.max()
        # each host's own percentiles come from its own histogram
        for (_, h), r in zip(mine.iterrows(), results):
            assert h["lat_p99_us"] == weighted_percentiles(r.hist_values_us, r.hist_counts, [99])[0]


def test_merge_identities_of_the_fixture(run):
    check_merge_identities(run)
    runs, _ = build_frames(run)
    w, h2 = _row(runs, "http1"), _row(runs, "h2c")
    assert (w["status"], h2["status"]) == ("ok", "ok")
    wrk = [read_wrk_json(_point(run, "http1") / f"r1.h{i}.wrk.json") for i in (1, 2)]
    assert w["requests"] == sum(x.requests for x in wrk) == 465817 + 467316
    assert w["bytes_per_s"] == pytest.approx(sum(x.bytes for x in wrk) / (w["requests"] / w["req_per_s"]))
    samples = np.concatenate([np.repeat(x.hist_values_us, x.hist_counts) for x in wrk])
    # wrk's own means are over its histograms: the merged mean is the mean of all samples
    assert w["lat_mean_us"] == pytest.approx(samples.mean(), rel=1e-6)
    logs = [read_compact(_point(run, "h2c") / f"r1.h{i}.lat.h2log.json") for i in (1, 2)]
    assert h2["requests"] == 1520470 + 2085310
    assert h2["req_per_s_with_log"] == pytest.approx(
        sum(lg.requests / 1.0 for lg in logs), rel=0.02)   # each host's latency-run rate, summed
    assert h2["hist_kind"] == "exact"


def test_merge_identities_of_a_real_capture():
    """A real two-client-host netns run (both hosts' namespaces on this machine's client CPU)."""
    run_dir = REAL / "20261124T091323Z-vm"
    check_merge_identities(run_dir)
    run = load_run(run_dir)
    assert (run.runs["status"] == "ok").all() and (run.runs["client_hosts"] == 2).all()
    assert (run.runs["client_start_skew_ms"] < 1e3 * bounds.START_SKEW_MIN_S).all()
    assert len(run.client_hosts) == 4 and (run.client_hosts["exit_code"] == 0).all()
    # the two tools shared one core: each got about half of it, and the point's client CPU is both
    by_point = run.client_hosts.groupby("suite")["client_cpu_s"].sum()
    for suite, cpu_s in by_point.items():
        assert _row(run.runs, suite)["client_cpu_s"] == pytest.approx(cpu_s)
    # the server's window without the wait for the agreed start (fanout's lead, before the load)
    assert (run.runs["window_s"] < run.runs["duration_s"] + 0.1).all()
    assert "2 client hosts 10.231.0.11, 10.231.0.12 (CPUs 1)" in suite_hosts(run_dir, "http1").words()


# ---------------------------------------------------------------- fail rules
def test_start_skew_fails_the_point(run):
    for suite in ("http1", "h2c"):
        rec = _point(run, suite) / "r1.h2.host.json"
        doc = json.loads(rec.read_text())
        _edit_json(rec, started=doc["started"] + 0.328, ended=doc["ended"] + 0.328)
    runs, hosts = build_all_frames(run)[0], build_all_frames(run)[2]
    row = _row(runs, "http1")
    assert row["status"] == "failed"
    assert "client hosts started 340 ms apart (limit 100 ms): the loads did not overlap" in row["fail_reason"]
    assert row["client_start_skew_ms"] == pytest.approx(340.086, abs=0.01)
    assert hosts[hosts["suite"] == "http1"]["start_offset_ms"].tolist() == pytest.approx([0.0, 340.086], abs=0.01)
    assert _row(runs, "h2c")["status"] == "failed"


def test_start_skew_limit():
    assert bounds.start_skew_limit_s(3) == 0.1 and bounds.start_skew_limit_s(10) == pytest.approx(0.2)
    assert bounds.start_skew_reason(0.15, 10) == "" and bounds.start_skew_reason(math.nan, 3) == ""
    assert "started 250 ms apart (limit 200 ms)" in bounds.start_skew_reason(0.25, 10)


@pytest.mark.parametrize("drop, says", [
    ("r1.h2.wrk.json", "client host 2: wrk wrote no result (r1.h2.wrk.json missing)"),
    ("r1.h2.host.json", "client host 2: r1.h2.host.json missing"),
    ("r1.h1.client.time.txt", "client host 1: r1.h1.client.time.txt missing"),
])
def test_a_missing_host_file_fails_the_point_naming_it(run, drop, says):
    (_point(run, "http1") / drop).unlink()
    runs, _, hosts = build_all_frames(run)
    row = _row(runs, "http1")
    assert row["status"] == "failed" and says in row["fail_reason"], row["fail_reason"]
    assert len(hosts[hosts["suite"] == "http1"]) == 2       # both hosts still have their row
    if drop.endswith(("wrk.json", "host.json")):                 # never merged from fewer hosts in silence
        assert row["requests"] == read_wrk_json(_point(run, "http1") / "r1.h1.wrk.json").requests


def test_a_missing_h2load_host_file_fails_the_point(run):
    (_point(run, "h2c") / "r1.h2.lat.h2log.json").unlink()
    row = _row(build_frames(run)[0], "h2c")
    assert row["status"] == "failed"
    assert "client host 2: latency run: r1.h2.lat.h2log.json missing" in row["fail_reason"]


def test_a_host_exit_code_fails_the_point(run):
    _edit_json(_point(run, "http1") / "r1.h2.host.json", exit_code=1)
    runs, _, hosts = build_all_frames(run)
    row = _row(runs, "http1")
    assert row["status"] == "failed" and "client host 2: load tool exit 1" in row["fail_reason"]
    assert hosts[hosts["suite"] == "http1"]["exit_code"].tolist() == [0, 1]


# ---------------------------------------------------------------- client columns
def _busy_counters(before: list[int], busy_ticks: int, idle_ticks: int) -> list[int]:
    after = list(before)
    after[0] += busy_ticks     # user
    after[3] += idle_ticks     # idle
    return after


def test_client_bound_per_host_and_any_host_for_the_row(run):
    d = _point(run, "http1")
    cpu = json.loads((d / "r1.cpu.json").read_text())
    cpu["proc_stat_after"]["0"] = _busy_counters(cpu["proc_stat_before"]["0"], 150, 150)   # server 50 %
    (d / "r1.cpu.json").write_text(json.dumps(cpu))
    for host, (busy, idle) in ((1, (295, 5)), (2, (150, 150))):
        rec = d / f"r1.h{host}.host.json"
        doc = json.loads(rec.read_text())
        doc["proc_stat_after"]["1"] = _busy_counters(doc["proc_stat_before"]["1"], busy, idle)
        rec.write_text(json.dumps(doc))
    runs, _, hosts = build_all_frames(run)
    row, mine = _row(runs, "http1"), hosts[hosts["suite"] == "http1"]
    assert mine["client_busy"].tolist() == pytest.approx([295 / 300, 0.5])
    assert mine["client_bound"].tolist() == [True, False]
    assert bool(row["client_bound"]) is True
    assert row["client_busy"] == pytest.approx(295 / 300) and row["server_busy"] == pytest.approx(0.5)
    times = [read_client_time(d / f"r1.h{i}.client.time.txt").cpu_s for i in (1, 2)]
    assert row["client_cpu_s"] == pytest.approx(sum(times))
    assert mine["client_cpu_s"].tolist() == pytest.approx(times)


def _host_file(tmp_path: Path, host: int, machine: str, cpus: str, charged: int, total: int,
               steal: int = 0) -> Path:
    before = {c: [1000] * 10 for c in cpus.split(",")}
    after = {c: [1000 + charged, 1000, 1000, 1000 + total - charged - steal, 1000, 1000, 1000, 1000 + steal,
                 1000, 1000] for c in cpus.split(",")}
    p = tmp_path / f"r1.h{host}.host.json"
    p.write_text(json.dumps({"host": host, "addr": f"10.0.0.{host}", "machine": machine, "cpus": cpus,
                             "clk_tck": 100, "started": 100.0 + host / 1000, "ended": 103.0, "exit_code": 0,
                             "proc_stat_before": before, "proc_stat_after": after}))
    return p


def test_foreign_cpu_of_hosts_that_share_cores(tmp_path):
    # two client namespaces on one machine and CPU: their counters are the same core's, so the
    # foreign CPU is the core's charged ticks over the union window less both tools' CPU
    a = read_client_host(_host_file(tmp_path, 1, "m1", "1", charged=250, total=300))
    b = read_client_host(_host_file(tmp_path, 2, "m1", "1", charged=250, total=300))
    assert client_foreign_pct([a, b], [1.2, 1.2]) == pytest.approx(100 * (250 - 240) / 300)
    # two machines: each host's own core, the worse group
    c = read_client_host(_host_file(tmp_path, 3, "m2", "1", charged=250, total=300))
    assert client_foreign_pct([a, c], [1.2, 2.4]) == pytest.approx(100 * (250 - 120) / 300)
    assert math.isnan(client_foreign_pct([a], [math.nan]))


# ---------------------------------------------------------------- merge rules (pure)
def _result(requests: int, values, counts, kind: str = "exact", duration: float = 3.0, **kw) -> LoadResult:
    values, counts = np.asarray(values, dtype=np.float64), np.asarray(counts, dtype=np.int64)
    mean = float((values * counts).sum() / counts.sum()) if counts.sum() else math.nan
    return LoadResult(tool=kw.pop("tool", "wrk"), requests=requests, duration_s=duration, bytes_read=10.0 * requests,
                      errors=kw.pop("errors", {"read errors": 0}), lat_mean_us=mean,
                      lat_max_us=float(values.max()) if len(values) else math.nan, hist_kind=kind,
                      hist_values_us=values, hist_counts=counts, **kw)


class _Host:
    def __init__(self, host: int, started: float) -> None:
        self.host, self.started = host, started


def test_merge_sums_counts_and_takes_the_union_window():
    a = _result(100, [10, 20], [60, 40], errors={"read errors": 2, "timeouts": 1}, notes=("x",),
                extra={"req_per_s_with_log": 50.0, "capacity_ref_rps": 7.0}, source_files=("a",))
    b = _result(300, [20, 30], [100, 200], duration=2.5, errors={"read errors": 1}, error_total=4,
                extra={"req_per_s_with_log": 70.0, "capacity_ref_rps": 7.0}, source_files=("b",))
    m = merge_results([a, b], [_Host(1, 10.0), _Host(2, 10.2)])
    assert m.requests == 400 and m.bytes_read == 4000.0
    assert dict(m.errors) == {"read errors": 3, "timeouts": 1} and m.total_errors == 3 + 4
    assert m.duration_s == pytest.approx(3.0)                 # max(10+3, 10.2+2.5) − 10
    assert m.hist_kind == "exact" and m.hist_values_us.tolist() == [10, 20, 30]
    assert m.hist_counts.tolist() == [60, 140, 200]
    assert m.lat_mean_us == pytest.approx((10 * 60 + 20 * 140 + 30 * 200) / 400) and m.lat_max_us == 30
    assert m.extra == {"req_per_s_with_log": 120.0, "capacity_ref_rps": 7.0}
    assert m.notes == ("client host 1: x",) and m.source_files == ("a", "b")
    late = merge_results([a, b], [_Host(1, 10.0), _Host(2, 11.0)])
    assert late.duration_s == pytest.approx(3.5)              # the union, not either window


def test_merge_of_empty_hosts_and_unmergeable_kinds():
    empty = _result(0, [], [], kind="none")
    a = _result(10, [5], [10])
    assert merge_results([empty, a], [_Host(1, 0), _Host(2, 0)]).hist_counts.tolist() == [10]
    kind, v, c, note = merge_histograms([empty, empty])
    assert (kind, len(v), note) == ("none", 0, "")
    pct = _result(10, [5, 9], [500_000, 500_000], kind="percentiles", tool="oha")
    m = merge_results([pct, pct], [_Host(1, 0), _Host(2, 0)])
    assert m.hist_kind == "none" and "percentiles histograms cannot be merged" in m.notes[0]
    with pytest.raises(ValueError):
        merge_results([a, pct], [_Host(1, 0), _Host(2, 0)])   # two tools


def test_quantiles_mixture_weights_hosts_by_their_requests():
    """An exact host and a host whose wrk wrote the quantile grid (too wide a histogram): each host's
    distribution weighs in proportion to its requests."""
    exact = read_wrk_json(WRK_FIXTURES / "clean_ping.wrk.json")
    wide = read_wrk_json(WRK_FIXTURES / "pipeline_16.wrk.json")
    grid_q = 100.0 * (np.arange(1, MIXTURE_GRID + 1) - 0.5) / MIXTURE_GRID
    grid = weighted_percentiles(wide.hist_values_us, wide.hist_counts, grid_q)   # as report.lua
    a = _result(exact.requests, exact.hist_values_us, exact.hist_counts)
    b = _result(wide.requests, grid, np.ones(MIXTURE_GRID), kind="quantiles")
    m = merge_results([a, b], [_Host(1, 0), _Host(2, 0)])
    assert m.hist_kind == "quantiles" and m.hist_counts.dtype == np.int64
    w_a, w_b = exact.requests, wide.requests
    assert m.hist_counts.sum() == pytest.approx(MIXTURE_GRID * (w_a + w_b), abs=len(exact.hist_counts))

    def cdf(values, counts, x):
        return counts[values <= x].sum() / counts.sum()
    for x in (40.0, 60.0, 100.0, 300.0, 1000.0):
        expect = (w_a * cdf(exact.hist_values_us, exact.hist_counts, x)
                  + w_b * cdf(grid, np.ones(MIXTURE_GRID), x)) / (w_a + w_b)
        assert cdf(m.hist_values_us, m.hist_counts, x) == pytest.approx(expect, abs=1e-5)
    assert m.lat_mean_us == pytest.approx((w_a * a.lat_mean_us + w_b * b.lat_mean_us) / (w_a + w_b))


# ---------------------------------------------------------------- frames: one host untouched, mixed runs
def test_single_host_runs_have_no_host_columns_nor_frame(tmp_path):
    run = load_run(make_fake_run(tmp_path / "raw"))
    assert tuple(run.runs.columns) == RUNS_COLUMNS
    assert list(run.frames()) == ["runs", "latency"]
    assert len(run.client_hosts) == 0
    schema.validate(run.client_hosts, "client_hosts")


def test_a_mixed_run_writes_and_reads_the_client_hosts_frame(tmp_path):
    raw = make_fake_run(tmp_path / "raw")
    shutil.copytree(RUN / "h2c", raw / "h2c")
    run = load_run(raw)
    assert list(run.runs.columns[-2:]) == ["client_hosts", "client_start_skew_ms"]
    one = run.runs[run.runs["suite"] == "http1"]
    assert (one["client_hosts"] == 1).all() and (one["client_start_skew_ms"] == 0).all()
    assert tuple(run.suite("http1").runs.columns) == RUNS_COLUMNS
    assert list(run.suite("h2c").runs.columns[-2:]) == ["client_hosts", "client_start_skew_ms"]
    assert len(run.suite("http1").client_hosts) == 0 and len(run.suite("h2c").client_hosts) == 2
    out = tmp_path / "data"
    names = sorted(p.name for p in write_tidy(run.frames(), out))
    assert names == ["client_hosts.parquet", "latency.parquet", "runs.parquet"]
    back = read_frame(out, "client_hosts")
    assert len(back) == 2 and back["requests"].dtype == "Int64" and back["client_bound"].dtype == "boolean"
    runs = read_frame(out, "runs")
    assert runs["client_hosts"].dtype == "int64" and len(runs) == len(run.runs)


def test_one_inventory_client_machine_has_per_host_files(run):
    """An inventory with one client machine: client_layout per_host, files r<rep>.h1.* only."""
    d = _point(run, "http1")
    _edit_json(d / "scenario.json", client_hosts=1)
    for p in d.glob("r1.h2.*"):
        p.unlink()
    shutil.rmtree(run / "h2c")
    r = load_run(run)
    row = r.runs.iloc[0]
    assert row["status"] == "ok" and row["client_hosts"] == 1 and row["client_start_skew_ms"] == 0
    assert row["requests"] == read_wrk_json(d / "r1.h1.wrk.json").requests
    assert len(r.client_hosts) == 1 and list(r.frames()) == ["runs", "latency", "client_hosts"]
    assert list(r.suite("http1").runs.columns[-2:]) == ["client_hosts", "client_start_skew_ms"]


def test_a_layout_that_does_not_fit_is_named(run):
    path = _point(run, "http1") / "scenario.json"
    _edit_json(path, client_layout="single")
    with pytest.raises(RawFormatError, match=r"scenario\.json, key 'client_layout'"):
        build_frames(run)
    _edit_json(path, client_layout="per_rack")
    with pytest.raises(RawFormatError, match="per_rack"):
        build_frames(run)
