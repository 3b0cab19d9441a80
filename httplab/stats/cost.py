"""Instructions per request (scripts/cost.sh): the arithmetic, from the tidy points
(httplab.tidy.cost) to the per-rep figures, their summary, and the gate between two runs.

Per server, protocol and rep, two server processes served N1 < N2 requests of the same mix; their
instruction counts Ir(N1), Ir(N2) share everything but the N2 − N1 extra requests (start-up, the
readiness probe, connection set-up, the TLS handshake, shutdown), so

    instructions per request = (Ir(N2) − Ir(N1)) / (N2 − N1).

The figure of a server and protocol is the mean over its reps. The count is deterministic up to
what the server does by the clock (a timer every 100 ms: proportional to how long valgrind took)
and the TLS handshake's random numbers, so its spread over reps, (max − min) / mean, is reported
instead of a t interval: the reps show the residual, they are not a sample of a noisy quantity.
The gate compares two runs' means: ratio = current / base per server and protocol; it fails when
a ratio exceeds 1 + threshold, or when the current run measured a point but no rep of it counted.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..tidy.cost import POINT_COLUMNS, typed

DEFAULT_THRESHOLD_PCT = 1.0

REP_COLUMNS: dict[str, str] = {
    "run_id": "string", "server": "string", "protocol": "string", "rep": "int64", "n1": "int64",
    "n2": "int64", "ir_n1": "int64", "ir_n2": "int64", "instr_per_req": "float64", "status": "string",
    "fail_reason": "string", "client_command": "string",
}
SUMMARY_COLUMNS: tuple[str, ...] = ("server", "protocol", "reps", "n_failed", "instr_per_req", "min", "max",
                                    "spread_pct", "n1", "n2", "client_command")
GATE_COLUMNS: tuple[str, ...] = ("server", "protocol", "base", "current", "ratio", "delta_pct",
                                 "base_spread_pct", "current_spread_pct", "verdict")


def per_request(ir_n1: float, ir_n2: float, n1: int, n2: int) -> float:
    """(Ir(N2) − Ir(N1)) / (N2 − N1); ValueError unless N2 > N1."""
    if n2 <= n1:
        raise ValueError(f"N2 ({n2}) must be larger than N1 ({n1})")
    return (ir_n2 - ir_n1) / (n2 - n1)


def per_rep(points: pd.DataFrame) -> pd.DataFrame:
    """One row per server, protocol and rep (REP_COLUMNS): the figure from the rep's two points.
    A rep fails when it has not exactly two request counts, when a point of it failed, or when the
    difference is not positive."""
    rows = []
    for (run_id, server, protocol, rep), g in points.groupby(["run_id", "server", "protocol", "rep"], sort=True):
        g = g.sort_values("requests")
        row = {"run_id": run_id, "server": server, "protocol": protocol, "rep": int(rep), "n1": 0, "n2": 0,
               "ir_n1": 0, "ir_n2": 0, "instr_per_req": math.nan, "status": "failed", "fail_reason": "",
               "client_command": str(g["client_command"].iloc[-1])}
        if len(g) != 2 or g["requests"].nunique() != 2:
            row["fail_reason"] = f"needs one point at each of two request counts, has N = {g['requests'].tolist()}"
        else:
            lo, hi = g.iloc[0], g.iloc[1]
            row.update(n1=int(lo["requests"]), n2=int(hi["requests"]), ir_n1=int(lo["ir"]), ir_n2=int(hi["ir"]))
            bad = [f"N={int(p['requests'])}: {p['fail_reason']}" for _, p in g.iterrows() if p["status"] != "ok"]
            if bad:
                row["fail_reason"] = "; ".join(bad)
            else:
                x = per_request(row["ir_n1"], row["ir_n2"], row["n1"], row["n2"])
                row["instr_per_req"] = x
                if x > 0:
                    row["status"] = "ok"
                else:
                    row["fail_reason"] = f"Ir(N2) − Ir(N1) = {row['ir_n2'] - row['ir_n1']} is not positive"
        rows.append(row)
    return typed(rows, REP_COLUMNS)


def spread_pct(values: np.ndarray) -> float:
    """(max − min) / mean in %, of positive values; NaN without any."""
    values = np.asarray(values, dtype=float)
    if not len(values):
        return math.nan
    return float((values.max() - values.min()) / values.mean() * 100)


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """One row per server and protocol (SUMMARY_COLUMNS): the mean over the ok reps, their min,
    max and spread, how many reps counted and how many failed."""
    rows = []
    for (server, protocol), g in reps.groupby(["server", "protocol"], sort=True):
        ok = g[g["status"] == "ok"]
        x = ok["instr_per_req"].to_numpy(dtype=float)
        rows.append({
            "server": server, "protocol": protocol, "reps": len(ok), "n_failed": int(len(g) - len(ok)),
            "instr_per_req": float(x.mean()) if len(x) else math.nan,
            "min": float(x.min()) if len(x) else math.nan, "max": float(x.max()) if len(x) else math.nan,
            "spread_pct": spread_pct(x), "n1": int(g["n1"].max()), "n2": int(g["n2"].max()),
            "client_command": str(g["client_command"].iloc[0]),
        })
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def gate(base: pd.DataFrame, current: pd.DataFrame,
         threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> tuple[pd.DataFrame, bool]:
    """(rows, passed): per server and protocol of either summary, current / base and its verdict:
    'rose' (ratio > 1 + threshold) and 'failed' (the current run measured it, but no rep of it
    counted) fail the gate; 'fell' (< 1 − threshold), 'same', 'new' (no figure in the base) and
    'not run' (the current run did not measure it: --servers or --protocols left it out) pass."""
    b = base.set_index(["server", "protocol"])
    c = current.set_index(["server", "protocol"])
    limit = threshold_pct / 100
    rows, passed = [], True
    for key in sorted(set(b.index) | set(c.index)):
        bv = float(b.loc[key, "instr_per_req"]) if key in b.index else math.nan
        cv = float(c.loc[key, "instr_per_req"]) if key in c.index else math.nan
        ratio = cv / bv if math.isfinite(bv) and math.isfinite(cv) and bv > 0 else math.nan
        if key not in c.index:
            verdict = "not run"
        elif not math.isfinite(cv):
            verdict, passed = "failed", False
        elif not math.isfinite(bv):
            verdict = "new"
        elif ratio > 1 + limit:
            verdict, passed = "rose", False
        elif ratio < 1 - limit:
            verdict = "fell"
        else:
            verdict = "same"
        rows.append({"server": key[0], "protocol": key[1], "base": bv, "current": cv, "ratio": ratio,
                     "delta_pct": (ratio - 1) * 100 if math.isfinite(ratio) else math.nan,
                     "base_spread_pct": float(b.loc[key, "spread_pct"]) if key in b.index else math.nan,
                     "current_spread_pct": float(c.loc[key, "spread_pct"]) if key in c.index else math.nan,
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=list(GATE_COLUMNS)), passed


# ---------------------------------------------------------------- data/<run_id>/

def write_cost(points: pd.DataFrame, reps: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """data/<run_id>/cost.{parquet,csv} (per rep) and cost_points.{parquet,csv} (per process)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df, cols in (("cost", reps, REP_COLUMNS), ("cost_points", points, POINT_COLUMNS)):
        if list(df.columns) != list(cols):
            raise ValueError(f"{name}: columns {list(df.columns)}, expected {list(cols)}")
        df.to_parquet(out / f"{name}.parquet", index=False)
        df.to_csv(out / f"{name}.csv", index=False)
        written += [out / f"{name}.parquet", out / f"{name}.csv"]
    return written


def read_cost(data_dir: str | Path) -> pd.DataFrame:
    """The per-rep frame of data/<run_id>/cost.parquet (FileNotFoundError naming it)."""
    p = Path(data_dir) / "cost.parquet"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no instruction-count data (python -m httplab cost build raw/<run_id>)")
    return pd.read_parquet(p)
