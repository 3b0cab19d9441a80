"""The forest plot of a run-vs-run comparison: per suite, one row per point (scenario · server),
one panel per metric, B/A as a dot with its interval as a whisker on a log axis, the noise floor
as a grey band around 1. Same look as report.plots (width, fonts, one colour per server)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ..stats import MINUS
from ..stats import compare as C
from ..lab.servers import colour, display_name, short_name, sort_servers
from .compare_tables import BETTER_WORDS, METRIC_WORDS, points
from .plots import DPI, FONT_MIN_PT, WIDTH_IN, describe, legend_ncols, log_ticks, styled

ROW_IN = 0.26          # height per point
FLOOR_GREY = "#dddddd"
FINDING = {C.REGRESSION, C.IMPROVEMENT}
POSSIBLE = {C.POSSIBLE_REGRESSION, C.POSSIBLE_IMPROVEMENT}


def delta_tick(x: float, pos: object = None) -> str:
    """A ratio as the Δ it means: 0.8 → '−20%', 1 → '0', 1.25 → '+25%'."""
    if x <= 0:
        return ""
    d = (x - 1.0) * 100
    if abs(d) < 0.05:
        return "0"
    return f"{d:+.0f}%".replace("-", MINUS) if abs(d) >= 1 else f"{d:+.1f}%".replace("-", MINUS)


def _limits(sub: pd.DataFrame) -> tuple[float, float]:
    vals = pd.concat([sub["ratio"], sub["lo"], sub["hi"], 1 + sub["noise_floor"], 1 - sub["noise_floor"]])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.9, 1.1)
    span = max(math.log(hi), -math.log(lo), math.log(1.06)) * 1.12
    return math.exp(-span), math.exp(span)


def _panel(ax, sub: pd.DataFrame, rows: list[tuple[str, str]], metric: str) -> None:
    where = {p: i for i, p in enumerate(rows)}
    lim = _limits(sub)
    for _, r in sub.iterrows():
        y = where[(r["scenario"], r["server"])]
        f = r["noise_floor"]
        if math.isfinite(f):
            ax.add_patch(Rectangle((1 - f, y - 0.45), 2 * f, 0.9, color=FLOOR_GREY, lw=0, zorder=0))
        if not math.isfinite(r["ratio"]):
            continue
        c = colour(r["server"])
        if math.isfinite(r["lo"]) and math.isfinite(r["hi"]):
            ax.plot([r["lo"], r["hi"]], [y, y], color=c, lw=1.6, zorder=2)
        v = r["verdict"]
        face = c if v in FINDING else "white"
        ax.plot([r["ratio"]], [y], marker="D" if v in FINDING | POSSIBLE else "o", ms=7 if v in FINDING else 5,
                mfc=face, mec=c, mew=1.4, ls="none", zorder=3)
    ax.axvline(1.0, color="black", lw=0.8, zorder=1)
    ax.set_xscale("log")
    ax.set_xlim(*lim)
    ax.xaxis.set_major_locator(ticker.FixedLocator(_ticks(*lim)))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(delta_tick))
    ax.set_title(f"{METRIC_WORDS.get(metric, metric)}\n({BETTER_WORDS.get(metric, '')})", fontsize=FONT_MIN_PT)
    ax.grid(axis="x", color="#eeeeee", lw=0.6)


def _ticks(lo: float, hi: float) -> list[float]:
    """Δ ticks inside the limits, 0 always, the others at least a sixth of the axis apart (log)."""
    return log_ticks(lo, hi, [0.5, 0.67, 0.8, 0.9, 0.95, 0.98, 1.02, 1.05, 1.1, 1.25, 1.5, 2.0], 6)


@styled
def forest_plot(frame: pd.DataFrame, suite: str, runs: pd.DataFrame, confidence: float = 0.95) -> Figure | None:
    """B/A per point of one suite, one panel per compared metric; None when the suite has no row."""
    sub = frame[frame["suite"] == suite]
    if sub.empty:
        return None
    rows = points(frame, suite, runs)
    metrics = [m for m in C.COMPARED_METRICS if (sub["metric"] == m).any()]
    height = 1.9 + ROW_IN * len(rows)
    fig, axes = plt.subplots(1, len(metrics), figsize=(WIDTH_IN, height), dpi=DPI, sharey=True,
                             layout="constrained", squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        _panel(ax, sub[sub["metric"] == metric], rows, metric)
    ax0 = axes[0][0]
    ax0.set_yticks(range(len(rows)))
    ax0.set_yticklabels([f"{sc} · {short_name(sv)}" for sc, sv in rows])
    ax0.set_ylim(len(rows) - 0.5, -0.5)
    servers = sort_servers({sv for _, sv in rows})
    handles = [Line2D([], [], color=colour(s), marker="o", mfc="white", lw=1.6, label=display_name(s)) for s in servers]
    handles += [Line2D([], [], color="black", marker="D", mfc="black", ls="none", label="regression / improvement"),
                Line2D([], [], color="black", marker="D", mfc="white", ls="none", label="possible (reaches the floor)"),
                Patch(color=FLOOR_GREY, label="noise floor")]
    fig.legend(handles=handles, loc="outside lower center", frameon=False,
               ncols=legend_ncols([str(h.get_label()) for h in handles]), fontsize=FONT_MIN_PT)
    fig.suptitle(f"Suite {suite}: B against A (Δ = B/A − 1, {confidence:.0%} Welch CI, log scale)")
    return describe(fig, (
        f"Forest plot of suite {suite}: for each of {len(rows)} points (scenario and server) the Δ of run B "
        f"against run A for {', '.join(METRIC_WORDS.get(m, m) for m in metrics)}, one panel each, as a dot "
        f"with its {confidence:.0%} interval as a whisker on a log axis; a grey band marks the noise floor "
        f"around 0; filled diamonds are regressions or improvements beyond the floor."))
