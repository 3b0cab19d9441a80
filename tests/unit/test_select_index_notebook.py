import json
from pathlib import Path

import nbformat
import pytest

from httplab.parse.errors import NoRunError
from httplab.lab.paths import repo_root
from httplab.report.index import main as index_main
from httplab.tidy.runs_select import default_run_dir, list_runs
from make_fake_run import make_fake_run
from notebook_kernel import needs_kernel

REPO = Path(__file__).resolve().parents[2]


def test_default_run_is_newest_complete(tmp_path):
    raw = tmp_path / "raw"
    make_fake_run(raw, "20260101T000000Z-a", start_utc="2026-01-01T00:00:00Z", reps=1)
    make_fake_run(raw, "20260201T000000Z-b", start_utc="2026-02-01T00:00:00Z", reps=1)
    make_fake_run(raw, "20260301T000000Z-c", start_utc="2026-03-01T00:00:00Z", reps=1, complete=False)
    assert default_run_dir(raw).name == "20260201T000000Z-b"
    assert [r.run_id for r in list_runs(raw)][0] == "20260301T000000Z-c"


def test_reference_fallback_and_errors(tmp_path):
    raw = tmp_path / "raw"
    make_fake_run(raw, "20260301T000000Z-c", reps=1, complete=False)
    with pytest.raises(NoRunError, match="REFERENCE"):
        default_run_dir(raw)
    (raw / "REFERENCE").write_text("20260301T000000Z-c\n")
    assert default_run_dir(raw).name == "20260301T000000Z-c"
    (raw / "REFERENCE").write_text("nope\n")
    with pytest.raises(NoRunError, match="nope"):
        default_run_dir(raw)
    with pytest.raises(NoRunError):
        default_run_dir(tmp_path / "missing")


def test_report_index(tmp_path):
    raw = tmp_path / "raw"
    make_fake_run(raw, "20260101T000000Z-a", start_utc="2026-01-01T00:00:00Z", reps=1)
    make_fake_run(raw, "20260201T000000Z-b", start_utc="2026-02-01T00:00:00Z", reps=1)
    reports = tmp_path / "reports"
    for rid in ("20260101T000000Z-a", "20260201T000000Z-b"):
        (reports / rid).mkdir(parents=True)
        (reports / rid / "http1.html").write_text("<html></html>")
        (reports / rid / "http1.md").write_text("# x")
    (reports / "20260301T000000Z-nometa").mkdir()
    (reports / "20260301T000000Z-nometa" / "http2.html").write_text("")
    assert index_main([str(reports)]) == 0
    page = (reports / "index.html").read_text()
    assert 'href="20260201T000000Z-b/http1.html"' in page and 'href="20260101T000000Z-a/http1.md"' in page
    assert page.index("20260201T000000Z-b") < page.index("20260101T000000Z-a")  # newest first
    assert "quick" in page and "2026-02-01 00:00:00Z" in page
    assert "20260301T000000Z-nometa/http2.html" in page


def test_repo_root_walks_up(tmp_path):
    assert repo_root(REPO / "notebooks") == REPO
    assert repo_root(REPO) == REPO


def test_notebook_shape():
    nb = nbformat.read(REPO / "suites" / "http1" / "report.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "httplab"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    params = code[0].source
    for name in ("run_dir = None", "out_dir = None", "confidence = 0.95",
                 'baseline = "go"', 'raw_root = "raw"', 'data_root = "data"'):
        assert name in params
    assert all(not c.outputs and c.execution_count is None for c in code), "commit without outputs"


@needs_kernel
def test_notebook_executes_on_fake_run(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    run = make_fake_run(tmp_path / "raw")
    monkeypatch.chdir(REPO / "suites" / "http1")
    out = tmp_path / "out.ipynb"
    from httplab.stats.write import build_data
    build_data(run, tmp_path / "data")   # the one build step; the notebook reads only data/
    papermill.execute_notebook(str(REPO / "suites" / "http1" / "report.ipynb"), str(out), kernel_name="httplab",
                               parameters={"run_dir": str(run), "out_dir": str(tmp_path / "data"),
                                           }, progress_bar=False)
    nb = json.loads(out.read_text())
    text = json.dumps(nb, ensure_ascii=False)
    assert "| Connections" in text and "Δ C vs Go" in text and "Peak throughput" in text
    assert (tmp_path / "data" / "runs.parquet").is_file()


def test_default_run_is_the_newest_complete_run_holding_the_suite(tmp_path):
    import json

    from httplab.tidy.runs_select import default_run_dir

    def run(run_id, start, suites):
        d = tmp_path / run_id
        d.mkdir()
        (d / "meta.json").write_text(json.dumps({"run_id": run_id, "start_utc": start, "complete": True,
                                                 "profile": "full", "suites": suites}))
        return d

    both = run("a", "2026-11-21T06:00:00Z", ["http1", "h2c"])
    langs = run("b", "2026-11-21T08:00:00Z", ["languages"])
    assert default_run_dir(tmp_path) == langs
    assert default_run_dir(tmp_path, "languages") == langs
    assert default_run_dir(tmp_path, "http1") == both
