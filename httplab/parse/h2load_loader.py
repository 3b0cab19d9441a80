"""Reads one h2load point of the h2c suite into a LoadResult.

Per rep the shell runs h2load twice with the same parameters (writing h2load's per-request log
slows h2load down, so throughput and latency come from different runs):

    r<rep>.stdout.txt, r<rep>.stderr.txt              throughput run, no --log-file
    r<rep>.lat.stdout.txt, r<rep>.lat.stderr.txt      latency run, with --log-file
    r<rep>.lat.h2log.json                             its log compacted by `python -m httplab h2log`
    r<rep>.server.json                                server CPU around the THROUGHPUT run
    r<rep>.run.json                                   exit_code (throughput run); optional
                                                      lat_exit_code (latency run)

Row numbers: requests, req/s, bytes/s and errors from the throughput run (req/s = done / main
duration, see h2load.py); the latency histogram, lat_mean/max and the percentiles from the latency
run's log; `req_per_s_with_log` = the latency run's req/s (LoadResult.extra).

The point is failed (LoadResult.errors / notes, each saying which run) when either run has
failed/errored/timeout > 0 or any 3xx/4xx/5xx response, the log has failed streams (-1) or
non-2xx statuses, a client was still connecting when a run's window ended (the lab's h2load says
so on stderr), a file is missing or h2load printed no report, the application protocol is not
h2c/h2 (exactly h2 when scenario.json has "tls": true: HTTPS/2 negotiated by ALPN), the log's line count differs from the latency run's `done`, or the latency run's exit code
is non-zero. Log status 0 (h2load 1.52's mark for a request whose :status arrived during the
warm-up) is not an error. A file that is present but malformed raises RawFormatError.

With host=I (a point loaded from several client hosts at once) the same files of client host I are
read, r<rep>.h<I>.stdout.txt, r<rep>.h<I>.lat.*; the latency run's exit code is then that host's, from
r<rep>.h<I>.lat.host.json (client_hosts.py), not the rep's run.json (which holds the first non-zero
code of all hosts: it would fail every host of the rep for one host's fault).

A rep that had no latency run by the run's design (`--latency-every N`: run.json "latency_run":
false) has no latency (hist_kind none) and no latency-run files are looked for; its throughput run
is read and checked as in any other rep.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RawFormatError
from .h2load import H2loadText, check_consistency, has_summary, is_h2, parse_h2load_text
from .h2log import H2Log, h2log_of
from .layout import LAT_H2LOG, LAT_HOST_JSON, LAT_STDERR, LAT_STDOUT, RUN_JSON, STDERR, STDOUT, RepFiles, scenario_doc
from .loadresult import LoadResult
from .percentiles import weighted_mean

THROUGHPUT, LATENCY = "throughput run", "latency run"


def _read_text(files: RepFiles, suffix: str, which: str, notes: list[str], tls: bool = False
               ) -> H2loadText | None:
    text = files.text(suffix)
    if text is None:
        notes.append(f"{which}: {files.name(suffix)} missing")
        return None
    if not text.strip():
        notes.append(f"{which}: {files.name(suffix)} is empty (h2load wrote nothing)")
        return None
    if not has_summary(text):
        notes.append(f"{which}: h2load printed no report in {files.name(suffix)}")
        return None
    parsed = parse_h2load_text(text, files.where(suffix))
    check_consistency(parsed)
    if tls:
        if parsed.protocol != "h2":
            got = parsed.protocol or "none (no connection was made)"
            notes.append(f"{which}: application protocol {got}, expected h2 (TLS with ALPN)")
    elif not is_h2(parsed.protocol):
        got = parsed.protocol or "none (no connection was made)"
        notes.append(f"{which}: application protocol {got}, expected h2c")
    return parsed


def _h2log_error(stderr_text: str | None) -> str:
    """The last 'h2log: ...' line the compactor wrote to the latency run's stderr, if any."""
    if stderr_text is None:
        return ""
    lines = [ln.strip() for ln in stderr_text.splitlines() if ln.startswith("h2log:")]
    return lines[-1][:300] if lines else ""


def _text_errors(t: H2loadText | None, which: str, errors: dict[str, int]) -> int:
    """Counters of one run into errors; returns that run's erroneous requests (failed + 3xx)."""
    if t is None:
        return 0
    errors[f"h2load failed ({which})"] = t.failed
    errors[f"h2load errored ({which})"] = t.errored
    errors[f"h2load timeout ({which})"] = t.timeout
    errors[f"3xx/4xx/5xx responses ({which})"] = t.non_2xx
    return t.failed + t.status_3xx


# The lab's h2load (Debian's, rebuilt with three changes: scripts/patches/h2load-lab.patch) says on
# stderr how many clients were still connecting when its -D window ended (it closes them, where
# Debian's never exited) and, with --lab-connect-wait, when the wait for every client to connect
# ran out and the warm-up started without them (they joined the window late, if at all).
_UNCONNECTED = re.compile(r"^h2load: (\d+) client\(s\) had not finished connecting when the "
                          r"(duration|connect wait) ended", re.MULTILINE)
_WHEN = {"duration": "the window", "connect wait": "the connect wait"}


def _unconnected_errors(files: RepFiles, suffix: str, which: str, errors: dict[str, int]) -> None:
    """Clients of one run that were not connected for its whole window: the point did not load the
    server with the connections it names, so it is failed (as a request that failed would fail it)."""
    text = files.text(suffix, errors="replace")
    if text is None:
        return
    counts = {when: 0 for when in _WHEN.values()}
    for m in _UNCONNECTED.finditer(text):
        counts[_WHEN[m.group(2)]] += int(m.group(1))
    for when, n in counts.items():
        errors[f"clients still connecting when {when} ended ({which})"] = n


