"""The h2load point loader (failed rules), tidy rows of an h2c suite, the h2c tables and the
http2 notebook."""
import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from httplab.parse.errors import RawFormatError
from httplab.stats.write import build_data
from httplab.parse.h2load_loader import load_h2load_point
from httplab.parse.h2log import compact_log, histogram_from, write_compact
from httplab.lab.suites import suite_module
_H2 = suite_module("h2c")   # the h2c suite's report code, suites/h2c/report.py
h2_vs_h1_table = _H2.h2_vs_h1_table
log_cost_ci = _H2.log_cost_ci
log_cost_table = _H2.log_cost_table
log_cost_sentence = _H2.log_cost_sentence
open_h2_report = _H2.open_h2_report
protocol_table = _H2.protocol_table
summary_text = _H2.summary_text
from httplab.parse.loaders import known_tools, loader_for
from httplab.tidy.rawrun import RUNS_COLUMNS, build_frames, fail_reasons, load_run
from httplab.report.scenarios import suite_sections
from make_fake_h2c import H2_SCENARIOS, make_fake_h2c_run
from notebook_kernel import needs_kernel

H2 = Path(__file__).resolve().parents[1] / "fixtures" / "h2load"
REPO = Path(__file__).resolve().parents[2]


def _log_for(done: int, status: dict | None = None):
    """A compact log with `done` requests shaped like the real log fixture."""
    real = compact_log(H2 / "log_ping.log.tsv")
    counts = np.floor(real.hist_counts * done / real.requests).astype(np.int64)
    counts[np.argmax(counts)] += done - int(counts.sum())
    return histogram_from(real.hist_values_us, counts, status or {200: done}, real.first_start_us,
                          real.last_end_us)


def _point(tmp_path: Path, thr="clean_ping", lat="log_ping", log="ok", run=None, rep=1) -> Path:
    d = tmp_path / "pt"
    d.mkdir(parents=True, exist_ok=True)
    if thr:
        (d / f"r{rep}.stdout.txt").write_text((H2 / f"{thr}.stdout.txt").read_text())
        (d / f"r{rep}.stderr.txt").write_text((H2 / f"{thr}.stderr.txt").read_text())
    if lat:
        (d / f"r{rep}.lat.stdout.txt").write_text((H2 / f"{lat}.stdout.txt").read_text())
        (d / f"r{rep}.lat.stderr.txt").write_text((H2 / f"{lat}.stderr.txt").read_text())
    if log == "ok":
        write_compact(_log_for(39182), d / f"r{rep}.lat.h2log.json")
    elif log is not None:
        write_compact(log, d / f"r{rep}.lat.h2log.json")
    (d / f"r{rep}.run.json").write_text(json.dumps({"exit_code": 0, **(run or {})}))
    return d


def _reasons(res):
    return fail_reasons(0, res, True, "h2load")


def test_registered():
    assert "h2load" in known_tools() and loader_for("h2load") is load_h2load_point


def test_clean_point(tmp_path):
    res = load_h2load_point(_point(tmp_path), 1)
    assert _reasons(res) == []
    assert res.requests == 41930 and res.duration_s == 2.0
    assert res.req_per_s == pytest.approx(20965.0)  # h2load's own req/s (over the main duration)
    assert res.bytes_per_s == pytest.approx(1089951 / 2)
    assert res.extra["req_per_s_with_log"] == pytest.approx(19591.0)
    assert res.total_errors == 0 and res.hist_kind == "exact"
    assert int(res.hist_counts.sum()) == 39182
    assert res.lat_max_us == res.hist_values_us.max()
    assert 2000 < res.lat_mean_us < 8000


