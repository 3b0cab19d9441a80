"""Tables and notebook glue specific to the h2c suite (notebooks/http2.ipynb): HTTP/2 vs HTTP/1.1
on the same run, the cost of h2load's --log-file, and the seed-001 summary block. The seed tables
themselves come from the generic builders (report.section_table, tables.latency_table, ...).
"""
from __future__ import annotations

from httplab.report.method_words import drift_note

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from httplab.stats.select import column, ok_runs, select
from httplab.report.fmt import fmt_mean_ci
from httplab.report.engine import ReportContext, compared_servers, open_report, sections
from httplab.report.scenarios import Section, common_connections, scenario_label, scenario_sort_key
from httplab.lab.servers import display_name, short_name, sort_servers
from httplab.report.method_words import between_suites_words, ci_words
from httplab.stats import MIN_RUNS, RatioCI, format_delta, mean_ci
from httplab.stats.frames import RunStats, cell_of
from httplab.stats.write import run_stats
from httplab.report.cells import delta, mean_ci_of
from httplab.report.summary import summary_block
from httplab.report.tables import _with_meta, req_cell  # same table conventions (attrs title/caption)

SUITE = "h2c"
H1_SUITE = "http1"
H1_SCENARIO = "get_ping_c100"
WITH_LOG = "req_per_s_with_log"


def open_h2_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                   raw_root: str | Path = "raw", data_root: str | Path = "data", confidence: float = 0.95, *,
                   baseline: str) -> ReportContext:
    """open_report for the h2c suite; tidy frames go to out_dir as h2c_runs.* and h2c_latency.*
    (so they do not overwrite the http1 notebook's runs.* / latency.* of the same run). baseline:
    the server the Δ columns compare with (the notebook's parameter)."""
    return open_report(SUITE, run_dir=run_dir, out_dir=out_dir, raw_root=raw_root, data_root=data_root,
                       confidence=confidence, baseline=baseline)


# ---------------------------------------------------------------- HTTP/2 vs HTTP/1.1
def h1_ping_runs(h1_runs: pd.DataFrame, scenario: str = H1_SCENARIO) -> pd.DataFrame:
    """The http1 suite's GET /ping at 100 connections: the scenario named `scenario`, or, when no
    scenario has that name, the non-pipelined GET /ping runs at 100 connections."""
    if h1_runs.empty:
        return h1_runs
    by_name = h1_runs[h1_runs["scenario"] == scenario]
    if not by_name.empty:
        return by_name
    return select(h1_runs, {"method": "GET", "route": "/ping", "connections": 100,
                            "pipeline": lambda s: s <= 1})


def h2_vs_h1_table(h2_runs: pd.DataFrame, h1_runs: pd.DataFrame | None, connections: int = 100,
                   servers: Sequence[str] | None = None, confidence: float = 0.95, title: str = "HTTP/2 vs HTTP/1.1",
                   stats: RunStats | None = None) -> pd.DataFrame:
    """`Server | HTTP/1.1 req/s | HTTP/2 req/s | Δ HTTP/2 vs HTTP/1.1`: h2c GET /ping at
    `connections` against the same run's http1 `get_ping_c100`, ok runs only; Δ = ratio of means
    − 1 with its interval on the log scale, the comparisons row's (rep k of one suite against rep k
    of the other: the two suites ran one after the other, a between-suite comparison).
    An empty table whose caption says why when the run has no http1 suite or no overlap."""
    h2 = select(h2_runs, {"method": "GET", "route": "/ping", "connections": connections})
    if h1_runs is None or h1_runs.empty:
        return _with_meta(pd.DataFrame(), title,
                          "this run has no http1 suite, so there is no HTTP/1.1 number to compare with "
                          "(the comparison needs both suites in the same run, on the same machine)")
    h1 = h1_ping_runs(h1_runs)
    if h2.empty or h1.empty:
        missing = "h2c GET /ping" if h2.empty else f"http1 {H1_SCENARIO}"
        return _with_meta(pd.DataFrame(), title, f"no data: this run has no {missing} at {connections} connections")
    present = sort_servers(set(h2["server"]) & set(h1["server"]))
    chosen = [s for s in (servers or present) if s in present]
    if not chosen:
        return _with_meta(pd.DataFrame(), title, "no data: no server has both an http1 and an h2c GET /ping run")
    rows = []
    for s in chosen:
        a, b = ok_runs(h2[h2["server"] == s]), ok_runs(h1[h1["server"] == s])
        r = delta(stats, "req_per_s", a, b, confidence)
        rows.append({
            "Server": display_name(s),
            "HTTP/1.1 req/s": req_cell(b, confidence),
            "HTTP/2 req/s": req_cell(a, confidence),
            "Δ HTTP/2 vs HTTP/1.1": format_delta(r),
        })
    streams = sorted(int(x) for x in h2["streams"].unique())
    cap = (f"GET /ping, {connections} connections; HTTP/2 = h2c suite (h2load, "
           f"{'/'.join(map(str, streams))} streams per connection), HTTP/1.1 = http1 suite scenario "
           f"{H1_SCENARIO} (wrk, one request in flight per connection) of the same run. req/s: "
           f"{ci_words(confidence)}; "
           f"{between_suites_words(confidence, stats or run_stats(pd.concat([h2_runs, h1_runs]), confidence), ('h2c', 'http1'))}. "
           "Both figures of a row are "
           "from the throughput runs (h2load's run without --log-file; wrk's only run). The two suites "
           "also use different load generators, so the ratio mixes protocol and tool.")
    return _with_meta(pd.DataFrame(rows), title, cap)


