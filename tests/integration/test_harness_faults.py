"""The harness under faults: scripts/run_all.sh on a tiny run (the floor responder,
two scenarios, two reps, 1 s runs, no reports) into a scratch raw/, with one fault injected at a
known moment: the server hangs (SIGSTOP) or is killed, wrk is killed or hangs past its deadline (and
h2load's latency run, on Go's h2c server), the raw directory turns read-only or fills up, Ctrl-C.
Each must stop with a message that names the server, the point and the log; leave every finished
raw file byte for byte as it was; leave no process of the run behind; and the same command, run
again, must resume and complete the run.

Every process the run starts carries a token in its environment (LAB_FAULT_TEST), so a survivor
is found by scanning /proc whatever it is (server, wrk, timeout, sleep, a shell)."""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from httplab.parse.h2load import parse_h2load_text

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Setup:
    """A tiny run: one suite, one server, a few scenarios and reps."""
    suite: str
    server: str
    binary: str             # build/bench/<binary>: the server's process
    scenarios: tuple[str, ...]
    reps: int

    def command(self) -> list[str]:
        """What every case runs, faulted and then again to resume: no --new, so a rerun resumes."""
        return [str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--quick", "--suites", self.suite,
                "--servers", self.server, "--scenarios", ",".join(self.scenarios), "--reps", str(self.reps),
                "--duration", "1", "--warmup", "0", "--no-aa", "--no-reports"]


FLOOR = Setup("http1", "floor", "floor", ("get_ping_c50", "get_ping_c100"), 2)
GO_H2C = Setup("h2c", "go", "go_h2c_bench", ("get_ping_c50", "get_ping_c100"), 1)
SCENARIOS = FLOOR.scenarios
RUN_TIMEOUT_S = 60       # a whole run_all here takes ~10 s; past this the case fails
# Fault-detection settings a test can afford (the defaults are 10 s each): a tool's deadline is its
# run's duration plus LAB_TOOL_MARGIN; a server must answer LAB_PROBE_TIMEOUT after each point.
# (5 s: wrk's histogram dump took 3 s once on this shared 2-core machine.)
FAST_ENV = {"LAB_TOOL_MARGIN": "5", "LAB_PROBE_TIMEOUT": "3"}

pytestmark = [pytest.mark.concurrent, pytest.mark.skipif(
    not all(shutil.which(t) for t in ("wrk", "h2load", "curl", "jq", "taskset", "timeout"))
    and not os.environ.get("LAB_REQUIRE_TOOLS"),
    reason="wrk, h2load, curl, jq, taskset and timeout are needed (LAB_REQUIRE_TOOLS=1 makes this a failure)")]


# ---------------------------------------------------------------- the lab in a scratch directory
def _free_port_base(span: int = 40) -> int:
    """A LAB_PORT_BASE whose ports are free now, away from the default 18080 a real run may hold."""
    for _ in range(50):
        base = random.randrange(20000, 30000)
        try:
            for port in range(base, base + span):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no free port range")


