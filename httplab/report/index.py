"""Writes reports/index.html linking every reports/<run_id>/<suite>.html and .md, newest first.

    python -m httplab.report.index reports/ [--raw raw/]

Run id, profile and date come from raw/<run_id>/meta.json when it exists (raw defaults to the
`raw` folder beside the reports folder).
"""
from __future__ import annotations

import argparse
import html
from dataclasses import dataclass
from pathlib import Path

from ..parse.errors import RawFormatError
from ..tidy.rawrun import read_meta


@dataclass(frozen=True)
class ReportEntry:
    run_id: str
    profile: str
    date: str
    complete: bool | None
    suites: tuple[tuple[str, str | None, str | None], ...]  # (suite, html rel path, md rel path)


def collect(reports_dir: Path, raw_root: Path) -> list[ReportEntry]:
    entries = []
    for run_dir in sorted(p for p in reports_dir.iterdir() if p.is_dir()):
        stems = sorted({p.stem for p in run_dir.iterdir() if p.suffix in (".html", ".md")})
        if not stems:
            continue
        suites = tuple((s, f"{run_dir.name}/{s}.html" if (run_dir / f"{s}.html").is_file() else None,
                        f"{run_dir.name}/{s}.md" if (run_dir / f"{s}.md").is_file() else None)
                       for s in stems)
        profile, date, complete = "", "", None
        meta_path = raw_root / run_dir.name / "meta.json"
        if meta_path.is_file():
            try:
                meta = read_meta(meta_path.parent)
                profile = str(meta.get("profile") or "")
                date = str(meta.get("start_utc") or "")
                complete = bool(meta.get("complete"))
            except RawFormatError:
                pass
        entries.append(ReportEntry(run_dir.name, profile, date, complete, suites))
    entries.sort(key=lambda e: (e.date or "", e.run_id), reverse=True)
    return entries


def render(entries: list[ReportEntry]) -> str:
    rows = []
    for e in entries:
        links = []
        for suite, h, m in e.suites:
            parts = [f'<a href="{html.escape(h)}">{html.escape(suite)}</a>' if h else html.escape(suite)]
            if m:
                parts.append(f'(<a href="{html.escape(m)}">md</a>)')
            links.append(" ".join(parts))
        state = "" if e.complete is None else ("complete" if e.complete else "partial")
        rows.append(f"<tr><td><code>{html.escape(e.run_id)}</code></td><td>{html.escape(e.profile or '—')}</td>"
                    f"<td>{html.escape(e.date.replace('T', ' ') or '—')}</td><td>{state or '—'}</td>"
                    f"<td>{' · '.join(links)}</td></tr>")
    body = "\n".join(rows) or '<tr><td colspan="5">no reports yet</td></tr>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>HTTP server benchmark reports</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left}}</style></head>
<body><h1>HTTP server benchmark reports</h1>
<p>Newest first. Each suite links to its HTML report and its Markdown export.</p>
<table><thead><tr><th>Run id</th><th>Profile</th><th>Start (UTC)</th><th>Run</th><th>Suites</th></tr></thead>
<tbody>
{body}
</tbody></table></body></html>
"""


def write_index(reports_dir: str | Path, raw_root: str | Path | None = None) -> Path:
    reports = Path(reports_dir)
    raw = Path(raw_root) if raw_root else reports.resolve().parent / "raw"
    reports.mkdir(parents=True, exist_ok=True)
    out = reports / "index.html"
    out.write_text(render(collect(reports, raw)), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write reports/index.html")
    ap.add_argument("reports_dir")
    ap.add_argument("--raw", default=None, help="raw root (default: raw/ beside the reports folder)")
    args = ap.parse_args(argv)
    print(write_index(args.reports_dir, args.raw))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
