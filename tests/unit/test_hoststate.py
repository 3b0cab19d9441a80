"""httplab.lab.hoststate: the collector on a fake /proc and /sys tree and on this machine, host_changes on
pairs of states, read_host_states, and the report header with and without host files."""
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from httplab.lab import hoststate as H
from httplab.parse.errors import RawFormatError
from httplab.report.engine import header_markdown, open_report
from httplab.stats.write import build_data
from make_fake_run import make_fake_run

REPO = Path(__file__).resolve().parents[2]

CPUINFO_BLOCK = """processor\t: {n}
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0x1000065
cpu MHz\t\t: 2596.124
cache size\t: 1024 KB
flags\t\t: fpu sse2 avx2 hypervisor avx512f
bogomips\t: 5192.24
"""


def proc_stat_line(pid: int, comm: str, utime: int, stime: int, cpu: int = 1) -> str:
    # fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    rest = ["S", "1", str(pid), str(pid), "0", "-1", "4194560", "100", "0", "0", "0",
            str(utime), str(stime)] + ["0"] * 23 + [str(cpu)] + ["0"] * 13
    return f"{pid} ({comm}) " + " ".join(rest) + "\n"


def make_tree(root: Path, *, governor: str | None = "performance", boost: str | None = "1",
              steal: int = 20, cpus: int = 2) -> tuple[Path, Path]:
    proc, sysfs = root / "proc", root / "sys"
    (proc / "sys" / "kernel").mkdir(parents=True)
    (proc / "cpuinfo").write_text("\n".join(CPUINFO_BLOCK.format(n=i) for i in range(cpus)))
    write_proc_stat(proc, steal=steal, cpus=cpus)
    (proc / "loadavg").write_text("0.54 0.43 0.18 2/88 7779\n")
    (proc / "meminfo").write_text("MemTotal:       24684084 kB\nMemFree:        23639576 kB\n"
                                  "MemAvailable:   24051248 kB\n")
    (proc / "sys" / "kernel" / "randomize_va_space").write_text("2\n")
    (proc / "sys" / "kernel" / "osrelease").write_text("6.1.0-fake\n")
    (proc / "sys" / "kernel" / "version").write_text("#1 SMP PREEMPT_DYNAMIC Debian 6.1.0\n")
    (proc / "sys" / "kernel" / "hostname").write_text("fakehost\n")
    write_pids(proc, {101: ("nginx", 500, 100), 202: ("stress ng", 1000, 0), 303: ("idle", 7, 3)})
    (proc / "101" / "cmdline").write_bytes(b"nginx: worker\0process\0")
    (proc / "self").mkdir()  # not a pid: ignored
    cpu = sysfs / "devices" / "system" / "cpu"
    for i in range(cpus):
        (cpu / f"cpu{i}").mkdir(parents=True)
        if governor is not None:
            (cpu / f"cpu{i}" / "cpufreq").mkdir()
            (cpu / f"cpu{i}" / "cpufreq" / "scaling_governor").write_text(governor + "\n")
            (cpu / f"cpu{i}" / "cpufreq" / "scaling_driver").write_text("acpi-cpufreq\n")
    (cpu / "online").write_text(f"0-{cpus - 1}\n" if cpus > 1 else "0\n")
    (cpu / "smt").mkdir()
    (cpu / "smt" / "active").write_text("0\n")
    (cpu / "smt" / "control").write_text("notsupported\n")
    if boost is not None:
        (cpu / "cpufreq").mkdir(exist_ok=True)
        (cpu / "cpufreq" / "boost").write_text(boost + "\n")
    thp = sysfs / "kernel" / "mm" / "transparent_hugepage"
    thp.mkdir(parents=True)
    thp.joinpath("enabled").write_text("always [madvise] never\n")
    thp.joinpath("defrag").write_text("always defer defer+madvise [madvise] never\n")
    return proc, sysfs


def write_proc_stat(proc: Path, *, steal: int = 20, busy: int = 0, idle: int = 0, cpus: int = 2) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice
    lines = []
    for i in range(cpus):
        lines.append(f"cpu{i} {4000 + busy} 0 1000 {4000 + idle} 0 0 0 {steal} 0 0")
    tot = [sum(x) for x in zip(*[[int(v) for v in ln.split()[1:]] for ln in lines])]
    lines.insert(0, "cpu  " + " ".join(map(str, tot)))
    (proc / "stat").write_text("\n".join(lines) + "\nintr 1 2 3\nctxt 537372\nbtime 1795421858\n")