class Lab:
    def __init__(self, base: Path, setup: Setup = FLOOR):
        self.setup = setup
        self.base = base
        self.raw = base / "raw"
        self.raw.mkdir()
        self.token = uuid.uuid4().hex
        self.env = {**os.environ, **FAST_ENV, "RAW_ROOT": str(self.raw), "DATA_ROOT": str(base / "data"),
                    "REPORTS_ROOT": str(base / "reports"), "LAB_PORT_BASE": str(_free_port_base()),
                    "LAB_FAULT_TEST": self.token}
        self.mounts: list[Path] = []
        self.runs = 0

    # -- running
    def start(self) -> subprocess.Popen:
        self.runs += 1
        self.log = self.base / f"run{self.runs}.stderr.txt"
        # its own session: a Ctrl-C is SIGINT to this process group, as a terminal sends it
        return subprocess.Popen(self.setup.command(), env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=open(self.log, "w"),
                                start_new_session=True)

    def finish(self, proc: subprocess.Popen, timeout: float = RUN_TIMEOUT_S) -> tuple[int, str, float]:
        t0 = time.monotonic()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail(f"run_all.sh still running after {timeout} s:\n{self.log.read_text()[-3000:]}")
        return rc, self.log.read_text(), time.monotonic() - t0

    def run(self, timeout: float = RUN_TIMEOUT_S) -> tuple[int, str]:
        rc, err, _ = self.finish(self.start(), timeout)
        return rc, err

    # -- the run's files
    def run_dir(self) -> Path | None:
        metas = sorted(self.raw.glob("*/meta.json"))
        return metas[-1].parent if metas else None

    def point_dir(self, scenario: str) -> Path:
        run_dir = self.run_dir()
        assert run_dir is not None
        return run_dir / self.setup.suite / self.setup.server / scenario

    # -- processes
    def processes(self) -> list[tuple[int, str, str]]:
        """(pid, state, command line) of every live process of the run: those that carry this
        lab's token in their environment (everything the run started, unless it cleared its
        environment), and those whose command line or working directory is in the scratch
        directory."""
        mark = f"LAB_FAULT_TEST={self.token}".encode()
        scratch = str(self.base)
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink(f"/proc/{entry}/cwd")
                state = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if state != "Z" and (mark in env or scratch in cmd or cwd.startswith(scratch)):
                found.append((int(entry), state, cmd.strip()))
        return found

    def process(self, exe_name: str, env_has: str = "") -> int | None:
        """The pid of the run's process running exe_name (with env_has in its environment)."""
        for pid, _, _ in self.processes():
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
                env = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if Path(exe).name == exe_name and env_has.encode() in env:
                return pid
        return None

    def kill_all(self) -> None:
        for pid, _, _ in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    # -- mounts (root only)
    def mount(self, *args: str, target: Path) -> None:
        subprocess.run(["mount", *args, str(target)], check=True, capture_output=True, text=True)
        self.mounts.append(target)

    def unmount_all(self) -> None:
        for target in reversed(self.mounts):
            subprocess.run(["umount", "-l", str(target)], capture_output=True)
        self.mounts.clear()


def _built(binary: str) -> None:
    if not (ROOT / "build" / "bench" / binary).exists():
        if os.environ.get("LAB_REQUIRE_TOOLS"):
            pytest.fail(f"build/bench/{binary} is not built (scripts/build.sh)")
        pytest.skip(f"build/bench/{binary} is not built (scripts/build.sh)")


@pytest.fixture
def make_lab(tmp_path):
    """Lab(setup) in tmp_path; at teardown nothing of it may still run (what does is killed, and
    the mounts are undone, so that a failed case leaves nothing behind either)."""
    labs = []

    def make(setup: Setup = FLOOR) -> Lab:
        _built(setup.binary)
        labs.append(Lab(tmp_path, setup))
        return labs[-1]

    yield make
    for lab in labs:
        leftovers = lab.processes()
        lab.kill_all()
        lab.unmount_all()
        assert not leftovers, f"processes of the run survived it: {leftovers}"


@pytest.fixture
def lab(make_lab):
    return make_lab(FLOOR)


