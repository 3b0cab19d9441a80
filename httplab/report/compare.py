"""Run against run: open two runs, refuse what cannot be compared, compute the
run_comparisons frame (stats.compare) and show it (notebooks/compare.ipynb); the command line
that scripts/compare.sh calls around the notebook.

    python -m httplab compare check RUN_A RUN_B [--force] [--canary] [--raw raw] [--data data]
    python -m httplab compare summary OUT_DIR

`check` exits 1 with the reason when the runs cannot be compared (a run missing, different
machine, CPU sets or tool versions without --force, no point in common); it builds a run's
frames from raw/ when data/<run_id>/runs.parquet is absent. `summary` prints the plain-text table
of a written comparison (reports/compare/<A>__vs__<B>/), regressions and improvements first.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..parse.errors import NoRunError, RawFormatError
from ..stats import compare as C
from ..stats import compare_io as io
from ..stats.comparable import Difference, blocking, differences
from ..lab.paths import repo_root, resolve
from ..tidy.runs_select import list_runs
from . import compare_tables as T

COMPARE_DIR = "compare"   # reports/compare/<A>__vs__<B>/


@dataclass(frozen=True, eq=False)
class RunComparison:
    run_a: str
    run_b: str
    meta_a: dict[str, Any]
    meta_b: dict[str, Any]
    diffs: tuple[Difference, ...]
    forced: bool
    confidence: float
    default_floor: float
    frame: pd.DataFrame                     # stats.compare.RUN_COMPARISONS; empty when refused
    runs_b: pd.DataFrame = field(default_factory=pd.DataFrame)   # for scenario labels and order
    refusal: str = ""                       # why the runs were not compared ('' when they were)
    out_dir: Path | None = None
    dir_a: Path | None = None               # the runs' raw directories
    dir_b: Path | None = None
    written: tuple[Path, ...] = ()
    built: tuple[str, ...] = ()             # runs whose frames were built from raw/ first
    # --canary: each part's canary of both runs and B/A (stats.canary.canary_ratios); empty otherwise
    canary: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def suites(self) -> list[str]:
        return sorted(set(self.frame["suite"])) if len(self.frame) else []


def refusal_of(diffs: list[Difference], force: bool) -> str:
    """The refusal for blocking differences without --force ('' when there is none)."""
    block = blocking(diffs)
    if not block or force:
        return ""
    return ("the runs differ in " + "; ".join(d.text() for d in block)
            + ". A Δ between them would mix these differences into the change under test; "
              "pass --force to compare anyway (the report then lists every difference), or --canary "
              "when they differ in the machine alone and both measured its canary.")


def through_machine(diffs: list[Difference]) -> list[Difference]:
    """--canary: a difference in the machine (host.*) no longer blocks; the canary takes it out."""
    return [Difference(d.what, d.a, d.b, False) if d.what.startswith("host.") else d for d in diffs]


def default_pair(raw_root: Path) -> tuple[Path, Path]:
    """B = the newest complete run; A = the newest older complete run sharing a suite with it
    and comparable with it (no blocking difference), else the newest older one sharing a suite."""
    runs = [r for r in list_runs(raw_root) if r.complete]
    if not runs:
        raise NoRunError(f"no complete run under {raw_root}: pass run_a and run_b")
    b, older = runs[0], [r for r in runs[1:] if set(r.suites) & set(runs[0].suites)]
    if not older:
        raise NoRunError(f"no older complete run under {raw_root} shares a suite with {b.run_id}: pass run_a")
    meta_b = io.run_meta(b.path)
    same = [r for r in older if not blocking(differences(io.run_meta(r.path), meta_b))]
    return (same or older)[0].path, b.path


def open_comparison(run_a: str | Path | None = None, run_b: str | Path | None = None,
                    out_dir: str | Path | None = None, confidence: float = 0.95, force: bool = False,
                    raw_root: str | Path = "raw", data_root: str | Path = "data",
                    reports_root: str | Path = "reports", default_floor: float = C.DEFAULT_FLOOR,
                    write: bool = True, start: str | Path | None = None, canary: bool = False) -> RunComparison:
    """Resolve the runs (ids under raw_root or paths; both None: default_pair), refuse them when
    they differ (comparable.differences) unless force, read or build their runs frames, compare
    them, and write the frame and compare.json into out_dir (default
    reports_root/compare/<A>__vs__<B>/). A missing run raises NoRunError. With canary, runs on
    different machines are compared through their canaries (stats.canary): refused when either run
    has none."""
    root = repo_root(start)
    raw = resolve(raw_root, root)
    if run_a is None or run_b is None:
        da, db = default_pair(raw)
        run_a, run_b = run_a or da, run_b or db
    dir_a, dir_b = io.resolve_run(run_a, raw), io.resolve_run(run_b, raw)
    meta_a, meta_b = io.run_meta(dir_a), io.run_meta(dir_b)
    id_a, id_b = str(meta_a["run_id"]), str(meta_b["run_id"])
    diffs = differences(meta_a, meta_b)
    if canary:
        diffs = through_machine(diffs)
    odir = resolve(out_dir, root) if out_dir else resolve(reports_root, root) / COMPARE_DIR / io.comparison_name(id_a, id_b)
    base = dict(run_a=id_a, run_b=id_b, meta_a=meta_a, meta_b=meta_b, diffs=tuple(diffs), forced=force,
                confidence=confidence, default_floor=default_floor, out_dir=odir, dir_a=dir_a, dir_b=dir_b)
    refusal = refusal_of(diffs, force)
    if refusal:
        return RunComparison(frame=C.empty(), refusal=refusal, **base)
    data = resolve(data_root, root)
    ratios = pd.DataFrame()
    if canary:
        from ..stats.canary import canary_ratios
        ca, cb = io.canary_frame(dir_a, data), io.canary_frame(dir_b, data)
        missing = [i for i, c in ((id_a, ca), (id_b, cb)) if c.empty]
        if missing:
            return RunComparison(frame=C.empty(), **base, refusal=(
                f"--canary: {' and '.join(missing)} measured no canary (made before the lab measured its "
                "machine in every suite: scripts/lib/canary.sh), so nothing says how fast its machine was."))
        ratios = canary_ratios(ca, cb)
        base["canary"] = ratios
    (runs_a, built_a), (runs_b, built_b) = io.runs_frame(dir_a, data), io.runs_frame(dir_b, data)
    built = tuple(r for r, b in ((id_a, built_a), (id_b, built_b)) if b)
    frame = C.run_vs_run(runs_a, runs_b, confidence, default_floor)
    if frame.empty:
        suites = (f"A has {', '.join(sorted(set(runs_a['suite']))) or 'no suite'}, "
                  f"B has {', '.join(sorted(set(runs_b['suite']))) or 'no suite'}")
        return RunComparison(frame=frame, runs_b=runs_b, built=built, **base,
                             refusal=f"the runs have no point (suite, scenario, server) in common ({suites}).")
    written: tuple[Path, ...] = ()
    if write:
        written = (*io.write_frame(frame, odir),
                   io.write_facts(odir, id_a, id_b, force, diffs, confidence, default_floor))
        if canary:
            odir.mkdir(parents=True, exist_ok=True)
            ratios.to_csv(odir / "canary.csv", index=False)
            written = (*written, odir / "canary.csv")
    return RunComparison(frame=frame, runs_b=runs_b, written=written, built=built, **base)


# ---------------------------------------------------------------- notebook display
def show_header(cmp: RunComparison) -> None:
    from .engine import show_markdown
    text = T.header_markdown(cmp.run_a, cmp.run_b, cmp.meta_a, cmp.meta_b)
    text += "\n" + T.differences_markdown(cmp.diffs, cmp.forced, cmp.refusal)
    if not cmp.refusal:
        text += "\n" + T.counts_sentence(cmp.frame) + "\n"
    show_markdown(text)


def show_findings(cmp: RunComparison) -> None:
    from .engine import show_table
    if not cmp.refusal:
        show_table(T.findings_table(cmp.frame, cmp.runs_b, cmp.confidence))


def show_suites(cmp: RunComparison) -> None:
    """Per suite: its table, then its forest plot."""
    from .compare_plot import forest_plot
    from .engine import show_figure, show_markdown, show_table
    for suite in cmp.suites:
        show_markdown(f"## Suite {suite}")
        show_table(T.suite_table(cmp.frame, suite, cmp.runs_b, cmp.confidence))
        show_figure(forest_plot(cmp.frame, suite, cmp.runs_b, cmp.confidence), f"suite {suite}: B against A")


def show_canary(cmp: RunComparison) -> None:
    """--canary: the two machines' canary, then each Δ on equal machines (stats.canary)."""
    from .engine import show_markdown, show_table
    if cmp.refusal or cmp.canary.empty:
        return
    show_markdown("## Through the canary\n\nThe runs were compared through their machines' canary "
                  "(`scripts/compare.sh --canary`): each part's canary says how much faster B's machine ran "
                  "the same fixed work, and each Δ is shown again with that taken out.")
    show_table(T.canary_table(cmp.canary))
    show_table(T.through_canary_table(cmp.frame, cmp.canary, cmp.runs_b))


