"""The lab's one command line: the only door from the shell into Python.

    python -m httplab VERB [ARGS...]      (python -m httplab VERB --help: that verb's flags)

Each verb is one module's main(); the module is imported only when its verb runs, so the verbs the
shell calls between measured runs (manifest, host-state, schedule, h2log, oha-hist) load neither
pandas nor scipy, and `manifest` runs on Python's standard library alone (before setup made the
lab's environment).
"""
from __future__ import annotations

import importlib
import sys

# verb -> (module under httplab, what it does)
VERBS: dict[str, tuple[str, str]] = {
    # run-time side (httplab.lab)
    "manifest": ("lab.manifest_cli", "read, check and start the servers' manifests (servers/**/lab.toml)"),
    "suites": ("lab.suites", "list the suites (suites/<name>/) and their parts"),
    "schedule": ("lab.schedule", "each rep's balanced random order of a suite's servers (order.json)"),
    "host-state": ("lab.hoststate", "the host's state as JSON (CPU, governor, SMT, load, busy processes)"),
    "idle-client": ("lab.idle_client", "the idle-connection memory measurement's client"),
    "slice": ("lab.slicer", "load tools given the client CPUs in turn, in slices (interleaved runs)"),
    "cores": ("lab.cores", "which CPUs the servers and the load tools get (the scaling and seed-conditions plans)"),
    # raw tool output (httplab.parse)
    "h2log": ("parse.h2log", "compact an h2load per-request log into a latency histogram"),
    "oha-hist": ("parse.oha_db", "an oha request database as a latency histogram"),
    # raw run -> data (httplab.tidy, httplab.stats)
    "pack": ("tidy.rawpack", "pack or unpack a run's raw files (one .tar.xz per server)"),
    "build": ("stats.write", "the one build step: raw/<run_id>/ -> data/<run_id>/ (frames, statistics, facts)"),
    "to-csv": ("tidy.to_csv", "CSV files beside a run's parquet frames"),
    "schema-docs": ("stats.schema", "rewrite the frames' schema tables in docs/data.md"),
    "coverage": ("stats.coverage", "simulate the intervals' coverage again and rewrite its table"),
    "design": ("stats.design", "rep designs by power: a run's half-widths, and its design simulated at other numbers of reps"),
    # reports (httplab.report)
    "reports": ("report.execute", "execute and export a run's suite reports (papermill, then HTML and Markdown)"),
    "export-html": ("report.export_html", "export an executed notebook as HTML linking the shared stylesheet"),
    "index": ("report.index", "write reports/index.html"),
    "compare": ("report.compare", "run against run: check, build and summarise a comparison"),
    "idle-memory": ("report.idle_memory", "the idle-connection memory run's frame and report"),
    "cost": ("report.cost", "instructions per request under valgrind: a run's frames and report, the gate"),
    "kernel-share": ("report.kernel_share", "the kernel's share of the server's CPU time (perf profiles)"),
    "history": ("report.history.cli", "every committed run's estimates with its identity (DuckDB), the history page"),
    "audit": ("report.audit", "check that a report's Δ figures are rows of its comparisons frame"),
}


# The verbs the shell calls while a run measures (scripts/lib/): they import only Python's standard
# library, so that a benchmark host needs no more than python3 (scripts/offline.sh;
# tests/unit/test_runtime_stdlib.py). `pack` runs once the suites are done: on the standard library
# too, so a benchmark host packs its own run.
RUNTIME_VERBS: tuple[str, ...] = ("manifest", "suites", "schedule", "host-state", "slice", "h2log", "oha-hist", "cores",
                                  "pack")


def usage() -> str:
    width = max(map(len, VERBS))
    rows = "\n".join(f"  {verb:<{width}}  {what}" for verb, (_, what) in VERBS.items())
    return f"usage: python -m httplab VERB [ARGS...]   (VERB --help for its flags)\n\nverbs:\n{rows}\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage())
        return 0
    verb, rest = args[0], args[1:]
    if verb not in VERBS:
        sys.stderr.write(f"python -m httplab: unknown verb {verb!r}\n\n{usage()}")
        return 2
    module = importlib.import_module(f"httplab.{VERBS[verb][0]}")
    sys.argv = [f"python -m httplab {verb}", *rest]   # argparse names the verb in its usage
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
