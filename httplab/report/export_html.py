"""A report's HTML export with nbconvert's CSS in one shared stylesheet, not inlined in every page.

    python -m httplab export-html page NOTEBOOK OUT_DIR --reports-root REPORTS_ROOT [--markdown]
    python -m httplab export-html convert REPORTS_ROOT

nbconvert's `lab` template inlines about 260 KB of CSS in each page (Pygments' highlighting,
JupyterLab's index.css and light theme, and a few rules of its own), the same bytes every time.
`page` exports NOTEBOOK to OUT_DIR/<stem>.html (no code, figures extracted to <stem>_files/, with
notebooks/templates' `alt_lab` for the figures' alt text, as scripts/lib/report.sh always did)
through a template that links REPORTS_ROOT/assets/report.css by a relative href instead, and
writes that stylesheet: the CSS the stock template would have inlined, taken from a stock export
of an empty notebook, so it follows the installed nbconvert. The stylesheet's rules are the
page's first <style> elements, in their order and at their place, so the page looks the same.

`--markdown` also writes OUT_DIR/<stem>.md, exactly as `jupyter nbconvert --to markdown --no-input`
with the `alt_markdown` template does (its figures into the same <stem>_files/), in this process:
a second process would load nbconvert again, about 4 s of CPU per report.

`convert` does the same to pages exported before (a one-off for the committed reports): in each
REPORTS_ROOT/**/*.html whose inlined CSS is byte-identical to the stylesheet, that CSS is replaced
by the link; a page whose CSS differs is left as it is and named.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

STYLESHEET = "assets/report.css"            # relative to the reports root
TEMPLATES = Path(__file__).resolve().parents[2] / "notebooks" / "templates"
BASE_TEMPLATE = "alt_lab"                   # notebooks/templates/alt_lab: lab + the figures' alt text
MARKDOWN_TEMPLATE = "alt_markdown"          # notebooks/templates/alt_markdown: markdown + alt text
# The base template with its CSS block (index.css, the theme and its own rules) replaced by the
# link. Pygments' CSS, which lab writes before that block from resources.inlining, is left out by
# disabling CSSHTMLHeaderPreprocessor, the preprocessor that fills resources.inlining.
LINKED_SOURCE = ("{%- extends 'index.html.j2' -%}\n"
                 "{% block notebook_css %}{{ resources.stylesheet_link }}\n{% endblock notebook_css %}\n")
_STYLE = re.compile(r'<style type="text/css">(.*?)</style>', re.S)
_NEXT_STYLE = re.compile(r'\s*<style type="text/css">(.*?)</style>', re.S)


def link_tag(href: str) -> str:
    """The <link> element a page gets, as nbconvert's HTML serializer (BeautifulSoup) writes it."""
    from html import escape
    return f'<link href="{escape(href)}" rel="stylesheet"/>'


def stylesheet_href(out_dir: Path, reports_root: Path) -> str:
    """The stylesheet's address from a page in out_dir (../assets/report.css from reports/<run_id>/)."""
    return Path(os.path.relpath(Path(reports_root).resolve() / STYLESHEET, Path(out_dir).resolve())).as_posix()


def inlined_css(page: str) -> tuple[int, int, str] | None:
    """Where nbconvert's inlined CSS sits in an exported page: its first <style type="text/css">
    elements in <head>, one after another with only white space between them, as (start, end of
    that stretch, their contents joined). None when the head has no such element."""
    head_end = page.find("</head>")
    m = _STYLE.search(page, 0, head_end if head_end >= 0 else len(page))
    if m is None:
        return None
    end, parts = m.end(), [m.group(1)]
    while (nxt := _NEXT_STYLE.match(page, end)) is not None:
        end = nxt.end()
        parts.append(nxt.group(1))
    return m.start(), end, "".join(parts)


def link_stylesheet(page: str, css: str, href: str) -> str | None:
    """The page with its inlined CSS (inlined_css) replaced by a link to href; None when the page has
    no inlined CSS or when it is not byte-identical to css (the page is then better left alone)."""
    found = inlined_css(page)
    if found is None or found[2] != css:
        return None
    start, end, _ = found
    return page[:start] + link_tag(href) + page[end:]


def _exporter(linked: bool, templates: Path = TEMPLATES):
    from nbconvert import HTMLExporter
    from traitlets.config import Config
    c = Config()
    c.TemplateExporter.extra_template_basedirs = [str(templates)]
    c.TemplateExporter.exclude_input = True           # jupyter nbconvert --no-input
    c.TemplateExporter.exclude_input_prompt = True
    c.TemplateExporter.exclude_output_prompt = True
    c.ExtractOutputPreprocessor.enabled = True
    if not linked:
        return HTMLExporter(config=c, template_name=BASE_TEMPLATE)
    c.CSSHTMLHeaderPreprocessor.enabled = False
    return HTMLExporter(config=c, template_name=BASE_TEMPLATE, raw_template=LINKED_SOURCE)  # a template as a string


