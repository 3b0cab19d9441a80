"""The exported reports as a reader sees them: the index and every HTML report of a run, opened in
headless Chromium (Debian's `chromium`, driven by Playwright for Python) at 1280×800.

Checked on each page: every linked stylesheet loads (the reports share reports/assets/report.css);
every image loads and has a real alt text; figures are shown at (about) their
natural width and fit the viewport (text in them stays legible); no horizontal scrolling; every
in-page link ('#…', the table of contents) lands on a heading; no empty section; no missing-value
marker ('nan', 'None', …) as a table cell. On the index: it links to every report and each link
loads. A full-page screenshot of each page is saved for a person to look at.

Pages: $LAB_SMOKE_DIR/reports/index.html and $LAB_SMOKE_DIR/reports/<run_id>/*.html (scripts/test.sh's
smoke run; screenshots in $LAB_SMOKE_DIR/screenshots/); without LAB_SMOKE_DIR, the committed
reports/index.html and reports/<the run in raw/REFERENCE>/*.html (screenshots in build/screenshots/).
The pages are served by a small HTTP server on 127.0.0.1; requests to other hosts (the CDN scripts
of nbconvert's template) are blocked, so the test needs no network.

Skipped, with the reason, when Playwright or a Chromium binary cannot be found; LAB_REQUIRE_BROWSER=1
(scripts/test.sh sets it) makes that a failure. LAB_CHROMIUM names another Chromium binary.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = os.environ.get("LAB_SMOKE_DIR")
VIEWPORT = {"width": 1280, "height": 800}
MIN_SCALE = 0.9  # a figure shown below 0.9 of its natural width is downscaled (e.g. a 2× image at half size)
# Alt texts that describe nothing: nbconvert writes this one when a figure has no description.
PLACEHOLDER_ALTS = {"no description has been provided for this image", "image", "png", "figure"}
# Missing-value markers of Python/pandas that must not reach a reader as a table cell.
MISSING_CELLS = {"nan", "NaN", "None", "NaT", "<NA>"}


def _reports_root() -> Path:
    return Path(SMOKE) / "reports" if SMOKE else ROOT / "reports"


def _report_paths() -> list[Path]:
    root = _reports_root()
    if SMOKE:
        return sorted(root.glob("*/*.html"))
    run_id = (ROOT / "raw" / "REFERENCE").read_text().split()[0]
    return sorted((root / run_id).glob("*.html"))


def _screenshot_dir() -> Path:
    return Path(SMOKE) / "screenshots" if SMOKE else ROOT / "build" / "screenshots"


PAGES = ["index.html"] + [p.relative_to(_reports_root()).as_posix() for p in _report_paths()]


# ---------------------------------------------------------------------------------------------
# Browser, server and one load of each page (its measurements gathered once, checked by each test)

def _unavailable(reason: str):
    msg = f"{reason}; the reports cannot be checked in a browser"
    if os.environ.get("LAB_REQUIRE_BROWSER"):
        pytest.fail(f"{msg} (LAB_REQUIRE_BROWSER=1: scripts/setup.sh installs Debian's chromium and playwright)")
    pytest.skip(f"{msg} (scripts/setup.sh installs them; LAB_REQUIRE_BROWSER=1 makes this a failure)")


def _chromium_path() -> str | None:
    for cand in (os.environ.get("LAB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="module")
def base_url():
    root = _reports_root()
    assert (root / "index.html").is_file(), f"no index page at {root / 'index.html'}"
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install playwright)")
    exe = _chromium_path()
    if exe is None:
        _unavailable("no Chromium binary found (/usr/bin/chromium, Debian's `chromium` package, or LAB_CHROMIUM)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def context(browser, base_url):
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    host = urlparse(base_url).netloc
    # Offline and self-contained: only the report server answers.
    ctx.route("**/*", lambda route: route.continue_() if urlparse(route.request.url).netloc == host
              else route.abort())
    yield ctx
    ctx.close()


# The measurements of a loaded page, in one evaluation.
MEASURE_JS = r"""
() => {
  const vw = window.innerWidth;
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    else if (el.classList.length) s += '.' + [...el.classList].slice(0, 2).join('.');
    if (el.tagName === 'IMG') s += `[src=${el.getAttribute('src')}]`;
    return s;
  };
  const headingOf = (el) => {           // the nearest heading before el, in document order
    const all = [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')];
    let last = null;
    for (const h of all) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) last = h; else break;
    }
    return last ? last.textContent.replace('¶', '').trim() : '(before the first heading)';
  };
  const images = [...document.images].map((img, i) => {
    const r = img.getBoundingClientRect();
    return {index: i, src: img.getAttribute('src') || '', alt: img.getAttribute('alt'),
            complete: img.complete, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
            width: r.width, height: r.height, right: r.right, section: headingOf(img)};
  });
  // Horizontal overflow: the outermost elements reaching past the viewport's right edge.
  const overflowing = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 0.5) continue;
    const p = el.parentElement;
    if (p && p !== document.body && p.getBoundingClientRect().right > vw + 0.5) continue;
    overflowing.push({element: describe(el), right: Math.round(r.right), width: Math.round(r.width),
                      section: headingOf(el)});
  }
  // In-page links and where they land (the fragment as written, then percent-decoded, as browsers do).
  const anchors = [...document.querySelectorAll('a[href^="#"]')].map((a) => {
    const frag = a.getAttribute('href').slice(1);
    let decoded = frag;
    try { decoded = decodeURIComponent(frag); } catch (e) {}
    const target = (frag && (document.getElementById(frag) || document.getElementById(decoded)
                    || document.getElementsByName(frag)[0] || document.getElementsByName(decoded)[0])) || null;
    return {href: a.getAttribute('href'), text: a.textContent.trim().slice(0, 80),
            target: target ? target.tagName.toLowerCase() : null,
            targetText: target ? target.textContent.replace('¶', '').trim().slice(0, 80) : null};
  });
  // Document order of headings and content (visible text, images, tables, media) for empty sections.
  const seq = [];
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD']);
  const visible = (el) => !el.checkVisibility || el.checkVisibility();
  const walk = (node, inHeading) => {
    for (const ch of node.childNodes) {
      if (ch.nodeType === Node.TEXT_NODE) {
        if (!inHeading && ch.textContent.trim()) seq.push({kind: 'content', what: ch.textContent.trim().slice(0, 40)});
        continue;
      }
      if (ch.nodeType !== Node.ELEMENT_NODE || skip.has(ch.tagName) || !visible(ch)) continue;
      const m = /^H([1-6])$/.exec(ch.tagName);
      if (m && !inHeading) {
        seq.push({kind: 'heading', level: +m[1], text: ch.textContent.replace('¶', '').trim(), id: ch.id});
        walk(ch, true);
        continue;
      }
      if (!inHeading && ['IMG', 'SVG', 'CANVAS', 'VIDEO', 'IFRAME', 'OBJECT', 'EMBED'].includes(ch.tagName.toUpperCase())) {
        seq.push({kind: 'content', what: ch.tagName.toLowerCase()});
        continue;
      }
      walk(ch, inHeading);
    }
  };
  walk(document.body, false);
  // Table cells holding a missing-value marker, with their table, row and column.
  const cells = [];
  document.querySelectorAll('table').forEach((table, ti) => {
    const header = table.tHead ? [...table.tHead.rows].pop() : null;
    const caption = table.caption ? table.caption.textContent.trim() : '';
    [...table.rows].forEach((row, ri) => {
      [...row.cells].forEach((cell, ci) => {
        const t = cell.textContent.trim();
        cells.push({table: ti + 1, caption, row: ri, col: ci, text: t,
                    rowLabel: row.cells[0] ? row.cells[0].textContent.trim().slice(0, 50) : '',
                    colLabel: header && header.cells[ci] ? header.cells[ci].textContent.trim().slice(0, 50) : ''});
      });
    });
  });
  const tableSections = [...document.querySelectorAll('table')].map(headingOf);
  // Linked stylesheets (reports/assets/report.css): loaded when the browser parsed rules from them.
  const stylesheets = [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => {
    let rules = null;
    try { rules = l.sheet ? l.sheet.cssRules.length : null; } catch (e) { rules = null; }
    return {href: l.getAttribute('href'), rules};
  });
  return {url: location.href, title: document.title, innerWidth: vw,
          scrollWidth: document.scrollingElement.scrollWidth, images, overflowing, anchors, seq,
          cells, tableSections, stylesheets, notebookPage: document.body.classList.contains('jp-Notebook'),
          links: [...document.querySelectorAll('a[href]')].map((a) => ({href: a.getAttribute('href'), abs: a.href}))};
}
"""


@pytest.fixture(scope="module")
def measured(context, base_url):
    """page name → its measurements (each page is loaded and screenshotted once)."""
    shots = _screenshot_dir()
    shots.mkdir(parents=True, exist_ok=True)
    cache: dict[str, dict] = {}

    def get(name: str) -> dict:
        if name not in cache:
            page = context.new_page()
            try:
                resp = page.goto(urljoin(base_url, name), wait_until="load")
                assert resp is not None and resp.ok, f"{name}: did not load (status {resp and resp.status})"
                page.screenshot(path=str(shots / (name.replace("/", "__").removesuffix(".html") + ".png")),
                                full_page=True)
                cache[name] = page.evaluate(MEASURE_JS)
            finally:
                page.close()
        return cache[name]

    return get


@pytest.fixture(params=PAGES)
def page_name(request) -> str:
    return request.param


def _fail(name: str, problems: list[str], what: str):
    assert not problems, f"{name}: {len(problems)} {what}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------
# The checks

def test_pages_found():
    assert len(PAGES) > 1, f"no reports found under {_reports_root()} (pages: {PAGES})"


def test_stylesheets_load(measured, page_name):
    """A report links nbconvert's CSS as one shared file (reports/assets/report.css, by a relative
    href): it must be reachable from the page and hold rules."""
    m = measured(page_name)
    problems = [f"stylesheet {s['href']!r}: did not load (no rules)" for s in m["stylesheets"] if not s["rules"]]
    if m["notebookPage"] and not m["stylesheets"]:
        problems.append("an nbconvert page that links no stylesheet (its CSS is in reports/assets/report.css)")
    _fail(page_name, problems, "linked stylesheet(s) not loaded")


def test_images_load_and_have_alt_text(measured, page_name):
    m = measured(page_name)
    problems = []
    for img in m["images"]:
        where = f"img {img['index'] + 1} ({img['src']}, section '{img['section']}')"
        if not img["naturalWidth"]:
            problems.append(f"{where}: did not load (naturalWidth 0, complete={img['complete']})")
        alt = (img["alt"] or "").strip()
        if not alt:
            problems.append(f"{where}: no alt text (alt={img['alt']!r})")
        elif alt.lower().rstrip(".") in PLACEHOLDER_ALTS:
            problems.append(f"{where}: placeholder alt text {alt!r}, not a description")
    _fail(page_name, problems, "image(s) not loaded or without alt text")


def test_images_shown_at_legible_size(measured, page_name):
    m = measured(page_name)
    vw = m["innerWidth"]
    problems = []
    for img in m["images"]:
        if not img["naturalWidth"]:
            continue  # reported by the loading test
        where = f"img {img['index'] + 1} ({img['src']}, section '{img['section']}')"
        scale = img["width"] / img["naturalWidth"]
        if scale < MIN_SCALE:
            problems.append(f"{where}: shown {img['width']:.0f} px wide of its natural {img['naturalWidth']} px "
                            f"(scale {scale:.2f} < {MIN_SCALE}: its text is shrunk)")
        if img["width"] > vw:
            problems.append(f"{where}: {img['width']:.0f} px wide, wider than the {vw} px viewport "
                            f"(natural {img['naturalWidth']} px)")
    _fail(page_name, problems, "image(s) not shown at a legible size")


def test_no_horizontal_scrolling(measured, page_name):
    m = measured(page_name)
    if m["scrollWidth"] <= m["innerWidth"]:
        return
    culprits = [f"{o['element']} (section '{o['section']}'): right edge {o['right']} px, {o['width']} px wide"
                for o in sorted(m["overflowing"], key=lambda o: -o["right"])[:10]]
    pytest.fail(f"{page_name}: scrolls horizontally: document scrollWidth {m['scrollWidth']} px > "
                f"window.innerWidth {m['innerWidth']} px; widest elements past the right edge:\n  "
                + "\n  ".join(culprits or ["(none found)"]))


def test_toc_links_land_on_headings(measured, page_name):
    m = measured(page_name)
    problems = []
    for a in m["anchors"]:
        if a["target"] is None:
            problems.append(f"link {a['text']!r} → {a['href']}: no element with that id")
        elif a["target"] not in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            problems.append(f"link {a['text']!r} → {a['href']}: lands on a <{a['target']}> "
                            f"({a['targetText']!r}), not a heading")
    _fail(page_name, problems, "in-page link(s) not landing on a heading")


def test_no_empty_sections(measured, page_name):
    seq = measured(page_name)["seq"]
    problems = []
    for i, item in enumerate(seq):
        if item["kind"] != "heading":
            continue
        nxt = seq[i + 1] if i + 1 < len(seq) else None
        if nxt is None:
            problems.append(f"h{item['level']} '{item['text']}' (#{item['id']}): nothing after it (end of page)")
        elif nxt["kind"] == "heading" and nxt["level"] <= item["level"]:
            problems.append(f"h{item['level']} '{item['text']}' (#{item['id']}): directly followed by "
                            f"h{nxt['level']} '{nxt['text']}', no content between")
    _fail(page_name, problems, "empty section(s)")


def test_no_missing_value_table_cells(measured, page_name):
    m = measured(page_name)
    problems = []
    for c in m["cells"]:
        if c["text"] in MISSING_CELLS:
            table = f"table {c['table']}" + (f" '{c['caption']}'" if c["caption"] else "")
            problems.append(f"{table} (section '{m['tableSections'][c['table'] - 1]}'), row {c['row']} "
                            f"'{c['rowLabel']}', column {c['col']} '{c['colLabel']}': cell reads {c['text']!r}")
    _fail(page_name, problems, "table cell(s) showing a missing-value marker")


def test_index_links_every_report_and_each_loads(measured, context, base_url):
    m = measured("index.html")
    root = _reports_root()
    linked = {urlparse(link["abs"]).path.lstrip("/") for link in m["links"]
              if not link["href"].startswith("#") and urlparse(link["abs"]).netloc == urlparse(base_url).netloc}
    linked = {unquote(p) for p in linked}
    reports = {p.relative_to(root).as_posix() for p in sorted(root.glob("*/*.html"))}
    missing = sorted(reports - linked)
    assert not missing, f"index.html: no link to {len(missing)} report(s): {missing}"
    problems = []
    for link in m["links"]:
        if link["href"].startswith("#"):
            continue
        if urlparse(link["abs"]).netloc != urlparse(base_url).netloc:
            problems.append(f"link {link['href']!r}: points outside the reports ({link['abs']})")
            continue
        resp = context.request.get(link["abs"])
        if not resp.ok or not resp.body():
            problems.append(f"link {link['href']!r}: status {resp.status}, {len(resp.body())} bytes")
        elif link["href"].endswith(".html"):
            page = context.new_page()
            try:
                nav = page.goto(link["abs"], wait_until="load")
                if nav is None or not nav.ok or not page.title().strip():
                    problems.append(f"link {link['href']!r}: page did not load "
                                    f"(status {nav and nav.status}, title {page.title()!r})")
            finally:
                page.close()
    _fail("index.html", problems, "link(s) that do not load")


def test_the_index_first_screen_answers(context, base_url):
    """The index's first 1280 × 800 px hold what a chooser needs first (httplab/report/first_screen.py):
    the paragraph saying what was measured, on which machines, with which core split and who stands
    in for the write-ups' xKit, and the whole per-protocol "which server for what" table; and no req/s
    figure printed bare in it (a client-bound req/s is a lower bound: index.CLIENT_BOUND_FLAG)."""
    page = context.new_page()
    try:
        resp = page.goto(urljoin(base_url, "index.html"), wait_until="load")
        assert resp is not None and resp.ok
        shots = _screenshot_dir()
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "index-first-screen.png"))   # the viewport only: the first screen
        got = page.evaluate("""() => {
          const box = (sel) => { const e = document.querySelector(sel);
                                 return e ? {bottom: e.getBoundingClientRect().bottom, text: e.textContent} : null; };
          const rows = [...document.querySelectorAll('table.which tbody tr')].map(r => r.textContent);
          return {summary: box('p.summary'), table: box('table.which'), rows, height: window.innerHeight};
        }""")
    finally:
        page.close()
    assert got["summary"] and got["table"], "index.html: no first-screen paragraph or which-server table"
    assert got["summary"]["bottom"] <= got["height"] and got["table"]["bottom"] <= got["height"], got
    para = got["summary"]["text"]
    assert "What was measured" in para and "xKit" in para and "load tool on CPU" in para and "cores" in para
    table = got["table"]["text"]
    # (the offered load of the P99 column is a schedule's rate, not a measured req/s)
    assert "req/s" not in re.sub(r"[\d,]+ req/s offered", "", table), table
    # a row per protocol: measured (its cost with n) only where a run of the root has that protocol's
    # suite report, and then at least one; else it says no current run measured it (the latency and
    # versus smoke roots measure none of the headline points)
    root = _reports_root()
    suite_of = {"HTTP/1.1": "http1", "h2c": "h2c", "HTTPS/1.1": "https", "HTTPS/2": "https", "HTTP/3": "h3"}
    assert len(got["rows"]) == len(suite_of), got["rows"]
    measured = set()
    for proto, row in zip(suite_of, got["rows"]):
        assert row.startswith(proto), (proto, row)
        if "µs (n=" in row:
            measured.add(proto)
            assert any(root.glob(f"*/{suite_of[proto]}.html")), (proto, row)
        else:
            assert "no current run measured it" in row, (proto, row)
    if any(any(root.glob(f"*/{s}.html")) for s in set(suite_of.values())):
        assert measured, got["rows"]
