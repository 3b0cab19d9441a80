"""The report header's facts about the host: its state at a part's start and end (CPU, cores and
SMT, governor, boost, THP, ASLR, kernel, load, busy processes, steal, memory), compared with each
other and with meta.json, and the host mode each part ran in. Read from the run's facts
(data/<run_id>/run.json), never from raw/."""
from __future__ import annotations

from typing import Any

from ..tidy.rawrun import RawRun


def fmt_utc(value: Any) -> str:
    return str(value).replace("T", " ") if value else "—"


def cell_text(text: Any) -> str:
    """A value made safe for one Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def as_dict(value: Any) -> dict[str, Any]:
    """value if it is a dict, else {} (a hand-edited host file must not break the header)."""
    return value if isinstance(value, dict) else {}


def _start_end(start: str, end: str | None, only: str = "") -> str:
    """One value when start and end agree, else both; `only` labels a lone value (end missing)."""
    if end is None:
        return f"{start} ({only})"
    return start if start == end else f"start: {start}; end: {end}"


def _cpu_detail(s: dict[str, Any]) -> str:
    cpu = as_dict(s.get("cpu"))
    parts = [str(s.get("cpu_model") or "model not readable")]
    if cpu.get("vendor_id"):
        parts.append(f"{cpu['vendor_id']} family {cpu.get('family', '?')} model {cpu.get('model', '?')} "
                     f"stepping {cpu.get('stepping', '?')}")
    parts.append(f"microcode {cpu.get('microcode') or 'not readable'}")
    if s.get("cpu_flags_count") is not None:
        parts.append(f"{s['cpu_flags_count']} flags (sha256 `{s.get('cpu_flags_sha256')}`)")
    return ", ".join(parts)


def _cores_smt(s: dict[str, Any]) -> str:
    smt = as_dict(s.get("smt"))
    active = smt.get("active")
    smt_txt = "not readable" if active is None else ("on" if active else "off")
    if smt.get("control"):
        smt_txt += f" (control: {smt['control']})"
    online = f" (`{s['cpus_online']}`)" if s.get("cpus_online") else ""
    return f"{s.get('cores') if s.get('cores') is not None else '?'} online{online}; SMT {smt_txt}"


def _governor(s: dict[str, Any]) -> str:
    gov = as_dict(s.get("governor"))
    vals = set(gov.values())
    if not gov or vals == {None}:
        txt = "not exposed (no cpufreq in /sys)"
    elif len(vals) == 1:
        txt = f"{next(iter(vals))} on every CPU"
    else:
        txt = ", ".join(f"{k} {v or 'not readable'}" for k, v in gov.items())
    return txt + (f" (driver {s['cpufreq_driver']})" if s.get("cpufreq_driver") else "")


def _boost(s: dict[str, Any]) -> str:
    if s.get("boost") is None:
        return "not exposed"
    return f"{'on' if s['boost'] else 'off'} ({s.get('boost_source')})"


def _thp(s: dict[str, Any]) -> str:
    thp = s.get("thp") or "not readable"
    return f"{thp} (defrag: {s['thp_defrag']})" if s.get("thp_defrag") else thp


def _kernel(s: dict[str, Any]) -> str:
    k = as_dict(s.get("kernel"))
    if not k.get("release"):
        return "not readable"
    return f"{k['release']} ({k['version']})" if k.get("version") else str(k["release"])


def _load(s: dict[str, Any] | None) -> str:
    la = as_dict(as_dict(s).get("loadavg"))
    if not la:
        return "not recorded"
    try:
        return " / ".join(f"{float(la[k]):.2f}" for k in ("1m", "5m", "15m"))
    except (KeyError, TypeError, ValueError):
        return "not readable"


def _busy_procs(s: dict[str, Any] | None) -> str:
    from ..lab.hoststate import BUSY_PROCESS_WARN_PCT
    if s is None:
        return "not recorded"
    if not isinstance(s.get("busiest"), list):
        return "not readable"
    busy = [p for p in s["busiest"] if isinstance(p, dict) and isinstance(p.get("cpu_pct"), (int, float))
            and p["cpu_pct"] > BUSY_PROCESS_WARN_PCT]
    if not busy:
        return f"none above {BUSY_PROCESS_WARN_PCT:g} % of a core"
    return ", ".join(f"{p.get('comm')} (pid {p.get('pid')}) {p['cpu_pct']:.0f} %" for p in busy)


def _steal(start: dict[str, Any], end: dict[str, Any] | None, where: str = "suite start") -> str:
    from ..lab.hoststate import steal_between
    steal = steal_between(start, end)
    if steal:
        per_cpu = ", ".join(f"{k} {v:.1%}" for k, v in steal.items() if k != "all")
        total = steal.get("all")
        head = f"{total:.1%} over the suite" if total is not None else "over the suite"
        return f"{head} ({per_cpu})" if per_cpu else head
    boot = as_dict(start.get("steal_since_boot")).get("all")
    return f"{boot:.2%} since boot (at the {where})" if boot is not None else "not readable"


def _memory(s: dict[str, Any], where: str = "suite start") -> str:
    mem = as_dict(s.get("memory"))
    if mem.get("total_kb") is None:
        return "not readable"
    avail = mem.get("available_kb")
    return (f"{mem['total_kb'] / 1024**2:.1f} GiB total"
            + (f", {avail / 1024**2:.1f} GiB available at the {where}" if avail is not None else ""))


def host_state_markdown(run: RawRun, suite: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(warnings, table rows) for the suite's host state at its start and end (the run's facts:
    host.{start,end}.json as built into data/, httplab.lab.hoststate), compared with each other,
    with meta.json's host block and with the run's start state (meta.json host_state). A run without
    host files gets one 'not recorded' row."""
    from ..lab.hoststate import aslr_text, fact_changes, host_changes
    meta = run.meta
    states = run.part_facts(suite).get("host_states") or {}
    start, end = states.get("start"), states.get("end")
    run_start = meta.get("host_state") if isinstance(meta.get("host_state"), dict) else None
    warnings = host_changes(start, end)
    if run_start is not None and start is not None:
        warnings += [f"since the run started, {w}" for w in fact_changes(run_start, start)]
    meta_model = (meta.get("host") or {}).get("cpu_model")
    other: dict[str, list[str]] = {}  # a CPU model other than meta.json's -> where it was seen
    for label, s in (("run start", run_start), ("suite start", start), ("suite end", end)):
        if meta_model and s is not None and s.get("cpu_model") and s["cpu_model"] != meta_model:
            other.setdefault(str(s["cpu_model"]), []).append(label)
    for model, labels in other.items():
        warnings.append(f"CPU model at the {' and '.join(labels)} is {model}, meta.json records {meta_model}")
    warnings = list(dict.fromkeys(warnings))
    if start is None and end is None:
        return warnings, [("Host state", "not recorded (no host.start.json / host.end.json for this suite)")]
    s0, s1 = start, end  # as recorded, for the rows that show both ends
    if start is None:  # only the end: show it as such
        start, end, where, only = end, None, "suite end", "suite end; start not recorded"
    else:
        where, only = "suite start", "suite start; end not recorded"

    def fact(fn: Any) -> str:
        return _start_end(fn(start), fn(end) if end is not None else None, only)

    rows = [
        ("CPU details", fact(_cpu_detail)),
        ("Cores / SMT", fact(_cores_smt)),
        ("Governor", fact(_governor)),
        ("Boost", fact(_boost)),
        ("Transparent huge pages", fact(_thp)),
        ("ASLR", fact(lambda s: aslr_text(s.get("aslr")))),
        ("Kernel (host state)", fact(_kernel)),
        ("Load average 1/5/15 min", f"suite start {_load(s0)}; suite end {_load(s1)}"),
        ("Other busy processes", f"suite start: {_busy_procs(s0)}; suite end: {_busy_procs(s1)}"),
        ("CPU steal", _steal(start, end, where)),
        ("Memory", _memory(start, where)),
    ]
    return warnings, rows


def hosts_line(run: RawRun, suite: str) -> str:
    """The host mode of each suite the report reads (its hosts.json, as built into data/), one clause
    per distinct mode; runs made before host modes ran locally."""
    from ..lab.hosts import hosts_of
    parts = [str(s) for s in run.suites["suite"]] if not run.suites.empty else [suite]
    said: dict[str, list[str]] = {}
    for part in parts:
        doc = run.part_facts(part).get("hosts")
        h = hosts_of(doc, f"{run.run_dir}/{part}/hosts.json") if doc else None
        said.setdefault(h.words() if h else "local: this machine over loopback (before host modes were "
                        "recorded)", []).append(suite)
    if len(said) == 1:
        return next(iter(said))
    return "; ".join(f"{', '.join(f'`{s}`' for s in ss)}: {w}" for w, ss in said.items())
