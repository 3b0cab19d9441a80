"""The index's first screen: what the lab measured, on which machines and with which core split,
then "which server for what", per protocol, on three figures a chooser can carry to another load:
CPU time per request and the capacity it implies (requests per core-second), P99 latency at an
offered load every server is given alike (the latency suite's open model) and memory per idle
connection (the idle-memory runs). Each cell is the newest current run's that measured it, with its
n and 95 % interval, and its Δ against the next best server on that run, with its verdict. Every
server's cost per request follows in a table of its own, below the first screen.

Why CPU-µs per request and not req/s: on the two-core machine the load tool, not the server, sets
the req/s of the fastest servers (client-bound), so their req/s is a lower bound; the server's own
CPU time per request is not capped by the tool and compares every server (docs/method.md).
Pure functions of the data frames and meta.json; index.render places the result first.
"""
from __future__ import annotations

import html
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..lab.servers import is_aa_copy, short_name
from ..stats import format_delta, ratio_ci
from ..stats.idle_memory import idle_estimates
from ..stats.methods import DEFAULT_CONFIDENCE
from ..stats.frames import RunStats
from .cells import ratio_ci_of

# (protocol, suite part, scenario): the point each protocol is read on, its suite's headline
PROTOCOLS: tuple[tuple[str, str, str], ...] = (
    ("HTTP/1.1", "http1", "get_ping_c100"),
    ("h2c (HTTP/2 cleartext)", "h2c", "get_ping_c100"),
    ("HTTPS/1.1", "https", "h1_get_ping_c100"),
    ("HTTPS/2", "https", "h2_get_ping_c100"),
    ("HTTP/3", "h3", "get_ping_c100"),
)
METRIC = "cpu_us_per_req"


def _is_contender(server: str) -> bool:
    """A server a chooser could deploy: not the A/A copy, not the floor responders (a reference
    point that answers without parsing), not a pinned variant of the scaling plans."""
    return not is_aa_copy(server) and not server.startswith("floor") and "@" not in server


def machines_text(metas: Sequence[Mapping[str, Any]]) -> str:
    """'AMD EPYC, 2 cores (kernels …v1272, …v782)': the machines the current runs were made on."""
    by_cpu: dict[tuple[str, int], list[str]] = {}
    for m in metas:
        host = m.get("host") if isinstance(m.get("host"), dict) else {}
        key = (str(host.get("cpu_model") or "unknown CPU"), int(host.get("cores") or 0))
        kernel = str(host.get("kernel") or "").replace("Linux ", "")
        kernels = by_cpu.setdefault(key, [])
        if kernel and kernel not in kernels:
            kernels.append(kernel)
    return "; ".join(f"{cpu}, {n} cores" + (f" (kernels {', '.join(sorted(k))})" if k else "")
                     for (cpu, n), k in sorted(by_cpu.items()))


def splits_text(metas: Sequence[Mapping[str, Any]]) -> str:
    """'server on CPU 0, load tool on CPU 1': the core splits of the current runs, most common first."""
    counts: dict[str, int] = {}
    for m in metas:
        if m.get("server_cpus") and m.get("client_cpus"):
            k = f"server on CPU {m['server_cpus']}, load tool on CPU {m['client_cpus']}"
            counts[k] = counts.get(k, 0) + 1
    return "; ".join(k for k, _ in sorted(counts.items(), key=lambda kv: -kv[1]))


def summary_paragraph(metas: Sequence[Mapping[str, Any]]) -> str:
    return ("<p class=\"summary\"><strong>What was measured.</strong> Each server answers the same small "
            "requests (GET /ping, echoes of 64 B to 64 KiB, POST bodies) over HTTP/1.1, h2c, HTTPS/1.1, HTTPS/2 "
            "and HTTP/3 on loopback, loaded by wrk, h2load, oha and the lab's h3load in a closed loop, every "
            "server pinned to its own core and the load tool to others: "
            f"{html.escape(splits_text(metas) or 'see each run')}. Machines of the current runs: "
            f"{html.escape(machines_text(metas) or 'not recorded')}; the same comparison reads differently on "
            "each build of the machine, so a figure holds for its run's machine. <strong>C</strong> is the lab's "
            "own event-loop server, which stands in for the write-ups' xKit (its source cannot be built); "
            "each write-up's claims and the lab's verdicts are on the claims page.</p>")


# (protocol, latency suite part): P99 at OFFERED_SCENARIO, the offered load every server is given
# alike (the latency suite's r10k, r25k and r50k; 25,000 req/s is held by every server of the 2-core
# runs, so its P99 is a latency, not a queue). The latency suite has no HTTPS/2 or HTTP/3 part.
LATENCY_PARTS: Mapping[str, str] = {"HTTP/1.1": "latency_h1", "h2c (HTTP/2 cleartext)": "latency_h2c",
                                    "HTTPS/1.1": "latency_https"}
