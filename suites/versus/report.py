"""Tables, figure and notebook glue of the versus report (suites/versus/report.ipynb): the
contestant (the run's server of tier contestant in its manifest) against the reference servers
(tier reference) on cleartext HTTP/2, HTTPS/2 and HTTPS/1.1 (the versus suite's two parts), as
ratios contestant / reference of server CPU-µs per request and of req/s, each with its interval,
beside the suite's targets. The targets are data, declared in the suite's folder (targets.toml,
TARGETS_FILE) and read by load_targets; no server is named here.

Every ratio is a row of the run's comparisons frame (stats.frames: every server pair of a scenario,
paired by rep), read through RunStats.compare; nothing here computes an interval. A target is
decided from the interval, never from the point estimate: met when the whole interval lies on the
target's side of its bound, missed when the whole interval lies beyond it, not decided otherwise (the
interval holds the bound, or there is no interval: fewer than 5 runs a side). A req/s target cannot
be missed by a point whose req/s measured the load tool: client-bound points (tidy.bounds, the lab's
rule; the comparisons row's a_/b_client_bound) are said to be so.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from httplab.lab.suites import suite as lab_suite
from httplab.stats.frames import RunStats
from httplab.stats.methods import MIN_RUNS
from httplab.lab.servers import (colour, display_name, is_aa_copy, is_reference, short_name,
                             sort_servers)
from httplab.report.engine import ReportContext, open_group_report
from httplab.report.fmt import fmt_size
from httplab.report.plots import DPI, FONT_MIN_PT, WIDTH_IN, describe, legend_ncols, styled
from httplab.report.scenarios import scenario_sort_key
from httplab.report.tables import CLIENT_BOUND_MARK, _with_meta, client_bound_words
from httplab.report import targets as T
# the targets' engine (httplab.report.targets), re-exported: this suite's report is where a reader
# of its notebook looks for them
from httplab.report.targets import (METRIC_WORDS, MET, MISSED, NO_DATA, OPEN, RATIO_METRICS, Decision, Target,  # noqa: F401
                                    TargetsError, _runs_contestant, _short, _stats_contestant, decide, figure_cell,
                                    fmt_ratio, ratio_cell, ratio_ticks, read_toml, runs_cell, the_contestant)

VERSUS_SUITES: tuple[str, ...] = lab_suite("versus").parts
# The targets, declared beside the parts that measure their points.
TARGETS_FILE = lab_suite("versus").file("targets.toml")


def load_targets(path: str | Path | None = None, suites: tuple[str, ...] = VERSUS_SUITES,
                 tables: tuple[str, ...] = ("target",)) -> tuple[Target, ...]:
    """The versus suite's targets (path: default its targets.toml)."""
    return T.load_targets(path or TARGETS_FILE, suites, tables)
# ---------------------------------------------------------------- opening the run
def open_versus_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                       raw_root: str | Path = "raw", data_root: str | Path = "data",
                       confidence: float = 0.95, *, baseline: str) -> ReportContext:
    """open_report for the versus suites: the context's run holds both (those present)."""
    return open_group_report(VERSUS_SUITES, run_dir, out_dir, raw_root, data_root, confidence,
                             baseline=baseline)


def references(runs: pd.DataFrame) -> list[str]:
    """The reference servers present (tier reference in their manifests), display order."""
    present = set(runs["server"]) if not runs.empty else set()
    return [s for s in sort_servers(present) if is_reference(s) and not is_aa_copy(s)]


# ---------------------------------------------------------------- cells
def point_label(first: dict) -> str:
    """A point in a few words: 'h2c GET /ping', 'HTTPS/1.1 GET /echo 1 KiB' (all the versus points
    have 100 connections; HTTP/2 ones 10 streams each)."""
    proto = ("h2c" if not first.get("tls") else "HTTPS/2") if first.get("protocol") == "h2" else (
        "HTTPS/1.1" if first.get("tls") else "HTTP/1.1")
    size = f" {fmt_size(first['size_bytes'])}" if first.get("size_bytes") else ""
    return f"{proto} {first['method']} {first['route']}{size}"


