"""Writes reports/index.html, the lab's start page: every run, with its date, machine, profile (with
the parameters it ran with) and suites, the reference run (raw/REFERENCE) marked, one or two
headline numbers per suite with their intervals (from data/<run_id>/estimates and comparisons),
and links to every report.

    python -m httplab index reports/ [--raw raw/] [--data data/]

Run-against-run comparisons (scripts/compare.sh: reports/compare/<A>__vs__<B>/) are listed after
the runs, with their verdict counts and whether they were forced past a difference of machine,
CPU sets or tools.

Run facts come from raw/<run_id>/meta.json when it exists (raw and data default to the folders
beside the reports folder).

Current runs come first, the reference run at their head and the others newest first, each with
its caveat when reports/runs.toml gives one; the runs that file marks superseded follow in a section
of their own, each with the reason in one sentence and links to the reports of the run that replaced
it (run_status.read_run_status; a run the file does not name is current). Above the runs, a link to
reports/claims.html (the seed write-ups' claims and their verdicts) when that page is there.
"""
from __future__ import annotations

import argparse
import html
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..lab.suites import suite_of_part
from ..parse.errors import RawFormatError
from ..stats import format_delta
from ..stats import compare_io
from ..stats.frames import RunStats
from ..tidy.rawrun import read_meta
from ..lab.servers import contestants, short_name
from .cells import mean_ci_of, ratio_ci_of
from .fmt import fmt_mean_ci
from .run_status import RUNS_FILE, RunStatus, profile_label, read_run_status

def headline_of(part: str) -> tuple[Path | None, str] | None:
    """(the report notebook of the part's suite, its headline scenario on this part: suite.toml's
    `headline`), None for a part without one. The baseline a headline compares with is the one its
    report compares with: the notebook's `baseline` parameter (notebook_parameter)."""
    s = suite_of_part(part)
    if s is None or part not in s.headline:
        return None
    return s.notebook, s.headline[part]


def notebook_parameter(notebook: Path | None, name: str) -> str | None:
    """A string parameter's default in a notebook's papermill parameters cell (None when absent)."""
    import ast
    import json
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"] if notebook else []
    except (OSError, ValueError, KeyError):
        return None
    for cell in cells:
        if "parameters" not in (cell.get("metadata", {}).get("tags") or []):
            continue
        for node in ast.parse("".join(cell.get("source", ""))).body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value
    return None
SCENARIO_WORDS = {"get_ping_c100": "GET /ping, 100 conns", "h2_get_ping_c100": "HTTPS/2 GET /ping, 100 conns",
                  "keepalive_score": "keep-alive score"}


@dataclass(frozen=True)
class ReportEntry:
    run_id: str
    profile: str
    date: str
    complete: bool | None
    suites: tuple[tuple[str, str | None, str | None], ...]  # (suite, html rel path, md rel path)
    machine: str = ""
    run_suites: tuple[str, ...] = ()
    reference: bool = False
    headlines: tuple[str, ...] = ()
    status: RunStatus = RunStatus()


def headlines(data_dir: Path, suites: tuple[str, ...]) -> tuple[str, ...]:
    """Per suite: the contestant's req/s on its headline scenario (estimate with interval) and its Δ
    against the suite's baseline (the comparisons row, either way round). Nothing without the frames."""
    try:
        est = pd.read_parquet(data_dir / "estimates.parquet")
        cmp = pd.read_parquet(data_dir / "comparisons.parquet")
    except (OSError, ValueError, ImportError):
        return ()
    stats = RunStats(est, cmp)
    out = []
    for suite in suites:
        head = headline_of(suite)
        if head is None:
            continue
        nb, scen = head
        base = notebook_parameter(nb, "baseline") or suite_of_part(suite).baseline or ""  # type: ignore[union-attr]
        present = set(est.loc[(est["suite"] == suite) & (est["scenario"] == scen), "server"])
        for c in contestants(present):
            point = stats.estimate((suite, scen, c), "req_per_s")
            ci = mean_ci_of(point)
            if ci.mean is None:
                continue
            bound = client_bound(point)
            # a client-bound req/s is the load tool's ceiling, a lower bound of the server's: "≥ … ⚑"
            figure = f"≥ {fmt_mean_ci(ci)} req/s {CLIENT_BOUND_FLAG}" if bound else f"{fmt_mean_ci(ci)} req/s"
            text = f"{suite} {SCENARIO_WORDS.get(scen, scen)}: {short_name(c)} {figure}"
            row = stats.compare("req_per_s", (suite, scen, c), (suite, scen, base))  # either way round
            if row is not None and (bound or bool(row.get("a_client_bound")) or bool(row.get("b_client_bound"))):
                # a Δ with a client-bound side is read on capacity (CPU-µs per request), never req/s
                cost = stats.compare("cpu_us_per_req", (suite, scen, c), (suite, scen, base))
                text += (f"; Δ vs {short_name(base)} on CPU-µs per request {format_delta(ratio_ci_of(cost))} "
                         "(req/s client-bound)" if cost is not None else
                         f"; Δ vs {short_name(base)}: req/s client-bound, no CPU-µs comparison")
            elif row is not None:
                text += f"; Δ vs {short_name(base)} {format_delta(ratio_ci_of(row))}"
            out.append(text)
    return tuple(out)


