"""The first screen of every report (engine.title_markdown, which engine.header displays): the line
'Run `id` · date UTC · profile X (its parameters) · machine · [← all reports]', and under it the
run's caveat or superseded note from the runs file (reports/runs.toml, or $REPORTS_ROOT's)."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from httplab.report.engine import header_markdown, open_report, status_markdown, title_markdown
from httplab.report.run_status import RUNS_FILE, RunStatus, run_status, runs_file
from httplab.stats.write import build_data
from make_fake_run import make_fake_run

REPO = Path(__file__).resolve().parents[2]
RUN = "20261121T120000Z-fake"


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("header")
    run = make_fake_run(tmp / "raw", RUN, reps=2)
    meta = json.loads((run / "meta.json").read_text())
    meta["profile"], meta["params"] = "full", {"duration_s": 2, "warmup_s": 1, "reps": 5, "aa": 0}
    (run / "meta.json").write_text(json.dumps(meta))
    build_data(run, tmp / "data")
    return open_report("http1", run_dir=run, out_dir=tmp / "data", start=REPO, baseline="go")


def _lab(tmp_path: Path, toml: str | None) -> Path:
    """A repository root whose reports/runs.toml holds toml."""
    (tmp_path / "reports").mkdir(parents=True, exist_ok=True)
    if toml is not None:
        (tmp_path / "reports" / RUNS_FILE).write_text(toml)
    return tmp_path


def test_the_profile_label_says_what_the_run_ran(ctx, tmp_path, monkeypatch):
    monkeypatch.delenv("REPORTS_ROOT", raising=False)
    text = title_markdown(replace(ctx, root=_lab(tmp_path, None)), "HTTP/1.1")
    line = text.split("\n")[2]
    assert line.startswith(f"Run `{RUN}` · 2026-11-21 12:00:00 UTC · "
                           "profile full (2 s runs + 1 s warm-up, 5 reps, no A/A) · Fake CPU")
    assert line.endswith("· [← all reports](../index.html)")
    assert text == f"# HTTP/1.1\n\n{line}\n"                          # no runs file: no note
    assert "| Profile | full (2 s runs + 1 s warm-up, 5 reps, no A/A) |" in header_markdown(ctx, "x")


def test_a_caveat_under_the_header_line(ctx, tmp_path, monkeypatch):
    monkeypatch.delenv("REPORTS_ROOT", raising=False)
    root = _lab(tmp_path, f'[runs."{RUN}"]\nstatus = "current"\ncaveat = """Its h2c figures\nmeasure nghttp2."""\n')
    text = title_markdown(replace(ctx, root=root), "HTTP/1.1", "The intro.")
    head, line, note, intro = text.rstrip("\n").split("\n\n")
    assert head == "# HTTP/1.1" and line.startswith(f"Run `{RUN}`")
    assert note == "> **Caveat:** Its h2c figures measure nghttp2."
    assert intro == "The intro."


def test_a_superseded_run_says_by_which_and_why(ctx, tmp_path, monkeypatch):
    reports = tmp_path / "elsewhere"                                  # the scripts' $REPORTS_ROOT
    reports.mkdir()
    (reports / RUNS_FILE).write_text(f'[runs."{RUN}"]\nstatus = "superseded"\nsuperseded_by = "20261122T000000Z-vm"\n'
                                     'reason = "Run again with the fixed server."\ncaveat = "Its CPU column is low."\n')
    monkeypatch.setenv("REPORTS_ROOT", str(reports))
    assert runs_file(ctx.root) == reports / RUNS_FILE
    text = title_markdown(ctx, "HTTP/1.1")
    assert ("\n\n> **Superseded** by `20261122T000000Z-vm`: Run again with the fixed server.\n\n"
            "> **Caveat:** Its CPU column is low.\n") in text
    assert text.index("Run `") < text.index("> **Superseded**")


def test_runs_file_and_status(tmp_path, monkeypatch):
    monkeypatch.delenv("REPORTS_ROOT", raising=False)
    assert runs_file(tmp_path) == tmp_path / "reports" / RUNS_FILE
    monkeypatch.setenv("REPORTS_ROOT", "out/reports")                 # relative: from the repository root
    assert runs_file(tmp_path) == tmp_path / "out" / "reports" / RUNS_FILE
    assert run_status(RUN, tmp_path) == RunStatus()                   # no file: current, no caveat
    assert status_markdown(RunStatus()) == ""


def test_a_wrong_runs_file_stops_the_report_naming_it(ctx, tmp_path, monkeypatch):
    monkeypatch.delenv("REPORTS_ROOT", raising=False)
    root = _lab(tmp_path, f'[runs."{RUN}"]\nstatus = "current"\ncavaet = "x"\n')
    with pytest.raises(ValueError, match=r"runs\.toml: run 20261121T120000Z-fake: unknown key\(s\) cavaet"):
        title_markdown(replace(ctx, root=root), "HTTP/1.1")


def test_the_committed_reference_run_prints_its_caveat(monkeypatch):
    """The reference run's reports, built from this repository, open with its caveat."""
    monkeypatch.delenv("REPORTS_ROOT", raising=False)
    ref = (REPO / "raw" / "REFERENCE").read_text().strip()
    note = status_markdown(run_status(ref, REPO))
    assert note.startswith("> **Caveat:** Made at ae9890e") and "nghttp2" in note
