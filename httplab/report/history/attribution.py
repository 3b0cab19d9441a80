"""Change points in words: which servers moved together at a change point, and what else changed
between the run before it and the run it starts at (the lab's code, a load tool or its build, the
machine's kernel, the run's design), so that a reader can tell a server's regression from a change
of the bench under all of them.

Why this matters: a step that moves every server of a point alike, at the run where the lab's
h2load began to start its clock after the TLS handshakes, is the tool's, not the servers'; printed
as "C +190 %" it reads as the server's speed-up. One server's code moves that server alone; the
machine, a load tool, the harness or the design move every server on the point. The flags are
page.build's (one per series); here they are grouped by point, setup and run, the servers that
were tested there and did not move are named, and the two runs' identities (store.IDENTITY) are
compared. Pure functions of the History.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...lab.servers import display_name, sort_servers
from . import changepoints


@dataclass(frozen=True)
class Event:
    """The change points of one point and metric, within one setup, that start at one run."""
    part: str
    scenario: str
    metric: str
    setup: str
    run_id: str
    before_run: str
    date: str
    moved: tuple[tuple[str, float], ...]   # (server, after/before − 1), in the servers' order
    held: tuple[str, ...]                  # servers tested on the series that did not step here
    changed: tuple[str, ...]               # what else changed between before_run and run_id, in words


def _pct(x: float) -> str:
    return f"{x:+.0%}".replace("-", "−")


def _short(value: str) -> str:
    """A tool's build string up to its first ':' ('lab build 2'), or 'none recorded'."""
    return value.split(":", 1)[0].strip() if value else "none recorded"


def _tools(row: pd.Series) -> dict[str, str]:
    try:
        out = json.loads(str(row.get("load_tools") or "{}"))
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


DESIGN = ("duration_s", "reps", "blocks")   # the columns that say a part's design


def _design(row: pd.Series) -> str:
    dur, reps = row.get("duration_s"), row.get("reps")
    parts = []
    if dur is not None and not pd.isna(dur):
        parts.append(f"{float(dur):g} s runs")
    if reps is not None and not pd.isna(reps):
        parts.append(f"{int(reps)} reps")
    if row.get("blocks"):
        parts.append(f"{row['blocks']} blocks")
    return ", ".join(parts) or "not recorded"


def what_changed(before: pd.Series, after: pd.Series) -> tuple[str, ...]:
    """What differs between two runs' identities, in words: the lab's code (commit), each load tool
    or build, the kernel, the design. Empty when nothing recorded differs."""
    out = []
    if str(before.get("commit") or "") != str(after.get("commit") or ""):
        out.append(f"the lab's code (commit {str(before.get('commit'))[:7] or '?'} → {str(after.get('commit'))[:7] or '?'})")
    tb, ta = _tools(before), _tools(after)
    for key in sorted(set(tb) | set(ta)):
        if tb.get(key) == ta.get(key):
            continue
        if key.endswith("_build"):
            out.append(f"{key[:-len('_build')]}'s build ({_short(tb.get(key, ''))} → {_short(ta.get(key, ''))})")
        else:
            out.append(f"{key} ({tb.get(key) or 'none recorded'} → {ta.get(key) or 'none recorded'})")
    kb, ka = (str(x.get("kernel") or "").replace("Linux ", "") for x in (before, after))
    if kb != ka:
        out.append(f"the machine's kernel ({kb or '?'} → {ka or '?'})")
    db, da = _design(before), _design(after)
    if db != da:
        out.append(f"the run's design ({db} → {da})")
    return tuple(out)


def events(hist: Any) -> list[Event]:
    """hist.flags grouped into events (point, metric, setup, first run of the new level), each with
    the servers that stepped, those tested on the same series that did not, and what changed."""
    ident = hist.identity.set_index("run_id")
    groups: dict[tuple[str, str, str, str, str], list[Any]] = {}
    for f in hist.flags:
        groups.setdefault((f.part, f.scenario, f.metric, f.setup, f.run_id), []).append(f)
    out = []
    for (part, scen, metric, setup, run_id), flags in groups.items():
        series = hist.frame[(hist.frame["suite"] == part) & (hist.frame["scenario"] == scen)
                            & (hist.frame["metric"] == metric) & (hist.frame["setup"] == setup)]
        finite = series[np.isfinite(series["estimate"].astype(float))]
        sizes = finite.groupby("server")["run_id"].nunique()
        at_run = set(finite.loc[finite["run_id"] == run_id, "server"])
        tested = {s for s in at_run if sizes.get(s, 0) >= changepoints.MIN_POINTS}
        moved = {f.server: f.change for f in flags}
        held = tuple(sort_servers(tested - set(moved)))
        # the run before: the series' run just before this one (any server's), so that one run pair
        # explains the whole event
        runs = finite.sort_values(["start_utc", "run_id"]).drop_duplicates("run_id")["run_id"].tolist()
        i = runs.index(run_id) if run_id in runs else 0
        before = runs[i - 1] if i > 0 else ""
        # the design is the part's own (a part may run its suite's design, not the run's)
        design = finite.drop_duplicates("run_id").set_index("run_id")[list(DESIGN)]

        def at(run: str) -> pd.Series:
            row = ident.loc[run].copy()
            row.update(design.loc[run])
            return row
        changed = (what_changed(at(before), at(run_id))
                   if before in ident.index and run_id in ident.index else ())
        out.append(Event(part, scen, metric, setup, run_id, before, flags[0].date,
                         tuple((s, moved[s]) for s in sort_servers(set(moved))), held, changed))
    return out


def cause(e: Event) -> str:
    """What the pattern of the servers says about where the change lies."""
    signs = {np.sign(c) for _, c in e.moved}
    names = [display_name(s) for s, _ in e.moved]
    if e.held:
        held = ", ".join(display_name(s) for s in e.held)
        return (f"only {', '.join(names)} moved while {held} held, so a change of "
                f"{'its' if len(names) == 1 else 'their'} own (code or build) is likelier than the machine or the load tool")
    if len(e.moved) == 1:
        return "the only server with a series here moved, so the point cannot tell a server's change from the bench's"
    if len(signs) > 1:
        return "the servers moved in opposite directions, so no single shared change explains it"
    return ("every server moved the same way, so not one server's code: a change they share, the machine, "
            "a load tool or the harness")


def sentence(e: Event, point_label: str, unit: str) -> str:
    """'h2c: GET /ping, 100 conns, req/s, from run R (2026-12-06): C +138 %, Go +97 %. Every server
    moved … With it changed: the lab's code (…), h2load's build (…).'"""
    moved = ", ".join(f"{display_name(s)} {_pct(c)}" for s, c in e.moved)
    with_it = (f"With it changed: {'; '.join(e.changed)}." if e.changed else
               f"Nothing recorded changed between {e.before_run or 'the run before'} and this run (same code, load "
               "tools, kernel and design): the machine's speed drifts between days.")
    return (f"{point_label}, {unit}, from run {e.run_id} ({e.date}): {moved}. "
            f"{cause(e)[0].upper()}{cause(e)[1:]}. {with_it}")
