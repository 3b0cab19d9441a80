"""Reads one wrk point (r<rep>.wrk.json + r<rep>.stdout.txt) into a LoadResult; with host=I, client
host I's share of a several-host point (r<rep>.h<I>.wrk.json + r<rep>.h<I>.stdout.txt)."""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .layout import STDERR, STDOUT, WRK_JSON, RepFiles
from .loadresult import LoadResult
from .wrk import check_req_per_s, parse_wrk_json, parse_wrk_text


# The lab's wrk (Debian's, rebuilt with --lab-connect-wait: scripts/patches/wrk-lab.patch) says on
# stderr how many connections were still connecting when its wait for them ran out and the clock
# started without them: they joined the window late, if at all.
_UNCONNECTED = re.compile(r"^wrk: (\d+) connection\(s\) had not finished connecting when the connect wait "
                          r"ended", re.MULTILINE)


def unconnected(files: RepFiles) -> int:
    """Connections the run's stderr names as not connected when its clock started (0 without the
    file or the line)."""
    text = files.text(STDERR, errors="replace")
    return 0 if text is None else sum(int(m.group(1)) for m in _UNCONNECTED.finditer(text))


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
        source_files=tuple(files_read),
    )
