"""The figures of the scaling report (suites/scaling/report.ipynb): req/s and efficiency against cores,
one panel per point, drawn from report.scaling_frame's rows (one per point, server and n) and nothing
else: every value and interval in them is a row of the run's estimates or comparisons frame."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from httplab.lab.servers import colour, display_name, sort_servers
from httplab.report.plots import FONT_MIN_PT, describe, legend_ncols, new_figure, set_value_axis, styled
from httplab.report.tables import CLIENT_BOUND_MARK

PANEL_COLUMNS = 3


def _panels(frame: pd.DataFrame) -> tuple[Figure, list, list[tuple[str, str, str]]]:
    """A figure with one panel per point (in the frame's order), PANEL_COLUMNS to a row."""
    keys = list(dict.fromkeys(zip(frame["suite"], frame["scenario"], frame["point"])))
    ncols = min(PANEL_COLUMNS, len(keys))
    nrows = math.ceil(len(keys) / ncols)
    fig, axes = new_figure(1.2 + 3.0 * nrows, nrows, ncols)
    flat = list(axes.flat)
    for ax in flat[len(keys):]:
        ax.set_visible(False)
    return fig, flat[:len(keys)], keys


def _cores_axis(ax, ns: Sequence[int]) -> None:
    """x = cores on a log2 axis with a tick at every n measured."""
    ax.set_xscale("log", base=2)
    ax.set_xlim(min(ns) / 1.5, max(ns) * 1.5)
    ax.xaxis.set_major_locator(ticker.FixedLocator(list(ns)))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _pos: f"{x:g}"))
    ax.set_xlabel("cores (n)")


def _whiskers(ax, g: pd.DataFrame, y: str, c: str) -> None:
    have = g[np.isfinite(g[f"{y}_lo"]) & np.isfinite(g[f"{y}_hi"])]
    if not have.empty:
        ax.errorbar(have["n"], have[y], yerr=[have[y] - have[f"{y}_lo"], have[f"{y}_hi"] - have[y]],
                    fmt="none", ecolor=c, elinewidth=1.4, capsize=3, zorder=2)


def _markers(ax, g: pd.DataFrame, y: str, c: str) -> None:
    """A dot per cell, hollow where the cell was client-bound."""
    for r in g.itertuples():
        ax.plot([r.n], [getattr(r, y)], marker="o", ms=7, mec=c, mew=1.5, mfc="white" if r.client_bound else c, zorder=4)


def _runs_words(frame: pd.DataFrame) -> str:
    lo, hi = int(frame["runs"].min()), int(frame["runs"].max())
    return f"n = {lo}{f'–{hi}' if hi != lo else ''} ok runs per point"


def _bound_handle(frame: pd.DataFrame) -> list[Line2D]:
    """The legend's entry for hollow markers, when a cell was client-bound."""
    if not frame["client_bound"].any():
        return []
    return [Line2D([], [], color="grey", marker="o", mfc="white", ls="none", label=f"client-bound {CLIENT_BOUND_MARK}")]


def _legend(fig: Figure, servers: Sequence[str], extra: list[Line2D]) -> None:
    handles = [Line2D([], [], color=colour(b), marker="o", lw=1.8, label=display_name(b)) for b in servers] + extra
    fig.legend(handles=handles, loc="outside lower center", frameon=False, fontsize=FONT_MIN_PT,
               ncols=legend_ncols([str(h.get_label()) for h in handles]))


