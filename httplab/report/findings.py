"""A report's findings, first: the seed's headline claims beside this run's numbers, and the
reasons the two differ that the run itself shows (cores per server, client-bound points, the A/A
noise floor). Every number of ours is a row of the statistics frames (ctx.stats); the seeds'
numbers are their published tables' rows, declared per scenario in each suite's suite.toml ([seed];
docs/glossary.md says what each write-up is), so "ours ÷ seed" is taken scenario by scenario, never
between a range and a range.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..lab.hoststate import parse_cpu_list
from ..stats import format_delta
from ..stats.write import KEEPALIVE_SCORE
from ..lab.servers import display_name, language, pairs_named, short_name, tier
from ..lab.suites import suite_of_part
from .cells import mean_ci_of, ratio_ci_of
from .engine import ReportContext, compared_servers
from .fmt import fmt_mean_ci
from .quality import client_bound_points
from .tables import bound_figure, estimate_bound, to_markdown

# The seeds' machine: both servers and the load generator unpinned on one 12-core laptop.
SEED_MACHINE = "Apple M3 Pro, 12 cores, server and load generator unpinned"


@dataclass(frozen=True)
class SeedPoint:
    """One row of a seed's table: its event loop's and Go's req/s on the scenario we map it to."""
    scenario: str
    contestant: float
    baseline: float

    @property
    def ratio(self) -> float:
        return self.contestant / self.baseline


@dataclass(frozen=True)
class Claim:
    """A line of a seed's summary ("GET /ping: xKit +18% ~ +24%") and the table rows behind it."""
    what: str
    seed_text: str
    points: tuple[SeedPoint, ...]
    index: int = 0                   # its place among [[seed.claims]] (the ledger's <seed>/versus/<index>)


@dataclass(frozen=True)
class Seed:
    number: str
    title: str
    setup: str
    claims: tuple[Claim, ...]
    peak: tuple[str, float, tuple[str, ...]]   # (what, req/s, our scenarios it is read against)


def seed_of(part: str) -> Seed | None:
    """The write-up that the suite of `part` mirrors, with its claims (suite.toml's [seed], kind
    "claims"); None for a suite without one or whose seed ranks instead (kind "ranking")."""
    s = suite_of_part(part)
    doc = s.seed_doc if s is not None else {}
    if doc.get("kind") != "claims":
        return None
    # the findings table's claims: its event loop against its other server on req/s; a claim on
    # another metric or between other servers is in the ledger's table below it (ledger_table)
    claims = tuple(Claim(str(c["what"]), str(c["text"]), tuple(SeedPoint(str(sc), float(a), float(b))
                                                               for sc, a, b in c["points"]), i)
                   for i, c in enumerate(doc.get("claims", []), 1)
                   if c.get("metric", "req_per_s") == "req_per_s" and "servers" not in c
                   and all(len(pt) == 3 for pt in c["points"]))
    peak = doc["peak"]
    return Seed(str(doc["number"]), str(doc["title"]), str(doc["setup"]), claims,
                (str(peak["what"]), float(peak["req_per_s"]), tuple(map(str, peak["scenarios"]))))


def ranking_seed(part: str) -> dict | None:
    """The [seed] table of a suite whose write-up ranked languages (kind "ranking": number, title,
    stdlib_avg: language -> req/s), None otherwise."""
    s = suite_of_part(part)
    doc = s.seed_doc if s is not None else {}
    return doc if doc.get("kind") == "ranking" else None


# ---------------------------------------------------------------- our side of a claim

def _compare(ctx: ReportContext, scenario: str, a: str, b: str) -> pd.Series | None:
    """The comparisons row of req/s, A vs B, on one scenario of the report's suite."""
    return ctx.stats.compare("req_per_s", (ctx.suite, scenario, a), (ctx.suite, scenario, b))


def _delta(ctx: ReportContext, scenario: str, a: str, b: str):
    return ratio_ci_of(_compare(ctx, scenario, a, b))


