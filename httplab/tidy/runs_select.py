"""Finding runs under raw/: listing them, and picking the default one for the notebooks."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..parse.errors import NoRunError, RawFormatError
from .rawrun import read_meta


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    path: Path
    complete: bool
    start_utc: str
    profile: str
    suites: tuple[str, ...] = ()


def list_runs(raw_root: str | Path) -> list[RunInfo]:
    """Every raw/<run_id>/ with a readable meta.json, newest first (by start_utc, then run id).
    Directories with a missing or malformed meta.json are skipped."""
    root = Path(raw_root)
    runs: list[RunInfo] = []
    if not root.is_dir():
        return runs
    for d in root.iterdir():
        if not (d / "meta.json").is_file():
            continue
        try:
            meta = read_meta(d)
        except RawFormatError:
            continue
        runs.append(RunInfo(str(meta["run_id"]), d, meta.get("complete") is True,
                            str(meta.get("start_utc") or ""), str(meta.get("profile") or ""),
                            tuple(str(x) for x in meta.get("suites") or ())))
    runs.sort(key=lambda r: (r.start_utc, r.run_id), reverse=True)
    return runs


def default_run_dir(raw_root: str | Path, suite: str | None = None) -> Path:
    """The newest complete run in raw_root (meta.json `complete: true`, newest by start_utc) that
    holds `suite` (any run when None); else the run named in raw_root/REFERENCE (one line, a run
    id); else NoRunError saying what is missing."""
    root = Path(raw_root)
    complete = [r for r in list_runs(root) if r.complete and (suite is None or suite in r.suites)]
    if complete:
        return complete[0].path
    ref = root / "REFERENCE"
    if ref.is_file():
        text = ref.read_text(encoding="utf-8").strip()
        run_id = text.splitlines()[0].strip() if text else ""
        if not run_id:
            raise NoRunError(f"{ref} is empty: it must hold one run id")
        path = root / run_id
        if not (path / "meta.json").is_file():
            raise NoRunError(f"{ref} names run {run_id!r} but {path}/meta.json does not exist")
        return path
    raise NoRunError(f"no complete run under {root} (no meta.json with \"complete\": true) and no "
                     f"{ref} naming a reference run; pass run_dir explicitly")


