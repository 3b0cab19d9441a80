"""Figures (matplotlib/seaborn): throughput bars with CI whiskers, latency percentile curves with
x = 1/(1−p) on a log axis, CPU-µs per request bars. Each function returns a Figure, or None when
there is no data to draw (the notebook then says "no data")."""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..stats.select import Where, ok_runs, select
from .fmt import fmt_size
from ..parse.percentiles import weighted_percentiles
from .scenarios import scenario_label, scenario_sort_key
from ..tidy.servers import colour, display_name, sort_servers
from ..stats import mean_ci


VARY_TICK = {"size_bytes": fmt_size, "connections": lambda v: f"{int(v)}"}


def ci_bar(ax, x: float, vals: np.ndarray, width: float, color, label: str | None, confidence: float,
           small: bool = False) -> None:
    """One bar at x: the runs' estimate (stats.mean_ci) with its interval as an error bar and the
    runs as dots; nothing when there are no runs. small: thinner marks for crowded plots."""
    if not len(vals):
        return
    ci = mean_ci(vals, confidence)
    ax.bar(x, ci.mean, width * 0.9, color=color, label=label)
    if ci.has_interval:
        ax.errorbar(x, ci.mean, yerr=[[ci.mean - ci.low], [ci.high - ci.mean]], color="black",
                    capsize=2 if small else 3, lw=0.8 if small else 1)
    ax.scatter(np.full(len(vals), x), vals, s=5 if small else 8, color="black", alpha=0.5, zorder=3)


def palette(servers: Sequence[str]) -> dict[str, str]:
    """server -> its colour (tidy.servers.colour: the manifest's), the same in every plot."""
    return {s: colour(s) for s in servers}


def metric_bars(runs: pd.DataFrame, where: Where | None, vary: str, metric: str, ylabel: str,
                servers: Sequence[str] | None = None, confidence: float = 0.95, title: str = "",
                vary_label: str | None = None) -> Figure | None:
    """Grouped bars: mean of `metric` per (vary level, server) over ok runs, whiskers = the
    log-scale t interval (none when fewer than 5 runs), dots = the individual runs."""
    ok = ok_runs(select(runs, where))
    if ok.empty or ok[metric].dropna().empty:
        return None
    present = sort_servers(set(ok["server"]))
    chosen = [s for s in (servers or present) if s in present] or present
    levels = sorted(ok[vary].unique())
    pal = palette(chosen)
    width = 0.8 / len(chosen)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(levels) * len(chosen) + 1.5), 3.6))
    for i, s in enumerate(chosen):
        for j, level in enumerate(levels):
            vals = ok.loc[(ok["server"] == s) & (ok[vary] == level), metric].dropna().to_numpy(dtype=float)
            ci_bar(ax, j - 0.4 + width * (i + 0.5), vals, width, pal[s],
                   display_name(s) if j == 0 else None, confidence)
    fmt = VARY_TICK.get(vary, str)
    ax.set_xticks(range(len(levels)), [fmt(v) for v in levels])
    ax.set_xlabel(vary_label or vary)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    ax.text(1.0, -0.22, f"bars: mean over ok runs; whiskers: {confidence:.0%} t CI (n ≥ 5); dots: runs",
            transform=ax.transAxes, ha="right", fontsize=7, color="gray")
    sns.despine(fig)
    fig.tight_layout()
    return fig


def throughput_bars(runs: pd.DataFrame, where: Where | None, vary: str, servers: Sequence[str] | None = None,
                    confidence: float = 0.95, title: str = "", vary_label: str | None = None) -> Figure | None:
    return metric_bars(runs, where, vary, "req_per_s", "requests/s", servers, confidence, title, vary_label)


def cpu_bars(runs: pd.DataFrame, where: Where | None, vary: str, servers: Sequence[str] | None = None,
             confidence: float = 0.95, title: str = "", vary_label: str | None = None) -> Figure | None:
    return metric_bars(runs, where, vary, "cpu_us_per_req", "server CPU-µs per request", servers,
                       confidence, title, vary_label)


# Percentile grid for the curves: p from 0 to 99.99 %, dense in the tail.
_X = np.logspace(0, 4, 200)  # x = 1/(1-p)
_P = 100.0 * (1.0 - 1.0 / _X)
_TICKS = {2.0: "50%", 10.0: "90%", 100.0: "99%", 1000.0: "99.9%", 10000.0: "99.99%"}


def pooled_histogram(latency: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Pool the histograms of several runs giving each run equal weight (each run's counts are
    normalised to sum to 1 first, so a 'quantiles' grid and an 'exact' histogram mix fairly)."""
    if latency.empty:
        return np.array([]), np.array([])
    df = latency[latency["count"] > 0].copy()
    df["w"] = df["count"] / df.groupby(["run_id", "suite", "server", "scenario", "rep"])["count"].transform("sum")
    pooled = df.groupby("latency_us")["w"].sum()
    return pooled.index.to_numpy(dtype=float), pooled.to_numpy(dtype=float)


def latency_curves(latency: pd.DataFrame, runs: pd.DataFrame, where: Where | None = None,
                   servers: Sequence[str] | None = None, max_panels: int = 12) -> Figure | None:
    """One panel per scenario: the latency at percentile p against x = 1/(1−p) (log; ticks 50 % …
    99.99 %), one line per server from the pooled histograms of its ok runs (equal weight per run)."""
    ok = ok_runs(select(runs, where))
    if ok.empty or latency.empty:
        return None
    key = ["run_id", "suite", "server", "scenario", "rep"]
    lat = latency.merge(ok[key].drop_duplicates(), on=key, how="inner")
    if lat.empty:
        return None
    firsts = sorted(ok.drop_duplicates("scenario").to_dict("records"), key=scenario_sort_key)[:max_panels]
    present = sort_servers(set(ok["server"]))
    chosen = [s for s in (servers or present) if s in present] or present
    pal = palette(chosen)
    ncols = min(3, len(firsts))
    nrows = int(np.ceil(len(firsts) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    for ax, first in zip(axes.ravel(), firsts):
        for s in chosen:
            sub = lat[(lat["scenario"] == first["scenario"]) & (lat["server"] == s)]
            v, w = pooled_histogram(sub)
            if not len(v):
                continue
            n = sub[key].drop_duplicates().shape[0]
            ax.plot(_X, weighted_percentiles(v, w, _P), color=pal[s], lw=1.4,
                    label=f"{display_name(s)} (n={n})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(list(_TICKS), list(_TICKS.values()))
        ax.minorticks_off()
        ax.set_title(scenario_label(first), fontsize=8)
        ax.set_ylabel("latency (µs)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, frameon=False)
    for ax in axes.ravel()[len(firsts):]:
        ax.set_visible(False)
    fig.suptitle("Latency by percentile (x = 1/(1−p), log); pooled histograms, each run weighted equally",
                 fontsize=9)
    sns.despine(fig)
    fig.tight_layout()
    return fig
