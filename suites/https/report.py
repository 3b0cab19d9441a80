"""Tables and notebook glue of the https suite (notebooks/https.ipynb, seed 002): the seed's five
tables (HTTPS/1.1 by wrk, HTTPS/2 by h2load with ALPN), the cost of TLS against the same run's
cleartext suites (http1 for HTTP/1.1, h2c for HTTP/2), the negotiated TLS parameters with the
certificate, and the seed-002 summary block. The seed tables come from the generic builders
(tables.comparison_table through report.section_table); this module adds what is TLS-specific.
"""
from __future__ import annotations

from httplab.report.method_words import drift_note

from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path

import pandas as pd

from httplab.stats.select import select, column, ok_runs
from httplab.report.fmt import fmt_float, fmt_mean_ci
from httplab.report.engine import ReportContext, compared_servers, open_report, sections
from httplab.report.scenarios import Section, common_connections
from httplab.lab.servers import display_name, is_reference, short_name, sort_servers
from httplab.report.method_words import between_suites_words, ci_words
from httplab.stats import RatioCI, format_delta, mean_ci
from httplab.stats.frames import RunStats
from httplab.stats.write import run_stats
from httplab.report.cells import delta
from httplab.report.summary import summary_block
from httplab.report.tables import _with_meta, req_cell

SUITE = "https"
# (key, cleartext suite, its scenario, https scenario, cleartext label, TLS label)
TLS_PAIRS: dict[str, tuple[str, str, str, str, str]] = {
    "h1": ("http1", "get_ping_c100", "h1_get_ping_c100", "HTTP/1.1", "HTTPS/1.1"),
    "h2": ("h2c", "get_ping_c100", "h2_get_ping_c100", "h2c", "HTTPS/2"),
}


def open_https_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                      raw_root: str | Path = "raw", data_root: str | Path = "data", confidence: float = 0.95, *,
                      baseline: str) -> ReportContext:
    """open_report for the https suite; tidy frames go to out_dir as https_runs.* and
    https_latency.* (beside the http1 and h2c notebooks' files of the same run). baseline: the
    server the Δ columns compare with (the notebook's parameter)."""
    return open_report(SUITE, run_dir=run_dir, out_dir=out_dir, raw_root=raw_root, data_root=data_root,
                       confidence=confidence, baseline=baseline)


# ---------------------------------------------------------------- TLS cost
def tls_cost_table(https_runs: pd.DataFrame, clear_runs: pd.DataFrame | None, kind: str = "h1",
                   servers: Sequence[str] | None = None, confidence: float = 0.95,
                   stats: RunStats | None = None) -> pd.DataFrame:
    """Seed 002's protocol comparison for one protocol (kind "h1": http1 `get_ping_c100` vs
    https `h1_get_ping_c100`; "h2": h2c `get_ping_c100` vs https `h2_get_ping_c100`), per server:
    cleartext req/s, TLS req/s, Δ (TLS cost) = TLS/cleartext − 1 with its between-suite interval, and
    the same for server CPU-µs per request. An empty table whose caption says why when the run has
    no such cleartext suite or no server in both."""
    clear_suite, clear_scen, tls_scen, clear_label, tls_label = TLS_PAIRS[kind]
    title = f"TLS cost: {clear_label} vs {tls_label} (GET /ping, 100 connections)"
    if clear_runs is None or clear_runs.empty:
        return _with_meta(pd.DataFrame(), title,
                          f"no {clear_suite} suite in this run, so there is no {clear_label} number to "
                          f"compare {tls_label} with (both suites must be in the same run)")
    tls = https_runs[https_runs["scenario"] == tls_scen] if not https_runs.empty else https_runs
    clear = clear_runs[clear_runs["scenario"] == clear_scen]
    if tls.empty or clear.empty:
        missing = f"https {tls_scen}" if tls.empty else f"{clear_suite} {clear_scen}"
        return _with_meta(pd.DataFrame(), title, f"no data: this run has no {missing}")
    present = sort_servers(set(tls["server"]) & set(clear["server"]))
    chosen = [s for s in (servers or present) if s in present]
    if not chosen:
        return _with_meta(pd.DataFrame(), title, f"no data: no server has both {clear_label} and {tls_label} runs")
    rows = []
    for s in chosen:
        a, b = ok_runs(tls[tls["server"] == s]), ok_runs(clear[clear["server"] == s])
        rows.append({
            "Server": display_name(s) + (" (ref)" if is_reference(s) else ""),
            f"{clear_label} req/s": req_cell(b, confidence),
            f"{tls_label} req/s": req_cell(a, confidence),
            "Δ req/s (TLS cost)": format_delta(delta(stats, "req_per_s", a, b, confidence)),
            f"{clear_label} CPU-µs/req": fmt_mean_ci(mean_ci(column(b, "cpu_us_per_req"), confidence),
                                                     lambda v: fmt_float(v, 2), show_n=False),
            f"{tls_label} CPU-µs/req": fmt_mean_ci(mean_ci(column(a, "cpu_us_per_req"), confidence),
                                                   lambda v: fmt_float(v, 2), show_n=False),
            "Δ CPU-µs/req (TLS cost)": format_delta(delta(stats, "cpu_us_per_req", a, b, confidence)),
        })
    tool = "wrk, one request in flight per connection" if kind == "h1" else "h2load, 10 streams per connection"
    cap = (f"GET /ping, 100 connections, {tool}: {clear_label} = the {clear_suite} suite's `{clear_scen}`, "
           f"{tls_label} = this suite's `{tls_scen}`, same run, same machine, each server with its own "
           f"cleartext and TLS port. req/s and CPU-µs/req: {ci_words(confidence)}; Δ (TLS/cleartext): "
           f"{between_suites_words(confidence, stats or run_stats(pd.concat([https_runs, clear_runs]), confidence), (SUITE, clear_suite))}; "
           "'no clear difference' when the interval holds 0. "
           "Negative Δ req/s = TLS costs throughput; positive Δ CPU-µs/req = TLS costs server CPU. "
           "When the load generator is the bottleneck, the CPU column is the one that shows the cost.")
    return _with_meta(pd.DataFrame(rows), title, cap)


