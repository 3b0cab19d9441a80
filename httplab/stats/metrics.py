"""The metrics the statistics layer estimates and compares: where each comes from in the runs
frame, its unit, and which direction is better (which names the verdict of a comparison)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Metric:
    name: str
    label: str                  # as the reports name it
    unit: str
    higher_is_better: bool | None   # None: neither direction is better (a CPU share)
    better: str                 # the verdict when A is better (A "faster" than B)
    worse: str

    def values(self, runs: pd.DataFrame) -> np.ndarray:
        """This metric per run (row) of a runs frame, as float64 (NaN where unknown)."""
        if self.name in _PER_RUN_RATIOS:
            top, bottom = _PER_RUN_RATIOS[self.name]
            if top not in runs or bottom not in runs:
                return np.full(len(runs), np.nan)
            hi = runs[top].to_numpy(dtype=np.float64, na_value=np.nan)
            lo = runs[bottom].to_numpy(dtype=np.float64, na_value=np.nan)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(lo > 0, hi / lo, np.nan)
        if self.name not in runs:
            return np.full(len(runs), np.nan)
        return runs[self.name].to_numpy(dtype=np.float64, na_value=np.nan)


# Metrics that are a ratio of two columns of the same run: name -> (numerator, denominator).
_PER_RUN_RATIOS = {
    "tail_ratio": ("lat_p99_us", "lat_p50_us"),
    # h2load points run twice per rep, without and with --log-file: the log's cost
    "log_cost": ("req_per_s_with_log", "req_per_s"),
}


def _speed(name: str, label: str, unit: str, higher: bool) -> Metric:
    return Metric(name, label, unit, higher, "faster", "slower")


def _latency(name: str, label: str, short: str) -> Metric:
    """A latency percentile: lower is better, and a Δ of it is 'lower P99' or 'higher P99', never
    'faster' or 'slower' (those are throughput's words)."""
    return Metric(name, label, "µs", False, f"lower {short}", f"higher {short}")


METRICS: dict[str, Metric] = {m.name: m for m in (
    _speed("req_per_s", "req/s", "1/s", True),
    _latency("lat_p50_us", "P50 latency", "P50"),
    _latency("lat_p99_us", "P99 latency", "P99"),
    _latency("lat_p999_us", "P99.9 latency", "P99.9"),
    # the write-ups print the tool's mean (wrk's and h2load's "Latency" column) and max per point
    _latency("lat_mean_us", "mean latency", "mean"),
    _latency("lat_max_us", "max latency", "max"),
    Metric("tail_ratio", "P99/P50 (per run)", "ratio", False, "tighter tail", "wider tail"),
    Metric("log_cost", "req/s with h2load's log ÷ without (per run)", "ratio", True, "higher", "lower"),
    Metric("cpu_us_per_req", "CPU-µs/req", "µs", False, "cheaper", "costlier"),
    Metric("capacity_rps", "capacity (req per CPU-second)", "1/s", True, "cheaper", "costlier"),
    Metric("cpu_pct", "server CPU", "% of a core", None, "higher", "lower"),
    Metric("rss_peak_kb", "peak RSS of the window", "KiB", False, "less memory", "more memory"),
)}
