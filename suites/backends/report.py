"""Tables, figure and notebook glue of the backends report (suites/backends/report.ipynb): epoll
against io_uring, measured by the backends suite on HTTP/1.1 GET /ping at several connection counts
and pipelined. What the report divides by what is data, declared in the suite's folder
(targets.toml): its targets ([[target]],
read and decided as the versus report's, report.versus) and the ratios shown on every point
([[ratio]], read here). No server is named in this module.

Every ratio is a row of the run's comparisons frame (stats.frames: every server pair of a point,
paired by rep), read through RunStats.compare; nothing here computes an interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from httplab.lab.suites import suite as lab_suite
from httplab.stats.frames import RunStats
from httplab.lab.servers import display_name, short_name
from httplab.report import targets as T
from httplab.report.engine import ReportContext, open_group_report
from httplab.report.plots import DPI, FONT_MIN_PT, WIDTH_IN, cpu_bars, describe, legend_ncols, styled
from httplab.report.scenarios import scenario_sort_key
from httplab.report.tables import CLIENT_BOUND_MARK, _with_meta, client_bound_words

SUITES: tuple[str, ...] = lab_suite("backends").parts
# One colour per ratio in the forest plot (Okabe-Ito, readable by colour-blind readers): a ratio
# is a pair of servers, so no server's own colour can stand for it.
RATIO_COLOURS: tuple[str, ...] = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9")
TARGETS_FILE = lab_suite("backends").file("targets.toml")
TABLES = ("target", "ratio")


@dataclass(frozen=True)
class Ratio:
    """A ratio a / b the report gives on every point (servers' ids), and the question it answers."""
    a: str
    b: str
    what: str


@lru_cache(maxsize=4)
def _load_ratios(path: Path) -> tuple[Ratio, ...]:
    out = []
    for i, entry in enumerate(T.read_toml(path, TABLES).get("ratio", []), 1):
        where = f"{path}: [[ratio]] {i}"
        if not isinstance(entry, dict) or set(entry) != {"a", "b", "what"}:
            raise T.TargetsError(f"{where}: needs exactly the keys a, b and what")
        if not all(isinstance(entry[k], str) and entry[k] for k in ("a", "b", "what")):
            raise T.TargetsError(f"{where}: a, b and what must be non-empty strings")
        out.append(Ratio(entry["a"], entry["b"], entry["what"]))
    return tuple(out)


def load_ratios(path: str | Path | None = None) -> tuple[Ratio, ...]:
    """The [[ratio]] tables of the targets file (default TARGETS_FILE), in its order."""
    return _load_ratios(Path(path or TARGETS_FILE).resolve())


def load_targets(path: str | Path | None = None) -> tuple[T.Target, ...]:
    """The backends suite's targets (the [[target]] tables of its targets.toml)."""
    return T.load_targets(path or TARGETS_FILE, SUITES, TABLES)


def open_backends_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                         raw_root: str | Path = "raw", data_root: str | Path = "data",
                         confidence: float = 0.95, *, baseline: str) -> ReportContext:
    """open_report for the backends suite."""
    return open_group_report(SUITES, run_dir, out_dir, raw_root, data_root, confidence,
                             baseline=baseline)


# ---------------------------------------------------------------- points
def point_label(first: dict) -> str:
    """'GET /ping, 100 conns' or 'GET /ping ×16 pipelined, 100 conns'."""
    depth = int(first.get("pipeline") or 1)
    pipe = f" ×{depth} pipelined" if depth > 1 else ""
    return f"{first['method']} {first['route']}{pipe}, {int(first['connections'])} conns"


def points(runs: pd.DataFrame) -> list[dict]:
    """One record (the first run) per scenario of the suite, in the suite's order."""
    if runs.empty:
        return []
    firsts = runs.drop_duplicates(["suite", "scenario"]).to_dict("records")
    return sorted(firsts, key=scenario_sort_key)


# ---------------------------------------------------------------- tables
def findings_markdown(stats: RunStats, targets: tuple[T.Target, ...] | None = None) -> str:
    """One bullet per target: the point, the ratio with its interval, the target, the decision."""
    lines = []
    for t, row, d in T.target_results(stats, targets=load_targets() if targets is None else targets):
        lines.append(f"- **{t.what}**, {T.METRIC_WORDS[t.metric]} {short_name(t.contestant)}/"
                     f"{short_name(t.reference)}: {T.ratio_cell(row)}; target {'≤' if t.at_most else '≥'} "
                     f"{t.bound:g}× — {d.text()}{noise_note(row)}")
    return "\n".join(lines)