def clear_runs_of(ctx: ReportContext, suite: str) -> pd.DataFrame | None:
    """The runs of another suite of the same raw run, or None when the run has none."""
    if ctx.full is None or ctx.full.runs.empty:
        return None
    df = ctx.full.runs[ctx.full.runs["suite"] == suite]
    return None if df.empty else df


def tls_cost(ctx: ReportContext, kind: str) -> pd.DataFrame:
    return tls_cost_table(ctx.runs, clear_runs_of(ctx, TLS_PAIRS[kind][0]), kind, **ctx.stat_args())


# ---------------------------------------------------------------- negotiated parameters
def _counted(values: pd.Series) -> str:
    """'TLSv1.3 (40/40)', 'TLSv1.3 (39/40); TLSv1.2 (1/40)', '— (40/40)' for absent values."""
    n = len(values)
    counts = values.fillna("—").astype(str).value_counts()
    return "; ".join(f"{v} ({c}/{n})" for v, c in counts.items())


def tls_params_table(runs: pd.DataFrame, title: str = "Negotiated TLS parameters") -> pd.DataFrame:
    """Per server and protocol: the TLS version, cipher suite and ALPN protocol the runs
    negotiated (each value with the number of runs that saw it), where ALPN came from, and the
    runs failed for an ALPN mismatch. All runs count, failed ones included."""
    if runs.empty or "tls_version" not in runs:
        return _with_meta(pd.DataFrame(), title, "no TLS runs in this run")
    rows = []
    for proto in ("h1", "h2"):
        sub = runs[runs["protocol"] == proto]
        for s in sort_servers(set(sub["server"])):
            grp = sub[sub["server"] == s]
            mismatch = grp["fail_reason"].str.contains("negotiated ALPN|application protocol", regex=True)
            rows.append({
                "Server": display_name(s), "Protocol": "HTTPS/1.1 (wrk)" if proto == "h1" else "HTTPS/2 (h2load)",
                "Runs": len(grp), "TLS version": _counted(grp["tls_version"]),
                "Cipher suite": _counted(grp["tls_cipher"]), "ALPN": _counted(grp["alpn"]),
                "ALPN from": _counted(grp["alpn_source"]), "ALPN mismatches": int(mismatch.sum()),
            })
    cap = ("From each point's `openssl s_client` report (its descriptive lines: version, cipher, ALPN, "
           "key exchange) taken right before the measured run with the ALPN list of the scenario's "
           "protocol (r<rep>.tls.txt). Where s_client states no ALPN result, the `Application protocol:` "
           "h2load printed for the measured connection is used ('ALPN from: h2load'); wrk prints nothing "
           "about TLS, and '—' means none was reported, which the rule accepts (HTTP/1.1 is the default "
           "without ALPN). A run whose ALPN is not h2 for HTTPS/2 (or is neither http/1.1 nor none for "
           "HTTPS/1.1) is failed.")
    return _with_meta(pd.DataFrame(rows), title, cap)


