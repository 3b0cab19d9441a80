"""Seed-style tables built from the runs frame. Every builder returns a DataFrame ready for
`to_markdown(index=False)`, with `df.attrs["title"]` and `df.attrs["caption"]` (the caption states
n and the confidence level). An empty DataFrame (with a caption saying why) means "no data".
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..stats.select import Where, column, ok_runs, select
from .fmt import fmt_bytes_rate, fmt_float, fmt_mean_ci, fmt_size, fmt_us
from .scenarios import scenario_label, scenario_sort_key
from ..lab.servers import contestants, display_name, is_reference, short_name, sort_servers
from .quality import mostly_client_bound
from .method_words import ci_words, delta_words
from ..stats import format_delta, mean_ci, tail_ratio
from ..stats.frames import RunStats
from .cells import comparison, delta_text, ratio_ci_of

METRIC_LABELS: dict[str, str] = {
    "req_per_s": "req/s", "bytes_per_s": "Transfer/s", "cpu_us_per_req": "CPU-µs/req",
    "cpu_pct": "CPU %", "lat_p50_us": "P50 latency", "lat_p99_us": "P99 latency",
}

VARY_FORMAT: dict[str, Callable[[float], str]] = {
    "size_bytes": fmt_size,
    "connections": lambda v: f"{int(v)}",
    "pipeline": lambda v: f"{int(v)}",
    "streams": lambda v: f"{int(v)}",
}


def _with_meta(df: pd.DataFrame, title: str, caption: str) -> pd.DataFrame:
    df.attrs["title"] = title
    df.attrs["caption"] = caption
    return df


def _ci_words(confidence: float) -> str:
    return ci_words(confidence)


def _delta_words(confidence: float) -> str:
    return delta_words(confidence)


CLIENT_BOUND_MARK = "⚑"


def bound_figure(text: str, client_bound: bool) -> str:
    """A req/s cell: as printed, or for a client-bound point "≥ … ⚑": the load tool's ceiling is a
    lower bound of the server's req/s, never its figure (the audit's bare_client_bound checks it)."""
    return f"≥ {text} {CLIENT_BOUND_MARK}" if client_bound and text != "no data" else text


def req_cell(runs: pd.DataFrame, confidence: float = 0.95, show_n: bool = True, fmt=None) -> str:
    """One cell's req/s from its ok runs (geometric mean, interval, n), as a bound where most of them
    were client-bound (bound_figure)."""
    ci = mean_ci(column(runs, "req_per_s"), confidence)
    text = fmt_mean_ci(ci, fmt, show_n=show_n) if fmt is not None else fmt_mean_ci(ci, show_n=show_n)
    return bound_figure(text, mostly_client_bound(runs))


def estimate_bound(est: "pd.Series | None") -> bool:
    """Whether an estimates row is a client-bound point (most of its ok runs: client_bound_share ≥ ½)."""
    if est is None or "client_bound_share" not in est or pd.isna(est["client_bound_share"]):
        return False
    return float(est["client_bound_share"]) >= 0.5


def delta_cell(a: pd.DataFrame, b: pd.DataFrame, metric: str, confidence: float = 0.95,
               stats: RunStats | None = None) -> str:
    """The formatted Δ of `metric` between two servers' runs of one scenario (the comparisons row,
    report.cells). When both were client-bound (most of their runs), req/s measured the load tool
    on both sides, so no req/s Δ is reported; the cell gives the Δ of capacity (requests per
    server CPU-second) instead."""
    row = comparison(stats, metric, a, b, confidence)
    if metric == "req_per_s" and row is not None and (row["verdict"] == "both client-bound"
                                                      or bool(row.get("a_client_bound")) or bool(row.get("b_client_bound"))):
        # a client-bound side's req/s is the load tool's ceiling: with both, no req/s Δ at all; with
        # one, the req/s Δ is a bound (report.cells); the verdict is read on capacity, which the tool
        # does not cap
        cap = comparison(stats, "capacity_rps", a, b, confidence)
        head = "both client-bound" if row["verdict"] == "both client-bound" else format_delta(ratio_ci_of(row))
        return f"{CLIENT_BOUND_MARK} {head}; capacity Δ {format_delta(ratio_ci_of(cap))}"
    return format_delta(ratio_ci_of(row))


def client_bound_words() -> str:
    return (f"{CLIENT_BOUND_MARK} = client-bound: the load generator's cores were saturated and the "
            "server's were not, so req/s measured the tool and is a lower bound of the server's (≥); a req/s "
            "Δ with one client-bound side is a bound (the gap is at least the printed one where that side "
            "leads, no verdict where it trails) and is read on capacity (requests per server CPU-second) "
            "beside it; where both sides are, the Δ is of capacity only")


def comparison_table(runs: pd.DataFrame, where: Where | None = None, vary: str = "connections",
                     servers: Sequence[str] | None = None, baseline: str | None = None,
                     metric: str = "req_per_s", latency_metric: str = "lat_p50_us",
                     references: Sequence[str] | None = None, transfer: bool = False,
                     vary_label: str | None = None, title: str = "", confidence: float = 0.95,
                     stats: RunStats | None = None,
                     transfer_source: str = "binary units as wrk prints them",
                     latency_source: str = "percentile from the run's full histogram") -> pd.DataFrame:
    """`Connections | A req/s | B req/s | A latency | B latency | Δ A vs B | R req/s (ref) …`

    One row per value of `vary`. servers: the columns' servers (default: the contestants present,
    lab.servers.contestants, then the baseline); baseline: what the Δ columns compare with (None:
    no Δ columns); references: extra req/s columns (default: the reference servers present,
    lab.servers.is_reference). req/s cells: mean ± half-width of the t CI, with n. Latency: mean
    over runs of each run's P50 (from its full histogram). With transfer=True, `X Transfer/s`
    columns (mean bytes read per second, binary units as wrk prints). Δ of `metric` for every
    server of `servers` other than baseline against baseline. Reference servers that have data
    here are added as extra columns (req/s only). Failed runs are left out of every number.
    """
    sub = select(runs, where)
    title = title or "comparison"
    if sub.empty:
        return _with_meta(pd.DataFrame(), title, "no data for this table in this run")
    ok = ok_runs(sub)
    label = vary_label or vary
    fmt_level = VARY_FORMAT.get(vary, str)
    present = set(sub["server"])
    if servers is None:
        servers = list(dict.fromkeys(contestants(present) + ([baseline] if baseline else [])))
    # a server with no run in this table (its manifest lists no such route) gets no column; the
    # baseline keeps its own, so that the Δ columns say why they are empty
    servers = [s for s in servers if s in present or s == baseline]
    refs = [r for r in sort_servers(set(references if references is not None else filter(is_reference, present))
                                    & present) if r not in servers]
    others = [s for s in servers if s != baseline] if baseline else []
    lat_label = latency_metric.removeprefix("lat_").removesuffix("_us").upper()
    rows = []
    for level in sorted(sub[vary].unique()):
        at = ok[ok[vary] == level]
        row: dict[str, str] = {label: fmt_level(level)}
        for s in servers:
            srv = at[at["server"] == s]
            row[f"{short_name(s)} req/s"] = (req_cell(srv, confidence) if metric == "req_per_s" else
                                             fmt_mean_ci(mean_ci(column(srv, metric), confidence)))
        if transfer:
            for s in servers:
                srv = at[at["server"] == s]
                ci = mean_ci(column(srv, "bytes_per_s"), confidence)
                row[f"{short_name(s)} Transfer/s"] = fmt_mean_ci(ci, fmt_bytes_rate)
        else:
            for s in servers:
                srv = at[at["server"] == s]
                ci = mean_ci(column(srv, latency_metric), confidence)
                row[f"{short_name(s)} {lat_label}"] = fmt_mean_ci(ci, fmt_us)
            for s in servers:
                # the write-ups' "Latency" column is the tool's mean: shown beside the percentile
                srv = at[at["server"] == s]
                if "lat_mean_us" in srv and srv["lat_mean_us"].notna().any():
                    row[f"{short_name(s)} mean latency"] = fmt_mean_ci(mean_ci(column(srv, "lat_mean_us"), confidence), fmt_us)
        for s in others:
            row[f"Δ {short_name(s)} vs {short_name(baseline)}"] = delta_cell(  # type: ignore[arg-type]
                at[at["server"] == s], at[at["server"] == baseline], metric, confidence, stats)
        for ref in refs:
            srv = at[at["server"] == ref]
            row[f"{short_name(ref)} req/s (ref)"] = (req_cell(srv, confidence) if metric == "req_per_s" else
                                                     fmt_mean_ci(mean_ci(column(srv, metric), confidence)))
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = [label]
    df.attrs["column_groups"] = [[c for c in df.columns if c.endswith(" req/s") or c.startswith("Δ ")],
                                 [c for c in df.columns if c.endswith((" Transfer/s", f" {lat_label}", " mean latency"))]]
    n_failed = int((sub["status"] != "ok").sum())
    lat_txt = (f"Transfer/s = mean bytes read per second by the client (responses; {transfer_source}), "
               "with its interval and n as req/s"
               if transfer else
               f"{lat_label} = mean over runs of each run's {lat_label} latency "
               f"({latency_source}), with its interval and n as req/s; mean latency = the same for each "
               "run's mean latency (what the write-ups print as 'Latency')")
    cap = (f"{METRIC_LABELS.get(metric, metric)}: mean ± half-width of the {_ci_words(confidence)}; {lat_txt}; "
           + (f"{_delta_words(confidence)}; " if others else "") + f"{client_bound_words()}. Servers: "
           + ", ".join(f"{short_name(s)} = {display_name(s)}" for s in list(servers) + refs)
           + ("; reference servers as extra columns marked (ref)" if refs else "")
           + (f". {n_failed} failed run(s) excluded (see the failed-runs table)." if n_failed else "."))
    return _with_meta(df, title, cap)


def _against_baseline(sub: pd.DataFrame, servers: Sequence[str] | None, baseline: str | None):
    """(scenario label, server, its ok runs, the baseline's ok runs of that scenario) per row
    (no baseline: its runs are empty)."""
    for scen, label, s, grp in _scenario_rows(sub, servers):
        yield label, s, ok_runs(grp), ok_runs(sub[(sub["scenario"] == scen) & (sub["server"] == baseline)])


def _scenario_rows(sub: pd.DataFrame, servers: Sequence[str] | None):
    present = sort_servers(set(sub["server"]))
    chosen = [s for s in (servers or present) if s in present]
    firsts = sub.drop_duplicates("scenario")
    order = sorted(firsts.to_dict("records"), key=scenario_sort_key)
    for first in order:
        scen = first["scenario"]
        for s in chosen:
            grp = sub[(sub["scenario"] == scen) & (sub["server"] == s)]
            if not grp.empty:
                yield scen, scenario_label(first), s, grp


def latency_table(runs: pd.DataFrame, where: Where | None = None, servers: Sequence[str] | None = None,
                  baseline: str | None = None, confidence: float = 0.95, title: str = "Latency percentiles",
                  stats: RunStats | None = None,
                  latency_note: str = "Pipelined scenarios: one latency sample per batch.") -> pd.DataFrame:
    """Per scenario and server: P50, P99, P99.9 (mean over runs of per-run percentiles), P99/P50
    (per run, then mean ± CI), and Δ P99 vs the baseline server (no baseline: no Δ column)."""
    sub = select(runs, where)
    if sub.empty:
        return _with_meta(pd.DataFrame(), title, "no data for this table in this run")
    rows = []
    for label, s, ok, base in _against_baseline(sub, servers, baseline):
        ratio = mean_ci(tail_ratio(column(ok, "lat_p99_us"), column(ok, "lat_p50_us")), confidence)
        row = {
            "Scenario": label, "Server": display_name(s), "n": len(ok),
            "P50": fmt_mean_ci(mean_ci(column(ok, "lat_p50_us"), confidence), fmt_us, show_n=False),
            "P99": fmt_mean_ci(mean_ci(column(ok, "lat_p99_us"), confidence), fmt_us, show_n=False),
            "P99.9": fmt_mean_ci(mean_ci(column(ok, "lat_p999_us"), confidence), fmt_us, show_n=False),
            "P99/P50": fmt_mean_ci(ratio, lambda v: fmt_float(v, 2)),
        }
        if baseline:
            row[f"Δ P99 vs {short_name(baseline)}"] = ("—" if s == baseline or base.empty else delta_text(
                stats, "lat_p99_us", ok, base, confidence))
        rows.append(row)
    cap = ("Percentiles per run from that run's full latency histogram (nearest rank), then the mean "
           f"over the n ok runs ± half-width of the {_ci_words(confidence)}; P99/P50 per run, then mean ± half-width of the {_ci_words(confidence)}; "
           + (f"{_delta_words(confidence)} (negative = lower tail latency than the baseline). " if baseline else "")
           + latency_note)
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Scenario", "Server"]
    return _with_meta(df, title, cap)


def cost_table(runs: pd.DataFrame, where: Where | None = None, servers: Sequence[str] | None = None,
               baseline: str | None = None, confidence: float = 0.95, title: str = "Server cost",
               stats: RunStats | None = None) -> pd.DataFrame:
    """Per scenario and server: req/s, server CPU % and CPU-µs per request (mean ± CI), peak RSS
    (largest over the runs), and Δ CPU-µs/request vs the baseline (no baseline: no Δ column)."""
    sub = select(runs, where)
    if sub.empty:
        return _with_meta(pd.DataFrame(), title, "no data for this table in this run")
    rows = []
    for label, s, ok, base in _against_baseline(sub, servers, baseline):
        rss = ok["rss_peak_kb"].max() if not ok.empty else np.nan
        row = {
            "Scenario": label, "Server": display_name(s), "n": len(ok),
            "req/s": req_cell(ok, confidence, show_n=False),
            "capacity (req/CPU-s)": fmt_mean_ci(mean_ci(column(ok, "capacity_rps"), confidence), show_n=False),
            "CPU %": fmt_mean_ci(mean_ci(column(ok, "cpu_pct"), confidence), lambda v: fmt_float(v, 1), show_n=False),
            "CPU-µs/req": fmt_mean_ci(mean_ci(column(ok, "cpu_us_per_req"), confidence),
                                      lambda v: fmt_float(v, 2), show_n=False),
            # a maximum, not an estimate: no interval, the runs it is the largest of instead
            "Peak RSS": "not recorded" if pd.isna(rss) else f"{rss / 1024:.1f} MiB (max of {len(ok)} runs)",
        }
        if baseline:
            row[f"Δ CPU-µs/req vs {short_name(baseline)}"] = ("—" if s == baseline or base.empty else format_delta(
                ratio_ci_of(comparison(stats, "cpu_us_per_req", ok, base, confidence))))
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Scenario", "Server"]
    df.attrs["column_groups"] = [["n", "req/s", "capacity (req/CPU-s)", "CPU %"],
                                 ["CPU-µs/req", *[c for c in df.columns if str(c).startswith("Δ ")], "Peak RSS"]]
    cap = (f"Mean ± half-width of the {_ci_words(confidence)}. CPU = utime + stime of the server's "
           "whole process tree over the measured window (/proc); CPU % of one core; CPU-µs/req = CPU "
           "time / completed requests; capacity = requests per server CPU-second (1e6 / CPU-µs/req), a "
           "throughput that does not depend on the client; peak RSS = the largest over the runs of the "
           "measured window's own peak (VmHWM summed over the tree, reset before the window; runs made "
           "before that recorded only the peak since start-up and show 'not recorded'). "
           + (f"{_delta_words(confidence)} (negative = cheaper than the baseline); " if baseline else "")
           + f"{client_bound_words()}.")
    return _with_meta(df, title, cap)


def versus_table(runs: pd.DataFrame, server: str | None = None, others: Sequence[str] | None = None,
                 where: Where | None = None, metrics: Sequence[str] = ("req_per_s", "cpu_us_per_req"),
                 confidence: float = 0.95,
                 title: str = "", stats: RunStats | None = None) -> pd.DataFrame:
    """Per scenario, Δ of `server` against each of `others` on each metric (ratio of means − 1
    with its CI): the comparison a reader of the cost table wants when the baseline is another
    contestant but the question is "is the contestant as cheap as a production server?". server:
    default the first contestant present (lab.servers.contestants); others: default the reference
    servers present (lab.servers.is_reference). Scenarios where a side has no ok runs are left out."""
    sub = select(runs, where)
    present = set(sub["server"]) if not sub.empty else set()
    if server is None:
        server = next(iter(contestants(present)), None)
    if others is None:
        others = [s for s in sort_servers(present) if is_reference(s)]
    title = title or (f"{display_name(server)} against the reference servers" if server
                      else "The contestant against the reference servers")
    if server is None or not others:
        return _with_meta(pd.DataFrame(), title, "no contestant or no reference server in this run")
    names = {"req_per_s": "req/s", "cpu_us_per_req": "CPU-µs/req", "lat_p99_us": "P99"}
    rows = []
    for scen in sorted(sub["scenario"].unique(), key=lambda sc: scenario_sort_key(sub[sub["scenario"] == sc].iloc[0])) \
            if not sub.empty else []:
        grp = sub[sub["scenario"] == scen]
        mine = ok_runs(grp[grp["server"] == server])
        row: dict[str, object] = {"Scenario": scenario_label(grp.iloc[0])}
        for other in others:
            theirs = ok_runs(grp[grp["server"] == other])
            if mine.empty or theirs.empty:
                continue
            for m in metrics:
                row[f"{short_name(server)} vs {short_name(other)}: {names.get(m, m)}"] = delta_cell(
                    mine, theirs, m, confidence, stats)
        if len(row) > 1:
            rows.append(row)
    if not rows:
        return _with_meta(pd.DataFrame(), title, "no scenario has both servers in this run")
    cap = (f"{display_name(server)} against {', '.join(display_name(o) for o in others)}; "
           f"{_delta_words(confidence)} (for CPU-µs/req, negative = {short_name(server)} is cheaper); "
           f"{client_bound_words()}.")
    return _with_meta(pd.DataFrame(rows).fillna("—"), title, cap)


def failed_runs_table(runs: pd.DataFrame, title: str = "Failed runs") -> pd.DataFrame:
    """Server, scenario, rep, fail reason and raw path of every failed run."""
    failed = runs[runs["status"] != "ok"] if not runs.empty else runs
    if failed.empty:
        return _with_meta(pd.DataFrame(), title, "no failed runs")
    df = pd.DataFrame({
        "Server": failed["server"].map(display_name).to_numpy(),
        "Scenario": [scenario_label(r) for _, r in failed.iterrows()],
        "Rep": failed["rep"].to_numpy(),
        "Fail reason": failed["fail_reason"].to_numpy(),
        "Raw": failed["raw_path"].to_numpy(),
    })
    return _with_meta(df, title, f"{len(df)} failed run(s); excluded from every statistic.")


def verify_table(verify: pd.DataFrame, title: str = "Verify gate") -> pd.DataFrame:
    """One row per server: rep blocks whose gate passed, checks per block, failed checks (if any)."""
    if verify.empty:
        return _with_meta(pd.DataFrame(), title, "no verify-gate transcripts in this run")
    rows = []
    for server in sort_servers(set(verify["server"])):
        v = verify[verify["server"] == server]
        passed = v["passed"].astype(bool)
        failed = v[~passed]
        rows.append({
            "Server": display_name(server),
            "Result": "PASS" if passed.all() else "FAIL",
            "Rep blocks passed": f"{int(passed.sum())}/{len(v)}",
            "Checks per block": "/".join(str(int(p + f)) for p, f in sorted(set(zip(v["n_pass"], v["n_fail"])))),
            "Failed checks": "; ".join(f"r{r}: {c.replace(chr(10), '; ')}"
                                       for r, c in zip(failed["rep"], failed["failed_checks"])) or "—",
        })
    n_fail = int((~verify["passed"].astype(bool)).sum())
    cap = ("Before any load every route of the suite is requested over the suite's protocol (status "
           "200, Content-Length, exact body). "
           + (f"{n_fail} gate(s) failed: that server was not loaded in that rep block."
              if n_fail else "All gates passed."))
    return _with_meta(pd.DataFrame(rows), title, cap)


MAX_COLUMNS = 8  # a Markdown table wider than this overflows GitHub's page width


def column_parts(df: pd.DataFrame, max_columns: int = MAX_COLUMNS) -> list[list[str]]:
    """The column lists of the tables `df` is shown as: all of them when they fit in max_columns,
    else the key columns (df.attrs["key_columns"], default the first) repeated in every part and
    the others packed in order, keeping each group of df.attrs["column_groups"] (lists of column
    names that belong together, e.g. one metric's columns and its Δ) in one part where it fits."""
    cols = [str(c) for c in df.columns]
    if len(cols) <= max_columns:
        return [cols]
    keys = [c for c in df.attrs.get("key_columns", cols[:1]) if c in cols]
    room = max(1, max_columns - len(keys))
    rest = [c for c in cols if c not in keys]
    if not df.attrs.get("column_groups"):  # no groups: parts of (nearly) equal width
        n = -(-len(rest) // room)
        size = -(-len(rest) // n)
        return [keys + rest[i:i + size] for i in range(0, len(rest), size)]
    groups: list[list[str]] = []
    seen: set[str] = set()
    declared = {c: g for g in df.attrs.get("column_groups", []) for c in g}
    for c in rest:
        if c in seen:
            continue
        g = [x for x in declared.get(c, [c]) if x in rest and x not in seen] or [c]
        seen.update(g)
        groups.extend(g[i:i + room] for i in range(0, len(g), room))
    parts: list[list[str]] = []
    for g in groups:
        if parts and len(parts[-1]) + len(g) <= room:
            parts[-1].extend(g)
        else:
            parts.append(list(g))
    return [keys + p for p in parts]


def to_markdown(df: pd.DataFrame, max_columns: int = MAX_COLUMNS) -> str:
    """Title, table and caption as Markdown ('no data' paragraph when empty). A table wider than
    max_columns is split into narrower ones (column_parts), each repeating the key columns."""
    title = df.attrs.get("title", "")
    cap = df.attrs.get("caption", "")
    head = f"**{title}**\n\n" if title else ""
    if df.empty:
        return f"{head}*{cap[:1].upper() + cap[1:].rstrip('.')}.*" if cap else f"{head}*No data.*"
    parts = column_parts(df, max_columns)
    n_keys = len(set.intersection(*(set(p) for p in parts))) if len(parts) > 1 else 0
    bodies = []
    for i, cols in enumerate(parts):
        body = df[cols].to_markdown(index=False, disable_numparse=True)
        if len(parts) > 1:
            body = f"*Part {i + 1} of {len(parts)}: {', '.join(cols[n_keys:])}*\n\n{body}"
        bodies.append(body)
    body = "\n\n".join(bodies)
    return f"{head}{body}\n\n*{cap}*" if cap else f"{head}{body}"


def table_html(df: pd.DataFrame) -> str:
    """A table with its title and caption (df.attrs) as HTML, for the standalone pages (idle memory,
    cost) that are written without nbconvert; text escaped."""
    import html
    cap = html.escape(str(df.attrs.get("caption", "")))
    head = f"<h2>{html.escape(str(df.attrs.get('title', '')))}</h2>"
    if df.empty:
        return f"{head}<p><em>{cap}</em></p>"
    return f"{head}{df.to_html(index=False, escape=True, border=0)}<p><em>{cap}</em></p>"
