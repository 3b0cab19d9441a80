"""Read a run's tidy frames back from data/<run_id>/, validated against tidy.schema.

    from httplab.tidy.read import read_frame
    runs = read_frame("data/20261123T092401Z-vm", "runs")     # every suite of the run

Current layout: one file per frame for the whole run (runs.parquet, latency.parquet; CSV beside
them on request). Older layout (runs written per suite by older code): runs.parquet held the
http1 suite and <suite>_runs.parquet each other suite; those files are read together, columns
the older code did not write are added empty (NaN / <NA> / None), and the result is validated as
a current frame. A frame that is neither raises SchemaError naming the file.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .schema import DTYPES, SchemaError, columns, frame_schema, validate


def _compat(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """An older frame with the current schema's columns, in order, typed."""
    cols = frame_schema(name)
    out = pd.DataFrame(index=df.index)
    for c in cols:
        if c.name in df:
            s = df[c.name]
        elif c.optional:
            continue
        else:
            s = pd.Series([None] * len(df), index=df.index, dtype=object)
        if c.type in ("str", "str?"):
            s = s.astype(object).where(s.notna(), None)
            if c.type == "str":
                s = s.map(lambda v: "" if v is None else str(v))
        elif c.type == "bool":
            s = s.astype(bool)
        else:
            s = s.astype(DTYPES[c.type])
        out[c.name] = s
    return out.reset_index(drop=True)


def _text_as_objects(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Text columns as Python objects, missing values None: pandas ≥ 3 reads parquet strings into
    its `str` dtype (missing = NaN), which the schema's str/str? checks do not take."""
    for c in frame_schema(name):
        if c.name in df and c.type in ("str", "str?") and isinstance(df[c.name].dtype, pd.StringDtype):
            s = df[c.name].astype(object)
            df[c.name] = s.where(s.notna(), None)
    return df


def read_frame(data_dir: str | Path, name: str) -> pd.DataFrame:
    """The run's `name` frame (runs, latency, or client_hosts where the run has one), from either
    layout (module docstring)."""
    d = Path(data_dir)
    main = d / f"{name}.parquet"
    older = sorted(d.glob(f"*_{name}.parquet"))
    if not main.is_file() and not older:
        raise FileNotFoundError(f"{d}: no {name}.parquet")
    if not older:
        return validate(_text_as_objects(pd.read_parquet(main), name), name, str(main))
    parts = [pd.read_parquet(p) for p in ([main] if main.is_file() else []) + older]
    df = pd.concat(parts, ignore_index=True)
    try:
        return validate(_compat(df, name), name, f"{d} (older per-suite layout)")
    except (ValueError, TypeError) as exc:
        if isinstance(exc, SchemaError):
            raise
        raise SchemaError(f"{name} ({d}, older per-suite layout): {exc}") from exc


__all__ = ["read_frame", "columns"]
