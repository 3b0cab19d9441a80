"""Notebook glue: open a run from the papermill parameters, the report header, and display
helpers that print 'no data' instead of failing when a table or plot has nothing to show."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from ..lab.suites import suite as lab_suite, suite_of_part
from ..lab.suites import suite_module as suite_code  # a notebook's R.suite_code(suite): its suite's report.py
from ..lab.paths import repo_root, resolve
from ..lab.servers import contestants, cores_of, display_name, name_servers_for_run
from .quality import NoiseFloor, floor_sentence, no_aa_reason, noise_floor
from ..tidy.rawrun import RawRun
from ..tidy.runs_select import default_run_dir
from ..stats.frames import RunStats
from ..stats.write import read_data
from .method_words import stand_in_sentence, statistics_line
from .wording import wording
from .canary import canary_text, canary_warnings
from .host_facts import as_dict, cell_text, fmt_utc, host_state_markdown, hosts_line
from .run_status import RunStatus, profile_label, run_status


@dataclass(frozen=True, eq=False)
class ReportContext:
    root: Path
    run: RawRun  # restricted to the suite
    suite: str
    data_dir: Path  # data/<run_id>/: every frame and fact the report shows comes from here
    confidence: float
    baseline: str
    full: RawRun  # the whole run (all suites), e.g. to compare h2c with http1
    # the estimates and comparisons of the whole run (all its suites), read from data/: every Δ the
    # report prints is a row of these frames (stats.write.build_data made them)
    stats: RunStats
    toc: list[str] = field(default_factory=list)  # the section titles shown so far (heading())

    @property
    def runs(self) -> pd.DataFrame:
        return self.run.runs

    @property
    def latency(self) -> pd.DataFrame:
        return self.run.latency

    def stat_args(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "stats": self.stats}

    @cached_property
    def noise(self) -> NoiseFloor:
        """The suite's A/A noise floor (quality.noise_floor)."""
        return replace(noise_floor(self.runs, self.confidence, self.stats),
                       absent_why=no_aa_reason(self.run.meta))

    def show_table(self, df: pd.DataFrame, note: str = "") -> None:
        """show_table, with the run's noise floor beside every table that holds a Δ column."""
        if any("Δ" in str(c) and not str(c).startswith("A/A") for c in df.columns):
            note = (note + "\n\n" if note else "") + floor_sentence(self.noise)
        show_table(df, note)


def open_report(suite: str, run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                raw_root: str | Path = "raw", data_root: str | Path = "data", confidence: float = 0.95, *,
                baseline: str, start: str | Path | None = None) -> ReportContext:
    """One part of a run, as its report reads it: from data/<run_id>/ only (out_dir, default
    data_root/<run_id>), which `python -m httplab build raw/<run_id>` (run_all.sh) built; the
    raw run (run_dir, default: default_run_dir(raw_root)) only names which run. Paths resolve against
    the repo root (found by walking up to pyproject.toml from `start` or cwd). baseline: the server
    every Δ column compares with (the notebook's `baseline` parameter; a run without it still
    renders, its Δ cells saying 'no data'). NoDataError, saying how to build it, when data/<run_id>/
    was not built; ValueError when it was built at another confidence."""
    root = repo_root(start)
    rdir = resolve(run_dir, root) if run_dir else default_run_dir(resolve(raw_root, root), suite)
    odir = resolve(out_dir, root) if out_dir else resolve(data_root, root) / Path(rdir).name
    full, stats, built_at = read_data(odir)
    if abs(built_at - confidence) > 1e-12:
        raise ValueError(f"{odir} holds statistics at confidence {built_at}, the report asks for {confidence}: "
                         f"rebuild it with `python -m httplab build {rdir} {odir} --confidence {confidence}`")
    # every name the report prints, with the cores this run gave its servers (lab.servers): the
    # run's server CPUs, unless every server of the run was pinned to a count of its own (the
    # scaling plans' <server>@<n>, whose report names the count per point)
    from ..lab.hoststate import parse_cpu_list
    plain = any(cores_of(str(s)) is None for s in full.runs["server"].unique()) if not full.runs.empty else True
    name_servers_for_run(len(parse_cpu_list(str(full.meta.get("server_cpus") or "")) or []) if plain else None)
    return ReportContext(root, full.suite(suite), suite, odir, confidence, baseline, full, stats)


