"""The history store (httplab.report.history.store) and page (page), on small synthetic data/ folders:
parquet frames + run.json. A planted step within one setup is flagged, a flat series is not, and a
machine change is a setup change, never a change point."""
import json

import numpy as np
import pandas as pd
import pytest

from httplab.report.history import page, store
from httplab.report.index import render

AMD = {"cpu_model": "AMD EPYC", "cores": 2, "kernel": "Linux 6.1", "hostname": "vm"}
INTEL = {"cpu_model": "Intel(R) Xeon(R) Processor", "cores": 16, "kernel": "Linux 6.1", "hostname": "vm"}


def _run(data, i, host, values, commit="abc1234def", cpus=("0", "1"), extra=None):
    """data/<run_id>/ with run.json and estimates.parquet: http1 get_ping_c100, one row per
    server -> (req/s, CPU-µs per request)."""
    run_id = f"202611{10 + i // 24:02d}T{i % 24:02d}0000Z-vm"
    d = data / run_id
    d.mkdir(parents=True)
    meta = {"run_id": run_id, "profile": "full", "start_utc": f"2026-11-{10 + i // 24:02d}T{i % 24:02d}:00:00Z",
            "complete": True, "suites": ["http1"], "server_cpus": cpus[0], "client_cpus": cpus[1],
            "client_threads": 1, "params": {"duration_s": 3, "reps": 5, "aa": 1}, "host": host,
            "git": {"commit": commit, "dirty": False}, **(extra or {})}
    (d / "run.json").write_text(json.dumps({"run_id": run_id, "confidence": 0.95, "meta": meta, "facts": {}}))
    rows = []
    for server, (rps, cpu) in values.items():
        for metric, v in (("req_per_s", rps), ("cpu_us_per_req", cpu)):
            rows.append({"run_id": run_id, "suite": "http1", "scenario": "get_ping_c100", "server": server,
                         "metric": metric, "unit": "1/s", "n": 5, "n_failed": 0, "estimate": v, "lo": v * 0.97,
                         "hi": v * 1.03, "confidence": 0.95, "method": "t log", "reason": ""})
    pd.DataFrame(rows).to_parquet(d / "estimates.parquet")
    pd.DataFrame([{"run_id": run_id, "suite": "http1", "server": s, "rep": 1, "req_per_s": v[0]}
                  for s, v in values.items()]).to_parquet(d / "runs.parquet")
    return run_id


@pytest.fixture
def history_data(tmp_path):
    """12 runs on the AMD machine: evloop 15 % slower from run 7 on, go flat; then 4 runs on an Intel
    machine 3× faster (a machine change, not a regression)."""
    data = tmp_path / "data"
    rng = np.random.default_rng(1)
    ids = []
    for i in range(12):
        ev = 150_000 * (1 + 0.02 * rng.standard_normal()) * (0.85 if i >= 7 else 1.0)
        go = 80_000 * (1 + 0.03 * rng.standard_normal())
        ids.append(_run(data, i, AMD, {"evloop": (ev, 6.0), "go": (go, 12.0), "evloop~aa": (ev, 6.0)},
                        commit=f"{i:07d}aaaa"))
    for i in range(12, 16):
        ids.append(_run(data, i, INTEL, {"evloop": (450_000 * (1 + 0.02 * rng.standard_normal()), 2.0),
                                         "go": (240_000, 4.0)}, cpus=("0-11", "12-15")))
    return data, ids


def test_identity_and_views(history_data):
    data, ids = history_data
    con = store.connect(data)
    ident = store.frame(con, "SELECT * FROM run_identity ORDER BY start_utc")
    assert list(ident["run_id"]) == ids
    assert set(ident["machine"]) == {"AMD EPYC, 2 cores", "Intel(R) Xeon(R) Processor, 16 cores"}
    assert ident.loc[0, "commit_short"] == "0000000" and ident.loc[0, "server_cpus"] == "0"
    assert {"estimates", "runs", "history", "run_identity"} <= store.tables(con)
    h = store.history_frame(con, "req_per_s", "http1", "get_ping_c100", "evloop")
    assert len(h) == 16 and {"estimate", "lo", "hi", "machine", "setup", "commit", "kernel", "date"} <= set(h.columns)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 12 * 3 + 4 * 2


def test_each_figure_reads_as_a_multiple_of_its_parts_canary(history_data):
    """A run with a canary (data/<run_id>/canary.parquet) gives its figures a canary floor and the
    ratio to it; a run made before the canary leaves both empty."""
    data, ids = history_data
    pd.DataFrame([{"run_id": ids[-1], "suite": "http1", "when": w, "floor_req_per_s": f, "cpu_mops_per_s": 160.0}
                  for w, f in (("start", 90_000.0), ("end", 160_000.0))]).to_parquet(data / ids[-1] / "canary.parquet")
    con = store.connect(data)
    h = store.history_frame(con, "req_per_s", "http1", "get_ping_c100", "evloop")
    last, first = h[h["run_id"] == ids[-1]].iloc[0], h[h["run_id"] == ids[0]].iloc[0]
    assert last["canary_floor_req_per_s"] == pytest.approx(120_000.0)          # geometric mean of 90k and 160k
    assert last["estimate_per_canary"] == pytest.approx(last["estimate"] / 120_000.0)
    assert pd.isna(first["canary_floor_req_per_s"]) and pd.isna(first["estimate_per_canary"])


