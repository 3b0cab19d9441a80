"""Build the tidy frames (docs/data.md) of a raw run directory, raw/<run_id>/, read through
httplab.parse.layout (the one module that knows its file names and reads them).

A rep is finished when r<rep>.run.json exists (written last); unfinished reps are skipped.
A point that several client hosts loaded at once (scenario.json "client_hosts" ≥ 2; "client_layout":
"per_host", which an inventory's one client machine has too) has the load tool's files per host,
r<rep>.h<I>.*, merged into its one runs row by httplab.tidy.multihost; each host's own figures are
the client_hosts frame.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..parse import layout
from ..parse.errors import RawFormatError
from ..parse.jsonio import require
from ..parse.layout import read_meta
from . import schema
from ..parse.percentiles import coarsen_histogram
from .canary import load_canary
from .facts import run_facts
from .rawpack import readable_view, relocate_error
from ..lab.servers import aa_of  # noqa: F401 (re-exported)

from .columns import (RUNS_COLUMNS, HOST_COLUMNS, EXTRA_COLUMNS, TEXT_EXTRA_COLUMNS, TOOL_TEXT_COLUMNS, RUN_KEY, LATENCY_COLUMNS, CLIENT_HOSTS_COLUMNS, VERIFY_COLUMNS, SUITE_COLUMNS, _INT_COLS, _NULLABLE_INT_COLS, _NULLABLE_BOOL_COLS, _FLOAT_COLS, _TEXT_COLS, _OPTIONAL_TEXT_COLS, _of_type)  # noqa: F401 (re-exported)
from .points import (SCENARIO_KEYS, check_scenario, ServerCost, _opt_float, read_server_cost, server_cost, window_tail_s, fail_reasons, _cpu_columns, _int_field, _ToolRun, _tool_run, _alive, _tls, _status, _result_columns, _window_tail, _cost_columns, _core_columns, _scenario_columns, _point_row)  # noqa: F401 (one point's rep as a runs row: tidy.points)


def infer_positions(rows: list[dict[str, Any]]) -> None:
    """Fill a missing position (runs made before the order was recorded) with the server's rank
    among the servers of its (suite, rep) by the start time of its first point: servers of a rep
    ran one after the other. Rows that recorded their position keep it."""
    firsts: dict[tuple[str, int], dict[str, str]] = {}
    for r in rows:
        if r.get("start_utc"):
            slot = firsts.setdefault((r["suite"], r["rep"]), {})
            if r["server"] not in slot or r["start_utc"] < slot[r["server"]]:
                slot[r["server"]] = r["start_utc"]
    for r in rows:
        if r.get("position") is None and r.get("start_utc"):
            slot = firsts[(r["suite"], r["rep"])]
            ranked = sorted(slot, key=lambda s: (slot[s], s))
            r["position"] = ranked.index(r["server"]) + 1


def empty_runs_frame() -> pd.DataFrame:
    return _typed_runs(pd.DataFrame({c: [] for c in RUNS_COLUMNS}))


def _typed_runs(df: pd.DataFrame, extras: tuple[str, ...] = (), text_extras: tuple[str, ...] = (),
                host_cols: tuple[str, ...] = ()) -> pd.DataFrame:
    for c in extras:
        if c not in df:
            df[c] = math.nan
    for c in text_extras:
        df[c] = df[c].astype(object).where(df[c].notna(), None) if c in df else None
    df = df.loc[:, list(RUNS_COLUMNS) + list(extras) + list(text_extras) + list(host_cols)].copy()
    for c in extras:
        df[c] = df[c].astype("float64")
    if "client_hosts" in host_cols:
        df["client_hosts"] = df["client_hosts"].astype("int64")
    if "client_start_skew_ms" in host_cols:
        df["client_start_skew_ms"] = df["client_start_skew_ms"].astype("float64")
    for c in _INT_COLS:
        df[c] = df[c].astype("int64")
    for c in _NULLABLE_INT_COLS:
        df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
                          for v in df[c]], dtype="Int64")
    for c in _NULLABLE_BOOL_COLS:
        df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v)
                          for v in df[c]], dtype="boolean")
    for c in _FLOAT_COLS:
        df[c] = df[c].astype("float64")
    df["tls"] = df["tls"].astype(bool)
    for c in _TEXT_COLS:
        df[c] = df[c].astype(object).astype(str) if len(df) else df[c].astype(object)
    for c in _OPTIONAL_TEXT_COLS:
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df.reset_index(drop=True)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def typed_frame(rows: list[dict[str, Any]], cols: tuple[schema.Column, ...]) -> pd.DataFrame:
    """rows as a frame of the schema's (required) columns, each of its declared type."""
    if not rows:
        return schema.empty_frame(cols)
    df = pd.DataFrame({c.name: [r.get(c.name) for r in rows] for c in cols if not c.optional})
    for c in cols:
        if c.optional:
            continue
        values = list(df[c.name])
        if c.type == "int?":
            df[c.name] = pd.array([None if _missing(v) else int(v) for v in values], dtype="Int64")
        elif c.type == "bool?":
            df[c.name] = pd.array([None if _missing(v) else bool(v) for v in values], dtype="boolean")
        elif c.type in ("str", "str?"):
            df[c.name] = pd.Series([None if _missing(v) else str(v) for v in values], dtype=object)
        else:
            df[c.name] = df[c.name].astype(schema.DTYPES[c.type])
    return df