@pytest.mark.parametrize("kw, expect", [
    (dict(thr="not_found"), ["61,025 h2load failed (throughput run)", "61,062 3xx/4xx/5xx responses (throughput run)"]),
    (dict(lat="log_404", log=_log_for(47933, {404: 47933})),
     ["h2load failed (latency run)", "4xx/5xx responses (latency run)", "47,933 status 404 in the log (latency run)"]),
    (dict(thr="connect_refused"), ["throughput run: application protocol none (no connection was made), expected h2c",
                                   "no request completed"]),
    (dict(thr="h1_ping"), ["throughput run: application protocol http/1.1, expected h2c"]),
    (dict(lat="h1_ping", log=_log_for(91427)), ["latency run: application protocol http/1.1, expected h2c"]),
    (dict(thr=None), ["throughput run: r1.stdout.txt missing", "no request completed"]),
    (dict(lat=None), ["latency run: r1.lat.stdout.txt missing"]),
    (dict(log=None), ["latency run: r1.lat.h2log.json missing"]),
    (dict(log=_log_for(39182, {200: 39170, -1: 12})), ["12 failed streams (-1) in the log (latency run)"]),
    (dict(log=compact_log(H2 / "log_ping.log.tsv")),
     ["latency run: the log has 3,000 requests but h2load reports 39,182 done"]),
    (dict(run={"lat_exit_code": 1}), ["latency run: h2load exited with code 1"]),
    # the lab's h2load closed clients still in their TLS handshake when the window ended (stderr)
    (dict(thr="tls_unconnected"), ["6 clients still connecting when the window ended (throughput run)"]),
    (dict(lat="tls_unconnected", log=_log_for(638)),
     ["6 clients still connecting when the window ended (latency run)"]),
    # --lab-connect-wait ran out: 77 clients joined the window late (3 of them never connected)
    (dict(thr="tls_connect_wait"), ["77 clients still connecting when the connect wait ended (throughput run)",
                                    "3 clients still connecting when the window ended (throughput run)"]),
])
def test_failed_rules_name_the_run(tmp_path, kw, expect):
    res = load_h2load_point(_point(tmp_path, **kw), 1)
    reasons = _reasons(res)
    text = "; ".join(reasons)
    for e in expect:
        assert e in text, text
    assert reasons


def test_status_zero_in_log_is_not_an_error(tmp_path):
    res = load_h2load_point(_point(tmp_path, log=_log_for(39182, {0: 25, 200: 39157})), 1)
    assert _reasons(res) == []


def test_rep_without_latency_run_by_design(tmp_path):
    # --latency-every N: the rep's run.json says latency_run false, so its absent latency files are
    # no fault and it has no latency; its throughput run is read and checked as ever
    res = load_h2load_point(_point(tmp_path, lat=None, log=None, run={"latency_run": False}), 1)
    assert _reasons(res) == [] and res.notes == ()
    assert res.hist_kind == "none" and np.isnan(res.lat_mean_us) and np.isnan(res.extra["req_per_s_with_log"])
    assert res.req_per_s == pytest.approx(20965.0)
    failed = load_h2load_point(_point(tmp_path / "f", thr="not_found", lat=None, log=None,
                                      run={"latency_run": False}), 1)
    assert "3xx/4xx/5xx responses (throughput run)" in "; ".join(_reasons(failed))
    # true (or absent) still wants the files; anything else names run.json
    assert "r1.lat.stdout.txt missing" in "; ".join(_reasons(load_h2load_point(
        _point(tmp_path / "t", lat=None, run={"latency_run": True}), 1)))
    with pytest.raises(RawFormatError, match="r1.run.json"):
        load_h2load_point(_point(tmp_path / "b", run={"latency_run": "no"}), 1)


def test_missing_log_names_the_compactor_error(tmp_path):
    d = _point(tmp_path, log=None)
    (d / "r1.lat.stderr.txt").write_text("h2log: /dev/shm/x.log, line 7: expected 'start_us<TAB>...'\n")
    text = "; ".join(_reasons(load_h2load_point(d, 1)))
    assert "r1.lat.h2log.json missing (h2log: /dev/shm/x.log, line 7" in text