def open_group_report(suites: tuple[str, ...], run_dir: str | Path | None = None,
                      out_dir: str | Path | None = None, raw_root: str | Path = "raw",
                      data_root: str | Path = "data", confidence: float = 0.95, *, baseline: str,
                      start: str | Path | None = None) -> ReportContext:
    """open_report for a group of suites reported together (latency, versus): the context's run holds
    those of `suites` the run has, and ctx.suite is the first of them (its host state heads the
    report; the header lists them all)."""
    ctx = open_report(suites[0], run_dir=run_dir, out_dir=out_dir, raw_root=raw_root, data_root=data_root,
                      confidence=confidence, baseline=baseline, start=start)
    present = [s for s in suites if s in set(ctx.full.runs["suite"])] or [suites[0]]
    return replace(ctx, run=ctx.full.suites_named(present), suite=present[0])


def open_suite_report(suite: str, run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                      raw_root: str | Path = "raw", data_root: str | Path = "data", confidence: float = 0.95,
                      baseline: str | None = None) -> ReportContext:
    """open_report for a suite by its name (a folder of suites/): its one part, or all of its parts
    as a group. baseline: the notebook's, else the suite's (suite.toml), else none (Δ cells say
    'no data')."""
    s = lab_suite(suite)
    base = baseline or s.baseline or ""
    if len(s.parts) == 1:
        return open_report(s.parts[0], run_dir, out_dir, raw_root, data_root, confidence, baseline=base)
    return open_group_report(s.parts, run_dir, out_dir, raw_root, data_root, confidence, baseline=base)


def suite_title(suite: str) -> str:
    """The suite's title (suite.toml)."""
    return lab_suite(suite).title


def declared_section_keys(ctx: ReportContext) -> list[tuple[str, str, str]]:
    """(key, title, note) of every section of the context's layout, in order."""
    return [(s.key, s.title, s.note) for s in sections(ctx).values()]


def header_markdown(ctx: ReportContext, title: str) -> str:
    """Run id, profile, dates, host, CPU pinning, tool versions, n and the confidence level."""
    meta = ctx.run.meta
    host = meta.get("host") or {}
    tools = meta.get("tools") or {}
    git = meta.get("git") or {}
    runs = ctx.runs
    ok = runs[runs["status"] == "ok"] if not runs.empty else runs
    reps = (ok.groupby(["suite", "server", "scenario"]).size() if not ok.empty else pd.Series(dtype=int))
    n_txt = (f"{reps.min()}–{reps.max()}" if len(reps) and reps.min() != reps.max()
             else (str(reps.min()) if len(reps) else "0"))
    suites = ctx.run.suites
    # one row per suite the report reads (the latency report reads three)
    suite_rows = ([(f"Suite `{r.suite}`", str(r.status)) for r in suites.itertuples()]
                  or [(f"Suite `{ctx.suite}`", "no data")])
    n_sat = int((runs["status"] == "saturated").sum()) if not runs.empty else 0
    not_ok = (f"{len(runs) - len(ok) - n_sat} failed, {n_sat} saturated" if n_sat
              else f"{len(runs) - len(ok)} failed")
    rows = [
        ("Run id", f"`{ctx.run.run_id}`"),
        ("Profile", profile_label(meta)),
        ("Start / end (UTC)", f"{fmt_utc(meta.get('start_utc'))} / {fmt_utc(meta.get('end_utc'))}"),
        ("Run complete", "yes" if meta.get("complete") else "**no** (partial run)"),
        *suite_rows,
        ("CPU", f"{host.get('cpu_model', host.get('cpu', '—'))}, {host.get('cores', '—')} cores"),
        ("Kernel", str(host.get("kernel", "—"))),
        ("Pinning", f"server CPUs `{meta.get('server_cpus', '—')}`, load generator CPUs "
                    f"`{meta.get('client_cpus', '—')}`"),
        ("Tools", "see the table below" if tools else "—"),
        ("Git", f"{str(git.get('commit', '—'))[:12]}{' (dirty)' if git.get('dirty') else ''}"),
        ("Runs", f"{len(runs)} measured runs, {len(ok)} ok, {not_ok}; "
                 f"n = {n_txt} ok runs per server and scenario"),
        ("Statistics", f"{statistics_line(ctx.confidence)}; baseline `{ctx.baseline}`"),
    ]
    # the seed suites' reports say it in their method; every other report says it here
    own = suite_of_part(ctx.suite)
    if own is None or not own.seed_doc:
        rows.append(("Stand-in", stand_in_sentence()))
    rows.insert(next(i for i, (k, _) in enumerate(rows) if k == "Pinning") + 1, ("Hosts", hosts_line(ctx.run, ctx.suite)))
    warnings, host_rows = host_state_markdown(ctx.run, ctx.suite)
    # the machine's own speed over the suite (report.canary): beside its state
    parts = [str(s) for s in suites["suite"]] if not suites.empty else [ctx.suite]
    host_rows = [*host_rows, ("Canary", canary_text(ctx.run.canary, parts))]
    warnings = [*warnings, *canary_warnings(ctx.run.canary, parts)]
    at = next(i for i, (k, _) in enumerate(rows) if k == "Pinning")
    rows[at:at] = host_rows
    table = "| Item | Value |\n|---|---|\n" + "\n".join(f"| {k} | {cell_text(v)} |" for k, v in rows)
    warn = (f"> **⚠ The host changed during this suite:** {'; '.join(warnings)}.\n\n" if warnings else "")
    return f"# {title}\n\n{warn}{table}\n"


