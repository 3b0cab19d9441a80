"""Interleaved slices: several load tools, each against its own server, given the client CPUs in
turn so that every server is measured inside the same seconds (docs/method.md, "Interleaved
slices": a pair's spread falls 2.7-fold against contiguous runs of the same length).

    python -m httplab slice SPEC.json --record SLICES.json

SPEC.json (written by the harness):

    {"slice_s": 0.25, "active_s": 1.0, "grace_s": 10,
     "tools": [{"name": "SERVER", "argv": ["wrk", ...], "stdout": "PATH", "stderr": "PATH",
                "end": "sigint", "ready": {"pattern": "the clock starts", "count": 1}}, ...]}

A tool with "ready" waits for its connections before its clock starts (the lab's builds of wrk and
h2load: --lab-connect-wait) and says so on stderr, "count" lines matching the regex "pattern" (one
per h2load thread). Its first slice runs until they are all there, then slice_s more; only that
part is its time (its connects and TLS handshakes are not: it counts no request before its clock
starts, and the handshakes would be a fifth of a 1 s budget over TLS at 100 connections), and the
part before is recorded as connect_s. Requests sent before the clock and answered after it are the
tool's own matter: wrk counts them (at most its connections times their depth, a millisecond or
two of the server's time), h2load does not (the same number, up to 1 % of a second of slices at
these rates), as in its contiguous runs.

Every tool starts stopped: a shell in a session of its own stops itself (SIGSTOP) before it execs
the tool, so no tool has sent a byte before its first slice. Then, in the order given, each tool's
process group is continued (SIGCONT) for slice_s seconds and stopped again, cycle after cycle, until
each has had active_s seconds. A tool's time is what it was let run, measured from each SIGCONT to
its SIGSTOP, plus its server's drains (below) and its tail: how a tool ends is `end`:

- "sigint": SIGINT to the main thread of every process in the tool's group (tgkill), then SIGCONT,
  then the time until it exits. wrk ends its run when the sleep of its main thread is interrupted; a
  process-directed SIGINT may be taken by a worker thread instead, which stops loading while main
  sleeps on to the end of -d. Every process of the group, because the tool may run under a wrapper
  that forks it (GNU time, which reads its CPU time, and ignores SIGINT itself).
- "deadline": the tool ends on its own clock, window_s seconds after its first slice (oha's -z,
  Debian's h2load's -D: wall-clock timers, which run on while the tool is stopped; the harness ends
  the lab's h2load with SIGINT instead). Its last slice must end
  before then (the harness leaves a margin for the drains); after the cycles it is continued once
  its window is over and runs until it exits. A slice is cut at the window's end, and a tool whose
  window ran out in the others' drains ends there with the slices it had (its rate is still its
  requests over its seconds).

The tools run one at a time: while one runs the others are stopped, with their requests in flight
(the server answers them; the tool reads the answers when it next runs). When a tool names its
server's processes ("server_pids"), the next tool waits after each stop until that server has
answered what it holds: its CPU time (/proc/PID/task/*/schedstat, in ns) grows by under DRAIN_BUSY
of a DRAIN_POLL_S poll, twice running, or DRAIN_MAX_S passes (counted as capped). The drain up to
the end of the last poll in which the server still worked is the tool's time too: its server
worked for it; the quiet polls that tell the server is done are not (its server was idle in them:
counted, 10 slices of a point added 40-60 ms of idle to each second of slices). Without it a slow server answering a deep backlog
(h2load's 100 connections × 10 streams) works on into the next tool's slice, on the same server
CPU: it is credited with requests done outside its seconds and the next server loses CPU (Go over
h2c: 1.18 s of CPU per second of its tool, +26 % req/s against contiguous runs). A rate is then a tool's
requests over its seconds, and the tools' latency figures hold the stopped time of the requests in
flight at each stop: not a latency measurement. A tool still running grace_s after its end is
killed and its record says so; one that exits during the cycles gets no more slices.

The record (raw data) gives per tool: ran_s (slices, drains and tail), slices, drain_s (the drains'
seconds counted as the tool's), drain_wait_s (the whole waits, quiet polls included), drains_capped,
tail_s, connect_s (a "ready" tool's connects, not counted; null without "ready") with the CPU its server
and the tool spent in them (connect_server_cpu_s, connect_tool_cpu_s: left out of the cost too), exit, fault, and the wall-clock times of its first and last slice. The slices follow one
another: each is slice_s from its SIGCONT, the next starting after the drain. Standard library only (it runs on a benchmark host).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

TOOL_VERSION = 4   # 2: drains, slices one after another; 3: a drain's quiet polls not counted; 4: "ready"
SYS_TGKILL = {"x86_64": 234, "aarch64": 131}
ENDS = ("sigint", "deadline")
# how long a tool may take to reach its self-stop before the first slice
START_WAIT_S = 5.0
# a drain: poll the server's CPU time every DRAIN_POLL_S; drained when it grew by under DRAIN_BUSY of
# the poll twice running; at most DRAIN_MAX_S (a deadline tool's window allows SLICE_DRAIN_ALLOW_S a
# slice for them: scripts/lib/sliced.sh)
DRAIN_POLL_S = 0.002
DRAIN_BUSY = 0.05
DRAIN_MAX_S = 0.5
# a tool's wait for its ready lines: polled every READY_POLL_S, for at most READY_WAIT_S (beyond the
# tools' own connect wait, the harness's 5 s, after which they say they start without the rest)
READY_POLL_S = 0.001
READY_WAIT_S = 15.0


class SpecError(ValueError):
    """A slicing spec the slicer cannot run: names the file and what is wrong."""


@dataclass
class Tool:
    name: str
    argv: list[str]
    stdout: str
    stderr: str
    end: str
    window_s: float | None = None
    server_pids: list[int] = field(default_factory=list)
    ready_pattern: str | None = None
    ready_count: int = 0
    connect_s: float | None = None
    connect_server_cpu_s: float | None = None
    connect_tool_cpu_s: float | None = None
    proc: subprocess.Popen | None = None
    ran_s: float = 0.0
    slices: int = 0
    drain_s: float = 0.0
    drain_wait_s: float = 0.0
    drains_capped: int = 0
    tail_s: float = 0.0
    first_cont: float | None = None
    first_utc: float | None = None
    last_utc: float | None = None
    fault: str | None = None
    exit: int | None = None
    files: list = field(default_factory=list)


def read_spec(path: Path) -> tuple[float, float, float, list[Tool]]:
    try:
        spec = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SpecError(f"{path}: {e}") from e
    try:
        slice_s, active_s = float(spec["slice_s"]), float(spec["active_s"])
        grace_s = float(spec.get("grace_s", 10))
        tools = [Tool(t["name"], list(t["argv"]), t["stdout"], t["stderr"], t.get("end", "sigint"),
                      t.get("window_s"), [int(p) for p in t.get("server_pids", [])],
                      str(t["ready"]["pattern"]) if "ready" in t else None,
                      int(t["ready"]["count"]) if "ready" in t else 0) for t in spec["tools"]]
    except (KeyError, TypeError, ValueError) as e:
        raise SpecError(f"{path}: a field is missing or of the wrong type ({e!r})") from e
    if not 0 < slice_s <= active_s:
        raise SpecError(f"{path}: slice_s {slice_s} must be above 0 and at most active_s {active_s}")
    if not tools or len({t.name for t in tools}) != len(tools):
        raise SpecError(f"{path}: the tools must be at least one, with names of their own")
    cycles = round(active_s / slice_s)
    for i, t in enumerate(tools):
        if t.end not in ENDS:
            raise SpecError(f"{path}: tool {t.name}: end {t.end!r} is not one of {', '.join(ENDS)}")
        if not t.argv:
            raise SpecError(f"{path}: tool {t.name}: an empty argv")
        if t.ready_pattern is not None:
            if t.end != "sigint" or t.ready_count < 1:
                raise SpecError(f"{path}: tool {t.name}: ready needs end sigint and a count of at least 1")
            try:
                re.compile(t.ready_pattern)
            except re.error as e:
                raise SpecError(f"{path}: tool {t.name}: ready pattern {t.ready_pattern!r}: {e}") from e
        if t.end == "deadline":
            # its first slice starts i slices in, its last ends (cycles-1) cycles later (without
            # drains: the harness leaves a second's margin for them)
            last_end = (cycles - 1) * len(tools) * slice_s + slice_s
            if t.window_s is None or float(t.window_s) <= last_end:
                raise SpecError(f"{path}: tool {t.name}: window_s {t.window_s} must exceed {last_end:.2f} s, "
                                f"the end of its last slice counted from its first")
            t.window_s = float(t.window_s)
    return slice_s, active_s, grace_s, tools


def proc_state(pid: int) -> str:
    """The process's state letter from /proc (T: stopped); '' once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (OSError, IndexError):
        return ""


