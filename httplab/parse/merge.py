"""Several client hosts' results of one measured point as one LoadResult, exactly.

When N client hosts load a point at once, each tool measures its own share; the point's figures
are those of all requests together. So counts add up and histograms add up: a percentile of the
point is taken from the summed histogram, never averaged over the hosts' percentiles (the average
of two P99s is not the P99 of anything).

Rules (merge_results):
- requests, bytes read and every error counter (by label): summed; error_total summed when any
  host sets it (the others count with the sum of their counters).
- histogram: all hosts "exact" -> the union of their values, counts summed (the histogram of all
  samples). When any host has wrk's "quantiles" grid (scripts/lua/report.lua: GRID points, count 1
  each, written when the exact histogram was too wide) the hosts' distributions are mixed in
  proportion to their requests: host i's counts × GRID × requests_i / (its histogram's total), i.e.
  an exact host's counts × GRID (when its histogram counts its requests) and a grid host's points
  × requests_i, rounded to integers; kind "quantiles". Hosts with an empty histogram contribute
  nothing; "none" when all are empty. oha's "percentiles" summary cannot be mixed exactly: the
  merged histogram is then empty and a note fails the run.
- lat_mean_us: the mean of all samples when every histogram is exact (host means weighted by their
  histogram counts), otherwise the request-weighted mean of the host means; lat_max_us: the max.
- duration_s: the union of the hosts' load windows, max(started_i + duration_i) − min(started_i)
  (host.json's start, the tool's own duration), so that req/s = all requests / the time any host
  was loading: conservative, and exact when the starts are aligned.
- extra: rates and counts are summed (SUMMED_EXTRAS: h2load's req_per_s_with_log is every host's
  latency-run rate together; oha's target_rps, load_fraction, aborted_at_deadline); any other extra
  is a property of the point, kept when all hosts agree and NaN when they do not.
- text (TLS facts, load model): kept when the hosts that give one agree, None otherwise.
- notes: every host's, prefixed "client host I: "; source_files: every host's.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .client_hosts import ClientHost
from .loadresult import LoadResult

MIXTURE_GRID = 4000
"""scripts/lua/report.lua's GRID: the points of a "quantiles" histogram (each count 1)."""

SUMMED_EXTRAS = frozenset({"req_per_s_with_log", "target_rps", "load_fraction", "aborted_at_deadline"})
"""LoadResult.extra keys that are rates or counts of the host's share: the point's is their sum."""

MERGEABLE_KINDS = ("exact", "quantiles")


def _nonempty(r: LoadResult) -> bool:
    return r.hist_kind != "none" and len(r.hist_counts) > 0 and int(r.hist_counts.sum()) > 0


