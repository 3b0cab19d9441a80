"""Number formatting for tables and summaries (pure)."""
from __future__ import annotations

import math

from ..stats import MeanCI, NEEDS_RUNS

KIB, MIB, GIB = 1024.0, 1024.0**2, 1024.0**3


def _bad(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt_count(x: float | None) -> str:
    """151935.2 -> '151,935'."""
    return "—" if _bad(x) else f"{x:,.0f}"


def _scaled(x: float | None, steps: tuple[tuple[float, str], ...], unit: str) -> str:
    """x in the first of `steps` (threshold, format of x / threshold) it reaches, else `unit`."""
    if _bad(x):
        return "—"
    for size, form in steps:
        if abs(x) >= size:  # type: ignore[arg-type]
            return form.format(x / size)  # type: ignore[operator]
    return unit.format(x)


def fmt_kilo(x: float | None) -> str:
    """155486 -> '155K' (as the seed's summary)."""
    return _scaled(x, ((1e6, "{:.2f}M"), (1e3, "{:.0f}K")), "{:.0f}")


def fmt_us(x: float | None) -> str:
    """Latency in µs -> '315 µs', '1.33 ms', '2.10 s'."""
    return _scaled(x, ((1e6, "{:.2f} s"), (1e3, "{:.2f} ms")), "{:.0f} µs")


def fmt_size(n: float | None) -> str:
    """Payload size in bytes -> '64 B', '1 KiB', '64 KiB'."""
    if _bad(n):
        return "—"
    n = float(n)
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if n >= scale and n % scale == 0:
            return f"{n / scale:.0f} {unit}"
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def fmt_bytes_rate(x: float | None) -> str:
    """Bytes/s in binary units like wrk's Transfer/sec: '152.35 MiB/s', '1.26 GiB/s'."""
    if _bad(x):
        return "—"
    if abs(x) >= GIB:
        return f"{x / GIB:.2f} GiB/s"
    if abs(x) >= MIB:
        return f"{x / MIB:.2f} MiB/s"
    if abs(x) >= KIB:
        return f"{x / KIB:.2f} KiB/s"
    return f"{x:.0f} B/s"


def fmt_pct(x: float | None, digits: int = 0) -> str:
    return "—" if _bad(x) else f"{x:.{digits}f}%"


def fmt_float(x: float | None, digits: int = 1) -> str:
    return "—" if _bad(x) else f"{x:,.{digits}f}"


def fmt_mean_ci(ci: MeanCI, fmt=fmt_count, show_n: bool = True) -> str:
    """'153,326 [137,339 – 171,173] (n=5)' for an asymmetric interval, as every geometric mean's is
    (a dash between the bounds: the numbers carry thousands separators); '151,935 ± 1,204 (n=5)' only
    for a symmetric one (MeanCI.symmetric: a Student-t interval on the values); '151,935 (n=3, CI
    needs ≥ 5 runs)'; 'no data'."""
    if ci.mean is None:
        return "no data"
    if ci.has_interval:
        # A log-scale interval is asymmetric: its bounds, never `±` its larger side.
        body = (f"{fmt(ci.mean)} ± {fmt(ci.half_width)}" if ci.symmetric
                else f"{fmt(ci.mean)} [{fmt(ci.low)} – {fmt(ci.high)}]")
        return f"{body} (n={ci.n})" if show_n else body
    reason = ci.reason or NEEDS_RUNS
    return f"{fmt(ci.mean)} (n={ci.n}, {reason})"
