"""The write-up notebooks (notebooks/http1, http2, https, languages.ipynb): each runs from the
repository root as `papermill notebooks/<name>.ipynb OUT` with no kernel flag, on the reference run
with no parameter and on a committed run with `-p run_dir raw/<id>`, and its output holds the tables
of the suites it names (http2: the h2c suite's and the https suite's HTTPS/2 tables, the h3 suite's
where the run has it). Each execution is a papermill process of its own (about 10-20 s)."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from httplab.report import writeups as W
from httplab.report.execute import KERNEL
from httplab.report.inline_notebook import parameter_names, run_code
from httplab.parse.errors import NoRunError
from httplab.stats.write import NoDataError
from notebook_kernel import needs_kernel

REPO = Path(__file__).resolve().parents[2]
REFERENCE = (REPO / "raw" / "REFERENCE").read_text(encoding="utf-8").split()[0]
NEWEST_SEED_RUN = "20261206T032534Z-vm"  # the four seed suites, full profile
H3_RUN = "20261127T054911Z-vm"  # the https and h3 suites, no h2c
NOTEBOOKS = {name: REPO / "notebooks" / f"{name}.ipynb" for name in W.WRITEUPS}

H2C_TABLES = ("GET /ping — minimal response, by connections", "GET /echo — response size",
              "POST /echo — request body, with Transfer/s", "HTTP/2 vs HTTP/1.1")
HTTPS2_TABLES = ("HTTPS/2 GET /ping — by connections", "HTTPS/2 GET /echo — response size",
                 "HTTPS/2 POST /echo — request body", "What TLS costs HTTP/2")


def papermill() -> str:
    exe = Path(sys.executable).with_name("papermill")
    return str(exe) if exe.is_file() else (shutil.which("papermill") or "papermill")


def execute(name: str, tmp_path: Path, *params: str) -> list[str]:
    """papermill notebooks/<name>.ipynb OUT [params] from the repository root; the Markdown of every
    output, in order."""
    out = tmp_path / f"{name}.ipynb"
    proc = subprocess.run([papermill(), "--no-progress-bar", f"notebooks/{name}.ipynb", str(out), *params],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    texts = []
    for cell in json.loads(out.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            assert o.get("output_type") != "error", o
            md = o.get("data", {}).get("text/markdown")
            if md:
                texts.append("".join(md))
    return texts


def table_under(texts: list[str], title: str) -> str:
    """The first Markdown table shown after the section heading that starts with `title` (before
    the next heading); AssertionError when the heading or its table is missing."""
    starts = [i for i, t in enumerate(texts) if re.search(r"<h2 id=\"[^\"]*\">" + re.escape(title), t)]
    assert starts, f"no section {title!r}"
    for t in texts[starts[0]:]:
        rows = [line for line in t.splitlines() if line.startswith("|")]
        if len(rows) >= 3:
            return "\n".join(rows)
        if t is not texts[starts[0]] and "<h2 " in t:
            break
    raise AssertionError(f"section {title!r} shows no table")


def test_every_notebook_is_thin_and_runs_on_the_labs_kernel():
    for name, path in NOTEBOOKS.items():
        nb = json.loads(path.read_text(encoding="utf-8"))
        assert nb["metadata"]["kernelspec"]["name"] == KERNEL, name
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert "parameters" in code[0]["metadata"].get("tags", []), name
        assert {"run_dir", "out_dir", "confidence", "raw_root", "data_root"} <= parameter_names(path), name
        shown = [m.group(1) for c in code for m in re.finditer(r'W\.show_part\(run, "([^"]+)"\)', "".join(c["source"]))]
        assert shown == [p.key for p in W.WRITEUPS[name].parts], name
        assert all(len("".join(c["source"]).splitlines()) <= 10 for c in code), f"{name}: logic belongs in httplab.report"


def test_the_default_run_is_the_reference_and_a_run_dir_names_one(tmp_path):
    w = W.open_writeup("http2")
    assert (w.run_id, w.reference) == (REFERENCE, True)
    assert w.data_dir == REPO / "data" / REFERENCE
    assert {"h2c", "https"} <= set(w.parts_run) and not W.holds(w, "h3")
    for given in (f"raw/{H3_RUN}", H3_RUN):
        w = W.open_writeup("http2", run_dir=given)
        assert (w.run_id, w.reference, w.run_dir) == (H3_RUN, False, REPO / "raw" / H3_RUN)
        assert W.holds(w, "h3") and not W.holds(w, "h2c")
    with pytest.raises(NoDataError, match="python -m httplab build"):
        W.open_writeup("http1", run_dir="raw/no-such-run")
    with pytest.raises(NoRunError, match="REFERENCE"):
        W.open_writeup("http1", raw_root=str(tmp_path))
    with pytest.raises(KeyError, match="https:h2"):
        W.part(W.open_writeup("http2"), "https:h1")


def test_an_inlined_cell_shows_its_last_expression_only():
    ns: dict = {}
    assert run_code("x = 2\nx * 3", ns, "<cell>") == 6 and ns["x"] == 2
    assert run_code("y = 1", ns, "<cell>") is None


@needs_kernel
@pytest.mark.parametrize("params", [(), ("-p", "run_dir", f"raw/{NEWEST_SEED_RUN}")], ids=["reference", "run_dir"])
def test_http2_shows_the_h2c_and_https2_tables(tmp_path, params):
    texts = execute("http2", tmp_path, *params)
    run = params[-1].split("/")[-1] if params else REFERENCE
    assert f"`{run}`" in texts[0]
    for title in H2C_TABLES + HTTPS2_TABLES:
        table = table_under(texts, title)
        assert "C" in table or "evloop" in table, title
    # the HTTPS/2 part holds only the https suite's HTTP/2 runs: no HTTPS/1.1 table
    assert not any("HTTPS/1.1 GET /ping" in t for t in texts)
    assert any("holds no `h3` suite" in t for t in texts)  # neither run has HTTP/3


@needs_kernel
def test_http2_shows_http3_beside_https2_where_the_run_has_it(tmp_path):
    texts = execute("http2", tmp_path, "-p", "run_dir", f"raw/{H3_RUN}")
    assert any("holds no `h2c` suite" in t for t in texts)
    for title in HTTPS2_TABLES[:3]:
        table_under(texts, title)
    assert any(t.startswith("# HTTP/3 (QUIC)") for t in texts)
    table_under(texts, "GET /ping by connections, 10 streams each")
    table_under(texts, "Across suites")


@needs_kernel
@pytest.mark.parametrize("name, titles", [
    ("http1", ("GET /ping — minimal response, by connections", "Pipelined GET /ping")),
    ("https", ("HTTPS/1.1 — GET /ping, by connections", "HTTPS/2 — GET /ping, by connections")),
    ("languages", ("Final ranking", "Per endpoint")),
])
def test_the_other_write_ups_show_their_suites_tables(tmp_path, name, titles):
    texts = execute(name, tmp_path)
    assert f"`{REFERENCE}`" in texts[0]
    for title in titles:
        table_under(texts, title)
