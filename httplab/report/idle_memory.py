"""The idle-connection memory measurement's table (scripts/idle_memory.sh): what one idle keep-alive
connection costs each server, per mode and number of connections, with its interval; and the
command that writes the run's tidy frame and prints the table.

    python -m httplab idle-memory raw/<run_id> [--out data/<run_id>] [--confidence 0.95]
"""
from __future__ import annotations

import argparse
import html
import math
from pathlib import Path

import pandas as pd

from ..stats.idle_memory import idle_estimates
from ..stats.methods import MIN_RUNS
from ..tidy.idle_memory import idle_frame, write_idle
from ..lab.servers import display_name, sort_servers
from .tables import _with_meta, table_html, to_markdown

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
                                           f"{e['rss_before_kb'] / 1024:.1f} → {e['rss_after_kb'] / 1024:.1f} MiB "
                                           f"(medians of {int(e['n'])} point{'' if int(e['n']) == 1 else 's'})"),
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


REPORT_STEM = "idle_memory"
REPORT_TITLE = "Memory per idle keep-alive connection"
REPORT_INTRO = ("What one idle keep-alive connection costs each server in memory: each server started "
                "fresh for every point, N connections each made one request and stayed open, and the "
                "server's resident memory was read before and with them (`scripts/idle_memory.sh`).")


def report_markdown(frame: pd.DataFrame, run_id: str, confidence: float = 0.95) -> str:
    """The report page as Markdown: title, what was measured, the table, the failed points."""
    parts = [f"# {REPORT_TITLE}", f"Run `{run_id}` · [← all reports](../index.html)", REPORT_INTRO,
             to_markdown(idle_table(frame, confidence))]
    failed = failed_table(frame)
    if not failed.empty:
        parts.append(to_markdown(failed))
    return "\n\n".join(parts) + "\n"


def report_html(frame: pd.DataFrame, run_id: str, confidence: float = 0.95) -> str:
    """The same page as a standalone HTML document (tables from pandas, text escaped)."""
    table = table_html
    body = [f"<h1>{html.escape(REPORT_TITLE)}</h1>",
            f"<p>Run <code>{html.escape(run_id)}</code> · <a href=\"../index.html\">← all reports</a></p>",
            f"<p>{html.escape(REPORT_INTRO).replace('`scripts/idle_memory.sh`', '<code>scripts/idle_memory.sh</code>')}</p>",
            table(idle_table(frame, confidence))]
    failed = failed_table(frame)
    if not failed.empty:
        body.append(table(failed))
    style = ("body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.45}"
             "table{border-collapse:collapse}th,td{padding:.3em .7em;border-bottom:1px solid #ddd;"
             "text-align:left}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(REPORT_TITLE)}"
            f" — {html.escape(run_id)}</title><style>{style}</style></head><body>\n" + "\n".join(body)
            + "\n</body></html>\n")


def write_report(frame: pd.DataFrame, out_dir: Path, run_id: str, confidence: float = 0.95) -> list[Path]:
    """reports/<run_id>/idle_memory.{md,html}; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"{REPORT_STEM}.md"
    page = out_dir / f"{REPORT_STEM}.html"
    md.write_text(report_markdown(frame, run_id, confidence), encoding="utf-8")
    page.write_text(report_html(frame, run_id, confidence), encoding="utf-8")
    return [md, page]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--out", type=Path, help="default: data/<run_id> beside raw/")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--report", type=Path, help="also write the report page (idle_memory.md, .html) here")
    args = ap.parse_args(argv)
    frame = idle_frame(args.run_dir)
    out = args.out or args.run_dir.resolve().parent.parent / "data" / args.run_dir.resolve().name
    written = write_idle(frame, out)
    if args.report:
        written += write_report(frame, args.report, args.run_dir.resolve().name, args.confidence)
    print(to_markdown(idle_table(frame, args.confidence)))
    failed = failed_table(frame)
    if not failed.empty:
        print("\n" + to_markdown(failed))
    print("\n" + "written: " + ", ".join(str(p) for p in written))
    return 0