def _range_text(deltas: Sequence[tuple[str, object]]) -> str:
    """'+84% [+80%, +88%] (c50) … +147% [+140%, +153%] (c500)': the smallest and largest Δ."""
    have = [(s, d) for s, d in deltas if d.estimate is not None]  # type: ignore[attr-defined]
    if not have:
        return "no data"
    lo = min(have, key=lambda x: x[1].estimate)  # type: ignore[attr-defined]
    hi = max(have, key=lambda x: x[1].estimate)  # type: ignore[attr-defined]
    if lo[0] == hi[0]:
        return f"{format_delta(lo[1])} ({_short(lo[0])})"  # type: ignore[arg-type]
    return f"{format_delta(lo[1])} ({_short(lo[0])}) to {format_delta(hi[1])} ({_short(hi[0])})"  # type: ignore[arg-type]


def _short(scenario: str) -> str:
    """The varying part of a scenario id ('get_ping_c50' -> 'c50', 'post_echo_b4096_c100' -> 'b4096')."""
    parts = scenario.split("_")
    for p in parts:
        if p[0] in "sb" and p[1:].isdigit():
            return _size(int(p[1:]))
    return parts[-1]


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} B"


def _kilo(x: float) -> str:
    """The seeds' way of writing req/s: 155K, 8.5K."""
    return f"{x / 1e3:.1f}K" if x < 10e3 else f"{x / 1e3:.0f}K"


def _cores(n: int) -> str:
    return f"{n} core" + ("" if n == 1 else "s")


# ---------------------------------------------------------------- the seed's conditions or not

def seed_conditions(ctx: ReportContext) -> bool:
    """Whether the run reproduced the seeds' set-up (run_all.sh --seed-conditions: the server on all
    but four CPUs, the load tool's four threads on those four, 10 s runs). Only then is our ratio
    over the seed's a like-for-like figure: on other conditions a server that spreads over cores
    (Go's runtime) and a single-threaded event loop are set apart by the core count itself."""
    return ctx.run.meta.get("profile") == "seed"


def server_cores(ctx: ReportContext) -> int:
    """How many CPUs the run's servers were pinned to (meta.json's server_cpus)."""
    return len(parse_cpu_list(ctx.run.meta.get("server_cpus", "")) or []) or 1


def different_conditions(ctx: ReportContext) -> str:
    """The cell that stands where a ratio over the seed's would restate only the core difference (the
    Cores reason below the table says why and what would measure it)."""
    return f"not comparable ({_cores(server_cores(ctx))} here, 12 in the seed)"


def seed_contestant(ctx: ReportContext, a: str) -> str:
    """The server read against the seeds' claims: under the seeds' conditions the contestant
    single-threaded (<a>@1), as the seeds' event loop was, when the run has it; else a itself."""
    single = f"{a}@1"
    if seed_conditions(ctx) and not ctx.runs.empty and single in set(ctx.runs["server"]):
        return single
    return a


def _vs_seed(ctx: ReportContext, claim: Claim, a: str, b: str) -> str:
    """Our A/B ratio over the seed's, per scenario: the smallest and largest (× the seed's); only
    under the seed's conditions (different_conditions otherwise)."""
    if not seed_conditions(ctx):
        return different_conditions(ctx)
    vals = []
    for p in claim.points:
        row = _compare(ctx, p.scenario, a, b)
        if row is not None and math.isfinite(row["ratio"]):
            vals.append(float(row["ratio"]) / p.ratio)
    if not vals:
        return "—"
    lo, hi = min(vals), max(vals)
    return f"{lo:.2f}×" if abs(hi - lo) < 0.005 else f"{lo:.2f}× to {hi:.2f}×"


def ledger(ctx: ReportContext) -> pd.DataFrame:
    """The run's claim ledger (data/<run_id>/claims.parquet, stats.claims); empty for data built
    before the ledger existed."""
    from ..stats.write import read_stats
    path = ctx.data_dir / "claims.parquet"
    return read_stats(ctx.data_dir, "claims") if path.is_file() else pd.DataFrame()


def verdict_cell(book: pd.DataFrame, claim_id: str) -> str:
    """A claim's verdict as a table cell: the word, and for a claim the run cannot speak to, what
    its points read as anyway ('not comparable (as read: confirmed)')."""
    if book.empty:
        return "—"
    row = book[book["claim_id"] == claim_id]
    if row.empty:
        return "—"
    v, reason = str(row.iloc[0]["verdict"]), str(row.iloc[0]["reason"])
    if v == "not comparable" and "Read anyway: " in reason:
        return f"not comparable (as read: {reason.split('Read anyway: ', 1)[1].split(',', 1)[0]})"
    if v == "untested":
        return f"untested ({reason.removeprefix('no point could be read: ')})"
    return v


