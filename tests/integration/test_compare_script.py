"""scripts/compare.sh end to end on the committed runs (--skip-setup; reports into a scratch
folder, the committed data/ frames only read): the report in HTML and Markdown, the frame beside
it, the stdout table, the index link; the refusal of runs with other tool versions and --force.
About 35 s: two papermill runs and their exports."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
A, B = "20261121T061254Z-vm", "20261121T083658Z-vm"      # same machine, CPU sets and tools
OTHER_TOOLS = "20261123T092401Z-vm"                       # OpenSSL 3.0.19 (and curl) instead of 3.0.22

pytestmark = [pytest.mark.concurrent, pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "papermill").exists(), reason="no lab venv")]


def compare(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REPORTS_ROOT": str(tmp_path / "reports"), "RAW_ROOT": str(ROOT / "raw"),
           "DATA_ROOT": str(ROOT / "data")}
    return subprocess.run([str(ROOT / "scripts" / "compare.sh"), *args, "--skip-setup"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_compare_writes_the_report_and_the_index_links_it(tmp_path):
    p = compare(tmp_path, A, B)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "reports" / "compare" / f"{A}__vs__{B}"
    for name in ("compare.html", "compare.md", "comparisons.csv", "comparisons.parquet", "compare.json"):
        assert (out / name).is_file(), name
    md = (out / "compare.md").read_text()
    assert f"# Run against run: `{B}` (B) against `{A}` (A)" in md
    assert "Same machine, CPU sets and tool versions" in md and "**Suite http1: B against A" in md
    assert "assumed ±5%" in md                                   # no A/A copy in these runs: stated
    figures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", md)
    assert len(figures) == 2 and all((out / f).is_file() for f in figures)
    html = (out / "compare.html").read_text()
    assert set(re.findall(r'<img\b[^>]*?\bsrc="([^"]+)"', html)) == set(figures)
    frame = pd.read_csv(out / "comparisons.csv")
    assert len(frame) == 240 and set(frame["metric"]) == {"req_per_s", "cpu_us_per_req", "lat_p99_us"}
    lines = p.stdout.splitlines()
    assert lines[0].startswith(f"B {B} against A {A}: 240 comparisons") and lines[2].startswith("verdict")
    assert len(lines) == 3 + 240
    index = (tmp_path / "reports" / "index.html").read_text()
    assert f'href="compare/{A}__vs__{B}/compare.html"' in index and f'href="compare/{A}__vs__{B}/compare.md"' in index


def test_other_tool_versions_are_refused_and_force_lists_them(tmp_path):
    p = compare(tmp_path, B, OTHER_TOOLS)
    assert p.returncode == 1 and "tools.openssl" in p.stderr and "--force" in p.stderr
    assert not (tmp_path / "reports" / "compare").exists()
    out = tmp_path / "forced"
    p = compare(tmp_path, B, OTHER_TOOLS, "--force", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "WARNING: compared with --force" in p.stdout and "tools.openssl" in p.stdout
    md = (out / "compare.md").read_text()
    assert "Compared with --force" in md and "| **tools.openssl** |" in md
    assert "A/A of run B" in md                                   # B ran the A/A copies: measured floors
