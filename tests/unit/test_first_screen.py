"""The index's first screen (httplab.report.first_screen), on the committed runs: what was measured
on which machines and core splits, the C server named as the write-ups' xKit's stand-in, and per
protocol each server's CPU-µs per request with its interval and n, the capacity it implies and its
verdict against the cheapest other server; no req/s in it, so no client-bound figure."""
from __future__ import annotations

import re
from pathlib import Path

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


def test_every_protocol_has_a_row_with_n_interval_and_verdict():
    text = screen()
    rows = re.findall(r"<tr><th>([^<]+)</th><td><strong>([^<]+)</strong> ([^<]+)</td><td>([^<]+)</td>", text)
    assert [r[0] for r in rows] == [p for p, _, _ in F.PROTOCOLS]
    for proto, best, cost, others in rows:
        assert re.search(r"\[[\d.,]+ – [\d.,]+\] µs \(n=\d+\), [\d,]+ req per core-second", cost), (proto, cost)
        assert re.search(r"cheaper|costlier|no clear difference|inside the noise floor|CI needs", cost + others), proto
        # the A/A copy and the floor responders are no choice a reader has
        assert "A/A" not in best + others and "floor" not in best + others.replace("noise floor", "")
    assert "req/s" not in text.split("<table", 1)[1]


def test_a_protocol_no_run_measured_says_so():
    assert "no current run measured it" in F.which_server_table([])
