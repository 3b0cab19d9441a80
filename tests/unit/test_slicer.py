"""The slicer (httplab.lab.slicer): tools run one at a time, each for its share, and end as told.

The tools here are a small Python program that notes the monotonic clock (one clock for every
process) each millisecond while it runs and prints the notes when it ends: on SIGINT to its main
thread (end "sigint") or after its own wall-clock window (end "deadline"). Two tools whose notes
interleave finely ran at once; tools that ran in turn switch only at the slices' edges.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from httplab.lab import slicer

FAKE_TOOL = r'''
import json, signal, sys, time
window = float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else None
notes, stop = [], False
def on_int(*_):
    global stop
    stop = True
signal.signal(signal.SIGINT, on_int)
# a tool that waits for its connections (argv[2]: seconds of its own running, then a line on stderr)
if len(sys.argv) > 2:
    busy = time.monotonic()
    while time.monotonic() - busy < float(sys.argv[2]):
        time.sleep(0.001)
    print(f"fake: every connection connected; the clock starts at {time.time():.6f}", file=sys.stderr, flush=True)
t0 = time.monotonic()
while not stop and (window is None or time.monotonic() - t0 < window):
    notes.append(time.monotonic())
    time.sleep(0.001)
print(json.dumps(notes))
'''


def spec(tmp_path: Path, tools: list[dict], slice_s: float = 0.05, active_s: float = 0.3) -> Path:
    prog = tmp_path / "fake_tool.py"
    prog.write_text(FAKE_TOOL)
    for t in tools:
        t.setdefault("argv", [sys.executable, str(prog), *t.pop("args", [])])
        t.setdefault("stdout", str(tmp_path / f"{t['name']}.out"))
        t.setdefault("stderr", str(tmp_path / f"{t['name']}.err"))
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"slice_s": slice_s, "active_s": active_s, "grace_s": 5, "tools": tools}))
    return path


def notes(tmp_path: Path, name: str) -> list[float]:
    return json.loads((tmp_path / f"{name}.out").read_text())


def switches(tmp_path: Path, names: list[str]) -> int:
    """How often the running tool changes along the merged notes of all tools."""
    merged = sorted((t, n) for n in names for t in notes(tmp_path, n))
    return sum(1 for (_, a), (_, b) in zip(merged, merged[1:]) if a != b)


def test_tools_run_in_turn_each_for_its_share(tmp_path: Path) -> None:
    path = spec(tmp_path, [{"name": "a", "end": "sigint"}, {"name": "b", "end": "sigint"}])
    record = slicer.run(*slicer.read_spec(path))
    assert record["order"] == ["a", "b"] and record["cycles"] == 6
    for name in ("a", "b"):
        t = record["tools"][name]
        assert t["slices"] == 6 and t["exit"] == 0 and t["fault"] is None
        assert 0.28 < t["ran_s"] - t["tail_s"] < 0.36
        assert t["tail_s"] < 0.2
        # it ran for about its share: notes every ~1 ms over ~0.3 s (a loaded machine notes fewer:
        # 58 in the test command's idle class beside the integration tests)
        assert 20 < len(notes(tmp_path, name)) < 400
    # six slices each, in turn: at most 11 changes of the running tool (plus the two tails)
    assert switches(tmp_path, ["a", "b"]) <= 13


@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="GNU time is not installed")
def test_sigint_reaches_a_tool_under_a_wrapper_that_ignores_it(tmp_path: Path) -> None:
    """The harness runs a tool under GNU time (its CPU time), which forks it and ignores SIGINT."""
    prog = tmp_path / "fake_tool.py"
    path = spec(tmp_path, [{"name": "a", "end": "sigint",
                            "argv": ["/usr/bin/time", "-o", str(tmp_path / "a.time"), sys.executable, str(prog)]}],
                active_s=0.1)
    record = slicer.run(*slicer.read_spec(path))
    t = record["tools"]["a"]
    # (SIGINT reached it: else it ran on to the grace's end, 5 s, and was killed with a fault; a tail
    # of a second or more is a starved machine, as the test command's idle class can be)
    assert t["exit"] == 0 and t["fault"] is None and t["tail_s"] < 4
    assert notes(tmp_path, "a") and "elapsed" in (tmp_path / "a.time").read_text()


def test_without_slicing_the_same_tools_overlap(tmp_path: Path) -> None:
    """The check above can fail: two fake tools left running together interleave their notes."""
    import subprocess
    prog = tmp_path / "fake_tool.py"
    prog.write_text(FAKE_TOOL)
    procs = [subprocess.Popen([sys.executable, str(prog), "0.3"], stdout=open(tmp_path / f"{n}.out", "w"))
             for n in ("a", "b")]
    for p in procs:
        p.wait()
    assert switches(tmp_path, ["a", "b"]) > 30


def test_deadline_tools_end_on_their_own_clock(tmp_path: Path) -> None:
    # two tools, 3 cycles of 0.05 s: a tool's last slice ends 0.25 s after its first began
    path = spec(tmp_path, [{"name": "a", "end": "deadline", "window_s": 0.4, "args": ["0.4"]},
                           {"name": "b", "end": "deadline", "window_s": 0.4, "args": ["0.4"]}], active_s=0.15)
    record = slicer.run(*slicer.read_spec(path))
    for name in ("a", "b"):
        t = record["tools"][name]
        assert t["slices"] == 3 and t["exit"] == 0 and t["fault"] is None
        assert 0.14 < t["ran_s"] - t["tail_s"] < 0.2
    assert switches(tmp_path, ["a", "b"]) <= 7


def test_a_tool_that_dies_is_a_fault_and_the_others_go_on(tmp_path: Path) -> None:
    path = spec(tmp_path, [{"name": "dies", "argv": ["sh", "-c", "exit 3"], "end": "sigint"},
                           {"name": "b", "end": "sigint"}])
    record = slicer.run(*slicer.read_spec(path))
    assert record["tools"]["dies"]["exit"] == 3
    assert "exited with 3" in record["tools"]["dies"]["fault"]
    assert record["tools"]["b"]["fault"] is None and record["tools"]["b"]["slices"] == 6


def test_a_tool_that_will_not_end_is_killed(tmp_path: Path) -> None:
    path = spec(tmp_path, [{"name": "stubborn", "argv": ["sh", "-c", "trap '' INT; sleep 30"], "end": "sigint"}],
                active_s=0.1)
    raw = json.loads(path.read_text())
    raw["grace_s"] = 0.3
    path.write_text(json.dumps(raw))
    record = slicer.run(*slicer.read_spec(path))
    assert "killed" in record["tools"]["stubborn"]["fault"]


@pytest.mark.parametrize("change, message", [
    ({"end": "later"}, "is not one of"),
    ({"end": "deadline", "window_s": 0.2}, "must exceed"),
    ({"argv": []}, "empty argv"),
])
def test_a_bad_spec_is_named(tmp_path: Path, change: dict, message: str) -> None:
    path = spec(tmp_path, [{"name": "a", "end": "sigint", **change}, {"name": "b", "end": "sigint"}])
    with pytest.raises(slicer.SpecError, match=message):
        slicer.read_spec(path)


def test_names_must_differ_and_slices_fit(tmp_path: Path) -> None:
    with pytest.raises(slicer.SpecError, match="names of their own"):
        slicer.read_spec(spec(tmp_path, [{"name": "a", "end": "sigint"}, {"name": "a", "end": "sigint"}]))
    with pytest.raises(slicer.SpecError, match="at most active_s"):
        slicer.read_spec(spec(tmp_path, [{"name": "a", "end": "sigint"}], slice_s=0.5, active_s=0.3))


def test_the_command_line_writes_the_record(tmp_path: Path) -> None:
    path = spec(tmp_path, [{"name": "a", "end": "sigint"}], active_s=0.1)
    assert slicer.main([str(path), "--record", str(tmp_path / "slices.json")]) == 0
    record = json.loads((tmp_path / "slices.json").read_text())
    assert record["tool_version"] == slicer.TOOL_VERSION and record["tools"]["a"]["slices"] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert slicer.main([str(bad), "--record", str(tmp_path / "x.json")]) == 2


SPIN = "import time\nwhile True: pass\n"


def test_cpu_ns_reads_a_busy_process_growing_and_an_idle_one_not() -> None:
    import subprocess
    busy = subprocess.Popen([sys.executable, "-c", SPIN])
    idle = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.1)
        b0, i0 = slicer.cpu_ns([busy.pid]), slicer.cpu_ns([idle.pid])
        time.sleep(0.3)
        assert slicer.cpu_ns([busy.pid]) > b0 and slicer.cpu_ns([idle.pid]) - i0 < 5_000_000
    finally:
        busy.kill(), idle.kill()
    busy.wait(), idle.wait()
    assert slicer.cpu_ns([busy.pid, idle.pid]) == 0   # processes gone count 0


def busy_server(monkeypatch, busy_pid: int) -> None:
    """The drain's reading of CPU time, with busy_pid's always growing as fast as the clock (a
    server at 100 %) and every other pid's still: the drain logic is tested on its own, whatever
    CPU the machine leaves a real spinning process (the unit tests run in the idle class, beside
    the integration tests, where a spinner may get none)."""
    idle_ns: dict[int, int] = {}

    def fake(pids: list[int]) -> int:
        return sum(time.monotonic_ns() if p == busy_pid else idle_ns.setdefault(p, 1) for p in pids)
    monkeypatch.setattr(slicer, "cpu_ns", fake)


def test_the_next_tool_waits_for_the_servers_drain(tmp_path: Path, monkeypatch) -> None:
    # a server still working after its tool's slice (a backlog of requests) holds the next slice
    # back until it is idle, or DRAIN_MAX_S: that wait is its tool's time, but for the quiet polls
    # that tell it is done (an idle server's drain is all quiet polls: none of it counts)
    import subprocess
    monkeypatch.setattr(slicer, "DRAIN_MAX_S", 0.03)
    busy = subprocess.Popen(["sleep", "30"])
    idle = subprocess.Popen(["sleep", "30"])
    busy_server(monkeypatch, busy.pid)
    try:
        path = spec(tmp_path, [{"name": "a", "end": "sigint", "server_pids": [busy.pid]},
                               {"name": "b", "end": "sigint", "server_pids": [idle.pid]},
                               {"name": "c", "end": "sigint"}])
        record = slicer.run(*slicer.read_spec(path))
    finally:
        busy.kill(), idle.kill()
    a, b, c = (record["tools"][n] for n in "abc")
    assert a["slices"] == b["slices"] == c["slices"] == 6
    assert a["drains_capped"] == 6 and 6 * 0.03 <= a["drain_s"] <= a["drain_wait_s"] < 6 * 0.03 + 0.1
    assert b["drains_capped"] == 0 and 6 * 0.004 <= b["drain_wait_s"] < 0.15 and b["drain_s"] == 0
    assert c["drain_s"] == c["drain_wait_s"] == 0 and c["drains_capped"] == 0
    # the drains are in each tool's seconds: slices, drains and tail
    for t in (a, b, c):
        assert t["ran_s"] == pytest.approx(6 * 0.05 + t["drain_s"] + t["tail_s"], abs=0.03)


def test_a_deadline_tool_whose_window_runs_out_in_the_drains_ends_with_its_slices(
        tmp_path: Path, monkeypatch) -> None:
    import subprocess
    monkeypatch.setattr(slicer, "DRAIN_MAX_S", 0.1)
    busy = subprocess.Popen(["sleep", "30"])
    busy_server(monkeypatch, busy.pid)
    try:
        # b's window is enough without drains (its last slice ends 0.55 s after its first) but
        # a's 0.1 s drain after each slice pushes b past it
        path = spec(tmp_path, [{"name": "a", "end": "sigint", "server_pids": [busy.pid]},
                               {"name": "b", "end": "deadline", "args": ["0.7"], "window_s": 0.7}])
        record = slicer.run(*slicer.read_spec(path))
    finally:
        busy.kill()
    b = record["tools"]["b"]
    assert b["fault"] is None and b["exit"] == 0 and 2 <= b["slices"] < 6
    assert record["tools"]["a"]["slices"] == 6


def test_the_shell_knows_the_longest_drain():
    # wrk's timeout in a sliced block (scripts/lib/measure.sh wrk_slice_cmd) counts every server's
    # drain at the slicer's cap: the shell's copy of DRAIN_MAX_S must be the slicer's
    shell = (Path(__file__).resolve().parents[2] / "scripts" / "lib" / "sliced.sh").read_text()
    line = next(x for x in shell.splitlines() if x.startswith("SLICE_DRAIN_MAX_S="))
    assert float(line.split("=", 1)[1]) == slicer.DRAIN_MAX_S


def test_a_ready_tool_counts_its_time_from_its_clock(tmp_path: Path) -> None:
    """A tool that waits for its connections says when its clock starts; the slicer lets its first
    slice run until then, and counts only what follows (connect_s records the rest)."""
    ready = {"pattern": "the clock starts", "count": 1}
    path = spec(tmp_path, [{"name": "a", "end": "sigint", "args": ["-", "0.2"], "ready": ready},
                           {"name": "b", "end": "sigint"}])
    record = slicer.run(*slicer.read_spec(path))
    a, b = record["tools"]["a"], record["tools"]["b"]
    assert record["tool_version"] == 4
    assert a["fault"] is None and a["slices"] == 6 and 0.19 < a["connect_s"]
    # counted from its first continue to its line (not from its launch, nor with b's slices): the
    # line's own time, less the interpreter's start, which a loaded machine stretches
    said = float((tmp_path / "a.err").read_text().split("the clock starts at ")[1].split()[0])
    assert abs(a["connect_s"] - (said - a["first_utc"])) < slicer.READY_POLL_S + 0.05
    # its six slices, as b's, without the 0.2 s before its clock
    assert 0.28 < a["ran_s"] - a["tail_s"] < 0.36 and b["connect_s"] is None
    # the CPU spent in the connects (the fake tool's, and no server's here), for the build step to
    # leave out with the time
    assert 0 <= a["connect_tool_cpu_s"] < 0.2 and a["connect_server_cpu_s"] == 0
    assert b["connect_tool_cpu_s"] is None


def test_a_ready_tool_that_never_says_so_is_a_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slicer, "READY_WAIT_S", 0.3)
    path = spec(tmp_path, [{"name": "mute", "end": "sigint", "ready": {"pattern": "never", "count": 1}}],
                active_s=0.1)
    record = slicer.run(*slicer.read_spec(path))
    assert "did not say its clock started within 0.3 s" in record["tools"]["mute"]["fault"]


@pytest.mark.parametrize("ready, why", [
    ({"pattern": "(", "count": 1}, "ready pattern"),
    ({"pattern": "x", "count": 0}, "count of at least 1"),
])
def test_a_bad_ready_is_refused(tmp_path: Path, ready: dict, why: str) -> None:
    path = spec(tmp_path, [{"name": "a", "end": "sigint", "ready": ready}])
    with pytest.raises(slicer.SpecError, match=why):
        slicer.read_spec(path)