def certificate_markdown(cert: Mapping[str, Any] | None) -> str:
    """The certificate's fields (parse.tls_info.CertInfo's, as the part's facts hold them) as a table."""
    if not cert:
        return "*No certificate.txt in this run's https suite.*"
    c = cert.get
    rows = [("Subject", c("subject")), ("Issuer", c("issuer")), ("Not before", c("not_before")),
            ("Not after", c("not_after")), ("Subject Alternative Name", c("san")),
            (f"Fingerprint ({c('fingerprint_alg')})" if c("fingerprint_alg") else "Fingerprint", c("fingerprint")),
            ("Key", c("key"))]
    body = "\n".join(f"| {k} | {v} |" for k, v in rows if v)
    return f"**Certificate**\n\n| Item | Value |\n|---|---|\n{body}\n"


def certificate(ctx: ReportContext) -> str:
    """The run's certificate, as the part's facts hold it (data/<run_id>/run.json)."""
    doc = ctx.run.part_facts(SUITE).get("certificate")
    return certificate_markdown(doc)


# ---------------------------------------------------------------- summary
def _pct(r: RatioCI) -> str:
    return format_delta(r)


def _versus_line(ctx: ReportContext, other: str, prefix: str) -> str | None:
    """'<contestant> vs <reference>, HTTPS/2 GET /ping: Δ (50 conns); ...' over the scenarios
    starting with prefix that both servers have ok runs of, for each contestant; None when there
    are none."""
    contestants = [s for s in compared_servers(ctx) if s != ctx.baseline]
    if not contestants:
        return None
    return "\n".join(line for c in contestants if (line := _versus_line_of(ctx, c, other, prefix))) or None


def _versus_line_of(ctx: ReportContext, contestant: str, other: str, prefix: str) -> str | None:
    runs = ctx.runs
    if runs.empty:
        return None
    sub = runs[runs["scenario"].str.startswith(prefix)]
    parts = []
    for scen in sorted(sub["scenario"].unique(), key=lambda sc: int(sub[sub["scenario"] == sc]["connections"].iloc[0])):
        grp = sub[sub["scenario"] == scen]
        mine = ok_runs(grp[grp["server"] == contestant])
        theirs = ok_runs(grp[grp["server"] == other])
        if len(mine) and len(theirs):
            conns = int(grp["connections"].iloc[0])
            parts.append(f"{_pct(delta(ctx.stats, 'req_per_s', mine, theirs, ctx.confidence))} ({conns} conns)")
    if not parts:
        return None
    return f"{short_name(contestant)} vs {short_name(other)}, HTTPS/2 GET /ping req/s: " + "; ".join(parts)


