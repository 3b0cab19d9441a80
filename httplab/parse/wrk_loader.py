"""Reads one wrk point (r<rep>.wrk.json + r<rep>.stdout.txt) into a LoadResult; with host=I, client
host I's share of a several-host point (r<rep>.h<I>.wrk.json + r<rep>.h<I>.stdout.txt)."""
from __future__ import annotations

import math
from pathlib import Path

from .loadresult import LoadResult, point_stem
from .wrk import check_req_per_s, read_wrk_json, read_wrk_text


def load_wrk_point(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None:
    """The hook JSON is the source of the numbers; the text report, when present, is parsed too
    and its Requests/sec must agree with the JSON within 1 % (RawConsistencyError otherwise).
    Returns None when wrk wrote no JSON (it died before done(), e.g. could not connect at start)."""
    stem = point_stem(rep, host)
    json_path = scenario_dir / f"{stem}.wrk.json"
    text_path = scenario_dir / f"{stem}.stdout.txt"
    if not json_path.is_file():
        return None
    hook = read_wrk_json(json_path)
    files = [str(json_path)]
    if text_path.is_file() and text_path.stat().st_size > 0:
        text = read_wrk_text(text_path)
        check_req_per_s(text, hook, text_path)
        files.append(str(text_path))
    errors = {
        "connect errors": hook.socket_errors.connect,
        "read errors": hook.socket_errors.read,
        "write errors": hook.socket_errors.write,
        "timeouts": hook.socket_errors.timeout,
        "non-2xx/3xx responses": hook.status_errors,
    }
    empty = int(hook.hist_counts.sum()) == 0
    return LoadResult(
        tool="wrk",
        requests=hook.requests,
        duration_s=hook.duration_s,
        bytes_read=hook.bytes,
        errors=errors,
        lat_mean_us=math.nan if hook.latency.mean is None else hook.latency.mean,
        lat_max_us=math.nan if hook.latency.max is None else hook.latency.max,
        hist_kind="none" if empty else hook.hist_kind,
        hist_values_us=hook.hist_values_us,
        hist_counts=hook.hist_counts,
        source_files=tuple(files),
    )