def empty_client_hosts_frame() -> pd.DataFrame:
    return schema.empty_frame(schema.CLIENT_HOSTS)


def build_frames(run_dir: str | Path, meta: Mapping[str, Any] | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, latency) frames for one raw run. Failed runs are kept (status='failed')."""
    runs, latency, _ = build_all_frames(run_dir, meta)
    return runs, latency


def build_all_frames(run_dir: str | Path, meta: Mapping[str, Any] | None = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, latency, client_hosts) frames for one raw run; client_hosts has one row per client
    host of every point that several hosts loaded at once (no rows when none did). meta: the
    run's meta.json when the caller has read it (read here otherwise)."""
    run_dir = Path(run_dir)
    run_id = (read_meta(run_dir) if meta is None else meta)["run_id"]
    rows: list[dict[str, Any]] = []
    host_rows: list[dict[str, Any]] = []
    lat_parts: list[pd.DataFrame] = []
    for point in layout.iter_points(run_dir):
        check_scenario(point.scenario, point.scenario_where)
        for rep in point.reps:
            row, result, hosts = _point_row(run_id, point, rep)
            rows.append(row)
            host_rows += hosts
            if result is not None and len(result.hist_values_us):
                # The stored curve is coarsened (≤ 0.5 % per value); the run's percentiles
                # above were taken from the full histogram.
                values, counts = coarsen_histogram(result.hist_values_us, result.hist_counts)
                n = len(values)
                lat_parts.append(pd.DataFrame({
                    "run_id": [run_id] * n, "suite": [row["suite"]] * n,
                    "server": [row["server"]] * n, "scenario": [row["scenario"]] * n,
                    "rep": np.full(n, rep, dtype=np.int64),
                    "latency_us": values,
                    "count": counts.astype(np.int64),
                }))
    extras = tuple(c for c in EXTRA_COLUMNS if any(c in r for r in rows))
    text_extras = tuple(c for c in TEXT_EXTRA_COLUMNS if any(c in r for r in rows))
    host_cols = HOST_COLUMNS if host_rows else ()
    for r in rows if host_rows else ():
        r.setdefault("client_hosts", 1)
        r.setdefault("client_start_skew_ms", 0.0)
    if rows:
        infer_positions(rows)
    runs = _typed_runs(pd.DataFrame(rows), extras, text_extras, host_cols) if rows else empty_runs_frame()
    runs = runs.sort_values(["suite", "scenario", "server", "rep"], kind="stable").reset_index(drop=True)
    if lat_parts:
        latency = pd.concat(lat_parts, ignore_index=True)
    else:
        latency = pd.DataFrame({"run_id": pd.Series([], dtype=object), "suite": pd.Series([], dtype=object),
                                "server": pd.Series([], dtype=object), "scenario": pd.Series([], dtype=object),
                                "rep": pd.Series([], dtype="int64"), "latency_us": pd.Series([], dtype="float64"),
                                "count": pd.Series([], dtype="int64")})
    clients = typed_frame(host_rows, schema.CLIENT_HOSTS)
    clients = clients.sort_values(["suite", "scenario", "server", "rep", "host"], kind="stable").reset_index(drop=True)
    return runs, latency.loc[:, list(LATENCY_COLUMNS)], clients


