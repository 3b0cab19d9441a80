"""HTML export with one shared stylesheet (httplab.report.export_html): the page links
reports/assets/report.css instead of inlining nbconvert's CSS, the stylesheet holds exactly the CSS
the stock template inlines, and the one-off conversion of older pages gives the same bytes as a
fresh export (and leaves a page alone whose CSS differs)."""
from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from httplab.report import export_html as X

ROOT = Path(__file__).resolve().parents[2]


def _page(*styles: str, body: str = "<p>hi</p>") -> str:
    head = "".join(f'<style type="text/css">{s}</style>\n' for s in styles)
    return f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"/>\n<title>t</title><script src="x.js"></script>\n{head}' \
           f'<script>1</script><style type="text/css">.later{{}}</style></head><body>{body}</body></html>'


def test_inlined_css_is_the_first_run_of_style_elements_in_the_head():
    page = _page("a{}", "b{}", "c{}", body='<style type="text/css">.body{}</style>')
    start, end, css = X.inlined_css(page)
    assert css == "a{}b{}c{}"   # not the style after the script, nor the body's
    assert page[start:end].startswith('<style type="text/css">a{}') and page[start:end].endswith("c{}</style>")
    assert X.inlined_css("<html><head><style>x{}</style></head></html>") is None  # not nbconvert's


def test_link_stylesheet_replaces_only_identical_css():
    page = _page("a{}", "b{}")
    linked = X.link_stylesheet(page, "a{}b{}", "../assets/report.css")
    assert linked == page.replace('<style type="text/css">a{}</style>\n<style type="text/css">b{}</style>',
                                  '<link href="../assets/report.css" rel="stylesheet"/>')
    assert ".later{}" in linked
    assert X.link_stylesheet(page, "a{}b{} ", "../assets/report.css") is None   # one byte off: kept
    assert X.link_stylesheet(linked, "a{}b{}", "../assets/report.css") is None  # nothing left to link


def test_stylesheet_href_from_each_depth(tmp_path):
    root = tmp_path / "reports"
    assert X.stylesheet_href(root / "20260101T000000Z-vm", root) == "../assets/report.css"
    assert X.stylesheet_href(root / "compare" / "A__vs__B", root) == "../../assets/report.css"


