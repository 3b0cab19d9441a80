"""Check an exported report against its run's frames: every Δ it prints (`X% [L%, H%]`) must equal,
to the printed digits, a row of data/<run_id>/comparisons (read as a Δ = ratio − 1, a share = ratio,
or a drop = 1 − ratio, in either direction) or an estimates row of the per-run ratio log_cost.

    python -m httplab audit reports/<run_id> data/<run_id>
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

NUM = r"[+\u2212-]?\d+(?:\.\d+)?"
TRIPLE = re.compile(rf"({NUM})% \[({NUM})%, ({NUM})%\]")


def _value(text: str) -> tuple[float, int]:
    text = text.replace("\u2212", "-")
    return float(text), len(text.partition(".")[2])


def candidates(data_dir: Path) -> np.ndarray:
    """(ratio, lo, hi) of every comparison, both directions, and of every log_cost estimate."""
    c = pd.read_parquet(data_dir / "comparisons.parquet")
    c = c[np.isfinite(c["lo"]) & np.isfinite(c["hi"])]
    fwd = c[["ratio", "lo", "hi"]].to_numpy()
    rev = np.column_stack([1 / fwd[:, 0], 1 / fwd[:, 2], 1 / fwd[:, 1]])
    e = pd.read_parquet(data_dir / "estimates.parquet")
    e = e[(e["metric"] == "log_cost") & np.isfinite(e["lo"])]
    return np.vstack([fwd, rev, e[["estimate", "lo", "hi"]].to_numpy()])


def matches(printed: tuple[str, str, str], rows: np.ndarray) -> bool:
    """Whether some row, read as a Δ, a share or a drop, prints as these three numbers."""
    (e, d), (lo, _), (hi, _) = (_value(x) for x in printed)
    tol = 0.5 * 10.0 ** -d + 1e-9
    want = np.array([e, lo, hi])
    readings = (100 * (rows - 1), 100 * rows, 100 * (1 - rows[:, [0, 2, 1]]))
    return any(bool(np.any(np.all(np.abs(r - want) <= tol, axis=1))) for r in readings)


def unmatched_deltas(reports_dir: str | Path, data_dir: str | Path) -> tuple[int, list[str]]:
    """(how many Δs the run's Markdown reports print, those that are no row of its frames)."""
    rows = candidates(Path(data_dir))
    checked, bad = 0, []
    for md in sorted(Path(reports_dir).glob("*.md")):
        for line in md.read_text().splitlines():
            for m in TRIPLE.finditer(line):
                checked += 1
                if not matches(m.groups(), rows):  # type: ignore[arg-type]
                    bad.append(f"{md.name}: {m.group(0)}  in  {line.strip()[:160]}")
    return checked, bad


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    checked, bad = unmatched_deltas(argv[0], argv[1])
    print(f"{checked} Δs checked, {len(bad)} not in the frames")
    print("\n".join(bad))
    return 1 if bad or not checked else 0
