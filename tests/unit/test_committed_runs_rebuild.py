"""Every committed run rebuilt through the one build step (raw/<run_id>/ → data/<run_id>/, as
`run_all.sh --reports-only` does before its notebooks) gives the statistics frames that are
committed beside it: the same rows, the same verdicts, and every figure equal to the digit (a
relative difference below 1e-9, far below any digit a report prints). A redesign of the data path
must not move a published number."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from httplab.stats.write import build_data

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted(p.name for p in (ROOT / "raw").iterdir() if (p / "meta.json").is_file()
              and (ROOT / "data" / p.name / "estimates.parquet").is_file())
KEYS = {"estimates": ["suite", "scenario", "server", "metric"],
        "comparisons": ["kind", "metric", "a_suite", "a_scenario", "a_server", "b_suite", "b_scenario", "b_server"]}


def _same(old: pd.DataFrame, new: pd.DataFrame, keys: list[str], where: str) -> None:
    assert sorted(old.columns) == sorted(new.columns), where
    old = old.sort_values(keys).reset_index(drop=True)
    new = new[old.columns].sort_values(keys).reset_index(drop=True)
    assert len(old) == len(new), f"{where}: {len(old)} rows committed, {len(new)} rebuilt"
    for col in old.columns:
        a, b = old[col], new[col]
        if pd.api.types.is_float_dtype(a) or pd.api.types.is_float_dtype(b):
            x, y = a.astype(float).to_numpy(), b.astype(float).to_numpy()
            both_nan = np.isnan(x) & np.isnan(y)
            close = np.isclose(x, y, rtol=1e-9, atol=0.0) | both_nan
            assert close.all(), f"{where} {col}: {a[~close].head().tolist()} -> {b[~close].head().tolist()}"
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist(), f"{where} {col} differs"


@pytest.mark.parametrize("run_id", RUNS)
def test_a_committed_run_rebuilds_to_its_committed_numbers(run_id: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # a cache of its own: a packed run is unpacked from its committed archives, as on a fresh clone
    # (a view unpacked earlier would hide an archive the code can no longer read)
    monkeypatch.setenv("HTTPLAB_RAW_CACHE", str(tmp_path / "cache"))
    _, stats, _ = build_data(ROOT / "raw" / run_id, tmp_path / run_id)
    for name, keys in KEYS.items():
        committed = pd.read_parquet(ROOT / "data" / run_id / f"{name}.parquet")
        _same(committed, getattr(stats, name), keys, f"{run_id} {name}")
