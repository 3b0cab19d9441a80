"""Instructions per request (scripts/cost.sh, docs/cost.md): the cachegrind parser and the point
record (httplab.parse.cachegrind), the tidy points (httplab.tidy.cost), the arithmetic and the gate
(httplab.stats.cost) and the report page and command line (httplab.report.cost). Captured output:
the committed run raw/<RUN>/cost/ (valgrind 3.19 cachegrind files, h2load 1.52 reports)."""
from __future__ import annotations

import lzma
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from httplab.parse.cachegrind import parse_cachegrind, read_cachegrind, read_cost_point
from httplab.parse.errors import RawConsistencyError, RawFormatError
from httplab.report.cost import cost_table, load_reps, main, reps_table
from httplab.stats.cost import gate, per_rep, per_request, spread_pct, summarise
from httplab.tidy.cost import POINT_COLUMNS, check_point, cost_points, typed

ROOT = Path(__file__).resolve().parents[2]
RUN = "20261126T051440Z-vm"
RAW = ROOT / "raw" / RUN
POINT = RAW / "cost" / "evloop.h1" / "n2000" / "r1.json"

SMALL = """desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: /build/bench/floor 28999 127.0.0.1
events: Ir Dr
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2 1
fn=???
0 2052
summary: 2054 1
"""


# ---------------------------------------------------------------- the parser

def test_a_small_file_reads_its_totals():
    t = parse_cachegrind(SMALL, "x.out")
    assert t.events == ("Ir", "Dr") and t.totals == {"Ir": 2054, "Dr": 1} and t.ir == 2054
    assert t.cmd == "/build/bench/floor 28999 127.0.0.1"


@pytest.mark.parametrize("text, line, words", [
    (SMALL.replace("summary: 2054 1\n", ""), 8, "no 'summary:' line"),
    (SMALL.replace("summary: 2054 1", "summary: 2055 1"), 9, "add up to [2054, 1]"),
    (SMALL.replace("0 2052", "0 2052 7 7"), 8, "expected up to 2 whole counts"),
    (SMALL.replace("0 2052", "zero 2052"), 8, "not a cachegrind line"),
    (SMALL.replace("events: Ir Dr\n", ""), 5, "counts before the events line"),
    (SMALL + "fn=late\n", 10, "a line after the summary"),
])
def test_a_malformed_file_names_the_file_and_line(text, line, words):
    with pytest.raises(RawFormatError) as exc:
        parse_cachegrind(text, "bad.out")
    assert exc.value.path == "bad.out" and exc.value.line == line and words in str(exc.value)
    assert str(exc.value).startswith(f"bad.out, line {line}: ")


def test_a_sum_that_disagrees_is_a_consistency_error():
    with pytest.raises(RawConsistencyError):
        parse_cachegrind(SMALL.replace("128 2 1", "128 3 1"), "x.out")


def test_no_events_line_is_not_a_cachegrind_file():
    with pytest.raises(RawFormatError, match="no 'events:' line"):
        parse_cachegrind("desc: only a header\ncmd: /bin/x\n", "x.out")


def test_the_captured_files_read_compressed_and_not(tmp_path):
    xz = POINT.with_name("r1.cachegrind.out.xz")
    t = read_cachegrind(xz)
    assert t.events == ("Ir",) and t.ir > 1_000_000 and "http_bench_server" in t.cmd
    plain = tmp_path / "r1.cachegrind.out"
    plain.write_bytes(lzma.decompress(xz.read_bytes()))
    assert read_cachegrind(plain).totals == t.totals
    broken = tmp_path / "broken.out.xz"
    broken.write_bytes(b"not xz")
    with pytest.raises(RawFormatError, match="not an xz file"):
        read_cachegrind(broken)


# ---------------------------------------------------------------- the point

def test_the_captured_point_reads_as_measured():
    p = read_cost_point(POINT)
    assert (p.server, p.protocol, p.mode, p.requests, p.rep) == ("evloop", "h1", "h1", 2000, 1)
    assert p.load.succeeded == p.load.status_2xx == 2000 and p.problems() == []
    assert p.client_command.startswith("h2load --h1 -c1 -m1 -n 2000 ")
    assert "cachegrind" in p.instrument


def _copy_point(tmp_path: Path, tmp: bool = False) -> Path:
    d = tmp_path / "evloop.h1" / "n2000"
    d.mkdir(parents=True)
    pre = ".r1" if tmp else "r1"
    for suffix in ("json", "cachegrind.out.xz", "h2load.txt"):
        shutil.copy(POINT.with_name(f"r1.{suffix}"), d / f"{pre}.{suffix}")
    return d


