"""A server's own warm-up (min_warmup_s in its manifest: the languages suite's Node and Python
servers, whose runtimes compile or specialise their code as they serve): a smaller --warmup is
raised to it for that server alone, a larger one kept, the other servers take the flag's; the
planned seconds count it (bench.sh's point count, LAB_COUNT_POINTS, which starts nothing); each
point's scenario.json records its own; and meta.json names the servers warmed longer under
server_params, which the reports read (httplab.tidy.rawrun.server_warmups, point_warmups)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from httplab.report.run_status import profile_label
from httplab.tidy.rawrun import point_warmups, server_warmups

# (alone, not beside the smoke run: its live sliced runs over TLS and Node load both cores)

ROOT = Path(__file__).resolve().parents[2]


def planned_seconds(suite: str, tmp: Path, warmup: int, servers: str, scenario: str) -> int:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), suite, "--run-dir", str(tmp / f"{suite}-{servers}-{warmup}"),
                          "--servers", servers, "--reps", "4", "--no-aa", "--duration", "1",
                          "--warmup", str(warmup), "--scenarios", scenario],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-1])


def test_a_server_that_compiles_as_it_serves_is_warmed_at_least_its_minimum(tmp_path: Path) -> None:
    def secs(servers: str, w: int) -> int:
        return planned_seconds("languages", tmp_path, w, servers, "get_root_c100")
    # Node's 4 points: at --warmup 0 they are warmed 1 s each as at --warmup 1; at 2 s, 1 s more each
    assert secs("lang_node_std", 0) == secs("lang_node_std", 1)
    assert secs("lang_node_std", 2) - secs("lang_node_std", 1) in (3, 4, 5)
    # Go's compile ahead of time: its 4 points take the flag's warm-up, so 1 s more each at 1 than at 0
    assert secs("lang_go_std", 1) - secs("lang_go_std", 0) in (3, 4, 5)
    # both: Node's points warmed, Go's not, at --warmup 0
    assert secs("lang_node_std,lang_go_std", 0) - secs("lang_go_std", 0) - secs("lang_node_std", 0) in range(-3, 1)


def test_a_suite_of_servers_without_a_minimum_takes_the_flag(tmp_path: Path) -> None:
    def secs(w: int) -> int:
        return planned_seconds("http1", tmp_path, w, "evloop", "get_ping_c100")
    assert secs(1) - secs(0) in (3, 4, 5)


def _note(run_dir: Path, lines: str) -> subprocess.CompletedProcess[str]:
    script = f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; note_server_warmups "{run_dir}" "{lines}"'
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True)


def test_meta_records_the_servers_warmed_longer(tmp_path: Path) -> None:
    meta = {"run_id": "x", "profile": "full", "params": {"duration_s": 1, "warmup_s": 0, "reps": 12, "aa": 1}}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    r = _note(tmp_path, "lang_node_std 1\nlang_python_std 1")
    assert r.returncode == 0, r.stderr
    # a second suite's note adds to the first's
    assert _note(tmp_path, "lang_node_fastify 2").returncode == 0
    got = json.loads((tmp_path / "meta.json").read_text())
    assert got["server_params"] == {"lang_node_std": {"warmup_s": 1}, "lang_python_std": {"warmup_s": 1},
                                    "lang_node_fastify": {"warmup_s": 2}}
    assert got["params"] == meta["params"]
    assert server_warmups(got) == {"lang_node_std": 1.0, "lang_python_std": 1.0, "lang_node_fastify": 2.0}
    runs = pd.DataFrame({"suite": ["languages"] * 3, "server": ["lang_node_std", "lang_go_std", "lang_node_fastify"]})
    assert list(point_warmups(runs, got)) == [1.0, 0.0, 2.0]
    assert profile_label(got) == "full (1 s runs (2 servers: + 1 s warm-up) (1 server: + 2 s warm-up), 12 reps, A/A)"
    assert server_warmups({}) == {}
    assert not list(tmp_path.glob("meta.json.*")), "no temporary file left"


def test_each_point_records_its_own_warmup(tmp_path: Path) -> None:
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data"),
           "REPORTS_ROOT": str(tmp_path / "reports"), "LAB_CANARY": "0"}
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--skip-build", "--new", "--no-reports",
                        "--suites", "languages", "--servers", "lang_node_std,lang_go_std", "--scenarios", "get_root_c100",
                        "--reps", "1", "--duration", "1", "--warmup", "0", "--no-aa", "--blocks", "sliced"],
                       env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "lang_node_std: 1 s" in r.stderr
    (run,) = (tmp_path / "raw").iterdir()
    meta = json.loads((run / "meta.json").read_text())
    assert meta["params"]["warmup_s"] == 0 and meta["server_params"] == {"lang_node_std": {"warmup_s": 1}}
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "httplab", "pack", "unpack", str(run)],
                   cwd=ROOT, check=True, capture_output=True)
    scen = {s: json.loads((run / "languages" / s / "get_root_c100" / "scenario.json").read_text())["warmup_s"]
            for s in ("lang_node_std", "lang_go_std")}
    assert scen == {"lang_node_std": 1, "lang_go_std": 0}