def test_empty_or_unfinished_stdout_fails_but_malformed_raises(tmp_path):
    d = _point(tmp_path)
    (d / "r1.stdout.txt").write_text("")
    assert "throughput run: r1.stdout.txt is empty" in "; ".join(_reasons(load_h2load_point(d, 1)))
    head = (H2 / "clean_ping.stdout.txt").read_text().split("finished in")[0]
    (d / "r1.stdout.txt").write_text(head)  # h2load killed before its report
    assert "throughput run: h2load printed no report" in "; ".join(_reasons(load_h2load_point(d, 1)))
    lines = (H2 / "clean_ping.stdout.txt").read_text().splitlines()
    (d / "r1.stdout.txt").write_text("\n".join(lines[:-3]))  # truncated inside the table
    with pytest.raises(RawFormatError, match="r1.stdout.txt"):
        load_h2load_point(d, 1)
    (d / "r1.stdout.txt").write_text((H2 / "clean_ping.stdout.txt").read_text())
    (d / "r1.lat.h2log.json").write_text("{\"tool\": \"h2load-log\"}")
    with pytest.raises(RawFormatError, match="requests"):
        load_h2load_point(d, 1)


# ---------------------------------------------------------------- tidy rows of a fake run
@pytest.fixture(scope="module")
def h2run(tmp_path_factory):
    return make_fake_h2c_run(tmp_path_factory.mktemp("raw"))


def test_tidy_rows(h2run):
    runs, latency = build_frames(h2run)
    assert list(runs.columns) == list(RUNS_COLUMNS) + ["req_per_s_with_log"]
    h2 = runs[runs["suite"] == "h2c"]
    h1 = runs[runs["suite"] == "http1"]
    assert (h2["streams"] == 10).all() and (h2["protocol"] == "h2").all() and (h2["pipeline"] == 1).all()
    assert (h1["streams"] == 1).all() and h1["req_per_s_with_log"].isna().all()
    # 4 servers, nginx only the 3 ping scenarios, 5 reps
    assert len(h2) == (3 * len(H2_SCENARIOS) + 3) * 5
    ok = h2[h2["status"] == "ok"]
    assert ok["req_per_s_with_log"].notna().all() and (ok["req_per_s_with_log"] < ok["req_per_s"]).all()
    assert (ok["lat_p50_us"] <= ok["lat_p99_us"]).all() and (ok["lat_p99_us"] <= ok["lat_p999_us"]).all()
    assert (ok["cpu_us_per_req"] > 0).all() and (ok["errors"] == 0).all()
    assert np.allclose(ok["req_per_s"], ok["requests"] / 2.0)
    failed = h2[h2["status"] == "failed"].set_index(["server", "scenario", "rep"])["fail_reason"]
    assert set(failed.index) == {("go", "get_ping_c200", 2), ("evloop", "get_echo_s64_c100", 3)}
    assert "(throughput run)" in failed[("go", "get_ping_c200", 2)]
    assert failed[("evloop", "get_echo_s64_c100", 3)] == "latency run: r3.lat.h2log.json missing"
    lat = latency[latency["suite"] == "h2c"]
    one = lat[(lat["server"] == "go") & (lat["scenario"] == "get_ping_c100") & (lat["rep"] == 1)]
    row = h2[(h2["server"] == "go") & (h2["scenario"] == "get_ping_c100") & (h2["rep"] == 1)].iloc[0]
    doc = json.loads((h2run / "h2c" / "go" / "get_ping_c100" / "r1.lat.h2log.json").read_text())
    assert one["count"].sum() == doc["requests"] > 0
    # the stored curve is coarsened to 1 % buckets; the row's max comes from the raw histogram
    assert one["latency_us"].max() == pytest.approx(row["lat_max_us"], rel=0.0051)
    # the http1 suite of a mixed run keeps exactly the original columns
    full = load_run(h2run)
    assert list(full.suite("http1").runs.columns) == list(RUNS_COLUMNS)
    assert "req_per_s_with_log" in full.suite("h2c").runs.columns


