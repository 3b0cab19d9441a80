"""Figures of the latency report: P99 against offered load (absolute and as a share of capacity,
with each server's knee), and percentile curves at one shared rate and at 80 % of capacity (timed
from the scheduled and from the actual send). Same look as report.plots: one width, one colour
per server, log latency axes, CI whiskers, a description for the alt text."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from httplab.stats.percentiles import PERCENTILES, weighted_percentiles
from httplab.stats.cells import MeanCI, mean_ci
from httplab.stats.latency_curves import (CONTRAST_FRACTION, KNEE_MULTIPLE, SHARED_SCENARIO,
                                    curve_points, knees)
from httplab.lab.servers import display_name, sort_servers
from httplab.lab.suites import suite_module
from httplab.report.plots import (FONT_MIN_PT, describe, latency_tick, legend_ncols, new_figure, nines, palette,
                    set_nines_axis, set_value_axis, styled, count_tick)

# the suite's report module: the protocol of each part and the shared rate's words
_L = suite_module("latency")
PROTOCOL_OF, shared_rate_words, LATENCY_SUITES = _L.PROTOCOL_OF, _L.shared_rate_words, _L.LATENCY_SUITES

RUN_KEY = ["run_id", "suite", "server", "scenario", "rep"]


def _suites(runs: pd.DataFrame) -> list[str]:
    present = set(runs["suite"]) if not runs.empty else set()
    return [s for s in LATENCY_SUITES if s in present]


def _err(ci: MeanCI) -> tuple[float, float]:
    if ci.mean is None or not ci.has_interval:
        return 0.0, 0.0
    return ci.mean - ci.low, ci.high - ci.mean  # type: ignore[operator]


def _legend(fig: Figure, servers: Sequence[str], pal: dict[str, str], extra: list[Line2D]) -> None:
    handles = [Line2D([], [], color=pal[s], lw=2, marker="o", label=display_name(s)) for s in servers] + extra
    fig.legend(handles=handles, loc="outside lower center", frameon=False, fontsize=FONT_MIN_PT,
               ncols=legend_ncols([h.get_label() for h in handles]))


@styled
def load_curves(runs: pd.DataFrame, confidence: float = 0.95, by_fraction: bool = False) -> Figure | None:
    """One panel per protocol: P99 (log) against the offered rate (log; or, by_fraction, against the
    share of the server's capacity, with each server's knee and its interval as a band), one line
    per server through its open-model points (geometric mean of ok runs, CI whiskers). A point with
    no ok run because it saturated is drawn as × at the panel's top edge."""
    pts = curve_points(runs, confidence)
    if pts.empty:
        return None
    pts = pts[pts["load_model"] == "open"]
    if by_fraction:
        pts = pts[pts["load_fraction"].notna()]
    suites = [s for s in _suites(runs) if s in set(pts["suite"])]
    if not suites:
        return None
    servers = sort_servers(set(pts["server"]))
    pal = palette(servers)
    kn = knees(runs, KNEE_MULTIPLE, confidence) if by_fraction else pd.DataFrame()
    fig, axes = new_figure(1.2 + 3.2 * len(suites), len(suites), 1)
    any_sat = False
    for ax, suite in zip(axes[:, 0], suites):
        sub = pts[pts["suite"] == suite]
        ys: list[float] = []
        sat_x: list[tuple[float, str]] = []
        for s in servers:
            sp = sub[sub["server"] == s].copy()
            if sp.empty:
                continue
            sp["x"] = sp["load_fraction"] if by_fraction else sp["target_rps"]
            sp = sp.sort_values("x")
            ok = sp[sp["n_ok"] > 0]
            y = [c.mean for c in ok["lat_p99_us"]]
            err = np.array([_err(c) for c in ok["lat_p99_us"]]).T if len(ok) else None
            ax.errorbar(ok["x"], y, yerr=err, color=pal[s], marker="o", ms=4, lw=1.6, capsize=3)
            ys += [v for v in y if v is not None]
            sat_x += [(float(x), s) for x in sp[sp["n_ok"] == 0]["x"]]
            if by_fraction and not kn.empty:
                k = kn[(kn["suite"] == suite) & (kn["server"] == s)]
                if len(k) and k.iloc[0]["knee_rps"].mean is not None and k.iloc[0]["capacity_rps"] > 0:
                    cap = float(k.iloc[0]["capacity_rps"])
                    kc = k.iloc[0]["knee_rps"]
                    ax.axvline(kc.mean / cap, color=pal[s], ls=":", lw=1.4)
                    if kc.has_interval:
                        ax.axvspan(kc.low / cap, kc.high / cap, color=pal[s], alpha=0.12, lw=0)
        set_value_axis(ax, ys, tick=latency_tick, log=True)
        top = ax.get_ylim()[1] if ys else 1.0
        for x, s in sat_x:
            ax.plot([x], [top / 1.25], ls="none", marker="x", ms=9, mew=2, color=pal[s], clip_on=False)
            any_sat = True
        if by_fraction:
            ax.set_xlim(0, 1.15)
            ax.xaxis.set_major_formatter(lambda v, pos=None: f"{v:.0%}")
        else:
            xs = sub["target_rps"].dropna()
            set_value_axis(ax, xs, tick=count_tick, log=True, axis="x")
        ax.set_title(PROTOCOL_OF[suite], fontsize=FONT_MIN_PT + 1)
        ax.set_ylabel("P99 latency")
        ax.grid(True, which="major", color="#dddddd", lw=0.6)
    axes[-1, 0].set_xlabel("offered load, share of the server's closed-loop capacity" if by_fraction
                           else "offered rate (requests/s, log scale)")
    extra = []
    if any_sat:
        extra.append(Line2D([], [], ls="none", marker="x", color="black", ms=8, mew=2,
                            label="× saturated: no ok run"))
    if by_fraction:
        extra.append(Line2D([], [], color="black", ls=":", lw=1.4, label=f"knee (band: its {confidence:.0%} CI)"))
    _legend(fig, servers, pal, extra)
    what = "share of capacity" if by_fraction else "offered rate"
    fig.suptitle(f"P99 latency against {what} (open model, latency from the scheduled send)")
    return describe(fig, (
        f"Line charts, one panel per protocol ({', '.join(PROTOCOL_OF[s] for s in suites)}): P99 latency "
        f"(log scale) against the {what}, one line per server ({', '.join(display_name(s) for s in servers)}), "
        f"geometric means of ok runs with {confidence:.0%} whiskers"
        + ("; dotted verticals mark each server's knee with its interval shaded" if by_fraction else "")
        + ("; × marks rates at which every run saturated" if any_sat else "") + "."))


