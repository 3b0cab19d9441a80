"""The idle-connection memory measurement's Python side (scripts/idle_memory.sh): the raw record
(httplab.parse.idle_conns), the tidy frame (httplab.tidy.idle_memory), the figures
(httplab.stats.idle_memory) and the table (httplab.report.idle_memory), on a run captured here
(tests/fixtures/idle_memory: the C server over HTTP/1.1 and nginx over h2c, 1,000 connections each)."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from httplab.parse.errors import RawFormatError
from httplab.parse.idle_conns import read_idle_point
from httplab.report.idle_memory import idle_table, kib_cell, main
from httplab.stats.idle_memory import idle_estimates
from httplab.tidy.idle_memory import idle_frame, point_rows
from httplab.tidy.read import read_frame
from httplab.tidy.schema import validate

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "idle_memory" / "20261124T000004Z-vm"
EVLOOP_H1 = FIXTURE / "idle_memory" / "evloop.h1" / "c1000" / "r1.json"
NGINX_H2C = FIXTURE / "idle_memory" / "nginx.h2c" / "c1000" / "r1.json"


def test_the_record_reads_as_measured():
    p = read_idle_point(EVLOOP_H1)
    assert (p.mode, p.conns, p.conns_asked, p.answered, p.alive_after) == ("h1", 1000, 1000, 1000, 1000)
    assert (p.before.vmrss_kb, p.after.vmrss_kb) == (3980, 19736)
    assert p.kib_per_conn == pytest.approx((19736 - 3980) / 1000) == pytest.approx(15.756)
    assert p.before.settled and p.after.settled and p.before.n_procs == 1
    assert p.problems() == [] and p.rlimit_nofile == (20000, 20000)
    q = read_idle_point(NGINX_H2C)
    assert q.mode == "h2c" and q.after.n_procs == 2   # nginx's master and worker, summed
    doc = json.loads(NGINX_H2C.read_text())
    assert q.after.vmrss_kb == sum(v["status"]["VmRSS"] for v in doc["after"]["procs"].values())
    assert q.kib_per_conn == pytest.approx(5.756)


def _doctored(tmp_path: Path, **changes) -> Path:
    doc = json.loads(EVLOOP_H1.read_text())
    doc.update(changes)
    out = tmp_path / "r1.json"
    out.write_text(json.dumps(doc))
    return out


def test_a_short_point_says_why(tmp_path):
    p = read_idle_point(_doctored(tmp_path, answered=990, alive_after=980,
                                  errors={"no answer within the timeout": 10}))
    probs = p.problems()
    assert probs[0] == "990 of 1,000 connections answered (10 no answer within the timeout)"
    assert probs[1] == "10 connections closed by the server before the memory was read"
    doc = json.loads(EVLOOP_H1.read_text())
    doc["after"]["settled"] = False
    assert "never settled" in read_idle_point(_doctored(tmp_path, after=doc["after"])).problems()[0]


@pytest.mark.parametrize("changes, says", [
    ({"tool": "wrk"}, "not an idle_conns record"),
    ({"mode": "h3"}, "unknown mode 'h3'"),
    ({"conns_requested": 0}, "conns_requested must be > 0"),
    ({"answered": "all"}, "key 'answered'"),
    ({"rlimit_nofile": [20000]}, "expected [soft, hard]"),
])
def test_a_bad_record_names_file_and_key(tmp_path, changes, says):
    with pytest.raises(RawFormatError) as e:
        read_idle_point(_doctored(tmp_path, **changes))
    assert says in str(e.value) and "r1.json" in str(e.value)


def test_the_frame_has_the_published_schema(tmp_path):
    assert [r[:4] for r in point_rows(FIXTURE)] == [("evloop", "h1", 1000, 1), ("nginx", "h2c", 1000, 1)]
    f = idle_frame(FIXTURE)
    validate(f, "idle_memory")
    assert list(f["status"]) == ["ok", "ok"] and list(f["fail_reason"]) == ["", ""]
    assert f.loc[0, "raw_path"] == "20261124T000004Z-vm/idle_memory/evloop.h1/c1000/r1.json"
    assert f.loc[1, "n_procs"] == 2 and f.loc[0, "kib_per_conn"] == pytest.approx(15.756)
    # a record whose path and content disagree is refused
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "idle_memory" / "nginx.h2c" / "c1000").rename(run / "idle_memory" / "nginx.h2c" / "c5000")
    with pytest.raises(RawFormatError, match="its path says h2c, 5000"):
        idle_frame(run)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert idle_frame(empty).empty and list(idle_frame(empty).columns) == list(f.columns)


def _points(values: list[float], status: str = "ok") -> pd.DataFrame:
    base = idle_frame(FIXTURE).iloc[[0]]
    rows = pd.concat([base] * len(values), ignore_index=True)
    rows["kib_per_conn"] = values
    rows["anon_kib_per_conn"] = values
    rows["rep"] = range(1, len(values) + 1)
    rows["status"] = status
    return rows


def test_figures_have_an_interval_from_five_points():
    one = idle_estimates(idle_frame(FIXTURE))
    assert list(one["n"]) == [1, 1] and one["lo"].isna().all() and (one["reason"] == "CI needs ≥ 5 runs").all()
    five = idle_estimates(_points([15.7, 15.8, 15.75, 15.9, 15.6])).iloc[0]
    assert five["n"] == 5 and five["lo"] < five["estimate"] < five["hi"]
    assert five["estimate"] == pytest.approx(math.exp(sum(map(math.log, [15.7, 15.8, 15.75, 15.9, 15.6])) / 5))
    mixed = pd.concat([_points([15.7] * 4 + [15.8]), _points([99.0], "failed")], ignore_index=True)
    row = idle_estimates(mixed).iloc[0]
    assert row["n"] == 5 and row["n_failed"] == 1 and row["estimate"] < 16


def test_table_words():
    t = idle_table(idle_frame(FIXTURE))
    assert list(t["Server"]) == ["C (evloop)", "nginx"]
    assert list(t["Mode"]) == ["HTTP/1.1", "h2c"]
    assert t.iloc[0]["KiB per idle connection"] == "15.76 KiB (n=1, CI needs ≥ 5 runs)"
    assert t.iloc[1]["RSS before → with them"] == "19.6 → 25.2 MiB (medians of 1 point)"
    est = idle_estimates(_points([15.7, 15.8, 15.75, 15.9, 15.6])).iloc[0]
    assert kib_cell(est).startswith("15.75 KiB [") and kib_cell(est).endswith("(n=5)")
    capped = idle_frame(FIXTURE).iloc[[0]].assign(conns=19936, conns_asked=20000)
    assert idle_table(capped).iloc[0]["Connections"] == "19,936 (asked 20,000: open-file limit)"
    assert idle_table(idle_frame(FIXTURE).iloc[0:0]).empty


def test_the_command_writes_the_frame_and_prints_the_table(tmp_path, capsys):
    assert main([str(FIXTURE), "--out", str(tmp_path / "data")]) == 0
    out = capsys.readouterr().out
    assert "**Memory per idle keep-alive connection**" in out and "15.76 KiB" in out
    back = read_frame(tmp_path / "data", "idle_memory")
    assert len(back) == 2 and (tmp_path / "data" / "idle_memory.csv").is_file()


def test_the_report_page(tmp_path):
    from httplab.report.idle_memory import write_report
    frame = idle_frame(FIXTURE)
    md, page = write_report(frame, tmp_path / "r", "20261124T000004Z-vm")
    text = md.read_text()
    assert text.startswith("# Memory per idle keep-alive connection")
    assert "20261124T000004Z-vm" in text and "KiB per idle connection" in text and "C (evloop)" in text
    doc = page.read_text()
    assert doc.startswith("<!DOCTYPE html>") and "<table" in doc and "../index.html" in doc
    # every row of the frame's table is on the page
    assert doc.count("<tr") == len(idle_table(frame)) + 1
