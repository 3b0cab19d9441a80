"""Findings, tables and method notes of the scaling report (suites/scaling/report.ipynb; its figures are
plots.py's, drawn from scaling_frame): every server that
can use several cores, measured at n = 1, 2, 4, ... cores as the server ids <server>@<n>
(lab.servers.base_of, cores_of), on the suite's three parts (scaling_h1, scaling_h2c, scaling_tls).

Every number is a row of the run's estimates or comparisons frame. <server>@<n> and <server>@1 are two
servers of one point, so the scaling ratio X@n / X@1 is the comparisons row of that pair (kind
server, paired by rep) and its verdict is that row's; the efficiency X@n / (n × X@1) is that ratio
with its interval divided by n, a change of unit and not a new statistic. The one mean computed here
is the busy share of a server's pinned CPUs (runs' server_busy), as tables.cost_table does for its
columns. No server is named in this module.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from httplab.lab.manifest import CORE_USES
from httplab.lab.servers import base_of, cores_of, display_name, manifest, sort_servers
from httplab.lab.suites import suite as lab_suite
from httplab.report.cells import mean_ci_of, ratio_ci_of
from httplab.report.engine import ReportContext, open_group_report
from httplab.report.fmt import fmt_count, fmt_float, fmt_mean_ci, fmt_size
from httplab.report.quality import mostly_client_bound
from httplab.report.scenarios import scenario_sort_key
from httplab.report.tables import CLIENT_BOUND_MARK, _with_meta, bound_figure, client_bound_words
from httplab.stats import MeanCI, mean_ci
from httplab.stats.cells import format_delta
from httplab.stats.frames import RunStats
from httplab.stats.select import column
from httplab.tidy.bounds import CLIENT_BUSY_MIN

SUITES: tuple[str, ...] = lab_suite("scaling").parts
# The comparisons verdict that makes one server faster than another; any other verdict (no clear
# difference, below the noise floor, both client-bound, no interval) is a tie.
FASTER = "faster"


def open_scaling_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                        raw_root: str | Path = "raw", data_root: str | Path = "data",
                        confidence: float = 0.95, *, baseline: str = "") -> ReportContext:
    """open_report for the scaling parts (those the run has)."""
    return open_group_report(SUITES, run_dir, out_dir, raw_root, data_root, confidence, baseline=baseline)


# ---------------------------------------------------------------- points and servers
@dataclass(frozen=True)
class Point:
    suite: str
    scenario: str
    protocol: str   # 'HTTP/1.1', 'h2c', 'HTTPS/1.1', 'HTTPS/2'
    label: str      # protocol, request and connections


def protocol_label(first: dict[str, Any]) -> str:
    if first.get("protocol") == "h2":
        return "HTTPS/2" if first.get("tls") else "h2c"
    return "HTTPS/1.1" if first.get("tls") else "HTTP/1.1"


def point_label(first: dict[str, Any]) -> str:
    """'HTTP/1.1 POST /echo 4 KiB, 100 conns' or 'h2c GET /ping, 100 conns × 10 streams'."""
    size = f" {fmt_size(first['size_bytes'])}" if first.get("size_bytes") else ""
    streams = int(first.get("streams") or 1)
    conns = f"{int(first['connections'])} conns" + (f" × {streams} streams" if streams > 1 else "")
    return f"{protocol_label(first)} {first['method']} {first['route']}{size}, {conns}"


def points(runs: pd.DataFrame) -> list[Point]:
    """One Point per (part, scenario) the run has, in the suite's part order then the seed order."""
    if runs.empty:
        return []
    firsts = sorted(runs.drop_duplicates(["suite", "scenario"]).to_dict("records"),
                    key=lambda r: (SUITES.index(r["suite"]) if r["suite"] in SUITES else len(SUITES),
                                   scenario_sort_key(r)))
    return [Point(str(f["suite"]), str(f["scenario"]), protocol_label(f), point_label(f)) for f in firsts]


def ladder(runs: pd.DataFrame) -> tuple[int, ...]:
    """The n measured, from the server ids (the plan's ladder is not in data/: see plan_sentences)."""
    ns = {cores_of(s) for s in runs["server"].unique()} if not runs.empty else set()
    return tuple(sorted(n for n in ns if n is not None))


