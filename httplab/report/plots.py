"""Figures (matplotlib): every figure of every report is built here, or with the helpers here
(languages.py's endpoint bars), and shown by engine.show_figure, which renders it with png_bytes.

One look for all of them:
- one width: WIDTH_IN × DPI = 1000 px, saved at DPI (no 2× "retina", no tight-bbox cropping),
  so the PNG's pixel width is its displayed width in a 1280-px browser window; heights vary;
- fonts ≥ FONT_MIN_PT (11 pt = 15 px at 100 dpi: digits and capitals ≈ 11 px tall);
- one colour per server (lab.servers.colour, the manifest's) in every plot;
- log y when the plotted values span more than SPAN_FOR_LOG (10×), linear otherwise;
  thousands separators on count axes ("150,000"), µs/ms/s on latency axes;
- CI whiskers; client-bound bars hatched, noisy runs drawn as ×, both explained in the legend;
- latency percentile curves on a "nines" axis (x = −log10(1 − p): 90 %, 99 %, 99.9 % … evenly
  spaced);
- each figure carries a description (describe/description) that show_figure uses as alt text.

Each plot function returns a Figure, or None when there is no data to draw (the notebook then
says "no data")."""
from __future__ import annotations

import functools
import io
import textwrap
from collections.abc import Callable, Iterable, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..stats.select import Where, ok_runs, select
from .fmt import fmt_size
from ..stats.percentiles import weighted_percentiles
from .scenarios import scenario_label, scenario_sort_key
from ..lab.servers import colour, display_name, sort_servers
from ..stats import mean_ci


# ---------------------------------------------------------------- the one look
WIDTH_IN = 10.0          # every figure: 10 in …
DPI = 100                # … at 100 dpi = 1000 px, saved and shown 1:1
WIDTH_PX = int(WIDTH_IN * DPI)
FONT_MIN_PT = 11         # ticks, legends, captions; 11 pt at 100 dpi = 15.3 px em, ≈ 11 px digits
LABEL_PT = 12            # axis labels
TITLE_PT = 13            # titles
SPAN_FOR_LOG = 10.0      # log y when max/min of the plotted values exceeds this
CAPTION_COLOUR = "#555555"
HATCH = "///"

STYLE = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "savefig.bbox": None,         # keep the figure's size: no tight cropping
    "savefig.format": "png",
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "font.size": FONT_MIN_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": LABEL_PT,
    "xtick.labelsize": FONT_MIN_PT,
    "ytick.labelsize": FONT_MIN_PT,
    "legend.fontsize": FONT_MIN_PT,
    "legend.title_fontsize": FONT_MIN_PT,
    "figure.titlesize": TITLE_PT,
    "figure.labelsize": FONT_MIN_PT,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.8,
}
matplotlib.rcParams.update(STYLE)


def log_ticks(lo: float, hi: float, candidates: Sequence[float], parts: int) -> list[float]:
    """Ticks for a log axis of ratios over [lo, hi]: 1 always, then the candidates on each side of it
    that lie at least 1/parts of the axis apart (in log)."""
    gap = (np.log(hi) - np.log(lo)) / parts
    kept = [1.0]
    for side in (sorted(t for t in candidates if 1.0 < t <= hi),
                 sorted((t for t in candidates if lo <= t < 1.0), reverse=True)):
        last = 1.0
        for t in side:
            if abs(np.log(t) - np.log(last)) >= gap:
                kept.append(t)
                last = t
    return sorted(kept)


