"""The index's runs policy: reports/runs.toml marks superseded runs (with the run that replaced them
and why); the index lists current runs first and the superseded ones in their own section."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from httplab.report.index import RUNS_FILE, RunStatus, collect, main as index_main, read_run_status, render

ROOT = Path(__file__).resolve().parents[2]
OLD, NEW, OTHER = "20260101T000000Z-vm", "20260102T000000Z-vm", "20260103T000000Z-vm"


def _lab(tmp_path: Path, runs_toml: str | None) -> tuple[Path, Path]:
    reports, raw = tmp_path / "reports", tmp_path / "raw"
    for run, day, suite in ((OLD, "01", "http1"), (NEW, "02", "http1"), (OTHER, "03", "languages")):
        (reports / run).mkdir(parents=True)
        (reports / run / f"{suite}.html").write_text("x")
        (reports / run / f"{suite}.md").write_text("x")
        (raw / run).mkdir(parents=True)
        (raw / run / "meta.json").write_text(json.dumps({
            "run_id": run, "profile": "full", "start_utc": f"2026-01-{day}T00:00:00Z", "complete": True,
            "suites": [suite], "host": {"cpu_model": "Test CPU", "cores": 4}}))
    if runs_toml is not None:
        (reports / RUNS_FILE).write_text(runs_toml)
    return reports, raw


SUPERSEDED = f'''
[runs."{OLD}"]
status = "superseded"
superseded_by = "{NEW}"
reason = """Run again with
the fixed server."""
'''


def test_superseded_runs_get_their_own_section(tmp_path):
    reports, raw = _lab(tmp_path, SUPERSEDED)
    assert index_main([str(reports), "--raw", str(raw)]) == 0
    page = (reports / "index.html").read_text()
    current, _, superseded = page.partition('<h2 id="superseded-runs">Superseded runs</h2>')
    assert superseded, "no superseded section"
    assert f"<code>{OLD}</code>" not in current.split("<h2>Current runs</h2>")[1]      # not among current runs
    assert current.index(f"<code>{OTHER}</code>") < current.index(f"<code>{NEW}</code>")  # newest first
    row = next(r for r in superseded.split("<tr>") if r.startswith(f"<td><code>{OLD}</code>"))
    assert "Run again with the fixed server." in row                          # the reason, one line
    assert f'<code>{NEW}</code><br><a href="{NEW}/http1.html">http1</a>' in row  # the run that replaced it
    assert f'href="{OLD}/http1.html"' in row                                   # its reports stay linked
    assert f'href="{OTHER}/languages.html"' not in row                         # only the replacing run's
    assert "raw files stay, so any report can be rebuilt" in page and 'href="#superseded-runs"' in page


def test_runs_not_named_are_current_and_no_file_means_no_section(tmp_path):
    reports, raw = _lab(tmp_path, None)
    entries = collect(reports, raw, tmp_path / "data")
    assert {e.status for e in entries} == {RunStatus()}
    page = render(entries)
    assert "superseded-runs" not in page and "<h2>Current runs</h2>" in page   # no link to a missing section
    assert all(f"<code>{r}</code>" in page for r in (OLD, NEW, OTHER))


@pytest.mark.parametrize("toml, message", [
    (f'[runs."{OLD}"]\nstatus = "obsolete"\n', "not one of current, superseded"),
    (f'[runs."{OLD}"]\nstatus = "superseded"\nsuperseded_by = "{NEW}"\n', "needs superseded_by and reason"),
    (f'[runs."{OLD}"]\nstatus = "superseded"\nsuperseded_by = "20990101T000000Z-vm"\nreason = "x"\n',
     "not a current run with reports here"),
    (SUPERSEDED + f'[runs."{NEW}"]\nstatus = "superseded"\nsuperseded_by = "{OTHER}"\nreason = "x"\n',
     "not a current run with reports here"),                                  # replaced by a superseded run
    ('[runs."20990101T000000Z-vm"]\nstatus = "current"\n', "has no reports"),  # a typo'd run id
])
def test_a_wrong_runs_file_is_refused_naming_the_run(tmp_path, toml, message):
    reports, raw = _lab(tmp_path, toml)
    with pytest.raises(ValueError, match=message):
        collect(reports, raw, tmp_path / "data")


def test_the_committed_runs_file():
    """reports/runs.toml names committed runs only, each superseded one replaced by a current run."""
    statuses = read_run_status(ROOT / "reports" / RUNS_FILE)
    assert statuses and all(s.status == "superseded" for s in statuses.values())
    ref = (ROOT / "raw" / "REFERENCE").read_text().strip()
    assert ref not in statuses                                   # the reference run is current
    for run_id, s in statuses.items():
        assert (ROOT / "raw" / run_id / "meta.json").is_file()  # its raw files stay
        assert (ROOT / "reports" / run_id).is_dir() and s.superseded_by not in statuses
        assert s.reason.endswith(".") and s.reason.count(". ") == 0, run_id   # one sentence
