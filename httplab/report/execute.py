"""A run's reports: each suite's notebook executed by papermill, then exported to HTML and Markdown
(export_html), several at once, from one process.

run_all.sh names the suites and their notebooks; this runs them. One process instead of a
papermill and an export process per report: importing papermill and nbconvert costs about 5 s of
CPU on the two-core lab machine (a second of it jsonschema's IRI grammar, which nbformat loads), more
than executing a small report's cells. The parent imports both once, then forks its workers, which
inherit them; each notebook still runs in a fresh kernel of its own, as under papermill's command.
"""
from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from . import export_html

KERNEL = "httplab"


@dataclass(frozen=True)
class Job:
    suite: str
    notebook: Path


def log(message: str) -> None:
    """A line as the shell's log() writes it (stderr, the time first)."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def parse_job(text: str) -> Job:
    suite, sep, notebook = text.partition("=")
    if not sep or not suite or not notebook:
        raise argparse.ArgumentTypeError(f"expected SUITE=NOTEBOOK, got {text!r}")
    return Job(suite, Path(notebook))


def run_one(job: Job, run_dir: Path, data_dir: Path, out: Path, reports_root: Path, templates: Path,
            cwd: Path) -> str | None:
    """The job's notebook executed into OUT/<suite>.ipynb and exported beside it; None, or what
    went wrong (papermill's error names the failing cell)."""
    import papermill

    executed = out / f"{job.suite}.ipynb"
    t0 = time.monotonic()
    log(f"papermill {job.notebook} (suite {job.suite}, run {run_dir.name})")
    try:
        papermill.execute_notebook(str(job.notebook), str(executed), kernel_name=KERNEL, cwd=str(cwd),
                                   progress_bar=False,
                                   parameters={"suite": job.suite, "run_dir": str(run_dir), "out_dir": str(data_dir)})
    except Exception as exc:  # papermill's execution error, or a kernel that did not start
        return f"the {job.suite} report failed (papermill): {exc}"
    try:
        # an earlier export's figures must not stay behind (the two exports name them alike)
        shutil.rmtree(out / f"{job.suite}_files", ignore_errors=True)
        export_html.export_page(executed, out, reports_root, templates)
        export_html.export_markdown(executed, out, templates)
    except Exception as exc:
        return f"exporting the {job.suite} report failed: {exc!r}"
    log(f"report {job.suite}: executed and exported in {time.monotonic() - t0:.1f} s")
    return None


def run_all(jobs: list[Job], run_dir: Path, data_dir: Path, out: Path, reports_root: Path, templates: Path,
            cwd: Path, workers: int) -> list[str]:
    """Every job, `workers` at a time; the problems, one per failed job (the others still run)."""
    import nbconvert  # noqa: F401  (imported here once: the forked workers inherit it)
    import papermill  # noqa: F401

    out.mkdir(parents=True, exist_ok=True)
    args = (run_dir, data_dir, out, reports_root, templates, cwd)
    if workers <= 1 or len(jobs) <= 1:
        results = [run_one(job, *args) for job in jobs]
    else:
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(run_one, job, *args) for job in jobs]
            results = [f.result() for f in as_completed(futures)]
    return [r for r in results if r is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="execute and export a run's suite reports")
    ap.add_argument("reports", nargs="+", type=parse_job, metavar="SUITE=NOTEBOOK")
    ap.add_argument("--run-dir", type=Path, required=True, help="raw/<run_id> (the notebooks' run_dir)")
    ap.add_argument("--data-dir", type=Path, required=True, help="data/<run_id> (the notebooks' out_dir)")
    ap.add_argument("--out", type=Path, required=True, help="reports/<run_id>")
    ap.add_argument("--reports-root", type=Path, required=True, help="where assets/report.css is written")
    ap.add_argument("--templates", type=Path, default=export_html.TEMPLATES)
    ap.add_argument("--cwd", type=Path, default=Path.cwd(), help="the kernels' working directory")
    ap.add_argument("--jobs", type=int, default=1, help="reports at once")
    args = ap.parse_args(argv)
    problems = run_all(args.reports, args.run_dir, args.data_dir, args.out, args.reports_root, args.templates,
                       args.cwd, args.jobs)
    for p in problems:
        log(f"error: {p}")
    return 1 if problems else 0