def test_a_failed_request_fails_the_point(tmp_path):
    d = _copy_point(tmp_path, tmp=True)
    ok, line = check_point(d, 1, tmp=True)
    assert ok and line.endswith("2,000/2,000 requests 2xx")
    h = d / ".r1.h2load.txt"
    h.write_text(h.read_text().replace("2000 succeeded, 0 failed", "1999 succeeded, 1 failed")
                 .replace("2000 2xx, 0 3xx, 0 4xx, 0 5xx", "1999 2xx, 0 3xx, 0 4xx, 1 5xx"))
    ok, line = check_point(d, 1, tmp=True)
    assert not ok and "1999 of 2000 requests succeeded" in line and "1 5xx" in line and ".r1.json" in line


def test_a_missing_or_cut_file_fails_the_point_naming_it(tmp_path):
    d = _copy_point(tmp_path)
    cg = d / "r1.cachegrind.out.xz"
    text = lzma.decompress(cg.read_bytes()).decode()
    cg.write_bytes(lzma.compress(text[: len(text) // 2].encode()))
    ok, line = check_point(d, 1)
    assert not ok and str(cg) in line and "summary" in line
    cg.unlink()
    ok, line = check_point(d, 1)
    assert not ok and "missing" in line and "r1.cachegrind.out.xz" in line


def test_a_record_whose_path_disagrees_is_refused(tmp_path):
    run = tmp_path / "run"
    d = _copy_point(run / "cost")
    d.rename(d.with_name("n3000"))
    with pytest.raises(RawFormatError, match="its path says evloop h1 N=3000"):
        cost_points(run)


# ---------------------------------------------------------------- the arithmetic

def _points(rows: list[tuple]) -> pd.DataFrame:
    """(server, protocol, rep, N, Ir, status) rows as a points frame."""
    return typed([{"run_id": "r", "server": s, "protocol": p, "mode": "h1", "requests": n, "rep": rep, "ir": ir,
                   "succeeded": n, "status_2xx": n, "status": st, "fail_reason": "" if st == "ok" else "2 failed",
                   "client_command": f"h2load --h1 -c1 -m1 -n {n} http://x/ping", "server_command": "srv",
                   "instrument": "valgrind", "start_utc": "", "raw_path": ""}
                  for s, p, rep, n, ir, st in rows], POINT_COLUMNS)


def test_per_request_is_the_difference_quotient():
    assert per_request(7_000_000, 58_300_000, 2000, 20000) == pytest.approx(51_300_000 / 18000)
    with pytest.raises(ValueError):
        per_request(1, 2, 5, 5)


def test_per_rep_and_summary():
    pts = _points([("evloop", "h1", 1, 2000, 7_000_000, "ok"), ("evloop", "h1", 1, 20000, 58_300_000, "ok"),
                   ("evloop", "h1", 2, 2000, 7_000_900, "ok"), ("evloop", "h1", 2, 20000, 58_300_000, "ok"),
                   ("evloop", "h1", 3, 2000, 7_000_000, "ok"), ("evloop", "h1", 3, 20000, 58_300_000, "failed"),
                   ("floor", "h1", 1, 2000, 1_900_000, "ok"),
                   ("floor", "h2c", 1, 2000, 5, "ok"), ("floor", "h2c", 1, 20000, 5, "ok")])
    reps = per_rep(pts)
    ev = reps[reps["server"] == "evloop"].set_index("rep")
    assert ev.loc[1, "instr_per_req"] == pytest.approx(2850.0) and ev.loc[1, "status"] == "ok"
    assert ev.loc[2, "instr_per_req"] == pytest.approx(2849.95)
    assert ev.loc[3, "status"] == "failed" and "N=20000: 2 failed" in ev.loc[3, "fail_reason"]
    fl = reps[reps["server"] == "floor"].set_index("protocol")
    assert "two request counts" in fl.loc["h1", "fail_reason"]
    assert "not positive" in fl.loc["h2c", "fail_reason"]
    s = summarise(reps).set_index(["server", "protocol"])
    e = s.loc[("evloop", "h1")]
    assert (e["reps"], e["n_failed"], e["n1"], e["n2"]) == (2, 1, 2000, 20000)
    assert e["instr_per_req"] == pytest.approx(2849.975) and e["min"] == pytest.approx(2849.95)
    assert e["spread_pct"] == pytest.approx(0.05 / 2849.975 * 100)
    assert math.isnan(s.loc[("floor", "h1"), "instr_per_req"])
    assert spread_pct([]) != spread_pct([])   # NaN without values


def _summary(values: dict[tuple[str, str], float], spread: float = 0.01) -> pd.DataFrame:
    return pd.DataFrame([{"server": s, "protocol": p, "instr_per_req": v, "spread_pct": spread}
                         for (s, p), v in values.items()])


def test_the_gate():
    base = _summary({("evloop", "h1"): 2850.0, ("evloop", "h2c"): 3665.0, ("evloop", "tls_h1"): 17560.0,
                     ("floor", "h1"): 888.0})
    same = _summary({("evloop", "h1"): 2851.0, ("evloop", "h2c"): 3665.0, ("evloop", "tls_h1"): 17570.0,
                     ("floor", "h1"): 888.0, ("floor", "h1_pipe16"): 807.0})
    rows, ok = gate(base, same)
    assert ok and set(rows["verdict"]) == {"same", "new"}
    worse = _summary({("evloop", "h1"): 2850.0 * 1.015, ("evloop", "h2c"): 3665.0 * 0.97,
                      ("evloop", "tls_h1"): 17560.0, ("floor", "h1"): 888.0})
    rows, ok = gate(base, worse)
    v = rows.set_index(["server", "protocol"])
    assert not ok and v.loc[("evloop", "h1"), "verdict"] == "rose"
    assert v.loc[("evloop", "h1"), "delta_pct"] == pytest.approx(1.5)
    assert v.loc[("evloop", "h2c"), "verdict"] == "fell"
    assert gate(base, worse, threshold_pct=2.0)[1]          # 1.5 % passes a 2 % gate
    rows, ok = gate(base, base.iloc[:3])                    # floor h1 left out of the current run: passes
    assert ok and rows.set_index(["server", "protocol"]).loc[("floor", "h1"), "verdict"] == "not run"
    lost = base.copy()
    lost.loc[lost["server"] == "floor", "instr_per_req"] = math.nan   # measured, no rep counted: fails
    rows, ok = gate(base, lost)
    assert not ok and rows.set_index(["server", "protocol"]).loc[("floor", "h1"), "verdict"] == "failed"


# ---------------------------------------------------------------- the committed run, the report, the CLI

def test_the_committed_run_rebuilds_to_its_committed_frames():
    pts = cost_points(RAW)
    reps = per_rep(pts)
    old_pts = pd.read_parquet(ROOT / "data" / RUN / "cost_points.parquet")
    old_reps = pd.read_parquet(ROOT / "data" / RUN / "cost.parquet")
    pd.testing.assert_frame_equal(pts, old_pts, check_dtype=False)
    pd.testing.assert_frame_equal(reps, old_reps, check_dtype=False)
    assert (reps["status"] == "ok").all() and (pts["succeeded"] == pts["requests"]).all()
    s = summarise(reps).set_index(["server", "protocol"])
    assert (s["spread_pct"] < 0.5).all()     # the residual over reps, well inside the gate's 1 %
    assert s.loc[("floor", "h1"), "instr_per_req"] < s.loc[("evloop", "h1"), "instr_per_req"]


def test_the_tables():
    reps = load_reps(RUN, ROOT / "raw", ROOT / "data")
    t = cost_table(reps)
    assert list(t.columns)[:3] == ["Server", "Protocol", "Instructions per request"]
    assert t["Server"].iloc[0] == "C (evloop)" and t["Protocol"].iloc[0] == "HTTP/1.1 keep-alive"
    assert "Every request of every point succeeded" in t.attrs["caption"]
    assert len(reps_table(reps)) == len(reps)


def test_build_and_gate_from_the_command_line(tmp_path, capsys):
    run = tmp_path / "raw" / RUN
    shutil.copytree(RAW, run)
    assert main(["build", str(run), "--out", str(tmp_path / "a"), "--report", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "cost.html").read_text().count("<table") == 2
    assert "Instructions per request" in (tmp_path / "rep" / "cost.md").read_text()
    assert main(["gate", str(tmp_path / "a"), str(run)]) == 0       # a data folder against a raw one
    assert "gate passed" in capsys.readouterr().out
    worse = pd.read_parquet(tmp_path / "a" / "cost.parquet")
    worse.loc[worse["protocol"] == "h2c", "instr_per_req"] *= 1.02
    (tmp_path / "b").mkdir()
    worse.to_parquet(tmp_path / "b" / "cost.parquet")
    assert main(["gate", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr()
    assert "evloop h2c rose +2.00 %" in out.err and "| rose" in out.out
    assert main(["gate", str(tmp_path / "a"), str(tmp_path / "nothing")]) == 2
