"""The scaling report (suites/scaling/report.ipynb, report.py and plots.py), on fake raw runs of the scaling_h1 part
built here and passed through the real build step (stats.write.build_data): two servers at n = 1, 2, 4
and 8 cores with known efficiencies, GET /ping client-bound at n = 8 (the load tools' CPUs saturated,
the servers' not) and POST /echo never; and a run of n = 1 only, as a two-core machine makes."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from httplab.lab.suites import suite_module
from httplab.stats.write import build_data
from make_fake_run import (FIXTURES, scale_wrk_capture, write_meta, join_suite, write_suite_done,
                           write_verify)
from notebook_kernel import needs_kernel

S = suite_module("scaling")
P = suite_module("scaling", "plots")
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "suites" / "scaling" / "report.ipynb"
PART = "scaling_h1"
# req/s at one core relative to the fixture's, and efficiency at each n (X@n / (n × X@1))
SPEED = {"evloop": 1.2, "go": 1.0}
EFFICIENCY = {"evloop": {1: 1.0, 2: 0.95, 4: 0.9, 8: 0.625}, "go": {1: 1.0, 2: 0.9, 4: 0.75, 8: 0.75}}
SCENARIOS = (  # id, method, route, size, fixture
    ("get_ping_c100", "GET", "/ping", 0, "clean_ping"),
    ("post_echo_b4096_c100", "POST", "/echo", 4096, "post_1k"),
)
CLIENT_BOUND_AT = ("get_ping_c100", 8)
CLIENT_CPUS = list(range(8, 16))
REPS = 5


def write_window(prefix: Path, n: int, server_busy: float, client_busy: float, wall_s: float = 1.0) -> None:
    """<prefix>.cpu.json: the server's n CPUs and the load tools' eight, each as busy as given, and
    <prefix>.client.time.txt charging the load tool with all of its CPUs' busy time (no foreign CPU)."""
    total = int(round(wall_s * 100))

    def counters(busy: float) -> list[int]:
        used = int(round(busy * total))
        return [used, 0, 0, total - used, 0, 0, 0, 0, 0, 0]
    cpus = {str(c): counters(server_busy) for c in range(n)} | {str(c): counters(client_busy) for c in CLIENT_CPUS}
    before = {c: [1000] * 10 for c in cpus}
    after = {c: [b + d for b, d in zip(before[c], cpus[c])] for c in cpus}
    prefix.with_name(prefix.name + ".cpu.json").write_text(json.dumps({
        "clk_tck": 100, "server_cpus": f"0-{n - 1}" if n > 1 else "0", "client_cpus": "8-15",
        "fields": ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
        "proc_stat_before": before, "proc_stat_after": after}))
    client_s = client_busy * len(CLIENT_CPUS) * wall_s
    prefix.with_name(prefix.name + ".client.time.txt").write_text(
        f"user_s={client_s * 0.4:.2f} sys_s={client_s * 0.6:.2f} wall_s={wall_s:.2f} maxrss_kb=6000 exit=0\n")


def write_rep(sdir: Path, rep: int, n: int, factor: float, fixture: str, bound: bool) -> None:
    """One rep of a point: wrk's output scaled by factor, the server's CPU and the cores' window."""
    jtext, stdout = scale_wrk_capture(FIXTURES / f"{fixture}.wrk.json", FIXTURES / f"{fixture}.stdout.txt", factor)
    (sdir / f"r{rep}.wrk.json").write_text(jtext)
    (sdir / f"r{rep}.stdout.txt").write_text(stdout)
    (sdir / f"r{rep}.stderr.txt").write_text("")
    wall = json.loads(jtext)["summary"]["duration_us"] / 1e6
    server_busy, client_busy = (0.75, 0.97) if bound else (0.97, 0.6)
    cpu_s = server_busy * n * wall
    (sdir / f"r{rep}.server.json").write_text(json.dumps({
        "pids": [4242], "clk_tck": 100, "cpu_ticks_before": 1000, "cpu_ticks_after": 1000 + int(round(cpu_s * 100)),
        "wall_s": wall, "rss_start_kb": 2000, "rss_warm_kb": 2100, "rss_peak_kb": 2200,
        "rss_peak_method": "clear_refs", "rss_kb": 2100, "server_alive": True}))
    write_window(sdir / f"r{rep}", n, server_busy, client_busy, wall)
    (sdir / f"r{rep}.run.json").write_text(json.dumps({
        "rep": rep, "start_utc": "2026-11-21T12:00:00Z", "end_utc": "2026-11-21T12:00:01Z", "exit_code": 0,
        "cmd": "wrk -t8 -c100 -d1s ...", "server_alive": True}))