def styled(fn: Callable) -> Callable:
    """Run a plot function under STYLE (whatever a notebook or the inline backend set since)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kwargs)
    return wrapper


def new_figure(height_in: float, nrows: int = 1, ncols: int = 1):
    """A figure of the common width (WIDTH_IN at DPI) and the given height, constrained layout;
    returns (fig, axes) with axes a 2-d array."""
    return plt.subplots(nrows, ncols, figsize=(WIDTH_IN, height_in), dpi=DPI, squeeze=False,
                        layout="constrained")


def describe(fig: Figure, text: str) -> Figure:
    """Attach the figure's description (used as the image's alt text by engine.show_figure)."""
    fig.httplab_description = text
    return fig


def description(fig: Figure) -> str:
    return getattr(fig, "httplab_description", "") or ""


def png_bytes(fig: Figure) -> tuple[bytes, tuple[int, int]]:
    """The figure as PNG at DPI, its size untouched (WIDTH_PX wide): (bytes, (width, height) px)."""
    with matplotlib.rc_context(STYLE):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches=None, facecolor="white")
    data = buf.getvalue()
    # PNG IHDR: width and height as big-endian 32-bit ints at bytes 16..24
    return data, (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))


def configure_inline_backend() -> None:
    """In a kernel: the inline backend shows stray figures as plain PNG at DPI, uncropped, like
    show_figure (its default is png with bbox_inches='tight', which changes the width)."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.config import InlineBackend
    except ImportError:  # pragma: no cover
        return
    ip = get_ipython()
    if ip is None:
        return
    cfg = InlineBackend.instance(parent=ip)
    cfg.figure_formats = {"png"}
    cfg.print_figure_kwargs = {"bbox_inches": None, "dpi": DPI}
    cfg.rc = dict(STYLE)


# ---------------------------------------------------------------- axes
def palette(servers: Sequence[str]) -> dict[str, str]:
    """server -> its colour (lab.servers.colour: the manifest's), the same in every plot."""
    return {s: colour(s) for s in servers}


