"""The history page (reports/history.md, history.html and history_files/*.png): each suite part's
headline point (suite.toml `headline`) over every committed run — req/s and CPU-µs per request of
each server, with their intervals, by date, commit and setup — and the change points found in each
series measured on one setup (changepoints: Apache Otava's algorithm).

A setup is the machine (CPU model and cores) with the CPU sets of the servers and the load tool, the
host mode (store.setup_label) and, for a part run in interleaved slices, that design (the history
view's setup is the part's: store.part_designs): figures from two setups are never joined (no line between them in
the figures, one table block each, and no change-point test across them): a change of machine is not
a regression. index.write_index writes this page and puts index_html's lines on the index.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...lab import suites as lab_suites
from ...lab.servers import base_of, colour, display_name, is_aa_copy, sort_servers
from ..scenarios import scenario_words
from ..plots import count_tick, describe, description, new_figure, png_bytes, set_value_axis, styled
from . import attribution, changepoints
from .store import connect, frame as query, history_frame

PAGE_MD, PAGE_HTML, FIGURES_DIR = "history.md", "history.html", "history_files"
METRICS = {"req_per_s": ("req/s", "requests per second", "higher"),
           "cpu_us_per_req": ("CPU-µs per request", "server CPU µs per request", "lower")}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
SCENARIO_WORDS = {"get_ping_c100": "GET /ping, 100 conns", "h2_get_ping_c100": "HTTPS/2 GET /ping, 100 conns",
                  "keepalive_score": "keep-alive score"}


def headline_points() -> list[tuple[str, str]]:
    """(part, scenario) of every suite part with a headline (suite.toml), in the suites' order."""
    return [(part, scen) for s in lab_suites.all_suites() for part, scen in s.headline.items()]


def point_label(part: str, scenario: str) -> str:
    return f"{part}: {SCENARIO_WORDS.get(scenario) or scenario_words(scenario)}"


@dataclass(frozen=True)
class Flag:
    """A change point found in one series."""
    part: str
    scenario: str
    server: str
    metric: str
    setup: str
    run_id: str          # the first run of the new level
    commit: str
    date: str
    before: float
    after: float
    pvalue: float

    @property
    def change(self) -> float:
        return self.after / self.before - 1.0 if self.before else 0.0

    def line(self) -> str:
        unit = METRICS[self.metric][0]
        return (f"{point_label(self.part, self.scenario)} · {display_name(self.server)} · {unit} on {self.setup}: "
                f"{self.change:+.0%} ({self.before:,.4g} → {self.after:,.4g}, p = {self.pvalue:.2g}) "
                f"from run {self.run_id} (commit {self.commit or '?'}, {self.date})")


@dataclass
class History:
    frame: pd.DataFrame                               # the headline rows with identity and `flag`
    identity: pd.DataFrame
    setups: dict[str, str] = field(default_factory=dict)   # setup -> its letter (S1, S2, …)
    flags: list[Flag] = field(default_factory=list)
    tested: int = 0
    too_short: int = 0


def build(data_root: Path, reports_dir: Path | None = None, raw_root: Path | None = None) -> History | None:
    """The headline series and their change points; None when data_root has no run with estimates."""
    try:
        con = connect(data_root, reports_dir, raw_root)
    except ValueError:
        return None
    ident = query(con, "SELECT * FROM run_identity ORDER BY start_utc, run_id")
    frames = []
    for metric in METRICS:
        h = history_frame(con, metric=metric)
        if h.empty:
            continue
        keep = pd.Series(False, index=h.index)
        for part, scen in headline_points():
            keep |= (h["suite"] == part) & (h["scenario"] == scen)
        frames.append(h[keep & ~h["server"].map(is_aa_copy)])
    con.close()
    if not frames or all(f.empty for f in frames):
        return None
    frame = pd.concat(frames, ignore_index=True).sort_values(["start_utc", "run_id"]).reset_index(drop=True)
    frame["flag"] = ""
    # (a figure's setup is its part's: store.part_designs)
    setups_in_order = list(dict.fromkeys(frame["setup"]))
    hist = History(frame, ident, {s: f"S{i + 1}" for i, s in enumerate(setups_in_order)})
    for (part, scen, server, metric, setup), g in frame.groupby(["suite", "scenario", "server", "metric", "setup"],
                                                                 sort=False):
        g = g[np.isfinite(g["estimate"].astype(float))].sort_values(["start_utc", "run_id"])
        if len(g) < changepoints.MIN_POINTS:
            hist.too_short += 1
            continue
        hist.tested += 1
        for cp in changepoints.detect(g["estimate"].astype(float).to_numpy()):
            row = g.iloc[cp.index]
            hist.flags.append(Flag(part, scen, server, metric, setup, row["run_id"], row["commit_short"], row["date"],
                                   cp.mean_before, cp.mean_after, cp.pvalue))
            frame.loc[g.index[cp.index], "flag"] = f"{cp.forward_change:+.0%} (p {cp.pvalue:.2g})"
    return hist


