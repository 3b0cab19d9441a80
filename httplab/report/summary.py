"""The seed-style summary block (seed 000's "GET /ping: xKit +18% ~ +24%", peak throughput, peak
transfer), every number computed from the runs frame and every Δ carrying its CI."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..stats.frames import RunStats
from ..stats.select import ok_runs, select
from .cells import delta
from .fmt import fmt_bytes_rate, fmt_kilo, fmt_size
from .scenarios import Section, scenario_label
from ..lab.servers import contestants as contestants_of, display_name, short_name
from ..stats import RatioCI, format_delta, mean_ci

_LEVEL_FMT = {"size_bytes": fmt_size, "connections": lambda v: f"{int(v)} connections"}


def _section_deltas(runs: pd.DataFrame, section: Section, a: str, b: str, metric: str,
                    confidence: float, stats: RunStats | None) -> list[tuple[object, RatioCI]]:
    ok = ok_runs(select(runs, section.where))
    out = []
    if ok.empty:
        return out
    for level in sorted(ok[section.vary].unique()):
        at = ok[ok[section.vary] == level]
        xa, xb = at[at["server"] == a], at[at["server"] == b]
        if len(xa) and len(xb):
            out.append((level, delta(stats, metric, xa, xb, confidence)))
    return out


def _range_line(deltas: list[tuple[object, RatioCI]], vary: str) -> str:
    fmt_level = _LEVEL_FMT.get(vary, str)
    if not deltas:
        return "no data"
    ordered = sorted(deltas, key=lambda d: d[1].estimate if d[1].estimate is not None else np.nan)
    lo_level, lo = ordered[0]
    hi_level, hi = ordered[-1]
    n_clear = sum(1 for _, r in deltas if r.clear)
    n_ci = sum(1 for _, r in deltas if r.has_interval)
    if len(deltas) == 1:
        text = f"{format_delta(lo)} at {fmt_level(lo_level)}"
    else:
        text = (f"{format_delta(lo)} ({fmt_level(lo_level)}) ~ {format_delta(hi)} ({fmt_level(hi_level)})")
    return f"{text}; clear difference at {n_clear} of {len(deltas)} points ({n_ci} with a CI)"


def _peak(runs: pd.DataFrame, server: str, metric: str, confidence: float,
          scenarios: Sequence[str] | None = None):
    """The non-pipelined scenario where the server's mean metric is highest, with its mean CI;
    among `scenarios` only, when given (a suite's [seed] peak_transfer scenarios)."""
    ok = ok_runs(runs)
    ok = ok[(ok["server"] == server) & (ok["pipeline"] <= 1)]
    if scenarios is not None:
        ok = ok[ok["scenario"].isin(list(scenarios))]
    if ok.empty:
        return None
    means = ok.groupby("scenario")[metric].mean()
    if means.dropna().empty:
        return None
    scen = means.idxmax()
    grp = ok[ok["scenario"] == scen]
    return grp.iloc[0], mean_ci(grp[metric].to_numpy(dtype=np.float64, na_value=np.nan), confidence)


def _peak_text(peak, fmt, unit: str) -> str:
    if peak is None:
        return "no data"
    row, ci = peak
    value = f"{fmt(ci.mean)}{unit}"
    interval = (f" [{fmt(ci.low)}, {fmt(ci.high)}]" if ci.has_interval
                else f" (n={ci.n}, {ci.reason})")
    return f"{value}{interval} ({scenario_label(row, batch_note=False)})"


def transfer_scenarios(suite: str | None) -> tuple[str, ...] | None:
    """The scenarios a suite reads its peak transfer on (suite.toml [seed] peak_transfer scenarios:
    the bodies that make a transfer, POST /echo by size); None for a suite that declares none."""
    if not suite:
        return None
    from ..lab.suites import all_suites
    s = next((x for x in all_suites() if x.name == suite), None)
    got = ((s.seed_doc if s else {}).get("peak_transfer") or {}).get("scenarios")
    return tuple(str(x) for x in got) if got else None


def _transfer_text(runs: pd.DataFrame, server: str, confidence: float, scenarios: Sequence[str] | None) -> str:
    if scenarios is None:
        return _peak_text(_peak(runs, server, "bytes_per_s", confidence), fmt_bytes_rate, "")
    peak = _peak(runs, server, "bytes_per_s", confidence, scenarios)
    if peak is None:
        return "not measured (it ran none of the scenarios the peak transfer is read on)"
    return _peak_text(peak, fmt_bytes_rate, "")


def summary_block(runs: pd.DataFrame, sections: Sequence[Section], servers: Sequence[str] | None = None, *,
                  baseline: str, run_id: str = "", confidence: float = 0.95,
                  stats: RunStats | None = None, label: str = "", suite: str | None = None) -> str:
    """Plain-text block like seed 000's summary. Δ = req/s of each non-baseline server vs the
    baseline, per point, paired by rep; the range shows the smallest and largest Δ of a section.
    servers: default the contestants present (lab.servers.contestants) and the baseline. The peak
    transfer is read over the scenarios the suite declares for it (transfer_scenarios): a server that
    ran only GET /ping has no transfer to speak of, not a peak at /ping's few header bytes."""
    transfer = transfer_scenarios(suite)
    if servers is None:
        servers = contestants_of(set(runs["server"])) if not runs.empty else []
    contestants = [s for s in servers if s != baseline]
    head = " vs ".join(display_name(s) for s in contestants + [baseline])
    title = f"{head}" + (f" {label}" if label else "") + (f" — run {run_id}" if run_id else "")
    lines = [title, "=" * len(title),
             f"Δ req/s per point: ratio of geometric means − 1, {confidence:.0%} t interval on the log scale, "
             "paired by rep; peaks (non-pipelined scenarios): geometric mean over runs with its t interval"
             + ("; peak transfer over the scenarios the seed reads it on (" + ", ".join(transfer) + ")"
                if transfer else "")]
    width = max((len(s.title.split(" — ")[0]) for s in sections), default=10) + 1
    for s in sections:
        name = s.title.split(" — ")[0] + ":"
        for c in contestants:
            deltas = _section_deltas(runs, s, c, baseline, "req_per_s", confidence, stats)
            who = f"{short_name(c)} " if deltas else ""
            lines.append(f"{name:<{width}} {who}{_range_line(deltas, s.vary)}")
    for c in list(contestants) + [baseline]:
        lines.append(f"Peak throughput: {short_name(c)} "
                     + _peak_text(_peak(runs, c, "req_per_s", confidence), fmt_kilo, " req/s"))
    for c in list(contestants) + [baseline]:
        lines.append(f"Peak transfer: {short_name(c)} " + _transfer_text(runs, c, confidence, transfer))
    return "\n".join(lines)