# A client-bound point's mark, explained on the same screen (CLIENT_BOUND_NOTE)
CLIENT_BOUND_FLAG = "⚑"
CLIENT_BOUND_NOTE = ("⚑ client-bound: the load tool, not the server, set this req/s in most of its runs (its "
                     "cores were busier than the server's), so the figure is a lower bound of the server's (≥) and "
                     "its Δ is read on CPU-µs per request, the server's cost, which the tool does not cap.")


def client_bound(est: "pd.Series | None") -> bool:
    """Whether an estimates row is client-bound (tables.estimate_bound: client_bound_share ≥ ½)."""
    from .tables import estimate_bound
    return estimate_bound(est)


def _machine(meta: dict) -> str:
    host = meta.get("host") if isinstance(meta.get("host"), dict) else {}
    model = host.get("cpu_model") or "CPU not recorded"
    return f"{model}, {host['cores']} cores" if host.get("cores") else str(model)


def reference_run(raw_root: Path) -> str:
    """The run named in raw/REFERENCE ('' when there is none)."""
    ref = raw_root / "REFERENCE"
    return ref.read_text(encoding="utf-8").strip() if ref.is_file() else ""


COMPARE_DIR = "compare"   # reports/compare/<A>__vs__<B>/ (report.compare)
COUNTED = ("regression", "improvement", "possible regression", "possible improvement")


@dataclass(frozen=True)
class ComparisonEntry:
    name: str                      # <A>__vs__<B>
    run_a: str
    run_b: str
    html: str | None               # paths relative to reports/
    md: str | None
    forced: bool = False
    counts: tuple[tuple[str, int], ...] = ()   # (verdict, rows) of the findings


def collect_comparisons(reports_dir: Path) -> list[ComparisonEntry]:
    """Every reports/compare/<A>__vs__<B>/ holding a compare.html or compare.md, by name."""
    root = reports_dir / COMPARE_DIR
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else ():
        html_, md = d / "compare.html", d / "compare.md"
        if not (html_.is_file() or md.is_file()):
            continue
        facts = compare_io.read_facts(d)
        a, _, b = d.name.partition("__vs__")
        try:
            verdicts = compare_io.read_comparisons(d)["verdict"].value_counts().to_dict()
        except (OSError, ValueError, ImportError):
            verdicts = {}
        rel = f"{COMPARE_DIR}/{d.name}"
        out.append(ComparisonEntry(d.name, str(facts.get("run_a") or a), str(facts.get("run_b") or b),
                                   f"{rel}/compare.html" if html_.is_file() else None,
                                   f"{rel}/compare.md" if md.is_file() else None, bool(facts.get("forced")),
                                   tuple((v, int(verdicts.get(v, 0))) for v in COUNTED if verdicts.get(v))))
    return out