def _sum_by_value(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values ascending, their summed integer counts)."""
    out_v, inverse = np.unique(values, return_inverse=True)
    out_c = np.zeros(out_v.size, dtype=np.int64)
    np.add.at(out_c, inverse, counts)
    return out_v, out_c


def merge_histograms(results: Sequence[LoadResult]) -> tuple[str, np.ndarray, np.ndarray, str]:
    """(kind, values, counts, note) of the hosts' histograms summed (module docstring); note is ''
    unless the histograms cannot be merged."""
    parts = [r for r in results if _nonempty(r)]
    empty = ("none", np.array([], dtype=np.float64), np.array([], dtype=np.int64))
    if not parts:
        return (*empty, "")
    kinds = {r.hist_kind for r in parts}
    if not kinds <= set(MERGEABLE_KINDS):
        odd = ", ".join(sorted(kinds - set(MERGEABLE_KINDS)))
        return (*empty, f"client hosts: {odd} histograms cannot be merged exactly (no latency of the point)")
    if kinds == {"exact"}:
        values = np.concatenate([r.hist_values_us.astype(np.float64) for r in parts])
        counts = np.concatenate([r.hist_counts.astype(np.int64) for r in parts])
        return ("exact", *_sum_by_value(values, counts), "")
    vs, cs = [], []
    for r in parts:
        total = int(r.hist_counts.sum())
        scale = MIXTURE_GRID * max(r.requests, 0) / total
        vs.append(r.hist_values_us.astype(np.float64))
        cs.append(np.rint(r.hist_counts.astype(np.float64) * scale).astype(np.int64))
    values, counts = _sum_by_value(np.concatenate(vs), np.concatenate(cs))
    keep = counts > 0
    if not keep.any():
        return (*empty, "")
    return ("quantiles", values[keep], counts[keep], "")


def _mean(results: Sequence[LoadResult], all_exact: bool) -> float:
    num = den = 0.0
    for r in results:
        if math.isnan(r.lat_mean_us):
            continue
        w = float(r.hist_counts.sum()) if all_exact else float(r.requests)
        if w > 0:
            num += w * r.lat_mean_us
            den += w
    return num / den if den > 0 else math.nan


def union_window_s(results: Sequence[LoadResult], hosts: Sequence[ClientHost]) -> float:
    """max(started_i + duration_i) − min(started_i) over the hosts whose tool timed a window."""
    spans = [(h.started, h.started + r.duration_s) for r, h in zip(results, hosts)
             if r.duration_s > 0 and math.isfinite(r.duration_s)]
    if not spans:
        return math.nan
    return max(e for _, e in spans) - min(s for s, _ in spans)


def _extras(results: Sequence[LoadResult]) -> dict[str, float]:
    keys: list[str] = []
    for r in results:
        keys += [k for k in r.extra if k not in keys]
    out: dict[str, float] = {}
    for k in keys:
        values = [math.nan if r.extra.get(k) is None else float(r.extra[k]) for r in results]
        if k in SUMMED_EXTRAS:
            out[k] = float(sum(values))
        else:
            known = {v for v in values if not math.isnan(v)}
            out[k] = known.pop() if len(known) == 1 else math.nan
    return out


def _texts(results: Sequence[LoadResult]) -> dict[str, str | None]:
    keys: list[str] = []
    for r in results:
        keys += [k for k in r.text if k not in keys]
    out: dict[str, str | None] = {}
    for k in keys:
        given = {r.text.get(k) for r in results} - {None}
        out[k] = given.pop() if len(given) == 1 else None
    return out


def merge_results(results: Sequence[LoadResult], hosts: Sequence[ClientHost]) -> LoadResult:
    """The point's LoadResult from its client hosts' (results[i] measured on hosts[i]); the rules
    are the module docstring's. ValueError when the lists differ in length, are empty, or come from
    different tools."""
    if len(results) != len(hosts) or not results:
        raise ValueError(f"merge_results: {len(results)} results for {len(hosts)} hosts")
    tools = {r.tool for r in results}
    if len(tools) != 1:
        raise ValueError(f"merge_results: results of different tools {sorted(tools)}")
    errors: dict[str, int] = {}
    for r in results:
        for label, n in r.errors.items():
            errors[label] = errors.get(label, 0) + int(n)
    any_total = any(r.error_total is not None for r in results)
    kind, values, counts, hist_note = merge_histograms(results)
    nonempty = [r for r in results if _nonempty(r)]
    all_exact = bool(nonempty) and all(r.hist_kind == "exact" for r in nonempty)
    maxima = [r.lat_max_us for r in results if not math.isnan(r.lat_max_us)]
    notes = [f"client host {h.host}: {n}" for r, h in zip(results, hosts) for n in r.notes]
    if hist_note:
        notes.append(hist_note)
    return LoadResult(
        tool=tools.pop(),
        requests=int(sum(r.requests for r in results)),
        duration_s=union_window_s(results, hosts),
        bytes_read=float(sum(r.bytes_read for r in results)),
        errors=errors,
        lat_mean_us=_mean(nonempty, all_exact),
        lat_max_us=max(maxima) if maxima else math.nan,
        hist_kind=kind,
        hist_values_us=values,
        hist_counts=counts,
        source_files=tuple(f for r in results for f in r.source_files),
        notes=tuple(notes),
        extra=_extras(results),
        error_total=int(sum(r.total_errors for r in results)) if any_total else None,
        text=_texts(results),
    )