def test_sections_and_tables(h2run):
    full = load_run(h2run)
    h2 = full.suite("h2c").runs
    secs = {s.key: s for s in suite_sections("h2c", h2)}
    assert list(secs) == ["ping", "echo_get", "echo_post"] and secs["echo_post"].transfer
    assert [s.key for s in _H2.table_layout(h2.iloc[0:0])] == ["ping", "echo_get", "echo_post"]
    with pytest.raises(ValueError, match="no table layout"):
        suite_sections("no_such_suite", h2)
    t = h2_vs_h1_table(h2, full.suite("http1").runs)
    assert list(t.columns) == ["Server", "HTTP/1.1 req/s", "HTTP/2 req/s", "Δ HTTP/2 vs HTTP/1.1"]
    assert set(t["Server"]) == {"C (evloop)", "Go net/http", "nginx"}
    none = h2_vs_h1_table(h2, None)
    assert none.empty and "no http1 suite" in none.attrs["caption"]
    cost = log_cost_table(h2)
    assert len(cost) == len(h2.groupby(["scenario", "server"])) and "paired" in cost.attrs["caption"]
    r = log_cost_ci(h2[(h2["server"] == "go") & (h2["scenario"] == "get_ping_c100")])
    assert r.has_interval and r.clear and -0.3 < r.estimate < -0.1
    assert "runs without h2load's log" in log_cost_sentence(h2)
    assert log_cost_table(h2.drop(columns=["req_per_s_with_log"])).empty


def test_report_context_and_summary(h2run, tmp_path):
    _, _, written = build_data(h2run, tmp_path / "data")
    assert {p.name for p in written} == {"comparisons.csv", "comparisons.parquet", "estimates.csv", "estimates.parquet",
                                         "latency.parquet", "runs.parquet", "verify.parquet", "suites.parquet", "run.json",
                                         "claims.parquet", "claims.csv", "claim_points.parquet", "claim_points.csv"}
    ctx = open_h2_report(run_dir=h2run, out_dir=tmp_path / "data", baseline="go")
    back = pd.read_parquet(tmp_path / "data" / "runs.parquet")   # the whole run, every suite
    assert "h2c" in set(back["suite"])
    assert not protocol_table(ctx).empty
    text = summary_text(ctx)
    for needle in ("GET /ping:", "GET /echo:", "POST /echo:", "Peak throughput: C", "HTTP/2 vs HTTP/1.1",
                   "--log-file cost"):
        assert needle in text


def test_notebook_shape():
    nb = nbformat.read(REPO / "suites" / "h2c" / "report.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "httplab"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for name in ("run_dir = None", "out_dir = None", "confidence = 0.95",
                 'baseline = "go"', 'raw_root = "raw"', 'data_root = "data"'):
        assert name in code[0].source
    assert all(not c.outputs and c.execution_count is None for c in code), "commit without outputs"


@needs_kernel
@pytest.mark.parametrize("with_http1", [True, False])
def test_notebook_executes(tmp_path, monkeypatch, with_http1):
    papermill = pytest.importorskip("papermill")
    run = make_fake_h2c_run(tmp_path / "raw", with_http1=with_http1, reps=5 if with_http1 else 3)
    monkeypatch.chdir(REPO / "suites" / "h2c")
    out = tmp_path / "out.ipynb"
    from httplab.stats.write import build_data
    build_data(run, tmp_path / "data")   # the one build step; the notebook reads only data/
    papermill.execute_notebook(str(REPO / "suites" / "h2c" / "report.ipynb"), str(out), kernel_name="httplab",
                               parameters={"run_dir": str(run), "out_dir": str(tmp_path / "data")}, progress_bar=False)
    text = json.dumps(json.loads(out.read_text()), ensure_ascii=False)
    assert "| Connections" in text and "Δ C vs Go" in text and "Peak throughput" in text
    assert "Log cost" in text and "Transfer/s" in text
    if with_http1:
        assert "Δ HTTP/2 vs HTTP/1.1" in text
    else:
        assert "no http1 suite" in text
    assert (tmp_path / "data" / "runs.parquet").is_file()
