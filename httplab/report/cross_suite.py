"""The generic report's comparisons across suites: for each pair a suite declares in its
suite.toml ([compare] suite_pairs: a point of this suite against a point of another suite of the
same run), each server against itself there, or against its TCP twin (an HTTP/3 server's manifest
names the server of the same application over TCP). Every Δ is a row of the run's comparisons frame
(stats.frames.comparisons_frame made them: rep k of one suite against rep k of the other, a
between-suite comparison), printed with its verdict; nothing here computes one."""
from __future__ import annotations

import pandas as pd

from ..lab.servers import display_name, sort_servers
from ..lab.suites import suite_of_part
from ..stats import format_delta
from ..stats.frames import RunStats
from .cells import ratio_ci_of
from .method_words import between_suites_words

METRICS = (("req_per_s", "Δ req/s"), ("cpu_us_per_req", "Δ server CPU-µs per request"))


def cross_suite_table(stats: RunStats, part: str, confidence: float = 0.95) -> pd.DataFrame:
    """One row per declared pair and server that has a counterpart in the run: the point, the
    server, what it is set against, and Δ req/s and Δ CPU-µs per request (A against B). Empty when
    the run holds no such pair (the other suite did not run, or none of its servers)."""
    suite = suite_of_part(part)
    comps = stats.comparisons
    rows: list[dict[str, str]] = []
    others: set[str] = set()
    if suite is not None and not comps.empty:
        cross = comps[comps["kind"] == "suite"]
        for su_a, su_b, sa, sb in suite.suite_pairs:
            if su_a != part:
                continue
            sel = cross[(cross["a_suite"] == su_a) & (cross["b_suite"] == su_b) & (cross["a_scenario"] == sa)
                        & (cross["b_scenario"] == sb)]
            if not sel.empty:
                others.add(su_b)
            for server in sort_servers(set(sel["a_server"])):
                mine = sel[sel["a_server"] == server]
                row = {"Point": f"{sa} against {su_b} {sb}", "Server": display_name(server),
                       "Against": display_name(str(mine["b_server"].iloc[0]))}
                for metric, label in METRICS:
                    m = mine[mine["metric"] == metric]
                    row[label] = format_delta(ratio_ci_of(m.iloc[0] if len(m) else None))
                rows.append(row)
    df = pd.DataFrame(rows, columns=["Point", "Server", "Against", *(label for _, label in METRICS)])
    df.attrs["title"] = "Across suites"
    df.attrs["caption"] = (
        "A = the server on this suite's point, B = the same server (or the server of the same application "
        "over TCP, its manifest's tcp_twin) on the other suite's point of the same run. "
        + between_suites_words(confidence, stats, (part, *sorted(others)))
        + ". The two points were loaded by different tools: server CPU-µs per request is the server's own "
        "cost whichever tool drew it; req/s also depends on the tool where it is the limit (see the "
        "client-bound flags).")
    return df