def write_pids(proc: Path, pids: dict[int, tuple[str, int, int]]) -> None:
    for pid, (comm, ut, st) in pids.items():
        (proc / str(pid)).mkdir(exist_ok=True)
        (proc / str(pid) / "stat").write_text(proc_stat_line(pid, comm, ut, st))


def advancing_sleep(proc: Path):
    """A sleep for the collector that, instead of waiting, moves the fake counters on by 0.5 s:
    nginx +25 ticks (50 % of a core), 'stress ng' +2 ticks (4 %), a new process +10 ticks; per CPU
    busy +30, idle +15, steal +5 ticks."""
    def sleep(_s: float) -> None:
        write_pids(proc, {101: ("nginx", 520, 105), 202: ("stress ng", 1002, 0),
                          404: ("newborn", 10, 0)})
        write_proc_stat(proc, steal=25, busy=30, idle=15)
    return sleep


def collect(proc: Path, sysfs: Path, **kw) -> dict:
    kw.setdefault("sleep", advancing_sleep(proc))
    kw.setdefault("sample_s", 0.5)
    return H.collect_host_state(proc, sysfs, **kw)


# ---------------------------------------------------------------- the collector on a fake tree
def test_collector_reads_the_fake_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "monotonic", iter([10.0, 10.5]).__next__)
    proc, sysfs = make_tree(tmp_path)
    s = collect(proc, sysfs, exclude_pids=[303])
    assert s["schema"] == H.SCHEMA and s["utc"].endswith("Z")
    assert s["cpu_model"] == "AMD EPYC"
    assert s["cpu"] == {"vendor_id": "AuthenticAMD", "family": 26, "model": 2, "stepping": 1,
                        "microcode": "0x1000065", "mhz": 2596.124, "cache_size": "1024 KB"}
    assert s["cpu_flags"] == ["avx2", "avx512f", "fpu", "hypervisor", "sse2"]
    assert s["cpu_flags_count"] == 5 and len(s["cpu_flags_sha256"]) == 12
    assert s["cores"] == 2 and s["cpus_online"] == "0-1"
    assert s["smt"] == {"active": False, "control": "notsupported"}
    assert s["governor"] == {"cpu0": "performance", "cpu1": "performance"}
    assert s["cpufreq_driver"] == "acpi-cpufreq"
    assert (s["boost"], s["boost_source"]) == (True, "cpufreq/boost")
    assert (s["thp"], s["thp_defrag"], s["aslr"]) == ("madvise", "madvise", 2)
    assert s["kernel"] == {"release": "6.1.0-fake", "version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0"}
    assert s["hostname"] == "fakehost"
    assert s["loadavg"] == {"1m": 0.54, "5m": 0.43, "15m": 0.18, "running": 2, "total": 88}
    assert s["memory"] == {"total_kb": 24684084, "available_kb": 24051248}
    assert s["btime"] == 1795421858
    # after the interval: 4030 user, 1000 system, 4015 idle, 25 steal per CPU -> total 9070
    assert s["cpu_ticks"]["cpu0"] == {"total": 9070, "idle": 4015, "steal": 25}
    assert s["steal_since_boot"]["cpu1"] == pytest.approx(25 / 9070, abs=1e-6)
    assert s["window"]["seconds"] == 0.5
    assert s["window"]["busy"]["cpu0"] == pytest.approx(35 / 50)  # user +30 and steal +5 of 50 ticks
    assert s["window"]["steal"]["all"] == pytest.approx(10 / 100)
    # busiest: nginx 25 ticks / 100 Hz / 0.5 s = 50 %, newborn 20 %, stress ng 4 %; idle excluded
    busiest = [(p["pid"], p["comm"], p["cpu_pct"]) for p in s["busiest"]]
    assert busiest == [(101, "nginx", 50.0), (404, "newborn", 20.0), (202, "stress ng", 4.0)]
    assert s["busiest"][0]["cmd"] == "nginx: worker process" and s["busiest"][0]["last_cpu"] == 1
    assert 303 in s["excluded_pids"] and os.getpid() in s["excluded_pids"]
    json.dumps(s)  # JSON-ready


def test_collector_excludes_pids_and_keeps_top_n(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "monotonic", iter([0.0, 0.5]).__next__)
    proc, sysfs = make_tree(tmp_path)
    write_pids(proc, {1000 + i: (f"p{i}", 0, 0) for i in range(8)})

    def sleep(_s):
        write_pids(proc, {1000 + i: (f"p{i}", i + 1, 0) for i in range(8)})
    s = H.collect_host_state(proc, sysfs, exclude_pids=[1007], sleep=sleep)
    assert [p["pid"] for p in s["busiest"]] == [1006, 1005, 1004, 1003, 1002]
    assert len(s["busiest"]) == H.TOP_PROCESSES


