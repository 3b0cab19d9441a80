"""One queryable store over every committed run: DuckDB views over the data/<run_id>/ parquet frames,
each row joined with its run's identity (when, at which commit, on which machine, under which
conditions), read from data/<run_id>/run.json (the raw run's meta.json as the build step kept it).

    con = connect("data")                                # an in-memory DuckDB connection
    con.sql("SELECT run_id, date, machine, server, estimate, lo, hi FROM history "
            "WHERE suite = 'http1' AND scenario = 'get_ping_c100' AND metric = 'req_per_s'")

Tables and views (docs/history.md):
    run_identity   one row per run: IDENTITY's columns
    part_design    one row per run and part: the design it ran in (blocks: a part may have its own)
    estimates      every run's estimates.parquet (union by column name: older runs lack a few)
    comparisons    every run's comparisons.parquet
    runs           every run's runs.parquet (one row per measured run)
    canary         every run's canary.parquet (runs made before the canary have none)
    canary_part    per run and part: the geometric mean of its canary's floor req/s and CPU loop
    history        estimates joined with run_identity, part_design and canary_part (setup and
                   blocks are the part's; estimate_per_canary: the figure over its part's canary
                   floor; the page's and the CLI's view)
    comparison_history   comparisons joined with run_identity

A run is in the store when its data folder has run.json; its frames are read where they exist. A
new identity column is one entry of IDENTITY: every view picks it up.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from ...stats.canary import canary_parts
from ...tidy.rawrun import part_blocks, suite_params
from ..run_status import RUNS_FILE, read_run_status

FRAMES = ("estimates", "comparisons", "runs")


def _host(meta: dict) -> dict:
    return meta.get("host") if isinstance(meta.get("host"), dict) else {}


def _hosts(meta: dict) -> dict:
    return meta.get("hosts") if isinstance(meta.get("hosts"), dict) else {}


def _git(meta: dict) -> dict:
    return meta.get("git") if isinstance(meta.get("git"), dict) else {}


def _tools(meta: dict) -> dict:
    return meta.get("tools") if isinstance(meta.get("tools"), dict) else {}


# The load tools and the lab's builds of them (meta.json `tools`): a change point that comes with a
# new build of the tool is the tool's as likely as the servers' (attribution).
LOAD_TOOLS = ("wrk", "wrk_build", "h2load", "h2load_build", "oha", "h3load")


def load_tools(meta: dict) -> str:
    """The run's load tools and builds as a JSON object (sorted keys; '{}' when not recorded)."""
    tools = _tools(meta)
    return json.dumps({k: str(tools[k]) for k in LOAD_TOOLS if tools.get(k)}, sort_keys=True)


def _params(meta: dict) -> dict:
    return meta.get("params") if isinstance(meta.get("params"), dict) else {}


def machine_label(cpu_model: Any, cores: Any) -> str:
    """The machine as the page names it: CPU model and cores ('CPU not recorded' without a model)."""
    model = str(cpu_model or "") or "CPU not recorded"
    return f"{model}, {int(cores)} cores" if cores not in (None, "") and not pd.isna(cores) else model


def setup_label(meta: dict) -> str:
    """The conditions a run's figures depend on beyond the code: the machine (CPU model, cores), the
    CPU sets of the servers and the load tool, and the host mode (local, netns with its client
    hosts, an inventory). Two runs of one setup can be compared in a history; runs of two setups
    cannot. (A part's design adds to it in the history view: part_designs.)"""
    host, hosts = _host(meta), _hosts(meta)
    mode = str(hosts.get("mode") or "local")
    clients = hosts.get("client_hosts")
    where = mode if mode == "local" or not clients else f"{mode} ×{clients} clients"
    return (f"{machine_label(host.get('cpu_model'), host.get('cores'))}; server CPUs {meta.get('server_cpus', '?')}, "
            f"client CPUs {meta.get('client_cpus', '?')}; {where}")


# An interleaved part's setup says so: sliced runs read absolute req/s about 5 % below contiguous
# runs of the same servers on the same machine (docs/method.md, "The level shift at 32 reps"), a
# step the history would flag as a change.
SLICED_SETUP = "; interleaved slices"


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def part_designs(folders: list[Path]) -> pd.DataFrame:
    """One row per run and part its meta.json names: run_id, suite (the part), and the design the
    part ran in (blocks, duration_s, reps: a part may run its suite's own, suite_params.<part>)."""
    rows = []
    for d in folders:
        run_id, _, meta = _run_doc(d)
        for p in meta.get("suites") or ():
            own = suite_params(meta, str(p))
            rows.append({"run_id": run_id, "suite": str(p), "blocks": part_blocks(meta, str(p)),
                         "duration_s": _number(own.get("duration_s")), "reps": _number(own.get("reps"))})
    return pd.DataFrame(rows, columns=["run_id", "suite", "blocks", "duration_s", "reps"])