def bases(runs: pd.DataFrame) -> list[str]:
    """The servers measured (their manifests' ids), in display order."""
    return sort_servers({base_of(s) for s in runs["server"].unique()}) if not runs.empty else []


def at(base: str, n: int) -> str:
    """The server id of `base` pinned to n cores."""
    return f"{base}@{n}"


def cores_words(n: int) -> str:
    return f"{n} core{'s' if n != 1 else ''}"


def _ok(runs: pd.DataFrame, p: Point, server: str) -> pd.DataFrame:
    return runs[(runs["suite"] == p.suite) & (runs["scenario"] == p.scenario) & (runs["server"] == server)
                & (runs["status"] == "ok")]


# ---------------------------------------------------------------- the scaling frame
@dataclass(frozen=True)
class Efficiency:
    """X@n / (n × X@1): the comparisons row X@n / X@1 (its verdict) with the ratio and interval / n."""
    value: float
    lo: float
    hi: float
    verdict: str
    row: pd.Series | None

    def text(self, n: int) -> str:
        """'0.91 [0.88, 0.94] (8 cores against 1: faster)'."""
        if not math.isfinite(self.value):
            return "no data"
        body = f"{self.value:.2f}"
        if math.isfinite(self.lo) and math.isfinite(self.hi):
            body += f" [{self.lo:.2f}, {self.hi:.2f}]"
        return f"{body} ({cores_words(n)} against 1: {self.verdict})"


def efficiency(stats: RunStats, p: Point, base: str, n: int) -> Efficiency | None:
    """The efficiency of `base` at n cores on a point; None at n = 1 or without the comparisons row."""
    row = stats.compare("req_per_s", (p.suite, p.scenario, at(base, n)), (p.suite, p.scenario, at(base, 1)))
    if n == 1 or row is None:
        return None
    return Efficiency(row["ratio"] / n, row["lo"] / n, row["hi"] / n, str(row["verdict"]), row)


def _estimate(stats: RunStats, cell: tuple[str, str, str], metric: str) -> tuple[float, float, float, int]:
    row = stats.estimate(cell, metric)
    if row is None:
        return math.nan, math.nan, math.nan, 0
    return float(row["estimate"]), float(row["lo"]), float(row["hi"]), int(row["n"])


def scaling_frame(runs: pd.DataFrame, stats: RunStats) -> pd.DataFrame:
    """One row per point, server and n: req/s and CPU-µs/req (estimate, lo, hi, n), the efficiency
    with its interval and verdict (NaN and '' at n = 1), and whether the cell was client-bound."""
    rows = []
    for p in points(runs):
        for server in sort_servers(runs.loc[(runs["suite"] == p.suite) & (runs["scenario"] == p.scenario), "server"]):
            n, base, cell = cores_of(server), base_of(server), (p.suite, p.scenario, server)
            if n is None:
                continue
            rps, rps_lo, rps_hi, n_runs = _estimate(stats, cell, "req_per_s")
            cpu, cpu_lo, cpu_hi, _ = _estimate(stats, cell, "cpu_us_per_req")
            e = efficiency(stats, p, base, n)
            rows.append({"suite": p.suite, "scenario": p.scenario, "point": p.label, "protocol": p.protocol,
                         "server": server, "base": base, "n": n, "runs": n_runs,
                         "rps": rps, "rps_lo": rps_lo, "rps_hi": rps_hi, "cpu": cpu, "cpu_lo": cpu_lo,
                         "cpu_hi": cpu_hi, "eff": e.value if e else math.nan, "eff_lo": e.lo if e else math.nan,
                         "eff_hi": e.hi if e else math.nan, "verdict": e.verdict if e else "",
                         "client_bound": mostly_client_bound(_ok(runs, p, server))})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- findings
def figure(stats: RunStats, cell: tuple[str, str, str], metric: str) -> str:
    """'60,431 ± 1,204 req/s (n=5)', '6.37 µs (n=1, CI needs ≥ 5 runs)': the estimates row with its unit."""
    ci = mean_ci_of(stats.estimate(cell, metric))
    if ci.mean is None:
        return "no data"
    fmt, unit = (fmt_count, "req/s") if metric == "req_per_s" else ((lambda v: fmt_float(v, 2)), "µs")
    if ci.has_interval:
        return f"{fmt_mean_ci(ci, fmt, show_n=False)} {unit} (n={ci.n})"
    return f"{fmt(ci.mean)} {unit} (n={ci.n}, {ci.reason or 'no interval'})"


