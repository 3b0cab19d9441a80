"""scripts/bisect.sh end to end: a clone of this repository with a planted regression (a small
loop in the C server's /ping handler) between two harmless commits; bisecting the range with the
cost oracle (instructions per request, HTTP/1.1, N = 200 and 1,000) names the planted commit. Three
builds and three counted runs: about 35 s."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=lab@example.invalid", "-c", "user.name=lab test"]


def _commit(repo: Path, message: str, allow_empty: bool = False) -> str:
    subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "-a", "-m", message,
                    *(["--allow-empty"] if allow_empty else [])], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_bisect_names_the_commit_that_made_the_c_server_cost_more(tmp_path: Path) -> None:
    for tool in ("valgrind", "h2load", "jq", "xz", "make"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is missing (scripts/setup.sh)")
    if not (ROOT / ".venv").is_dir():
        pytest.skip("no .venv in this checkout (scripts/setup.sh)")
    repo = tmp_path / "lab"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    # the clone runs this checkout's working tree of the scripts and package (what is under test)
    for rel in ("scripts", "httplab"):
        shutil.rmtree(repo / rel)
        shutil.copytree(ROOT / rel, repo / rel, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([*GIT, "-C", str(repo), "add", "-A", "scripts", "httplab"], check=True)
    good = _commit(repo, "the scripts under test", allow_empty=True)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    app = repo / "servers" / "evloop" / "app" / "app.c"
    text = app.read_text()
    assert text.count('    route_text(res, 200, "pong");') == 1
    app.write_text(text.replace('    route_text(res, 200, "pong");',
                                '    volatile unsigned spin = 0;\n    for (int i = 0; i < 40; i++) spin += (unsigned)i;\n'
                                '    route_text(res, 200, "pong");'))
    planted = _commit(repo, "planted: a loop in /ping")
    bad = _commit(repo, "harmless", allow_empty=True)
    # the worker's LAB_COST_PORT_BASE (conftest.py): below the ephemeral range, where no client
    # connection of a neighbouring test can hold the server's port
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    r = subprocess.run([str(repo / "scripts" / "bisect.sh"), good, bad, "--protocols", "h1", "--n1", "200",
                        "--n2", "1000"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == planted, (r.stdout, r.stderr[-2000:])
    assert "first bad commit: " in r.stderr and "planted: a loop in /ping" in r.stderr
    # the scratch folder and the worktree are gone
    assert not list(tmp_path.glob("httplab-bisect.*"))
    assert "httplab-bisect" not in subprocess.run(["git", "-C", str(repo), "worktree", "list"],
                                                   capture_output=True, text=True).stdout


def test_bisect_refuses_a_range_without_a_regression(tmp_path: Path) -> None:
    r = subprocess.run([str(ROOT / "scripts" / "bisect.sh"), "HEAD", "HEAD"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "the same commit" in r.stderr
    r = subprocess.run([str(ROOT / "scripts" / "bisect.sh"), "nope", "HEAD"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "GOOD: 'nope' is no commit here" in r.stderr