OFFERED_SCENARIO, OFFERED_RPS = "r25k", 25_000
LATENCY_METRIC = "lat_p99_us"
# (protocol, idle-memory mode): KiB per idle keep-alive connection at IDLE_CONNS connections asked
# (the measurement's largest N, where the fixed part of the process weighs least); it holds
# cleartext connections only.
IDLE_MODES: Mapping[str, str] = {"HTTP/1.1": "h1", "h2c (HTTP/2 cleartext)": "h2c"}
IDLE_CONNS = 20_000


def _ranked(est: pd.DataFrame, delta: Callable[[str, str], str]) -> list[dict[str, Any]]:
    """The rows of `est` (one per server, lowest estimate first) with each server's Δ against the
    lowest other server, `delta(server, that server)`: the cells both kinds of figure print."""
    rows = []
    for _, r in est.iterrows():
        others = est[est["server"] != r["server"]]
        best = str(others.iloc[0]["server"]) if not others.empty else None
        rows.append({"server": r["server"], "est": float(r["estimate"]), "lo": float(r["lo"]),
                     "hi": float(r["hi"]), "n": int(r["n"]), "best_other": best,
                     "delta": delta(r["server"], best) if best is not None else "—",
                     "reason": str(r["reason"] or "")})
    return rows


def ranked_rows(stats: RunStats, part: str, scenario: str, metric: str = METRIC) -> list[dict[str, Any]]:
    """Each contender's estimate of `metric` on the point, lowest first, with its Δ against the
    lowest other server (the comparisons frame's row and verdict)."""
    est = stats.estimates
    mine = est[(est["suite"] == part) & (est["scenario"] == scenario) & (est["metric"] == metric)]
    keep = [_is_contender(str(x)) and pd.notna(e) for x, e in zip(mine["server"], mine["estimate"])]
    mine = mine.loc[pd.Series(keep, index=mine.index, dtype=bool)].sort_values("estimate")

    def delta(a: str, b: str) -> str:
        cmp_ = stats.compare(metric, (part, scenario, a), (part, scenario, b))
        return format_delta(ratio_ci_of(cmp_)) if cmp_ is not None else "—"
    return _ranked(mine, delta)


