"""Helpers of test_coordinated_omission: the stalling toy server (stall_server.py) pinned to CPU 0,
oha and wrk pinned to CPU 1, their reports read with the lab's parsers, and wrk's own
coordinated-omission correction undone to get back the latencies wrk actually measured."""
from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from httplab.parse.oha import OhaReport, parse_oha_json
from httplab.parse.percentiles import weighted_percentile
from httplab.parse.wrk import WrkJson, read_wrk_json, parse_wrk_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SERVER = HERE / "stall_server.py"
REPORT_LUA = REPO / "scripts" / "lua" / "report.lua"
SERVER_CPU, TOOL_CPU = "0", "1"
TOOL_MARGIN_S = 20  # beyond -z/-d: start-up, -w's wait for answers in flight, the report


@contextlib.contextmanager
def stall_server(stall_ms: float, period_ms: float = 500.0) -> Iterator[str]:
    """The toy server on a kernel-chosen loopback port, pinned to CPU 0; yields its /ping URL and
    always kills it."""
    proc = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, sys.executable, str(SERVER),
         "--stall-ms", str(stall_ms), "--period-ms", str(period_ms)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 10.0)
        line = proc.stdout.readline().strip() if ready else ""
        if not line.startswith("listening on "):
            raise RuntimeError(f"stall_server did not start: {line!r}")
        yield f"http://{line.removeprefix('listening on ')}/ping"
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def _run(cmd: list[str], timeout_s: float, env: dict[str, str] | None = None) -> str:
    full_env = None if env is None else {**os.environ, **env}
    done = subprocess.run(["taskset", "-c", TOOL_CPU, *cmd], capture_output=True, text=True,
                          timeout=timeout_s, env=full_env)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def oha(url: str, out: Path, conns: int, seconds: int, rate: float | None = None,
        corrected: bool = False) -> OhaReport:
    """One oha run, the lab's flags (scripts/lib/tool_oha.sh): closed loop without rate; paced at
    `rate` req/s, timed from the scheduled send with `corrected` (the open model) or from the
    actual send without (open_uncorrected)."""
    cmd = ["oha", "--no-tui", "--output-format", "json", "--worker-threads", "1",
           "-c", str(conns), "-z", f"{seconds}s", "-t", "5s", "-w"]
    if rate is not None:
        cmd += ["-q", str(rate)] + (["--latency-correction"] if corrected else [])
    out.write_text(_run(cmd + [url], seconds + TOOL_MARGIN_S))
    return parse_oha_json(out)


@dataclass(frozen=True, eq=False)
class WrkRun:
    hook: WrkJson  # scripts/lua/report.lua's JSON: wrk's histogram, after wrk's correction
    non2xx: int  # from wrk's text report
    interval_us: int  # the expected interval wrk's correction used
    raw_values_us: np.ndarray  # the histogram wrk recorded, its correction undone
    raw_counts: np.ndarray

    def percentile_us(self, q: float, raw: bool) -> float:
        """Nearest rank (httplab.parse.percentiles) of the raw or of wrk's corrected histogram."""
        if raw:
            return weighted_percentile(self.raw_values_us, self.raw_counts, q)
        return weighted_percentile(self.hook.hist_values_us, self.hook.hist_counts, q)


def wrk(url: str, out_dir: Path, conns: int, seconds: int) -> WrkRun:
    """One closed-loop wrk run (-t1, the lab's report.lua hook writing WRK_JSON)."""
    json_path = out_dir / "wrk.json"
    text = _run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", "-s", str(REPORT_LUA),
                 url], seconds + TOOL_MARGIN_S, env={"WRK_JSON": str(json_path)})
    (out_dir / "wrk.stdout.txt").write_text(text)
    hook = read_wrk_json(json_path)
    values, counts = uncorrected_histogram(hook, conns)
    return WrkRun(hook=hook, non2xx=parse_wrk_text(text, out_dir / "wrk.stdout.txt").non2xx,
                  interval_us=correction_interval_us(hook, conns), raw_values_us=values,
                  raw_counts=counts)


def correction_interval_us(hook: WrkJson, conns: int) -> int:
    """wrk 4.1's expected interval between two requests of a connection (src/wrk.c, main):
    runtime_us / (complete / connections), in integer arithmetic."""
    return int(hook.duration_us) // (hook.requests // conns)


def uncorrected_histogram(hook: WrkJson, conns: int) -> tuple[np.ndarray, np.ndarray]:
    """wrk 4.1's histogram before its stats_correct(expected = e) (src/stats.c): for every
    recorded latency n ≥ 2e, one synthetic sample at each n - k·e > e. So for m > e the corrected
    count is c[m] = r[m] + Σ_{k≥1} r[m + k·e] = r[m] + c[m + e], i.e. r[m] = c[m] - c[m + e];
    below that nothing was added. Needs the exact histogram (hist_kind "exact")."""
    if hook.hist_kind != "exact":
        raise ValueError(f"wrk's hook wrote a {hook.hist_kind!r} histogram: the correction "
                         "cannot be undone")
    e = correction_interval_us(hook, conns)
    values = hook.hist_values_us.astype(np.int64)
    corrected = np.zeros(int(values.max()) + e + 1, dtype=np.int64)
    corrected[values] = hook.hist_counts
    raw = corrected.copy()
    raw[e + 1:-e] -= corrected[2 * e + 1:]
    keep = np.nonzero(raw)[0]
    return keep.astype(np.float64), raw[keep]


def wait_idle(seconds: float = 0.3) -> None:
    """A short pause between runs so one run's last answers do not overlap the next."""
    time.sleep(seconds)