def noise_note(row: pd.Series | None) -> str:
    """' (within the suite's A/A noise floor of ±24 %: not a finding by the lab's rule)' when the
    ratio differs from 1 by less than the run's A/A noise floor on that metric; '' otherwise."""
    if row is None or not math.isfinite(row["ratio"]) or not math.isfinite(row["noise_floor"]):
        return ""
    if abs(row["ratio"] - 1.0) >= row["noise_floor"]:
        return ""
    return (f" (the ratio is within this run's A/A noise floor of ±{row['noise_floor']:.0%} on this metric: "
            "not a difference this run can call a finding)")


def targets_table(stats: RunStats, confidence: float = 0.95,
                  targets: tuple[T.Target, ...] | None = None) -> pd.DataFrame:
    """`Point | Target | Measured ratio | Runs | Server | Reference | Target met?`, one row per target."""
    title = "The suite's targets against this run"
    rows = []
    for t, row, d in T.target_results(stats, targets=load_targets() if targets is None else targets):
        rows.append({
            "Point": t.what,
            "Target": t.words(),
            "Measured ratio": T.ratio_cell(row),
            "Runs": T.runs_cell(row),
            "Server": f"{display_name(t.contestant)}: "
                      f"{T.figure_cell(stats, (t.suite, t.scenario, t.contestant), t.metric)}",
            "Reference": f"{display_name(t.reference)}: "
                         f"{T.figure_cell(stats, (t.suite, t.scenario, t.reference), t.metric)}",
            "Target met?": d.text(),
        })
    if not rows or all(r["Measured ratio"] == "no data" for r in rows):
        return _with_meta(pd.DataFrame(), title, "no data: this run has no backends suite")
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Point", "Target"]
    return _with_meta(df, title, (
        f"Ratio = server / reference, the ratio of geometric means with its {confidence:.0%} t interval "
        f"on the log scale, paired by rep where both ran in ≥ {T.MIN_RUNS} common reps. A target is met "
        "when the whole interval lies on its side of the bound, missed when the whole interval lies beyond "
        "it, not decided otherwise. Each server's figure is the geometric mean of its ok runs with its "
        "interval (n = ok runs)."))


def gain_table(ctx: ReportContext, metric: str = "cpu_us_per_req",
               ratios: tuple[Ratio, ...] | None = None) -> pd.DataFrame:
    """`Point | <ratio 1> | <ratio 2> | ...`: each declared ratio a / b of `metric` with its
    interval on every point of the suite, so a column reads how it moves with the connections and
    with pipelining."""
    words = T.METRIC_WORDS[metric]
    title = f"{words}: each ratio on every point"
    runs = ctx.runs
    present = set(runs["server"]) if not runs.empty else set()
    chosen = [r for r in (load_ratios() if ratios is None else ratios) if r.a in present and r.b in present]
    if runs.empty or not chosen:
        return _with_meta(pd.DataFrame(), title, "no data: the run has none of the declared pairs")
    rows = []
    for first in points(runs):
        row = {"Point": point_label(first)}
        for r in chosen:
            c = ctx.stats.compare(metric, (first["suite"], first["scenario"], r.a),
                                  (first["suite"], first["scenario"], r.b))
            row[f"{r.what} ({short_name(r.a)}/{short_name(r.b)})"] = T.ratio_cell(c)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Point"]
    better = "below 1: the first is cheaper" if metric == "cpu_us_per_req" else "above 1: the first is faster"
    return _with_meta(df, title, (
        f"Each cell: the ratio of geometric means of {words} with its {ctx.confidence:.0%} t interval on "
        f"the log scale, paired by rep ({better}); 'no data' where a server does not serve the point "
        f"(its manifest lists no such route). {client_bound_words()}."))


# ---------------------------------------------------------------- figures
def cpu_by_connections(ctx: ReportContext) -> Figure | None:
    """Server CPU-µs per request of every server at each connection count (the unpipelined /ping
    points), bars with intervals."""
    return cpu_bars(ctx.runs, {"pipeline": lambda d: d.fillna(1) <= 1}, "connections",
                    confidence=ctx.confidence, title="GET /ping: server CPU per request by connections",
                    vary_label="connections")