def delta_words(row: pd.Series | None) -> str:
    """A/B − 1 of a comparisons row with its verdict (stats.cells.format_delta): '+18% [+15%, +21%]
    faster', 'no clear difference (+1% [−2%, +4%])', '+38% (n=3, CI needs ≥ 5 runs)'."""
    if row is None or not math.isfinite(row["ratio"]):
        return "no data"
    return format_delta(ratio_ci_of(row), 0)


def noisy_words(stats: RunStats, cell: tuple[str, str, str]) -> str:
    """' (100% of its runs noisy)' when other processes or steal took its pinned cores; '' otherwise."""
    row = stats.estimate(cell, "req_per_s")
    share = float(row["noisy_share"]) if row is not None else math.nan
    return f" ({share:.0%} of its runs noisy)" if math.isfinite(share) and share > 0 else ""


def plan_sentences(facts: dict[str, Any]) -> list[str]:
    """The plan's sentence of each part, where the run's facts (data/<run_id>/run.json) carry it as
    parts.<part>.scaling_plan; [] for a run built before they did (it is in each scenario.json)."""
    found = [str((facts.get("parts", {}).get(s) or {}).get("scaling_plan") or "") for s in SUITES]
    return list(dict.fromkeys(f for f in found if f))


def one_core_markdown(runs: pd.DataFrame, meta: dict[str, Any], facts: dict[str, Any]) -> str:
    """What a run that measured n = 1 only can say, and why it could not measure more; '' otherwise."""
    if ladder(runs) != (1,):
        return ""
    cores = (meta.get("host") or {}).get("cores", "an unrecorded number of")
    plan = plan_sentences(facts)
    quoted = (" The plan: “" + "”; “".join(plan) + "”.") if plan else ""
    return (f"**This machine allowed n = 1 only.** The run's host had {cores} cores; the suite's plan gives "
            "the servers the first half of the physical cores and the load tools the rest, so a server at "
            f"n cores needs a machine of 2n physical cores.{quoted} Each server below is measured at one "
            "core only: there is no efficiency and no curve, and the throughput-against-cores and efficiency "
            "figures need a run on a machine with more cores (`scripts/run_all.sh --suites scaling` there).")


def largest_n_line(frame: pd.DataFrame, stats: RunStats, p: Point, base: str) -> str:
    """'C (evloop) at 8 cores (the largest n measured): req/s …; CPU-µs/req …; efficiency …'."""
    mine = frame[(frame["suite"] == p.suite) & (frame["scenario"] == p.scenario) & (frame["base"] == base)]
    top = mine.loc[mine["n"].idxmax()]
    n, cell = int(top["n"]), (p.suite, p.scenario, str(top["server"]))
    line = (f"{display_name(base)} at {cores_words(n)} (the largest n measured): "
            f"{bound_figure(figure(stats, cell, 'req_per_s'), bool(top['client_bound']))}"
            f"; CPU per request {figure(stats, cell, 'cpu_us_per_req')}")
    e = efficiency(stats, p, base, n)
    return line + (f"; efficiency {e.text(n)}" if e else "") + noisy_words(stats, cell)


def fastest_words(stats: RunStats, frame: pd.DataFrame, p: Point, n: int) -> str:
    """Who is fastest at n cores on a point, with the comparisons row against the runner-up: 'C (evloop),
    +18% [+15%, +21%] faster than Go', or for any other verdict 'a tie of C (evloop) and Go: C (evloop)
    no clear difference (+1% [−2%, +4%])'."""
    here = frame[(frame["suite"] == p.suite) & (frame["scenario"] == p.scenario) & (frame["n"] == n)]
    here = here[np.isfinite(here["rps"])].sort_values("rps", ascending=False)
    if len(here) < 2:
        return f"{display_name(str(here['base'].iloc[0]))} alone" if len(here) else "no data"
    lead, second = here.iloc[0], here.iloc[1]
    row = stats.compare("req_per_s", (p.suite, p.scenario, str(lead["server"])), (p.suite, p.scenario, str(second["server"])))
    verdict = str(row["verdict"]) if row is not None else "no data"
    a, b = display_name(str(lead["base"])), display_name(str(second["base"]))
    if verdict == FASTER:
        return f"{a}, {delta_words(row)} than {b}"
    return f"a tie of {a} and {b}: {a} {delta_words(row)}"


