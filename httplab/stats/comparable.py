"""Whether two runs can be compared point by point: what their meta.json files say about the
machine, the CPU sets and the tools (raw/<run_id>/meta.json; docs/method.md, Pinning and The host).

A run-vs-run ratio is only about the change under test when everything else stayed put. A
difference in the host (CPU model, core count, kernel, host name), in the pinning (server_cpus,
client_cpus), in a tool's version or in the design (params.blocks) blocks the comparison
(scripts/compare.sh refuses unless --force, and then lists every difference). The load tools
(LOAD_TOOLS) are always checked; every other tool is checked when both runs recorded it. Other
differences (the other run parameters, the git commit) are listed but block nothing: the commit is
usually the change under test.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..tidy.rawrun import part_blocks

HOST_KEYS: tuple[str, ...] = ("cpu_model", "cores", "kernel", "hostname")
CPU_SET_KEYS: tuple[str, ...] = ("server_cpus", "client_cpus")
LOAD_TOOLS: tuple[str, ...] = ("wrk", "wrk_build", "h2load", "h2load_build")
NOT_RECORDED = "not recorded"
# A run made before meta.json recorded a load tool's build ran Debian's own: the lab's builds
# (scripts/setup.sh) keep Debian's version line, and what they change (when the clock starts, what
# ends a timed run) moves the figures, so the build is compared as the version is.
BUILD_BEFORE_RECORDED = "Debian's (not recorded: the run predates the lab's builds)"


@dataclass(frozen=True)
class Difference:
    """One fact the two runs disagree on: what (e.g. 'host.kernel', 'tools.wrk'), A's and B's
    value as text, and whether it blocks the comparison."""
    what: str
    a: str
    b: str
    blocking: bool = True

    def text(self) -> str:
        return f"{self.what}: A {self.a!r} ≠ B {self.b!r}"


def _d(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return NOT_RECORDED if value is None or value == "" else str(value).strip()


def _diff(what: str, a: Any, b: Any, blocking: bool = True) -> list[Difference]:
    ta, tb = _text(a), _text(b)
    return [] if ta == tb else [Difference(what, ta, tb, blocking)]


def host_differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """meta.json host.cpu_model, cores, kernel and hostname (a value recorded by one run only
    counts as a difference: nothing says they match)."""
    ha, hb = _d(meta_a.get("host")), _d(meta_b.get("host"))
    return [d for k in HOST_KEYS for d in _diff(f"host.{k}", ha.get(k), hb.get(k))]


def cpu_set_differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """server_cpus and client_cpus (the pinning)."""
    return [d for k in CPU_SET_KEYS for d in _diff(k, meta_a.get(k), meta_b.get(k))]


def tool_differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """The load tools always; any other tool recorded by both runs (its version line)."""
    ta, tb = _d(meta_a.get("tools")), _d(meta_b.get("tools"))
    keys = list(LOAD_TOOLS) + sorted((set(ta) & set(tb)) - set(LOAD_TOOLS))

    def value(tools: Mapping[str, Any], k: str) -> Any:
        if k.endswith("_build") and k not in tools and tools.get(k.removesuffix("_build")):
            return BUILD_BEFORE_RECORDED
        return tools.get(k)
    def said_by_its_tool(k: str) -> bool:
        # a build where a run lacks the tool itself: the tool's own line already differs
        base = k.removesuffix("_build")
        return k != base and not (ta.get(base) and tb.get(base))
    return [d for k in keys if not said_by_its_tool(k)
            for d in _diff(f"tools.{k}", value(ta, k), value(tb, k))]


def design_differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """The design (server, scenario or sliced blocks) of each part both runs ran, as
    'params.blocks (<part>)'; of the runs ('params.blocks') where they share no part."""
    b_parts = {str(p) for p in meta_b.get("suites") or ()}
    common = [str(p) for p in meta_a.get("suites") or () if str(p) in b_parts]
    if not common:
        return _diff("params.blocks", part_blocks(meta_a), part_blocks(meta_b))
    return [d for p in common for d in _diff(f"params.blocks ({p})", part_blocks(meta_a, p), part_blocks(meta_b, p))]


def info_differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """Differences that block nothing but belong in the report's header: the other run parameters
    (duration, warm-up, reps, A/A, ...) and the profile."""
    pa, pb = _d(meta_a.get("params")), _d(meta_b.get("params"))
    out = _diff("profile", meta_a.get("profile"), meta_b.get("profile"), False)
    # (params.given: which settings were flags, the run's own bookkeeping for its resumption)
    out += [d for k in sorted((set(pa) | set(pb)) - {"blocks", "given"})
            for d in _diff(f"params.{k}", pa.get(k), pb.get(k), False)]
    return out


def differences(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> list[Difference]:
    """Every difference between two runs' meta.json: the blocking ones (host, CPU sets, tools,
    design) first, then the informative ones."""
    return (host_differences(meta_a, meta_b) + cpu_set_differences(meta_a, meta_b)
            + tool_differences(meta_a, meta_b) + design_differences(meta_a, meta_b)
            + info_differences(meta_a, meta_b))


def blocking(diffs: list[Difference]) -> list[Difference]:
    return [d for d in diffs if d.blocking]


def git_line(meta: Mapping[str, Any]) -> str:
    """'abc1234' or 'abc1234 (dirty)' from meta.json git; 'not recorded' without it."""
    git = _d(meta.get("git"))
    commit = str(git.get("commit") or "")
    if not commit:
        return NOT_RECORDED
    return commit[:10] + (" (dirty)" if git.get("dirty") else "")