def render_comparisons(comparisons: list[ComparisonEntry]) -> str:
    """The 'Run against run' section ('' when there is no comparison)."""
    if not comparisons:
        return ""
    rows = []
    for c in comparisons:
        links = " ".join(x for x in (f'<a href="{html.escape(c.html)}">report</a>' if c.html else "",
                                     f'(<a href="{html.escape(c.md)}">md</a>)' if c.md else "") if x)
        found = ", ".join(f"{n} {v}" for v, n in c.counts) or "nothing beyond the noise floor"
        forced = " <strong>forced: the runs differ in machine, CPU sets or tools</strong>" if c.forced else ""
        rows.append(f"<tr><td><code>{html.escape(c.run_b)}</code></td><td><code>{html.escape(c.run_a)}</code></td>"
                    f"<td>{html.escape(found)}{forced}</td><td>{links}</td></tr>")
    return ("<h2>Run against run</h2>\n<p>B against A, point by point (<code>scripts/compare.sh RUN_A RUN_B</code>): "
            "regressions and improvements beyond the noise floor, Holm-corrected.</p>\n"
            "<table><thead><tr><th>B (after)</th><th>A (before)</th><th>Findings</th><th>Report</th></tr></thead>\n"
            "<tbody>\n" + "\n".join(rows) + "\n</tbody></table>")


def collect(reports_dir: Path, raw_root: Path, data_root: Path | None = None) -> list[ReportEntry]:
    """Every run with a report under reports_dir, newest first, with its status from the runs file
    (ValueError when that file names a run without reports, or a superseded run replaced by a run
    without reports or by one that is itself superseded)."""
    data_root = data_root if data_root is not None else reports_dir.resolve().parent / "data"
    ref = reference_run(raw_root)
    statuses = read_run_status(reports_dir / RUNS_FILE)
    entries = []
    for run_dir in sorted(p for p in reports_dir.iterdir() if p.is_dir() and p.name != COMPARE_DIR):
        stems = sorted({p.stem for p in run_dir.iterdir() if p.suffix in (".html", ".md")})
        if not stems:
            continue
        suites = tuple((s, f"{run_dir.name}/{s}.html" if (run_dir / f"{s}.html").is_file() else None,
                        f"{run_dir.name}/{s}.md" if (run_dir / f"{s}.md").is_file() else None)
                       for s in stems)
        profile, date, complete, machine, run_suites = "", "", None, "", ()
        meta_path = raw_root / run_dir.name / "meta.json"
        if meta_path.is_file():
            try:
                meta = read_meta(meta_path.parent)
                profile = profile_label(meta) if meta.get("profile") else ""
                date = str(meta.get("start_utc") or "")
                complete = bool(meta.get("complete"))
                machine = _machine(meta)
                run_suites = tuple(str(s) for s in meta.get("suites") or ())
            except RawFormatError:
                pass
        entries.append(ReportEntry(run_dir.name, profile, date, complete, suites, machine, run_suites,
                                   run_dir.name == ref, headlines(data_root / run_dir.name, run_suites),
                                   statuses.get(run_dir.name, RunStatus())))
    entries.sort(key=lambda e: (e.date or "", e.run_id), reverse=True)
    known = {e.run_id: e for e in entries}
    for run_id, st in statuses.items():
        if run_id not in known:
            raise ValueError(f"{reports_dir / RUNS_FILE}: run {run_id} has no reports in {reports_dir}")
        if st.status == "superseded" and (st.superseded_by not in known
                                          or known[st.superseded_by].status.status != "current"):
            raise ValueError(f"{reports_dir / RUNS_FILE}: run {run_id} is superseded by {st.superseded_by}, "
                             "which is not a current run with reports here")
    return entries


def _report_links(e: ReportEntry, only: set[str] | None = None) -> str:
    """A run's reports as links (only those named in `only`, when it names any of them)."""
    links = []
    picked = [x for x in e.suites if x[0] in only] if only else []
    for suite, h, m in picked or e.suites:
        parts = [f'<a href="{html.escape(h)}">{html.escape(suite)}</a>' if h else html.escape(suite)]
        if m:
            parts.append(f'(<a href="{html.escape(m)}">md</a>)')
        links.append(" ".join(parts))
    return " · ".join(links)