def ledger_table(ctx: ReportContext, number: str, shown: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The ledger's rows of one write-up that the findings table above it does not show (`shown`:
    claim ids) as a table: the claim, the write-up's words, this run's reading of each point with its
    interval, and the verdict."""
    book = ledger(ctx)
    if book.empty:
        return pd.DataFrame()
    rows = book[(book["seed"] == number) & ~book["claim_id"].isin(shown)]
    return pd.DataFrame([{f"Claim (seed {number})": r.what, "The write-up": r.seed_text,
                          "This run (95 % CI)": _ledger_ours(str(r.ours)), "Verdict": verdict_cell(book, r.claim_id)}
                         for r in rows.itertuples()])


def _ledger_ours(text: str) -> str:
    """A one-point claim's reading as the table shows it: the ratio and interval with the reading,
    without the part/scenario names the Claim column already says (a claim of several points keeps
    each point's name)."""
    points = pairs_named(text).split("; ")
    if len(points) > 1:
        return "; ".join(points)
    return points[0].split(": ", 1)[1] if ": " in points[0] else points[0]


def verdict_counts_line(ctx: ReportContext, number: str) -> str:
    """'This run reads seed 000's 8 claims as: 1 refuted, 3 not comparable, 4 untested.'"""
    book = ledger(ctx)
    if book.empty:
        return ""
    mine = book[book["seed"] == number]
    from ..stats.claims import counts
    parts = [f"{n} {v}" for v, n in counts(mine).items() if n]
    return (f"This run reads the {len(mine)} claims of seed {number} as: {', '.join(parts)} (the claim ledger, "
            f"`data/{ctx.run.run_id}/claims.parquet`; every write-up's claims on one page: "
            "[the claims summary](../claims.html)). The lab's C server stands in for the write-ups' xKit, "
            "whose source the lab cannot build; a claim about xKit is read on the C server.")


def claims_table(ctx: ReportContext) -> pd.DataFrame:
    """One row per seed claim: the seed's summary, ours (smallest and largest Δ of the scenarios
    the claim covers, each with its interval), and ours ÷ the seed's ratio per scenario."""
    seed = seed_of(ctx.suite)
    servers = compared_servers(ctx)
    if seed is None or len(servers) < 2:
        return pd.DataFrame()
    a, b = seed_contestant(ctx, servers[0]), ctx.baseline
    ours = f"This run: {short_name(a)} vs {short_name(b)} (95 % CI)"
    rows = []
    book = ledger(ctx)
    for c in seed.claims:
        i = c.index
        deltas = [(p.scenario, _delta(ctx, p.scenario, a, b)) for p in c.points]
        rows.append({"Claim (seed " + seed.number + ")": c.what, "The write-up": c.seed_text,
                     ours: _range_text(deltas),
                     "Our ratio ÷ seed's": _vs_seed(ctx, c, a, b),
                     "Verdict": verdict_cell(book, f"{seed.number}/versus/{i}")})
    what, value, scenarios = seed.peak
    peaks = [(s, mean_ci_of(ctx.stats.estimate((ctx.suite, s, a), "req_per_s"))) for s in scenarios]
    peaks = [(s, m) for s, m in peaks if m.mean is not None]
    if peaks:
        s, m = max(peaks, key=lambda x: x[1].mean)  # type: ignore[arg-type, return-value]
        bound = estimate_bound(ctx.stats.estimate((ctx.suite, s, a), "req_per_s"))
        rows.append({"Claim (seed " + seed.number + ")": what, "The write-up": f"{_kilo(value)} req/s",
                     ours: f"{short_name(a)}: {bound_figure(fmt_mean_ci(m), bound)} req/s ({_short(s)})",
                     "Our ratio ÷ seed's": f"{m.mean / value:.2f}×" if seed_conditions(ctx)  # type: ignore[operator]
                     else different_conditions(ctx),
                     "Verdict": verdict_cell(book, f"{seed.number}/peak")})
    return pd.DataFrame(rows)


def languages_table(ctx: ReportContext) -> pd.DataFrame:
    """Seed 003's ranking (its stdlib servers' average req/s) beside ours: each language's stdlib
    server's score (the four keep-alive endpoints, per rep, with its interval)."""
    SEED_STDLIB_AVG = (ranking_seed(ctx.suite) or {}).get("stdlib_avg", {})
    present = sorted(set(ctx.runs["server"])) if not ctx.runs.empty else []
    rows = []
    for lang, seed_avg in SEED_STDLIB_AVG.items():
        std = [s for s in present if language(s) == lang and tier(s) == "stdlib"]
        if not std:
            continue
        est = ctx.stats.estimate((ctx.suite, KEEPALIVE_SCORE, std[0]), "req_per_s")
        m = mean_ci_of(est)
        rows.append({"Language (seed 003's rank)": lang, "Seed: avg req/s (12 cores)": _kilo(seed_avg),
                     "Our stdlib server": display_name(std[0]),
                     f"This run: avg req/s ({_cores(server_cores(ctx))}, 95 % CI)": bound_figure(
                         fmt_mean_ci(m), estimate_bound(est)),
                     "Ours ÷ seed's": "—" if m.mean is None else (f"{m.mean / seed_avg:.2f}×" if seed_conditions(ctx)
                                                                  else different_conditions(ctx))})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- why they differ

def seed_machine(ctx: ReportContext) -> str:
    """The write-up's machine as it states it (its suite.toml [seed] conditions), never more: seed
    003 states no hardware."""
    s = suite_of_part(ctx.suite)
    stated = str((s.seed_doc if s is not None else {}).get("conditions") or "")
    return stated or SEED_MACHINE


def reasons(ctx: ReportContext) -> list[str]:
    """The sentences saying why this run's numbers differ from the seed's, each from the run."""
    meta = ctx.run.meta
    host = meta.get("host") or {}
    s_cpus, c_cpus = meta.get("server_cpus", "?"), meta.get("client_cpus", "?")
    if seed_conditions(ctx):
        out = [f"**Conditions: the seed's.** This run reproduced the seed's set-up on a {host.get('cores', '?')}-core "
               f"{host.get('cpu_model', 'machine')}: every server on {_cores(server_cores(ctx))} (CPU {s_cpus}), "
               f"the load generator with four threads on CPU {c_cpus}, 10 s runs; the C server is read against "
               "the claims single-threaded, as the seed's event loop was, and runs beside that with one worker "
               "per server core. Our ratio ÷ the seed's is therefore a like-for-like figure; what is left "
               f"between them is the machine (the seed's: {seed_machine(ctx)}) and the servers' versions."]
        return out + _run_reasons(ctx)
    out = [f"**Cores.** The seed's set-up: {seed_machine(ctx)}. Here every server is pinned to "
           f"{_cores(len(parse_cpu_list(s_cpus) or []))} (CPU {s_cpus}) and the load generator to "
           f"{_cores(len(parse_cpu_list(c_cpus) or []))} "
           f"(CPU {c_cpus}) of a {host.get('cores', '?')}-core {host.get('cpu_model', 'machine')}: a server "
           "that spreads over many cores (Go's runtime, a thread pool) loses what it had in the seed, a "
           "single-threaded event loop loses nothing, "
           + ("so each number here says what a server does with one core, the seed's with every core it "
              "shared with the load generator."
              if ranking_seed(ctx.suite) is not None else "so ratios against such servers are larger here.")
           + " Our ratio is therefore not set over the seed's: only a run under the seed's conditions "
             "(`run_all.sh --seed-conditions`, on a machine of 8 CPUs or more) can confirm or refute these claims."]
    return out + _run_reasons(ctx)


def _run_reasons(ctx: ReportContext) -> list[str]:
    """The sentences about this run itself: client-bound points and the noise floor."""
    out: list[str] = []
    runs = ctx.runs
    points = client_bound_points(runs)
    if not runs.empty and points is None:
        out.append("**Client-bound points.** Not recorded in this run: it was made before the lab read the "
                   "load generator's cores, so nothing here says whether a req/s measured the server or the tool.")
    if points is not None:
        bound = points[points > 0.5]
        if len(points):
            if len(bound):
                who = ", ".join(sorted({short_name(s) for _, _, s in bound.index}))
                out.append(f"**Client-bound points.** In {len(bound)} of {len(points)} points ({who}) the load "
                           "generator's core was saturated while the server's was not: there req/s measures the "
                           "tool, and CPU-µs per request (Server cost) is the number that compares servers.")
            else:
                out.append(f"**Client-bound points.** None of the {len(points)} points was client-bound: the "
                           "servers, not the load generator, set every req/s here.")
    pct = ctx.noise.pct("req_per_s") if ctx.noise.present else None
    if pct is not None:
        out.append(f"**Noise floor.** Two instances of the same server (the A/A copy) differed by up to "
                   f"±{pct:.0f} % in req/s in this run (the widest bound of their intervals); a Δ whose "
                   "interval lies inside that is not a finding here.")
    else:
        why = ctx.noise.absent_why
        out.append(f"**Noise floor.** {why[0].upper() + why[1:]}, so there is no measured noise floor: read "
                   "small Δs with care.")
    return out


def headline(ctx: ReportContext, seed: Seed, a: str) -> str:
    """One sentence: the range of our Δs over every claimed scenario against the seed's range."""
    b = ctx.baseline
    ours, theirs = [], []
    for c in seed.claims:
        for p in c.points:
            row = _compare(ctx, p.scenario, a, b)
            if row is not None and math.isfinite(row["ratio"]):
                ours.append(float(row["ratio"]) - 1)
                theirs.append(p.ratio - 1)
    if not ours:
        return ""
    def pct(x: float) -> str:
        return f"{x * 100:+.0f} %".replace("-", "−")
    return (f"Over the {len(ours)} scenarios both ran, {short_name(a)} vs {short_name(b)} ranges from "
            f"{pct(min(ours))} to {pct(max(ours))} here, where the seed measured {pct(min(theirs))} to "
            f"{pct(max(theirs))}; the reasons below are what this run shows.")


def findings_markdown(ctx: ReportContext) -> str:
    """The report's opening section: the seed's headline claims beside ours, one table, the reasons."""
    ranking = ranking_seed(ctx.suite)
    if ranking is not None:
        table = languages_table(ctx)
        lead = (f"Seed {ranking['number']}, *{ranking['title']}*, ranked five languages by their standard-library servers' "
                f"average req/s ({seed_machine(ctx)}). Below, each language's stdlib server in this run, every "
                "server pinned to the same core.")
    else:
        seed = seed_of(ctx.suite)
        if seed is None:
            return ""
        table = claims_table(ctx)
        servers = compared_servers(ctx)
        a = seed_contestant(ctx, servers[0])
        names = " vs ".join(display_name(s) for s in (a, ctx.baseline))
        lead = (f"Seed {seed.number}, *{seed.title}* ({seed.setup}), made the claims on the left; on the "
                f"right, this run's {names} on the same scenarios, every Δ with its 95 % interval. "
                + headline(ctx, seed, a))
    number = str(ranking["number"]) if ranking is not None else seed.number  # type: ignore[union-attr]
    parts = ["## Findings", "", lead, "", to_markdown(table) if not table.empty else "*No seed scenario ran.*", ""]
    # the table above shows a claims write-up's req/s versus rows and its req/s peak; the rest follow
    shown = frozenset() if ranking is not None or seed is None else frozenset(
        [f"{number}/versus/{c.index}" for c in seed.claims] + [f"{number}/peak"])
    own = ledger_table(ctx, number, shown)
    if not own.empty:
        parts += [f"**The write-up's other claims** (each server's own curve, how a lead moves from one point to "
                  "another, its peak transfer, and for a ranking its order, tails, memory and guesses: each "
                  "point's ratio with its 95 % interval and how it reads)", "",
                  to_markdown(own), ""]
    counts = verdict_counts_line(ctx, number)
    if counts:
        parts += [counts, ""]
    parts += [f"- {r}" for r in reasons(ctx)]
    return "\n".join(parts)


# ---------------------------------------------------------------- the seed-vs-lab chart

def seed_chart(ctx: ReportContext):
    """The findings as a picture: per scenario of the seed's claims, the seed's ratio (open diamond)
    and ours with its interval (the contestant's colour), on a log axis with 1 marked; for seed 003,
    per language the seed's stdlib average and our stdlib server's score with its interval. None
    when the run has nothing the seed measured."""
    from . import plots as P

    points = _chart_points(ctx)
    if not points:
        return None
    with __import__("matplotlib").rc_context(P.STYLE):
        fig, axes = P.new_figure(4.2)
        ax = axes[0, 0]
        xs = range(len(points))
        for x, (label, seed, est, lo, hi, colour) in zip(xs, points):
            ax.scatter([x], [seed], marker="D", s=46, facecolors="white", edgecolors="black", zorder=3,
                       label="seed (12 cores)" if x == 0 else None)
            if est is not None:
                err = [[est - lo], [hi - est]] if lo is not None and hi is not None else None
                ax.errorbar([x], [est], yerr=err, fmt="o", ms=7, color=colour, ecolor="black", capsize=3,
                            zorder=4, label=f"this run, {_cores(server_cores(ctx))} (95 % CI)" if x == 0 else None)
        ax.set_xticks(list(xs), [p[0] for p in points], rotation=35, ha="right")
        values = [v for p in points for v in (p[1], p[2]) if v is not None]
        if ranking_seed(ctx.suite) is not None:
            P.set_value_axis(ax, values, log=True)
            ax.set_ylabel("avg requests/s (stdlib server)")
            what = "each language's stdlib server: seed 003's average req/s and this run's score"
        else:
            P.set_value_axis(ax, values + [1.0], tick=lambda v, pos=None: f"{v:g}×", log=True)
            ax.axhline(1.0, color="#888888", lw=1, zorder=1)
            a = seed_contestant(ctx, compared_servers(ctx)[0])
            ax.set_ylabel(f"{short_name(a)} ÷ {short_name(ctx.baseline)} req/s")
            what = f"req/s ratio {display_name(a)} ÷ {display_name(ctx.baseline)} per scenario, seed vs this run"
        ax.legend(loc="best")
        caveat = ("" if seed_conditions(ctx) else
                  f"; not comparable: {_cores(server_cores(ctx))} per server here, 12 in the seed")
        P.title_and_caption(fig, ax, "The seed's numbers and this run's",
                            "diamonds: the seed; dots: this run, whiskers its 95 % t CI; log scale" + caveat)
    return P.describe(fig, f"Dot chart: {what} ({len(points)} points), log y axis"
                      + (", measured under the seed's conditions." if seed_conditions(ctx)
                         else f", not comparable: {_cores(server_cores(ctx))} per server here, 12 in the seed."))


def _chart_points(ctx: ReportContext) -> list[tuple[str, float, float | None, float | None, float | None, str]]:
    from ..lab.servers import colour
    out = []
    if ranking_seed(ctx.suite) is not None:
        present = sorted(set(ctx.runs["server"])) if not ctx.runs.empty else []
        SEED_STDLIB_AVG = (ranking_seed(ctx.suite) or {}).get("stdlib_avg", {})
        for lang, avg in SEED_STDLIB_AVG.items():
            std = [s for s in present if language(s) == lang and tier(s) == "stdlib"]
            if std:
                m = mean_ci_of(ctx.stats.estimate((ctx.suite, KEEPALIVE_SCORE, std[0]), "req_per_s"))
                out.append((lang, avg, m.mean, m.low, m.high, colour(std[0])))
        return out
    seed = seed_of(ctx.suite)
    servers = compared_servers(ctx)
    if seed is None or len(servers) < 2:
        return []
    a, b = seed_contestant(ctx, servers[0]), ctx.baseline
    seen: set[str] = set()
    for c in seed.claims:
        for p in c.points:
            if p.scenario in seen:
                continue   # a claim over rows another claim holds ("wins every scenario"): each point once
            seen.add(p.scenario)
            row = _compare(ctx, p.scenario, a, b)
            if row is None or not math.isfinite(row["ratio"]):
                continue
            lo = float(row["lo"]) if math.isfinite(row["lo"]) else None
            hi = float(row["hi"]) if math.isfinite(row["hi"]) else None
            out.append((p.scenario, p.ratio, float(row["ratio"]), lo, hi, colour(a)))
    return out