def client_bound_lines(frame: pd.DataFrame, stats: RunStats) -> list[str]:
    """Per protocol: the first n at which a point was client-bound and the load tools' ceiling (the
    highest req/s of a client-bound cell), or that the load tools kept up at every n measured."""
    out = []
    for proto, g in frame.groupby("protocol", sort=False):
        bound = g[g["client_bound"]]
        if bound.empty:
            out.append(f"- **{proto}**: never client-bound up to n = {int(g['n'].max())}: the load tools kept up.")
            continue
        first = int(bound["n"].min())
        where = "; ".join(sorted({str(r.point) for r in bound[bound["n"] == first].itertuples()}))
        top = bound.loc[bound["rps"].idxmax()]
        # the tool's ceiling is a lower bound of the server's req/s there ("≥")
        ceiling = bound_figure(figure(stats, (str(top["suite"]), str(top["scenario"]), str(top["server"])), "req_per_s"),
                               True)
        out.append(f"- **{proto}**: ran out of client at n = {first} ({where}); the load tools' ceiling: "
                   f"{ceiling} ({display_name(str(top['server']))}, {top['point']}), the highest client-bound req/s.")
    return out


def findings_markdown(ctx: ReportContext) -> str:
    """The report's findings: the n = 1-only note, per point each server at its largest n and who is
    fastest at each n, then where each protocol ran out of client."""
    runs, stats = ctx.runs, ctx.stats
    frame = scaling_frame(runs, stats)
    if frame.empty:
        return "*No scaling points in this run.*"
    parts = [one_core_markdown(runs, ctx.run.meta, ctx.run.facts)]
    for p in points(runs):
        lines = [f"**{p.label}**", ""]
        lines += [f"- {largest_n_line(frame, stats, p, b)}" for b in bases(runs)
                  if not frame[(frame["suite"] == p.suite) & (frame["scenario"] == p.scenario) & (frame["base"] == b)].empty]
        ns = sorted(frame.loc[(frame["suite"] == p.suite) & (frame["scenario"] == p.scenario), "n"].unique())
        lines.append("- Fastest: " + "; ".join(f"at {cores_words(int(n))}, {fastest_words(stats, frame, p, int(n))}"
                                                for n in ns) + ".")
        parts.append("\n".join(lines))
    parts.append("**Where the load tools ran out** (client-bound: the load tools' cores saturated, the "
                 "server's not)\n\n" + "\n".join(client_bound_lines(frame, stats)))
    return "\n\n".join(p for p in parts if p)


# ---------------------------------------------------------------- figures (plots.py draws them)
def efficiency_note(frame: pd.DataFrame) -> str:
    """Why there is no efficiency figure, when there is none."""
    if not frame.empty and np.isfinite(frame["eff"]).any():
        return ""
    return ("*No efficiency curve: this run measured n = 1 only, where efficiency is 1 by definition; "
            "the curve needs runs at n > 1 (a machine with more cores).*")


# ---------------------------------------------------------------- tables
def _scaled(ci: MeanCI, by: float) -> MeanCI:
    """The same figure in another unit (% of a core → cores)."""
    def f(x: float | None) -> float | None:
        return None if x is None else x * by
    return MeanCI(f(ci.mean), f(ci.low), f(ci.high), ci.n, ci.confidence, ci.reason, ci.method)