# ---------------------------------------------------------------- the cost of h2load's log
def log_cost_ci(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> RatioCI:
    """req/s with log / req/s without − 1 of one point (its runs): the estimates row of metric
    log_cost (per run, with/without: the two runs of a rep hit the same server process back to
    back, so this is a paired ratio) as a Δ."""
    cell = cell_of(runs)
    if cell is None:
        return RatioCI(None, None, None, 0, 0, confidence, "no data")
    row = (stats or run_stats(runs, confidence)).estimate(cell, "log_cost")
    e = mean_ci_of(row)
    if e.mean is None:
        return RatioCI(None, None, None, e.n, e.n, confidence, e.reason or "no data")
    return RatioCI(e.mean - 1.0, None if e.low is None else e.low - 1.0, None if e.high is None else e.high - 1.0,
                   e.n, e.n, confidence, e.reason, e.method, paired=True, n_pairs=e.n)


def log_cost_table(runs: pd.DataFrame, servers: Sequence[str] | None = None, confidence: float = 0.95,
                   title: str = "Cost of h2load's --log-file", stats: RunStats | None = None) -> pd.DataFrame:
    """Per scenario and server: req/s without the log (throughput run), with it (latency run), and
    the relative cost with_log / without − 1 (paired per rep; mean and t CI)."""
    if runs.empty or WITH_LOG not in runs or runs[WITH_LOG].isna().all():
        return _with_meta(pd.DataFrame(), title, "no data: no latency run (with --log-file) in this run")
    present = sort_servers(set(runs["server"]))
    chosen = [s for s in (servers or present) if s in present]
    rows = []
    firsts = sorted(runs.drop_duplicates("scenario").to_dict("records"), key=scenario_sort_key)
    for first in firsts:
        for s in chosen:
            grp = runs[(runs["scenario"] == first["scenario"]) & (runs["server"] == s)]
            if grp.empty:
                continue
            ok = ok_runs(grp)
            rows.append({
                "Scenario": scenario_label(first), "Server": display_name(s), "n": len(ok),
                "req/s without log": req_cell(ok, confidence, show_n=False),
                "req/s with log": fmt_mean_ci(mean_ci(column(ok, WITH_LOG), confidence), show_n=False),
                "Log cost": format_delta(log_cost_ci(grp, confidence, stats)),
            })
    cap = ("Each rep runs h2load twice with the same parameters: once without --log-file (the "
           "throughput run: req/s, Transfer/s, errors and server CPU come from it) and once with it "
           "(the latency run: every latency percentile comes from its per-request log). Log cost = "
           "req/s with log / req/s without − 1, paired by rep (the two runs of a rep hit the same server "
           f"process back to back): the geometric mean of the per-rep ratios with its {confidence:.0%} t "
           f"interval on the log scale over the n ok reps (none below {MIN_RUNS}); "
           "'no clear difference' when the CI holds 0.")
    return _with_meta(pd.DataFrame(rows), title, cap)


def log_cost_sentence(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> str:
    """One sentence with the range of the log's cost over the points that have a CI."""
    base = ("Throughput numbers (req/s, Transfer/s, CPU per request) come from the runs without "
            "h2load's log; latency percentiles come from the runs with it.")
    if runs.empty or WITH_LOG not in runs or runs[WITH_LOG].isna().all():
        return base + " This run has no latency run, so the log's cost is unknown."
    ests = []
    for (_, _), grp in runs.groupby(["scenario", "server"]):
        r = log_cost_ci(grp, confidence, stats)
        if r.estimate is not None:
            ests.append(r)
    if not ests:
        return base + " No ok run pairs to measure the log's cost."
    lo = min(e.estimate for e in ests)
    hi = max(e.estimate for e in ests)
    n_clear = sum(e.clear for e in ests)
    return (base + f" Writing the log changed h2load's req/s by {_pct(lo)} to {_pct(hi)} across "
            f"{len(ests)} server × scenario points ({n_clear} with a {confidence:.0%} CI that excludes 0): "
            "the latency runs put a somewhat different load on the server than the throughput runs.")


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%".replace("-", "\u2212")


# ---------------------------------------------------------------- notebook shortcuts
def h1_runs_of(ctx: ReportContext) -> pd.DataFrame | None:
    """The http1 suite's runs of the same raw run, or None when the run has no http1 suite."""
    if ctx.full is None or ctx.full.runs.empty:
        return None
    h1 = ctx.full.runs[ctx.full.runs["suite"] == H1_SUITE]
    return None if h1.empty else h1


def protocol_table(ctx: ReportContext) -> pd.DataFrame:
    return h2_vs_h1_table(ctx.runs, h1_runs_of(ctx), **ctx.stat_args())


def log_table(ctx: ReportContext) -> pd.DataFrame:
    return log_cost_table(ctx.runs, **ctx.stat_args())


def summary_text(ctx: ReportContext) -> str:
    """Seed 001's summary block (per-table Δ ranges with CIs, peaks) plus HTTP/2 vs HTTP/1.1 per
    server and the log's cost."""
    servers = compared_servers(ctx)
    text = summary_block(ctx.runs, list(sections(ctx).values()), servers=servers, baseline=ctx.baseline,
                         run_id=ctx.run.run_id, suite=ctx.suite, **ctx.stat_args())
    lines = [text]
    h1 = h1_runs_of(ctx)
    if h1 is None:
        lines.append("HTTP/2 vs HTTP/1.1: no http1 suite in this run")
    else:
        h2 = select(ctx.runs, {"method": "GET", "route": "/ping", "connections": 100})
        h1p = h1_ping_runs(h1)
        parts = []
        for s in servers:
            a = ok_runs(h2[h2["server"] == s]) if not h2.empty else h2
            b = ok_runs(h1p[h1p["server"] == s]) if not h1p.empty else h1p
            parts.append(f"{short_name(s)} {format_delta(delta(ctx.stats, 'req_per_s', a, b, ctx.confidence))}")
        lines.append("HTTP/2 vs HTTP/1.1 (GET /ping, 100 conns): " + "; ".join(parts) + " "
                     + drift_note(ctx.stats, (ctx.suite, "http1")))
    ests = [log_cost_ci(g, ctx.confidence, ctx.stats) for _, g in ctx.runs.groupby(["scenario", "server"])] \
        if not ctx.runs.empty and WITH_LOG in ctx.runs else []
    ests = [e for e in ests if e.estimate is not None]
    if ests:
        lo, hi = min(e.estimate for e in ests), max(e.estimate for e in ests)
        lines.append(f"h2load --log-file cost: {_pct(lo)} ~ {_pct(hi)} req/s (per point; latency "
                     "from the runs with the log, throughput from the runs without)")
    else:
        lines.append("h2load --log-file cost: no data")
    return "\n".join(lines)


# ---------------------------------------------------------------- the tables' layout
def table_layout(runs: pd.DataFrame) -> list[Section]:
    """Seed 001's tables (h2load, -m streams per connection): GET /ping by connections; GET /echo
    by size and POST /echo by body size (with Transfer/s) at 100 connections (else the most common
    value in the data). Same Section shape as http1_sections, so tables/plots/summary serve both."""
    get_echo = select(runs, {"method": "GET", "route": "/echo"})
    post_echo = select(runs, {"method": "POST", "route": "/echo"})
    c_get, c_post = common_connections(get_echo), common_connections(post_echo)
    streams = sorted(int(s) for s in runs["streams"].unique()) if not runs.empty else []
    s_txt = "/".join(str(s) for s in streams) or "N"
    note = (f"h2load -m {s_txt}: up to {s_txt} concurrent streams per connection; latency is per "
            "stream (request), from the latency run's log.")
    return [
        Section("ping", "GET /ping — minimal response", {"method": "GET", "route": "/ping"},
                "connections", "Connections", note=note),
        Section("echo_get", f"GET /echo — response size ({c_get or 100} connections)",
                {"method": "GET", "route": "/echo", "connections": c_get},
                "size_bytes", "Response size", note=note, fixed={"connections": c_get}),
        Section("echo_post", f"POST /echo — request body ({c_post or 100} connections)",
                {"method": "POST", "route": "/echo", "connections": c_post},
                "size_bytes", "Body size", transfer=True, note=note, fixed={"connections": c_post}),
    ]
