"""The verbs the shell calls during a run need only Python's standard library.

An offline benchmark host (scripts/offline.sh) has a plain python3 and no numpy, pandas or pyarrow:
each run-time verb runs here in a subprocess whose imports of those raise, and the two compactors
(h2log, oha-hist) must still write byte for byte the JSON they wrote when they used numpy and pandas
(tests/fixtures/stdlib_runtime/: their outputs captured from the numpy/pandas versions).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from httplab.__main__ import RUNTIME_VERBS

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures"
STD = FIX / "stdlib_runtime"
BLOCKED = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib")

# A subprocess in which importing the analysis stack raises, then `python -m httplab VERB ARGS`.
RUNNER = f"""
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked on the benchmark host: " + name)
        return None
sys.meta_path.insert(0, Blocked())
sys.path.insert(0, {str(REPO)!r})
from httplab.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def run_verb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO)


def synthetic_log(n: int = 20000, seed: int = 7) -> bytes:
    """The synthetic h2load log whose compaction synthetic.h2log.json holds (every status kind)."""
    import random

    rnd = random.Random(seed)
    t = 1795239965622879
    out = []
    for _ in range(n):
        t += rnd.randrange(0, 40)
        status = rnd.choice((200, 200, 200, 200, 404, 0, -1, 503))
        out.append(b"%d\t%d\t%d\n" % (t, status, int(rnd.lognormvariate(7, 1))))
    return b"".join(out)


def test_the_blocker_blocks() -> None:
    res = subprocess.run([sys.executable, "-c", RUNNER.replace("from httplab", "import numpy\nfrom httplab")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "blocked on the benchmark host: numpy" in res.stderr


@pytest.mark.parametrize("verb", RUNTIME_VERBS)
def test_each_runtime_verb_imports_without_the_analysis_stack(verb: str) -> None:
    res = run_verb(verb, "--help")
    assert res.returncode == 0, res.stderr
    assert "usage" in (res.stdout + res.stderr).lower()


@pytest.mark.parametrize("name", ["log_ping", "log_404", "killed_server", "mixed", "synthetic"])
def test_h2log_gives_the_same_bytes_as_before(tmp_path: Path, name: str) -> None:
    if name == "synthetic":
        src = tmp_path / "synth.log.tsv"   # the name the captured document records as its source
        src.write_bytes(synthetic_log())
    else:
        src = FIX / "h2load" / f"{name}.log.tsv"
        src = src if src.exists() else STD / f"{name}.log.tsv"
    out = tmp_path / "out.json"
    res = run_verb("h2log", str(src), str(out))
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == (STD / f"{name}.h2log.json").read_bytes()


def test_h2log_still_names_the_bad_line(tmp_path: Path) -> None:
    src = tmp_path / "bad.log"
    src.write_bytes(synthetic_log(50) + b"1795239965622898\t200\t-5\n")
    res = run_verb("h2log", str(src), str(tmp_path / "out.json"))
    assert res.returncode == 2 and "line 51" in res.stderr and "negative duration" in res.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("skip", ["0", "1", "1.5"])
def test_oha_hist_gives_the_same_bytes_as_before(tmp_path: Path, skip: str) -> None:
    out = tmp_path / "out.json"
    res = run_verb("oha-hist", str(FIX / "oha" / "small_open.db"), str(out), "--skip", skip)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == (STD / f"small_open.skip{skip}.oha.hist.json").read_bytes()


def test_the_other_runtime_verbs_work(tmp_path: Path) -> None:
    state = run_verb("host-state")
    assert state.returncode == 0, state.stderr
    assert isinstance(json.loads(state.stdout), dict)
    order = run_verb("schedule", "--seed", "7", "--reps", "3", "--", "a", "b", "c")
    assert order.returncode == 0, order.stderr
    assert order.stdout.strip()
    for verb in (["suites"], ["manifest", "list"]):
        res = run_verb(*verb)
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip()
