"""The index's runs policy: reports/runs.toml marks superseded runs (with the run that replaced them
and why) and gives current runs caveats; the index lists the reference run first, then the other
current runs newest first with their caveats, and the superseded ones in their own section."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from httplab.report.index import RUNS_FILE, RunStatus, collect, main as index_main, read_run_status, render
from httplab.report.run_status import profile_label

ROOT = Path(__file__).resolve().parents[2]
OLD, NEW, OTHER = "20260101T000000Z-vm", "20260102T000000Z-vm", "20260103T000000Z-vm"


def _lab(tmp_path: Path, runs_toml: str | None, reference: str | None = None) -> tuple[Path, Path]:
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
    if reference is not None:
        (raw / "REFERENCE").write_text(reference + "\n")
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
    (f'[runs."{OLD}"]\nstatus = "current"\ncaveats = "x"\n', "unknown key.*caveats"),  # a typo'd key
    (f'[runs."{OLD}"]\nstatus = "current"\nreason = "x"\n', "for superseded runs"),   # a current run's note
    (f'[runs."{OLD}"]\ncaveat = 3\n', "caveat must be a string"),
])
def test_a_wrong_runs_file_is_refused_naming_the_run(tmp_path, toml, message):
    reports, raw = _lab(tmp_path, toml)
    with pytest.raises(ValueError, match=message):
        collect(reports, raw, tmp_path / "data")


def test_a_wrong_runs_file_names_the_file_and_the_run(tmp_path):
    reports, raw = _lab(tmp_path, f'[runs."{NEW}"]\nstatus = "retired"\n')
    with pytest.raises(ValueError) as err:
        read_run_status(reports / RUNS_FILE)
    assert str(reports / RUNS_FILE) in str(err.value) and NEW in str(err.value)
    assert "'retired' is not one of current, superseded" in str(err.value)
    (reports / RUNS_FILE).write_text(f'[runs."{NEW}"]\nstatus = "current"\nnote = "x"\n')
    with pytest.raises(ValueError) as err:
        index_main([str(reports), "--raw", str(raw)])
    assert str(reports / RUNS_FILE) in str(err.value) and NEW in str(err.value) and "unknown key(s) note" in str(err.value)
    assert not (reports / "index.html").exists()


CAVEAT = f'''
[runs."{OLD}"]
status = "current"
caveat = """Measured the C server
on a library & not its own code."""
'''


def test_caveat_read_and_shown_under_the_run_id(tmp_path):
    reports, raw = _lab(tmp_path, CAVEAT + SUPERSEDED.replace(f'[runs."{OLD}"]', f'[runs."{NEW}"]')
                        .replace(f'superseded_by = "{NEW}"', f'superseded_by = "{OTHER}"'))
    statuses = read_run_status(reports / RUNS_FILE)
    assert statuses[OLD] == RunStatus("current", caveat="Measured the C server on a library & not its own code.")
    assert statuses[NEW].caveat == ""
    assert index_main([str(reports), "--raw", str(raw)]) == 0
    page = (reports / "index.html").read_text()
    current = page.split("<h2>Current runs</h2>")[1].split("superseded-runs")[0]
    row = next(r for r in current.split("<tr>") if f"<code>{OLD}</code>" in r)
    assert ('<p class="caveat"><strong>Caveat:</strong> Measured the C server on a library &amp; not its own '
            "code.</p>") in row.split("</td>")[0]                   # in the run's cell, escaped, one line
    assert page.count("Caveat:") == 1                                # only the run that has one
    assert "carries a caveat" in page                                # the policy says where caveats come from


def test_the_reference_run_first_then_newest_first(tmp_path):
    reports, raw = _lab(tmp_path, None, reference=OLD)
    assert index_main([str(reports), "--raw", str(raw)]) == 0
    page = (reports / "index.html").read_text()
    current = page.split("<h2>Current runs</h2>")[1]
    at = [current.index(f"<code>{r}</code>") for r in (OLD, OTHER, NEW)]
    assert at == sorted(at)                                          # reference, then newest first
    assert f"<code>{OLD}</code> <strong>reference run</strong>" in current
    assert "The reference run (the one raw/REFERENCE names) first, then the other runs newest first" in page
    entries = collect(reports, raw, tmp_path / "data")              # collect itself stays newest first
    assert [e.run_id for e in entries] == [OTHER, NEW, OLD]
    # a superseded reference run is not listed among the current ones (the file says it is superseded)
    (reports / RUNS_FILE).write_text(SUPERSEDED)
    page = render(collect(reports, raw, tmp_path / "data"))
    current = page.split("<h2>Current runs</h2>")[1].split("superseded-runs")[0]
    assert f"<code>{OLD}</code>" not in current and current.index(OTHER) < current.index(NEW)


def test_claims_link_only_when_the_page_is_there(tmp_path):
    reports, raw = _lab(tmp_path, None)
    assert index_main([str(reports), "--raw", str(raw)]) == 0
    assert "claims.html" not in (reports / "index.html").read_text()
    (reports / "claims.html").write_text("<html></html>")
    assert index_main([str(reports), "--raw", str(raw)]) == 0
    page = (reports / "index.html").read_text()
    link = '<a href="claims.html">Seed claims: every claim of the four write-ups with its verdict</a>'
    assert link in page and page.index(link) < page.index("<h2>Current runs</h2>")


def test_profile_label():
    full = {"profile": "full", "params": {"duration_s": 3, "warmup_s": 1, "reps": 5, "aa": 1}}
    assert profile_label(full) == "full (3 s runs + 1 s warm-up, 5 reps, A/A)"
    short = {"profile": "full", "params": {"duration_s": 2, "warmup_s": 1, "reps": 5, "aa": 0}}
    assert profile_label(short) == "full (2 s runs + 1 s warm-up, 5 reps, no A/A)"
    old = {"profile": "full", "params": {"duration_s": 4, "warmup_s": 1, "reps": 5}}   # before the A/A copy
    assert profile_label(old) == "full (4 s runs + 1 s warm-up, 5 reps)"
    quick = {"profile": "quick", "params": {"duration_s": 1, "warmup_s": 0, "reps": 1, "aa": 0}}
    assert profile_label(quick) == "quick (1 s runs, 1 rep, no A/A)"
    assert profile_label({"profile": "idle_memory", "params": {"reps": 5, "conns": [1000]}}) == "idle_memory (5 reps)"
    assert profile_label({"profile": "full"}) == "full" and profile_label({}) == "—"
    # a run made while a suite declared its own minimum warm-up (suite_params, before min_warmup_s)
    mixed = {"profile": "full", "params": {"duration_s": 1, "warmup_s": 0, "reps": 12, "aa": 1},
             "suite_params": {"languages": {"warmup_s": 1}}}
    assert profile_label(mixed) == "full (1 s runs (languages: + 1 s warm-up), 12 reps, A/A)"
    sliced = {"profile": "full", "params": {"duration_s": 1, "warmup_s": 0, "reps": 12, "aa": 1, "blocks": "sliced"}}
    assert profile_label(sliced) == "full (1 s runs, 12 reps, interleaved, A/A)"


def test_profile_label_names_each_design_with_its_parts():
    """The full profile runs a suite in its own design (suite.toml [full]), which each part records
    (suite_params.<part> with its blocks): the label groups the parts by design, in the run's order."""
    seed = {"duration_s": 1, "warmup_s": 0, "reps": 12, "blocks": "sliced"}
    plain = {"duration_s": 3, "warmup_s": 1, "reps": 5, "blocks": "server"}
    meta = {"profile": "full", "suites": ["http1", "h2c", "latency_h1"],
            "params": {**plain, "aa": 1}, "suite_params": {"http1": seed, "h2c": seed, "latency_h1": plain}}
    assert profile_label(meta) == ("full (http1, h2c: 1 s runs, 12 reps, interleaved; "
                                   "latency_h1: 3 s runs + 1 s warm-up, 5 reps, A/A)")
    # one design for every part reads as the run's
    one = {**meta, "suites": ["http1", "h2c"], "suite_params": {"http1": seed, "h2c": seed}}
    assert profile_label(one) == "full (1 s runs, 12 reps, interleaved, A/A)"