# ---------------------------------------------------------------- verify gates and suites
def parse_verify(text: str) -> tuple[list[str], list[str], list[str]]:
    """(all non-blank lines, PASS lines, FAIL lines) of a verify transcript. Lines that start with
    neither PASS nor FAIL are kept as notes; a transcript with no check at all does not pass."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    passes = [ln for ln in lines if ln.lstrip().startswith("PASS")]
    fails = [ln for ln in lines if ln.lstrip().startswith("FAIL")]
    return lines, passes, fails


def load_verify(run_dir: str | Path, meta: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per (suite, server, rep) verify gate: passed, counts, the failed checks, all lines.
    Where scenario blocks gated a server once per scenario, the rep's gates are one row: passed
    when every one passed, their checks together, raw_path the first file's."""
    run_dir = Path(run_dir)
    run_id = (read_meta(run_dir) if meta is None else meta)["run_id"]
    gates: dict[tuple[str, str, int], list[layout.VerifyFile]] = {}
    for vf in layout.verify_files(run_dir):
        gates.setdefault((vf.part, vf.server, vf.rep), []).append(vf)
    rows = []
    for (part, server, rep), files in gates.items():
        lines: list[str] = []
        fails: list[str] = []
        unchecked: list[str] = []
        n_pass = 0
        for vf in files:
            ls, passes, fs = parse_verify(vf.text)
            lines += ls
            fails += fs
            n_pass += len(passes)
            if not passes and not fs:
                unchecked.append("no check recorded" + (f" ({vf.raw_path})" if len(files) > 1 else ""))
        rows.append({
            "run_id": run_id, "suite": part, "server": server,
            "rep": rep, "passed": not fails and not unchecked,
            "n_pass": n_pass, "n_fail": len(fails),
            "failed_checks": "\n".join(fails + unchecked),
            "lines": "\n".join(lines), "raw_path": files[0].raw_path,
        })
    df = pd.DataFrame(rows, columns=list(VERIFY_COLUMNS))
    return df.sort_values(["suite", "server", "rep"], kind="stable").reset_index(drop=True)


