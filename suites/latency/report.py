"""Tables and notebook glue of the latency report (notebooks/latency.ipynb): the three latency
suites (HTTP/1.1, h2c, HTTPS/1.1) read together. The figures come from stats.latency_curves; the
plots from report.latency_plots."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from httplab.stats.cells import format_delta
from httplab.stats.latency_curves import (CONTRAST_FRACTION, CONTRAST_PAIR, KNEE_MULTIPLE,
                                    SHARED_SCENARIO, curve_points, knees)
from httplab.tidy.bounds import SATURATION_MARGIN
from httplab.lab.servers import display_name, sort_servers
from httplab.report.cells import delta
from httplab.lab.suites import suite as lab_suite
from httplab.report.engine import ReportContext, open_group_report
from httplab.report.fmt import fmt_count, fmt_mean_ci, fmt_us
from httplab.report.tables import _with_meta, bound_figure

# the suite's parts, in run order (latency_h1.sh, latency_h2c.sh, latency_https.sh)
LATENCY_SUITES: tuple[str, ...] = lab_suite("latency").parts
PROTOCOL_OF: dict[str, str] = {"latency_h1": "HTTP/1.1", "latency_h2c": "HTTP/2 (h2c)",
                               "latency_https": "HTTPS/1.1"}


def open_latency_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                        raw_root: str | Path = "raw", data_root: str | Path = "data",
                        confidence: float = 0.95, *, baseline: str) -> ReportContext:
    """open_report for the latency suites: the context's run holds all three (those present)."""
    return open_group_report(LATENCY_SUITES, run_dir, out_dir, raw_root, data_root, confidence,
                             baseline=baseline)