def test_index_profile_column_says_the_params(tmp_path):
    reports, raw = _lab(tmp_path, None)
    meta = json.loads((raw / NEW / "meta.json").read_text())
    meta["params"] = {"duration_s": 2, "warmup_s": 1, "reps": 5, "aa": 0}
    (raw / NEW / "meta.json").write_text(json.dumps(meta))
    page = render(collect(reports, raw, tmp_path / "data"))
    assert "full (2 s runs + 1 s warm-up, 5 reps, no A/A), complete" in page


def test_the_committed_runs_file():
    """reports/runs.toml names committed runs only, each superseded one replaced by a current run;
    the reference run is current, with its caveat (it measured the C server's HTTP/2 on nghttp2)."""
    statuses = read_run_status(ROOT / "reports" / RUNS_FILE)
    ref = (ROOT / "raw" / "REFERENCE").read_text().strip()
    assert statuses[ref].status == "current" and "nghttp2" in statuses[ref].caveat
    superseded = {k: s for k, s in statuses.items() if s.status == "superseded"}
    assert superseded
    for run_id, s in statuses.items():
        assert (ROOT / "raw" / run_id / "meta.json").is_file()  # its raw files stay
        assert (ROOT / "reports" / run_id).is_dir()
        assert s.caveat.count(". ") <= 1, run_id                 # one or two sentences
    for run_id, s in superseded.items():
        assert s.superseded_by not in superseded
        assert s.reason.endswith(".") and s.reason.count(". ") == 0, run_id   # one sentence