def run_percentiles(latency: pd.DataFrame, ok: pd.DataFrame, qs: Sequence[float] = PERCENTILES
                    ) -> pd.DataFrame:
    """Per ok run (rows of `ok`), its latency at each percentile q from its histogram in the
    latency frame: columns RUN_KEY + q values."""
    lat = latency.merge(ok[RUN_KEY].drop_duplicates(), on=RUN_KEY, how="inner")
    rows = []
    for key, g in lat.groupby(RUN_KEY, sort=False):
        vals = weighted_percentiles(g["latency_us"].to_numpy(float), g["count"].to_numpy(float), list(qs))
        rows.append(dict(zip(RUN_KEY, key)) | dict(zip(qs, vals)))
    return pd.DataFrame(rows)


def _percentile_line(ax, per_run: pd.DataFrame, qs: Sequence[float], color: str, ls: str,
                     confidence: float) -> list[float]:
    cis = [mean_ci(per_run[q], confidence) for q in qs]
    x = [float(nines(q)) for q in qs]
    y = [c.mean if c.mean is not None else math.nan for c in cis]
    err = np.array([_err(c) for c in cis]).T
    ax.errorbar(x, y, yerr=err, color=color, ls=ls, marker="o", ms=3.5, lw=1.6, capsize=2)
    return [v for v in y if not math.isnan(v)]


@styled
def percentile_curves(latency: pd.DataFrame, runs: pd.DataFrame, confidence: float = 0.95,
                      contrast: bool = False) -> Figure | None:
    """One panel per protocol, latency (log) against percentile on a nines axis, one line per
    server (mean over ok runs of each run's percentile, with whiskers): at the shared rate
    (SHARED_SCENARIO), or, with contrast, at CONTRAST_FRACTION of each server's capacity timed
    from the scheduled send (solid) and from the actual send (dashed)."""
    if runs.empty or latency.empty:
        return None
    ok = runs[runs["status"] == "ok"]
    if contrast:
        ok = ok[ok["load_fraction"].sub(CONTRAST_FRACTION).abs() < 1e-9]
        ok = ok[ok["load_model"].isin(["open", "open_uncorrected"])]
    else:
        ok = ok[(ok["scenario"] == SHARED_SCENARIO) & (ok["load_model"] == "open")]
    suites = [s for s in _suites(runs) if s in set(ok["suite"])]
    if not suites:
        return None
    per = run_percentiles(latency, ok)
    if per.empty:
        return None
    per = per.merge(ok[RUN_KEY + ["load_model"]], on=RUN_KEY)
    servers = sort_servers(set(per["server"]))
    pal = palette(servers)
    qs = list(PERCENTILES)
    fig, axes = new_figure(1.2 + 3.0 * len(suites), len(suites), 1)
    for ax, suite in zip(axes[:, 0], suites):
        ys: list[float] = []
        for s in servers:
            for model, ls in (("open", "-"), ("open_uncorrected", "--")):
                g = per[(per["suite"] == suite) & (per["server"] == s) & (per["load_model"] == model)]
                if len(g):
                    ys += _percentile_line(ax, g, qs, pal[s], ls, confidence)
        set_nines_axis(ax)
        set_value_axis(ax, ys, tick=latency_tick, log=True)
        ax.set_title(PROTOCOL_OF[suite], fontsize=FONT_MIN_PT + 1)
        ax.set_ylabel("latency")
    axes[-1, 0].set_xlabel("percentile (%)")
    extra = []
    if contrast:
        extra = [Line2D([], [], color="black", lw=1.6, label="from the scheduled send (corrected)"),
                 Line2D([], [], color="black", lw=1.6, ls="--", label="from the actual send (uncorrected)")]
    _legend(fig, servers, pal, extra)
    where = (f"at {CONTRAST_FRACTION:.0%} of each server's capacity, timed two ways" if contrast
             else f"at the shared rate of {shared_rate_words()} (open model)")
    fig.suptitle(f"Latency by percentile {where}")
    return describe(fig, (
        f"Line charts, one panel per protocol ({', '.join(PROTOCOL_OF[s] for s in suites)}): latency (log) "
        f"against percentile (10 % to 99.99 %, nines axis), one line per server "
        f"({', '.join(display_name(s) for s in servers)}) {where}"
        + ("; solid lines from the scheduled send, dashed from the actual send" if contrast else "")
        + f"; means over ok runs with {confidence:.0%} whiskers."))