@styled
def ratio_plot(ctx: ReportContext, ratios: tuple[Ratio, ...] | None = None, most: int = 3) -> Figure | None:
    """The first `most` declared ratios of CPU-µs/req on every point: a dot with its interval on a
    log axis, 1× as a line, the targets as red ticks. None when the run has none of them."""
    runs = ctx.runs
    present = set(runs["server"]) if not runs.empty else set()
    chosen = [r for r in (load_ratios() if ratios is None else ratios) if r.a in present and r.b in present][:most]
    pts = points(runs)
    if not chosen or not pts:
        return None
    metric = "cpu_us_per_req"
    targets = {(t.scenario, t.contestant, t.reference): t for t in load_targets() if t.metric == metric}
    rows = [(f, r) for r in chosen for f in pts]
    hue = {r: RATIO_COLOURS[i % len(RATIO_COLOURS)] for i, r in enumerate(chosen)}
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 1.6 + 0.32 * len(rows)), dpi=DPI, layout="constrained")
    vals = [1.0]
    for y, (f, r) in enumerate(rows):
        t = targets.get((f["scenario"], r.a, r.b))
        if t is not None:
            ax.plot([t.bound], [y], marker="|", ms=16, mew=2.2, color="#d62728", ls="none", zorder=4)
            vals.append(t.bound)
        row = ctx.stats.compare(metric, (f["suite"], f["scenario"], r.a), (f["suite"], f["scenario"], r.b))
        if row is None or not math.isfinite(row["ratio"]):
            continue
        c = hue[r]
        if math.isfinite(row["lo"]) and math.isfinite(row["hi"]):
            ax.plot([row["lo"], row["hi"]], [y, y], color=c, lw=1.8, zorder=2)
            vals += [row["lo"], row["hi"]]
        cb = bool(row["a_client_bound"]) or bool(row["b_client_bound"])
        ax.plot([row["ratio"]], [y], marker="o", ms=6, mfc="white" if cb else c, mec=c, mew=1.5, ls="none", zorder=3)
        vals.append(row["ratio"])
    good = [v for v in vals if math.isfinite(v) and v > 0]
    span = max(math.log(max(good)), -math.log(min(good)), math.log(1.1)) * 1.15
    ax.set_xscale("log")
    ax.set_xlim(math.exp(-span), math.exp(span))
    ax.axvline(1.0, color="black", lw=0.8, zorder=1)
    ax.xaxis.set_major_locator(ticker.FixedLocator(T.ratio_ticks(math.exp(-span), math.exp(span))))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _pos: f"{x:g}×"))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{point_label(f)} · {short_name(r.a)}/{short_name(r.b)}" for f, r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", color="#eeeeee", lw=0.6)
    ax.set_xlabel("ratio of server CPU-µs per request (left of 1×: the first is cheaper)")
    handles = [Line2D([], [], color=hue[r], marker="o", lw=1.8, label=r.what) for r in chosen]
    handles += [Line2D([], [], color="#d62728", marker="|", ms=14, mew=2.2, ls="none", label="the suite's target"),
                Line2D([], [], color="grey", marker="o", mfc="white", ls="none",
                       label=f"a side client-bound {CLIENT_BOUND_MARK}")]
    fig.legend(handles=handles, loc="outside lower center", frameon=False,
               ncols=legend_ncols([str(h.get_label()) for h in handles], 3), fontsize=FONT_MIN_PT)
    fig.suptitle(f"io_uring against epoll: CPU-µs per request (ratio, {ctx.confidence:.0%} CI, log scale)")
    return describe(fig, (
        f"Forest plot: {len(chosen)} ratios of server CPU-µs per request ({'; '.join(r.what for r in chosen)}) "
        f"on each of {len(pts)} points, as a dot with its {ctx.confidence:.0%} interval as a whisker on a log "
        "axis, with a line at 1× and the suite's targets as red ticks; hollow dots mark a client-bound side."))


def figures_table(ctx: ReportContext) -> pd.DataFrame:
    """Each server's figures on every point (tables.cost_table)."""
    from httplab.report.tables import cost_table
    if ctx.runs.empty:
        return _with_meta(pd.DataFrame(), "Every point", "no data: this run has no backends suite")
    return cost_table(ctx.runs, title="Every point, every server", **ctx.stat_args())