def test_collector_on_an_empty_tree_gives_nulls_not_errors(tmp_path):
    proc, sysfs = tmp_path / "proc", tmp_path / "sys"
    s = H.collect_host_state(proc, sysfs, sample_s=0, sleep=lambda _s: None)
    for key in ("cpu_model", "cpu", "cpu_flags", "cpu_flags_sha256", "cores", "cpus_online", "governor",
                "boost", "thp", "aslr", "kernel", "loadavg", "memory", "btime", "cpu_ticks",
                "steal_since_boot", "window", "busiest", "hostname"):
        assert s[key] is None, key
    assert s["smt"] == {"active": None, "control": None}


def test_collector_survives_garbage(tmp_path, monkeypatch):
    proc, sysfs = make_tree(tmp_path, governor=None, boost=None)
    (proc / "loadavg").write_text("garbage\n")
    (proc / "stat").write_text("cpu a b c\n")
    (proc / "cpuinfo").write_text("nonsense without colon\n")
    (proc / "sys" / "kernel" / "randomize_va_space").write_text("x\n")
    (proc / "101" / "stat").write_text("101 (broken")
    (sysfs / "devices" / "system" / "cpu" / "online").write_text("0-x\n")
    s = H.collect_host_state(proc, sysfs, sample_s=0, sleep=lambda _s: None)
    assert s["loadavg"] is None and s["cpu_ticks"] is None and s["aslr"] is None
    assert s["cpu_model"] is None and s["cpu_flags"] is None
    assert s["cores"] is None
    assert s["governor"] == {"cpu0": None, "cpu1": None}  # found by globbing cpuN
    assert s["boost"] is None and s["boost_source"] is None


def test_boost_from_intel_pstate(tmp_path):
    proc, sysfs = make_tree(tmp_path, boost=None)
    d = sysfs / "devices" / "system" / "cpu" / "intel_pstate"
    d.mkdir()
    (d / "no_turbo").write_text("1\n")
    s = H.collect_host_state(proc, sysfs, sample_s=0, sleep=lambda _s: None)
    assert (s["boost"], s["boost_source"]) == (False, "intel_pstate/no_turbo")


def test_cpu_list_helpers():
    assert H.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert H.parse_cpu_list("") == []
    assert H.parse_cpu_list("a") is None
    assert H.format_cpu_list([5, 0, 1, 2]) == "0-2,5"


# ---------------------------------------------------------------- the real machine
def test_collector_on_this_machine():
    # its own cost beyond the 0.2 s sample stays small: CPU time, since the unit tests run beside the
    # fuzzers (scripts/test.sh), where the wall clock counts the neighbours' share of the core too
    t0, c0 = time.monotonic(), time.process_time()
    s = H.collect_host_state(sample_s=0.2)
    assert time.monotonic() - t0 >= 0.2
    assert time.process_time() - c0 < 0.8
    for key in ("utc", "cpu_model", "cpu", "cpu_flags", "cpu_flags_sha256", "cores", "smt", "governor",
                "boost", "thp", "aslr", "kernel", "loadavg", "memory", "busiest", "steal_since_boot",
                "window", "cpu_ticks"):
        assert key in s, key
    assert s["cores"] == os.cpu_count()
    assert s["affinity"] == sorted(os.sched_getaffinity(0))
    assert s["kernel"]["release"] == os.uname().release
    assert all(p["pid"] != os.getpid() for p in s["busiest"])
    assert H.fact_changes(s, json.loads(json.dumps(s))) == []


def test_cli_prints_json_and_writes_a_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "httplab", "host-state", "--sample", "0.1",
                          "--exclude-pid", "1"], capture_output=True, text=True, check=True, cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert doc["cores"] == os.cpu_count() and 1 in doc["excluded_pids"]
    target = tmp_path / "host.start.json"
    subprocess.run([sys.executable, "-m", "httplab", "host-state", "--sample", "0", "-o", str(target)],
                   check=True, cwd=REPO)
    assert json.loads(target.read_text())["schema"] == H.SCHEMA
    assert not (tmp_path / "host.start.json.tmp").exists()


# ---------------------------------------------------------------- host_changes
@pytest.fixture
def state(tmp_path, monkeypatch):
    proc, sysfs = make_tree(tmp_path)
    s = H.collect_host_state(proc, sysfs, sample_s=0, sleep=lambda _s: None)
    s["busiest"] = [{"pid": 7, "comm": "sshd", "cpu_pct": 1.0, "last_cpu": 0, "cmd": None}]
    return s


