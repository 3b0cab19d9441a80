"""Every Δ a committed report prints is a row of its run's comparisons frame: checked with
httplab.report.audit on each committed run; and no interval of a positive quantity is negative."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from httplab.report.audit import NUM, _value, has_verdict, unmatched_deltas, unverdicted_deltas, verdict_words

ROOT = Path(__file__).resolve().parents[2]


def _runs_with_reports() -> list[str]:
    return sorted(p.name for p in (ROOT / "reports").iterdir()
                  if p.is_dir() and (ROOT / "data" / p.name / "comparisons.parquet").is_file()
                  and list(p.glob("*.md")))


def _runs_of_profile(profile: str) -> list[str]:
    return sorted(p.name for p in (ROOT / "raw").iterdir()
                  if p.is_dir() and (p / "meta.json").is_file()
                  and json.loads((p / "meta.json").read_text()).get("profile") == profile)


def _idle_memory_runs() -> list[str]:
    """Committed runs of scripts/idle_memory.sh: no suite, so no statistics frames; their tidy frame
    and their report page instead."""
    return _runs_of_profile("idle_memory")


def test_every_committed_run_has_its_statistics_frames():
    """A suite run has its statistics frames and reports; a run of a standalone measurement
    (scripts/idle_memory.sh, scripts/cost.sh) its own frame and page instead."""
    runs = sorted(p.name for p in (ROOT / "raw").iterdir() if p.is_dir())
    own = {"idle_memory": _idle_memory_runs(), "cost": _runs_of_profile("cost")}
    standalone = {r for rs in own.values() for r in rs}
    assert runs and _runs_with_reports() == [r for r in runs if r not in standalone]
    for name, run_ids in own.items():
        for run_id in run_ids:
            assert (ROOT / "data" / run_id / f"{name}.parquet").is_file(), run_id
            assert (ROOT / "reports" / run_id / f"{name}.md").is_file(), run_id
            assert (ROOT / "reports" / run_id / f"{name}.html").is_file(), run_id


@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_every_delta_of_a_report_is_a_comparisons_row(run_id):
    checked, bad = unmatched_deltas(ROOT / "reports" / run_id, ROOT / "data" / run_id)
    assert checked > 0, "no Δ with an interval in the reports"
    assert not bad, f"{len(bad)} of {checked} Δs are no comparisons row:\n" + "\n".join(bad[:20])


def test_no_ratio_interval_is_negative():
    for run_id in _runs_with_reports():
        c = pd.read_parquet(ROOT / "data" / run_id / "comparisons.parquet")
        e = pd.read_parquet(ROOT / "data" / run_id / "estimates.parquet")
        assert (c["lo"].dropna() > 0).all() and (e.loc[e["metric"] != "cpu_pct", "lo"].dropna() > 0).all()
        for md in (ROOT / "reports" / run_id).glob("*.md"):
            for m in re.finditer(rf"({NUM})× \[({NUM}), ({NUM})\]", md.read_text()):
                assert _value(m.group(2))[0] >= 0, f"{md}: {m.group(0)}"


def test_a_changed_delta_is_caught(tmp_path):
    run_id = _runs_with_reports()[-1]
    # the newest run's first report (by name) that prints a Δ with its interval (a report of a suite
    # with one server has none)
    found = [(text, m) for text in (p.read_text() for p in sorted((ROOT / "reports" / run_id).glob("*.md")))
             if (m := re.search(rf"({NUM})% \[({NUM})%, ({NUM})%\]", text))]
    assert found, f"no report of {run_id} prints a Δ"
    md, m = found[0]
    (tmp_path / "x.md").write_text(md.replace(m.group(0), "+777% [+700%, +800%]", 1))
    _, bad = unmatched_deltas(tmp_path, ROOT / "data" / run_id)
    assert any("+777%" in b for b in bad)


@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_every_comparison_delta_of_a_report_carries_its_verdict(run_id):
    checked, bad = unverdicted_deltas(ROOT / "reports" / run_id, ROOT / "data" / run_id)
    assert checked > 0
    assert not bad, f"{len(bad)} of {checked} Δs without a verdict:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("line, ok", [
    ("| +71% [+57%, +85%] faster | x |", True),
    ("| no clear difference (+1% [−2%, +4%]) |", True),
    ("| inside the noise floor (+5% [+1%, +9%]) |", True),
    ("| client-bound: capacity only (+5% [+1%, +9%]) |", True),
    ("at 1 core, C, +24% [+4%, +48%] over nginx (faster); at 2", True),
    ("http1/get_ping_c500 vs http1/get_ping_c50: −27% [−46%, −2%] (lower)", True),
    ("| −38% [−46%, −30%] slower (c100) |", True),
    # planted: a bare Δ, and one whose verdict belongs to the next cell
    ("| +71% [+57%, +85%] | −38% [−46%, −30%] slower |", False),
    ("GET /ping: C +71% [+57%, +85%] at 100 connections", False),
])
def test_a_delta_without_its_verdict_is_caught(line, ok):
    m = re.search(rf"({NUM})% \[({NUM})%, ({NUM})%\]", line)
    assert m and has_verdict(line, m.start(), m.end(), verdict_words()) is ok, line


@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_no_report_says_what_its_data_do_not_support(run_id):
    from httplab.report.audit import unsupported_sentences
    bad = unsupported_sentences(ROOT / "reports" / run_id, ROOT / "data" / run_id)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("run_id, planted", [
    # a run with a client-bound point (the C server's workers under the write-up's conditions), no A/A copy
    ("20261126T013741Z-vm", "- **Client-bound points.** None of the 3 points was client-bound: the servers set every req/s."),
    ("20261126T013741Z-vm", "- **Noise floor.** Two instances of the same server (the A/A copy) differed by up to ±5 % in req/s."),
    ("20261126T013741Z-vm", "*No A/A copy ran in this run (the quick profile): there is no measured noise floor.*"),
    # a run made before the load tool's cores were read
    ("20261121T061254Z-vm", "- **Client-bound points.** In 2 of 40 points (C) the load generator's core was saturated."),
    ("20261121T061254Z-vm", "- **Client-bound points.** None of the 40 points was client-bound: the servers set every req/s."),
    # a run with an A/A copy
    ("20261123T092401Z-vm", "- **Noise floor.** No A/A copy ran (the run was made with --no-aa)."),
])
def test_an_unsupported_sentence_is_caught(tmp_path, run_id, planted):
    from httplab.report.audit import unsupported_sentences
    (tmp_path / "x.md").write_text("# x\n\n" + planted + "\n")
    assert len(unsupported_sentences(tmp_path, ROOT / "data" / run_id)) == 1


@pytest.mark.parametrize("run_id", _runs_with_reports() + _idle_memory_runs())
def test_every_measured_figure_of_a_report_has_its_interval_or_reason(run_id):
    from httplab.report.audit import unstated_figures
    checked, bad = unstated_figures(ROOT / "reports" / run_id)
    assert checked > 0, "no measured figure in the reports"
    assert not bad, "\n".join(bad[:20])


TABLE = "## Results\n\nn = ok runs per cell.\n\n| Scenario | Server | req/s | P99 | Peak RSS | Seed req/s | Δ vs Go |\n|:--|:--|:--|:--|:--|:--|:--|\n"


@pytest.mark.parametrize("row, caught", [
    ("| a | C | 151,935 ± 1,204 | 1.2 ms [1.0 ms – 1.4 ms] | 7.7 MiB (max of 5 runs) | 155K | +18% |", 0),
    ("| a | C | 151,935 (n=3, CI needs ≥ 5 runs) | 1.2 ms ± 0.1 ms | 7.7 MiB (max of 5 runs) | 155K | x |", 0),
    ("| a | C | 151,935 | 1.2 ms ± 0.1 ms | 7.7 MiB (max of 5 runs) | 155K | x |", 1),      # a bare req/s
    ("| a | C | 151,935 ± 1,204 | 1.2 ms | 7.7 MiB | 155K | x |", 2),                        # bare P99, bare RSS
    ("| a | C | no data | — | not recorded | 155K | x |", 0),                                # nothing printed
])
def test_a_figure_without_its_interval_is_caught(tmp_path, row, caught):
    from httplab.report.audit import unstated_figures
    (tmp_path / "x.md").write_text(TABLE + row + "\n")
    assert len(unstated_figures(tmp_path)[1]) == caught


def test_a_section_that_never_says_its_n_is_caught(tmp_path):
    from httplab.report.audit import unstated_figures
    (tmp_path / "x.md").write_text(TABLE.replace("n = ok runs per cell.", "Means over the runs.")
                                   + "| a | C | 151,935 ± 1,204 | 1.2 ms ± 0.1 ms | 7.7 MiB (max of 5 runs) | 155K | x |\n")
    bad = unstated_figures(tmp_path)[1]
    assert len(bad) == 2 and all("states no n" in b for b in bad)      # max of 5 runs says its own n


# Every committed run's exported reports pass the mislabel audit (they were rebuilt when the checks
# came in): a report made by older code must be rebuilt, never exempted.
@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_no_committed_report_is_mislabelled(run_id):
    from httplab.report.audit import mislabels
    bad = mislabels(ROOT / "reports" / run_id, ROOT / "data" / run_id)
    assert not bad, f"{len(bad)} mislabels:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("page", ["history", "claims"])
def test_the_run_wide_pages_are_not_mislabelled(page, tmp_path):
    """reports/history.md (and claims.md): the checks that need no run's data."""
    from httplab.report.audit import mislabels
    (tmp_path / f"{page}.md").write_text((ROOT / "reports" / f"{page}.md").read_text())
    bad = mislabels(tmp_path)
    assert not bad, "\n".join(bad[:20])
