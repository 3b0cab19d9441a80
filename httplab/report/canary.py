"""The machine's canary in a report's header (the tidy frame `canary`, scripts/lib/canary.sh): how
fast the machine was at the start of each part the report reads, how far that moved by its middle
and its end, and a warning when it moved more than the reports trust. Read from data/, never raw/.
"""
from __future__ import annotations

import math

import pandas as pd

from .fmt import fmt_count

# A canary part that moved more than this between the start and the end of a part is a machine that
# changed under the suite (thermal limits, a neighbour): the header warns, as it does for a host
# state that changed.
DRIFT_WARN = 0.10

PARTS = (("cpu_mops_per_s", "CPU loop", "Mops/s"), ("pingpong_rt_per_s", "loopback ping-pong", "round trips/s"),
         ("floor_req_per_s", "floor", "req/s"))

NOT_RECORDED = ("not recorded: the run was made before the lab measured its machine's canary (a fixed CPU loop, "
                "a loopback ping-pong and the floor responder at the start, middle and end of every suite)")


def _fmt(v: float, unit: str) -> str:
    return f"{v:,.1f} {unit}" if unit == "Mops/s" else f"{fmt_count(v)} {unit}"


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %".replace("-", "−")


def drift(frame: pd.DataFrame, column: str, when: str) -> float:
    """The moment's figure over the start's, minus 1 (NaN when either is missing)."""
    start = frame.loc[frame["when"] == "start", column]
    other = frame.loc[frame["when"] == when, column]
    if start.empty or other.empty or not (float(start.iloc[0]) > 0) or math.isnan(float(other.iloc[0])):
        return math.nan
    return float(other.iloc[0]) / float(start.iloc[0]) - 1


def _lengths(row: pd.Series) -> str:
    """'3 s each', or, where the programs ran shorter than the floor (the quick profile),
    'the floor 1 s, the CPU loop and the ping-pong 0.25 s'. (Frames built before the column
    existed have no probe_seconds: one length.)"""
    s = float(row["seconds"])
    p = float(row.get("probe_seconds", s))
    if math.isnan(p) or p == s:
        return f"{s:g} s each"
    return f"the floor {s:g} s, the CPU loop and the ping-pong {p:g} s"


def part_text(frame: pd.DataFrame) -> str:
    """One part's canary: its start figures, then each later moment's change."""
    start = frame[frame["when"] == "start"]
    if start.empty:
        start = frame.iloc[:1]
    first = start.iloc[0]
    figures = [f"{label} {_fmt(float(first[c]), unit)}" for c, label, unit in PARTS if not math.isnan(float(first[c]))]
    text = (", ".join(figures) or "no part ran") + f" at the {first['when']} ({_lengths(first)}, one run)"
    for when in ("mid", "end"):
        moves = [f"{label} {_pct(d)}" for c, label, _ in PARTS if not math.isnan(d := drift(frame, c, when))]
        if moves:
            text += f"; {'halfway' if when == 'mid' else 'at the end'}: " + ", ".join(moves)
    problems = "; ".join(p for p in frame["problems"] if p)
    return text + (f" (not measured: {problems})" if problems else "")


def canary_text(canary: pd.DataFrame, parts: list[str]) -> str:
    """The header's Canary row for the parts a report reads."""
    mine = canary[canary["suite"].isin(parts)] if not canary.empty else canary
    if mine.empty:
        return NOT_RECORDED
    groups = [(p, mine[mine["suite"] == p]) for p in parts if (mine["suite"] == p).any()]
    if len(groups) == 1:
        return part_text(groups[0][1])
    return "; ".join(f"`{p}`: {part_text(g)}" for p, g in groups)


def canary_warnings(canary: pd.DataFrame, parts: list[str]) -> list[str]:
    """'the canary's floor fell 12.0 % from the start to the end of `http1`' for each part and
    canary part that moved past DRIFT_WARN."""
    out = []
    for p in parts:
        g = canary[canary["suite"] == p] if not canary.empty else canary
        for c, label, _ in PARTS:
            d = drift(g, c, "end") if not g.empty else math.nan
            if not math.isnan(d) and abs(d) > DRIFT_WARN:
                out.append(f"the canary's {label} {'fell' if d < 0 else 'rose'} {abs(d) * 100:.1f} % from the "
                           f"start to the end of `{p}`")
    return out