def test_no_changes_between_equal_states(state):
    assert H.host_changes(state, copy.deepcopy(state)) == []
    assert H.host_changes(state, None) == [] and H.host_changes(None, None) == []


@pytest.mark.parametrize("path,value,expect", [
    (("cpu_model",), "Intel(R) Xeon(R) Platinum 8375C", "CPU model changed: AMD EPYC → Intel(R) Xeon"),
    (("cpu", "microcode"), "0x1000066", "microcode changed: 0x1000065 → 0x1000066"),
    (("cores",), 4, "online cores changed: 2 → 4"),
    (("governor",), {"cpu0": "powersave", "cpu1": "performance"}, "governor changed"),
    (("boost",), False, "boost changed: on → off"),
    (("smt", "active"), True, "SMT changed: off → on"),
    (("thp",), "always", "transparent huge pages changed: madvise → always"),
    (("aslr",), 0, "ASLR changed: 2 → 0"),
    (("kernel", "release"), "6.2.0", "kernel changed: 6.1.0-fake → 6.2.0"),
    (("btime",), 1795429999, "the host rebooted"),
    (("boost",), None, "boost changed: on → not readable"),
])
def test_fact_changes_are_warnings(state, path, value, expect):
    end = copy.deepcopy(state)
    target = end
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    changes = H.host_changes(state, end)
    assert len(changes) == 1 and changes[0].startswith(expect), changes


def test_flag_change_names_the_flags(state):
    end = copy.deepcopy(state)
    end["cpu_flags"] = sorted(set(end["cpu_flags"]) - {"avx512f"} | {"amx_tile"})
    end["cpu_flags_sha256"] = "0" * 12
    (msg,) = H.host_changes(state, end)
    assert msg == "CPU flags changed (added amx_tile; removed avx512f)"


def test_busy_processes_warn_and_load_does_not(state):
    end = copy.deepcopy(state)
    # our own suite (8-thread pools pinned to one core) makes the load average high: shown, no warning
    end["loadavg"]["1m"] = 9.5
    end["busiest"] = [{"pid": 9, "comm": "apt", "cpu_pct": H.BUSY_PROCESS_WARN_PCT + 1},
                      {"pid": 10, "comm": "cron", "cpu_pct": H.BUSY_PROCESS_WARN_PCT}]
    changes = H.host_changes(state, end)
    assert changes == ["other processes busy at the end (% of one core): apt (pid 9) 6 %"]


def test_steal_over_the_suite(state):
    end = copy.deepcopy(state)
    for k, v in end["cpu_ticks"].items():
        v["total"] += 1000
        v["steal"] += 50 if k in ("cpu1", "all") else 0
    steal = H.steal_between(state, end)
    assert steal["cpu0"] == 0 and steal["cpu1"] == pytest.approx(0.05)
    (msg,) = H.host_changes(state, end)
    assert msg.startswith("CPU steal during the suite 5.0% on")
    end["btime"] += 1  # rebooted: steal not computable, the reboot is the warning
    assert H.steal_between(state, end) is None
    assert H.host_changes(state, end) == ["the host rebooted (its boot time changed)"]


# ---------------------------------------------------------------- raw/ reader and the header
def test_read_host_states(tmp_path, state):
    run = tmp_path / "run"
    (run / "http1").mkdir(parents=True)
    assert H.read_host_states(run, "http1") == {"start": None, "end": None}
    (run / "http1" / "host.start.json").write_text(json.dumps(state))
    got = H.read_host_states(run, "http1")
    assert got["start"] == state and got["end"] is None
    (run / "http1" / "host.end.json").write_text("{\"cpu_model\": ")
    with pytest.raises(RawFormatError, match="host.end.json"):
        H.read_host_states(run, "http1")


def _header(raw_run: Path, tmp_path: Path) -> str:
    build_data(raw_run, tmp_path / "out")   # the one build step; the report reads only data/
    ctx = open_report("http1", run_dir=raw_run, out_dir=tmp_path / "out", start=REPO, baseline="go")
    return header_markdown(ctx, "HTTP/1.1")


def test_header_without_host_files(tmp_path):
    run = make_fake_run(tmp_path / "raw", reps=2)
    text = _header(run, tmp_path)
    assert "| Host state | not recorded" in text
    assert "⚠" not in text
    assert "| CPU | Fake CPU @ 3.0GHz, 2 cores |" in text