def summary_text(ctx: ReportContext) -> str:
    """Seed 002's summary block: per-table Δ ranges (contestant vs baseline) with CIs grouped by protocol,
    peaks, the TLS cost per server for both protocols, and the negotiated parameters."""
    servers = compared_servers(ctx)
    secs: list[Section] = list(sections(ctx).values())
    block = summary_block(ctx.runs, secs, servers=servers, baseline=ctx.baseline, run_id=ctx.run.run_id,
                          label="HTTPS", suite=ctx.suite, **ctx.stat_args())
    lines = [block]
    for kind in ("h1", "h2"):
        clear_suite, clear_scen, tls_scen, clear_label, tls_label = TLS_PAIRS[kind]
        clear = clear_runs_of(ctx, clear_suite)
        head = f"TLS cost {clear_label} → {tls_label} (GET /ping, 100 conns):"
        if clear is None:
            lines.append(f"{head} no {clear_suite} suite in this run")
            continue
        tls = ctx.runs[ctx.runs["scenario"] == tls_scen] if not ctx.runs.empty else ctx.runs
        clr = clear[clear["scenario"] == clear_scen]
        parts = []
        for s in servers:
            a = ok_runs(tls[tls["server"] == s]) if not tls.empty else tls
            b = ok_runs(clr[clr["server"] == s]) if not clr.empty else clr
            parts.append(f"{short_name(s)} {_pct(delta(ctx.stats, 'req_per_s', a, b, ctx.confidence))}")
        lines.append(f"{head} " + "; ".join(parts) + " " + drift_note(ctx.stats, (ctx.suite, clear_suite)))
    refs = [s for s in sort_servers(set(ctx.runs["server"])) if is_reference(s)] if not ctx.runs.empty else []
    lines += [line for other in refs if (line := _versus_line(ctx, other, "h2_get_ping_c"))]
    runs = ctx.runs
    if not runs.empty and "tls_version" in runs:
        neg = []
        for proto, label in (("h1", "HTTPS/1.1"), ("h2", "HTTPS/2")):
            sub = ok_runs(runs[runs["protocol"] == proto])
            if sub.empty:
                continue
            combos = sub[["tls_version", "tls_cipher", "alpn"]].fillna("none").value_counts()
            neg.append(f"{label}: " + ", ".join(f"{v} {c} ALPN {a} ({n} runs)" for (v, c, a), n in combos.items()))
        mismatch = int(runs["fail_reason"].str.contains("negotiated ALPN|application protocol", regex=True).sum())
        lines.append("Negotiated (ok runs): " + "; ".join(neg) + f"; ALPN mismatches (failed): {mismatch}")
    n_failed = int((runs["status"] != "ok").sum()) if not runs.empty else 0
    lines.append(f"Failed runs: {n_failed} (excluded; see the failed-runs table)")
    return "\n".join(lines)


# ---------------------------------------------------------------- the tables' layout
def table_layout(runs: pd.DataFrame) -> list[Section]:
    """Seed 002's tables: HTTPS/1.1 (wrk) GET /ping by connections and GET /echo 1 KiB; HTTPS/2
    (h2load with ALPN h2) GET /ping by connections, GET /echo by size and POST /echo by body size
    (with Transfer/s). The protocol column splits the suite in two."""
    h1 = {"protocol": "h1", "tls": True}
    h2 = {"protocol": "h2", "tls": True}
    c_h1 = common_connections(select(runs, {**h1, "method": "GET", "route": "/echo"}))
    c_get = common_connections(select(runs, {**h2, "method": "GET", "route": "/echo"}))
    c_post = common_connections(select(runs, {**h2, "method": "POST", "route": "/echo"}))
    h2_runs = select(runs, h2)
    streams = sorted(int(s) for s in h2_runs["streams"].unique()) if not h2_runs.empty else []
    s_txt = "/".join(str(s) for s in streams) or "N"
    note = (f"h2load -m {s_txt} over TLS (ALPN h2): up to {s_txt} concurrent streams per connection; "
            "latency is per stream, from the latency run's log.")
    return [
        Section("h1_ping", "HTTPS/1.1 GET /ping — by connections",
                {**h1, "method": "GET", "route": "/ping", "pipeline": lambda s: s <= 1},
                "connections", "Connections"),
        Section("h1_echo", f"HTTPS/1.1 GET /echo — response size ({c_h1 or 100} connections)",
                {**h1, "method": "GET", "route": "/echo", "connections": c_h1}, "size_bytes",
                "Response size", fixed={"connections": c_h1}),
        Section("h2_ping", "HTTPS/2 GET /ping — by connections", {**h2, "method": "GET", "route": "/ping"},
                "connections", "Connections", note=note),
        Section("h2_echo_get", f"HTTPS/2 GET /echo — response size ({c_get or 100} connections)",
                {**h2, "method": "GET", "route": "/echo", "connections": c_get}, "size_bytes",
                "Response size", note=note, fixed={"connections": c_get}),
        Section("h2_echo_post", f"HTTPS/2 POST /echo — request body ({c_post or 100} connections)",
                {**h2, "method": "POST", "route": "/echo", "connections": c_post}, "size_bytes",
                "Body size", transfer=True, note=note, fixed={"connections": c_post}),
    ]
