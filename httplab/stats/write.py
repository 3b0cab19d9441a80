"""The one build step of a run's data: raw/<run_id>/ → data/<run_id>/, the only input of the
reports. It writes the tidy frames (runs, latency, client_hosts; verify and suites: the gate's
transcripts and each part's end), the statistics frames (estimates and comparisons; schema:
stats.schema, docs/data.md) and run.json (meta.json, the confidence the statistics were computed at,
and each part's facts: tidy.facts); read_data reads them back, validated. The path is raw → tidy →
stats → data → report, with no way back: a report never reads raw/ and never recomputes these.

    python -m httplab build raw/<run_id> [data/<run_id>]

Every server pair of every scenario is always compared; the cross-scenario and cross-suite pairs and
the composite cells are the ones the suites declare (suites/<name>/suite.toml, httplab.lab.suites).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from ..lab import suites
from .frames import Cells, RunStats, comparisons_frame, estimates_frame
from .claims import ledger_frames
from .schema import validate
from ..tidy.rawrun import RawRun, empty_client_hosts_frame, load_run, write_tidy
from ..tidy.read import read_frame
from ..tidy.schema import CANARY, empty_frame

# The languages suite's composite: seed 003's score (suites/languages/suite.toml declares it).
KEEPALIVE_SCORE = "keepalive_score"
FRAME_NAMES = ("estimates", "comparisons")
RUN_JSON = "run.json"


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


def build_data(run_dir: str | Path, out_dir: str | Path, confidence: float = 0.95) -> tuple[RawRun, RunStats, list[Path]]:
    """raw/<run_id>/ → out_dir (data/<run_id>/): every frame and run.json. Returns what it wrote."""
    run = load_run(run_dir)
    stats = run_stats(run.runs, confidence)
    out = Path(out_dir)
    written = write_run(run, out, stats)
    written += write_tidy({"verify": run.verify, "suites": run.suites}, out)
    # the claim ledger: every write-up's claims read against this run (stats.claims)
    written += write_stats(ledger_frames(stats.comparisons, stats.estimates, run.meta, run.runs, run.run_id), out)
    doc = {"run_id": run.run_id, "raw_dir": str(Path(run_dir)), "confidence": confidence,
           "meta": run.meta, "facts": run.facts}
    # meta.json keeps its order (the report lists its tools as the run recorded them)
    (out / RUN_JSON).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return run, stats, written + [out / RUN_JSON]


def rebuild_ledger(data_dir: str | Path) -> list[Path]:
    """data/<run_id>/'s claim ledger read again from its own frames (the ledger is a function of the
    estimates, comparisons, runs and meta.json, and of the suites' [seed] declarations): what a
    change to the claims' declarations or verdicts needs, without tidying raw/ again. The same
    function build_data calls, so a full build writes the same ledger."""
    run, stats, _ = read_data(data_dir)
    return write_stats(ledger_frames(stats.comparisons, stats.estimates, run.meta, run.runs, run.run_id), Path(data_dir))


def read_data(data_dir: str | Path) -> tuple[RawRun, RunStats, float]:
    """data/<run_id>/ as the run (its frames, meta and facts; run_dir: the raw run it was built from)
    and its statistics, with the confidence they were computed at. NoDataError, with the command that
    builds it, when the directory was never built."""
    d = Path(data_dir)
    if not (d / RUN_JSON).is_file():
        raise NoDataError(f"{d} holds no built data ({RUN_JSON} is missing): build it with "
                          f"`python -m httplab build raw/{d.name} {d}`")
    doc = json.loads((d / RUN_JSON).read_text(encoding="utf-8"))

    def frame(name: str) -> pd.DataFrame | None:
        path = d / f"{name}.parquet"
        return _text_as_objects(pd.read_parquet(path)) if path.is_file() else None
    runs, latency = _text_as_objects(read_frame(d, "runs")), _text_as_objects(read_frame(d, "latency"))
    clients = (_text_as_objects(read_frame(d, "client_hosts")) if (d / "client_hosts.parquet").is_file()
               else empty_client_hosts_frame())
    verify, suites_, canary = frame("verify"), frame("suites"), frame("canary")
    run = RawRun(Path(doc["raw_dir"]), doc["meta"], runs, latency,
                 verify if verify is not None else pd.DataFrame(), suites_ if suites_ is not None else pd.DataFrame(),
                 clients, doc.get("facts") or {},
                 canary if canary is not None else empty_frame(CANARY))
    stats = RunStats(read_stats(d, "estimates"), read_stats(d, "comparisons"))
    return run, stats, float(doc.get("confidence", 0.95))


def _text_as_objects(df: pd.DataFrame) -> pd.DataFrame:
    """Every text column as Python objects with None for missing, as the frames were built (pandas
    ≥ 3 reads parquet strings into its `str` dtype, missing = NaN)."""
    for c in df.columns:
        if isinstance(df[c].dtype, pd.StringDtype):
            s = df[c].astype(object)
            df[c] = s.where(s.notna(), None)
    return df


class NoDataError(FileNotFoundError):
    """data/<run_id>/ was not built (the message says how to build it)."""


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("out_dir", type=Path, nargs="?", help="default: data/<run_id> beside raw/")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--ledger-only", action="store_true",
                    help="RUN_DIR is data/<run_id>: rewrite only its claim ledger from its own frames")
    args = ap.parse_args(argv)
    if args.ledger_only:
        written = rebuild_ledger(args.run_dir)
        print(f"{args.run_dir}: claim ledger rewritten ({', '.join(p.name for p in written)})")
        return 0
    out = args.out_dir or args.run_dir.resolve().parent.parent / "data" / args.run_dir.resolve().name
    run, rs, _ = build_data(args.run_dir, out, args.confidence)
    print(f"{out}: runs {len(run.runs)} rows, estimates {len(rs.estimates)}, comparisons {len(rs.comparisons)}")
    return 0
