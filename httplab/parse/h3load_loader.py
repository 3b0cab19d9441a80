"""Reads one h3load point (the HTTP/3 suite) into a LoadResult.

Files of a point: r<rep>.h3load.json (h3load's report, httplab.parse.h3load), r<rep>.stdout.txt and
r<rep>.stderr.txt (its summary line, and the first error's reason). Its TLS facts (the ALPN its
handshakes agreed, TLS 1.3) are the point's: QUIC has no TCP handshake for s_client to probe.

Row numbers, as the server's CPU window reads them (it ends with the load: h3load's end-of-load
snapshot): requests = every answer of the run (any status; the run has no warm-up of its own: the
suite's warm-up is a run before it, as for wrk and h2load; requests in flight when the window ended
are abandoned, as wrk's are), req/s = requests / load_s (from the start, connects included, to the
last answer); bytes = response
bodies only (h2load's and wrk's count headers and framing too). The latency histogram is the
window's, exact to the µs (hist_kind "exact").

The run is failed (errors) on a connection not made, a stream or connection error, a request not
answered within h3load's --timeout, or any non-2xx status. A failed run's notes also give h3load's
own words for the first error of each kind (its stderr: "h3load's first connect error: ... no
handshake within 5s"), so that the reason says why and not only how many.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .h3load import h3load_report
from .layout import H3LOAD_JSON, STDERR, RepFiles, scenario_doc
from .loadresult import LoadResult
from .percentiles import weighted_mean

ERROR_LABELS = {"connect": "h3load: connections not made", "stream": "h3load: stream or connection errors",
                "timeout": "h3load: requests not answered in time"}


def load_h3load_point(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None:
    """h3load_result of the rep's files in scenario_dir and its scenario.json ({} when absent)."""
    return h3load_result(RepFiles.of_dir(scenario_dir, rep, host), scenario_doc(scenario_dir))


def h3load_result(files: RepFiles, scen: Mapping[str, Any]) -> LoadResult | None:
    """LoadResult of the point's files; None when h3load wrote no report (it refused its
    arguments, or died)."""
    if files.size(H3LOAD_JSON) == 0:
        return None
    where = files.where(H3LOAD_JSON)
    rep = h3load_report(files.json(H3LOAD_JSON) or {}, where)
    errors = {ERROR_LABELS[k]: n for k, n in rep.errors.items()}
    errors["non-2xx responses"] = rep.non_2xx_total
    notes: list[str] = []
    if any(errors.values()):
        notes.extend(first_errors(files.text(STDERR, errors="replace")))
    if rep.requests_total > 0 and rep.requests_window == 0:
        notes.append(f"no answer completed inside h3load's window ({files.name(H3LOAD_JSON)})")
    want = (scen.get("connections"), scen.get("streams"))
    if all(isinstance(v, int) for v in want) and want != (rep.connections, rep.streams):
        notes.append(f"h3load ran {rep.connections} connections × {rep.streams} streams, the scenario says "
                     f"{want[0]} × {want[1]}")
    values = rep.hist_values_us.astype(np.float64)
    counts = rep.hist_counts
    return LoadResult(
        tool="h3load",
        requests=rep.requests_total,
        duration_s=rep.load_s,
        bytes_read=float(rep.body_bytes_total),
        errors=errors,
        lat_mean_us=weighted_mean(values, counts) if counts.sum() > 0 else math.nan,
        lat_max_us=float(values.max()) if len(values) else math.nan,
        hist_kind="exact" if counts.sum() > 0 else "none",
        hist_values_us=values,
        hist_counts=counts,
        source_files=(where,),
        notes=tuple(notes),
        # the TLS facts of its own handshakes (a QUIC server has no TCP port to probe with s_client)
        text={"alpn": rep.alpn, "alpn_source": "h3load", "tls_version": rep.tls_version},
    )


FIRST_ERROR = "h3load: first "


def first_errors(stderr_text: str | None) -> list[str]:
    """h3load's 'first connect error: ...' and 'first stream error: ...' lines, as notes."""
    if not stderr_text:
        return []
    return [f"h3load's first {ln.strip()[len(FIRST_ERROR):]}" for ln in stderr_text.splitlines()
            if ln.startswith(FIRST_ERROR)]
