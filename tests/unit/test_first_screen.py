"""The index's first screen (httplab.report.first_screen), on the committed runs: what was measured
on which machines and core splits, the C server named as the write-ups' xKit's stand-in, and per
protocol each server's CPU-µs per request with its interval and n, the capacity it implies and its
verdict against the cheapest other server; no req/s in it, so no client-bound figure."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from httplab.report import first_screen as F
from httplab.report import index as I

ROOT = Path(__file__).resolve().parents[2]


def screen() -> str:
    entries = I.collect(ROOT / "reports", ROOT / "raw", ROOT / "data")
    return I.first_screen_of(entries, ROOT / "raw", ROOT / "data")


def test_the_paragraph_says_what_where_and_who_stands_in():
    text = screen()
    para = text.split("</p>", 1)[0]
    assert "HTTP/1.1, h2c, HTTPS/1.1, HTTPS/2 and HTTP/3" in para and "xKit" in para
    assert "server on CPU 0, load tool on CPU 1" in para and "AMD EPYC, 2 cores" in para


VERDICT = r"cheaper|costlier|lower P99|higher P99|less memory|more memory|no clear difference|inside the noise floor|CI needs"


def which_rows(text: str) -> dict[str, list[str]]:
    """Protocol -> its three cells, from the which-server table."""
    table = text.split("<table class=\"which\">", 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return {p: re.findall(r"<td[^>]*>(.*?)</td>", cells)
            for p, cells in re.findall(r"<tr><th>([^<]+)</th>(.*?)</tr>", table)}


def test_every_protocol_has_a_row_with_n_interval_and_verdict():
    text = screen()
    rows = which_rows(text)
    assert list(rows) == [p for p, _, _ in F.PROTOCOLS]
    for proto, (cost, p99, mem) in rows.items():
        assert re.search(r"\[[\d.,]+ – [\d.,]+\] µs \(n=\d+\), [\d,]+ req per core-second", cost), (proto, cost)
        assert re.search(VERDICT, cost), (proto, cost)
        assert re.search(r'<code class="run">\d{8}T\d{6}Z', cost), (proto, cost)
        if proto in F.LATENCY_PARTS:   # P99 at the offered load from the latency suite
            assert re.search(r"\[[\d.,]+ – [\d.,]+\] ms \(n=\d+\)", p99) and re.search(VERDICT, p99), (proto, p99)
        else:
            assert "no such part" in p99, (proto, p99)
        if proto in F.IDLE_MODES:      # memory per idle connection from the idle-memory run
            assert re.search(r"KiB \(n=\d+\)", mem) and re.search(VERDICT, mem), (proto, mem)
        else:
            assert "cleartext only" in mem, (proto, mem)
    # the A/A copy and the floor responders are no choice a reader has, in either table
    tables = text.split("<table", 1)[1]
    assert "A/A" not in tables and "floor" not in tables.replace("noise floor", "")
    assert "req/s" not in tables.replace(f"{F.OFFERED_RPS:,} req/s offered", "")


def idle_frame(values: dict[str, list[float]], mode: str = "h1") -> pd.DataFrame:
    return pd.DataFrame([{"server": s, "mode": mode, "conns": F.IDLE_CONNS, "conns_asked": F.IDLE_CONNS,
                          "rep": i + 1, "status": "ok", "kib_per_conn": v, "anon_kib_per_conn": v,
                          "rss_before_kb": 3000.0, "rss_after_kb": 3000.0 + v * F.IDLE_CONNS}
                         for s, vs in values.items() for i, v in enumerate(vs)])


def test_idle_memory_least_first_with_its_welch_delta_and_word():
    rows = F.idle_rows(idle_frame({"b": [1.0, 1.02, 0.99, 1.01, 1.0], "a": [0.5, 0.52, 0.49, 0.51, 0.5],
                                   "a~aa": [0.1] * 5}), "h1")
    assert [r["server"] for r in rows] == ["a", "b"]   # the A/A copy left out
    assert rows[0]["delta"].endswith("less memory") and rows[0]["delta"].startswith("−50%"), rows[0]
    assert rows[1]["delta"].endswith("more memory"), rows[1]
    # a point whose five values are equal has no interval and says why
    same = F.idle_rows(idle_frame({"a": [0.5] * 5, "b": [0.5, 0.6, 0.4, 0.5, 0.55]}), "h1")
    cell = F.which_server_table([], [("20261124T030313Z-vm", idle_frame({"a": [0.5] * 5, "b": [1.0, 1.1, 0.9, 1.0, 1.05]}))])
    assert same[0]["reason"] or same[1]["reason"]
    assert "0.50 (all runs equal; no CI) KiB (n=5)" in cell and "less memory vs b" in cell


def test_a_protocol_no_run_measured_says_so():
    assert "no current run measured it" in F.which_server_table([])
