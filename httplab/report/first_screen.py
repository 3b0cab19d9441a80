"""The index's first screen: what the lab measured, on which machines and with which core split,
then "which server for what", per protocol, on the figure a chooser can carry to another load: CPU
time per request and the capacity it implies (requests per core-second). Each cell is the newest
current run's that measured the protocol's headline point, with its n and 95 % interval, and its Δ
against the best other server on that run (the comparisons frame's row, with its verdict).

Why CPU-µs per request and not req/s: on the two-core machine the load tool, not the server, sets
the req/s of the fastest servers (client-bound), so their req/s is a lower bound; the server's own
CPU time per request is not capped by the tool and compares every server (docs/method.md).
Pure functions of the data frames and meta.json; index.render places the result first.
"""
from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ..lab.servers import is_aa_copy, short_name
from ..stats import format_delta
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


def _rows(stats: RunStats, part: str, scenario: str) -> list[dict[str, Any]]:
    est = stats.estimates
    mine = est[(est["suite"] == part) & (est["scenario"] == scenario) & (est["metric"] == METRIC)]
    keep = [_is_contender(str(x)) and pd.notna(e) for x, e in zip(mine["server"], mine["estimate"])]
    mine = mine.loc[pd.Series(keep, index=mine.index, dtype=bool)].sort_values("estimate")
    rows = []
    for _, r in mine.iterrows():
        others = mine[mine["server"] != r["server"]]
        best = others.iloc[0]["server"] if not others.empty else None
        cmp_ = stats.compare(METRIC, (part, scenario, r["server"]), (part, scenario, best)) if best else None
        rows.append({"server": r["server"], "est": float(r["estimate"]), "lo": float(r["lo"]),
                     "hi": float(r["hi"]), "n": int(r["n"]), "best_other": best,
                     "delta": format_delta(ratio_ci_of(cmp_)) if cmp_ is not None else "—"})
    return rows


def _interval(lo: float, hi: float, fmt: str) -> str:
    return f" [{lo:{fmt}} – {hi:{fmt}}]" if math.isfinite(lo) and math.isfinite(hi) else " (no interval)"


def _cost(r: dict[str, Any]) -> str:
    """'1.1 [1.0 – 1.2] µs (n=12), 928,078 req/core-s'."""
    cap = f"{1e6 / r['est']:,.0f} req per core-second" if r["est"] > 0 else ""
    return f"{r['est']:,.1f}{_interval(r['lo'], r['hi'], ',.1f')} µs (n={r['n']}), {cap}"


def which_server_table(runs: Sequence[tuple[str, RunStats]]) -> str:
    """The "which server for what" table, a row per protocol (so that it fits the first screen):
    from the newest of `runs` (run id, its statistics; newest first) that measured its point, the
    cheapest server with its cost, the capacity it implies and its Δ against the next cheapest (with
    the verdict), then every other server with its Δ against the cheapest."""
    body = []
    for proto, part, scenario in PROTOCOLS:
        found = next(((rid, rows) for rid, s in runs if (rows := _rows(s, part, scenario))), None)
        label = f"<th>{html.escape(proto)}</th>"
        if found is None:
            body.append(f"<tr>{label}<td colspan=\"3\">no current run measured it</td></tr>")
            continue
        rid, rows = found
        best, rest = rows[0], rows[1:]
        vs = f"; {html.escape(best['delta'])} vs {html.escape(short_name(best['best_other']))}" if rest else ""
        others = "; ".join(f"{html.escape(short_name(r['server']))} {r['est']:,.1f} µs: {html.escape(r['delta'])}"
                           for r in rest) or "—"
        body.append(f"<tr>{label}<td><strong>{html.escape(short_name(best['server']))}</strong> "
                    f"{html.escape(_cost(best))}{vs}</td><td>{others}</td>"
                    f"<td><code>{html.escape(rid)}</code></td></tr>")
    return ("<h2>Which server for what</h2>\n<p>Per protocol, on its headline point (GET /ping at 100 "
            "connections): the cheapest server's CPU time per request with its 95 % interval and n, the "
            "capacity it implies (requests one core serves per second at that cost) and its Δ against the "
            "next cheapest; then each other server's cost and its Δ against the cheapest (paired by rep, with "
            "the verdict). Lower is better; the figures hold on the run's machine. Tail latency at a stated "
            "offered load and memory per idle connection are in the latency and idle-memory reports below.</p>\n"
            "<table class=\"which\"><thead><tr><th>Protocol</th><th>Cheapest per request</th>"
            "<th>The others: CPU-µs per request, Δ vs the cheapest</th><th>Run</th></tr></thead>\n<tbody>\n"
            + "\n".join(body) + "\n</tbody></table>")


def load_runs(run_ids: Sequence[str], data_root: Path) -> list[tuple[str, RunStats]]:
    """(run id, its statistics) for each run with built data, in the order given."""
    out = []
    for rid in run_ids:
        d = data_root / rid
        if (d / "estimates.parquet").is_file() and (d / "comparisons.parquet").is_file():
            out.append((rid, RunStats(pd.read_parquet(d / "estimates.parquet"),
                                      pd.read_parquet(d / "comparisons.parquet"))))
    return out
