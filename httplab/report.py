"""Notebook glue: open a run from the papermill parameters, the report header, and display
helpers that print 'no data' instead of failing when a table or plot has nothing to show."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .paths import repo_root, resolve
from .rawrun import RawRun, load_run, write_tidy
from .runs_select import default_run_dir
from .stats import MIN_RUNS


@dataclass(frozen=True, eq=False)
class ReportContext:
    root: Path
    run: RawRun  # restricted to the suite
    suite: str
    out_dir: Path
    written: tuple[Path, ...]
    confidence: float
    n_boot: int
    seed: int
    baseline: str
    full: RawRun | None = None  # the whole run (all suites), e.g. to compare h2c with http1

    @property
    def runs(self) -> pd.DataFrame:
        return self.run.runs

    @property
    def latency(self) -> pd.DataFrame:
        return self.run.latency

    def stat_args(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "n_boot": self.n_boot, "seed": self.seed}


def open_report(suite: str, run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                raw_root: str | Path = "raw", data_root: str | Path = "data", confidence: float = 0.95,
                n_boot: int = 9999, seed: int = 20261121, baseline: str = "go", write: bool = True,
                start: str | Path | None = None, frames_prefix: str = "") -> ReportContext:
    """Resolve paths against the repo root (found by walking up to pyproject.toml from `start`
    or cwd), pick the run (run_dir or default_run_dir(raw_root)), load it, keep one suite, and
    write its tidy frames to out_dir (default data_root/<run_id>) as <frames_prefix><name>.parquet/.csv
    (a prefix keeps two suites of one run from overwriting each other's files)."""
    root = repo_root(start)
    rdir = resolve(run_dir, root) if run_dir else default_run_dir(resolve(raw_root, root), suite)
    full = load_run(rdir)
    run = full.suite(suite)
    odir = resolve(out_dir, root) if out_dir else resolve(data_root, root) / full.run_id
    frames = {f"{frames_prefix}{name}": df for name, df in run.frames().items()}
    written = tuple(write_tidy(frames, odir)) if write else ()
    return ReportContext(root, run, suite, odir, written, confidence, n_boot, seed, baseline, full)


def _fmt_utc(value: Any) -> str:
    return str(value).replace("T", " ") if value else "—"


def header_markdown(ctx: ReportContext, title: str) -> str:
    """Run id, profile, dates, host, CPU pinning, tool versions, n and the confidence level."""
    meta = ctx.run.meta
    host = meta.get("host") or {}
    tools = meta.get("tools") or {}
    git = meta.get("git") or {}
    runs = ctx.runs
    ok = runs[runs["status"] == "ok"] if not runs.empty else runs
    reps = (ok.groupby(["server", "scenario"]).size() if not ok.empty else pd.Series(dtype=int))
    n_txt = (f"{reps.min()}–{reps.max()}" if len(reps) and reps.min() != reps.max()
             else (str(reps.min()) if len(reps) else "0"))
    suites = ctx.run.suites
    status = suites["status"].iloc[0] if not suites.empty else "no data"
    rows = [
        ("Run id", f"`{ctx.run.run_id}`"),
        ("Profile", str(meta.get("profile", "—"))),
        ("Start / end (UTC)", f"{_fmt_utc(meta.get('start_utc'))} / {_fmt_utc(meta.get('end_utc'))}"),
        ("Run complete", "yes" if meta.get("complete") else "**no** (partial run)"),
        (f"Suite `{ctx.suite}`", status),
        ("CPU", f"{host.get('cpu_model', host.get('cpu', '—'))}, {host.get('cores', '—')} cores"),
        ("Kernel", str(host.get("kernel", "—"))),
        ("Pinning", f"server CPUs `{meta.get('server_cpus', '—')}`, load generator CPUs "
                    f"`{meta.get('client_cpus', '—')}`"),
        ("Tools", "; ".join(f"{k}: {v}" for k, v in tools.items()) or "—"),
        ("Git", f"{str(git.get('commit', '—'))[:12]}{' (dirty)' if git.get('dirty') else ''}"),
        ("Runs", f"{len(runs)} measured runs, {len(ok)} ok, {len(runs) - len(ok)} failed; "
                 f"n = {n_txt} ok runs per server and scenario"),
        ("Statistics", f"{ctx.confidence:.0%} confidence; Δ: BCa bootstrap widened for small n, {ctx.n_boot:,} resamples, "
                       f"seed {ctx.seed}; means: Student t; no CI below {MIN_RUNS} runs; "
                       f"baseline `{ctx.baseline}`"),
    ]
    table = "| Item | Value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"# {title}\n\n{table}\n"


def show_table(df: pd.DataFrame, note: str = "") -> None:
    """Display a table builder's result as Markdown (a 'no data' line when empty)."""
    from IPython.display import Markdown, display

    from .tables import to_markdown
    text = to_markdown(df)
    display(Markdown(f"{text}\n\n{note}" if note else text))


def show_figure(fig: Any, what: str = "this plot") -> None:
    """Display a Figure, or say 'no data' when the plot function returned None."""
    from IPython.display import Markdown, display
    import matplotlib.pyplot as plt

    if fig is None:
        display(Markdown(f"*No data for {what} in this run.*"))
        return
    display(fig)
    plt.close(fig)


def show_markdown(text: str) -> None:
    from IPython.display import Markdown, display
    display(Markdown(text))


def show_code_block(text: str) -> None:
    from IPython.display import Markdown, display
    display(Markdown(f"```\n{text}\n```"))


# ---------------------------------------------------------------- per-section shortcuts
def compared_servers(ctx: ReportContext, contestant: str = "evloop") -> tuple[str, ...]:
    """(contestant, baseline) without duplicates."""
    return tuple(dict.fromkeys([contestant, ctx.baseline]))


def sections(ctx: ReportContext) -> dict[str, Any]:
    """The suite's table layout (key -> Section) for this run's data."""
    from .scenarios import suite_sections
    return {s.key: s for s in suite_sections(ctx.suite, ctx.runs)}


def section_table(ctx: ReportContext, key: str) -> pd.DataFrame:
    from .tables import comparison_table
    s = sections(ctx)[key]
    return comparison_table(ctx.runs, s.where, s.vary, servers=compared_servers(ctx), baseline=ctx.baseline,
                            transfer=s.transfer, vary_label=s.vary_label, title=s.title, **ctx.stat_args())


def section_plot(ctx: ReportContext, key: str, metric: str = "req_per_s"):
    from .plots import cpu_bars, throughput_bars
    s = sections(ctx)[key]
    fn = cpu_bars if metric == "cpu_us_per_req" else throughput_bars
    return fn(ctx.runs, s.where, s.vary, confidence=ctx.confidence, title=s.title, vary_label=s.vary_label)


def other_scenarios_table(ctx: ReportContext) -> pd.DataFrame:
    """Runs that none of the seed tables covers, as a cost table (req/s, CPU, Δ)."""
    from .scenarios import uncovered
    from .tables import cost_table
    rest = uncovered(ctx.runs, list(sections(ctx).values()))
    return cost_table(rest, baseline=ctx.baseline, title="Other scenarios", **ctx.stat_args())


def summary_text(ctx: ReportContext) -> str:
    from .summary import summary_block
    return summary_block(ctx.runs, list(sections(ctx).values()), servers=compared_servers(ctx),
                         baseline=ctx.baseline, run_id=ctx.run.run_id, **ctx.stat_args())


def written_markdown(ctx: ReportContext) -> str:
    if not ctx.written:
        return "*Tidy frames not written (write=False).*"
    def rel(p: Path) -> str:
        try:
            return str(p.relative_to(ctx.root))
        except ValueError:
            return str(p)
    return "Tidy frames written: " + ", ".join(f"`{rel(p)}`" for p in ctx.written)