def show_method(cmp: RunComparison) -> None:
    from .engine import show_markdown
    if not cmp.refusal:
        show_markdown(T.method_markdown(cmp.frame, cmp.confidence, cmp.default_floor))


def files_markdown(cmp: RunComparison) -> str:
    if not cmp.written:
        return ""
    built = (f" Frames built from raw/ first (no data/<run_id>/runs.parquet): {', '.join(cmp.built)}."
             if cmp.built else "")
    return "Written beside this report: " + ", ".join(f"`{p.name}`" for p in cmp.written) + "." + built


# ---------------------------------------------------------------- command line
def _check(args: argparse.Namespace) -> int:
    try:
        cmp = open_comparison(args.run_a, args.run_b, confidence=args.confidence, force=args.force,
                              raw_root=args.raw, data_root=args.data, write=False, start=Path.cwd(),
                              canary=args.canary)
    except (NoRunError, RawFormatError) as exc:
        print(f"error: cannot compare: {exc}", file=sys.stderr)
        return 1
    if cmp.refusal:
        print(f"error: not comparing {cmp.run_b} against {cmp.run_a}: {cmp.refusal}", file=sys.stderr)
        return 1
    for run in cmp.built:
        print(f"built the frames of {run} from raw/", file=sys.stderr)
    block = blocking(list(cmp.diffs))
    if block:
        print("WARNING (--force): the runs differ in:\n" + "\n".join(f"  {d.text()}" for d in block), file=sys.stderr)
    print("\n".join([cmp.run_a, cmp.run_b, io.comparison_name(cmp.run_a, cmp.run_b), str(cmp.dir_a), str(cmp.dir_b)]))
    return 0


def _summary(args: argparse.Namespace) -> int:
    out = Path(args.out_dir)
    facts = io.read_facts(out)
    frame = io.read_comparisons(out)
    print(T.summary_text(frame, str(facts.get("run_a", "?")), str(facts.get("run_b", "?")),
                         bool(facts.get("forced")), io.differences_of(facts),
                         float(facts.get("default_floor", C.DEFAULT_FLOOR))))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ck = sub.add_parser("check", help="refuse runs that cannot be compared; else print A's id, B's id, "
                                      "the folder name, A's and B's run directories, one a line")
    ck.add_argument("run_a")
    ck.add_argument("run_b")
    ck.add_argument("--force", action="store_true")
    ck.add_argument("--canary", action="store_true", help="compare runs of different machines through their canary")
    ck.add_argument("--confidence", type=float, default=0.95)
    ck.add_argument("--raw", default="raw")
    ck.add_argument("--data", default="data")
    sm = sub.add_parser("summary", help="print a written comparison as plain text")
    sm.add_argument("out_dir")
    args = ap.parse_args(argv)
    return _check(args) if args.command == "check" else _summary(args)
