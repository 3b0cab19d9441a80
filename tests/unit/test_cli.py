"""scripts/run_all.sh's command line: a flag without its value, a bad value and
--help are answered before setup or build start; the progress line counts the whole run and shows
points skipped by a failed verify gate as skipped."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_all(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "run_all.sh"), *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "RAW_ROOT": "/nonexistent/raw"})


@pytest.mark.parametrize("args, says", [
    (["--suites"], "--suites needs a value: a comma list of suites (http1 h2c https h3 languages latency versus backends scaling) or parts (http1 h2c https h3 languages latency_h1"),
    (["--reps"], "--reps needs a value"),
    (["--reps", "0"], "--reps takes a whole number ≥ 1 (got '0')"),
    (["--duration", "1.5"], "--duration takes a whole number ≥ 1 (got '1.5')"),
    (["--suites", "http9"], "unknown suite 'http9' (suites: http1 h2c https h3 languages latency versus backends scaling; parts: http1 h2c https h3 languages latency_h1 latency_h2c latency_https versus_h2c versus_tls backends scaling_h1 scaling_h2c scaling_tls)"),
    (["--servers", "nope"], "unknown server 'nope' (known: evloop"),
    (["--order-seed", "x"], "--order-seed takes a whole number ≥ 0 (got 'x')"),
    (["--new", "--run-id", "20261123T092401Z-vm"], "--new and --run-id exclude each other"),
    (["--bogus"], "unknown flag '--bogus'"),
])
def test_bad_flags_are_refused_before_any_work(args, says):
    r = run_all(*args)
    assert r.returncode != 0
    assert says in r.stderr, r.stderr
    assert "unbound variable" not in r.stderr


def test_help_is_the_usage_not_the_source():
    r = run_all("--help")
    assert r.returncode == 0
    assert "scripts/run_all.sh [--quick | --seed-conditions]" in r.stderr and "--reports-only" in r.stderr
    assert "set -euo pipefail" not in r.stderr and "source " not in r.stderr


def test_help_lists_every_suite_folder_with_its_title_and_parts():
    """--help lists the suites as suites/ holds them (not a list written into the script): one line
    a folder of suites/, with the title of its suite.toml and its parts, as httplab.lab.suites
    reads them."""
    from httplab.lab.suites import all_suites
    r = run_all("--help")
    assert r.returncode == 0
    lines = r.stderr.splitlines()
    at = lines.index("suites (a folder of suites/ each; --suites takes a suite or one of its parts):")
    listed = {ln.split()[0]: ln for ln in lines[at + 1:] if ln.startswith("  ")}
    folders = sorted(d.name for d in (ROOT / "suites").iterdir() if d.is_dir() and not d.name.startswith((".", "_")))
    assert sorted(listed) == folders, (sorted(listed), folders)
    for s in all_suites():
        line = listed[s.name]
        assert s.title in line, line
        for part in s.parts:
            assert part in line, (part, line)
        assert (f"(seed {s.seed})" in line) == bool(s.seed), line


def test_help_reads_the_suites_folder(tmp_path):
    """A suite folder added (here a copy of suites/ with one more, SUITES_DIR) is listed at once."""
    import shutil
    suites = tmp_path / "suites"
    shutil.copytree(ROOT / "suites", suites)
    toy = suites / "toy"
    toy.mkdir()
    (toy / "suite.toml").write_text('# a toy\ntitle = "A toy suite"  # its title\norder = 5\n\n[wording]\ntitle = "not this"\n')
    (toy / "toy_a.sh").write_text("")
    (toy / "toy_b.sh").write_text("")
    r = subprocess.run(["bash", str(ROOT / "scripts" / "run_all.sh"), "--help"], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "RAW_ROOT": "/nonexistent/raw", "SUITES_DIR": str(suites)})
    assert r.returncode == 0, r.stderr
    toy_line = [ln for ln in r.stderr.splitlines() if ln.split()[:1] == ["toy"]]
    assert toy_line == ["  toy        A toy suite; parts: toy_a, toy_b"], toy_line
    after = r.stderr.split("suites (a folder", 1)[1].splitlines()[1:]
    assert after[0].split()[0] == "toy"   # order 5: before http1 (10)


def test_progress_counts_the_run_and_the_skipped_points(tmp_path):
    state = tmp_path / "progress"
    state.write_text("10 0\n")
    script = f"""
        source "{ROOT}/scripts/lib.sh"
        date() {{ echo 1000000; }}   # a frozen clock: no second may tick between
        SUITE=h2c SUITE_T0=$(( $(date +%s) - 60 ))   # T0 and the ETA (it flaked)
        RUN_PROGRESS_FILE={state} RUN_TOTAL=40 RUN_T0=$(( $(date +%s) - 120 ))
        RUN_BASE_DONE=10 RUN_BASE_SKIPPED=0
        progress 5 3 20 "go r2 skipped (verify gate)"
    """
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    line = r.stderr.strip().splitlines()[-1]
    assert "[h2c 5/20, 3 skipped] go r2 skipped (verify gate) ETA 2m24s" in line, line
    assert "run 15/40, 3 skipped, 2m elapsed, ETA 2m56s" in line, line
    assert state.read_text().split() == ["15", "3"]
