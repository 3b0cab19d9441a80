"""The host's state, recorded at the start and end of each suite, so a report can say what moved.

    python httplab/parse/hoststate.py [--exclude-pid PID ...] [--sample S] [-o FILE]   # fast: no pandas
    python -m httplab host-state [--exclude-pid PID ...] > host.start.json          # same, ~1 s slower

prints one JSON object (the keys are listed in `collect_host_state`). Every value that cannot be read
is null, never an exception. The shell writes it to raw/<run_id>/<suite>/host.start.json and
host.end.json; `read_host_states` reads the pair back, `host_changes` says in sentences what moved
that matters for a benchmark, and the report header (httplab.report.engine.header_markdown) shows both.

The module imports nothing from httplab at load time (and no pandas), so that running it as a
script costs a few tens of milliseconds plus the sampling interval.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys as _sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

# ---------------------------------------------------------------- thresholds (one place)
#: The load average is recorded and shown but is no warning: at a suite's start or end it counts the
#: suite's own work of the last minute (the languages suite's 8-thread pools pinned to one core
#: alone make it ~9), so it cannot tell other work from ours. Other processes are judged by their
#: own CPU time instead (BUSY_PROCESS_WARN_PCT; and per point, httplab.tidy.bounds.FOREIGN_MAX_PCT).
#: A process other than the excluded ones (the suite's servers and tools, the collector) using more
#: than this share of one core, in percent, over the collector's sampling interval is a warning.
BUSY_PROCESS_WARN_PCT = 5.0
#: CPU steal over the whole suite (from the start and end states' /proc/stat ticks) above this
#: fraction of any CPU's time is a warning; the same 2 % the per-point `noisy` flag uses.
STEAL_WARN_FRACTION = 0.02
#: How long the collector samples /proc/<pid>/stat and /proc/stat for the busiest processes and
#: the CPUs' busy and steal fractions, in seconds.
SAMPLE_S = 0.5
#: How many of the busiest other processes are recorded (those with any CPU time in the interval).
TOP_PROCESSES = 5

SCHEMA = 1
_ASLR = {0: "off", 1: "partial: stack, mmap, vDSO", 2: "full: stack, mmap, vDSO and heap"}


# ---------------------------------------------------------------- small readers (never raise)
def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _read1(path: Path) -> str | None:
    text = _read(path)
    return text.strip() if text is not None else None


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip(), 0) if text is not None else None
    except ValueError:
        return None


def parse_cpu_list(text: str | None) -> list[int] | None:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; None when unreadable."""
    if text is None:
        return None
    cpus: list[int] = []
    try:
        for part in text.strip().split(","):
            if not part:
                continue
            lo, _, hi = part.partition("-")
            cpus.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        return None
    return sorted(set(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out: list[str] = []
    cs = sorted(set(cpus))
    i = 0
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and cs[j + 1] == cs[j] + 1:
            j += 1
        out.append(str(cs[i]) if i == j else f"{cs[i]}-{cs[j]}")
        i = j + 1
    return ",".join(out)


def _bracketed(text: str | None) -> str | None:
    """'always [madvise] never' -> 'madvise'."""
    if text is None:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else (text.strip() or None)


# ---------------------------------------------------------------- the parts
def _cpuinfo(proc: Path) -> dict[str, Any]:
    """cpu_model, cpu (vendor, family, model, stepping, microcode), cpu_flags, their hash and count."""
    out: dict[str, Any] = {"cpu_model": None, "cpu": None, "cpu_flags": None,
                           "cpu_flags_sha256": None, "cpu_flags_count": None}
    text = _read(proc / "cpuinfo")
    if text is None:
        return out
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    procs: list[dict[str, str]] = []
    for b in blocks:
        d: dict[str, str] = {}
        for line in b.splitlines():
            k, sep, v = line.partition(":")
            if sep:
                d.setdefault(k.strip(), v.strip())
        procs.append(d)
    if not procs:
        return out
    first = procs[0]
    models = list(dict.fromkeys(p["model name"] for p in procs if p.get("model name")))
    out["cpu_model"] = " + ".join(models) if models else None
    out["cpu"] = {
        "vendor_id": first.get("vendor_id"),
        "family": _int(first.get("cpu family")),
        "model": _int(first.get("model")),
        "stepping": _int(first.get("stepping")),
        "microcode": first.get("microcode"),
        "mhz": _float(first.get("cpu MHz")),
        "cache_size": first.get("cache size"),
    }
    flag_line = first.get("flags", first.get("Features"))
    if flag_line is not None:
        flags = sorted(set(flag_line.split()))
        out["cpu_flags"] = flags
        out["cpu_flags_sha256"] = hashlib.sha256(" ".join(flags).encode()).hexdigest()[:12]
        out["cpu_flags_count"] = len(flags)
    return out


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _cpu_ticks(proc: Path) -> tuple[dict[str, dict[str, int]] | None, int | None]:
    """Per CPU ('all', 'cpu0', ...) cumulative ticks from /proc/stat: total (user..steal; guest time
    is already in user), idle (idle + iowait) and steal; and btime (boot time, epoch seconds)."""
    text = _read(proc / "stat")
    if text is None:
        return None, None
    ticks: dict[str, dict[str, int]] = {}
    btime = None
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0].startswith("cpu"):
            try:
                v = [int(x) for x in parts[1:9]]
            except ValueError:
                continue
            v += [0] * (8 - len(v))
            user, nice, system, idle, iowait, irq, softirq, steal = v
            name = "all" if parts[0] == "cpu" else parts[0]
            ticks[name] = {"total": user + nice + system + idle + iowait + irq + softirq + steal,
                           "idle": idle + iowait, "steal": steal}
        elif parts[0] == "btime" and len(parts) > 1:
            btime = _int(parts[1])
    return (ticks or None), btime


def _proc_times(proc: Path) -> dict[int, tuple[str, int, int | None]]:
    """pid -> (comm, utime + stime in ticks, last CPU) of every process readable under proc."""
    out: dict[int, tuple[str, int, int | None]] = {}
    try:
        entries = list(os.scandir(proc))
    except OSError:
        return out
    for e in entries:
        if not e.name.isdigit():
            continue
        text = _read(Path(e.path) / "stat")
        if not text:
            continue
        lp, rp = text.find("("), text.rfind(")")
        if lp < 0 or rp < lp:
            continue
        rest = text[rp + 1:].split()
        try:  # rest[0] is field 3 (state): utime is field 14, stime 15, processor 39
            cpu_ticks = int(rest[11]) + int(rest[12])
        except (IndexError, ValueError):
            continue
        last_cpu = _int(rest[36]) if len(rest) > 36 else None
        out[int(e.name)] = (text[lp + 1:rp], cpu_ticks, last_cpu)
    return out


def _frac(num: int, den: int) -> float | None:
    return round(num / den, 6) if den > 0 else None


def _steal_since_boot(ticks: dict[str, dict[str, int]] | None) -> dict[str, float | None] | None:
    if not ticks:
        return None
    return {k: _frac(v["steal"], v["total"]) for k, v in ticks.items()}


def _window(t0: dict[str, dict[str, int]] | None, t1: dict[str, dict[str, int]] | None,
            seconds: float) -> dict[str, Any] | None:
    """Busy and steal fractions of each CPU over the sampling interval."""
    if not t0 or not t1:
        return None
    busy: dict[str, float | None] = {}
    steal: dict[str, float | None] = {}
    for k in t1:
        if k not in t0:
            continue
        dt = t1[k]["total"] - t0[k]["total"]
        busy[k] = _frac(dt - (t1[k]["idle"] - t0[k]["idle"]), dt)
        steal[k] = _frac(t1[k]["steal"] - t0[k]["steal"], dt)
    return {"seconds": round(seconds, 3), "busy": busy, "steal": steal}


def _busiest(before: dict[int, tuple[str, int, int | None]], after: dict[int, tuple[str, int, int | None]],
             seconds: float, clk_tck: int, exclude: set[int]) -> list[dict[str, Any]]:
    """The TOP_PROCESSES processes (not in exclude) with the most CPU time between the two samples,
    as % of one core; processes with no CPU time in the interval are left out."""
    rows = []
    for pid, (comm, t1, cpu) in after.items():
        if pid in exclude:
            continue
        t0 = before[pid][1] if pid in before else 0  # a process born in the interval: all its time
        d = t1 - t0
        if d > 0 and seconds > 0:
            rows.append({"pid": pid, "comm": comm, "cpu_pct": round(100.0 * d / clk_tck / seconds, 1),
                         "last_cpu": cpu})
    rows.sort(key=lambda r: (-r["cpu_pct"], r["pid"]))
    return rows[:TOP_PROCESSES]


def _cmdline(proc: Path, pid: int, limit: int = 120) -> str | None:
    """The process's command line (NULs as spaces, cut at `limit` characters), None if unreadable
    or empty (kernel threads)."""
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return (text[:limit] + "…" if len(text) > limit else text) or None


def _governors(sysfs: Path, cpus: list[int] | None) -> dict[str, str | None] | None:
    base = sysfs / "devices" / "system" / "cpu"
    if cpus is None:
        found = [_int(p.name[3:]) for p in base.glob("cpu[0-9]*")]
        cpus = sorted(c for c in found if c is not None) or None
    if cpus is None:
        return None
    return {f"cpu{c}": _read1(base / f"cpu{c}" / "cpufreq" / "scaling_governor") for c in cpus}


def _boost(sysfs: Path) -> tuple[bool | None, str | None]:
    """(boost on?, the file it was read from) or (None, None) when no file says."""
    base = sysfs / "devices" / "system" / "cpu"
    v = _int(_read1(base / "cpufreq" / "boost"))
    if v is not None:
        return v != 0, "cpufreq/boost"
    v = _int(_read1(base / "intel_pstate" / "no_turbo"))
    if v is not None:
        return v == 0, "intel_pstate/no_turbo"
    v = _int(_read1(base / "cpufreq" / "policy0" / "boost"))
    if v is not None:
        return v != 0, "cpufreq/policy0/boost"
    return None, None


def _loadavg(proc: Path) -> dict[str, Any] | None:
    parts = (_read1(proc / "loadavg") or "").split()
    try:
        running, total = (int(x) for x in parts[3].split("/"))
        return {"1m": float(parts[0]), "5m": float(parts[1]), "15m": float(parts[2]),
                "running": running, "total": total}
    except (IndexError, ValueError):
        return None


def _meminfo(proc: Path) -> dict[str, int | None] | None:
    text = _read(proc / "meminfo")
    if text is None:
        return None
    vals: dict[str, int] = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        n = _int(v.split()[0]) if v.split() else None
        if n is not None:
            vals[k.strip()] = n
    return {"total_kb": vals.get("MemTotal"), "available_kb": vals.get("MemAvailable")}


def _affinity() -> list[int] | None:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


# ---------------------------------------------------------------- the collector
def collect_host_state(proc: Path = Path("/proc"), sys: Path = Path("/sys"), *,
                       exclude_pids: Iterable[int] = (), sample_s: float = SAMPLE_S,
                       sleep: Callable[[float], None] = time.sleep,
                       now: Callable[[], datetime] | None = None) -> dict[str, Any]:
    """The host's state as a JSON-ready dict. Keys (every value may be null when unreadable):

    schema, utc, hostname, kernel {release, version}, cpu_model, cpu {vendor_id, family, model,
    stepping, microcode, mhz, cache_size}, cpu_flags (sorted list), cpu_flags_sha256 (first 12 hex
    digits of the sorted flags joined by spaces), cpu_flags_count, cores (online CPUs),
    cpus_online ('0-1'), affinity (this process's CPUs, list), smt {active, control},
    governor {cpuN: name|null}, cpufreq_driver, boost (bool), boost_source, thp, thp_defrag,
    aslr (0/1/2), loadavg {1m, 5m, 15m, running, total}, memory {total_kb, available_kb},
    clk_tck, btime, cpu_ticks {all|cpuN: {total, idle, steal}} (cumulative, for steal between two
    states), steal_since_boot {all|cpuN: fraction}, window {seconds, busy {..}, steal {..}} (over
    the sampling interval), busiest [{pid, comm, cpu_pct, last_cpu, cmd}] (top TOP_PROCESSES by CPU in
    the interval, % of one core, excluding exclude_pids and this process), excluded_pids.

    proc and sys are injectable so tests can use a fake tree; `sleep` is called once between the
    two samples of the interval (tests pass one that rewrites the fake files).
    """
    proc, sysfs = Path(proc), Path(sys)
    cpu_base = sysfs / "devices" / "system" / "cpu"
    exclude = {int(p) for p in exclude_pids} | {os.getpid()}
    try:
        clk_tck = int(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        clk_tck = 100

    ticks0, btime = _cpu_ticks(proc)
    procs0 = _proc_times(proc)
    t0 = time.monotonic()
    sleep(sample_s)
    t1 = time.monotonic()
    ticks1, _ = _cpu_ticks(proc)
    procs1 = _proc_times(proc)
    elapsed = max(t1 - t0, sample_s if sample_s > 0 else 0.0)

    busiest = _busiest(procs0, procs1, elapsed, clk_tck, exclude) if procs1 else None
    for row in busiest or []:
        row["cmd"] = _cmdline(proc, row["pid"])
    online_text = _read1(cpu_base / "online")
    online = parse_cpu_list(online_text)
    boost, boost_source = _boost(sysfs)
    smt_active = _int(_read1(cpu_base / "smt" / "active"))
    aslr = _int(_read1(proc / "sys" / "kernel" / "randomize_va_space"))
    release = _read1(proc / "sys" / "kernel" / "osrelease")
    version = _read1(proc / "sys" / "kernel" / "version")
    stamp = (now or (lambda: datetime.now(timezone.utc)))()

    state: dict[str, Any] = {
        "schema": SCHEMA,
        "utc": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": _read1(proc / "sys" / "kernel" / "hostname"),
        "kernel": ({"release": release, "version": version}
                   if release is not None or version is not None else None),
        **_cpuinfo(proc),
        "cores": len(online) if online else None,
        "cpus_online": online_text,
        "affinity": _affinity(),
        "smt": {"active": None if smt_active is None else smt_active != 0,
                "control": _read1(cpu_base / "smt" / "control")},
        "governor": _governors(sysfs, online),
        "cpufreq_driver": _read1(cpu_base / f"cpu{(online or [0])[0]}" / "cpufreq" / "scaling_driver"),
        "boost": boost,
        "boost_source": boost_source,
        "thp": _bracketed(_read1(sysfs / "kernel" / "mm" / "transparent_hugepage" / "enabled")),
        "thp_defrag": _bracketed(_read1(sysfs / "kernel" / "mm" / "transparent_hugepage" / "defrag")),
        "aslr": aslr,
        "loadavg": _loadavg(proc),
        "memory": _meminfo(proc),
        "clk_tck": clk_tck,
        "btime": btime,
        "cpu_ticks": ticks1,
        "steal_since_boot": _steal_since_boot(ticks1),
        "window": _window(ticks0, ticks1, elapsed),
        "busiest": busiest,
        "excluded_pids": sorted(exclude),
    }
    return state


# ---------------------------------------------------------------- comparing two states
def _get(state: dict[str, Any] | None, *keys: str) -> Any:
    v: Any = state
    for k in keys:
        if not isinstance(v, dict):
            return None
        v = v.get(k)
    return v


def _show(v: Any) -> str:
    if v is None:
        return "not readable"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, dict):
        return ", ".join(f"{k} {_show(x)}" for k, x in v.items())
    return str(v)


#: (label, key path) of the facts whose change between two states is always a warning. Written as
#: "label: dotted.key.path" lines: the CPU model names can change between sessions of a cloud VM;
#: the boot time tells a reboot between two states.
_FACT_LINES = """
host name: hostname
CPU model: cpu_model
CPU vendor: cpu.vendor_id
CPU family: cpu.family
CPU model number: cpu.model
CPU stepping: cpu.stepping
microcode: cpu.microcode
CPU flags (sha256): cpu_flags_sha256
online cores: cores
online CPUs: cpus_online
SMT: smt.active
SMT control: smt.control
governor: governor
cpufreq driver: cpufreq_driver
boost: boost
transparent huge pages: thp
THP defrag: thp_defrag
ASLR: aslr
kernel: kernel.release
kernel build: kernel.version
boot time: btime
"""
FACTS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (label, tuple(path.split("."))) for label, _, path in
    (line.rpartition(": ") for line in _FACT_LINES.strip().splitlines()))


