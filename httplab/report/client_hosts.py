"""The per-host side of points that several client hosts loaded at once (the tidy client_hosts
frame, docs/data.md): how the load split over the hosts, how far apart they started, and which host
was client-bound. A run's row already holds the exact merge; this table is what a reader checks
that merge against: a host that carried much less than its share of the connections, or that
saturated its own cores, shows here."""
from __future__ import annotations

import pandas as pd

from ..stats.select import ok_runs
from ..lab.servers import display_name
from .fmt import fmt_count, fmt_float, fmt_pct

KEY = ["suite", "server", "scenario", "rep"]


def client_hosts_table(hosts: pd.DataFrame, runs: pd.DataFrame,
                       title: str = "Client hosts: each host's part of the load") -> pd.DataFrame:
    """`Server | Scenario | Host | n | req/s (share) | cores busy | client-bound | start` over the ok
    runs, one row per (server, scenario, host): the host's own req/s and its share of the point's
    requests, its load cores' busy share, its client-bound runs, and its latest start after the first
    host; empty when no point of the run had several client hosts."""
    ok = ok_runs(runs)
    if hosts.empty or ok.empty:
        return pd.DataFrame()
    h = hosts.merge(ok[KEY], on=KEY, how="inner")
    if h.empty:
        return pd.DataFrame()
    totals = h.groupby(KEY)["requests"].transform("sum")
    h = h.assign(share=h["requests"] / totals.where(totals > 0))
    rows = []
    several_suites = h["suite"].nunique() > 1   # (a report shows one suite; a whole run, several)
    for (suite, server, scenario, host), g in h.groupby(["suite", "server", "scenario", "host"], sort=True):
        rows.append({
            **({"Suite": suite} if several_suites else {}),
            "Server": display_name(server), "Scenario": scenario,
            "Host": g["addr"].iloc[0], "n": len(g),
            "req/s (share)": f"{fmt_count(g['req_per_s'].mean())} ({fmt_pct(100 * g['share'].mean(), 1)})",
            "cores busy": fmt_pct(100 * g["client_busy"].mean()),
            "client-bound": int(g["client_bound"].fillna(False).astype(bool).sum()),
            "start": f"+{fmt_float(g['start_offset_ms'].max(), 1)} ms",
        })
    df = pd.DataFrame(rows)
    n_hosts = int(h["host"].nunique())
    df.attrs["title"] = title
    df.attrs["key_columns"] = (["Suite"] if several_suites else []) + ["Server", "Scenario", "Host"]
    df.attrs["caption"] = (
        f"{n_hosts} client hosts (addresses under Host) loaded every point at once, each with its share of the connections, "
        "from one agreed start time. A run's figures above are their exact merge: requests and errors "
        "summed, latency histograms summed value by value, req/s over the union of the hosts' load "
        "windows. \"req/s\" is the host's own rate, \"share\" its part of the point's requests, \"cores busy\" its load "
        "cores' busy share, \"client-bound\" its runs that saturated them, and \"start\" how long "
        "after the first host it began at the latest (its own clock); "
        "a point whose hosts began more than 100 ms (or 2 % of the run) apart is failed. A point is "
        "client-bound when any of its hosts was.")
    return df


def has_client_hosts(hosts: pd.DataFrame) -> bool:
    """Whether the run has points that several client hosts loaded (the table is worth a place)."""
    return not hosts.empty