def _positive(values: Iterable[float]) -> np.ndarray:
    v = np.asarray(list(values), dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def wants_log(values: Iterable[float], span: float = SPAN_FOR_LOG) -> bool:
    """True when the positive values span more than `span` (max/min > 10): a log axis then."""
    v = _positive(values)
    return bool(len(v) >= 2 and v.max() / v.min() > span)


def count_tick(v: float, pos=None) -> str:
    """Count axis labels with thousands separators: 150,000; 2,500; 12.5; 0.5."""
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def latency_tick(us: float, pos=None) -> str:
    """Latency axis labels from µs: 50 µs, 1 ms, 2.5 ms, 1 s."""
    if us <= 0:
        return ""
    for scale, unit in ((1e6, "s"), (1e3, "ms")):
        if us >= scale:
            return f"{us / scale:,.3g} {unit}"
    return f"{us:.3g} µs"


def set_value_axis(ax, values: Iterable[float], tick: Callable = count_tick, log: bool | None = None,
                   axis: str = "y") -> bool:
    """Log scale when the values span > 10× (wants_log), linear otherwise; labels by `tick`
    (count_tick: thousands separators). On a log axis ticks at 1-2-5 when the span is under
    1000×, 1-3 under 30,000×, decades otherwise. Returns whether the axis is log."""
    v = _positive(values)
    log = wants_log(v) if log is None else log
    a = ax.yaxis if axis == "y" else ax.xaxis
    if log and len(v):
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        span = v.max() / v.min()
        subs = (1.0, 2.0, 5.0) if span < 1000 else (1.0, 3.0) if span < 30_000 else (1.0,)
        a.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        a.set_minor_locator(ticker.LogLocator(base=10, subs="auto"))
        a.set_minor_formatter(ticker.NullFormatter())
        lo, hi = v.min() / 1.6, v.max() * 1.6
        (ax.set_ylim if axis == "y" else ax.set_xlim)(lo, hi)
    else:
        a.set_major_locator(ticker.MaxNLocator(nbins=6))
    a.set_major_formatter(ticker.FuncFormatter(tick))
    return bool(log and len(v))


def mark_handles(client_bound: bool, noisy: bool) -> list:
    """Legend entries explaining the marks (not axes artists: the server entries stay the
    axes' labelled artists)."""
    out = []
    if client_bound:
        out.append(Patch(facecolor="white", edgecolor="black", hatch=HATCH,
                         label="hatched = client-bound"))
    if noisy:
        out.append(Line2D([], [], ls="none", marker="x", color="black", markersize=7,
                          label="× = noisy run"))
    return out


def legend_ncols(labels: Sequence[str], most: int = 4) -> int:
    """Columns for a legend across the figure's width: about 7 px per character at 11 pt plus
    the handle, so that no entry runs off the figure."""
    need = 7 * max((len(t) for t in labels), default=1) + 70
    return max(1, min(most, len(labels), WIDTH_PX // need))


def _flags(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df:
        return np.zeros(len(df), dtype=bool)
    return df[col].astype("boolean").fillna(False).to_numpy(dtype=bool)


# ---------------------------------------------------------------- bars
def ci_bar(ax, x: float, vals: np.ndarray, width: float, color, label: str | None, confidence: float,
           small: bool = False, client_bound: bool = False, noisy: np.ndarray | None = None) -> list[float]:
    """One bar at x: the runs' estimate (stats.mean_ci) with its interval as an error bar and the
    runs as dots (noisy runs as ×); hatched when client_bound; nothing when there are no runs.
    small: thinner marks for crowded plots. Returns the plotted values (mean, CI ends, runs)."""
    if not len(vals):
        return []
    ci = mean_ci(vals, confidence)
    ax.bar(x, ci.mean, width * 0.9, color=color, label=label,
           hatch=HATCH if client_bound else None, edgecolor="black" if client_bound else None,
           linewidth=0.6 if client_bound else 0)
    plotted = [ci.mean, *vals]
    if ci.has_interval:
        ax.errorbar(x, ci.mean, yerr=[[ci.mean - ci.low], [ci.high - ci.mean]], color="black",
                    capsize=2 if small else 3, lw=0.8 if small else 1)
        plotted += [ci.low, ci.high]
    noisy = np.zeros(len(vals), dtype=bool) if noisy is None else np.asarray(noisy, dtype=bool)
    quiet = vals[~noisy]
    ax.scatter(np.full(len(quiet), x), quiet, s=6 if small else 9, color="black", alpha=0.5, zorder=3,
               linewidths=0)
    if noisy.any():
        ax.scatter(np.full(int(noisy.sum()), x), vals[noisy], s=30, marker="x", color="black", zorder=4,
                   linewidths=1.2)
    return plotted


def grouped_bars(ax, ok: pd.DataFrame, group_col: str, groups: Sequence, servers: Sequence[str],
                 metric: str, confidence: float, label: Callable[[str], str] = display_name,
                 small: bool = False) -> tuple[list[float], bool, bool]:
    """Bars for each (group, server): ci_bar of the server's ok runs in that group, in the
    server's colour. Returns (every plotted value, any client-bound bar, any noisy run)."""
    from .quality import mostly_client_bound
    pal = palette(servers)
    width = 0.8 / max(1, len(servers))
    values: list[float] = []
    any_cb = any_noisy = False
    for i, s in enumerate(servers):
        for j, g in enumerate(groups):
            sub = ok[(ok["server"] == s) & (ok[group_col] == g)]
            sub = sub[sub[metric].notna()]
            cb = mostly_client_bound(sub) if metric == "req_per_s" else False
            noisy = _flags(sub, "noisy")
            values += ci_bar(ax, j - 0.4 + width * (i + 0.5), sub[metric].to_numpy(dtype=float), width, pal[s],
                             label(s) if j == 0 else None, confidence, small, cb, noisy)
            any_cb |= cb
            any_noisy |= bool(noisy.any())
    return values, any_cb, any_noisy


def bar_legend(ax, any_cb: bool, any_noisy: bool) -> None:
    """Servers (the axes' labelled bars) then the marks' explanations: right of the plot for up
    to 5 servers, below it (3 columns) for more, so that the bars keep most of the width."""
    handles, labels = ax.get_legend_handles_labels()
    extra = mark_handles(any_cb, any_noisy)
    handles, labels = handles + extra, labels + [h.get_label() for h in extra]
    if len(handles) - len(extra) <= 5:
        ax.legend(handles, labels, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize=FONT_MIN_PT)
    else:
        ax.figure.legend(handles, labels, frameon=False, loc="outside lower center",
                         ncols=legend_ncols(labels), fontsize=FONT_MIN_PT)


def title_and_caption(fig: Figure, ax, title: str, caption: str) -> None:
    """The title on top of the figure, the caption line (what bars, whiskers and dots are) in grey
    just above the plot."""
    if title:
        fig.suptitle(title)
    ax.set_title(caption, fontsize=FONT_MIN_PT, color=CAPTION_COLOUR, loc="left")


def bars_caption(confidence: float, log: bool) -> str:
    return (f"bars: mean over ok runs; whiskers: {confidence:.0%} t CI (n ≥ 5); dots: runs"
            + ("; log scale" if log else ""))


def bars_alt(kind: str, ylabel: str, xlabel: str, groups: Sequence[str], servers: Sequence[str],
             confidence: float, log: bool, any_cb: bool, any_noisy: bool) -> str:
    """'Bar chart: requests/s by connections (50, 100, 400), per server (A, B), …'."""
    marks = [m for m, on in (("hatched bars are client-bound", any_cb), ("× marks noisy runs", any_noisy)) if on]
    return (f"{kind}: {ylabel} by {xlabel} ({', '.join(groups)}), one bar per server "
            f"({'; '.join(display_name(s) for s in servers)}), mean of ok runs with {confidence:.0%} CI "
            f"whiskers and run dots, {'log' if log else 'linear'} y axis"
            + (f"; {'; '.join(marks)}" if marks else "") + ".")


VARY_TICK = {"size_bytes": fmt_size, "connections": lambda v: f"{int(v)}"}


@styled
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
    fig, axes = new_figure(4.4)
    ax = axes[0, 0]
    values, any_cb, any_noisy = grouped_bars(ax, ok, vary, levels, chosen, metric, confidence)
    log = set_value_axis(ax, values)
    fmt = VARY_TICK.get(vary, str)
    ticks = [fmt(v) for v in levels]
    ax.set_xticks(range(len(levels)), ticks)
    ax.set_xlabel(vary_label or vary)
    ax.set_ylabel(ylabel)
    title_and_caption(fig, ax, title, bars_caption(confidence, log))
    bar_legend(ax, any_cb, any_noisy)
    return describe(fig, bars_alt("Bar chart" + (f" ({title})" if title else ""), ylabel, vary_label or vary,
                                  ticks, chosen, confidence, log, any_cb, any_noisy))


def throughput_bars(runs: pd.DataFrame, where: Where | None, vary: str, servers: Sequence[str] | None = None,
                    confidence: float = 0.95, title: str = "", vary_label: str | None = None) -> Figure | None:
    return metric_bars(runs, where, vary, "req_per_s", "requests/s", servers, confidence, title, vary_label)


def cpu_bars(runs: pd.DataFrame, where: Where | None, vary: str, servers: Sequence[str] | None = None,
             confidence: float = 0.95, title: str = "", vary_label: str | None = None) -> Figure | None:
    return metric_bars(runs, where, vary, "cpu_us_per_req", "server CPU-µs per request", servers,
                       confidence, title, vary_label)


def capacity_bars(runs: pd.DataFrame, where: Where | None, vary: str, servers: Sequence[str] | None = None,
                  confidence: float = 0.95, title: str = "", vary_label: str | None = None) -> Figure | None:
    """Requests per server CPU-second: what a server could serve on a full core, the figure that
    still compares servers where the load generator, not the server, capped req/s."""
    return metric_bars(runs, where, vary, "capacity_rps", "requests per server CPU-second", servers,
                       confidence, title, vary_label)


# ---------------------------------------------------------------- latency curves
# The "nines" axis: x = −log10(1 − p), so 90 %, 99 %, 99.9 %, 99.99 % are evenly spaced (1, 2, 3, 4)
# and 50 % sits at 0.30. The curve is drawn from p = 0 to 99.99 %.
NINES = {50.0: "50", 90.0: "90", 99.0: "99", 99.9: "99.9", 99.99: "99.99"}  # axis label: "percentile (%)"
_X = np.linspace(0.0, 4.0, 241)
_P = 100.0 * (1.0 - 10.0 ** (-_X))
_X_AXIS_FROM = 0.1  # the latency axis spans the curves from p ≈ 20 % on (not the single fastest request)


def nines(p_percent: float | np.ndarray) -> float | np.ndarray:
    """Percentile p (in %) -> its x on the nines axis, −log10(1 − p/100)."""
    return -np.log10(1.0 - np.asarray(p_percent, dtype=float) / 100.0)


def set_nines_axis(ax) -> None:
    ax.set_xlim(0.0, 4.0)
    ax.set_xticks([float(nines(p)) for p in NINES], list(NINES.values()))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.grid(True, axis="both", which="major", color="#dddddd", lw=0.6)


def pooled_histogram(latency: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Pool the histograms of several runs giving each run equal weight (each run's counts are
    normalised to sum to 1 first, so a 'quantiles' grid and an 'exact' histogram mix fairly)."""
    if latency.empty:
        return np.array([]), np.array([])
    df = latency[latency["count"] > 0].copy()
    df["w"] = df["count"] / df.groupby(["run_id", "suite", "server", "scenario", "rep"])["count"].transform("sum")
    pooled = df.groupby("latency_us")["w"].sum()
    return pooled.index.to_numpy(dtype=float), pooled.to_numpy(dtype=float)


@styled
def latency_curves(latency: pd.DataFrame, runs: pd.DataFrame, where: Where | None = None,
                   servers: Sequence[str] | None = None, max_panels: int = 12) -> Figure | None:
    """One panel per scenario: the latency at percentile p on a nines axis (x = −log10(1 − p):
    50 %, 90 %, 99 %, 99.9 %, 99.99 %) and a log latency axis (µs/ms), one line per server from
    the pooled histograms of its ok runs (equal weight per run). Dashed: the server's runs of that
    scenario were mostly client-bound."""
    from .quality import mostly_client_bound
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
    fig, axes = new_figure(0.8 + 3.3 * nrows, nrows, ncols)
    drawn: list[str] = []
    any_cb = False
    for ax, first in zip(axes.ravel(), firsts):
        curves = []
        for s in chosen:
            sub = lat[(lat["scenario"] == first["scenario"]) & (lat["server"] == s)]
            v, w = pooled_histogram(sub)
            if not len(v):
                continue
            n = sub[key].drop_duplicates().shape[0]
            cb = mostly_client_bound(ok[(ok["scenario"] == first["scenario"]) & (ok["server"] == s)])
            any_cb |= cb
            y = weighted_percentiles(v, w, _P)
            curves.append(y[_X >= _X_AXIS_FROM])
            ax.plot(_X, y, color=pal[s], lw=1.6, ls="--" if cb else "-", label=f"{display_name(s)} (n={n})")
            if s not in drawn:
                drawn.append(s)
        set_nines_axis(ax)
        set_value_axis(ax, np.concatenate(curves) if curves else [], tick=latency_tick, log=True)
        ax.set_title(textwrap.fill(scenario_label(first), 32), fontsize=FONT_MIN_PT)
        ax.tick_params(labelsize=FONT_MIN_PT)
    for ax in axes.ravel()[len(firsts):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("latency")
    for ax in axes[-1, :]:
        ax.set_xlabel("percentile (%)")
    handles = [Line2D([], [], color=pal[s], lw=2, label=display_name(s)) for s in drawn]
    if any_cb:
        handles.append(Line2D([], [], color="black", lw=1.6, ls="--", label="dashed: client-bound runs"))
    fig.legend(handles=handles, loc="outside lower center", ncols=legend_ncols([h.get_label() for h in handles]),
               frameon=False,
               fontsize=FONT_MIN_PT)
    fig.suptitle("Latency by percentile (nines axis); pooled histograms, each run weighted equally")
    labels = [scenario_label(f) for f in firsts]
    return describe(fig, (
        f"Line charts, one panel per scenario ({'; '.join(labels)}): latency (log scale) against "
        f"percentile from 50 % to 99.99 % on a nines axis, one line per server "
        f"({'; '.join(display_name(s) for s in drawn)}), pooled over ok runs"
        + ("; dashed lines are client-bound" if any_cb else "") + "."))