@styled
def throughput_plot(frame: pd.DataFrame, confidence: float) -> Figure | None:
    """req/s against cores, log-log, one panel per point, one colour per server, interval whiskers,
    hollow markers on client-bound cells, and each server's n × its one-core req/s dotted."""
    if frame.empty or not np.isfinite(frame["rps"]).any():
        return None
    fig, axes, keys = _panels(frame)
    ns = sorted(frame["n"].unique())
    for ax, (suite, scenario, label) in zip(axes, keys):
        here = frame[(frame["suite"] == suite) & (frame["scenario"] == scenario)]
        for base, g in here.groupby("base", sort=False):
            c, g = colour(str(base)), g.sort_values("n")
            ax.plot(g["n"], g["rps"], color=c, lw=1.8, zorder=3)
            _whiskers(ax, g, "rps", c)
            _markers(ax, g, "rps", c)
            one = g[g["n"] == 1]["rps"]
            if len(ns) > 1 and len(one):
                ax.plot(ns, [float(one.iloc[0]) * n for n in ns], color=c, lw=1.0, ls=":", zorder=1)
        values = here[["rps", "rps_lo", "rps_hi"]].to_numpy().ravel().tolist() + [
            float(v) * max(ns) for v in here.loc[here["n"] == 1, "rps"]]
        set_value_axis(ax, values, log=True)
        _cores_axis(ax, ns)
        ax.set_title(label, fontsize=FONT_MIN_PT)
        ax.grid(color="#eeeeee", lw=0.6)
    axes[0].set_ylabel("req/s (log)")
    servers = sort_servers(frame["base"].unique())
    linear = [Line2D([], [], color="grey", ls=":", label="n × the one-core req/s")] if len(ns) > 1 else []
    _legend(fig, servers, _bound_handle(frame) + linear)
    fig.suptitle(f"req/s against cores (geometric mean, {confidence:.0%} CI whiskers; {_runs_words(frame)})")
    return describe(fig, (
        f"Log-log line chart, one panel per point ({len(keys)}): req/s against cores (n = "
        f"{', '.join(str(n) for n in ns)}) for {len(servers)} servers ({', '.join(display_name(s) for s in servers)}), "
        f"each a line in its colour with its {confidence:.0%} interval as whiskers ({_runs_words(frame)}); "
        "hollow markers are client-bound cells, dotted lines n times each server's one-core req/s."))


@styled
def efficiency_plot(frame: pd.DataFrame, confidence: float) -> Figure | None:
    """Efficiency X@n / (n × X@1) against n with its interval, one panel per point, 1.0 dashed.
    None when no n > 1 was measured (efficiency at one core is 1 by definition)."""
    if frame.empty or not np.isfinite(frame["eff"]).any():
        return None
    fig, axes, keys = _panels(frame)
    ns = sorted(frame["n"].unique())
    tops = [1.0]
    for ax, (suite, scenario, label) in zip(axes, keys):
        here = frame[(frame["suite"] == suite) & (frame["scenario"] == scenario)].copy()
        here.loc[here["n"] == 1, "eff"] = 1.0   # the definition: the curve starts at 1
        for base, g in here.groupby("base", sort=False):
            c, g = colour(str(base)), g.sort_values("n")
            ax.plot(g["n"], g["eff"], color=c, lw=1.8, zorder=3)
            _whiskers(ax, g, "eff", c)
            _markers(ax, g, "eff", c)
            tops += [v for v in g["eff_hi"].tolist() + g["eff"].tolist() if math.isfinite(v)]
        ax.axhline(1.0, color="black", lw=1.2, ls="--", zorder=2)
        _cores_axis(ax, ns)
        ax.set_title(label, fontsize=FONT_MIN_PT)
        ax.grid(color="#eeeeee", lw=0.6)
    for ax in axes:
        ax.set_ylim(0, max(tops) * 1.1)
    axes[0].set_ylabel("efficiency: req/s(n) / (n × req/s(1))")
    servers = sort_servers(frame["base"].unique())
    _legend(fig, servers, _bound_handle(frame) + [Line2D([], [], color="black", ls="--", label="1.0 = linear scaling")])
    fig.suptitle(f"Scaling efficiency against cores ({confidence:.0%} CI whiskers; {_runs_words(frame)})")
    return describe(fig, (
        f"Line chart, one panel per point ({len(keys)}): scaling efficiency (req/s at n cores divided by n "
        f"times req/s at one core) against n = {', '.join(str(n) for n in ns)} for "
        f"{', '.join(display_name(s) for s in servers)}, with {confidence:.0%} intervals as whiskers "
        f"({_runs_words(frame)}) and a dashed line at 1.0, linear scaling."))