def make_scaling_run(raw_root: Path, ns: tuple[int, ...], cores: int, seed: int = 3) -> Path:
    """raw/<run_id>/scaling_h1 with evloop and go at every n of ns, REPS reps each."""
    rng = np.random.default_rng(seed)
    run_dir = raw_root / f"20261121T120000Z-scal{max(ns)}"
    write_meta(run_dir, start_utc="2026-11-21T12:00:00Z", end_utc="2026-11-21T12:30:00Z", suites=(PART,),
               params={"reps": REPS, "duration_s": 1, "warmup_s": 1}, tools={"wrk": "wrk 4.1.0"})
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["host"]["cores"] = cores
    (run_dir / "meta.json").write_text(json.dumps(meta))
    suite_dir = join_suite(run_dir, PART)
    for base in SPEED:
        for n in ns:
            server = f"{base}@{n}"
            write_verify(suite_dir / server, REPS, "PASS GET /ping -> 200, Content-Length 4, body ok\n")
            for scenario, method, route, size, fixture in SCENARIOS:
                sdir = suite_dir / server / scenario
                sdir.mkdir(parents=True)
                (sdir / "scenario.json").write_text(json.dumps({
                    "suite": PART, "protocol": "h1", "tls": False, "server": server, "scenario": scenario,
                    "route": route, "method": method, "size_bytes": size, "connections": 100, "streams": 1,
                    "pipeline": 1, "client_threads": 8, "duration_s": 1, "warmup_s": 1, "tool": "wrk",
                    "url": f"http://127.0.0.1:18080{route}", "scaling_plan": "a fake plan",
                    "scaling_ladder": list(ns)}))
                for rep in range(1, REPS + 1):
                    factor = SPEED[base] * n * EFFICIENCY[base][n] * (1 + rng.normal(0, 0.01))
                    write_rep(sdir, rep, n, factor, fixture, (scenario, n) == CLIENT_BOUND_AT)
    write_suite_done(suite_dir, "2026-11-21T12:30:00Z")
    return run_dir


def built(tmp: Path, ns: tuple[int, ...], cores: int) -> SimpleNamespace:
    run = make_scaling_run(tmp / "raw", ns, cores)
    data = tmp / "data" / run.name
    build_data(run, data)   # the one build step; the report reads only data/
    ctx = S.open_scaling_report(run_dir=str(run), out_dir=str(data))
    return SimpleNamespace(run=run, data=data, ctx=ctx, frame=S.scaling_frame(ctx.runs, ctx.stats))


@pytest.fixture(scope="module")
def eight(tmp_path_factory) -> SimpleNamespace:
    return built(tmp_path_factory.mktemp("scal8"), (1, 2, 4, 8), 16)


@pytest.fixture(scope="module")
def one(tmp_path_factory) -> SimpleNamespace:
    return built(tmp_path_factory.mktemp("scal1"), (1,), 2)


def test_the_scaling_ratio_is_a_comparisons_row(eight):
    row = eight.ctx.stats.compare("req_per_s", (PART, "post_echo_b4096_c100", "evloop@4"),
                                  (PART, "post_echo_b4096_c100", "evloop@1"))
    assert row is not None and row["kind"] == "server" and bool(row["paired"]) and int(row["n_pairs"]) == REPS
    assert row["ratio"] == pytest.approx(4 * EFFICIENCY["evloop"][4], rel=0.03)


def test_efficiency_is_the_ratio_and_its_interval_over_n(eight):
    f, stats = eight.frame, eight.ctx.stats
    assert sorted(f["n"].unique()) == [1, 2, 4, 8] and set(f["base"]) == set(SPEED)
    for r in f[f["n"] > 1].itertuples():
        row = stats.compare("req_per_s", (r.suite, r.scenario, r.server), (r.suite, r.scenario, f"{r.base}@1"))
        assert (r.eff, r.eff_lo, r.eff_hi) == (row["ratio"] / r.n, row["lo"] / r.n, row["hi"] / r.n)
        assert r.eff == pytest.approx(EFFICIENCY[r.base][r.n], rel=0.03)
        assert r.eff_lo < r.eff < r.eff_hi and r.verdict == row["verdict"] == "faster"
    assert f[f["n"] == 1]["eff"].isna().all()
    e = S.efficiency(stats, S.points(eight.ctx.runs)[1], "go", 4)
    assert e is not None and e.text(4).startswith(f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}] (4 cores against 1: faster)")


def test_client_bound_cells_are_the_runs_flags(eight):
    f = eight.frame
    assert set(map(tuple, f.loc[f["client_bound"], ["scenario", "n"]].drop_duplicates().to_numpy())) == {CLIENT_BOUND_AT}
    runs = eight.ctx.runs
    assert runs.loc[runs["server"].str.endswith("@8") & (runs["scenario"] == "get_ping_c100"), "client_bound"].all()


