"""python -m httplab history: the history store on the command line, and the history page.

    python -m httplab history [--metric req_per_s] [--suite http1 --scenario get_ping_c100 --server SERVER]
    python -m httplab history --sql "SELECT run_id, machine, estimate FROM history WHERE ..."
    python -m httplab history --write reports/      # reports/history.md, history.html, history_files/

Without --sql it prints the history view's rows (estimates with each run's identity) that match the
filters: run, date, commit, setup, suite, scenario, server, metric, estimate [lo, hi], n. The tables
and views the store holds: httplab.report.history.store (docs/history.md).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from .store import connect, frame, history_frame

COLUMNS = ["run_id", "date", "commit_short", "setup", "profile", "suite", "scenario", "server", "metric",
           "estimate", "lo", "hi", "n"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Every committed run's estimates with the run's identity "
                                             "(DuckDB over data/*/), or the history page")
    ap.add_argument("--data", default="data", help="data root (default: data)")
    ap.add_argument("--reports", default=None, help="reports folder: its runs.toml marks superseded runs "
                                                    "(default: reports/ beside the data root)")
    ap.add_argument("--raw", default=None, help="raw root: its REFERENCE marks the reference run (default: raw/ beside the data root)")
    ap.add_argument("--metric", default="req_per_s", help="metric (default: req_per_s; 'any' for all)")
    ap.add_argument("--suite", help="suite part, e.g. http1")
    ap.add_argument("--scenario", help="scenario id, e.g. get_ping_c100")
    ap.add_argument("--server", help="a server id (servers/<id>, as in the runs frame)")
    ap.add_argument("--sql", help="run this SQL against the store instead (tables: run_identity, estimates, "
                                  "comparisons, runs; views: history, comparison_history)")
    ap.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    ap.add_argument("--write", metavar="REPORTS_DIR", help="write the history page into REPORTS_DIR and print its path")
    args = ap.parse_args(argv)
    data = Path(args.data)
    reports = Path(args.reports) if args.reports else data.resolve().parent / "reports"
    raw = Path(args.raw) if args.raw else data.resolve().parent / "raw"
    if args.write:
        from .page import write_history_page, PAGE_HTML
        hist = write_history_page(Path(args.write), raw, data)
        if hist is None:
            print(f"{data}: no built run; nothing written", file=sys.stderr)
            return 1
        print(Path(args.write) / PAGE_HTML)
        for f in hist.flags:
            print("change point:", f.line())
        return 0
    try:
        con = connect(data, reports if reports.is_dir() else None, raw if raw.is_dir() else None)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    if args.sql:
        out = frame(con, args.sql)
    else:
        out = history_frame(con, None if args.metric == "any" else args.metric, args.suite, args.scenario, args.server)
        out = out[[c for c in COLUMNS if c in out.columns]] if not out.empty else out
    if args.csv:
        out.to_csv(sys.stdout, index=False)
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 250):
            print(out.to_string(index=False) if not out.empty else "(no rows)")
    return 0
