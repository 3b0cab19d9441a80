"""Adding a server is one folder with a lab.toml (README "Add your server"): a throwaway Python
server (tests/fixtures/add_server/tiny) is copied into a temporary copy of servers/, and the lab,
pointed at that copy with LAB_SERVERS_DIR, lists it, passes it through the verify gate, measures
it in a quick profile of the HTTP/1.1 suite beside the C server and Go, and shows it under its
display name and colour in the tidy data and the exported report. Nothing in scripts/ or httplab/
is edited for it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "add_server" / "tiny"
DISPLAY = "Tiny Python server (test)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("add-server")
    servers = base / "servers"
    shutil.copytree(ROOT / "servers", servers,
                    ignore=shutil.ignore_patterns("target", "node_modules", "__pycache__"))
    shutil.copytree(TINY, servers / "tiny")
    env = {**os.environ, "LAB_SERVERS_DIR": str(servers), "RAW_ROOT": str(base / "raw"),
           "DATA_ROOT": str(base / "data"), "REPORTS_ROOT": str(base / "reports")}
    for tool in ("wrk", "curl", "jq"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/setup.sh)")
    if not (ROOT / "build" / "bench" / "http_bench_server").exists():
        pytest.skip("the servers are not built (scripts/build.sh)")
    run = subprocess.run(
        [str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--new", "--quick", "--suites", "http1",
         "--servers", "evloop,go,tiny", "--scenarios", "get_ping_c100,get_echo_s1024_c100",
         "--reps", "2", "--duration", "1", "--warmup", "0", "--no-aa"],
        env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    (run_dir,) = [p for p in (base / "raw").iterdir() if p.is_dir()]
    return {"base": base, "servers": servers, "run": run_dir, "env": env,  # type: ignore[dict-item]
            "data": base / "data" / run_dir.name, "reports": base / "reports" / run_dir.name}


def test_serve_list_shows_it(lab):
    out = subprocess.run([str(ROOT / "scripts" / "serve.sh"), "--list"], env=lab["env"],
                         capture_output=True, text=True, check=True).stdout
    assert any(line.split()[:4] == ["tiny", "contestant", "h1", "h1:ping"] for line in out.splitlines())


def test_it_passed_the_verify_gate_and_was_measured(lab):
    # a complete suite is packed, one .tar.xz per server
    with tarfile.open(lab["run"] / "http1" / "tiny.tar.xz") as tar:
        names = tar.getnames()
        for rep in (1, 2):
            gate = tar.extractfile(f"tiny/verify.r{rep}.txt").read().decode()  # type: ignore[union-attr]
            assert "PASS GET /ping" in gate and "FAIL" not in gate
    assert "tiny/get_ping_c100/r2.run.json" in names
    # it serves /ping only: the echo scenario is not asked of it
    assert not any("get_echo" in n for n in names)
    meta = json.loads((lab["run"] / "meta.json").read_text())
    assert meta["servers"]["tiny"].startswith("Python 3")


def test_it_is_in_the_tidy_data(lab):
    runs = pd.read_parquet(lab["data"] / "runs.parquet")
    tiny = runs[runs["server"] == "tiny"]
    assert set(tiny["scenario"]) == {"get_ping_c100"}
    assert len(tiny) == 2 and (tiny["status"] == "ok").all()
    assert (tiny["req_per_s"] > 0).all()


def test_it_is_in_the_report_under_its_display_name(lab):
    md = next(lab["reports"].glob("http1*.md")).read_text()
    assert DISPLAY in md
    html = next(lab["reports"].glob("http1*.html")).read_text()
    assert DISPLAY in html


def test_the_package_gives_it_its_manifest_colour(lab):
    code = ("from httplab.lab import servers as s; "
            "print(s.display_name('tiny'), s.colour('tiny'), s.tier('tiny'), sep='|')")
    out = subprocess.run([sys.executable, "-c", code], env=lab["env"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{DISPLAY}|#8c564b|contestant"