def group_pids(pgid: int) -> list[int]:
    """The processes of process group pgid (field 5 of /proc/PID/stat)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(entry.joinpath("stat").read_text().rsplit(") ", 1)[1].split()[2]) == pgid:
                    pids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return pids


def signal_group(tool: Tool, sig: int) -> None:
    try:
        os.killpg(tool.proc.pid, sig)
    except ProcessLookupError:
        pass


def start_stopped(tool: Tool) -> None:
    out = open(tool.stdout, "w")
    err = out if tool.stderr == tool.stdout else open(tool.stderr, "w")
    tool.files = [out] if err is out else [out, err]
    tool.proc = subprocess.Popen(["sh", "-c", 'kill -STOP $$; exec "$@"', "sh", *tool.argv],
                                 stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + START_WAIT_S
    while proc_state(tool.proc.pid) != "T":
        if tool.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"tool {tool.name} did not reach its stop before its first slice")
        time.sleep(0.001)


def cpu_ns(pids: list[int]) -> int:
    """The CPU time of the processes' threads, in ns (those gone count 0)."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def drain(tool: Tool) -> None:
    """Wait until the tool's server has answered what it holds (see the module's doc); the wait is
    the tool's time."""
    if not tool.server_pids:
        return
    t0 = time.monotonic()
    last, quiet = cpu_ns(tool.server_pids), 0
    worked_until = t0   # the end of the last poll in which the server still worked
    while quiet < 2:
        time.sleep(DRAIN_POLL_S)
        now_ns = cpu_ns(tool.server_pids)
        t = time.monotonic()
        if now_ns - last < DRAIN_BUSY * DRAIN_POLL_S * 1e9:
            quiet += 1
        else:
            quiet, worked_until = 0, t
        last = now_ns
        if t - t0 >= DRAIN_MAX_S:
            tool.drains_capped += 1
            worked_until = t
            break
    tool.drain_wait_s += time.monotonic() - t0
    tool.drain_s += worked_until - t0
    tool.ran_s += worked_until - t0