def _lat_exit_code(files: RepFiles, notes: list[str]) -> int | None:
    """The latency run's exit code: run.json's lat_exit_code (one host), or host I's own from its
    r<rep>.h<I>.lat.host.json (a missing file is a note); None when not recorded."""
    if files.host is not None:
        from .client_hosts import client_host_of

        doc = files.json(LAT_HOST_JSON)
        if doc is None:
            notes.append(f"{LATENCY}: {files.name(LAT_HOST_JSON)} missing")
            return None
        return client_host_of(doc, files.where(LAT_HOST_JSON), files.host).exit_code
    run_json = files.json(RUN_JSON)
    if run_json is None:
        return None
    lat_exit = run_json.get("lat_exit_code")
    if lat_exit is not None and (isinstance(lat_exit, bool) or not isinstance(lat_exit, int)):
        raise RawFormatError(files.where(RUN_JSON), f"unexpected value {lat_exit!r}", key="lat_exit_code")
    return lat_exit


def _latency_planned(files: RepFiles) -> bool:
    """False when run.json says the rep had no latency run by the run's design (latency_run false:
    `--latency-every N` keeps it in every Nth rep); its files are then not looked for."""
    rep = files.rep_files()
    run_json = rep.json(RUN_JSON)
    flag = run_json.get("latency_run", True) if run_json is not None else True
    if not isinstance(flag, bool):
        raise RawFormatError(rep.where(RUN_JSON), f"unexpected value {flag!r}", key="latency_run")
    return flag


def load_h2load_point(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None:
    """h2load_result of the rep's files in scenario_dir (client host `host`'s with host=I) and
    its scenario.json ({} when absent)."""
    return h2load_result(RepFiles.of_dir(scenario_dir, rep, host), scenario_doc(scenario_dir))


def h2load_result(files: RepFiles, scen: Mapping[str, Any]) -> LoadResult:
    """LoadResult of the point's files, or of client host files.host's share of it (never None:
    missing files become notes that fail the run); `scen` is its scenario.json ("tls")."""
    notes: list[str] = []
    errors: dict[str, int] = {}

    tls = scen.get("tls") is True
    thr = _read_text(files, STDOUT, THROUGHPUT, notes, tls)
    planned = _latency_planned(files)
    lat = _read_text(files, LAT_STDOUT, LATENCY, notes, tls) if planned else None
    n_err = _text_errors(thr, THROUGHPUT, errors) + _text_errors(lat, LATENCY, errors)
    _unconnected_errors(files, STDERR, THROUGHPUT, errors)
    if planned:
        _unconnected_errors(files, LAT_STDERR, LATENCY, errors)

    log: H2Log | None = None
    log_doc = files.json(LAT_H2LOG) if planned else None
    if not planned:
        pass  # no latency run in this rep by the run's design (--latency-every): no latency, no fault
    elif log_doc is not None:
        log = h2log_of(log_doc, files.where(LAT_H2LOG))
        errors[f"failed streams (-1) in the log ({LATENCY})"] = log.failed_streams
        for status, n in sorted(log.non_2xx.items()):
            errors[f"status {status} in the log ({LATENCY})"] = n
        if lat is not None and log.requests != lat.done:
            notes.append(f"{LATENCY}: the log has {log.requests:,} requests but h2load reports "
                         f"{lat.done:,} done")
    else:
        why = _h2log_error(files.text(LAT_STDERR, errors="replace"))
        notes.append(f"{LATENCY}: {files.name(LAT_H2LOG)} missing" + (f" ({why})" if why else ""))

    lat_exit = _lat_exit_code(files, notes) if planned else None
    if lat_exit is not None and lat_exit != 0:
        notes.append(f"{LATENCY}: h2load exited with code {lat_exit}")

    if log is not None and log.requests > 0:
        values = log.hist_values_us.astype(np.float64)
        counts = log.hist_counts.astype(np.int64)
        lat_mean = weighted_mean(values, counts)
        lat_max = float(values[counts > 0].max())
        kind = "exact"
    else:
        values, counts = np.array([], dtype=np.float64), np.array([], dtype=np.int64)
        lat_mean = lat_max = math.nan
        kind = "none"
    with_log = (lat.done / lat.measured_duration_s
                if lat is not None and lat.measured_duration_s > 0 else math.nan)
    files_read = tuple(files.where(s) for s in (STDOUT, LAT_STDOUT, LAT_H2LOG) if files.has(s))
    text: dict[str, str | None] = {}
    if tls:
        from .tls_info import parse_h2load_tls
        for t, suffix in ((thr, STDOUT), (lat, LAT_STDOUT)):  # the throughput run's handshake first
            if t is None:
                continue
            info = parse_h2load_tls(files.text(suffix) or "", t.path)
            if info is not None:
                text = {"alpn": info.alpn, "alpn_source": "h2load", "tls_version": info.version,
                        "tls_cipher": info.cipher}
                break
    return LoadResult(
        tool="h2load",
        requests=thr.done if thr is not None else 0,
        duration_s=thr.measured_duration_s if thr is not None else math.nan,
        bytes_read=float(thr.traffic_bytes) if thr is not None else math.nan,
        errors=errors,
        lat_mean_us=lat_mean,
        lat_max_us=lat_max,
        hist_kind=kind,
        hist_values_us=values,
        hist_counts=counts,
        source_files=files_read,
        notes=tuple(notes),
        extra={"req_per_s_with_log": with_log},
        error_total=n_err + (log.failed_streams if log is not None and lat is None else 0),
        text=text,
    )