# column -> how it is read from a run.json's meta (the raw meta.json). A new column (a canary figure,
# once meta.json has one) is one more entry here.
IDENTITY: dict[str, Callable[[dict], Any]] = {
    "start_utc": lambda m: pd.to_datetime(m.get("start_utc"), utc=True, errors="coerce"),
    "date": lambda m: str(m.get("start_utc") or "")[:10],
    "profile": lambda m: str(m.get("profile") or ""),
    "complete": lambda m: bool(m.get("complete")),
    "run_suites": lambda m: ",".join(str(s) for s in m.get("suites") or ()),
    "commit": lambda m: str(_git(m).get("commit") or ""),
    "commit_short": lambda m: str(_git(m).get("commit") or "")[:7],
    "dirty": lambda m: bool(_git(m).get("dirty")),
    "cpu_model": lambda m: str(_host(m).get("cpu_model") or ""),
    "cores": lambda m: _host(m).get("cores"),
    "kernel": lambda m: str(_host(m).get("kernel") or ""),
    "hostname": lambda m: str(_host(m).get("hostname") or ""),
    "server_cpus": lambda m: str(m.get("server_cpus") or ""),
    "client_cpus": lambda m: str(m.get("client_cpus") or ""),
    "client_threads": lambda m: m.get("client_threads"),
    "host_mode": lambda m: str(_hosts(m).get("mode") or "local"),
    "client_hosts": lambda m: int(_hosts(m).get("client_hosts") or 1),
    "duration_s": lambda m: _params(m).get("duration_s"),
    "reps": lambda m: _params(m).get("reps"),
    "aa": lambda m: bool(_params(m).get("aa")),
    "blocks": part_blocks,   # the run's own (part_designs: each part's)
    "load_tools": load_tools,
    "machine": lambda m: machine_label(_host(m).get("cpu_model"), _host(m).get("cores")),
    "setup": setup_label,
}