def sleep_until(t: float) -> None:
    while (left := t - time.monotonic()) > 0:
        time.sleep(left)


def deadline_of(tool: Tool) -> float | None:
    """When a "deadline" tool's own window ends (monotonic), once it has had a slice."""
    if tool.end != "deadline" or tool.first_cont is None:
        return None
    return tool.first_cont + tool.window_s


def ready_lines(tool: Tool) -> int:
    """How many lines of the tool's stderr say its clock started."""
    try:
        text = Path(tool.stderr).read_text(errors="replace")
    except OSError:
        return 0
    return len(re.findall(tool.ready_pattern, text))


def wait_ready(tool: Tool, t0: float, server_ns0: int, tool_ns0: int) -> float:
    """A "ready" tool's connects, in its first slice (it runs, continued at t0): until its ready
    lines are all there; returns when they were seen, which is where its time starts. The CPU its
    server and the tool spent meanwhile (from server_ns0 and tool_ns0, read before it was continued)
    is recorded, for the build step to leave out with the time. A tool that exits first, or says
    nothing within READY_WAIT_S, is a fault."""
    while ready_lines(tool) < tool.ready_count:
        if tool.proc.poll() is not None:
            tool.fault = f"exited with {tool.proc.returncode} before its clock started"
            break
        if time.monotonic() - t0 > READY_WAIT_S:
            tool.fault = f"did not say its clock started within {READY_WAIT_S:g} s ({tool.ready_pattern!r} on {tool.stderr})"
            break
        time.sleep(READY_POLL_S)
    seen = time.monotonic()
    tool.connect_s = seen - t0
    tool.connect_server_cpu_s = (cpu_ns(tool.server_pids) - server_ns0) / 1e9
    tool.connect_tool_cpu_s = (cpu_ns(group_pids(tool.proc.pid)) - tool_ns0) / 1e9
    return seen


