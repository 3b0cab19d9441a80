"""What every smoke check opens first: the one run a smoke run of scripts/test.sh left in its
folder's raw/."""
from __future__ import annotations

from pathlib import Path


def the_run(smoke_dir: str | Path) -> Path:
    """raw/<run_id>/ of the smoke run in smoke_dir, which must hold exactly one run."""
    runs = sorted(p for p in (Path(smoke_dir) / "raw").iterdir() if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]