def _with_states(run: Path, start: dict | None, end: dict | None, meta_state: dict | None = None) -> None:
    for name, s in (("host.start.json", start), ("host.end.json", end)):
        if s is not None:
            (run / "http1" / name).write_text(json.dumps(s))
    meta = json.loads((run / "meta.json").read_text())
    meta["host"]["cpu_model"] = "AMD EPYC"
    if meta_state is not None:
        meta["host_state"] = meta_state
    (run / "meta.json").write_text(json.dumps(meta))


def test_header_with_quiet_host_files(tmp_path, state):
    run = make_fake_run(tmp_path / "raw", reps=2)
    end = copy.deepcopy(state)
    for k, v in end["cpu_ticks"].items():
        v["total"] += 1000
        v["steal"] += 1 if k != "cpu0" else 0
    _with_states(run, state, end, meta_state=state)
    text = _header(run, tmp_path)
    assert "⚠" not in text
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "microcode 0x1000065" in rows["CPU details"] and f"sha256 `{state['cpu_flags_sha256']}`" in rows["CPU details"]
    assert "avx512f" not in text  # no flag list
    assert "2 online (`0-1`); SMT off (control: notsupported)" in rows["Cores / SMT"]
    assert "performance on every CPU (driver acpi-cpufreq)" in rows["Governor"]
    assert "on (cpufreq/boost)" in rows["Boost"]
    assert "madvise (defrag: madvise)" in rows["Transparent huge pages"]
    assert "2 (full" in rows["ASLR"]
    assert "6.1.0-fake (#1 SMP PREEMPT_DYNAMIC Debian 6.1.0)" in rows["Kernel (host state)"]
    assert "suite start 0.54 / 0.43 / 0.18; suite end 0.54 / 0.43 / 0.18" in rows["Load average 1/5/15 min"]
    assert "none above 5 % of a core" in rows["Other busy processes"]
    assert "0.1% over the suite (cpu0 0.0%, cpu1 0.1%)" in rows["CPU steal"]
    assert "23.5 GiB total" in rows["Memory"]
    assert "Host state" not in rows
    # every host row sits between the Kernel row and the Pinning row, one per fact
    keys = list(rows)
    assert keys.index("Kernel") < keys.index("CPU details") < keys.index("Memory") < keys.index("Pinning")


def test_header_warns_when_the_host_moved(tmp_path, state):
    run = make_fake_run(tmp_path / "raw", reps=2)
    end = copy.deepcopy(state)
    end["cpu"]["microcode"] = "0x1000066"
    end["governor"] = {"cpu0": "powersave", "cpu1": "powersave"}
    end["busiest"] = [{"pid": 9, "comm": "unattended|upgr", "cpu_pct": 40.0}]
    _with_states(run, state, end)
    text = _header(run, tmp_path)
    warn = next(line for line in text.splitlines() if "⚠" in line)
    assert warn.startswith("> **⚠ The host changed during this suite:**")
    assert "microcode changed: 0x1000065 → 0x1000066" in warn and "governor changed" in warn
    assert "unattended|upgr (pid 9) 40 %" in warn
    assert text.index("⚠") < text.index("| Item | Value |")
    assert "start: AMD EPYC, AuthenticAMD family 26 model 2 stepping 1, microcode 0x1000065" in text
    assert "unattended\\|upgr" in text  # escaped in the table cell


def test_header_warns_on_a_cpu_model_other_than_meta(tmp_path, state):
    run = make_fake_run(tmp_path / "raw", reps=2)
    other = copy.deepcopy(state)
    other["cpu_model"] = "Intel(R) Xeon(R)"
    _with_states(run, other, copy.deepcopy(other), meta_state=state)
    text = _header(run, tmp_path)
    assert "CPU model at the suite start and suite end is Intel(R) Xeon(R), meta.json records AMD EPYC" in text
    assert "since the run started, CPU model changed: AMD EPYC → Intel(R) Xeon(R)" in text


def test_header_with_only_the_start_file(tmp_path, state):
    run = make_fake_run(tmp_path / "raw", reps=2)
    _with_states(run, state, None)
    text = _header(run, tmp_path)
    assert "(suite start; end not recorded)" in text
    assert "suite end not recorded" in text and "⚠" not in text
    assert "since boot (at the suite start)" in text


def test_header_with_only_the_end_file(tmp_path, state):
    run = make_fake_run(tmp_path / "raw", reps=2)
    _with_states(run, None, state)
    text = _header(run, tmp_path)
    assert "(suite end; start not recorded)" in text and "suite start not recorded" in text


def test_header_raises_on_a_malformed_host_file(tmp_path):
    run = make_fake_run(tmp_path / "raw", reps=2)
    (run / "http1" / "host.start.json").write_text("[1, 2]")
    with pytest.raises(RawFormatError, match="host.start.json"):
        _header(run, tmp_path)