def fact_changes(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """Sentences for the fixed facts (FACTS) that differ between two states. A fact missing on both
    sides is not a change; one that became unreadable is."""
    if not a or not b:
        return []
    out = []
    for label, path in FACTS:
        va, vb = _get(a, *path), _get(b, *path)
        if va == vb or (va is None and vb is None):
            continue
        if path == ("btime",):
            out.append("the host rebooted (its boot time changed)")
            continue
        if path == ("cpu_flags_sha256",):
            fa, fb = set(a.get("cpu_flags") or []), set(b.get("cpu_flags") or [])
            detail = []
            if fb - fa:
                detail.append("added " + " ".join(sorted(fb - fa)[:8]) + (" …" if len(fb - fa) > 8 else ""))
            if fa - fb:
                detail.append("removed " + " ".join(sorted(fa - fb)[:8]) + (" …" if len(fa - fb) > 8 else ""))
            out.append(f"CPU flags changed ({'; '.join(detail) or f'{_show(va)} → {_show(vb)}'})")
            continue
        out.append(f"{label} changed: {_show(va)} → {_show(vb)}")
    return out


def busy_warnings(state: dict[str, Any] | None, when: str) -> list[str]:
    """Sentences for other processes above BUSY_PROCESS_WARN_PCT of a core in a state; `when`
    names the state ('start', 'end')."""
    if not state:
        return []
    out = []
    busy = [p for p in state.get("busiest") or []
            if isinstance(p, dict) and isinstance(p.get("cpu_pct"), (int, float))
            and p["cpu_pct"] > BUSY_PROCESS_WARN_PCT]
    if busy:
        procs = ", ".join(f"{p.get('comm')} (pid {p.get('pid')}) {p['cpu_pct']:.0f} %" for p in busy)
        out.append(f"other processes busy at the {when} (% of one core): {procs}")
    return out


def steal_between(start: dict[str, Any] | None, end: dict[str, Any] | None) -> dict[str, float] | None:
    """CPU steal between two states as a fraction of each CPU's time ({'all': .., 'cpu0': ..}), from
    their cumulative /proc/stat ticks; None when not computable (missing, or the host rebooted)."""
    a, b = _get(start, "cpu_ticks"), _get(end, "cpu_ticks")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    if _get(start, "btime") != _get(end, "btime"):
        return None
    out = {}
    for k, v in b.items():
        try:
            dt = v["total"] - a[k]["total"]
            ds = v["steal"] - a[k]["steal"]
        except (KeyError, TypeError):
            continue
        if dt > 0 and ds >= 0:
            out[k] = ds / dt
    return out or None


def host_changes(start: dict[str, Any] | None, end: dict[str, Any] | None) -> list[str]:
    """Human sentences for what moved between two host states (a suite's start and end) that matters
    for a benchmark: any changed fact (CPU model, flags, microcode, cores, SMT, governor, boost,
    THP, ASLR, kernel, host name, a reboot), other processes above BUSY_PROCESS_WARN_PCT of a core
    (at either end), and CPU steal over
    the suite above STEAL_WARN_FRACTION. Empty when nothing did (or a state is missing)."""
    out = fact_changes(start, end)
    out += busy_warnings(start, "start") + busy_warnings(end, "end")
    steal = steal_between(start, end)
    if steal:
        worst = max(steal, key=lambda k: steal[k])
        if steal[worst] > STEAL_WARN_FRACTION:
            out.append(f"CPU steal during the suite {steal[worst]:.1%} on {worst} "
                       f"(> {STEAL_WARN_FRACTION:.0%})")
    return out


# ---------------------------------------------------------------- raw/ reader
HOST_FILES = {"start": "host.start.json", "end": "host.end.json"}


def read_host_states(run_dir: Path, suite: str) -> dict[str, dict[str, Any] | None]:
    """{'start': .., 'end': ..} from raw/<run_id>/<suite>/host.{start,end}.json; None for a missing
    file; RawFormatError naming the file for a malformed one."""
    from ..parse.jsonio import read_json_object  # lazy: keeps the CLI free of the package's imports

    out: dict[str, dict[str, Any] | None] = {}
    for when, name in HOST_FILES.items():
        path = Path(run_dir) / suite / name
        out[when] = read_json_object(path) if path.is_file() else None
    return out


def aslr_text(v: Any) -> str:
    return f"{v} ({_ASLR[v]})" if v in _ASLR else _show(v)


# ---------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the host's state as JSON (httplab.lab.hoststate).")
    ap.add_argument("--exclude-pid", type=int, action="append", default=[], metavar="PID",
                    help="leave this process out of the busiest processes (repeatable)")
    ap.add_argument("--sample", type=float, default=SAMPLE_S, metavar="S",
                    help=f"sampling interval for the busiest processes, seconds (default {SAMPLE_S})")
    ap.add_argument("-o", "--out", type=Path, help="write to this file (atomically) instead of stdout")
    args = ap.parse_args(argv)
    text = json.dumps(collect_host_state(exclude_pids=args.exclude_pid, sample_s=args.sample),
                      indent=1) + "\n"
    if args.out is None:
        _sys.stdout.write(text)
        return 0
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, args.out)
    return 0