def cost_table(ctx: ReportContext) -> pd.DataFrame:
    """`Point | Server | Cores | req/s | CPU-µs/req | Busy cores | Pinned CPUs busy`, each server at each n."""
    title = "Cost per request and busy cores, by cores"
    frame = scaling_frame(ctx.runs, ctx.stats)
    if frame.empty:
        return _with_meta(pd.DataFrame(), title, "no data: this run has no scaling suite")
    rows = []
    for r in frame.itertuples():
        cell, p = (r.suite, r.scenario, r.server), Point(r.suite, r.scenario, r.protocol, r.point)
        busy = column(_ok(ctx.runs, p, r.server), "server_busy") * r.n
        rows.append({
            "Point": r.point, "Server": display_name(r.base), "Cores": int(r.n),
            "req/s": bound_figure(figure(ctx.stats, cell, "req_per_s"), bool(r.client_bound)),
            "CPU-µs/req": figure(ctx.stats, cell, "cpu_us_per_req"),
            "Busy cores (server CPU)": fmt_mean_ci(_scaled(mean_ci_of(ctx.stats.estimate(cell, "cpu_pct")), 0.01),
                                                   lambda v: fmt_float(v, 2)),
            "Pinned CPUs busy (of n)": fmt_mean_ci(mean_ci(busy, ctx.confidence), lambda v: fmt_float(v, 2)),
        })
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Point", "Server", "Cores"]
    return _with_meta(df, title, (
        f"Each figure: the geometric mean of the ok runs with its {ctx.confidence:.0%} interval and n. CPU-µs/req = "
        "the server's whole process tree's CPU time (utime + stime, /proc) over the window ÷ completed requests. "
        "Busy cores = the same CPU time ÷ the window (the estimate of CPU % ÷ 100): how many cores the server "
        "kept busy. Pinned CPUs busy = the busy share of its n pinned CPUs from /proc/stat (other processes and "
        "interrupts on them included) × n, the arithmetic mean over runs with its t interval; below n, the "
        f"server left cores idle. {client_bound_words()}."))


# ---------------------------------------------------------------- method notes
def servers_how_markdown(runs: pd.DataFrame) -> str:
    """One bullet per server measured: its manifest's [cores] uses, what that means, and its `how`."""
    lines = []
    for b in bases(runs):
        m = manifest(b)
        if m is None:
            lines.append(f"- **{display_name(b)}**: no manifest in this checkout.")
            continue
        lines.append(f"- **{display_name(b)}** (`uses = \"{m.cores.uses}\"`: {CORE_USES[m.cores.uses]}): {m.cores.how}")
    return "\n".join(lines)


def method_markdown(runs: pd.DataFrame, facts: dict[str, Any]) -> str:
    """The method notes: the plan's split of the CPUs, what [cores] uses means, each server's how."""
    ns = ladder(runs)
    plan = plan_sentences(facts)
    quoted = (" This run's plan: “" + "”; “".join(plan) + "”.") if plan else ""
    return (
        "## Method notes\n\n"
        "**How the plan splits the CPUs.** `python -m httplab cores scaling` (`httplab/lab/cores.py`) gives "
        "the servers the first half of the machine's physical cores and the load tools the rest, one load-tool "
        "thread per CPU of theirs, so that the client has as many cores as the largest server; hyperthread "
        "siblings are never split between the two sides, and a server given n CPUs gets one thread of n "
        "physical cores before any sibling. n runs 1, 2, 4, ... up to the server share (and the share itself "
        f"when it is not a power of two). This run measured n = {', '.join(str(n) for n in ns) or 'none'}.{quoted}\n\n"
        "**The points.** Each `<server>@<n>` is a server of its own for the suite: started fresh in every rep, "
        "passed through the verify gate, pinned to the first n CPUs of the server share and told n through its "
        "manifest's `{cores}`, and run in each rep's random order beside every other server and n. Efficiency "
        "at n is the comparisons row req/s(`X@n`) / req/s(`X@1`), paired by rep, with its interval divided by n; "
        "its verdict says whether n cores beat one at all.\n\n"
        "**What `[cores] uses` means.** Every server's manifest says how it uses n cores: "
        + "; ".join(f"`{k}`: {v}" for k, v in CORE_USES.items())
        + ". Servers that use a single core are left out of this suite (every other suite measures them).\n\n"
        "**The servers measured, and what n means for each:**\n\n" + servers_how_markdown(runs) + "\n\n"
        f"**Client-bound points.** A point is client-bound when the load tools' CPUs were ≥ {CLIENT_BUSY_MIN:.0%} busy while the "
        "server's were not saturated (`httplab/tidy/bounds.py`): its req/s measures the load tools, and a scaling "
        "curve ends there however many cores the server has. CPU-µs per request is the server's own cost either way.")
