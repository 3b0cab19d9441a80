"""What the index and every report's first screen say about a run beyond its data: its status in
reports/runs.toml (current, perhaps with a caveat, or superseded by a later run, with the reason)
and its profile label with the parameters it was run with (profile_label).

The runs file sits at the reports root (reports/runs.toml). The index reads it from the folder it
writes (index.collect); a report's header finds it with runs_file: $REPORTS_ROOT when set (the
scripts' reports root, scripts/lib.sh), else reports/ under the repository root. This module
imports nothing of the report engine or the index, so both can use it.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tidy.rawrun import server_warmups, suite_params

RUNS_FILE = "runs.toml"   # reports/runs.toml: the committed runs' status (superseded, caveats)
RUN_STATES = ("current", "superseded")
RUN_KEYS = ("status", "superseded_by", "reason", "caveat")


@dataclass(frozen=True)
class RunStatus:
    status: str = "current"        # RUN_STATES
    superseded_by: str = ""        # the run that replaced this one (superseded runs)
    reason: str = ""               # one sentence: why it was superseded
    caveat: str = ""               # one or two sentences: a known problem of the run's figures


def _text(value: Any) -> str:
    """A TOML string made one line (whitespace runs, newlines included, become one space)."""
    return " ".join(str(value).split())


def read_run_status(path: Path) -> dict[str, RunStatus]:
    """The runs file ([runs."<run_id>"] tables: status, superseded_by, reason, caveat): run id -> its
    status ({} when the file is absent). ValueError, naming the file and the run, for an unknown key
    or status, a value that is not a string, a superseded run without the run that replaced it or
    without a reason, and a current run given superseded_by or reason (its note is its caveat)."""
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        runs = tomllib.load(f).get("runs", {})
    if not isinstance(runs, dict):
        raise ValueError(f"{path}: 'runs' must be a table of [runs.\"<run_id>\"] tables")
    out = {}
    for run_id, row in runs.items():
        if not isinstance(row, dict):
            raise ValueError(f"{path}: run {run_id}: expected a table [runs.\"{run_id}\"]")
        unknown = sorted(set(row) - set(RUN_KEYS))
        if unknown:
            raise ValueError(f"{path}: run {run_id}: unknown key(s) {', '.join(unknown)} "
                             f"(known: {', '.join(RUN_KEYS)})")
        wrong = sorted(k for k, v in row.items() if not isinstance(v, str))
        if wrong:
            raise ValueError(f"{path}: run {run_id}: {', '.join(wrong)} must be a string")
        status = RunStatus(row.get("status", "current"), row.get("superseded_by", "").strip(),
                           _text(row.get("reason", "")), _text(row.get("caveat", "")))
        if status.status not in RUN_STATES:
            raise ValueError(f"{path}: run {run_id}: status {status.status!r} is not one of {', '.join(RUN_STATES)}")
        if status.status == "superseded" and not (status.superseded_by and status.reason):
            raise ValueError(f"{path}: run {run_id}: a superseded run needs superseded_by and reason")
        if status.status == "current" and (status.superseded_by or status.reason):
            raise ValueError(f"{path}: run {run_id}: superseded_by and reason are for superseded runs "
                             "(a current run's known problem is its caveat)")
        out[run_id] = status
    return out


def runs_file(root: Path) -> Path:
    """The runs file a report of a run under the repository `root` is described by: $REPORTS_ROOT's
    (relative to root when relative) when that is set, else root/reports/runs.toml."""
    reports = Path(os.environ.get("REPORTS_ROOT") or "reports")
    return (reports if reports.is_absolute() else root / reports) / RUNS_FILE


def run_status(run_id: str, root: Path) -> RunStatus:
    """The run's status in its runs file (runs_file); a run the file does not name is current."""
    return read_run_status(runs_file(root)).get(run_id, RunStatus())


def _seconds(x: Any) -> str:
    return f"{float(x):g} s"