INDEX_LINK = "../index.html"  # reports/<run_id>/<nb>.html → reports/index.html


def slug(title: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped (letters, digits, '_',
    '-' and spaces kept), each space a '-'. The reports write their headings as HTML with this id
    (heading_html), since nbconvert's HTML gives Markdown headings other ids."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def heading_html(title: str, level: int = 2) -> str:
    """A heading as HTML carrying its own id (the slug), so a table-of-contents link lands on the
    heading itself in nbconvert's HTML (which gives Markdown headings ids of its own) and on GitHub
    (which keeps the id, prefixed, and resolves '#slug' to it). `code` in a title stays code."""
    import html as _html
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", _html.escape(title, quote=False))
    return f'<h{level} id="{slug(title)}">{text}</h{level}>'


def heading_markdown(title: str, prose: str = "", level: int = 2) -> str:
    """A section's heading (heading_html) and its prose."""
    head = heading_html(title, level)
    return f"{head}\n\n{prose}" if prose else head


def toc_markdown(titles: list[str]) -> str:
    """The table of contents: one link per section title (slug anchors, heading_markdown)."""
    if not titles:
        return ""
    return "**Contents**\n\n" + "\n".join(f"- [{t}](#{slug(t)})" for t in titles)


def _toc_id(ctx: ReportContext) -> str:
    return f"toc-{ctx.suite}-{id(ctx)}"


def _update_toc(ctx: ReportContext) -> None:
    from IPython.display import Markdown, update_display
    update_display(Markdown(toc_markdown(ctx.toc)), display_id=_toc_id(ctx))


def heading(ctx: ReportContext, title: str, prose: str = "") -> None:
    """Display a section's heading and prose, and add it to the report's table of contents (the
    header's TOC display is updated in place, so it lists exactly the sections shown)."""
    from IPython.display import Markdown, display
    ctx.toc.append(title)
    display(Markdown(heading_markdown(title, prose)))
    _update_toc(ctx)


def has_content(*tables: pd.DataFrame) -> bool:
    """A section has content when one of its tables has a row."""
    return any(not t.empty for t in tables)


def section(ctx: ReportContext, title: str, prose: str, *tables: pd.DataFrame, note: str = "") -> bool:
    """A section that shows nothing when it has nothing: heading, prose and tables when any table
    has a row (has_content), else no output at all (and no TOC entry). True when shown, so that
    the notebook draws the section's figures only then."""
    if not has_content(*tables):
        return False
    heading(ctx, title, prose)
    for t in tables:
        ctx.show_table(t, note)
    return True


_VERSION = re.compile(r"(?<![\w.])v?(?:go)?\d+(?:\.\d+)+[\w.+~-]*")


def _version(text: Any) -> str:
    """A tool's version line made short: the first version-like token with what names it
    ('go version go1.26.8 linux/amd64' → 'go1.26.8'; 'curl 7.88.1 (x86_64-pc-linux-gnu)' → '7.88.1')."""
    t = str(text or "").strip()
    m = _VERSION.search(t)
    return m.group(0) if m else (t.split("\n")[0][:40] or "—")


# The compilers a server's recorded build line may name ("…, gcc 12.2.0"): their version is the
# build's, never the server's (a server of the standard library of Go or Python has its runtime's
# version, which is named as such: "go1.26.8", "Python 3.11.7").
COMPILERS = ("gcc", "g++", "clang", "clang++", "cc", "rustc")
_COMPILER = re.compile(r"^(%s) (\S+)" % "|".join(re.escape(c) for c in COMPILERS))


def _components(text: str) -> list[str]:
    """A recorded line split at its top-level commas ('NAME (this checkout, git b617bb3), gcc
    12.2.0' → ['NAME (this checkout, git b617bb3)', 'gcc 12.2.0'])."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [c for c in [*out, cur.strip()] if c]


def server_version(text: Any) -> str:
    """A server's recorded version line (meta.json `servers`) made short, its own version first and
    the compiler named as the compiler: 'NAME (this checkout, git b617bb3), gcc 12.2.0, …' → 'git
    b617bb3, built with gcc 12.2.0'; 'Boost 1.74.0.3, g++ 12.2.0' → '1.74.0.3, built with g++ 12.2.0';
    'g++ 12.2.0' → 'built with g++ 12.2.0'; 'net/http, go1.26.8, …' → 'go1.26.8'; 'NAME version:
    NAME/1.22.1' → '1.22.1'. The libraries after the first are left to meta.json."""
    parts = _components(str(text or "").strip().split("\n")[0])
    compilers = [f"{m.group(1)} {_version(m.group(2))}" for c in parts if (m := _COMPILER.match(c))]
    own = ""
    for c in parts:
        if _COMPILER.match(c):
            continue
        git = re.search(r"\bgit ([0-9a-f]{7,40})\b", c)
        if git:
            own = f"git {git.group(1)}"
            break
        m = _VERSION.search(c)
        if m:
            own = f"Python {m.group(0)}" if c.startswith("Python ") else m.group(0)
            break
    words = [w for w in (own, *(f"built with {c}" for c in compilers[:1])) if w]
    return ", ".join(words) or _version(text)


def tools_table(meta: dict[str, Any]) -> str:
    """Tool | version, then the servers' versions (meta.json `servers`, runs made before it lack it:
    server_version, the compiler named as such)."""
    tools = as_dict(meta.get("tools"))
    servers = as_dict(meta.get("servers"))
    rows = [(f"`{k}`", _version(v)) for k, v in tools.items()]
    rows += [(f"server {display_name(k)}", server_version(v)) for k, v in servers.items()]
    if not rows:
        return "*No tool versions recorded.*"
    note = "" if servers else "\n\n*This run's meta.json records no server versions (runs before the manifests).*"
    return "| Tool | Version |\n|---|---|\n" + "\n".join(f"| {k} | {cell_text(v)} |" for k, v in rows) + note


def machine_line(meta: dict[str, Any]) -> str:
    """'AMD EPYC, 2 cores, Linux 6.18' with the host state's details where recorded."""
    host, st = as_dict(meta.get("host")), as_dict(meta.get("host_state"))
    parts = [str(host.get("cpu_model") or st.get("cpu_model") or "CPU not recorded"),
             f"{host.get('cores', st.get('cores', '?'))} cores"]
    mhz = as_dict(st.get("cpu")).get("mhz")
    if mhz:
        parts[0] += f" ({float(mhz) / 1000:.1f} GHz)"
    if host.get("kernel"):
        parts.append(str(host["kernel"]))
    return ", ".join(parts)


def header(ctx: ReportContext, title: str, intro: str = "") -> None:
    """The top of a report: title, run id and date, profile, machine and a link back to the index,
    the run's caveat or superseded note from reports/runs.toml (title_markdown), then the notebook's
    intro (and contents())."""
    from IPython.display import Markdown, display
    display(Markdown(title_markdown(ctx, title, intro)))


def contents(ctx: ReportContext) -> None:
    """The table of contents, filled in by every heading()/section() that follows (the display is
    updated in place, so it lists exactly the sections the report shows)."""
    from IPython.display import Markdown, display
    display(Markdown(toc_markdown(ctx.toc) or "**Contents**"), display_id=_toc_id(ctx))


def status_markdown(status: RunStatus) -> str:
    """The run's notes from the runs file as blockquotes: '> **Superseded** by `<run>`: <reason>' for
    a superseded run, '> **Caveat:** ...' for a run with a caveat ('' for neither)."""
    notes = []
    if status.status == "superseded":
        notes.append(f"> **Superseded** by `{status.superseded_by}`: {status.reason}")
    if status.caveat:
        notes.append(f"> **Caveat:** {status.caveat}")
    return "\n\n".join(notes)


def title_markdown(ctx: ReportContext, title: str, intro: str = "") -> str:
    """The title, the line 'Run `id` · date UTC · profile X (its parameters) · machine · [← all
    reports]', and under it the run's notes from the runs file (status_markdown; run_status.runs_file
    says which file), then the intro."""
    meta = ctx.run.meta
    date = fmt_utc(meta.get("start_utc")).removesuffix("Z")
    line = (f"Run `{ctx.run.run_id}` · {date} UTC · profile {profile_label(meta)} · "
            f"{machine_line(meta)} · [← all reports]({INDEX_LINK})")
    notes = status_markdown(run_status(ctx.run.run_id, ctx.root))
    return "\n\n".join(x for x in (f"# {title}", line, notes, intro) if x).rstrip() + "\n"


def run_section(ctx: ReportContext) -> None:
    """The 'Run and machine' section: run facts, host state, pinning, tools and server versions."""
    heading(ctx, "Run and machine")
    show_markdown(run_markdown(ctx))


def run_markdown(ctx: ReportContext) -> str:
    """The run's table (header_markdown without its title) and the tools table."""
    body = header_markdown(ctx, "").split("\n", 2)[2]
    return f"{body}\n**Tools and servers**\n\n{tools_table(ctx.run.meta)}\n"


def show_table(df: pd.DataFrame, note: str = "") -> None:
    """Display a table builder's result as Markdown (a 'no data' line when empty)."""
    from IPython.display import Markdown, display

    from .tables import to_markdown
    text = to_markdown(df)
    display(Markdown(f"{text}\n\n{note}" if note else text))


def figure_alt(fig: Any, what: str) -> str:
    """The image's alt text: what the notebook calls it, then the figure's own description
    (plots.describe): 'GET /ping throughput. Bar chart: requests/s by connections …'."""
    from .plots import description
    text = description(fig)
    return f"{what}. {text}" if text else what


def figure_output(fig: Any, what: str = "this plot") -> tuple[dict[str, str], dict[str, Any]]:
    """(data, metadata) of the display output for a Figure: the PNG as rendered by plots.png_bytes
    (plots.WIDTH_PX wide, shown 1:1) with {"image/png": {"alt", "width", "height"}} metadata,
    and the alt text as text/plain."""
    import base64
    from .plots import png_bytes

    png, (width, height) = png_bytes(fig)
    alt = figure_alt(fig, what)
    return ({"image/png": base64.b64encode(png).decode("ascii"), "text/plain": f"<Figure: {alt}>"},
            {"image/png": {"alt": alt, "width": width, "height": height}})


def show_figure(fig: Any, what: str = "this plot") -> None:
    """Display a Figure as a PNG carrying its alt text (figure_output), or say 'no data' when the
    plot function returned None."""
    from IPython.display import Markdown, display
    import matplotlib.pyplot as plt
    from .plots import configure_inline_backend

    if fig is None:
        display(Markdown(f"*No data for {what} in this run.*"))
        return
    configure_inline_backend()
    data, metadata = figure_output(fig, what)
    display(data, raw=True, metadata=metadata)
    plt.close(fig)


def anchored(text: str) -> tuple[str, list[str]]:
    """Markdown with each level-2 heading made a heading with its id (heading_html), and those headings."""
    titles: list[str] = []
    lines = []
    for line in text.split("\n"):
        if line.startswith("## "):
            titles.append(line[3:].strip())
            line = heading_html(titles[-1])
        lines.append(line)
    return "\n".join(lines), titles


def show_markdown(text: str, ctx: ReportContext | None = None) -> None:
    """Display Markdown; with ctx, its '## ' headings get anchors and join the table of contents."""
    from IPython.display import Markdown, display
    if ctx is None:
        display(Markdown(text))
        return
    text, titles = anchored(text)
    ctx.toc.extend(titles)
    display(Markdown(text))
    if titles:
        _update_toc(ctx)


def show_code_block(text: str) -> None:
    from IPython.display import Markdown, display
    display(Markdown(f"```\n{text}\n```"))


# ---------------------------------------------------------------- per-section shortcuts
def compared_servers(ctx: ReportContext) -> tuple[str, ...]:
    """The suite's contestants (tier contestant, lab.servers.contestants), then the baseline,
    without duplicates."""
    present = set(ctx.runs["server"]) if not ctx.runs.empty else set()
    return tuple(dict.fromkeys([*contestants(present), ctx.baseline]))


def compared_title(ctx: ReportContext) -> str:
    """'<contestants> vs <baseline>' in display names, for the report's title (contestants joined by
    'and'); a side the run has no data for says so, so that a title never names a comparison the
    report cannot show."""
    present = set(ctx.runs["server"]) if not ctx.runs.empty else set()
    mine = [display_name(s) for s in contestants(present)]
    base = display_name(ctx.baseline) if ctx.baseline else ""
    left = " and ".join(mine) if mine else "no contestant (no data)"
    if not base:
        return left
    return f"{left} vs {base}" + ("" if ctx.baseline in present else f" (no {base} data in this run)")



def sections(ctx: ReportContext) -> dict[str, Any]:
    """The suite's table layout (key -> Section) for this run's data."""
    from .scenarios import suite_sections
    return {s.key: s for s in suite_sections(ctx.suite, ctx.runs)}


def section_table(ctx: ReportContext, key: str) -> pd.DataFrame:
    """comparison_table of one section, worded as its suite declares (report.wording)."""
    from .tables import comparison_table
    s = sections(ctx)[key]
    return comparison_table(ctx.runs, s.where, s.vary, servers=compared_servers(ctx), baseline=ctx.baseline,
                            transfer=s.transfer, vary_label=s.vary_label, title=s.title,
                            **wording(ctx.suite).section(key), **ctx.stat_args())


def latency_table(ctx: ReportContext) -> pd.DataFrame:
    """tables.latency_table of the suite (P50/P99/P99.9, P99/P50, Δ P99), worded as it declares."""
    from .tables import latency_table as generic
    return generic(ctx.runs, baseline=ctx.baseline, latency_note=wording(ctx.suite).latency_note,
                   **ctx.stat_args())


def section_plot(ctx: ReportContext, key: str, metric: str = "req_per_s"):
    from .plots import capacity_bars, cpu_bars, throughput_bars
    s = sections(ctx)[key]
    fn = {"cpu_us_per_req": cpu_bars, "capacity_rps": capacity_bars}.get(metric, throughput_bars)
    return fn(ctx.runs, s.where, s.vary, confidence=ctx.confidence, title=s.title, vary_label=s.vary_label)


def cross_suite_table(ctx: ReportContext) -> pd.DataFrame:
    """The suite's declared comparisons with other suites of the run (report.cross_suite)."""
    from .cross_suite import cross_suite_table as table
    return table(ctx.stats, ctx.suite, ctx.confidence)


def other_scenarios_table(ctx: ReportContext) -> pd.DataFrame:
    """Runs that none of the seed tables covers, as a cost table (req/s, CPU, Δ)."""
    from .scenarios import uncovered
    from .tables import cost_table
    rest = uncovered(ctx.runs, list(sections(ctx).values()))
    return cost_table(rest, baseline=ctx.baseline, title="Other scenarios", **ctx.stat_args())


def summary_text(ctx: ReportContext) -> str:
    from .summary import summary_block
    return summary_block(ctx.runs, list(sections(ctx).values()), servers=compared_servers(ctx),
                         baseline=ctx.baseline, run_id=ctx.run.run_id, suite=ctx.suite, **ctx.stat_args())


def written_markdown(ctx: ReportContext) -> str:
    """Where the report's numbers come from: the run's data folder and its files."""
    try:
        where = str(ctx.data_dir.relative_to(ctx.root))
    except ValueError:
        where = str(ctx.data_dir)
    files = sorted(p.name for p in ctx.data_dir.iterdir() if p.is_file()) if ctx.data_dir.is_dir() else []
    return (f"Every figure of this report comes from `{where}/` ({', '.join(f'`{f}`' for f in files)}), "
            "built once from the raw run by `python -m httplab build`.")
