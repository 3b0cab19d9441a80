"""Instructions per request (scripts/cost.sh, docs/cost.md): the run's frames and report page, the
check scripts/cost.sh asks of each point, and the gate between two runs.

    python -m httplab cost build raw/<run_id> [--out data/<run_id>] [--report reports/<run_id>]
    python -m httplab cost check <point dir> REP [--tmp]
    python -m httplab cost gate BASE CURRENT [--threshold 1.0] [--raw raw] [--data data]

BASE and CURRENT are run ids (their data/<run_id>/cost.parquet, or raw/<run_id>/ when no data was
built) or paths to such folders. The gate prints current / base per server and protocol and exits 1
when one rose by more than the threshold (percent) or one the current run measured has no rep that
counted; 2 on a usage error (a run without instruction counts).
"""
from __future__ import annotations

import argparse
import html
import math
import sys
from pathlib import Path

import pandas as pd

from ..lab.servers import display_name, sort_servers
from ..stats.cost import DEFAULT_THRESHOLD_PCT, gate, per_rep, read_cost, summarise, write_cost
from ..tidy.cost import COST_DIR, check_point, cost_points
from .tables import _with_meta, table_html, to_markdown

PROTOCOL_WORDS: dict[str, str] = {
    "h1": "HTTP/1.1 keep-alive", "h1_pipe16": "HTTP/1.1, 16 pipelined", "h2c": "h2c, one stream at a time",
    "h2c_m10": "h2c, 10 concurrent streams", "tls_h1": "HTTPS/1.1 (TLS 1.3)", "tls_h2": "HTTPS/2 (TLS 1.3)",
}
PROTOCOL_ORDER = tuple(PROTOCOL_WORDS)


def _protocol_key(p: str) -> tuple[int, str]:
    return (PROTOCOL_ORDER.index(p) if p in PROTOCOL_ORDER else len(PROTOCOL_ORDER), p)


