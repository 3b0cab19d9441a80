"""Reads one oha point (the latency suites) into a LoadResult.

Files of a point: r<rep>.oha.json (oha's JSON report, httplab.parse.oha), r<rep>.stdout.txt and
r<rep>.stderr.txt (what else oha printed), and scenario.json, whose load fields the suite wrote:
load_model (closed | open | open_uncorrected), target_rps, load_fraction and capacity_ref_rps.

Row numbers: requests = answered requests of the whole run (any status; warm-up included, as the
server's CPU time is); req/s = requests / oha's total time. The latency histogram is the window's
(r<rep>.oha.hist.json, httplab.parse.oha_db: every request scheduled after the warm-up, 1 µs
resolution): hist_kind "exact". Points measured before that file existed fall back on oha's nine
percentiles of the whole run and its maximum, stored as a "percentiles" histogram, each weighted by
the share of requests it stands for (per million), so that the lab's nearest-rank rule
(httplab.parse.percentiles) gives back exactly oha's P50, P90, P99 and P99.9.

The run is failed (errors) on any client-side error (refused, reset, timeout: oha -t), any non-2xx
status, or more requests aborted at the -z deadline than could have been in flight then
(connections × streams): a few are the window's edge, more means answers stopped coming.

host=I reads client host I's files (r<rep>.h<I>.oha.json, ...) the same way; the shell does not
load the latency suites from several client hosts (their target rate is not split over hosts), and
merge.py refuses to merge a "percentiles" histogram (oha's nine percentiles do not add up).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .layout import OHA_HIST, OHA_JSON, RepFiles, scenario_doc
from .loadresult import LoadResult
from .oha import PERCENTILES, oha_report
from .oha_db import window_of
from .percentiles import weighted_mean

# Weights (per million requests) of the percentile grid: each percentile stands for the requests
# between it and the one below; the maximum for the last 0.01 %.
_EDGES = (0.0,) + PERCENTILES + (100.0,)
GRID_WEIGHTS: tuple[int, ...] = tuple(round((hi - lo) * 10_000) for lo, hi in zip(_EDGES[:-1], _EDGES[1:]))

LOAD_FIELDS = ("target_rps", "load_fraction", "capacity_ref_rps")


def _number_or_nan(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def load_oha_point(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None:
    """oha_result of the rep's files in scenario_dir (client host `host`'s with host=I) and its
    scenario.json ({} when absent)."""
    return oha_result(RepFiles.of_dir(scenario_dir, rep, host), scenario_doc(scenario_dir))


def oha_result(files: RepFiles, scen: Mapping[str, Any]) -> LoadResult | None:
    """LoadResult of the point's (or client host's) files and its scenario.json `scen`; None when
    oha wrote no report (it died at start-up)."""
    if files.size(OHA_JSON) == 0:
        return None
    where = files.where(OHA_JSON)
    rep_ = oha_report(files.json(OHA_JSON) or {}, where)
    in_flight = int(scen.get("connections", 1) or 1) * int(scen.get("streams", 1) or 1)
    errors: dict[str, int] = {f"oha: {msg}": n for msg, n in sorted(rep_.errors.items())}
    errors["non-2xx responses"] = rep_.non_2xx
    if rep_.aborted_at_deadline > in_flight:
        errors[f"requests aborted at the deadline beyond the {in_flight} in flight"] = rep_.aborted_at_deadline
    answered = rep_.responses
    notes: list[str] = []
    files_read = [where]
    mean_us, max_us = rep_.average_s * 1e6, rep_.slowest_s * 1e6
    window_name = files.name(OHA_HIST)
    if files.has(OHA_HIST):
        win = window_of(files.json(OHA_HIST) or {}, files.where(OHA_HIST))
        files_read.append(files.where(OHA_HIST))
        values_us, counts = win.hist_values_us.astype(np.float64), win.hist_counts
        kind = "exact" if win.requests_window > 0 else "none"
        mean_us = weighted_mean(values_us, counts)
        max_us = float(values_us.max()) if len(values_us) else math.nan
        if answered > 0 and win.requests_window == 0:
            notes.append(f"no request answered after the {win.skip_s:g} s warm-up ({window_name})")
    elif scen.get("warmup_in_run") is True and answered > 0:
        values_us, counts, kind = np.array([], dtype=np.float64), np.array([], dtype=np.int64), "none"
        notes.append(f"{window_name} missing: no latency histogram of the window")
    elif answered > 0 and rep_.percentiles_s:
        values_us = np.array([v * 1e6 for v in rep_.percentiles_s.values()] + [rep_.slowest_s * 1e6])
        counts = np.array(GRID_WEIGHTS, dtype=np.int64)
        kind = "percentiles"
    else:
        values_us, counts, kind = np.array([], dtype=np.float64), np.array([], dtype=np.int64), "none"
    extra = {k: _number_or_nan(scen.get(k)) for k in LOAD_FIELDS}
    extra["aborted_at_deadline"] = float(rep_.aborted_at_deadline)
    model = scen.get("load_model")
    return LoadResult(
        tool="oha",
        requests=answered,
        duration_s=rep_.total_s,
        bytes_read=float(rep_.bytes_read),
        errors=errors,
        lat_mean_us=mean_us,
        lat_max_us=max_us,
        hist_kind=kind,
        hist_values_us=values_us,
        hist_counts=counts,
        source_files=tuple(files_read),
        notes=tuple(notes),
        extra=extra,
        text={"load_model": model if isinstance(model, str) else None},
    )