def test_an_identity_column_joins_in_with_one_entry(history_data, monkeypatch):
    """A canary (or any meta.json field) is one IDENTITY entry away from every view."""
    data, _ = history_data
    monkeypatch.setitem(store.IDENTITY, "canary_rps", lambda m: (m.get("canary") or {}).get("rps"))
    con = store.connect(data)
    assert "canary_rps" in store.frame(con, "SELECT * FROM history LIMIT 1").columns


def test_no_built_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no built run"):
        store.connect(tmp_path)
    assert page.build(tmp_path) is None
    assert page.index_html(None) == ""


def test_the_planted_step_is_flagged_within_its_setup_only(history_data):
    data, ids = history_data
    hist = page.build(data)
    flagged = [(f.server, f.metric, f.run_id) for f in hist.flags]
    assert flagged == [("evloop", "req_per_s", ids[7])], hist.flags
    f = hist.flags[0]
    assert f.setup.startswith("AMD EPYC, 2 cores") and -0.2 < f.change < -0.1
    # the Intel runs are their own setup: the 3× jump between machines is no change point
    assert len(hist.setups) == 2
    assert not (hist.frame["server"] == "evloop~aa").any()   # A/A copies are not a series


def test_the_page_and_the_index_lines(history_data, tmp_path):
    data, ids = history_data
    reports = tmp_path / "reports"
    reports.mkdir()
    hist = page.write_history_page(reports, None, data)
    md = (reports / "history.md").read_text()
    assert "⚑ change" in md and ids[7] in md
    assert "| S1 | AMD EPYC, 2 cores; server CPUs 0, client CPUs 1; local |" in md
    assert "| S2 | Intel(R) Xeon(R) Processor, 16 cores; server CPUs 0-11, client CPUs 12-15; local |" in md
    for metric in page.METRICS:
        png = reports / page.FIGURES_DIR / f"history_{metric}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html_ = (reports / "history.html").read_text()
    assert '<img src="history_files/history_req_per_s.png" alt="' in html_ and "<table>" in html_
    lines = page.index_html(hist)
    assert 'href="history.html"' in lines and ids[7] in lines and "−" not in lines.split("<li>")[0]
    index = render([], history=lines)
    # the first screen answers first; the history's link and change points come after the runs
    assert 'href="history.html"' in index and index.index("history.html") > index.index("Current runs")


def test_a_flat_history_flags_nothing(tmp_path):
    data = tmp_path / "data"
    rng = np.random.default_rng(5)
    for i in range(10):
        _run(data, i, AMD, {"evloop": (150_000 * (1 + 0.04 * rng.standard_normal()), 6.0)})
    hist = page.build(data)
    assert hist.flags == [] and hist.tested == 2
    assert "No change point flagged" in page.index_html(hist)


def test_a_run_built_into_two_folders_counts_once(history_data, tmp_path, capsys):
    """A copy of a run's data/ folder beside the original (data/backup/) is one run, read from the
    folder named after it and the copy named on stderr; the page is drawn as without the copy
    (the index crashed on the duplicate run id)."""
    import shutil
    data, ids = history_data
    shutil.copytree(data / ids[3], data / "0-backup")
    assert store.run_folders(data) == sorted(data / i for i in ids)
    assert f"{data / '0-backup'} holds run {ids[3]} as {data / ids[3]} does; left out" in capsys.readouterr().err
    assert list(store.identity(data)["run_id"]) == ids
    reports = tmp_path / "reports"
    reports.mkdir()
    capsys.readouterr()
    hist = page.write_history_page(reports, None, data)
    assert [(f.server, f.run_id) for f in hist.flags] == [("evloop", ids[7])]
    assert capsys.readouterr().err.count("0-backup") == 1   # named once per page, not per reader


def test_an_interleaved_part_is_a_setup_of_its_own(tmp_path):
    """Sliced parts read req/s about 5 % below contiguous ones on the same machine: their series is
    their own (a part's own design, suite_params, or the run's), so the design's step is no change
    point, and the page names both setups."""
    data = tmp_path / "data"
    ids = [_run(data, i, AMD, {"evloop": (150_000.0 * (1 + 0.01 * (i % 2)), 6.0)}) for i in range(4)]
    ids += [_run(data, i, AMD, {"evloop": (142_000.0 * (1 + 0.01 * (i % 2)), 6.0)},
                 extra={"suite_params": {"http1": {"blocks": "sliced", "reps": 12}}}) for i in range(4, 7)]
    ids += [_run(data, 7, AMD, {"evloop": (142_500.0, 6.0)}, extra={"params": {"duration_s": 1, "reps": 12, "blocks": "sliced"}})]
    con = store.connect(data)
    h = store.history_frame(con, "req_per_s", "http1", "get_ping_c100", "evloop")
    plain = "AMD EPYC, 2 cores; server CPUs 0, client CPUs 1; local"
    assert list(h["setup"]) == [plain] * 4 + [plain + store.SLICED_SETUP] * 4
    assert list(h["blocks"]) == ["server"] * 4 + ["sliced"] * 4
    hist = page.build(data)
    assert not hist.flags and len(hist.setups) == 2
    md = page.render_md(hist)
    assert f"| S2 | {plain}{store.SLICED_SETUP} |" in md
