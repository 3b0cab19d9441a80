"""The files of a run-vs-run comparison: finding the two runs, their runs frames (read from
data/<run_id>/, or built from raw/ and written there first, as `python -m httplab build`
does), and the comparison's own frame and facts written beside its report.

    reports/compare/<RUN_A>__vs__<RUN_B>/comparisons.{parquet,csv}   (stats.compare.RUN_COMPARISONS)
    reports/compare/<RUN_A>__vs__<RUN_B>/compare.json                 (the runs, --force, the differences)
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..parse.errors import NoRunError
from ..tidy.rawrun import read_meta
from ..tidy.read import read_frame
from . import compare
from .comparable import Difference
from .write import build_data

FRAME = "comparisons"
FACTS = "compare.json"


def comparison_name(run_a: str, run_b: str) -> str:
    """The folder name of a comparison under reports/compare/."""
    return f"{run_a}__vs__{run_b}"


def resolve_run(run: str | Path, raw_root: Path) -> Path:
    """A run id (raw_root/<id>) or a path to a run directory; NoRunError when it has no meta.json."""
    p = Path(run)
    for cand in ([p] if p.is_absolute() else [raw_root / p, p]):
        if (cand / "meta.json").is_file():
            return cand.resolve()
    raise NoRunError(f"run {str(run)!r} not found: no {raw_root / p}/meta.json (a run id under "
                     f"{raw_root}/ or a run directory)")


def run_meta(run_dir: Path) -> dict[str, Any]:
    return read_meta(run_dir)


def runs_frame(run_dir: Path, data_root: Path) -> tuple[pd.DataFrame, bool]:
    """The run's runs frame from data_root/<run_id>/runs.parquet; when that is absent, every frame
    of the run is built from raw/ and written there first (stats.write.build_data, the one build
    step). Also whether it was built."""
    run_id = str(run_meta(run_dir).get("run_id") or run_dir.name)
    data_dir = data_root / run_id
    if (data_dir / "runs.parquet").is_file():
        return read_frame(data_dir, "runs"), False
    run, _, _ = build_data(run_dir, data_dir)
    return run.runs, True


def canary_frame(run_dir: Path, data_root: Path) -> pd.DataFrame:
    """The run's canary frame from data_root/<run_id>/ (built there first like runs_frame); empty
    for a run made before the canary."""
    run_id = str(run_meta(run_dir).get("run_id") or run_dir.name)
    data_dir = data_root / run_id
    if not (data_dir / "runs.parquet").is_file():
        build_data(run_dir, data_dir)
    path = data_dir / "canary.parquet"
    return pd.read_parquet(path) if path.is_file() else pd.DataFrame()


def write_frame(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    """comparisons.parquet and comparisons.csv, validated first."""
    compare.validate(df, str(out_dir / FRAME))
    out_dir.mkdir(parents=True, exist_ok=True)
    df.to_parquet(out_dir / f"{FRAME}.parquet", index=False)
    df.to_csv(out_dir / f"{FRAME}.csv", index=False)
    return [out_dir / f"{FRAME}.parquet", out_dir / f"{FRAME}.csv"]


def read_comparisons(out_dir: Path) -> pd.DataFrame:
    path = out_dir / f"{FRAME}.parquet"
    df = pd.read_parquet(path)
    for col in ("run_a", "run_b", "suite", "scenario", "server", "metric", "unit", "method", "reason",
                "floor_source", "verdict"):
        if col in df and isinstance(df[col].dtype, pd.StringDtype):
            df[col] = df[col].astype(object)
    return compare.validate(df, str(path))


def write_facts(out_dir: Path, run_a: str, run_b: str, forced: bool, diffs: Sequence[Difference],
                confidence: float, default_floor: float) -> Path:
    """compare.json: what the index and the stdout summary say about the comparison."""
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"run_a": run_a, "run_b": run_b, "forced": forced, "confidence": confidence,
           "default_floor": default_floor,
           "differences": [{"what": d.what, "a": d.a, "b": d.b, "blocking": d.blocking} for d in diffs]}
    path = out_dir / FACTS
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_facts(out_dir: Path) -> dict[str, Any]:
    """compare.json as a dict ({} when missing or unreadable)."""
    try:
        doc = json.loads((out_dir / FACTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def differences_of(facts: dict[str, Any]) -> list[Difference]:
    return [Difference(str(d.get("what")), str(d.get("a")), str(d.get("b")), bool(d.get("blocking", True)))
            for d in facts.get("differences") or () if isinstance(d, dict)]