def idle_rows(frame: pd.DataFrame, mode: str, asked: int = IDLE_CONNS,
              confidence: float = DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """As _rows, for memory per idle connection (tidy.idle_memory's frame): each contender's KiB
    per connection at `asked` connections (stats.idle_memory: geometric mean, t interval), least
    first, with its Δ against the least other server: Welch's t on the logs, the points being
    independent (no reps to pair), worded "less memory" / "more memory" when the interval is clear."""
    g = frame[(frame["mode"] == mode) & (frame["conns_asked"] == asked) & (frame["status"] == "ok")]
    g = g.loc[g["server"].map(lambda x: _is_contender(str(x))).astype(bool)]
    est = idle_estimates(g, confidence).dropna(subset=["estimate"]).sort_values("estimate")
    values = {s: v["kib_per_conn"].to_numpy(dtype=float) for s, v in g.groupby("server")}

    def delta(a: str, b: str) -> str:
        d = ratio_ci(values[a], values[b], confidence)
        word = ("less memory" if (d.high or 0) < 0 else "more memory") if d.clear else None
        return format_delta(replace(d, verdict=word))
    return _ranked(est, delta)


def _interval(lo: float, hi: float, fmt: str, reason: str = "") -> str:
    """' [lo – hi]', or why there is none ('all runs equal; no CI')."""
    return f" [{lo:{fmt}} – {hi:{fmt}}]" if math.isfinite(lo) and math.isfinite(hi) else f" ({reason or 'no interval'})"


def _cost(r: dict[str, Any]) -> str:
    """'1.1 [1.0 – 1.2] µs (n=12), 928,078 req per core-second'."""
    cap = f"{1e6 / r['est']:,.0f} req per core-second" if r["est"] > 0 else ""
    return f"{r['est']:,.1f}{_interval(r['lo'], r['hi'], ',.1f')} µs (n={r['n']}), {cap}"


def _p99(r: dict[str, Any]) -> str:
    """'0.94 [0.62 – 1.41] ms (n=5)'."""
    return f"{r['est'] / 1e3:,.2f}{_interval(r['lo'] / 1e3, r['hi'] / 1e3, ',.2f')} ms (n={r['n']})"


def _kib(r: dict[str, Any]) -> str:
    """'0.52 [0.46 – 0.58] KiB (n=5)'."""
    return f"{r['est']:,.2f}{_interval(r['lo'], r['hi'], ',.2f', r.get('reason', ''))} KiB (n={r['n']})"


def _best_cell(found: tuple[str, list[dict[str, Any]]] | None, fmt: Callable[[dict[str, Any]], str],
               missing: str) -> str:
    """The lowest server's figure, its Δ against the next lowest (with the verdict) and the run."""
    if found is None:
        return f"<td class=\"none\">{html.escape(missing)}</td>"
    rid, rows = found
    best = rows[0]
    vs = f"; {html.escape(best['delta'])} vs {html.escape(short_name(best['best_other']))}" if len(rows) > 1 else ""
    return (f"<td><strong>{html.escape(short_name(best['server']))}</strong> {html.escape(fmt(best))}{vs}"
            f" <code class=\"run\">{html.escape(rid)}</code></td>")


def _newest(runs: Sequence[tuple[str, Any]], rows_of: Callable[[Any], list[dict[str, Any]]]
            ) -> tuple[str, list[dict[str, Any]]] | None:
    """(run id, rows) of the newest run (runs are newest first) whose rows are not empty."""
    return next(((rid, rows) for rid, x in runs if (rows := rows_of(x))), None)


def which_server_table(runs: Sequence[tuple[str, RunStats]],
                       idle: Sequence[tuple[str, pd.DataFrame]] = ()) -> str:
    """The "which server for what" table, a row per protocol (so that it fits the first screen), each
    figure from the newest of the runs (newest first) that measured it: the cheapest server's CPU
    time per request with the capacity it implies, the lowest P99 at the offered load every server
    is given alike (latency suite), the least memory per idle connection (idle-memory runs), each
    with its n, interval and Δ against the next best server with the verdict."""
    body = []
    for proto, part, scenario in PROTOCOLS:
        lat = LATENCY_PARTS.get(proto)
        mode = IDLE_MODES.get(proto)
        cells = [
            _best_cell(_newest(runs, lambda s: ranked_rows(s, part, scenario)), _cost, "no current run measured it"),
            _best_cell(_newest(runs, lambda s: ranked_rows(s, lat, OFFERED_SCENARIO, LATENCY_METRIC)) if lat else None,
                       _p99, "no current run measured it" if lat else "the latency suite has no such part"),
            _best_cell(_newest(idle, lambda f: idle_rows(f, mode)) if mode else None, _kib,
                       "no current run measured it" if mode else "measured over cleartext only"),
        ]
        body.append(f"<tr><th>{html.escape(proto)}</th>{''.join(cells)}</tr>")
    return ("<h2>Which server for what</h2>\n<p>Per protocol, the best server on three figures (lower is "
            "better), each with its 95 % interval, n and Δ against the next best server with the verdict, from "
            "the newest run that measured it, and holding on that run's machine: CPU time per request on GET /ping "
            "at 100 connections and the capacity it implies; P99 when every server is offered "
            f"{OFFERED_RPS:,} req/s (open model, latency suite); memory per idle keep-alive connection with "
            f"{IDLE_CONNS:,} open. Every server's cost per request follows the table.</p>\n"
            "<table class=\"which\"><thead><tr><th>Protocol</th><th>CPU per request (cheapest)</th>"
            f"<th>P99 at {OFFERED_RPS:,} req/s offered (lowest)</th><th>Memory per idle connection (least)</th>"
            "</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody></table>")


def others_table(runs: Sequence[tuple[str, RunStats]]) -> str:
    """Every other contender's CPU time per request per protocol, with its Δ against the cheapest
    (paired by rep, with the verdict), from the same run as the which-server table's."""
    body = []
    for proto, part, scenario in PROTOCOLS:
        found = _newest(runs, lambda s: ranked_rows(s, part, scenario))
        if found is None:
            continue
        rid, rows = found
        others = "; ".join(f"{html.escape(short_name(r['server']))} {r['est']:,.1f} µs: {html.escape(r['delta'])}"
                           for r in rows[1:]) or "—"
        body.append(f"<tr><th>{html.escape(proto)}</th><td>{others}</td><td><code>{html.escape(rid)}</code></td></tr>")
    if not body:
        return ""
    return ("<h3>Every server's cost per request</h3>\n<table class=\"others\"><thead><tr><th>Protocol</th>"
            "<th>CPU-µs per request, Δ vs the cheapest</th><th>Run</th></tr></thead>\n<tbody>\n"
            + "\n".join(body) + "\n</tbody></table>")


def load_idle(run_ids: Sequence[str], data_root: Path) -> list[tuple[str, pd.DataFrame]]:
    """(run id, its idle-memory frame) for each run that has one, in the order given."""
    return [(rid, pd.read_parquet(data_root / rid / "idle_memory.parquet")) for rid in run_ids
            if (data_root / rid / "idle_memory.parquet").is_file()]


def load_runs(run_ids: Sequence[str], data_root: Path) -> list[tuple[str, RunStats]]:
    """(run id, its statistics) for each run with built data, in the order given."""
    out = []
    for rid in run_ids:
        d = data_root / rid
        if (d / "estimates.parquet").is_file() and (d / "comparisons.parquet").is_file():
            out.append((rid, RunStats(pd.read_parquet(d / "estimates.parquet"),
                                      pd.read_parquet(d / "comparisons.parquet"))))
    return out