def _runs_words(params: dict[str, Any], older_own: dict[str, Any]) -> list[str]:
    """'1 s runs + 1 s warm-up', '12 reps' (each left out where params lack it); older_own: an older
    run's suites warmed otherwise (suite_params without a design), named after the runs."""
    out = []
    if params.get("duration_s") is not None:
        runs = f"{_seconds(params['duration_s'])} runs"
        if params.get("warmup_s"):
            runs += f" + {_seconds(params['warmup_s'])} warm-up"
        runs += "".join(f" ({suite}: + {_seconds(p['warmup_s'])} warm-up)" for suite, p in sorted(older_own.items())
                        if isinstance(p, dict) and p.get("warmup_s") is not None)
        out.append(runs)
    if params.get("reps") is not None:
        reps = int(params["reps"])
        out.append(f"{reps} rep{'s' if reps != 1 else ''}")
    if params.get("blocks") == "sliced":
        out.append("interleaved")
    return out


def _part_designs(meta: dict[str, Any]) -> list[tuple[list[str], dict[str, Any]]]:
    """The run's parts grouped by the design each ran in (suite_params.<part> with its blocks, as
    runs since the suites' own designs record it; else the run's params), in the run's order:
    [(parts, params)]; [] for a run that recorded none."""
    own = meta.get("suite_params") if isinstance(meta.get("suite_params"), dict) else {}
    designs = {k: v for k, v in own.items() if isinstance(v, dict) and "blocks" in v}
    if not designs:
        return []
    groups: dict[tuple, tuple[list[str], dict[str, Any]]] = {}
    for part in [str(x) for x in meta.get("suites") or []] or sorted(designs):
        p = suite_params(meta, part)
        key = tuple(p.get(k) for k in ("duration_s", "warmup_s", "reps", "blocks"))
        groups.setdefault(key, ([], p))[0].append(part)
    return list(groups.values())


def profile_label(meta: dict[str, Any]) -> str:
    """The run's profile with what its meta.json params say it ran: 'full (3 s runs + 1 s warm-up,
    5 reps, A/A)', 'full (2 s runs + 1 s warm-up, 5 reps, no A/A)'. A parameter the run did not
    record is left out (runs made before the A/A copy record no `aa`); servers warmed longer
    (server_params: their manifests' min_warmup_s) are counted: 'full (1 s runs (4 servers: + 1 s
    warm-up), 12 reps, A/A)', as an older run's suite warmed otherwise (suite_params) is named:
    'full (1 s runs (languages: + 1 s warm-up), 12 reps, A/A)'. Where the parts ran in designs of
    their own (suite_params with blocks: a suite's [full]) each design names its parts: 'full
    (http1, h2c: 1 s runs, 12 reps, interleaved; latency_h1: 3 s runs + 1 s warm-up, 5 reps, A/A)';
    '—' without a profile."""
    profile = str(meta.get("profile") or "—")
    params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
    own = meta.get("suite_params") if isinstance(meta.get("suite_params"), dict) else {}
    parts: list[str] = []
    try:
        designs = _part_designs(meta)
        if len(designs) > 1:
            parts.append("; ".join(f"{', '.join(names)}: {', '.join(_runs_words(p, {}))}" for names, p in designs))
        else:
            parts += _runs_words(designs[0][1] if designs else params, {} if designs else own)
        if parts and params.get("duration_s") is not None:
            by_warmup: dict[float, int] = {}
            for w in server_warmups(meta).values():
                by_warmup[w] = by_warmup.get(w, 0) + 1
            parts[0] += "".join(f" ({n} server{'s' if n != 1 else ''}: + {_seconds(w)} warm-up)"
                                for w, n in sorted(by_warmup.items()))
    except (TypeError, ValueError):
        parts = []
    if "aa" in params:
        parts.append("A/A" if params["aa"] else "no A/A")
    return f"{profile} ({', '.join(parts)})" if parts else profile
