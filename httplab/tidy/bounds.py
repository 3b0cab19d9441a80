"""When a measured point says something about the server, and when it does not: the thresholds.

Every rule that flags a point lives here, with its threshold, so that a reader (and the tests) can
find them in one place:

- **client-bound**: the load generator's cores were ≥ CLIENT_BUSY_MIN busy while the server's cores
  were below SERVER_SATURATED busy. The server had time to spare and the tool did not: req/s
  measures the tool, not the server. Only the server's cost per request (CPU-µs per request, or
  its inverse, capacity = requests per server CPU-second) compares such points.
- **noisy**: something else ran on the pinned cores during the window: CPU steal above STEAL_MAX_PCT
  of a pinned core (the hypervisor gave the core to another guest), or CPU time of processes other
  than the server and the load tool above FOREIGN_MAX_PCT of a pinned core. Noisy points are kept
  and shown, never silently dropped.

- **saturated**: an open-model point (a target rate) whose achieved rate fell short of the target by
  more than SATURATION_MARGIN. The server (or the tool) could not keep the pace; the requests it
  did not take were never timed, so the point's latency says nothing about that rate. Its status is
  "saturated": kept and shown, never averaged in.

- **start skew** (several client hosts loading one point at once): the hosts' tools must
  start together, or the point's load was partly that of fewer hosts. Starts more than
  max(START_SKEW_MIN_S, START_SKEW_SHARE × the nominal duration) apart fail the point.

Busy fractions are of the cores' whole time over the window (user, nice, system, irq, softirq and
steal over all ticks), from /proc/stat read around the window (httplab.parse.cpuwindow).
"""
from __future__ import annotations

import math

CLIENT_BUSY_MIN = 0.90
"""Client cores at least this busy (fraction of their time) are saturated."""

SERVER_SATURATED = 0.90
"""Server cores at least this busy are saturated: the server, not the tool, is the limit."""

STEAL_MAX_PCT = 2.0
"""CPU steal above this (% of a pinned core, the worst pinned core) makes a point noisy."""

FOREIGN_MAX_PCT = 5.0
"""CPU time of other processes above this (% of one core, on the server's or the client's cores)
makes a point noisy."""


SATURATION_MARGIN = 0.05
"""An open-model point achieving less than (1 − this) × its target rate is saturated."""


START_SKEW_MIN_S = 0.1
"""Client hosts' tool starts at most this far apart (seconds) are together, however short the run."""

START_SKEW_SHARE = 0.02
"""... and up to this share of the nominal duration for longer runs."""


def start_skew_limit_s(duration_s: float) -> float:
    """The largest start skew of a several-host point's hosts that still counts as together."""
    return max(START_SKEW_MIN_S, START_SKEW_SHARE * duration_s) if _known(duration_s) else START_SKEW_MIN_S


def start_skew_reason(skew_s: float | None, duration_s: float, what: str = "client hosts") -> str:
    """Words that fail a point whose client hosts started too far apart ('' when they did not)."""
    if not _known(skew_s):
        return ""
    limit = start_skew_limit_s(duration_s)
    if skew_s <= limit:
        return ""
    return (f"{what} started {skew_s * 1e3:,.0f} ms apart (limit {limit * 1e3:,.0f} ms): "
            f"the loads did not overlap")


def saturation_reason(achieved_rps: float | None, target_rps: float | None) -> str:
    """Words for a saturated point ('' when it kept its target, or has none)."""
    if not _known(achieved_rps, target_rps) or not target_rps or target_rps <= 0:
        return ""
    if achieved_rps >= (1.0 - SATURATION_MARGIN) * target_rps:
        return ""
    return (f"saturated: achieved {achieved_rps:,.0f} req/s of the {target_rps:,.0f} targeted "
            f"({achieved_rps / target_rps:.0%}; the margin is {SATURATION_MARGIN:.0%})")


def _known(*values: float | None) -> bool:
    return all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values)


def client_bound(client_busy: float | None, server_busy: float | None) -> bool | None:
    """True when the client cores were saturated and the server cores were not; None if unknown."""
    if not _known(client_busy, server_busy):
        return None
    return bool(client_busy >= CLIENT_BUSY_MIN and server_busy < SERVER_SATURATED)


def noisy(steal_pct: float | None, foreign_cpu_pct: float | None) -> bool | None:
    """True when steal or foreign CPU on the pinned cores passed their thresholds; None if unknown."""
    if not _known(steal_pct, foreign_cpu_pct):
        return None
    return bool(steal_pct > STEAL_MAX_PCT or foreign_cpu_pct > FOREIGN_MAX_PCT)


def noisy_reason(steal_pct: float | None, foreign_cpu_pct: float | None) -> str:
    """Words for a noisy point ('' when it is not noisy or unknown)."""
    if not noisy(steal_pct, foreign_cpu_pct):
        return ""
    parts = []
    if steal_pct > STEAL_MAX_PCT:
        parts.append(f"CPU steal {steal_pct:.1f} % > {STEAL_MAX_PCT:g} %")
    if foreign_cpu_pct > FOREIGN_MAX_PCT:
        parts.append(f"other processes {foreign_cpu_pct:.1f} % of a pinned core > {FOREIGN_MAX_PCT:g} %")
    return "; ".join(parts)


def describe_thresholds() -> str:
    """One sentence with the thresholds, for report captions."""
    return (f"A point is client-bound when the load generator's cores were ≥ {CLIENT_BUSY_MIN:.0%} busy "
            f"while the server's were < {SERVER_SATURATED:.0%} busy (its req/s then measures the tool; "
            f"compare capacity, requests per server CPU-second, instead); noisy when CPU steal passed "
            f"{STEAL_MAX_PCT:g} % or other processes took more than {FOREIGN_MAX_PCT:g} % of a pinned core.")