def _rate(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt_count(x)


def _load_cell(row: pd.Series) -> str:
    if row["load_model"] == "closed":
        return "closed loop (as fast as 100 requests in flight allow)"
    where = (f"{row['load_fraction']:.0%} of capacity" if not math.isnan(row["load_fraction"])
             else "shared rate")
    extra = ", uncorrected" if row["load_model"] == "open_uncorrected" else ""
    return f"{_rate(row['target_rps'])}/s ({where}{extra})"


def _runs_cell(row: pd.Series) -> str:
    parts = [f"{row['n_ok']} ok"]
    if row["n_saturated"]:
        parts.append(f"{row['n_saturated']} saturated")
    if row["n_failed"]:
        parts.append(f"{row['n_failed']} failed")
    if row["n_client_bound"]:
        parts.append(f"{row['n_client_bound']} client-bound ⚑")
    return ", ".join(parts)


def curve_table(ctx: ReportContext, suite: str) -> pd.DataFrame:
    """`Server | Offered load | Achieved req/s | P50 | P99 | P99.9 | Max | CPU-µs/req | Runs` for one
    suite, one row per point, rising rate within each server."""
    title = f"Latency by offered load: {PROTOCOL_OF.get(suite, suite)}"
    pts = curve_points(ctx.runs[ctx.runs["suite"] == suite], ctx.confidence)
    if pts.empty:
        return _with_meta(pd.DataFrame(), title, f"no data: this run has no {suite} suite")
    rows = []
    for server in sort_servers(set(pts["server"])):
        for _, r in pts[pts["server"] == server].iterrows():
            rows.append({
                "Server": display_name(server), "Offered load": _load_cell(r),
                # a closed-loop point the load tool capped: its req/s is a lower bound ("≥ … ⚑")
                "Achieved req/s": bound_figure(fmt_mean_ci(r["req_per_s"]),
                                               2 * int(r.get("n_client_bound", 0) or 0) >= max(int(r.get("n_ok", 1) or 1), 1)
                                               and bool(r.get("n_client_bound", 0))),
                "P50": fmt_mean_ci(r["lat_p50_us"], fmt_us, show_n=False),
                "P99": fmt_mean_ci(r["lat_p99_us"], fmt_us, show_n=False),
                "P99.9": fmt_mean_ci(r["lat_p999_us"], fmt_us, show_n=False),
                "Max": fmt_mean_ci(r["lat_max_us"], fmt_us, show_n=False),
                "CPU-µs/req": fmt_mean_ci(r["cpu_us_per_req"], lambda x: f"{x:.2f}", show_n=False),
                "Runs": _runs_cell(r),
            })
    caption = (f"Each cell is the geometric mean of the point's ok runs with its {ctx.confidence:.0%} "
               f"t interval on the log scale (n = ok runs, in the req/s column). Open-model latency "
               f"counts from each request's scheduled send time (oha --latency-correction). A run is "
               f"saturated when it achieved less than {1 - SATURATION_MARGIN:.0%} of its target rate; "
               f"saturated and failed runs are counted in Runs and kept out of every figure. "
               f"⚑ client-bound: the load tool's core was saturated and the server's was not.")
    return _with_meta(pd.DataFrame(rows), title, caption)


def knee_table(ctx: ReportContext) -> pd.DataFrame:
    """`Protocol | Server | Capacity | Knee req/s | Knee, share of capacity | Low-load P99 | Reps`."""
    title = f"The knee: highest rate whose P99 stays within {KNEE_MULTIPLE:g}× the low-load P99"
    k = knees(ctx.runs, KNEE_MULTIPLE, ctx.confidence)
    if k.empty:
        return _with_meta(pd.DataFrame(), title, "no data: no open-model fraction points in this run")
    rows = []
    for suite in LATENCY_SUITES:
        sub = k[k["suite"] == suite]
        for server in sort_servers(set(sub["server"])):
            r = sub[sub["server"] == server].iloc[0]
            knee = fmt_mean_ci(r["knee_rps"])
            if r["n_censored"]:
                knee = f"≥ {knee} ({r['n_censored']} of {r['n_reps']} reps never crossed)"
            rows.append({
                "Protocol": PROTOCOL_OF[suite], "Server": display_name(server),
                # one closed-loop run set the rate grid (the reference every fraction is of): it has
                # no interval, and the knee's share of it carries the knee's interval alone
                "Capacity (closed loop)": f"{_rate(r['capacity_rps'])} (one run: the grid's reference)",
                "Knee req/s": knee,
                "Knee / capacity": _knee_share(r),
                "Low-load P99": fmt_mean_ci(r["low_p99_us"], fmt_us),
                "Crossing client-bound ⚑": f"{r['n_tool_bound']} of {r['n_reps']} reps",
            })
    caption = (f"Per rep, the fraction points are taken in order of rate; the knee is where P99 first "
               f"passes {KNEE_MULTIPLE:g}× the P99 at the lowest fraction (10 %), or where a point "
               f"saturates, interpolated between the two points around the crossing (log P99 linear "
               f"in the rate). The cell is the geometric mean over reps with its {ctx.confidence:.0%} "
               f"t interval; a rep that never crossed gives its highest point and makes the cell a "
               f"lower bound (≥). The knee's resolution is the fraction grid (10, 25, 50, 70, 80, 90, "
               f"95, 110 %). Capacity is the server's closed-loop req/s in this run (its first good closed-loop run, "
               f"which set every rep's rates: one run, no interval), as oha with 100 "
               f"requests in flight can draw it: where oha's one core is the limit, the capacity and "
               f"so every fraction are the tool's. ⚑ counts the reps whose crossing point was "
               f"client-bound (oha's core saturated, the server's not): there oha's own lag in sending "
               f"is inside the P99, and the knee says as much about the tool as about the server.")
    return _with_meta(pd.DataFrame(rows), title, caption)


def _knee_share(r: pd.Series) -> str:
    """The knee as a share of the capacity, with the knee's interval over the same capacity."""
    if math.isnan(r["knee_fraction"]):
        return "—"
    k, cap = r["knee_rps"], float(r["capacity_rps"])
    if k.has_interval and cap > 0:
        return f"{r['knee_fraction']:.0%} [{k.low / cap:.0%} – {k.high / cap:.0%}]"
    return f"{r['knee_fraction']:.0%} (n={k.n}, {k.reason or 'no interval'})"


def omission_table(ctx: ReportContext) -> pd.DataFrame:
    """Closed loop vs open model: per protocol and server, the closed-loop P99 (at capacity), the
    P99 at 80 % of capacity timed from the actual send (uncorrected) and from the scheduled send
    (corrected), and the ratio corrected/uncorrected with its interval (paired by rep)."""
    title = "What coordinated omission hides: the same load timed two ways"
    pts = curve_points(ctx.runs, ctx.confidence)
    if pts.empty:
        return _with_meta(pd.DataFrame(), title, "no data")
    rows = []
    for suite in LATENCY_SUITES:
        sub = pts[pts["suite"] == suite]
        for server in sort_servers(set(sub["server"])):
            s = sub[sub["server"] == server]

            def cell(model: str, col: str = "lat_p99_us") -> str:
                m = s[(s["load_model"] == model)
                      & ((model == "closed") | (s["load_fraction"].sub(CONTRAST_FRACTION).abs() < 1e-9))]
                if not len(m):
                    return "no data"
                flag = " ⚑" if 2 * m.iloc[0]["n_client_bound"] > m.iloc[0]["n_ok"] else ""
                return fmt_mean_ci(m.iloc[0][col], fmt_us) + flag

            runs = ctx.runs[(ctx.runs["suite"] == suite) & (ctx.runs["server"] == server)]
            corrected, uncorrected = (runs[runs["scenario"] == sc] for sc in CONTRAST_PAIR)
            r = delta(ctx.stats, "lat_p99_us", corrected, uncorrected, ctx.confidence)
            rows.append({
                "Protocol": PROTOCOL_OF[suite], "Server": display_name(server),
                "Closed loop P99 (at capacity)": cell("closed"),
                f"P99 at {CONTRAST_FRACTION:.0%}, from actual send": cell("open_uncorrected"),
                f"P99 at {CONTRAST_FRACTION:.0%}, from scheduled send": cell("open"),
                "Corrected vs uncorrected": format_delta(r),
            })
    caption = (f"The middle columns are one schedule of requests ({CONTRAST_FRACTION:.0%} of the server's "
               f"capacity) timed two ways: from when a connection actually sent each request (what a "
               f"paced closed-loop tool reports; a request held back by a stall is not timed while it "
               f"waits) and from when the schedule meant to send it (oha --latency-correction). The "
               f"last column is their ratio − 1, paired by rep, with its {ctx.confidence:.0%} interval. "
               f"The closed-loop column is at full speed: it asks fewer questions exactly when the "
               f"server is slow. ⚑ most runs of the cell were client-bound: oha's core was saturated "
               f"and the server's was not, so the corrected latency also holds oha's own lag in "
               f"sending (it cannot tell its lag from the server's); for the fastest servers 80 % of "
               f"the capacity is close to oha's own ceiling.")
    return _with_meta(pd.DataFrame(rows), title, caption)


def shared_rate_words() -> str:
    """'10,000 req/s' for the shared scenario 'r10k' (its id is the rate in thousands)."""
    return f"{fmt_count(float(SHARED_SCENARIO[1:-1]) * 1000)} req/s"


def no_ok_runs(*points: pd.DataFrame) -> str | None:
    """Why a Δ of these points has no figure, when one of them has no ok run: which, and what became
    of its runs ("no ok run at f080: 2 saturated, the rate was not kept"); None when each has one."""
    for runs in points:
        if not runs.empty and not (runs["status"] == "ok").any():
            counts = runs["status"].value_counts()
            what = ", ".join(f"{n} {status}" for status, n in counts.items())
            kept = ", the rate was not kept" if "saturated" in counts else ""
            return f"no ok run at {runs['scenario'].iloc[0]}: {what}{kept}"
    return None


def findings_markdown(ctx: ReportContext) -> str:
    """The report's opening, as every report has: per protocol, each server's P99 at the shared rate
    against the baseline's (its Δ with its interval and verdict, from the comparisons frame), each
    server's knee (the share of its own capacity where P99 leaves the flat part, with its interval
    and n reps), and what coordinated omission hides at 80 % of capacity (corrected against
    uncorrected P99, paired by rep)."""
    from httplab.lab.servers import short_name
    from httplab.report.cells import ratio_ci_of

    k = knees(ctx.runs, KNEE_MULTIPLE, ctx.confidence)
    lines = ["## Findings", "",
             f"Per protocol: each server's P99 at the shared rate ({shared_rate_words()}) against "
             f"{display_name(ctx.baseline)}'s, where its knee lies, and how much a closed-loop tool's "
             "timing hides at 80 % of capacity. Every Δ is a row of the run's comparisons frame, with its "
             f"{ctx.confidence:.0%} interval and verdict; every knee the geometric mean over reps with its interval.", ""]
    for suite in LATENCY_SUITES:
        runs = ctx.runs[ctx.runs["suite"] == suite]
        if runs.empty:
            continue
        servers = sort_servers(set(runs["server"]))
        shared = []
        for s in servers:
            if s == ctx.baseline:
                continue
            row = ctx.stats.compare("lat_p99_us", (suite, SHARED_SCENARIO, s), (suite, SHARED_SCENARIO, ctx.baseline))
            if row is not None:
                shared.append(f"{short_name(s)} {format_delta(ratio_ci_of(row))}")
        knee = []
        for s in servers:
            r = k[(k["suite"] == suite) & (k["server"] == s)]
            if not r.empty and not math.isnan(r.iloc[0]["knee_fraction"]):
                r0 = r.iloc[0]
                bound = "≥ " if r0["n_censored"] else ""
                knee.append(f"{short_name(s)} {bound}{fmt_mean_ci(r0['knee_rps'])} req/s "
                            f"({r0['knee_fraction']:.0%} of its capacity)")
        hidden = []
        for s in servers:
            mine = runs[runs["server"] == s]
            corrected, uncorrected = (mine[mine["scenario"] == sc] for sc in CONTRAST_PAIR)
            if not corrected.empty and not uncorrected.empty:
                text = no_ok_runs(corrected, uncorrected) or format_delta(
                    delta(ctx.stats, 'lat_p99_us', corrected, uncorrected, ctx.confidence))
                hidden.append(f"{short_name(s)} {text}")
        lines.append(f"**{PROTOCOL_OF.get(suite, suite)}**")
        lines.append("")
        if shared:
            lines.append(f"- P99 at {shared_rate_words()} against {short_name(ctx.baseline)}: " + "; ".join(shared) + ".")
        if knee:
            lines.append(f"- The knee (P99 within {KNEE_MULTIPLE:g}× its low-load value): " + "; ".join(knee) + ".")
        if hidden:
            lines.append(f"- Coordinated omission at {CONTRAST_FRACTION:.0%}: P99 timed from the scheduled send against "
                         "the actual send: " + "; ".join(hidden) + ".")
        lines.append("")
    return "\n".join(lines)