def wait_for(lab: Lab, what: str, cond: Callable[[], object], timeout: float = 30.0, every: float = 0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out waiting for {what}; the run said:\n{lab.log.read_text()[-3000:]}")


def second_point_started(lab: Lab) -> bool:
    """The second point of rep 1 (get_ping_c100) has begun its measured run: its tool's stdout
    part file exists. The first point is finished by then."""
    return lab.run_dir() is not None and (lab.point_dir(SCENARIOS[1]) / ".r1.stdout.txt").exists()


# ---------------------------------------------------------------- what must hold after a fault
HALF_WRITTEN = re.compile(r"^\.r\d+\.|\.tmp$")
POINT_FILE = re.compile(r"^r(\d+)\.")


def finished_files(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every finished raw file of the run, by path relative to it: all but meta.json
    (its end time is set each time run_all ends) and the files of points without run.json (an
    unfinished point, redone on resume). Packed suites are read from their archives."""
    from httplab.tidy.rawpack import ARCHIVE_SUFFIX, read_archive
    files: dict[str, bytes] = {}
    for path in run_dir.rglob("*"):
        rel = path.relative_to(run_dir).as_posix()
        if path.name.endswith(ARCHIVE_SUFFIX):
            for name, data in read_archive(path).files.items():
                files[f"{path.parent.relative_to(run_dir).as_posix()}/{name}"] = data
        elif path.is_file() and rel != "meta.json":
            files[rel] = path.read_bytes()
    out = {}
    for rel, data in files.items():
        name = rel.rsplit("/", 1)[-1]
        if HALF_WRITTEN.search(name) or name == ".rawpack-hist":
            continue
        m = POINT_FILE.match(name)
        if m and f"{rel.rsplit('/', 1)[0]}/r{m.group(1)}.run.json" not in files:
            continue
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def point_runs(lab: Lab) -> dict[tuple[str, int], dict]:
    """(scenario, rep) -> run.json of every finished point (packed or not)."""
    from httplab.tidy.rawpack import read_archive
    run_dir, suite, server = lab.run_dir(), lab.setup.suite, lab.setup.server
    found = {}
    for archive in run_dir.glob(f"{suite}/*.tar.xz"):
        for name, data in read_archive(archive).files.items():
            m = re.fullmatch(rf"{server}/([^/]+)/r(\d+)\.run\.json", name)
            if m:
                found[(m.group(1), int(m.group(2)))] = json.loads(data)
    for path in run_dir.glob(f"{suite}/{server}/*/r*.run.json"):
        found[(path.parent.name, int(path.name[1:].split(".")[0]))] = json.loads(path.read_text())
    return found


def check_stopped(lab: Lab, rc: int, err: str, says: list[str], before: dict[str, str],
                  kept: bool = True) -> dict[str, str]:
    """After a faulted run: it failed, said all of `says`, left no process, and kept every file
    that was finished before the fault (`before`) as it was; with `kept` (the raw directory could
    still take the suite's reason), its last line gives that reason again, which holds says[0].
    Returns the finished files now."""
    assert rc != 0, err[-3000:]
    for text in says:
        assert text in err, f"{text!r} not in the output:\n{err[-3000:]}"
    if kept and "suites that stopped early" in err:
        # the last line repeats why, for a reader who sees only a log's tail
        last = err.rsplit("suites that stopped early", 1)[1]
        assert f"\n  {lab.setup.suite}: " in last and says[0] in last, err[-3000:]
    assert "unbound variable" not in err and "command not found" not in err, err[-3000:]
    assert not lab.processes(), f"processes of the run survived it: {lab.processes()}"
    run_dir = lab.run_dir()
    assert run_dir is not None
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["complete"] is False
    after = finished_files(run_dir)
    changed = {k for k in before if after.get(k) != before[k]}
    assert not changed, f"finished raw files changed or vanished: {sorted(changed)}"
    return after


def check_resumes(lab: Lab, before: dict[str, str]) -> dict[tuple[str, int], dict]:
    """The same command again: it resumes the run, redoes what was unfinished and completes it;
    every file finished before stays byte for byte; nothing is left running."""
    run_dir = lab.run_dir()
    rc, err = lab.run()
    assert rc == 0, err[-3000:]
    assert f"resuming run {run_dir.name}" in err, err[-3000:]
    assert lab.run_dir() == run_dir, "a new run was started instead of resuming"
    assert not lab.processes(), f"processes of the run survived it: {lab.processes()}"
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["complete"] is True, err[-3000:]
    after = finished_files(run_dir)
    changed = {k for k in before if after.get(k) != before[k]}
    assert not changed, f"finished raw files changed or vanished on resume: {sorted(changed)}"
    runs = point_runs(lab)
    assert set(runs) == {(s, r) for s in lab.setup.scenarios for r in range(1, lab.setup.reps + 1)}, sorted(runs)
    return runs


def snapshot_finished(lab: Lab) -> dict[str, str]:
    run_dir = lab.run_dir()
    return finished_files(run_dir) if run_dir else {}


# ---------------------------------------------------------------- the cases
def test_server_that_hangs_mid_run(lab, monkeypatch):
    """SIGSTOP: the process exists (kill -0 succeeds) and the kernel still completes handshakes,
    but nothing answers. The harness must notice, stop the suite and kill the stopped server."""
    proc = lab.start()
    wait_for(lab, "the second point", lambda: second_point_started(lab))
    before = snapshot_finished(lab)
    pid = lab.process(lab.setup.binary)
    assert pid, lab.processes()
    os.kill(pid, signal.SIGSTOP)
    rc, err, _ = lab.finish(proc)
    stopped = check_stopped(lab, rc, err, ["floor stopped answering during get_ping_c100 (rep 1)",
                                           "state T (stopped)", "floor/server.r1.log"], before)
    run = json.loads((lab.point_dir(SCENARIOS[1]) / "r1.run.json").read_text())
    assert run["server_alive"] is False      # the point it hung in is a failed run, kept as such
    assert run["server_trouble"].startswith("stopped answering: no answer from http://127.0.0.1:")
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)] == run
    # and the tidy frame says so (it used to count the requests answered before the hang as an
    # ok run, at a tenth of the rate)
    from httplab.tidy.rawrun import load_run
    monkeypatch.setenv("HTTPLAB_RAW_CACHE", str(lab.base / "rawcache"))
    frame = load_run(lab.run_dir()).runs.set_index(["scenario", "rep"])
    assert frame.loc[(SCENARIOS[1], 1), "status"] == "failed"
    assert "server not alive after the run" in frame.loc[(SCENARIOS[1], 1), "fail_reason"]
    assert (frame.drop(index=(SCENARIOS[1], 1))["status"] == "ok").all()


def test_server_killed_mid_run(lab):
    proc = lab.start()
    wait_for(lab, "the second point", lambda: second_point_started(lab))
    before = snapshot_finished(lab)
    pid = lab.process(lab.setup.binary)
    assert pid, lab.processes()
    os.kill(pid, signal.SIGKILL)
    rc, err, _ = lab.finish(proc)
    stopped = check_stopped(lab, rc, err, ["floor died during get_ping_c100 (rep 1): killed by signal 9 (KILL)",
                                           "floor/server.r1.log"], before)
    run = json.loads((lab.point_dir(SCENARIOS[1]) / "r1.run.json").read_text())
    assert run["server_alive"] is False
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)] == run
    assert all(r["exit_code"] == 0 and r["server_alive"] for k, r in runs.items() if k != (SCENARIOS[1], 1))


def test_load_tool_killed_mid_run(lab):
    proc = lab.start()
    marker = f"{SCENARIOS[1]}/.r1.wrk.json"
    pid = wait_for(lab, "wrk's measured run of the second point", lambda: lab.process("wrk", marker))
    before = snapshot_finished(lab)
    os.kill(pid, signal.SIGKILL)
    rc, err, _ = lab.finish(proc)
    stopped = check_stopped(lab, rc, err, ["wrk was killed by signal 9 (KILL)", "floor get_ping_c100 (rep 1)",
                                           f"{SCENARIOS[1]}/.r1.stderr.txt", "floor/server.r1.log"], before)
    assert not (lab.point_dir(SCENARIOS[1]) / "r1.run.json").exists()   # not a finished point
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0                   # redone


def test_server_port_taken(lab):
    """The server cannot start (its port is held by another process): the suite stops before any
    point, and the run's last line says why, as the start said it."""
    port = int(subprocess.run(["bash", "-c", "source scripts/lib.sh; server_port floor"], cwd=ROOT, env=lab.env,
                              capture_output=True, text=True, check=True).stdout)
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen()
        rc, err = lab.run()
    check_stopped(lab, rc, err, [f"port {port} is already in use", "the start of floor (rep 1)"], {})
    assert not point_runs(lab)
    check_resumes(lab, {})


FAKE_WRK = """#!/bin/bash
# A wrk that hangs, ignoring SIGTERM, in the measured runs of a run numbered HANG_ON (WRK_JSON names
# a real file then; the warm-up's is /dev/null): the count is kept in a file beside it.
if [[ -n ${WRK_JSON:-} && $WRK_JSON != /dev/null ]]; then
    n=$(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 ))
    echo "$n" >"$0.count"
    if [[ " HANG_ON " == *" $n "* ]]; then
        trap '' TERM
        while :; do sleep 0.2; done
    fi
fi
exec REAL_WRK "$@"
"""


def fake_wrk(lab: Lab, hang_on: str) -> None:
    bin_dir = lab.base / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "wrk"
    fake.write_text(FAKE_WRK.replace("REAL_WRK", shutil.which("wrk")).replace("HANG_ON", hang_on))
    fake.chmod(0o755)
    lab.env["PATH"] = f"{bin_dir}:{lab.env['PATH']}"


def test_load_tool_that_hangs_once_is_run_again(lab):
    """A tool that hangs past its deadline while the server answers measured nothing: the point is
    measured again, once, and its run.json says why; the run completes."""
    fake_wrk(lab, "2")
    rc, err = lab.run()
    assert rc == 0, err[-3000:]
    assert "wrk ran past its deadline (1 s run + 5 s margin) and was stopped, and floor still answers: " \
           "measuring the point again (once)" in err
    runs = point_runs(lab)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0
    assert runs[(SCENARIOS[1], 1)]["retried_after"].startswith("wrk ran past its deadline")
    assert all("retried_after" not in r for k, r in runs.items() if k != (SCENARIOS[1], 1))


def test_load_tool_that_hangs_is_killed_at_its_deadline(lab):
    fake_wrk(lab, "2 3")            # the point and its one retry
    proc = lab.start()
    wait_for(lab, "the second point", lambda: second_point_started(lab))
    before = snapshot_finished(lab)
    t0 = time.monotonic()
    rc, err, _ = lab.finish(proc)
    waited = time.monotonic() - t0
    stopped = check_stopped(lab, rc, err, ["wrk ran past its deadline (1 s run + 5 s margin)",
                                           "floor get_ping_c100 (rep 1)", f"{SCENARIOS[1]}/.r1.stderr.txt",
                                           "floor/server.r1.log", "floor still answers"], before)
    assert "measuring the point again (once)" in err
    # deadline 6 s, TERM ignored, KILL 2 s later, twice; then the server is stopped
    assert waited < 35, waited
    assert not (lab.point_dir(SCENARIOS[1]) / "r1.run.json").exists()
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0


FAKE_H2LOAD = """#!/bin/bash
# An h2load that hangs in the first two latency runs of a run (the ones with --log-file: the point's
# and its one retry). (SIGTERM ends it: the wrk case has the tool that ignores it.)
for arg in "$@"; do
    if [[ $arg == --log-file=* ]]; then
        n=$(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 ))
        echo "$n" >"$0.count"
        if (( n <= 2 )); then while :; do sleep 0.2; done; fi
    fi
done
exec REAL_H2LOAD "$@"
"""


def test_h2load_latency_run_that_hangs_is_killed_at_its_deadline(make_lab):
    """h2load's second run of a point (the latency run, after the window) has its own deadline;
    the point is not recorded and is redone, throughput run included, on resume."""
    lab = make_lab(GO_H2C)
    bin_dir = lab.base / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "h2load"
    fake.write_text(FAKE_H2LOAD.replace("REAL_H2LOAD", shutil.which("h2load")))
    fake.chmod(0o755)
    lab.env["PATH"] = f"{bin_dir}:{lab.env['PATH']}"
    rc, err = lab.run()
    first = lab.setup.scenarios[0]
    stopped = check_stopped(lab, rc, err, ["h2load's latency run ran past its deadline (1 s run + 5 s margin)",
                                           f"go {first} (rep 1)", f"go/{first}/.r1.lat.stderr.txt",
                                           "go still answers", "go/server.r1.log"], {})
    assert (lab.point_dir(first) / ".r1.stdout.txt").stat().st_size > 0    # the throughput run's
    assert not (lab.point_dir(first) / "r1.run.json").exists()
    runs = check_resumes(lab, stopped)
    assert runs[(first, 1)]["exit_code"] == 0 and runs[(first, 1)]["lat_exit_code"] == 0


def test_h2load_latency_window_opens_after_warmup(make_lab):
    """h2load's latency run opens its window only after its own warm-up, which starts once every
    client has connected (and finished a TLS handshake), as the throughput run's window does: one
    still connecting when the window ended was never closed and hung Debian's h2load. The log holds
    the window's requests only."""
    lab = make_lab(GO_H2C)
    rc, err = lab.run()
    assert rc == 0, err
    suite_dir = lab.run_dir() / lab.setup.suite           # a finished server's points are packed
    with tarfile.open(suite_dir / f"{lab.setup.server}.tar.xz") as tar:
        tar.extractall(lab.base / "unpacked")
    for scenario in lab.setup.scenarios:
        point = lab.base / "unpacked" / lab.setup.server / scenario
        lat = (point / "r1.lat.stdout.txt").read_text()
        assert "with 0.5s of warm-up time" in lat and "Warm-up phase is over" in lat, lat
        parsed = parse_h2load_text(lat, point / "r1.lat.stdout.txt")
        assert parsed.warmup_s == 0.5 and parsed.measured_duration_s == 0.5
        log = json.loads((point / "r1.lat.h2log.json").read_text())
        assert log["requests"] == parsed.done > 0
        thr_text = (point / "r1.stdout.txt").read_text()
        thr = parse_h2load_text(thr_text)
        assert thr.warmup_s == 0 and thr.measured_duration_s == 1   # its warm-up is a separate run
        # both runs start their clock once every client has connected (--lab-connect-wait)
        for err in ("r1.stderr.txt", "r1.lat.stderr.txt"):
            assert "h2load: every client connected; thread #0 starts" in (point / err).read_text(), err
        run = json.loads((point / "r1.run.json").read_text())
        assert run["cmd"].startswith("h2load --lab-connect-wait=5s "), run["cmd"]
        # the server's CPU window starts with the clock (h2load's start snapshot), after the connects
        server = json.loads((point / "r1.server.json").read_text())
        assert server["window_start"] == "clock_start" and 0 < server["clock_start_s"] < 5, server
        assert server["wall_s"] < server["tool_wall_s"], server
        snap = (point / "r1.start.snapshot").read_text().splitlines()
        assert snap[0].startswith("uptime ") and any(l.startswith("self ") for l in snap)
        assert {l.split()[1] for l in snap if l.startswith("pid ")} == {str(p) for p in server["pids"]}
    meta = json.loads((lab.run_dir() / "meta.json").read_text())
    assert meta["params"]["latency_warmup_s"] == 0.5


def _fill(path: Path) -> None:
    """Writes zeros into path until the file system is full."""
    chunk = b"\0" * (1 << 16)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
    with open(path, "ab", buffering=0) as f:   # the last few bytes a 64 KiB write did not fit
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs (root only)")
def test_raw_directory_fills_up_mid_run(lab):
    lab.mount("-t", "tmpfs", "-o", "size=32m", "tmpfs", target=lab.raw)
    proc = lab.start()
    wait_for(lab, "the second point", lambda: second_point_started(lab))
    before = snapshot_finished(lab)
    filler = lab.raw / "filler"
    _fill(filler)                      # while wrk of the second point runs
    rc, err, _ = lab.finish(proc)
    stopped = check_stopped(lab, rc, err, ["during floor get_ping_c100 (rep 1)", "No space left on device",
                                           "KiB free", "floor/server.r1.log"], before, kept=False)
    assert not (lab.point_dir(SCENARIOS[1]) / "r1.run.json").exists()
    # Rerun while still full: refused before any server starts, saying how much room there is.
    rc, err = lab.run()
    check_stopped(lab, rc, err, [f"{lab.raw}", "KiB free", "nothing was started"], stopped)
    assert "suite http1: " not in err, err[-2000:]
    filler.unlink()
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="makes read-only bind mounts (root only)")
def test_raw_directory_turns_read_only(lab):
    """The second point's folder is made read-only (a bind mount: root writes through any file
    mode) while the first point runs; then, the run stopped, the whole raw/ is read-only."""
    proc = lab.start()
    run_dir = wait_for(lab, "the run", lab.run_dir)
    wait_for(lab, "the first point", lambda: (run_dir / "http1/floor" / SCENARIOS[0] / ".r1.stdout.txt").exists())
    target = run_dir / "http1/floor" / SCENARIOS[1]
    target.mkdir(parents=True, exist_ok=True)
    lab.mount("--bind", str(target), target=target)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
    before = snapshot_finished(lab)
    rc, err, _ = lab.finish(proc)
    stopped = check_stopped(lab, rc, err, ["floor get_ping_c100 (rep 1)", f"{target} is read-only",
                                           "floor/server.r1.log"], before, kept=False)
    assert (run_dir / "http1/floor" / SCENARIOS[0] / "r1.run.json").exists()   # the first point finished
    lab.unmount_all()
    lab.mount("--bind", str(lab.raw), target=lab.raw)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(lab.raw)], check=True)
    rc, err = lab.run()
    check_stopped(lab, rc, err, [f"{lab.raw}", "read-only", "nothing was started"], stopped)
    assert "suite http1: " not in err, err[-2000:]
    lab.unmount_all()
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0