def _run_doc(folder: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(run_id, run.json, its meta) of a data/<run_id>/ folder."""
    doc = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    return str(doc.get("run_id") or meta.get("run_id") or folder.name), doc, meta


def run_folders(data_root: Path) -> list[Path]:
    """data/<run_id>/ folders with a run.json (the build step's output), by name, one per run: a run
    built into two folders (a copy kept beside the original, say) counts once, from the folder
    named after it (else the first by name); the others are named on stderr and left out, since the
    same figures twice would read as two runs."""
    chosen: dict[str, Path] = {}
    for folder in sorted(p.parent for p in Path(data_root).glob("*/run.json")):
        run_id = _run_doc(folder)[0]
        kept = chosen.get(run_id)
        if kept is None or (folder.name == run_id and kept.name != run_id):
            chosen[run_id] = folder
            kept, folder = folder, kept
        if folder is not None:
            print(f"history: {folder} holds run {run_id} as {kept} does; left out", file=sys.stderr)
    return sorted(chosen.values())


def identity(data_root: Path, reports_dir: Path | None = None, raw_root: Path | None = None,
             folders: list[Path] | None = None) -> pd.DataFrame:
    """One row per run in data_root: run_id, IDENTITY's columns, and — when the reports folder (its
    runs.toml) and the raw root (its REFERENCE) are given — status (current or superseded) and
    reference. `folders`: run_folders(data_root), when the caller has it already."""
    statuses = read_run_status(reports_dir / RUNS_FILE) if reports_dir is not None else {}
    ref_file = raw_root / "REFERENCE" if raw_root is not None else None
    ref = ref_file.read_text(encoding="utf-8").strip() if ref_file is not None and ref_file.is_file() else ""
    rows = []
    for d in run_folders(data_root) if folders is None else folders:
        run_id, _, meta = _run_doc(d)
        row: dict[str, Any] = {"run_id": run_id}
        row.update({col: read(meta) for col, read in IDENTITY.items()})
        st = statuses.get(run_id)
        row["status"] = st.status if st is not None else "current"
        row["reference"] = run_id == ref
        rows.append(row)
    cols = ["run_id", *IDENTITY, "status", "reference"]
    out = pd.DataFrame(rows, columns=cols)
    out["cores"] = pd.to_numeric(out["cores"], errors="coerce").astype("Int64")
    out["client_threads"] = pd.to_numeric(out["client_threads"], errors="coerce").astype("Int64")
    out["reps"] = pd.to_numeric(out["reps"], errors="coerce").astype("Int64")
    out["duration_s"] = pd.to_numeric(out["duration_s"], errors="coerce").astype("float64")
    return out.sort_values(["start_utc", "run_id"], na_position="first").reset_index(drop=True)


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def connect(data_root: str | Path = "data", reports_dir: str | Path | None = None,
            raw_root: str | Path | None = None, database: str = ":memory:"):
    """A DuckDB connection holding run_identity and the views over the frames (module docstring).
    ValueError when data_root holds no built run."""
    import duckdb

    data_root = Path(data_root)
    # (the folders once: a run built into two of them is named on stderr once)
    folders = run_folders(data_root)
    ident = identity(data_root, Path(reports_dir) if reports_dir else None, Path(raw_root) if raw_root else None,
                     folders)
    if ident.empty:
        raise ValueError(f"{data_root}: no built run (data/<run_id>/run.json); "
                         "build one with python -m httplab build raw/<run_id>")
    con = duckdb.connect(database)
    con.register("_identity", ident)
    con.execute("CREATE OR REPLACE TABLE run_identity AS SELECT * FROM _identity")
    con.unregister("_identity")
    con.register("_parts", part_designs(folders))
    con.execute("CREATE OR REPLACE TABLE part_design AS SELECT * FROM _parts")
    con.unregister("_parts")
    for frame in FRAMES:
        files = [d / f"{frame}.parquet" for d in folders if (d / f"{frame}.parquet").is_file()]
        if files:
            con.execute(f"CREATE OR REPLACE VIEW {frame} AS "
                        f"SELECT * FROM read_parquet({_sql_list(files)}, union_by_name = true)")
    _canary(con, [d / "canary.parquet" for d in folders if (d / "canary.parquet").is_file()])
    if "estimates" in tables(con):
        # each figure beside its part's canary floor, and as a multiple of it (the same point on a
        # faster machine reads a larger req/s and, to the canary's extent, the same multiple)
        # (the setup and design of each figure's part: a part may have run in its own design)
        con.execute("CREATE OR REPLACE VIEW history AS SELECT e.*, i.* EXCLUDE (run_id, setup, blocks, duration_s, reps), "
                    "COALESCE(p.blocks, i.blocks) AS blocks, "
                    "COALESCE(p.duration_s, i.duration_s) AS duration_s, COALESCE(p.reps, i.reps) AS reps, "
                    f"i.setup || CASE WHEN COALESCE(p.blocks, i.blocks) = 'sliced' THEN '{SLICED_SETUP}' ELSE '' END AS setup, "
                    "c.canary_floor_req_per_s, c.canary_cpu_mops_per_s, "
                    "e.estimate / c.canary_floor_req_per_s AS estimate_per_canary "
                    "FROM estimates e JOIN run_identity i ON e.run_id = i.run_id "
                    "LEFT JOIN part_design p ON e.run_id = p.run_id AND e.suite = p.suite "
                    "LEFT JOIN canary_part c ON e.run_id = c.run_id AND e.suite = c.suite")
    if "comparisons" in tables(con):
        con.execute("CREATE OR REPLACE VIEW comparison_history AS SELECT c.*, i.* EXCLUDE (run_id) "
                    "FROM comparisons c JOIN run_identity i ON c.run_id = i.run_id")
    return con


def _canary(con, files: list[Path]) -> None:
    """canary (every run's canary.parquet) and canary_part: per run and part the geometric mean of
    its canary moments' floor req/s and CPU loop speed, as stats.canary.canary_parts computes it for
    compare.sh (runs made before the canary have no row)."""
    parts = canary_parts(pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)) if files else None
    if files:
        con.execute(f"CREATE OR REPLACE VIEW canary AS SELECT * FROM read_parquet({_sql_list(files)}, union_by_name = true)")
    if parts is not None and len(parts):
        con.register("_canary_parts", parts)
        con.execute("CREATE OR REPLACE TABLE canary_part AS SELECT run_id, suite, "
                    "floor_req_per_s AS canary_floor_req_per_s, cpu_mops_per_s AS canary_cpu_mops_per_s "
                    "FROM _canary_parts")
        con.unregister("_canary_parts")
    else:
        con.execute("CREATE OR REPLACE TABLE canary_part (run_id VARCHAR, suite VARCHAR, "
                    "canary_floor_req_per_s DOUBLE, canary_cpu_mops_per_s DOUBLE)")


def frame(con, sql: str, params: list | None = None) -> pd.DataFrame:
    """A query's result as a pandas frame (through Arrow: DuckDB's own .df() trips pandas 3's
    deprecation warnings)."""
    return con.sql(sql, params=params).to_arrow_table().to_pandas()


def tables(con) -> set[str]:
    """The tables and views of a connection."""
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def history_frame(con, metric: str | None = None, suite: str | None = None, scenario: str | None = None,
                  server: str | None = None) -> pd.DataFrame:
    """Rows of the history view, filtered (None: any), in run order."""
    if "history" not in tables(con):
        return pd.DataFrame()
    where, args = [], []
    for col, val in (("metric", metric), ("suite", suite), ("scenario", scenario), ("server", server)):
        if val is not None:
            where.append(f"{col} = ?")
            args.append(val)
    sql = "SELECT * FROM history" + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY start_utc, run_id, suite, scenario, server, metric"
    return frame(con, sql, args or None)
