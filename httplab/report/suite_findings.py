"""The findings that open the report of a suite that mirrors no write-up (the generic report,
notebooks/suite.ipynb, e.g. HTTP/3): what a reader choosing a server asks first, from the run's own
frames, before the machine and the method.

1. At the suite's headline point (suite.toml `headline`), every server ranked by CPU time per
   request, the figure that compares servers whether or not the load tool was the limit, with the
   capacity it implies, its req/s (a lower bound, "≥ … ⚑", where the point was client-bound), its P99
   and its Δ against the cheapest other server with the verdict.
2. Per declared section, the contestant against the suite's baseline on CPU-µs per request: the
   smallest and largest Δ over the section's points, each with its interval.
3. The run's own reasons to read with care (findings._run_reasons: client-bound points, the noise
   floor).

Every number is a row of data/<run_id>/'s estimates and comparisons (ctx.stats).
"""
from __future__ import annotations

import pandas as pd

from ..lab.servers import display_name, short_name
from ..stats import format_delta
from ..stats.select import select
from .cells import mean_ci_of, ratio_ci_of
from .engine import ReportContext, compared_servers
from .first_screen import ranked_rows
from .findings import _run_reasons
from .fmt import fmt_mean_ci
from .scenarios import declared_sections, scenario_labels
from .tables import bound_figure, estimate_bound, to_markdown

COST = "cpu_us_per_req"
P99 = "lat_p99_us"


def headline_scenario(ctx: ReportContext) -> str | None:
    """The suite's headline point for this part (suite.toml headline = {part = scenario}), if it ran."""
    from ..lab.suites import suite_of_part
    s = suite_of_part(ctx.suite)
    scen = s.headline.get(ctx.suite) if s is not None else None
    ran = set(ctx.runs["scenario"]) if not ctx.runs.empty else set()
    return scen if scen in ran else None


def _servers(ctx: ReportContext, scenario: str) -> list[dict]:
    """The contenders with a CPU-µs figure on the point, cheapest first, each with its Δ against the
    cheapest other server (first_screen.ranked_rows, as the index's which-server table ranks them)."""
    return ranked_rows(ctx.stats, ctx.suite, scenario, COST)


def _figure(ctx: ReportContext, scenario: str, server: str, metric: str, scale: float = 1.0,
            fmt: str = ",.0f") -> str:
    m = mean_ci_of(ctx.stats.estimate((ctx.suite, scenario, server), metric))
    if m.mean is None:
        return "no data"
    if m.low is None or m.high is None:
        return f"{m.mean / scale:{fmt}} (n={m.n})"
    return f"{m.mean / scale:{fmt}} [{m.low / scale:{fmt}} – {m.high / scale:{fmt}}] (n={m.n})"


def ranking_table(ctx: ReportContext, scenario: str) -> pd.DataFrame:
    """Every server on the headline point, cheapest first: CPU-µs per request, the capacity it implies
    (requests per core-second), req/s (≥ … ⚑ where client-bound), P99, and the CPU Δ against the
    cheapest other server."""
    rows = []
    for r in _servers(ctx, scenario):
        s, best = str(r["server"]), r["best_other"]
        cap = f"{1e6 / r['est']:,.0f}" if r["est"] > 0 else "—"
        rps = ctx.stats.estimate((ctx.suite, scenario, s), "req_per_s")
        rows.append({
            "Server": display_name(s),
            "CPU-µs per request (95 % CI)": _figure(ctx, scenario, s, COST, fmt=",.2f"),
            "Requests per core-second": cap,
            "req/s": bound_figure(fmt_mean_ci(mean_ci_of(rps)), estimate_bound(rps)),
            "P99, ms": _figure(ctx, scenario, s, P99, scale=1e3, fmt=",.2f"),
            "CPU-µs Δ vs the cheapest other": f"{r['delta']} vs {short_name(best)}" if best else "—",
        })
    return pd.DataFrame(rows)


def section_lines(ctx: ReportContext, a: str, b: str) -> list[str]:
    """Per declared section: a against b on CPU-µs per request, the smallest and largest Δ over its
    points, each with its interval and verdict."""
    labels = scenario_labels(ctx.runs) if not ctx.runs.empty else {}
    out = []
    for sec in declared_sections(ctx.suite):
        rows = select(ctx.runs, sec.where)
        deltas = []
        for scen in sorted(set(rows["scenario"])) if not rows.empty else ():
            d = ratio_ci_of(ctx.stats.compare(COST, (ctx.suite, scen, a), (ctx.suite, scen, b)))
            if d.estimate is not None:
                deltas.append((labels.get(scen, scen), d))
        if not deltas:
            continue
        lo = min(deltas, key=lambda x: x[1].estimate)  # type: ignore[arg-type, return-value]
        hi = max(deltas, key=lambda x: x[1].estimate)  # type: ignore[arg-type, return-value]
        span = (f"{format_delta(lo[1])} ({lo[0]})" if lo[0] == hi[0] else
                f"from {format_delta(lo[1])} ({lo[0]}) to {format_delta(hi[1])} ({hi[0]})")
        out.append(f"**{sec.title}** ({len(deltas)} points): {span}.")
    return out


def findings_markdown(ctx: ReportContext) -> str:
    """The report's opening section; empty when the run has no server figure to rank."""
    scen = headline_scenario(ctx)
    if scen is None or not _servers(ctx, scen):
        return ""
    label = scenario_labels(ctx.runs).get(scen, scen)
    servers = compared_servers(ctx)
    a, b = servers[0], ctx.baseline
    parts = ["## Findings", "",
             f"At {label}, the suite's headline point, every server ranked by the CPU time it spends per "
             "request: the figure that compares servers whether or not the load tool was the limit (a "
             "client-bound req/s is a lower bound of the server's, printed ≥ … ⚑). P99 is each server's at its own "
             "closed-loop load (the latency suite offers every server the same load). Each figure holds on this "
             "run's machine, with its 95 % interval and n.", "",
             to_markdown(ranking_table(ctx, scen)), ""]
    lines = section_lines(ctx, a, b) if a != b else []
    if lines:
        parts += [f"{display_name(a)} against {display_name(b)}, CPU-µs per request over each section's points "
                  "(a negative Δ: the first is cheaper):", ""]
        parts += [f"- {x}" for x in lines] + [""]
    parts += [f"- {r}" for r in _run_reasons(ctx)]
    return "\n".join(parts)
