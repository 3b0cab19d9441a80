"""Write a run's statistics frames: data/<run_id>/estimates.{parquet,csv} and
comparisons.{parquet,csv} (schema: stats.schema, docs/data.md), and read them back validated.

    python -m httplab.stats.write raw/<run_id> [data/<run_id>]

Every server pair of every scenario is always compared; the cross-scenario and cross-suite pairs and
the composite cells are the ones the suites declare (suites/<name>/suite.toml, httplab.lab.suites).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..lab import suites
from .frames import Cells, RunStats, comparisons_frame, estimates_frame
from .schema import validate
from ..tidy.rawrun import RawRun, load_run, write_tidy

# The languages suite's composite: seed 003's score (suites/languages/suite.toml declares it).
KEEPALIVE_SCORE = "keepalive_score"
FRAME_NAMES = ("estimates", "comparisons")


def run_stats(runs: pd.DataFrame, confidence: float = 0.95) -> RunStats:
    """The estimates and comparisons of a runs frame (all suites of a run, or any part of one)."""
    cells = Cells(runs, suites.composites())
    return RunStats(estimates_frame(cells, confidence),
                    comparisons_frame(cells, suites.scenario_pairs(), suites.suite_pairs(), confidence))


def write_run(run: RawRun, out_dir: str | Path, stats: RunStats | None = None,
              confidence: float = 0.95) -> list[Path]:
    """All frames of a run into out_dir: runs and latency (tidy.rawrun.write_tidy: parquet, CSV on
    request), estimates and comparisons (parquet and CSV), each validated against its schema. Frames
    of the older per-suite layout (<suite>_runs.parquet, ...) are removed: they would disagree."""
    out = Path(out_dir)
    stats = stats or run_stats(run.runs, confidence)
    for old in [*out.glob("*_runs.*"), *out.glob("*_latency.*")]:
        old.unlink()
    written = write_tidy(run.frames(), out)
    return written + write_stats({"estimates": stats.estimates, "comparisons": stats.comparisons}, out)


def write_stats(frames: dict[str, pd.DataFrame], out_dir: Path) -> list[Path]:
    """<name>.parquet and <name>.csv per frame, validated first."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in frames.items():
        validate(df, name, str(out_dir / name))
        df.to_parquet(out_dir / f"{name}.parquet", index=False)
        df.to_csv(out_dir / f"{name}.csv", index=False)
        written += [out_dir / f"{name}.parquet", out_dir / f"{name}.csv"]
    return written


def read_stats(data_dir: str | Path, name: str) -> pd.DataFrame:
    """data/<run_id>/<name>.parquet, validated against the schema (SchemaError names the file)."""
    path = Path(data_dir) / f"{name}.parquet"
    return validate(pd.read_parquet(path), name, str(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m httplab.stats.write", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("out_dir", type=Path, nargs="?", help="default: data/<run_id> beside raw/")
    ap.add_argument("--confidence", type=float, default=0.95)
    args = ap.parse_args(argv)
    run = load_run(args.run_dir)
    out = args.out_dir or args.run_dir.resolve().parent.parent / "data" / run.run_id
    rs = run_stats(run.runs, args.confidence)
    write_run(run, out, rs)
    print(f"{out}: runs {len(run.runs)} rows, estimates {len(rs.estimates)}, comparisons {len(rs.comparisons)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