def test_findings(eight):
    md = S.findings_markdown(eight.ctx)
    assert "allowed n = 1 only" not in md
    ping, post = S.points(eight.ctx.runs)
    assert (ping.label, post.label) == ("HTTP/1.1 GET /ping, 100 conns", "HTTP/1.1 POST /echo 4 KiB, 100 conns")
    e = S.efficiency(eight.ctx.stats, post, "evloop", 8)
    assert e is not None and "C (evloop) at 8 cores (the largest n measured): " in md
    assert f"efficiency {e.text(8)}" in md and "(8 cores against 1: faster)" in md
    # at 8 cores on /ping both servers were client-bound: req/s measured the load tools, a tie
    assert "at 8 cores, a tie of Go net/http and C (evloop): Go net/http client-bound: capacity only (+0% [" in md
    assert md.count("at 1 core, C (evloop), +") == 2 and "faster than Go net/http" in md
    assert "- **HTTP/1.1**: ran out of client at n = 8 (HTTP/1.1 GET /ping, 100 conns); the load tools' ceiling: " in md
    top = eight.frame[eight.frame["client_bound"]].sort_values("rps").iloc[-1]
    assert f"ceiling: ≥ {S.figure(eight.ctx.stats, (PART, 'get_ping_c100', top['server']), 'req_per_s')} ⚑" in md


def test_figures_and_cost_table(eight):
    fig = P.throughput_plot(eight.frame, 0.95)
    assert fig is not None and "n = 1, 2, 4, 8" in fig.httplab_description and "n = 5 ok runs per point" in fig.httplab_description
    eff = P.efficiency_plot(eight.frame, 0.95)
    assert eff is not None and "dashed line at 1.0" in eff.httplab_description and S.efficiency_note(eight.frame) == ""
    t = S.cost_table(eight.ctx)
    assert len(t) == 2 * 4 * 2 and list(t.columns)[:3] == ["Point", "Server", "Cores"]
    bound = t[(t["Cores"] == 8) & t["Point"].str.contains("/ping")]
    assert bound["req/s"].str.endswith("⚑").all() and bound["Pinned CPUs busy (of n)"].str.startswith("6.00").all()
    assert t["CPU-µs/req"].str.contains("(n=5)", regex=False).all()


def test_one_core_only_says_so(one):
    md = S.findings_markdown(one.ctx)
    assert md.startswith("**This machine allowed n = 1 only.** The run's host had 2 cores;")
    assert "need a run on a machine with more cores" in md and "efficiency" not in md.split("**HTTP/1.1")[1]
    assert "at 1 core, C (evloop), +" in md   # five reps: an interval and a verdict at n = 1
    assert P.efficiency_plot(one.frame, 0.95) is None and "n = 1 only" in S.efficiency_note(one.frame)
    assert P.throughput_plot(one.frame, 0.95) is not None
    # the plan's sentence, carried by the build step into run.json's facts
    facts = {"parts": {PART: {"scaling_plan": "2 CPUs: cores measured: 1"}}}
    assert "The plan: “2 CPUs: cores measured: 1”." in S.one_core_markdown(one.ctx.runs, one.ctx.run.meta, facts)
    assert S.plan_sentences(one.ctx.run.facts) == ["a fake plan"]   # the build step carries it from scenario.json


def test_method_notes_name_each_servers_how(eight):
    md = S.method_markdown(eight.ctx.runs, eight.ctx.run.facts)
    assert md.startswith("## Method notes") and "This run measured n = 1, 2, 4, 8." in md
    assert "GOMAXPROCS=n" in md and "--workers n" in md and '`uses = "threads"`' in md


def test_the_notebook_is_thin():
    import nbformat
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and 'suite = "scaling"' in tagged[0].source and "run_dir = None" in tagged[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert all(len(c.source.splitlines()) <= 8 for c in code if c not in tagged)


@needs_kernel
@pytest.mark.parametrize("which", ["eight", "one"])
def test_notebook_executes_on_the_fake_run(which, request, tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    b = request.getfixturevalue(which)
    monkeypatch.chdir(ROOT / "suites" / "scaling")
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(NOTEBOOK), str(out), kernel_name="httplab", progress_bar=False,
                               parameters={"run_dir": str(b.run), "out_dir": str(b.data)})
    text = json.dumps(json.loads(out.read_text()), ensure_ascii=False)
    for title in ("Findings", "Throughput against cores", "Scaling efficiency", "Cost per request and busy cores",
                  "Measurement quality", "Method notes", "Run and machine", "Verify gate"):
        assert f'id=\\"{title.lower().split(":")[0].replace(" ", "-")}' in text, title
    assert text.count("image/png") >= (2 if which == "eight" else 1)
    assert ("ran out of client at n = 8" in text) == (which == "eight")
    assert ("allowed n = 1 only" in text) == (which == "one")
