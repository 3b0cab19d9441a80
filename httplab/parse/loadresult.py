"""The tool-agnostic result of one measured point (one load-tool run), and the registry that maps
scenario.json's `tool` to the function that reads that tool's raw files.

A loader has the signature `loader(scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult
| None` and returns None when the tool left no machine-readable output (e.g. it died at start-up).
host=None reads the single-host files r<rep>.*; host=I reads client host I's files r<rep>.h<I>.* of a
point loaded from several client hosts at once (scenario.json "client_hosts" ≥ 2; merge.py puts the
hosts together). Built in (loaders.py): "wrk" (wrk_loader.py), "h2load" (h2load_loader.py) and "oha"
(oha_loader.py); more with `register_loader(tool, loader)`.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .layout import point_stem  # noqa: F401  (the stem of a rep's files: the layout's)


@dataclass(frozen=True, eq=False)
class LoadResult:
    tool: str
    requests: int  # completed requests (responses) in the measured window
    duration_s: float  # measured window as the tool timed it
    bytes_read: float  # bytes the client read (responses), as the tool counts them
    # Error counters that make a run failed, keyed by a human label ("read errors",
    # "non-2xx/3xx responses", "h2load failed", ...). Zero entries may be present.
    errors: Mapping[str, int]
    lat_mean_us: float  # NaN when no latency was recorded
    lat_max_us: float
    hist_kind: str  # "exact" or "quantiles" (see scripts/lua/report.lua), "none" if empty
    hist_values_us: np.ndarray
    hist_counts: np.ndarray
    source_files: tuple[str, ...] = field(default=())
    # Reasons that make the run failed beyond the counters above (a missing file, a wrong
    # protocol, ...), already phrased for the fail_reason column ("latency run: ... missing").
    notes: tuple[str, ...] = field(default=())
    # Extra numeric columns of the runs frame this tool provides (e.g. h2load's
    # "req_per_s_with_log"); rawrun.EXTRA_COLUMNS lists the known ones (NaN for other tools).
    extra: Mapping[str, float] = field(default_factory=dict)
    # When the error counters overlap (h2load: failed ⊇ errored ⊇ timeout), the number of
    # erroneous requests to report in the `errors` column; None = sum of the counters.
    error_total: int | None = None
    # Text facts of the run the tool printed (h2load over TLS: "alpn", "alpn_source",
    # "tls_version", "tls_cipher"); used by tls_info.point_tls for what s_client left out.
    text: Mapping[str, str | None] = field(default_factory=dict)

    def over_seconds(self, seconds: float, latency_kept: bool) -> "LoadResult":
        """The result of a tool that ran in slices (httplab.lab.slicer): its rate over the seconds
        it was let run, not its own clock's, which ran on while it was stopped. Its latency figures
        hold the stopped time of the requests in flight at each stop; latency_kept=False drops them
        (wrk's: measured in the slices), True keeps them (h2load's: from its contiguous latency run)."""
        if latency_kept:
            return dataclasses.replace(self, duration_s=seconds)
        return dataclasses.replace(self, duration_s=seconds, lat_mean_us=math.nan, lat_max_us=math.nan,
                                   hist_kind="none", hist_values_us=np.zeros(0), hist_counts=np.zeros(0, dtype=np.int64))

    @property
    def req_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else math.nan

    @property
    def bytes_per_s(self) -> float:
        return self.bytes_read / self.duration_s if self.duration_s > 0 else math.nan

    @property
    def total_errors(self) -> int:
        if self.error_total is not None:
            return int(self.error_total)
        return int(sum(self.errors.values()))
