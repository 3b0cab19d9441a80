"""The idle-connection memory measurement's table (scripts/idle_memory.sh): what one idle keep-alive
connection costs each server, per mode and number of connections, with its interval; and the
command that writes the run's tidy frame and prints the table.

    python -m httplab.report.idle_memory raw/<run_id> [--out data/<run_id>] [--confidence 0.95]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from ..stats.idle_memory import idle_estimates
from ..stats.methods import MIN_RUNS
from ..tidy.idle_memory import idle_frame, write_idle
from ..tidy.servers import display_name, sort_servers
from .tables import _with_meta, to_markdown

MODE_WORDS = {"h1": "HTTP/1.1", "h2c": "h2c"}


def kib_cell(est: pd.Series) -> str:
    """'15.93 KiB [15.90, 15.97] (n=5)', or the estimate and why there is no interval."""
    if not math.isfinite(est["estimate"]):
        return "no ok point"
    body = f"{est['estimate']:.2f} KiB"
    if math.isfinite(est["lo"]) and math.isfinite(est["hi"]):
        return f"{body} [{est['lo']:.2f}, {est['hi']:.2f}] (n={int(est['n'])})"
    return f"{body} (n={int(est['n'])}, {est['reason'] or f'CI needs ≥ {MIN_RUNS} runs'})"


def idle_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """`Server | Mode | Connections | KiB per idle connection | anonymous | RSS before | RSS after | failed`."""
    title = "Memory per idle keep-alive connection"
    est = idle_estimates(frame, confidence)
    if est.empty:
        return _with_meta(pd.DataFrame(), title, "no data: this run has no idle-memory point")
    rows = []
    for server in sort_servers(set(est["server"])):
        for _, e in est[est["server"] == server].sort_values(["mode", "conns_asked"]).iterrows():
            n_conns = f"{int(e['conns']):,}" + (f" (asked {int(e['conns_asked']):,}: open-file limit)"
                                                if e["conns"] != e["conns_asked"] else "")
            rows.append({
                "Server": display_name(server), "Mode": MODE_WORDS.get(e["mode"], e["mode"]),
                "Connections": n_conns, "KiB per idle connection": kib_cell(e),
                "of it anonymous": "—" if not math.isfinite(e["anon_estimate"]) else f"{e['anon_estimate']:.2f} KiB",
                "RSS before → with them": ("—" if not math.isfinite(e["rss_before_kb"]) else
                                           f"{e['rss_before_kb'] / 1024:.1f} → {e['rss_after_kb'] / 1024:.1f} MiB"),
                "Failed points": str(int(e["n_failed"])),
            })
    cap = (f"(VmRSS with the N connections idle − VmRSS before them) / N, VmRSS summed over the server's "
           "processes and read once stable; the server started fresh for each point, pinned as the suites "
           "pin it, after a warm-up whose connections were closed; each connection made one request, read "
           "its answer and stayed open. Geometric mean over the ok points with its "
           f"{confidence:.0%} t interval on the log scale (n = ok points; no interval below {MIN_RUNS}). "
           "'of it anonymous': the same from RssAnon (heap and buffers, no file pages); RSS columns: "
           "medians. A point fails when a connection got no answer or was closed before the reading.")
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Server", "Mode", "Connections"]
    return _with_meta(df, title, cap)


def failed_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Server, mode, N, rep and reason of every failed point."""
    bad = frame[frame["status"] != "ok"] if not frame.empty else frame
    if bad.empty:
        return _with_meta(pd.DataFrame(), "Failed points", "no failed point")
    df = pd.DataFrame({"Server": bad["server"].map(display_name).to_numpy(), "Mode": bad["mode"].to_numpy(),
                       "Connections": bad["conns"].to_numpy(), "Rep": bad["rep"].to_numpy(),
                       "Why": bad["fail_reason"].to_numpy(), "Raw": bad["raw_path"].to_numpy()})
    return _with_meta(df, "Failed points", f"{len(df)} failed point(s), left out of the figures above.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m httplab.report.idle_memory", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--out", type=Path, help="default: data/<run_id> beside raw/")
    ap.add_argument("--confidence", type=float, default=0.95)
    args = ap.parse_args(argv)
    frame = idle_frame(args.run_dir)
    out = args.out or args.run_dir.resolve().parent.parent / "data" / args.run_dir.resolve().name
    written = write_idle(frame, out)
    print(to_markdown(idle_table(frame, args.confidence)))
    failed = failed_table(frame)
    if not failed.empty:
        print("\n" + to_markdown(failed))
    print("\n" + "written: " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