def policy(any_superseded: bool) -> str:
    """The sentences on which runs stay, how a superseded one is marked and where caveats come from."""
    where = '<a href="#superseded-runs">Superseded runs</a>' if any_superseded else "Superseded runs"
    return ("Committed runs that back a published report stay in the repository. A run that a later run of "
            f"the same suites and profile replaced is listed under {where}, after the current ones, with the "
            "reason and the run that replaced it; its raw files stay, so any report can be rebuilt. A run with "
            "a known problem in its figures carries a caveat, here and at the top of each of its reports. "
            f"Which runs are superseded, and the caveats, are declared in <code>{RUNS_FILE}</code> beside this "
            "page; a run it does not name is current.")


def caveat_html(status: RunStatus) -> str:
    """A run's caveat as a paragraph for its index row ('' without one)."""
    if not status.caveat:
        return ""
    return f'<p class="caveat"><strong>Caveat:</strong> {html.escape(status.caveat)}</p>'


CLAIMS_PAGE = "claims.html"   # reports/claims.html: the seed write-ups' claims with their verdicts


def claims_link(present: bool) -> str:
    """The link to the claims page, above the current runs ('' when the page is not there)."""
    if not present:
        return ""
    return (f'<p><a href="{CLAIMS_PAGE}">Seed claims: every claim of the four write-ups with its '
            "verdict</a></p>\n")


def current_order(entries: list[ReportEntry]) -> list[ReportEntry]:
    """The current runs as the index lists them: the reference run first, then the others in the
    order given (collect: newest first)."""
    current = [e for e in entries if e.status.status != "superseded"]
    return sorted(current, key=lambda e: not e.reference)   # stable: the rest keep their order


def render_superseded(entries: list[ReportEntry]) -> str:
    """The 'Superseded runs' section ('' when no run is superseded), newest first."""
    by_id = {e.run_id: e for e in entries}
    rows = []
    for e in entries:
        if e.status.status != "superseded":
            continue
        new = by_id.get(e.status.superseded_by)
        replaced = f"<code>{html.escape(e.status.superseded_by)}</code>"
        if new is not None:   # its reports of the same suites, else all of them
            replaced += f"<br>{_report_links(new, {s for s, _, _ in e.suites})}"
        rows.append(f"<tr><td><code>{html.escape(e.run_id)}</code></td>"
                    f"<td>{html.escape(e.date.replace('T', ' ') or '—')}</td>"
                    f"<td>{html.escape(', '.join(e.run_suites) or '—')}</td>"
                    f"<td>{replaced}</td><td>{html.escape(e.status.reason)}{caveat_html(e.status)}</td>"
                    f"<td>{_report_links(e)}</td></tr>")
    if not rows:
        return ""
    return ('<h2 id="superseded-runs">Superseded runs</h2>\n<p>Kept because a published report or comparison '
            "was made from them; read the run that replaced each for current figures.</p>\n"
            "<table><thead><tr><th>Run</th><th>Start (UTC)</th><th>Suites</th><th>Superseded by</th>"
            "<th>Why</th><th>Reports</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>")


def render(entries: list[ReportEntry], comparisons: list[ComparisonEntry] | None = None,
           claims: bool = False, history: str = "", first: str = "") -> str:
    """The index page. first: its first screen (first_screen: what was measured, which server for
    what), above everything; claims: link the claims page (CLAIMS_PAGE, beside this page) above the
    runs; history: the history page's link and change-point lines (history.page.index_html), below it;
    the policy on superseded runs after them."""
    rows = []
    for e in current_order(entries):
        state = "" if e.complete is None else ("complete" if e.complete else "partial")
        ref = ' <strong>reference run</strong>' if e.reference else ""
        heads = "".join(f"<li>{html.escape(h)}</li>" for h in e.headlines)
        rows.append(f"<tr><td class=\"run\"><code>{html.escape(e.run_id)}</code>{ref}{caveat_html(e.status)}</td>"
                    f"<td>{html.escape(e.date.replace('T', ' ') or '—')}</td>"
                    f"<td>{html.escape(e.machine or '—')}</td>"
                    f"<td>{html.escape(e.profile or '—')}{', ' + state if state else ''}</td>"
                    f"<td>{html.escape(', '.join(e.run_suites) or '—')}</td>"
                    f"<td>{'<ul>' + heads + '</ul>' if heads else '—'}</td>"
                    f"<td>{_report_links(e)}</td></tr>")
    body = "\n".join(rows) or '<tr><td colspan="7">no reports yet</td></tr>'
    superseded = render_superseded(entries)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>HTTP server benchmark reports</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left;vertical-align:top}}ul{{margin:0;padding-left:1.2em}}