def load_suites(run_dir: str | Path, meta: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per suite directory: status from suite.json, or 'incomplete' when it is missing."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir) if meta is None else meta
    rows = []
    for suite in sorted(layout.part_names(run_dir, meta)):
        found = layout.suite_status(run_dir, suite)
        if found is not None:
            doc, where = found
            rows.append({"run_id": meta["run_id"], "suite": suite,
                         "status": str(require(doc, "status", where, str)),
                         "message": str(doc.get("message") or ""), "end_utc": doc.get("end_utc")})
        else:
            rows.append({"run_id": meta["run_id"], "suite": suite, "status": "incomplete",
                         "message": "no suite.json (suite not finished)", "end_utc": None})
    return pd.DataFrame(rows, columns=list(SUITE_COLUMNS))


def suite_params(meta: Mapping[str, Any], suite: str | None = None) -> dict[str, Any]:
    """The run's params (meta.json) as one suite's points ran them. A run made while a suite could
    declare a longer warm-up than the run's for all its servers (SUITE_MIN_WARMUP, 2026-11-28)
    recorded it under suite_params.<suite>, which overrides params for it; runs since record such
    warm-ups per server (server_warmups)."""
    params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
    per_suite = meta.get("suite_params") if isinstance(meta.get("suite_params"), dict) else {}
    own = per_suite.get(suite) if suite is not None else None
    return {**params, **own} if isinstance(own, dict) else dict(params)


# A run made before meta.json recorded params.blocks ran in server blocks. The design moves absolute
# rates: interleaved slices read req/s about 5 % below contiguous runs of the same servers
# (docs/method.md, "The level shift at 32 reps"), which a run-vs-run ratio would take for a change.
BLOCKS_BEFORE_RECORDED = "server"


def part_blocks(meta: Mapping[str, Any], part: str | None = None) -> str:
    """The design (server, scenario or sliced blocks) a part of the run ran in: its own
    (suite_params.<part>.blocks, where the full profile ran it in its suite's: suite.toml [full]),
    else the run's params.blocks, else server blocks; the run's own where part is None."""
    return str(suite_params(meta, part).get("blocks") or BLOCKS_BEFORE_RECORDED)


def server_warmups(meta: dict[str, Any]) -> dict[str, float]:
    """The servers whose points were warmed longer than the run's params say (their manifests'
    min_warmup_s: runtimes that compile as they serve), from meta.json's
    server_params.<server>.warmup_s: server -> seconds."""
    per_server = meta.get("server_params") if isinstance(meta.get("server_params"), dict) else {}
    return {str(s): float(p["warmup_s"]) for s, p in per_server.items()
            if isinstance(p, dict) and isinstance(p.get("warmup_s"), (int, float))
            and not isinstance(p.get("warmup_s"), bool)}


def point_warmups(runs: pd.DataFrame, meta: dict[str, Any]) -> pd.Series:
    """Each runs row's warm-up in seconds: its server's own (server_warmups), else its suite's
    (suite_params)."""
    own = server_warmups(meta)
    by_suite = {s: float(suite_params(meta, s).get("warmup_s", math.nan)) for s in runs["suite"].unique()}
    return pd.Series([own.get(str(sv), by_suite[su]) for su, sv in zip(runs["suite"], runs["server"])],
                     index=runs.index, dtype=float)


# ---------------------------------------------------------------- everything at once
@dataclass(frozen=True, eq=False)
class RawRun:
    run_dir: Path
    meta: dict[str, Any]
    runs: pd.DataFrame
    latency: pd.DataFrame
    verify: pd.DataFrame
    suites: pd.DataFrame
    # one row per client host of the points that several hosts loaded at once (no rows otherwise)
    client_hosts: pd.DataFrame = field(default_factory=empty_client_hosts_frame)
    # what the reports say beyond the frames: per part its host states, hosts, certificate and
    # commands (tidy.facts; data/<run_id>/run.json)
    facts: dict[str, Any] = field(default_factory=dict)
    # the machine's canary per part and moment (tidy.canary; no rows in runs made before it)
    canary: pd.DataFrame = field(default_factory=lambda: schema.empty_frame(schema.CANARY))

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tidy frames (docs/data.md) for write_tidy; client_hosts only when the run has rows for
        it (a run of one-host points writes the same files as before several hosts existed)."""
        frames = {"runs": self.runs, "latency": self.latency}
        if len(self.client_hosts):
            frames["client_hosts"] = self.client_hosts
        if len(self.canary):
            frames["canary"] = self.canary
        return frames

    def suite(self, name: str) -> "RawRun":
        """The same run restricted to one suite."""
        return self.suites_named([name])

    def suites_named(self, names: Sequence[str]) -> "RawRun":
        """The same run restricted to these suites (the latency report reads three)."""
        wanted = list(names)

        def pick(df: pd.DataFrame) -> pd.DataFrame:
            return df[df["suite"].isin(wanted)].reset_index(drop=True) if "suite" in df else df
        runs = pick(self.runs)
        # tool-specific columns that carry nothing for this suite are dropped (so an http1 suite
        # of a run that also has an h2c suite keeps exactly RUNS_COLUMNS)
        empty_extras = [c for c in EXTRA_COLUMNS + TEXT_EXTRA_COLUMNS if c in runs and runs[c].isna().all()]
        clients = pick(self.client_hosts)
        if not len(clients):   # no point of these suites was loaded through per-host files
            empty_extras += [c for c in HOST_COLUMNS if c in runs]
        runs = runs.drop(columns=empty_extras)
        facts = {"parts": {k: v for k, v in self.facts.get("parts", {}).items() if k in wanted}}
        return RawRun(self.run_dir, self.meta, runs, pick(self.latency),
                      pick(self.verify), pick(self.suites), clients, facts, pick(self.canary))

    def part_facts(self, part: str) -> dict[str, Any]:
        """One part's facts ({} for a part the run has none of)."""
        return self.facts.get("parts", {}).get(part) or {}


def load_run(run_dir: str | Path) -> RawRun:
    """The run's frames. A packed run (suites as <server>.tar.xz, see rawpack) is read through
    rawpack.readable_view, so it loads exactly as unpacked: RawRun.run_dir and every raw_path stay
    those of run_dir, and a malformed file is named by its archive and member."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    view = readable_view(run_dir)
    try:
        runs, latency, clients = build_all_frames(view, meta)
        verify, suites = load_verify(view, meta), load_suites(view, meta)
        parts = sorted({*map(str, runs["suite"]), *map(str, suites["suite"])} if len(suites) else set(map(str, runs["suite"])))
        facts = run_facts(view, parts, runs)
        canary = load_canary(view, parts, meta)
    except RawFormatError as exc:
        raise relocate_error(exc, view, run_dir) from exc
    return RawRun(run_dir, meta, runs, latency, verify, suites, clients, facts, canary)


def write_tidy(frames: Mapping[str, pd.DataFrame], out_dir: str | Path, csv: bool | None = None
               ) -> list[Path]:
    """Write each frame as <name>.parquet under out_dir (created), and <name>.csv beside it only on
    request: csv=True, or csv=None and the environment variable HTTPLAB_CSV=1 (`python -m
    httplab.tidy.to_csv data/<run_id>` makes the CSVs of written frames later). Without CSV, a
    <name>.csv left from an earlier write is removed (it would disagree with the parquet file).
    Returns the paths written."""
    if csv is None:
        csv = os.environ.get("HTTPLAB_CSV", "").strip().lower() in ("1", "true", "yes")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, df in frames.items():
        pq, csv_path = out / f"{name}.parquet", out / f"{name}.csv"
        if name in schema.FRAMES or name in schema.OPTIONAL_FRAMES:
            schema.validate(df, name, str(pq))
        df.to_parquet(pq, index=False)
        written.append(pq)
        if csv:
            df.to_csv(csv_path, index=False)
            written.append(csv_path)
        else:
            csv_path.unlink(missing_ok=True)
    return written