def run_slice(tool: Tool, slice_s: float) -> None:
    """One slice of the tool (cut at its own deadline, where it has one), then its server's drain.
    A "ready" tool's first slice starts when its clock does (wait_ready)."""
    if tool.proc.poll() is not None:
        if tool.fault is None:
            tool.fault = f"exited with {tool.proc.returncode} during the slices"
        return
    t0 = time.monotonic()
    first = tool.first_cont is None
    if first:
        tool.first_cont, tool.first_utc = t0, time.time()
    ready = first and tool.ready_pattern is not None
    if ready:
        server_ns0, tool_ns0 = cpu_ns(tool.server_pids), cpu_ns(group_pids(tool.proc.pid))
    signal_group(tool, signal.SIGCONT)
    if ready:
        t0 = wait_ready(tool, t0, server_ns0, tool_ns0)
    end = t0 + slice_s
    if (d := deadline_of(tool)) is not None:
        end = min(end, d)
    sleep_until(end)
    signal_group(tool, signal.SIGSTOP)
    tool.ran_s += time.monotonic() - t0
    tool.slices += 1
    tool.last_utc = time.time()
    drain(tool)


def finish(tool: Tool, grace_s: float) -> None:
    """Let the tool end (see the module's doc) and count its tail as its time."""
    if tool.proc.poll() is None:
        if tool.end == "sigint":
            tgkill = SYS_TGKILL.get(os.uname().machine)
            if tgkill is None:
                raise RuntimeError(f"no tgkill number known for {os.uname().machine}")
            libc = ctypes.CDLL(None, use_errno=True)
            for pid in group_pids(tool.proc.pid):
                libc.syscall(tgkill, pid, pid, signal.SIGINT)
        else:
            sleep_until(tool.first_cont + tool.window_s)
        t0 = time.monotonic()
        signal_group(tool, signal.SIGCONT)
        try:
            tool.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            signal_group(tool, signal.SIGKILL)
            tool.proc.wait()
            tool.fault = f"still running {grace_s:g} s after its end; killed"
        tool.tail_s = time.monotonic() - t0
        tool.ran_s += tool.tail_s
    tool.exit = tool.proc.returncode
    for f in tool.files:
        f.close()
    tool.files = []


def run(slice_s: float, active_s: float, grace_s: float, tools: list[Tool]) -> dict:
    cycles = round(active_s / slice_s)
    try:
        for t in tools:
            start_stopped(t)
        for _ in range(cycles):
            for t in tools:
                if t.exit is not None:
                    continue
                d = deadline_of(t)
                if d is not None and time.monotonic() >= d:
                    # its window ran out in the drains: it ends now, with the slices it had
                    finish(t, grace_s)
                    continue
                run_slice(t, slice_s)
        for t in tools:
            if t.exit is None:
                finish(t, grace_s)
    finally:
        for t in tools:
            if t.proc is not None and t.proc.poll() is None:
                signal_group(t, signal.SIGKILL)
                signal_group(t, signal.SIGCONT)
                t.proc.wait()
    return {
        "tool_version": TOOL_VERSION, "slice_s": slice_s, "active_s": active_s, "cycles": cycles,
        "order": [t.name for t in tools],
        "tools": {t.name: {"ran_s": round(t.ran_s, 6), "slices": t.slices, "drain_s": round(t.drain_s, 6),
                           "drain_wait_s": round(t.drain_wait_s, 6),
                           "drains_capped": t.drains_capped, "tail_s": round(t.tail_s, 6),
                           "end": t.end, "exit": t.exit, "fault": t.fault,
                           "connect_s": None if t.connect_s is None else round(t.connect_s, 6),
                           "connect_server_cpu_s": (None if t.connect_server_cpu_s is None
                                                    else round(t.connect_server_cpu_s, 6)),
                           "connect_tool_cpu_s": (None if t.connect_tool_cpu_s is None
                                                  else round(t.connect_tool_cpu_s, 6)),
                           "first_utc": t.first_utc, "last_utc": t.last_utc} for t in tools},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", type=Path, help="the slicing spec (JSON)")
    ap.add_argument("--record", type=Path, required=True, help="where the record goes (JSON)")
    a = ap.parse_args(argv)
    try:
        record = run(*read_spec(a.spec))
    except (SpecError, RuntimeError) as e:
        print(f"httplab slice: {e}", file=sys.stderr)
        return 2
    a.record.write_text(json.dumps(record, indent=1) + "\n")
    faults = [f"{n}: {t['fault']}" for n, t in record["tools"].items() if t["fault"]]
    for f in faults:
        print(f"httplab slice: {f}", file=sys.stderr)
    return 1 if faults else 0
