"""Change points in words (httplab.report.history.attribution): a step that moves every server at
the run where a load tool's build changed reads "every server moved … not one server's code" and
names the build; a step of one server while the others hold, at a new commit, reads "only … moved"
and names the commit; the index and the history page's first screen carry the sentences."""
from __future__ import annotations

import numpy as np

from httplab.report.history import attribution, page
from test_history_store import AMD, _run


def _series(data, step_at: int, both: bool, tools_change: bool):
    rng = np.random.default_rng(3)
    ids = []
    for i in range(12):
        after = i >= step_at
        ev = 150_000 * (1 + 0.01 * rng.standard_normal()) * (1.6 if after else 1.0)
        go = 80_000 * (1 + 0.01 * rng.standard_normal()) * (1.6 if after and both else 1.0)
        build = "lab build 2: starts its clock after the handshakes" if after and tools_change else "lab build: x"
        commit = f"{'b' if after else 'a'}{'0' * 9}"
        ids.append(_run(data, i, AMD, {"evloop": (ev, 6.0), "go": (go, 12.0)}, commit=commit,
                        extra={"tools": {"h2load": "h2load nghttp2/1.52.0", "h2load_build": build}}))
    return ids


def test_every_server_moving_with_a_new_tool_build_is_the_bench_not_the_code(tmp_path):
    ids = _series(tmp_path / "data", 6, both=True, tools_change=True)
    hist = page.build(tmp_path / "data")
    rps = [e for e in attribution.events(hist) if e.metric == "req_per_s"]
    assert len(rps) == 1, rps
    e = rps[0]
    assert e.run_id == ids[6] and e.before_run == ids[5] and e.held == ()
    assert {s for s, _ in e.moved} == {"evloop", "go"}
    assert any("h2load's build (lab build → lab build 2)" in c for c in e.changed), e.changed
    assert any("commit a000000 → b000000" in c for c in e.changed), e.changed
    text = page.event_sentences(hist)[0]
    assert "every server moved the same way, so not one server's code" in text.lower(), text
    assert "+60%" in text and "−" not in text.split(":")[0]


def test_one_server_moving_while_the_others_hold_points_at_its_own_change(tmp_path):
    ids = _series(tmp_path / "data", 6, both=False, tools_change=False)
    hist = page.build(tmp_path / "data")
    (e,) = [e for e in attribution.events(hist) if e.metric == "req_per_s"]
    assert [s for s, _ in e.moved] == ["evloop"] and e.held == ("go",) and e.run_id == ids[6]
    assert e.changed == ("the lab's code (commit a000000 → b000000)",)
    assert "only C (evloop) moved while Go net/http held" in attribution.cause(e)


def test_nothing_recorded_changing_says_so(tmp_path):
    """The same commit, tools, kernel and design on both sides: the sentence says what is left."""
    import pandas as pd
    before = pd.Series({"commit": "a" * 10, "load_tools": "{}", "kernel": "Linux 6.1", "duration_s": 1.0, "reps": 12,
                        "blocks": "sliced"})
    assert attribution.what_changed(before, before.copy()) == ()
    later = before.copy()
    later["kernel"] = "Linux 6.18.44-fc-v1300"
    assert attribution.what_changed(before, later) == ("the machine's kernel (6.1 → 6.18.44-fc-v1300)",)


def test_the_index_and_the_history_page_say_it_in_words(tmp_path):
    _series(tmp_path / "data", 6, both=True, tools_change=True)
    hist = page.build(tmp_path / "data")
    lines = page.index_html(hist)
    assert "every server moved the same way" in lines.lower() and "1.5e+05" not in lines
    md = page.render_md(hist)
    short = md.split("## How it is read")[0]
    assert "## In short" in short and "S1: AMD EPYC, 2 cores" in short and "12 runs" in short
    assert "every server moved the same way" in short.lower()


def test_the_design_compared_is_the_parts_not_the_runs(tmp_path):
    """A run whose params say 3 s × 5 reps in server blocks, and whose part ran its suite's own
    design (suite_params.<part>: 1 s × 12 sliced), is compared on the part's: two such runs on
    either side of a step did not change design, whatever the run before's params said."""
    own = {"suite_params": {"http1": {"duration_s": 1, "reps": 12, "blocks": "sliced"}}}
    rng = np.random.default_rng(5)
    for i in range(12):
        after = i >= 6
        ev = 150_000 * (1 + 0.01 * rng.standard_normal()) * (1.6 if after else 1.0)
        # the runs before the step ran their whole run sliced; those after only the part
        params = {"params": {"duration_s": 3, "reps": 5, "aa": 1, "blocks": "server" if after else "sliced"}}
        _run(tmp_path / "data", i, AMD, {"evloop": (ev, 6.0)}, commit=f"{'b' if after else 'a'}{'0' * 9}",
             extra={**own, **params})
    hist = page.build(tmp_path / "data")
    (e,) = [e for e in attribution.events(hist) if e.metric == "req_per_s"]
    assert not any("design" in c for c in e.changed), e.changed
