"""One protocol of a suite shown on its own (the https suite's HTTPS/2 half in the HTTP/2
write-up): the suite's report context restricted to that protocol's runs, then the suite's own
declared tables for them (engine.sections: only the sections with rows are shown), its latency,
cost, reference-server and failed-run tables, all from data/<run_id>/ as the suite's report reads
it. Every Δ stays a row of the run's statistics frames: restricting the runs picks rows, it
computes nothing."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from . import engine as R
from .engine import ReportContext


def restrict(ctx: ReportContext, protocol: str) -> ReportContext:
    """ctx with only the runs (and their latency histograms) of `protocol` (the runs frame's
    protocol column: h1, h2, h2c, h3)."""
    run = ctx.run
    runs = run.runs[run.runs["protocol"] == protocol].reset_index(drop=True) if "protocol" in run.runs else run.runs
    keys = ["suite", "server", "scenario", "rep"]
    latency = run.latency
    if not latency.empty and not runs.empty:
        latency = latency.merge(runs[keys].drop_duplicates(), on=keys, how="inner")
    elif runs.empty:
        latency = latency.iloc[0:0]
    return replace(ctx, run=replace(run, runs=runs, latency=latency), toc=[])


def open_protocol_report(suite: str, protocol: str, run_dir: str | Path, out_dir: str | Path,
                         confidence: float = 0.95, baseline: str | None = None) -> ReportContext:
    """The suite's report context (engine.open_suite_report, data/<run_id>/ only) restricted to
    one protocol."""
    ctx = R.open_suite_report(suite, run_dir=run_dir, out_dir=out_dir, confidence=confidence, baseline=baseline)
    return restrict(ctx, protocol)


TABLE_PROSE = ("req/s cells are the geometric mean over ok runs ± the half-width of its confidence "
               "interval, with n; Δ is against the baseline ({baseline}), paired by rep.")


def show_sections(ctx: ReportContext) -> list[str]:
    """Each declared section of the suite that has rows for these runs, with its throughput
    figure; the titles shown."""
    shown_titles = []
    for key, title, note in R.declared_section_keys(ctx):
        prose = TABLE_PROSE.format(baseline=ctx.baseline or "none") + (" " + note if note else "")
        if R.section(ctx, title, prose, R.section_table(ctx, key)):
            shown_titles.append(title)
            R.show_figure(R.section_plot(ctx, key), title + ": throughput")
    return shown_titles


def show_latency_and_cost(ctx: ReportContext, label: str) -> None:
    """The latency percentiles (with their curves), the server cost, the C server against the
    reference servers and the failed runs, of these runs only; each title starts with `label`
    (e.g. 'HTTPS/2'), so that its anchor differs from the same section of a report shown beside it."""
    from . import plots, tables
    if R.section(ctx, f"{label} latency percentiles", "P50, P99 and P99.9 from each run's full latency histogram, "
                 "averaged over runs; P99/P50 per run, then averaged with a CI.", R.latency_table(ctx)):
        R.show_figure(plots.latency_curves(ctx.latency, ctx.runs), "latency percentile curves")
    R.section(ctx, f"{label} server cost: CPU and memory beside req/s", "Server CPU time per request (from /proc "
              "over the measured window) still tells servers apart when the load generator is the limit.",
              tables.cost_table(ctx.runs, baseline=ctx.baseline, **ctx.stat_args()))
    R.section(ctx, f"{label}: C against the reference servers", "The event loop against the reference servers on "
              "req/s and on CPU time per request, with intervals.", tables.versus_table(ctx.runs, **ctx.stat_args()))
    R.section(ctx, f"{label} failed runs", "Failed runs are listed here and left out of every number above.",
              tables.failed_runs_table(ctx.runs))