.caveat{{max-width:28em;margin:.4em 0 0;color:#7a3e00}}
table.which{{font-size:15px}}table.which td{{width:30%}}td.none{{color:#666}}code.run{{font-size:80%;color:#555}}
table.headlines{{font-size:14px;max-width:100em}}.why{{color:#555;font-size:90%}}</style></head>
<body><h1>HTTP server benchmark reports</h1>
{first}
{claims_link(claims)}<h2>Current runs</h2>
<p>The reference run (the one raw/REFERENCE names) first, then the other runs newest first; a run's
caveat, where it has one, is under its id. The profile says what the run was run with (measured
seconds per run, warm-up, reps, and whether the A/A copy that gives the noise floor was run). Headlines: the contestant's
req/s on each suite's headline scenario (geometric mean with its 95 % interval, n runs) and its Δ against
the suite's baseline (ratio of geometric means − 1, t interval on the log scale, paired by rep; from
<code>data/&lt;run_id&gt;/estimates</code> and <code>comparisons</code>). Each suite links to its HTML report and
its Markdown export.</p>
<p class="flag">{html.escape(CLIENT_BOUND_NOTE)}</p>
<table><thead><tr><th>Run</th><th>Start (UTC)</th><th>Machine</th><th>Profile</th><th>Suites</th>
<th>Headlines</th><th>Reports</th></tr></thead>
<tbody>
{body}
</tbody></table>
{history}<p>{policy(bool(superseded))}</p>
{superseded}
{render_comparisons(comparisons or [])}</body></html>
"""


def first_screen_of(entries: list[ReportEntry], raw_root: Path, data_root: Path,
                    claims: "pd.DataFrame | None" = None) -> str:
    """The first screen (first_screen) over the current runs, newest first; then the write-ups'
    headlines beside ours (writeup_headlines, from `claims`: claims_page.chosen_claims) and every
    server's cost per request."""
    from . import first_screen
    from .writeup_headlines import headlines_table
    current = sorted((e.run_id for e in entries if e.status.status != "superseded"), reverse=True)
    metas = [read_meta(raw_root / r) for r in current if (raw_root / r / "meta.json").is_file()]
    runs = first_screen.load_runs(current, data_root)
    return "\n".join(x for x in (first_screen.summary_paragraph(metas),
                                 first_screen.which_server_table(runs, first_screen.load_idle(current, data_root)),
                                 headlines_table(claims) if claims is not None else "",
                                 first_screen.others_table(runs)) if x)


def write_index(reports_dir: str | Path, raw_root: str | Path | None = None,
                data_root: str | Path | None = None) -> Path:
    reports = Path(reports_dir)
    raw = Path(raw_root) if raw_root else reports.resolve().parent / "raw"
    data = Path(data_root) if data_root else reports.resolve().parent / "data"
    reports.mkdir(parents=True, exist_ok=True)
    out = reports / "index.html"
    # the claims summary first: the index links it when it exists, and its rows give the first
    # screen's write-ups' headlines (claims_page)
    from .claims_page import chosen_claims, write_claims_page
    claims = chosen_claims(reports, raw, data)
    write_claims_page(reports, raw, data, claims)
    # the history page (headline metrics over every run, change points) likewise: its lines go on the index
    from .history.page import index_html, write_history_page
    history = write_history_page(reports, raw, data)
    entries = collect(reports, raw, data)
    out.write_text(render(entries, collect_comparisons(reports), claims=(reports / CLAIMS_PAGE).is_file(),
                          history=index_html(history), first=first_screen_of(entries, raw, data, claims)),
                   encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write reports/index.html")
    ap.add_argument("reports_dir")
    ap.add_argument("--raw", default=None, help="raw root (default: raw/ beside the reports folder)")
    ap.add_argument("--data", default=None, help="data root (default: data/ beside the reports folder)")
    args = ap.parse_args(argv)
    print(write_index(args.reports_dir, args.raw, args.data))
    return 0