def _fmt(v: float) -> str:
    return "—" if v is None or not np.isfinite(v) else count_tick(float(v))


def cell(row: pd.Series) -> str:
    """An estimate with its interval and n: '147,306 [137,665, 157,623], n 5' (or the reason)."""
    est = _fmt(row["estimate"])
    if np.isfinite(row["lo"]) and np.isfinite(row["hi"]):
        text = f"{est} [{_fmt(row['lo'])}, {_fmt(row['hi'])}], n {int(row['n'])}"
    else:
        text = f"{est}, n {int(row['n'])} (no interval: {row['reason'] or 'fewer than 5 runs'})"
    per = row.get("estimate_per_canary")
    if row.get("metric") == "req_per_s" and per is not None and np.isfinite(per):
        # canary-normalised: the same figure as a multiple of the machine's canary floor
        text += f"; {per:.2f}× the canary floor"
    return text + (f" **⚑ change {row['flag']}**" if row["flag"] else "")


# ------------------------------------------------------------------ figure
@styled
def figure(hist: History, metric: str):
    """One panel per headline point: each server's estimate per run (whiskers: the interval), runs in
    date order, a marker shape per setup, lines only between runs of one setup, change points as red
    rings; log y where the values span more than 10×. None without data."""
    d = hist.frame[hist.frame["metric"] == metric]
    points = [p for p in headline_points() if ((d["suite"] == p[0]) & (d["scenario"] == p[1])).any()]
    if not points:
        return None
    ncols = 2
    nrows = (len(points) + ncols - 1) // ncols
    fig, axes = new_figure(3.4 * nrows + 0.8, nrows, ncols)
    unit, words, better = METRICS[metric]
    used_setups: list[str] = []
    for k, (part, scen) in enumerate(points):
        ax = axes[k // ncols][k % ncols]
        p = d[(d["suite"] == part) & (d["scenario"] == scen)]
        runs = list(dict.fromkeys(p.sort_values(["start_utc", "run_id"])["run_id"]))
        x_of = {r: i for i, r in enumerate(runs)}
        for server in sort_servers(set(p["server"])):
            s = p[p["server"] == server].sort_values(["start_utc", "run_id"])
            for setup, g in s.groupby("setup", sort=False):
                used_setups.append(setup)
                xs = g["run_id"].map(x_of).to_numpy(dtype=float)
                ys = g["estimate"].to_numpy(dtype=float)
                lo = np.where(np.isfinite(g["lo"]), ys - g["lo"], 0.0)
                hi = np.where(np.isfinite(g["hi"]), g["hi"] - ys, 0.0)
                marker = MARKERS[(int(hist.setups.get(setup, "S1")[1:]) - 1) % len(MARKERS)]
                ax.errorbar(xs, ys, yerr=[lo, hi], color=colour(server), marker=marker, markersize=6,
                            linewidth=1.2, capsize=3, linestyle="-")
                flagged = g["flag"] != ""
                if flagged.any():
                    ax.scatter(xs[flagged.to_numpy()], ys[flagged.to_numpy()], s=220, facecolors="none",
                               edgecolors="#d62728", linewidths=2, zorder=5)
        ident = hist.identity.set_index("run_id")
        setup_of = p.drop_duplicates("run_id").set_index("run_id")["setup"]
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([f"{ident.loc[r, 'date'][5:]}\n{ident.loc[r, 'commit_short']}\n{hist.setups[setup_of[r]]}"
                            for r in runs], fontsize=8)
        for i in range(1, len(runs)):   # a change of setup: a grey dashed line between the runs
            if setup_of[runs[i]] != setup_of[runs[i - 1]]:
                ax.axvline(i - 0.5, color="#888888", linestyle="--", linewidth=1)
        ax.set_xlim(-0.5, len(runs) - 0.5)
        set_value_axis(ax, np.concatenate([p["estimate"], p["lo"].dropna(), p["hi"].dropna()]))
        ax.set_title(point_label(part, scen), fontsize=11)
        ax.set_ylabel(unit)
        ax.grid(axis="y", alpha=0.3)
    for k in range(len(points), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    from matplotlib.lines import Line2D
    servers = sort_servers(set(d["server"].map(base_of)))   # one entry per colour: <server>@<n> as <server>
    names = legend_names(servers)
    handles = [Line2D([], [], color=colour(s), marker="o", label=names[s]) for s in servers]
    setups = list(dict.fromkeys(s for s in hist.setups if s in used_setups))
    handles += [Line2D([], [], color="#555555", linestyle="none",
                       marker=MARKERS[(int(hist.setups[s][1:]) - 1) % len(MARKERS)], label=hist.setups[s])
                for s in setups]
    handles.append(Line2D([], [], color="#d62728", marker="o", markerfacecolor="none", linestyle="none",
                          markersize=12, label="change point"))
    handles.append(Line2D([], [], color="#888888", linestyle="--", label="change of setup"))
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=9)
    fig.suptitle(f"Headline {unit} over the committed runs ({better} is better)", fontsize=13)
    flagged = [f for f in hist.flags if f.metric == metric]
    describe(fig, f"{len(points)} panels, one per suite part's headline point ({', '.join(point_label(*p) for p in points)}): "
                  f"{words} of each server ({', '.join(names[s] for s in servers)}) in every committed run that "
                  "measured it, in date order (x labels: date, commit, setup), with 95 % interval whiskers; marker "
                  f"shape is the setup ({', '.join(hist.setups[s] + ' = ' + s for s in setups)}), and lines join only "
                  "runs of one setup; a grey dashed line marks a change of setup between adjacent runs. "
                  + (f"{len(flagged)} change point(s) ringed in red." if flagged else "No change point was found."))
    return fig


def legend_names(servers: list[str]) -> dict[str, str]:
    """Each server's name in the legend, once each: its display name, or where two servers share one
    (the http1 suite's Go server and the languages suite's Go stdlib server are both "Go net/http",
    in two colours) the display name with the server's id, so that no name stands twice for two colours."""
    shown = {s: display_name(s) for s in servers}
    count: dict[str, int] = {}
    for name in shown.values():
        count[name] = count.get(name, 0) + 1
    return {s: (f"{name} ({s})" if count[name] > 1 else name) for s, name in shown.items()}


# ------------------------------------------------------------------ page
INTRO = ("Each suite part's headline point (its suite.toml `headline`) over every committed run that measured it: "
         "the geometric mean of each server's ok runs with its 95 % interval and n (from each run's "
         "`data/<run_id>/estimates`), by date, the lab commit the run was made at, and the setup. "
         "**A setup is the machine (CPU model, cores) with the CPU sets of the servers and the load tool, the "
         "host mode and, for a part run in interleaved slices, that design** (it reads req/s about 5 % lower); figures of two setups are not comparable (a different CPU, or the servers on other cores, "
         "moves every figure), so each table lists its runs by setup, the figures join no two setups, and a "
         "change point is only looked for within one setup's runs: a change of machine is not a regression. "
         "Within a setup the runs still differ by more than their intervals (the machine's speed drifts between "
         "days; nothing in a run measures it yet), and superseded runs (reports/runs.toml) are listed too, marked.")


def _method_text(hist: History) -> str:
    return (f"Change points: {changepoints.ENGINE}, on each series of one server's estimates within one setup, "
            f"in date order (p ≤ {changepoints.MAX_PVALUE}, window {changepoints.WINDOW_LEN}, as Otava's defaults; "
            f"a series needs {changepoints.MIN_POINTS} runs). {hist.tested} series tested, {hist.too_short} too short "
            "to test. Apache Otava itself cannot be installed beside the lab's pins (it requires numpy 2.2 and "
            "scipy < 1.17); its algorithm is run as written, checked against it (docs/history.md). Where a run "
            "measured its machine's canary (docs/method.md#the-canary), a req/s cell also gives the figure as a "
            "multiple of the canary floor (the floor responder's req/s on the same machine, in the same part): a "
            "faster machine raises the req/s and, to the canary's extent, not the multiple. Runs made before the "
            "canary have no multiple.")


def render_md(hist: History, alts: dict[str, str] | None = None) -> str:
    """The page as Markdown; alts: metric -> its figure's alt text, for the figures written beside it
    (history_files/history_<metric>.png)."""
    alts = alts or {}
    lines = ["# History of the headline metrics", "", "[← all reports](index.html)", "", "## In short", "",
             f"**The setups** ({len(hist.setups)}; figures of two setups are never compared):", ""]
    lines += [f"- {x}" for x in setups_in_words(hist)]
    lines += ["", "**What moved**, per change point: the servers that stepped, and what else changed with them "
              "(one server's code moves that server alone; the machine, a load tool or the harness moves them all):", ""]
    lines += [f"- {x}" for x in event_sentences(hist)] or [
        f"- Nothing: no series of one setup ({hist.tested} tested) shows a step at p ≤ {changepoints.MAX_PVALUE}."]
    lines += ["", "## How it is read", "", INTRO, "", _method_text(hist), ""]
    lines += ["## Change points", ""]
    if hist.flags:
        lines += [f"- **{f.line()}**" for f in hist.flags]
    else:
        lines.append(f"None: no series of one setup ({hist.tested} tested) shows a step at p ≤ {changepoints.MAX_PVALUE}.")
    lines += ["", "## Setups", "", "| Setup | Machine, CPU sets, host mode, design | Kernels | Runs |", "|---|---|---|---|"]
    ident = hist.identity
    for setup, letter in hist.setups.items():
        g = ident[ident["run_id"].isin(hist.frame.loc[hist.frame["setup"] == setup, "run_id"])]
        lines.append(f"| {letter} | {setup} | {', '.join(sorted(set(g['kernel'])))} | {len(g)} |")
    lines.append("")
    for metric, (unit, words, better) in METRICS.items():
        d = hist.frame[hist.frame["metric"] == metric]
        if d.empty:
            continue
        lines += [f"## {unit} ({better} is better)", ""]
        if metric in alts:
            alt = alts[metric].replace("[", "(").replace("]", ")")
            lines += [f"![{alt}]({FIGURES_DIR}/history_{metric}.png)", ""]
        for part, scen in headline_points():
            p = d[(d["suite"] == part) & (d["scenario"] == scen)]
            if p.empty:
                continue
            servers = sort_servers(set(p["server"]))
            lines += [f"### {point_label(part, scen)}: {unit}", "",
                      "| Setup | Date (UTC) | Run | Commit | Profile | " + " | ".join(display_name(s) for s in servers) + " |",
                      "|---|---|---|---|---|" + "---|" * len(servers)]
            order = {s: i for i, s in enumerate(hist.setups)}
            runs = p.drop_duplicates("run_id").sort_values(["start_utc", "run_id"])
            runs = runs.assign(_o=runs["setup"].map(order)).sort_values(["_o", "start_utc", "run_id"], kind="stable")
            for _, r in runs.iterrows():
                mark = []
                if r["reference"]:
                    mark.append("reference")
                if r["status"] == "superseded":
                    mark.append("superseded")
                run = f"`{r['run_id']}`" + (f" ({', '.join(mark)})" if mark else "")
                commit = f"`{r['commit_short']}`" + (" (dirty)" if r["dirty"] else "")
                cells = []
                for s in servers:
                    x = p[(p["run_id"] == r["run_id"]) & (p["server"] == s)]
                    cells.append(cell(x.iloc[0]) if len(x) else "—")
                lines.append(f"| {hist.setups[r['setup']]} | {str(r['start_utc'])[:16]} | {run} | {commit} | "
                             f"{r['profile']} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def render_html(md: str) -> str:
    import mistune
    body = mistune.create_markdown(escape=True, plugins=["table"])(md)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>History of the headline metrics</title>\n"
            "<style>body{font-family:sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}"
            "img{max-width:100%}</style></head>\n<body>\n" + str(body) + "</body></html>\n")


def write_history_page(reports_dir: Path, raw_root: Path | None, data_root: Path) -> History | None:
    """reports/history.md, history.html and history_files/history_<metric>.png; None (nothing
    written) when no run has data."""
    hist = build(data_root, reports_dir, raw_root)
    if hist is None:
        return None
    import matplotlib.pyplot as plt
    figs, alts = reports_dir / FIGURES_DIR, {}
    figs.mkdir(parents=True, exist_ok=True)
    for metric in METRICS:
        fig = figure(hist, metric)
        if fig is not None:
            (figs / f"history_{metric}.png").write_bytes(png_bytes(fig)[0])
            alts[metric] = description(fig)
            plt.close(fig)
    md = render_md(hist, alts)
    (reports_dir / PAGE_MD).write_text(md + "\n", encoding="utf-8")
    (reports_dir / PAGE_HTML).write_text(render_html(md), encoding="utf-8")
    return hist


def event_sentences(hist: History) -> list[str]:
    """Each change point event (attribution: the series that stepped at one run, grouped) in words."""
    return [attribution.sentence(e, point_label(e.part, e.scenario), METRICS[e.metric][0])
            for e in attribution.events(hist)]


def setups_in_words(hist: History) -> list[str]:
    """'S1: AMD EPYC, 2 cores; …: 14 runs, 2026-11-21 to 2026-12-07, kernels …' per setup."""
    out = []
    for setup, letter in hist.setups.items():
        runs = hist.frame.loc[hist.frame["setup"] == setup, "run_id"].unique()
        g = hist.identity[hist.identity["run_id"].isin(runs)]
        dates = sorted(d for d in g["date"] if d)
        kernels = sorted({str(k).replace("Linux ", "") for k in g["kernel"] if k})
        span = f"{dates[0]} to {dates[-1]}" if len(dates) > 1 and dates[0] != dates[-1] else (dates[0] if dates else "undated")
        out.append(f"{letter}: {setup}: {len(g)} run{'' if len(g) == 1 else 's'}, {span}"
                   + (f", kernel{'s' if len(kernels) > 1 else ''} {', '.join(kernels)}" if kernels else ""))
    return out


def index_html(hist: History | None) -> str:
    """The index's lines: a link to the history page and, in words, what moved at each change point
    and what changed with it ('' without a page)."""
    if hist is None:
        return ""
    if hist.flags:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in event_sentences(hist))
        found = ("<p>Change points within one setup, each with the servers that moved and what else changed "
                 f"between the run before it and its first run:</p>\n<ul>{items}</ul>\n")
    else:
        found = (f"<p>No change point flagged: none of the {hist.tested} series measured on one setup shows a step "
                 f"(p ≤ {changepoints.MAX_PVALUE}); {hist.too_short} series have fewer than {changepoints.MIN_POINTS} runs.</p>\n")
    return (f'<p><a href="{PAGE_HTML}">History: each headline metric over the committed runs, by date, commit and '
            "setup, with change points</a></p>\n" + found)
