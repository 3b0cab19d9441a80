"""Each server's level, sliced against server blocks: how far does the design move a figure?

docs/method.md ("Interleaved slices") reads this study. Two runs of the same points through the
harness, one right after the other (--blocks sliced, then --blocks server), their data directories
built as usual:

  python docs/evidence/interleave/level_shift.py SLICED_DATA SERVER_DATA

For every server and scenario, and for req/s and CPU-µs per request: the ratio of the two designs'
geometric means (sliced / server blocks) with its 95 % Welch interval on the log scale (the reps of
the two runs are independent samples; failed points are left out, and there are none here). The
A/A copy is a server like the others: its shift is the design's on the C server a second time.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("req_per_s", "cpu_us_per_req")


def welch_log_ratio(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """exp of the mean log difference (a over b) and its 95 % Welch interval."""
    la, lb = np.log(a), np.log(b)
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    d, se = la.mean() - lb.mean(), math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    h = stats.t.ppf(0.975, df) * se
    return math.exp(d), math.exp(d - h), math.exp(d + h)


def shifts(sliced: pd.DataFrame, server: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (srv, scen), s in sliced[sliced.status == "ok"].groupby(["server", "scenario"]):
        b = server[(server.status == "ok") & (server.server == srv) & (server.scenario == scen)]
        for m in METRICS:
            r, lo, hi = welch_log_ratio(s[m].to_numpy(float), b[m].to_numpy(float))
            rows.append({"server": srv, "scenario": scen, "metric": m, "n_sliced": len(s), "n_server": len(b),
                         "shift": r - 1, "lo": lo - 1, "hi": hi - 1, "half_width": (hi - lo) / 2})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    frames = [pd.read_parquet(Path(d) / "runs.parquet") for d in argv]
    out = shifts(*frames)
    pd.set_option("display.width", 200)
    print(out.to_string(index=False, float_format=lambda x: f"{x:+.3f}"))
    for m in METRICS:
        o = out[out.metric == m]
        outside = o[(o.lo > 0) | (o.hi < 0)]
        print(f"{m}: shift median {o['shift'].median():+.3f}, range {o['shift'].min():+.3f} .. "
              f"{o['shift'].max():+.3f}; interval half-width median {o.half_width.median():.3f}, "
              f"max {o.half_width.max():.3f}; {len(outside)} of {len(o)} intervals exclude 0")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
