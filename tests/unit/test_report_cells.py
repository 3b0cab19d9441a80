"""Every Δ a committed report prints is a row of its run's comparisons frame (issue 12): each
`X% [L%, H%]` in an exported Markdown report equals, to the printed digits, a comparisons row of
data/<run_id>/ read as a Δ (ratio − 1), a share (ratio), a drop (1 − ratio), or the same of the
reverse direction; the log's cost (h2load) is an estimates row of the per-run ratio log_cost."""
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
NUM = r"[+\u2212-]?\d+(?:\.\d+)?"
TRIPLE = re.compile(rf"({NUM})% \[({NUM})%, ({NUM})%\]")


def _runs_with_reports() -> list[str]:
    return sorted(p.name for p in (ROOT / "reports").iterdir()
                  if p.is_dir() and (ROOT / "data" / p.name / "comparisons.parquet").is_file()
                  and list(p.glob("*.md")))


def _value(text: str) -> tuple[float, int]:
    text = text.replace("\u2212", "-")
    return float(text), len(text.partition(".")[2])


def _candidates(data: Path) -> np.ndarray:
    """(ratio, lo, hi) of every comparison, both directions, and of every log_cost estimate."""
    c = pd.read_parquet(data / "comparisons.parquet")
    c = c[np.isfinite(c["lo"]) & np.isfinite(c["hi"])]
    fwd = c[["ratio", "lo", "hi"]].to_numpy()
    rev = np.column_stack([1 / fwd[:, 0], 1 / fwd[:, 2], 1 / fwd[:, 1]])
    e = pd.read_parquet(data / "estimates.parquet")
    e = e[(e["metric"] == "log_cost") & np.isfinite(e["lo"])]
    return np.vstack([fwd, rev, e[["estimate", "lo", "hi"]].to_numpy()])


def _matches(printed: tuple[str, str, str], rows: np.ndarray) -> bool:
    (e, d), (lo, _), (hi, _) = (_value(x) for x in printed)
    tol = 0.5 * 10.0 ** -d + 1e-9
    readings = (100 * (rows - 1),                        # Δ = ratio − 1
                100 * rows,                              # share = ratio
                100 * (1 - rows[:, [0, 2, 1]]))          # drop = 1 − ratio, bounds swapped
    want = np.array([e, lo, hi])
    return any(bool(np.any(np.all(np.abs(r - want) <= tol, axis=1))) for r in readings)


@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_every_delta_of_a_report_is_a_comparisons_row(run_id):
    rows = _candidates(ROOT / "data" / run_id)
    checked, unmatched = 0, []
    for md in sorted((ROOT / "reports" / run_id).glob("*.md")):
        for line in md.read_text().splitlines():
            for m in TRIPLE.finditer(line):
                checked += 1
                if not _matches(m.groups(), rows):
                    unmatched.append(f"{md.name}: {m.group(0)}  in  {line.strip()[:160]}")
    assert checked > 0, "no Δ with an interval in the reports"
    assert not unmatched, f"{len(unmatched)} of {checked} Δs are no comparisons row:\n" + "\n".join(unmatched[:20])


def test_no_ratio_interval_is_negative():
    for run_id in _runs_with_reports():
        c = pd.read_parquet(ROOT / "data" / run_id / "comparisons.parquet")
        e = pd.read_parquet(ROOT / "data" / run_id / "estimates.parquet")
        assert (c["lo"].dropna() > 0).all() and (e.loc[e["metric"] != "cpu_pct", "lo"].dropna() > 0).all()
        for md in (ROOT / "reports" / run_id).glob("*.md"):
            for m in re.finditer(rf"({NUM})× \[({NUM}), ({NUM})\]", md.read_text()):
                assert _value(m.group(2))[0] >= 0, f"{md}: {m.group(0)}"
