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
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..lab.suites import suite as lab_suite
from ..stats.frames import RunStats
from ..stats.methods import MIN_RUNS
from ..lab.servers import (colour, contestants, display_name, is_aa_copy, is_reference, manifests, short_name,
                             sort_servers)
from .cells import mean_ci_of
from .engine import ReportContext, open_group_report
from .fmt import fmt_count, fmt_float, fmt_mean_ci, fmt_size
from .plots import DPI, FONT_MIN_PT, WIDTH_IN, describe, legend_ncols, log_ticks, styled
from .scenarios import scenario_sort_key
from .tables import CLIENT_BOUND_MARK, _with_meta, client_bound_words

VERSUS_SUITES: tuple[str, ...] = lab_suite("versus").parts
# The targets, declared beside the parts that measure their points.
TARGETS_FILE = lab_suite("versus").file("targets.toml")
METRIC_WORDS: dict[str, str] = {"cpu_us_per_req": "CPU-µs/req", "req_per_s": "req/s"}
RATIO_METRICS: tuple[str, ...] = ("cpu_us_per_req", "req_per_s")


@dataclass(frozen=True)
class Target:
    """One of the issue's targets: contestant / reference of `metric` on one point, at most (or at
    least) `bound`."""
    suite: str
    scenario: str
    metric: str
    reference: str
    bound: float
    at_most: bool
    what: str                # the point, as the issue names it
    caveat: str = ""         # what the issue says about it
    contestant: str = ""     # the server divided by the reference; "" -> the run's contestant

    def words(self, contestant: str | None = None) -> str:
        """'<contestant's short name> CPU-µs/req ≤ 0.6 × <reference's short name>'s' (contestant:
        the target's own, else the given one, else the_contestant())."""
        sign = "≤" if self.at_most else "≥"
        return (f"{_short(self.contestant or contestant or the_contestant())} {METRIC_WORDS[self.metric]} {sign} "
                f"{self.bound:g} × {short_name(self.reference)}'s")


class TargetsError(ValueError):
    """A target file that cannot be read; the message names the file and the target."""


# key -> (type, required)
_TARGET_KEYS: dict[str, tuple[type, bool]] = {
    "suite": (str, True), "scenario": (str, True), "metric": (str, True), "reference": (str, True),
    "bound": (float, True), "at_most": (bool, True), "what": (str, True), "caveat": (str, False),
    "contestant": (str, False)}


def _target(path: Path, i: int, entry: object, suites: tuple[str, ...] = VERSUS_SUITES) -> Target:
    where = f"{path}: [[target]] {i}"
    if not isinstance(entry, dict):
        raise TargetsError(f"{where}: not a table")
    unknown = sorted(set(entry) - set(_TARGET_KEYS))
    if unknown:
        raise TargetsError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_TARGET_KEYS)})")
    values: dict[str, object] = {}
    for key, (kind, required) in _TARGET_KEYS.items():
        if key not in entry:
            if required:
                raise TargetsError(f"{where}: '{key}' is missing")
            continue
        v = entry[key]
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kind) or (kind is str and not v):
            raise TargetsError(f"{where}: '{key}' must be a{'' if kind is not str else ' non-empty'} "
                               f"{kind.__name__} (got {v!r})")
        values[key] = v
    if values["metric"] not in METRIC_WORDS:
        raise TargetsError(f"{where}: metric '{values['metric']}' is not one of {', '.join(METRIC_WORDS)}")
    if values["suite"] not in suites:
        raise TargetsError(f"{where}: suite '{values['suite']}' is not one of {', '.join(suites)}")
    bound = values["bound"]
    if not (isinstance(bound, float) and math.isfinite(bound) and bound > 0):
        raise TargetsError(f"{where}: 'bound' must be a ratio > 0 (got {bound!r})")
    return Target(**values)  # type: ignore[arg-type]