@pytest.mark.parametrize("sig, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c", "sigterm-to-run_all"])
def test_interrupted_mid_suite(lab, sig, to_group):
    """Ctrl-C: SIGINT to the whole foreground process group, as a terminal sends it. SIGTERM to
    run_all.sh alone (a supervisor's kill): it must not wait for the suite to end."""
    proc = lab.start()
    wait_for(lab, "the second point", lambda: second_point_started(lab))
    time.sleep(0.3)                     # inside wrk's measured second
    before = snapshot_finished(lab)
    if to_group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    rc, err, took = lab.finish(proc)
    assert took < 10, f"{took:.1f} s from the signal to exit"
    name = signal.Signals(sig).name
    stopped = check_stopped(lab, rc, err, ["suite http1 interrupted during floor get_ping_c100 (rep 1)",
                                           f"interrupted ({name}): no further suite, no packing, no reports",
                                           "rerun the same command to resume"], before)
    assert rc in (128 + sig, -sig), rc
    assert "nothing to pack" not in err and "suites that stopped early" not in err, err[-2000:]
    assert "[http1 2/4]" not in err, err[-2000:]    # the suite did not go on
    assert not (lab.point_dir(SCENARIOS[1]) / "r1.run.json").exists()
    runs = check_resumes(lab, stopped)
    assert runs[(SCENARIOS[1], 1)]["exit_code"] == 0