def _points(runs: pd.DataFrame) -> list[dict]:
    """One record (the first run) per (suite, scenario), in suite then seed order."""
    firsts = runs.drop_duplicates(["suite", "scenario"]).to_dict("records")
    return sorted(firsts, key=lambda r: (VERSUS_SUITES.index(r["suite"]) if r["suite"] in VERSUS_SUITES else 9,
                                         scenario_sort_key(r)))


# ---------------------------------------------------------------- tables
def target_results(stats: RunStats, contestant: str | None = None,
                   targets: Iterable[Target] | None = None) -> list[tuple[Target, pd.Series | None, Decision]]:
    """Each target (default: the versus suite's) with its comparisons row and its decision."""
    return T.target_results(stats, contestant, load_targets() if targets is None else targets)


def targets_table(stats: RunStats, contestant: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """`Point | Target | Measured ratio | Runs | <contestant> | <reference> | Target met?`, one row
    per target of the suite (targets.toml). contestant: default the run's (the_contestant)."""
    title = "The suite's targets against this run"
    contestant = _stats_contestant(stats, contestant)
    if contestant is None:
        return _with_meta(pd.DataFrame(), title, "no data: no server of tier contestant")
    rows = []
    for t, row, d in target_results(stats, contestant):
        c_cell, r_cell = (t.suite, t.scenario, contestant), (t.suite, t.scenario, t.reference)
        rows.append({
            "Point": t.what + (f" ({t.caveat})" if t.caveat else ""),
            "Target": t.words(contestant),
            "Measured ratio": ratio_cell(row),
            "Runs": runs_cell(row),
            display_name(contestant): figure_cell(stats, c_cell, t.metric),
            "Reference": f"{display_name(t.reference)}: {figure_cell(stats, r_cell, t.metric)}",
            "Target met?": d.text(),
        })
    if all(r["Measured ratio"] == "no data" for r in rows):
        return _with_meta(pd.DataFrame(), title, "no data: this run has no versus suite")
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Point", "Target"]
    cap = (f"Ratio = {display_name(contestant)} / the reference, the ratio of geometric means with its "
           f"{confidence:.0%} t interval on the log scale, paired by rep where both servers ran in "
           f"≥ {MIN_RUNS} common reps (the comparisons row of the run's frames). A target is decided from the interval, not from the point estimate: met when the "
           "whole interval lies on the target's side of the bound, missed when the whole interval lies "
           f"beyond it, not decided when it holds the bound or when there is no interval (fewer than "
           f"{MIN_RUNS} ok runs of a server). Each server's figure is the geometric mean of its ok runs "
           f"with its interval (n = ok runs); 'noisy': the share of its runs during which other processes or "
           "CPU steal took more of a pinned core than httplab/tidy/bounds.py allows (kept, and they widen "
           f"the interval). {client_bound_words()}; a client-bound side can decide a req/s target only in "
           "the direction its bias allows.")
    return _with_meta(df, title, cap)


def ratio_table(ctx: ReportContext, contestant: str | None = None) -> pd.DataFrame:
    """`Protocol and point | <contestant>/<ref> CPU-µs/req | <contestant>/<ref> req/s | ...`, one row
    per point of the versus suites, one pair of columns per reference server. contestant: default
    the run's (the_contestant)."""
    runs = ctx.runs
    contestant = _runs_contestant(runs, contestant)
    refs = references(runs)
    title = (f"{display_name(contestant) if contestant else 'The contestant'} against "
             f"{', '.join(display_name(r) for r in refs) or 'the references'}")
    if runs.empty or contestant is None or contestant not in set(runs["server"]) or not refs:
        return _with_meta(pd.DataFrame(), title, "no data: no versus suite with the contestant and a reference")
    rows = []
    for first in _points(runs):
        row: dict[str, str] = {"Point": point_label(first)}
        for ref in refs:
            for m in RATIO_METRICS:
                r = ctx.stats.compare(m, (first["suite"], first["scenario"], contestant),
                                      (first["suite"], first["scenario"], ref))
                row[f"{short_name(contestant)}/{short_name(ref)} {METRIC_WORDS[m]}"] = ratio_cell(r)
            r = ctx.stats.compare("cpu_us_per_req", (first["suite"], first["scenario"], contestant),
                                  (first["suite"], first["scenario"], ref))
            row[f"runs vs {short_name(ref)}"] = runs_cell(r)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Point"]
    df.attrs["column_groups"] = [[c for c in df.columns if short_name(ref) in c and c != "Point"] for ref in refs]
    cap = (f"Ratio = {display_name(contestant)} / the reference server, the ratio of geometric means with "
           f"its {ctx.confidence:.0%} t interval on the log scale, paired by rep (every server ran in "
           "every rep, started fresh, in a random order); below 1 on CPU-µs/req the contestant is "
           f"cheaper, above 1 on req/s it is faster. No interval below {MIN_RUNS} runs. "
           f"{client_bound_words()}.")
    return _with_meta(df, title, cap)


def noise_floor_tables(ctx: ReportContext) -> list[pd.DataFrame]:
    """The A/A noise floor of each versus suite present (report.quality; empty tables without a copy)."""
    from httplab.report.quality import noise_floor, noise_floor_table
    out = []
    for suite in VERSUS_SUITES:
        runs = ctx.runs[ctx.runs["suite"] == suite] if not ctx.runs.empty else ctx.runs
        nf = noise_floor(runs, ctx.confidence, ctx.stats)
        df = noise_floor_table(nf, title=f"A/A noise floor, {suite}") if nf.present else pd.DataFrame()
        out.append(df)
    return out


def figures_table(ctx: ReportContext, suite: str) -> pd.DataFrame:
    """Each server's figures on one suite's points (tables.cost_table: req/s, capacity, CPU %, CPU-µs/req,
    peak RSS; client-bound points marked)."""
    from httplab.report.tables import cost_table
    runs = ctx.runs[ctx.runs["suite"] == suite] if not ctx.runs.empty else ctx.runs
    title = {"versus_h2c": "Every point: cleartext HTTP/2 (h2c)",
             "versus_tls": "Every point: HTTPS/1.1 and HTTPS/2"}.get(suite, suite)
    if runs.empty:
        return _with_meta(pd.DataFrame(), title, f"no data: this run has no {suite} suite")
    return cost_table(runs, title=title, **ctx.stat_args())


def findings_markdown(stats: RunStats, contestant: str | None = None) -> str:
    """One bullet per target: the point, the ratio with its interval, the target and the decision.
    contestant: default the run's (the_contestant)."""
    contestant = _stats_contestant(stats, contestant)
    lines = []
    for t, row, d in target_results(stats, contestant):
        lines.append(f"- **{t.what}**, {METRIC_WORDS[t.metric]} {_short(contestant)}/{short_name(t.reference)}: "
                     f"{ratio_cell(row)}; target {'≤' if t.at_most else '≥'} {t.bound:g}× — {d.text()}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the figure
@styled
def ratio_plot(ctx: ReportContext, contestant: str | None = None) -> Figure | None:
    """The ratios contestant / reference, one row per point and reference, one panel per metric:
    a dot with its interval as a whisker on a log axis, 1× as a line, the suite's targets as red
    ticks on their rows. None when the run has no ratio. contestant: default the run's
    (the_contestant)."""
    runs = ctx.runs
    contestant = _runs_contestant(runs, contestant)
    refs = references(runs)
    if runs.empty or not refs or contestant is None:
        return None
    points = [(f, ref) for f in _points(runs) for ref in refs]
    data = {m: [ctx.stats.compare(m, (f["suite"], f["scenario"], contestant), (f["suite"], f["scenario"], ref))
                for f, ref in points] for m in RATIO_METRICS}
    if all(r is None for rows in data.values() for r in rows):
        return None
    targets = {(t.suite, t.scenario, t.metric, t.reference): t for t in load_targets()}
    fig, axes = plt.subplots(1, len(RATIO_METRICS), figsize=(WIDTH_IN, 1.9 + 0.34 * len(points)), dpi=DPI,
                             sharey=True, layout="constrained", squeeze=False)
    for ax, m in zip(axes[0], RATIO_METRICS):
        vals = [1.0]
        for y, ((f, ref), row) in enumerate(zip(points, data[m])):
            t = targets.get((f["suite"], f["scenario"], m, ref))
            if t is not None:
                ax.plot([t.bound], [y], marker="|", ms=16, mew=2.2, color="#d62728", ls="none", zorder=4)
                vals.append(t.bound)
            if row is None or not math.isfinite(row["ratio"]):
                continue
            c = colour(ref)
            if math.isfinite(row["lo"]) and math.isfinite(row["hi"]):
                ax.plot([row["lo"], row["hi"]], [y, y], color=c, lw=1.8, zorder=2)
                vals += [row["lo"], row["hi"]]
            cb = bool(row["a_client_bound"]) or bool(row["b_client_bound"])
            ax.plot([row["ratio"]], [y], marker="o", ms=6, mfc="white" if cb else c, mec=c, mew=1.5,
                    ls="none", zorder=3)
            vals.append(row["ratio"])
        good = [v for v in vals if math.isfinite(v) and v > 0]
        lo, hi = min(good), max(good)
        span = max(math.log(hi), -math.log(lo), math.log(1.1)) * 1.15
        ax.set_xscale("log")
        ax.set_xlim(math.exp(-span), math.exp(span))
        ax.axvline(1.0, color="black", lw=0.8, zorder=1)
        ax.xaxis.set_major_locator(ticker.FixedLocator(ratio_ticks(math.exp(-span), math.exp(span))))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _pos: f"{x:g}×"))
        me = short_name(contestant)
        better = f"left = {me} cheaper" if m == "cpu_us_per_req" else f"right = {me} faster"
        ax.set_title(f"{METRIC_WORDS[m]}: {me} / reference\n({better})", fontsize=FONT_MIN_PT)
        ax.grid(axis="x", color="#eeeeee", lw=0.6)
    ax0 = axes[0][0]
    ax0.set_yticks(range(len(points)))
    ax0.set_yticklabels([f"{point_label(f)} · {short_name(ref)}" for f, ref in points])
    ax0.set_ylim(len(points) - 0.5, -0.5)
    handles = [Line2D([], [], color=colour(r), marker="o", lw=1.8, label=f"against {display_name(r)}") for r in refs]
    handles += [Line2D([], [], color="#d62728", marker="|", ms=14, mew=2.2, ls="none", label="the suite's target"),
                Line2D([], [], color="grey", marker="o", mfc="white", ls="none", label=f"a side client-bound {CLIENT_BOUND_MARK}")]
    fig.legend(handles=handles, loc="outside lower center", frameon=False,
               ncols=legend_ncols([str(h.get_label()) for h in handles]), fontsize=FONT_MIN_PT)
    fig.suptitle(f"{display_name(contestant)} against the reference servers (ratio, {ctx.confidence:.0%} CI, log scale)")
    return describe(fig, (
        f"Forest plot: for each of {len(points)} points (protocol, request and reference server) the ratio "
        f"{display_name(contestant)} / reference of CPU-µs per request (left panel) and of req/s (right "
        f"panel), as a dot with its {ctx.confidence:.0%} interval as a whisker on a log axis, with a line at "
        "1× and the suite's targets as red ticks on their rows; hollow dots mark points where a side was "
        "client-bound."))