def read_toml(path: Path, tables: tuple[str, ...]) -> dict:
    """A targets file's TOML, whose top level may hold only arrays of the named tables."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise TargetsError(f"{path}: cannot be read ({e.strerror or e})") from e
    except tomllib.TOMLDecodeError as e:
        raise TargetsError(f"{path}: not valid TOML ({e})") from e
    extra = sorted(set(data) - set(tables))
    if extra:
        raise TargetsError(f"{path}: unknown top-level key(s) {', '.join(extra)} "
                           f"(only {', '.join(f'[[{t}]]' for t in tables)} tables)")
    for t in tables:
        if not isinstance(data.get(t, []), list):
            raise TargetsError(f"{path}: '{t}' must be an array of tables ([[{t}]])")
    return data


@lru_cache(maxsize=8)
def _load_targets(path: Path, suites: tuple[str, ...], tables: tuple[str, ...]) -> tuple[Target, ...]:
    data = read_toml(path, tables)
    return tuple(_target(path, i, e, suites) for i, e in enumerate(data.get("target", []), 1))


def load_targets(path: str | Path | None = None, suites: tuple[str, ...] = VERSUS_SUITES,
                 tables: tuple[str, ...] = ("target",)) -> tuple[Target, ...]:
    """The issue's targets, in their file's order (path: default TARGETS_FILE), each on one of
    `suites`; `tables`: the top-level tables the file may hold besides [[target]] (read by their own
    reader). Read once per file."""
    return _load_targets(Path(path or TARGETS_FILE).resolve(), tuple(suites), tuple(tables))


def the_contestant(servers: Iterable[str] = ()) -> str | None:
    """The server the ratios are about: the first of `servers` (a run's) of tier contestant in its
    manifest (lab.servers.contestants); without one, the first contestant among all the manifests;
    None when no manifest has that tier."""
    return next(iter(contestants(servers) or contestants(manifests())), None)


def _short(server: str | None) -> str:
    """The short name of a server (lab.servers.short_name); 'the contestant' for none."""
    return short_name(server) if server else "the contestant"


def _stats_contestant(stats: RunStats, contestant: str | None) -> str | None:
    """contestant, or the contestant among the servers of the run's estimates."""
    if contestant:
        return contestant
    present = set(stats.estimates["server"]) if not stats.estimates.empty else set()
    return the_contestant(present)


def _runs_contestant(runs: pd.DataFrame, contestant: str | None) -> str | None:
    """contestant, or the contestant among the run's servers."""
    if contestant:
        return contestant
    return the_contestant(set(runs["server"]) if not runs.empty else set())


MET, MISSED, OPEN, NO_DATA = "met", "missed", "not decided", "no data"


@dataclass(frozen=True)
class Decision:
    status: str   # MET, MISSED, OPEN or NO_DATA
    reason: str

    def text(self) -> str:
        return f"**{self.status}**: {self.reason}" if self.status in (MET, MISSED) else f"{self.status}: {self.reason}"


def fmt_ratio(x: float) -> str:
    """0.7412 -> '0.74×' (three figures below 0.1)."""
    return "—" if not math.isfinite(x) else (f"{x:.3f}×" if x < 0.0995 else f"{x:.2f}×")


def decide(target: Target, ratio: float, lo: float, hi: float, contestant_client_bound: bool = False,
           reference_client_bound: bool = False, contestant: str | None = None) -> Decision:
    """The target against a ratio contestant/reference and its interval [lo, hi] (NaN: none).
    contestant (named in the client-bound reasons): default the_contestant()."""
    contestant = contestant or the_contestant()
    if not math.isfinite(ratio):
        return Decision(NO_DATA, "no ok runs of one of the two servers on this point")
    bound = target.bound
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Decision(OPEN, f"no interval (the point estimate {fmt_ratio(ratio)} decides nothing; an "
                              f"interval needs ≥ {MIN_RUNS} ok runs of each server)")
    span = f"[{fmt_ratio(lo)}, {fmt_ratio(hi)}]"
    if target.at_most:
        status = MET if hi <= bound else (MISSED if lo > bound else OPEN)
    else:
        status = MET if lo >= bound else (MISSED if hi < bound else OPEN)
    if target.metric == "req_per_s":
        # A client-bound side's req/s is the load tool's ceiling, not the server's: the contestant's
        # true ratio is at least the measured one, a client-bound reference's at most.
        if contestant_client_bound and reference_client_bound:
            return Decision(OPEN, f"both servers client-bound {CLIENT_BOUND_MARK}: req/s measured the "
                                  "load tool on both sides, so the client core does not allow the target "
                                  "to be judged (compare CPU-µs/req instead)")
        if contestant_client_bound or reference_client_bound:
            # the measured ratio bounds the true one from below (contestant client-bound) or from
            # above (reference client-bound): only a decision in that direction stands
            lower = contestant_client_bound
            keeps = MET if lower != target.at_most else MISSED
            if status != keeps:
                who = contestant if lower else target.reference
                return Decision(OPEN, f"{_short(who)} was client-bound {CLIENT_BOUND_MARK}: its req/s is "
                                      f"the load tool's ceiling, so the true ratio is {'above' if lower else 'below'} "
                                      f"the measured {span}; the client core does not allow the target to be judged")
    side = "≤" if target.at_most else "≥"
    note = ""
    if target.metric == "req_per_s" and (contestant_client_bound or reference_client_bound):
        who = contestant if contestant_client_bound else target.reference
        note = (f" ({_short(who)} was client-bound {CLIENT_BOUND_MARK}: the true ratio lies further "
                "that way still)")
    if status == MET:
        return Decision(MET, f"the whole interval {span} is {side} {bound:g}×{note}")
    if status == MISSED:
        return Decision(MISSED, f"the whole interval {span} is beyond {bound:g}×{note}")
    return Decision(OPEN, f"the interval {span} holds {bound:g}×")


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
def ratio_cell(row: pd.Series | None) -> str:
    """'0.74× [0.71×, 0.77×]' (no interval: the point estimate and why); ⚑ when a side is
    client-bound."""
    if row is None or not math.isfinite(row["ratio"]):
        return "no data"
    body = fmt_ratio(row["ratio"])
    if math.isfinite(row["lo"]) and math.isfinite(row["hi"]):
        body += f" [{fmt_ratio(row['lo'])}, {fmt_ratio(row['hi'])}]"
    else:
        body += f" (no interval: {row['reason'] or f'CI needs ≥ {MIN_RUNS} runs'})"
    if bool(row["a_client_bound"]) or bool(row["b_client_bound"]):
        body += f" {CLIENT_BOUND_MARK}"
    return body


def runs_cell(row: pd.Series | None) -> str:
    """'5 pairs (paired by rep)', or '1 / 1 runs (unpaired)' where the two share fewer than
    MIN_RUNS reps (Welch's t, stats.methods)."""
    if row is None:
        return "—"
    if bool(row["paired"]):
        return f"{int(row['n_pairs'])} pairs (paired by rep)"
    return f"{int(row['n_a'])} / {int(row['n_b'])} runs (unpaired)"


def figure_cell(stats: RunStats, cell: tuple[str, str, str], metric: str) -> str:
    """One server's figure with its unit: '1.35 ± 0.02 µs (n=5)', '715,900 ± 4,120/s (n=5)'; the
    share of its runs that were noisy (other processes or steal on the pinned cores) when any."""
    unit = " µs" if metric == "cpu_us_per_req" else "/s"
    fmt = (lambda v: fmt_float(v, 2) + unit) if metric == "cpu_us_per_req" else (lambda v: fmt_count(v) + unit)
    row = stats.estimate(cell, metric)
    text = fmt_mean_ci(mean_ci_of(row), fmt)
    if row is not None and math.isfinite(row["noisy_share"]) and row["noisy_share"] > 0:
        text += f"; {row['noisy_share']:.0%} of runs noisy"
    return text


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
    """Each target (default load_targets()) with its comparisons row (contestant vs reference; None
    when the run lacks the point) and its decision. contestant: default the run's (the_contestant)."""
    contestant = _stats_contestant(stats, contestant)
    out = []
    for t in (load_targets() if targets is None else targets):
        who = t.contestant or contestant
        row = None if who is None else stats.compare(t.metric, (t.suite, t.scenario, who),
                                                     (t.suite, t.scenario, t.reference))
        if row is None:
            out.append((t, None, Decision(NO_DATA, f"this run has no {t.suite} {t.scenario} of both servers")))
            continue
        out.append((t, row, decide(t, float(row["ratio"]), float(row["lo"]), float(row["hi"]),
                                   bool(row["a_client_bound"]), bool(row["b_client_bound"]), who)))
    return out


def targets_table(stats: RunStats, contestant: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """`Point | Target | Measured ratio | Runs | <contestant> | <reference> | Target met?`, one row
    per target of the issue. contestant: default the run's (the_contestant)."""
    title = "The issue's targets against this run"
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
    from .quality import noise_floor, noise_floor_table
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
    from .tables import cost_table
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
def ratio_ticks(lo: float, hi: float) -> list[float]:
    """Ratio ticks inside [lo, hi]: 1× always, the others at least an eighth of the (log) axis apart."""
    return log_ticks(lo, hi, [0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0,
                              10.0, 20.0], 8)


@styled
def ratio_plot(ctx: ReportContext, contestant: str | None = None) -> Figure | None:
    """The ratios contestant / reference, one row per point and reference, one panel per metric:
    a dot with its interval as a whisker on a log axis, 1× as a line, the issue's targets as red
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
    handles += [Line2D([], [], color="#d62728", marker="|", ms=14, mew=2.2, ls="none", label="the issue's target"),
                Line2D([], [], color="grey", marker="o", mfc="white", ls="none", label=f"a side client-bound {CLIENT_BOUND_MARK}")]
    fig.legend(handles=handles, loc="outside lower center", frameon=False,
               ncols=legend_ncols([str(h.get_label()) for h in handles]), fontsize=FONT_MIN_PT)
    fig.suptitle(f"{display_name(contestant)} against the reference servers (ratio, {ctx.confidence:.0%} CI, log scale)")
    return describe(fig, (
        f"Forest plot: for each of {len(points)} points (protocol, request and reference server) the ratio "
        f"{display_name(contestant)} / reference of CPU-µs per request (left panel) and of req/s (right "
        f"panel), as a dot with its {ctx.confidence:.0%} interval as a whisker on a log axis, with a line at "
        "1× and the issue's targets as red ticks on their rows; hollow dots mark points where a side was "
        "client-bound."))
