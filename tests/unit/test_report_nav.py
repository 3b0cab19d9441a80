"""Report navigation: TOC anchors, the empty-section rule, the column limit and the index page."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from httplab.report import engine as R
from httplab.report.index import collect, render
from httplab.report.tables import MAX_COLUMNS, column_parts, to_markdown


def test_slug_is_githubs_anchor():
    assert R.slug("GET /ping — minimal response, by connections") == "get-ping--minimal-response-by-connections"
    assert R.slug("Server cost: CPU and memory beside req/s") == "server-cost-cpu-and-memory-beside-reqs"


def test_toc_links_every_heading_anchor():
    titles = ["Verify gate", "HTTPS/2 — GET /ping, by connections"]
    toc = R.toc_markdown(titles)
    for t in titles:
        assert f"[{t}](#{R.slug(t)})" in toc
        assert f'<h2 id="{R.slug(t)}">' in R.heading_markdown(t, "prose")
    assert R.toc_markdown([]) == ""
    text, found = R.anchored("intro\n## Findings\nbody")
    assert found == ["Findings"] and '<h2 id="findings">Findings</h2>' in text


class _Ctx:
    def __init__(self):
        self.toc, self.shown = [], []

    def show_table(self, df, note=""):
        self.shown.append(df)


def test_empty_section_shows_nothing(monkeypatch):
    shown = []
    monkeypatch.setattr(R, "heading", lambda ctx, title, prose="": (ctx.toc.append(title), shown.append(title)))
    ctx = _Ctx()
    empty = pd.DataFrame()
    empty.attrs["caption"] = "no data for this table in this run"
    assert R.section(ctx, "Other scenarios", "prose", empty) is False
    assert ctx.toc == [] and ctx.shown == [] and shown == []
    assert R.section(ctx, "Ping", "prose", empty, pd.DataFrame({"a": [1]})) is True
    assert ctx.toc == ["Ping"] and len(ctx.shown) == 2


def test_wide_tables_split_within_the_limit():
    df = pd.DataFrame([{f"c{i}": str(i) for i in range(13)}])
    parts = column_parts(df)
    assert len(parts) > 1 and all(len(p) <= MAX_COLUMNS for p in parts)
    assert all(p[0] == "c0" for p in parts)  # the key column in every part
    assert sorted({c for p in parts for c in p}) == sorted(df.columns)
    md = to_markdown(df)
    assert all(line.count("|") - 1 <= MAX_COLUMNS for line in md.splitlines() if line.startswith("|"))
    df.attrs["key_columns"] = ["c0", "c1"]
    df.attrs["column_groups"] = [["c2", "c3", "c4"], ["c5", "c6", "c7", "c8"]]
    parts = column_parts(df)
    assert all(p[:2] == ["c0", "c1"] and len(p) <= MAX_COLUMNS for p in parts)
    assert any({"c5", "c6", "c7", "c8"} <= set(p) for p in parts)
    narrow = pd.DataFrame([{"a": 1, "b": 2}])
    assert column_parts(narrow) == [["a", "b"]]


def test_index_page(tmp_path: Path):
    reports, raw, data = tmp_path / "reports", tmp_path / "raw", tmp_path / "data"
    for run, date in (("20260101T000000Z-vm", "2026-01-01T00:00:00Z"), ("20260102T000000Z-vm", "2026-01-02T00:00:00Z")):
        (reports / run).mkdir(parents=True)
        (reports / run / "http1.html").write_text("x")
        (reports / run / "http1.md").write_text("x")
        (raw / run).mkdir(parents=True)
        (raw / run / "meta.json").write_text(json.dumps({
            "run_id": run, "profile": "full", "start_utc": date, "complete": True, "suites": ["http1"],
            "host": {"cpu_model": "Test CPU", "cores": 4}}))
    (raw / "REFERENCE").write_text("20260101T000000Z-vm\n")
    entries = collect(reports, raw, data)
    assert [e.run_id for e in entries] == ["20260102T000000Z-vm", "20260101T000000Z-vm"]  # newest first
    assert [e.reference for e in entries] == [False, True]
    page = render(entries)
    assert "Test CPU, 4 cores" in page and "reference run" in page
    assert 'href="20260101T000000Z-vm/http1.html"' in page and 'href="20260101T000000Z-vm/http1.md"' in page


def test_index_headlines_of_a_committed_run():
    repo = Path(__file__).resolve().parents[2]
    run = "20261123T092401Z-vm"
    if not (repo / "data" / run / "comparisons.parquet").is_file():
        return
    entries = {e.run_id: e for e in collect(repo / "reports", repo / "raw", repo / "data")}
    heads = " ".join(entries[run].headlines)
    for suite in ("http1", "h2c", "https", "languages"):
        assert f"{suite} " in heads
    assert "Δ vs Go" in heads and "[" in heads
