"""CSV copies of a run's tidy frames, for those who want them (the repository keeps parquet only).

    python -m httplab to-csv data/<run_id> [--out DIR]

Writes <name>.csv beside (or into DIR for) every <name>.parquet of the folder and prints the paths.
The notebooks write CSVs themselves when HTTPLAB_CSV=1 is set (see rawrun.write_tidy).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def write_csvs(data_dir: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    src = Path(data_dir)
    frames = sorted(src.glob("*.parquet"))
    if not frames:
        raise FileNotFoundError(f"{src}: no .parquet frames")
    out = Path(out_dir) if out_dir else src
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for pq in frames:
        path = out / f"{pq.stem}.csv"
        pd.read_parquet(pq).to_csv(path, index=False)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", help="data/<run_id>")
    ap.add_argument("--out", help="write the CSVs here instead of beside the parquet files")
    args = ap.parse_args(argv)
    try:
        written = write_csvs(args.data_dir, args.out)
    except FileNotFoundError as exc:
        print(f"tidy_csv: {exc}", file=sys.stderr)
        return 1
    print("\n".join(str(p) for p in written))
    return 0