def _ordered(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        return df
    servers = sort_servers(set(df["server"]))
    key = df.apply(lambda r: (servers.index(r["server"]), _protocol_key(r["protocol"])), axis=1)
    return df.assign(_k=key).sort_values("_k").drop(columns="_k")


def _num(x: float, digits: int = 0) -> str:
    return "—" if not math.isfinite(x) else f"{x:,.{digits}f}"


def cost_table(reps: pd.DataFrame) -> pd.DataFrame:
    """`Server | Protocol | Instructions per request | range over reps | spread | reps | h2load`."""
    title = "Instructions per request"
    summ = _ordered(summarise(reps))
    if summ.empty:
        return _with_meta(pd.DataFrame(), title, "no data: this run has no instruction-count point")
    rows = [{
        "Server": display_name(s["server"]), "Protocol": PROTOCOL_WORDS.get(s["protocol"], s["protocol"]),
        "Instructions per request": _num(s["instr_per_req"]),
        "Range over reps": f"{_num(s['min'])} – {_num(s['max'])}",
        "Spread": "—" if not math.isfinite(s["spread_pct"]) else f"{s['spread_pct']:.3f} %",
        "Reps": f"{int(s['reps'])}" + (f" ({int(s['n_failed'])} failed)" if s["n_failed"] else ""),
        "Load": s["client_command"].split(" -n ")[0] + f", N = {int(s['n1']):,} and {int(s['n2']):,}",
    } for _, s in summ.iterrows()]
    n1, n2 = int(summ["n1"].max()), int(summ["n2"].max())
    cap = ("User-space instructions the server executed (its code, libc, OpenSSL; valgrind cachegrind, "
           f"Ir) per request: (Ir(N2) − Ir(N1)) / (N2 − N1) from two fresh server processes serving "
           f"N1 = {n1:,} and N2 = {n2:,} requests of GET /ping on one connection, which cancels start-up, "
           "connection set-up (the TLS handshake) and shutdown; mean over the reps. Spread: (max − min) / "
           "mean over the reps. A count, not a time: the machine's other work does not move it; kernel "
           "work (system calls, TCP) is not in it. "
           + ("Every request of every point succeeded with a 2xx." if not summ["n_failed"].any() else
              f"{int(summ['n_failed'].sum())} rep(s) failed and are left out (below: why)."))
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Server", "Protocol"]
    return _with_meta(df, title, cap)


def reps_table(reps: pd.DataFrame) -> pd.DataFrame:
    """Every rep: its two counts and its figure, or why it failed."""
    title = "Every rep"
    if reps.empty:
        return _with_meta(pd.DataFrame(), title, "no rep")
    rows = [{
        "Server": display_name(r["server"]), "Protocol": PROTOCOL_WORDS.get(r["protocol"], r["protocol"]),
        "Rep": str(int(r["rep"])), "Ir(N1)": f"{int(r['ir_n1']):,}", "Ir(N2)": f"{int(r['ir_n2']):,}",
        "Instructions per request": _num(r["instr_per_req"], 1) if r["status"] == "ok" else f"failed: {r['fail_reason']}",
    } for _, r in _ordered(reps).iterrows()]
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Server", "Protocol", "Rep"]
    return _with_meta(df, title, "Ir(N): the instructions of the whole server process that served N requests.")


def gate_table(rows: pd.DataFrame, threshold_pct: float) -> pd.DataFrame:
    df = pd.DataFrame([{
        "server": r["server"], "protocol": r["protocol"], "base": _num(r["base"], 1),
        "current": _num(r["current"], 1), "ratio": "—" if not math.isfinite(r["ratio"]) else f"{r['ratio']:.4f}",
        "Δ": "—" if not math.isfinite(r["delta_pct"]) else f"{r['delta_pct']:+.2f} %",
        "spread base/current": f"{_num(r['base_spread_pct'], 3)} / {_num(r['current_spread_pct'], 3)} %",
        "verdict": r["verdict"],
    } for _, r in _ordered(rows).iterrows()])
    return _with_meta(df, f"Instructions per request, current / base (gate: +{threshold_pct:g} %)",
                      "rose: above the threshold; failed: measured, but no rep counted (both fail the gate); "
                      "fell, same, new (no figure in the base), not run (left out of the current run): pass.")


REPORT_STEM = "cost"
REPORT_TITLE = "Instructions per request"
REPORT_INTRO = ("What one request costs each server in instructions, per protocol, counted by valgrind "
                "(cachegrind) rather than timed: a figure that moves only when the code (or the libraries "
                "it runs on) does, to gate changes to the C server at about 1 % (`scripts/cost.sh`, "
                "docs/cost.md).")


def report_markdown(reps: pd.DataFrame, run_id: str) -> str:
    return "\n\n".join([f"# {REPORT_TITLE}", f"Run `{run_id}` · [← all reports](../index.html)", REPORT_INTRO,
                        to_markdown(cost_table(reps)), to_markdown(reps_table(reps))]) + "\n"


def report_html(reps: pd.DataFrame, run_id: str) -> str:
    table = table_html
    intro = html.escape(REPORT_INTRO).replace("`scripts/cost.sh`", "<code>scripts/cost.sh</code>")
    body = [f"<h1>{html.escape(REPORT_TITLE)}</h1>",
            f"<p>Run <code>{html.escape(run_id)}</code> · <a href=\"../index.html\">← all reports</a></p>",
            f"<p>{intro}</p>", table(cost_table(reps)), table(reps_table(reps))]
    style = ("body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.45}"
             "table{border-collapse:collapse}th,td{padding:.3em .7em;border-bottom:1px solid #ddd;"
             "text-align:left}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(REPORT_TITLE)}"
            f" — {html.escape(run_id)}</title><link rel=\"stylesheet\" href=\"../assets/report.css\">"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_report(reps: pd.DataFrame, out_dir: Path, run_id: str) -> list[Path]:
    """reports/<run_id>/cost.{md,html}; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, page = out_dir / f"{REPORT_STEM}.md", out_dir / f"{REPORT_STEM}.html"
    md.write_text(report_markdown(reps, run_id), encoding="utf-8")
    page.write_text(report_html(reps, run_id), encoding="utf-8")
    return [md, page]


def load_reps(run: str, raw_root: Path, data_root: Path) -> pd.DataFrame:
    """A run's per-rep frame: from a data folder's cost.parquet, else built from a raw run folder;
    `run` a path to either, or a run id under data_root / raw_root. FileNotFoundError when none."""
    for cand in (Path(run), data_root / run, raw_root / run):
        if (cand / "cost.parquet").is_file():
            return read_cost(cand)
        if (cand / COST_DIR).is_dir():
            return per_rep(cost_points(cand))
    raise FileNotFoundError(f"{run}: no instruction counts (no cost.parquet in it or in {data_root / run}, "
                            f"no {COST_DIR}/ in it or in {raw_root / run})")


def _build(args: argparse.Namespace) -> int:
    run_dir = args.run_dir.resolve()
    points = cost_points(run_dir)
    reps = per_rep(points)
    out = args.out or run_dir.parent.parent / "data" / run_dir.name
    written = write_cost(points, reps, out)
    if args.report:
        written += write_report(reps, args.report, run_dir.name)
    print(to_markdown(cost_table(reps)))
    print("\nwritten: " + ", ".join(str(p) for p in written))
    return 0 if (reps["status"] == "ok").all() else 1


def _check(args: argparse.Namespace) -> int:
    ok, line = check_point(args.point_dir, args.rep, args.tmp)
    print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def _gate(args: argparse.Namespace) -> int:
    try:
        base = load_reps(args.base, args.raw, args.data)
        cur = load_reps(args.current, args.raw, args.data)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows, passed = gate(summarise(base), summarise(cur), args.threshold)
    print(to_markdown(gate_table(rows, args.threshold)))
    bad = rows[rows["verdict"].isin(["rose", "failed"])]
    if passed:
        print(f"\ngate passed: no instructions-per-request figure of {args.current} rose by more than "
              f"{args.threshold:g} % over {args.base}")
        return 0
    print(f"\ngate FAILED ({args.current} against {args.base}, threshold {args.threshold:g} %): "
          + "; ".join(f"{r['server']} {r['protocol']} {r['verdict']}"
                      + (f" {r['delta_pct']:+.2f} %" if math.isfinite(r["delta_pct"]) else "")
                      for _, r in bad.iterrows()), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="raw/<run_id> -> data/<run_id>/cost*.{parquet,csv} and the report page")
    b.add_argument("run_dir", type=Path)
    b.add_argument("--out", type=Path, help="default: data/<run_id> beside raw/")
    b.add_argument("--report", type=Path, help="also write the report page (cost.md, .html) here")
    b.set_defaults(fn=_build)
    c = sub.add_parser("check", help="one point just measured: its count, or why it fails (exit 1)")
    c.add_argument("point_dir", type=Path)
    c.add_argument("rep", type=int)
    c.add_argument("--tmp", action="store_true", help="the point's files still have their temporary names (.r<rep>.*)")
    c.set_defaults(fn=_check)
    g = sub.add_parser("gate", help="current against base: exit 1 when a figure rose by more than the threshold")
    g.add_argument("base")
    g.add_argument("current")
    g.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD_PCT, help="percent (default 1)")
    g.add_argument("--raw", type=Path, default=Path("raw"))
    g.add_argument("--data", type=Path, default=Path("data"))
    g.set_defaults(fn=_gate)
    args = ap.parse_args(argv)
    return int(args.fn(args))
