"""Reads one wrk point (r<rep>.wrk.json + r<rep>.stdout.txt) into a LoadResult; with host=I, client
host I's share of a several-host point (r<rep>.h<I>.wrk.json + r<rep>.h<I>.stdout.txt).

A point of a sliced block (r<rep>.slices.json) was measured in slices: its own histogram would hold
the seconds its requests in flight sat stopped, so wrk's done() hook wrote none. Its latency comes
from the contiguous latency run after the window (r<rep>.lat.wrk.json + r<rep>.lat.stdout.txt,
scripts/lib/measure.sh wrk_after) in the reps whose run.json says latency_run true; that run's
socket errors and non-2xx responses fail the point as the measured run's do. Sliced points of runs
made before it (no latency_run key) have no latency."""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RawFormatError
from .layout import LAT_STDERR, LAT_STDOUT, LAT_WRK_JSON, RUN_JSON, SLICES_JSON, STDERR, STDOUT, WRK_JSON, RepFiles
from .loadresult import LoadResult
from .wrk import check_req_per_s, parse_wrk_json, parse_wrk_text


# The lab's wrk (Debian's, rebuilt with --lab-connect-wait: scripts/patches/wrk-lab.patch) says on
# stderr how many connections were still connecting when its wait for them ran out and the clock
# started without them: they joined the window late, if at all.
_UNCONNECTED = re.compile(r"^wrk: (\d+) connection\(s\) had not finished connecting when the connect wait "
                          r"ended", re.MULTILINE)


def unconnected(files: RepFiles, stderr: str = STDERR) -> int:
    """Connections the run's stderr (or the latency run's: LAT_STDERR) names as not connected when
    its clock started (0 without the file or the line)."""
    text = files.text(stderr, errors="replace")
    return 0 if text is None else sum(int(m.group(1)) for m in _UNCONNECTED.finditer(text))


def _latency_run(files: RepFiles) -> bool:
    """Whether the rep's run.json says it had wrk's latency run (latency_run true; written since
    the sliced reps have one)."""
    doc = files.rep_files().json(RUN_JSON) or {}
    flag = doc.get("latency_run", False)
    if not isinstance(flag, bool):
        raise RawFormatError(files.rep_files().where(RUN_JSON), f"unexpected value {flag!r}", key="latency_run")
    return flag


def load_wrk_point(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None:
    """wrk_result of the rep's files in scenario_dir (client host `host`'s with host=I)."""
    return wrk_result(RepFiles.of_dir(scenario_dir, rep, host))


def wrk_result(files: RepFiles, scen: Mapping[str, Any] | None = None) -> LoadResult | None:
    """The hook JSON is the source of the numbers; the text report, when present, is parsed too
    and its Requests/sec must agree with the JSON within 1 % (RawConsistencyError otherwise).
    Returns None when wrk wrote no JSON (it died before done(), e.g. could not connect at start).
    `scen` (scenario.json) is not needed."""
    hook_text = files.text(WRK_JSON, errors="replace")
    if hook_text is None:
        return None
    hook = parse_wrk_json(hook_text, files.where(WRK_JSON))
    files_read = [files.where(WRK_JSON)]
    if files.size(STDOUT) > 0:
        text = parse_wrk_text(files.text(STDOUT, errors="replace") or "", files.where(STDOUT))
        check_req_per_s(text, hook, files.where(STDOUT))
        files_read.append(files.where(STDOUT))
    errors = {
        "connect errors": hook.socket_errors.connect,
        "read errors": hook.socket_errors.read,
        "write errors": hook.socket_errors.write,
        "timeouts": hook.socket_errors.timeout,
        "non-2xx/3xx responses": hook.status_errors,
        "connections still connecting when the connect wait ended": unconnected(files),
    }
    latency, notes = hook, []
    if files.has(SLICES_JSON):
        # a sliced point: its latency only from its own latency run, where the design had one
        latency = None
        planned = _latency_run(files)
        lat_text = files.text(LAT_WRK_JSON, errors="replace") if planned else None
        if planned and lat_text is None:
            # (the run died before its done() hook: the point fails, as h2load's without its log)
            notes.append(f"wrk's latency run: {files.name(LAT_WRK_JSON)} missing")
        if lat_text is not None:
            latency = parse_wrk_json(lat_text, files.where(LAT_WRK_JSON))
            files_read.append(files.where(LAT_WRK_JSON))
            if files.size(LAT_STDOUT) > 0:
                check_req_per_s(parse_wrk_text(files.text(LAT_STDOUT, errors="replace") or "", files.where(LAT_STDOUT)),
                                latency, files.where(LAT_STDOUT))
                files_read.append(files.where(LAT_STDOUT))
            for what, n in (("connect errors", latency.socket_errors.connect), ("read errors", latency.socket_errors.read),
                            ("write errors", latency.socket_errors.write), ("timeouts", latency.socket_errors.timeout),
                            ("non-2xx/3xx responses", latency.status_errors),
                            ("connections still connecting when the connect wait ended", unconnected(files, LAT_STDERR))):
                errors[f"{what} (latency run)"] = n
    if latency is None:
        return LoadResult(tool="wrk", requests=hook.requests, duration_s=hook.duration_s, bytes_read=hook.bytes,
                          errors=errors, lat_mean_us=math.nan, lat_max_us=math.nan, hist_kind="none",
                          hist_values_us=np.zeros(0), hist_counts=np.zeros(0, dtype=np.int64),
                          source_files=tuple(files_read), notes=tuple(notes))
    empty = int(latency.hist_counts.sum()) == 0
    return LoadResult(
        tool="wrk",
        requests=hook.requests,
        duration_s=hook.duration_s,
        bytes_read=hook.bytes,
        errors=errors,
        lat_mean_us=math.nan if latency.latency.mean is None else latency.latency.mean,
        lat_max_us=math.nan if latency.latency.max is None else latency.latency.max,
        hist_kind="none" if empty else latency.hist_kind,
        hist_values_us=latency.hist_values_us,
        hist_counts=latency.hist_counts,
        source_files=tuple(files_read),
    )