def _markdown_exporter(templates: Path = TEMPLATES):
    """The exporter `jupyter nbconvert --to markdown --no-input --template alt_markdown` makes:
    --no-input's three settings; the markdown exporter extracts figures by default."""
    from nbconvert import MarkdownExporter
    from traitlets.config import Config
    c = Config()
    c.TemplateExporter.extra_template_basedirs = [str(templates)]
    c.TemplateExporter.exclude_input = True
    c.TemplateExporter.exclude_input_prompt = True
    c.TemplateExporter.exclude_output_prompt = True
    return MarkdownExporter(config=c, template_name=MARKDOWN_TEMPLATE)


def _resources(stem: str, **extra: str) -> dict:
    from jupyter_core.paths import jupyter_config_dir
    return {"config_dir": jupyter_config_dir(), "unique_key": stem, "output_files_dir": f"{stem}_files", **extra}


def stylesheet_css(templates: Path = TEMPLATES) -> str:
    """The CSS that the stock template inlines in every page (identical for every notebook)."""
    import nbformat
    page, _ = _exporter(False, templates).from_notebook_node(nbformat.v4.new_notebook(), _resources("empty"))
    found = inlined_css(page)
    if found is None:
        raise RuntimeError("nbconvert's lab template inlined no CSS: nothing to share")
    return found[2]


def write_stylesheet(reports_root: Path, css: str) -> Path:
    """REPORTS_ROOT/assets/report.css holding css (rewritten only when its content differs)."""
    path = Path(reports_root) / STYLESHEET
    if path.is_file() and path.read_text(encoding="utf-8") == css:
        return path
    if path.is_file():
        print(f"{path}: nbconvert's CSS changed; every page linking it now uses the new one", file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    # through a file of this process's own and a rename: run_all.sh exports two reports at once, and
    # a page must never be served half a stylesheet
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(css, encoding="utf-8")
    tmp.replace(path)
    return path


def export_page(notebook: Path, out_dir: Path, reports_root: Path, templates: Path = TEMPLATES) -> Path:
    """OUT_DIR/<stem>.html (and its figures in <stem>_files/) linking the shared stylesheet, which is
    written at reports_root. Returns the page's path."""
    from nbconvert.writers import FilesWriter
    notebook, out_dir = Path(notebook), Path(out_dir)
    write_stylesheet(reports_root, stylesheet_css(templates))
    stem = notebook.stem
    res = _resources(stem, stylesheet_link=link_tag(stylesheet_href(out_dir, reports_root)))
    body, res = _exporter(True, templates).from_filename(str(notebook), res)
    return Path(FilesWriter(build_directory=str(out_dir)).write(body, res, notebook_name=stem))


def export_markdown(notebook: Path, out_dir: Path, templates: Path = TEMPLATES) -> Path:
    """OUT_DIR/<stem>.md (figures in <stem>_files/, the names the HTML export gives them)."""
    from nbconvert.writers import FilesWriter
    notebook, out_dir = Path(notebook), Path(out_dir)
    stem = notebook.stem
    body, res = _markdown_exporter(templates).from_filename(str(notebook), _resources(stem))
    return Path(FilesWriter(build_directory=str(out_dir)).write(body, res, notebook_name=stem))


def convert_reports(reports_root: Path, css: str) -> tuple[list[Path], list[Path]]:
    """Link the stylesheet from every page under reports_root whose inlined CSS is css (the pages'
    own bytes otherwise untouched); returns (converted, left as they were because their CSS differs).
    Pages without inlined CSS (already converted, or not nbconvert's) are in neither list."""
    root = Path(reports_root)
    converted, differing = [], []
    for page in sorted(root.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if inlined_css(text) is None:
            continue
        new = link_stylesheet(text, css, stylesheet_href(page.parent, root))
        if new is None:
            differing.append(page)
            continue
        page.write_text(new, encoding="utf-8")
        converted.append(page)
    if converted:
        write_stylesheet(root, css)
    return converted, differing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="HTML export linking one shared stylesheet")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("page", help="export a notebook to OUT_DIR/<stem>.html")
    p.add_argument("notebook", type=Path)
    p.add_argument("out_dir", type=Path)
    p.add_argument("--reports-root", type=Path, required=True, help="where assets/report.css is written")
    p.add_argument("--templates", type=Path, default=TEMPLATES, help="the alt_lab template's folder")
    p.add_argument("--markdown", action="store_true", help="also OUT_DIR/<stem>.md (alt_markdown, no code)")
    c = sub.add_parser("convert", help="link the stylesheet from pages that inline the identical CSS")
    c.add_argument("reports_root", type=Path)
    c.add_argument("--templates", type=Path, default=TEMPLATES)
    args = ap.parse_args(argv)
    if args.cmd == "page":
        print(export_page(args.notebook, args.out_dir, args.reports_root, args.templates))
        if args.markdown:
            print(export_markdown(args.notebook, args.out_dir, args.templates))
        return 0
    converted, differing = convert_reports(args.reports_root, stylesheet_css(args.templates))
    for path in converted:
        print(f"linked: {path}")
    for path in differing:
        print(f"kept (its inlined CSS differs from {STYLESHEET}): {path}", file=sys.stderr)
    return 0