def _notebook(path: Path) -> Path:
    import nbformat
    out = nbformat.v4.new_output("display_data", data={"image/png": _tiny_png(), "text/plain": "<Figure>"},
                                 metadata={"image/png": {"alt": "A line chart of nothing"}})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nText with `code`.\n\n```python\nx = 1\n```"),
        nbformat.v4.new_code_cell("show()", outputs=[out])])
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _tiny_png() -> str:
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One notebook exported twice: by export_page and by the stock command report.sh used before."""
    pytest.importorskip("nbconvert")
    root = tmp_path_factory.mktemp("x") / "reports"
    nb = _notebook(root / "20260101T000000Z-vm" / "demo.ipynb")
    linked = X.export_page(nb, nb.parent, root)
    stock_dir = root.parent / "stock"
    subprocess.run([str(Path(sys.executable).parent / "jupyter"), "nbconvert", "--log-level", "WARN", "--to", "html",
                    "--no-input", "--ExtractOutputPreprocessor.enabled=True",
                    f"--TemplateExporter.extra_template_basedirs={X.TEMPLATES}", "--template", "alt_lab",
                    str(nb), "--output-dir", str(stock_dir)], check=True)
    return root, linked, stock_dir / "demo.html"


def test_markdown_export_is_the_stock_commands(tmp_path):
    """export_markdown writes what the stock command report.sh ran before writes, byte for byte,
    figures included."""
    pytest.importorskip("nbconvert")
    nb = _notebook(tmp_path / "ours" / "demo.ipynb")
    md = X.export_markdown(nb, tmp_path / "ours")
    stock_dir = tmp_path / "stock"
    subprocess.run([str(Path(sys.executable).parent / "jupyter"), "nbconvert", "--log-level", "WARN", "--to",
                    "markdown", "--no-input", f"--TemplateExporter.extra_template_basedirs={X.TEMPLATES}",
                    "--template", "alt_markdown", str(nb), "--output-dir", str(stock_dir)], check=True)
    assert md == tmp_path / "ours" / "demo.md"
    assert md.read_bytes() == (stock_dir / "demo.md").read_bytes()
    assert "A line chart of nothing" in md.read_text(encoding="utf-8")
    ours = sorted(p.name for p in (tmp_path / "ours" / "demo_files").iterdir())
    assert ours and ours == sorted(p.name for p in (stock_dir / "demo_files").iterdir())
    for name in ours:
        assert (tmp_path / "ours" / "demo_files" / name).read_bytes() == (stock_dir / "demo_files" / name).read_bytes()


def test_export_links_the_shared_stylesheet(exported):
    root, linked, _ = exported
    page = linked.read_text(encoding="utf-8")
    assert linked == root / "20260101T000000Z-vm" / "demo.html"
    assert '<link href="../assets/report.css" rel="stylesheet"/>' in page
    assert X.inlined_css(page) is None and "--jp-layout-color0:" not in page  # none of nbconvert's CSS inlined
    assert 'alt="A line chart of nothing"' in page and 'src="demo_files/' in page  # alt_lab, extracted figure
    assert (root / "20260101T000000Z-vm" / "demo_files").is_dir()
    css = (root / X.STYLESHEET).read_text(encoding="utf-8")
    assert css == X.stylesheet_css() and ".highlight" in css and "--jp-layout-color0" in css and "@page" in css


def test_converting_a_stock_page_gives_the_fresh_export(exported):
    """The one-off conversion and the new export agree byte for byte: the stylesheet is exactly what
    the stock template inlines, and the link sits where that CSS was."""
    root, linked, stock = exported
    stock_page = stock.read_text(encoding="utf-8")
    assert X.inlined_css(stock_page)[2] == (root / X.STYLESHEET).read_text(encoding="utf-8")
    assert X.link_stylesheet(stock_page, X.stylesheet_css(), "../assets/report.css") == linked.read_text(encoding="utf-8")


def test_convert_reports_keeps_a_page_whose_css_differs(exported, tmp_path):
    _, _, stock = exported
    root = tmp_path / "reports"
    stock_page = stock.read_text(encoding="utf-8")
    (root / "run").mkdir(parents=True)
    (root / "compare" / "A__vs__B").mkdir(parents=True)
    (root / "run" / "a.html").write_text(stock_page, encoding="utf-8")
    (root / "compare" / "A__vs__B" / "compare.html").write_text(stock_page, encoding="utf-8")
    odd = stock_page.replace("pre { line-height: 125%; }", "pre { line-height: 126%; }", 1)
    (root / "run" / "odd.html").write_text(odd, encoding="utf-8")
    (root / "index.html").write_text("<html><head><style>x{}</style></head></html>", encoding="utf-8")
    css = X.stylesheet_css()
    converted, differing = X.convert_reports(root, css)
    assert converted == [root / "compare" / "A__vs__B" / "compare.html", root / "run" / "a.html"]
    assert differing == [root / "run" / "odd.html"]
    assert (root / "run" / "odd.html").read_text(encoding="utf-8") == odd
    assert '<link href="../../assets/report.css"' in (root / "compare" / "A__vs__B" / "compare.html").read_text()
    assert (root / X.STYLESHEET).read_text(encoding="utf-8") == css
    assert X.convert_reports(root, css) == ([], [root / "run" / "odd.html"])   # a second run changes nothing


def test_report_sh_exports_through_the_module():
    text = (ROOT / "scripts" / "lib" / "report.sh").read_text()
    assert "-m httplab export-html page" in text and '--reports-root "$REPORTS_ROOT"' in text
    assert "--to html" not in text   # the stock, inlining export is gone


def test_committed_reports_link_the_one_stylesheet():
    """Every committed nbconvert page links reports/assets/report.css at its depth and inlines none of it."""
    reports = ROOT / "reports"
    pages = [p for p in sorted(reports.rglob("*.html")) if 'class="jp-Notebook"' in p.read_text(encoding="utf-8")]
    assert pages and (reports / X.STYLESHEET).is_file()
    bad = []
    for p in pages:
        text = p.read_text(encoding="utf-8")
        if X.link_tag(X.stylesheet_href(p.parent, reports)) not in text or X.inlined_css(text) is not None:
            bad.append(p.relative_to(reports).as_posix())
    assert not bad, f"pages not linking {X.STYLESHEET} (run python -m httplab export-html convert reports): {bad}"
