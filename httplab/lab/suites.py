"""The suite registry: every folder of suites/ with a suite.toml is a suite, and nothing outside
its folder names it. The shell side (scripts/lib/suites.sh) reads the same folders.

A suite's folder holds
  suite.toml      its declaration (below)
  <name>.sh       its scenario matrix, when it runs as one part, or one <name>_<x>.sh per part
                  (a part is a directory of raw/<run_id>/; a server starts in one mode per part)
  report.ipynb    its report; without one, notebooks/suite.ipynb reports it from `sections`

suite.toml:
  title = "…"           the report's title
  [seed]                the published write-up the suite mirrors (docs/glossary.md), if any, as data:
                        number, title, setup, kind ("claims": [[seed.claims]] what, text, points =
                        [[scenario, its event loop's req/s, Go's]], and a peak; "ranking": stdlib_avg,
                        language -> req/s); httplab.report.findings sets it beside the run
  order = 10            run_all.sh runs suites low first (1000 when absent)
  baseline = "go"       the server the generic report's Δ columns compare with
  headline = {part = "scenario"}   the index page's headline point of each part (the contestant's
                        req/s there and its Δ against the report's baseline)
  [compare]
  scenario_pairs = [[part, scenario_a, scenario_b], …]   one server's two scenarios, paired by rep
  suite_pairs = [[part_a, part_b, scenario_a, scenario_b], …]   one server across two parts
  [composites.<name>]   part = "…", scenarios = […]: per rep the mean req/s of these scenarios
  [wording]             latency_note = "…"; [wording.sections.<key prefix>] caption words
  [[sections]]          key, title, where = {column = value}, vary, vary_label: a table of the
                        generic report (rows: the `vary` column; one column per server)
  [full]                the suite's own design in the full profile, where it differs from the
                        profile's (3 s runs after 1 s of warm-up, 5 reps, server blocks): blocks
                        ("server", "scenario", "sliced"), reps, duration_s, warmup_s, latency_every
                        (docs/method.md, "Sizing the reps"); a flag given to run_all.sh overrides it
"""
from __future__ import annotations

import importlib.util
import sys
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

DEFAULT_ORDER = 1000
# [full]: key -> (the shell variable scripts/lib/suite.sh sets from it, the least whole number it
# takes; None: one of BLOCKS)
FULL_KEYS: dict[str, tuple[str, int | None]] = {
    "blocks": ("BLOCKS", None), "reps": ("REPS", 1), "duration_s": ("DURATION", 1),
    "warmup_s": ("WARMUP", 0), "latency_every": ("LATENCY_EVERY", 1),
}
BLOCKS = ("server", "scenario", "sliced")


class SuiteError(ValueError):
    """A suite folder that does not declare what it must (names the file)."""


def suites_dir(root: Path | None = None) -> Path:
    """The suites/ folder of the repository (beside this package)."""
    return (root or Path(__file__).resolve().parents[2]) / "suites"


@dataclass(frozen=True)
class Suite:
    name: str
    folder: Path
    parts: tuple[str, ...]
    title: str
    seed: str | None = None   # the write-up's number ("000"), from [seed]
    seed_doc: dict[str, Any] = field(default_factory=dict)   # the whole [seed] table
    order: int = DEFAULT_ORDER
    baseline: str | None = None
    headline: dict[str, str] = field(default_factory=dict)
    scenario_pairs: tuple[tuple[str, str, str], ...] = ()
    suite_pairs: tuple[tuple[str, str, str, str], ...] = ()
    composites: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    wording: dict[str, Any] = field(default_factory=dict)
    sections: tuple[dict[str, Any], ...] = ()
    full: dict[str, Any] = field(default_factory=dict)   # [full]: its design in the full profile

    @property
    def notebook(self) -> Path | None:
        """The suite's own report notebook, None when the generic one reports it."""
        nb = self.folder / "report.ipynb"
        return nb if nb.is_file() else None

    def file(self, name: str) -> Path:
        """A file of the suite's folder (targets.toml, …)."""
        return self.folder / name


def _tuples(value: Any, width: int, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(v, list) and len(v) == width
                                              and all(isinstance(x, str) for x in v) for v in value):
        raise SuiteError(f"{where}: a list of [{width} strings] expected")
    return tuple(tuple(v) for v in value)


def curve_cell(value: Any, part: str, where: str) -> tuple[str, str]:
    """One end of a seed curve ([[seed.curves]] a or b): "scenario" (of the suite's first part) or
    [part, scenario]."""
    if isinstance(value, str):
        return part, value
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0], value[1]
    raise SuiteError(f"{where}: a scenario or [part, scenario] expected, got {value!r}")


def _curve_pairs(seed: dict[str, Any], part: str, where: str) -> tuple[list[tuple[str, str, str]],
                                                                       list[tuple[str, str, str, str]]]:
    """The comparisons the seed's curves need (httplab.stats.claims reads them): a scenario pair for
    two points of one part, a suite pair for two parts."""
    sp, xp = [], []
    for c in seed.get("curves", []):
        (pa, a), (pb, b) = curve_cell(c.get("a"), part, where), curve_cell(c.get("b"), part, where)
        if pa == pb:
            sp.append((pa, a, b))
        else:
            xp.append((pa, pb, a, b))
    return sp, xp


def full_design(value: Any, where: str) -> dict[str, Any]:
    """A suite's [full] table, checked: only FULL_KEYS, blocks one of BLOCKS, the others whole
    numbers at or above their least."""
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: a table expected")
    for key, v in value.items():
        if key not in FULL_KEYS:
            raise SuiteError(f"{where}: unknown key {key!r} (known: {', '.join(FULL_KEYS)})")
        least = FULL_KEYS[key][1]
        if least is None:
            if v not in BLOCKS:
                raise SuiteError(f"{where}: {key} must be one of {', '.join(BLOCKS)} (got {v!r})")
        elif isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise SuiteError(f"{where}: {key} must be a whole number ≥ {least} (got {v!r})")
    return dict(value)


def parts_of(folder: Path) -> tuple[str, ...]:
    """<name>.sh and <name>_*.sh in the folder, sorted (the shell's rule: scripts/lib/suites.sh)."""
    name = folder.name
    found = [p.stem for p in folder.glob("*.sh") if p.stem == name or p.stem.startswith(name + "_")]
    return tuple(sorted(found))


def load_suite(folder: Path) -> Suite:
    """One suite from its folder; SuiteError naming suite.toml for what it gets wrong."""
    toml = folder / "suite.toml"
    try:
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SuiteError(f"{toml}: {e}") from None
    parts = parts_of(folder)
    if not parts:
        raise SuiteError(f"{folder}: no part ({folder.name}.sh or {folder.name}_<part>.sh)")
    compare = data.get("compare", {})
    sp = _tuples(compare.get("scenario_pairs", []), 3, f"{toml} [compare] scenario_pairs")
    xp = _tuples(compare.get("suite_pairs", []), 4, f"{toml} [compare] suite_pairs")
    csp, cxp = _curve_pairs(data.get("seed") or {}, parts[0], f"{toml} [[seed.curves]]")
    sp = tuple(dict.fromkeys([*sp, *csp]))
    xp = tuple(dict.fromkeys([*xp, *cxp]))
    for pair in sp:
        if pair[0] not in parts:
            raise SuiteError(f"{toml}: scenario pair {list(pair)} names {pair[0]!r}, not a part of this suite {list(parts)}")
    for pair in xp:
        if pair[0] not in parts:
            raise SuiteError(f"{toml}: suite pair {list(pair)} must start with a part of this suite {list(parts)}")
    composites: dict[tuple[str, str], tuple[str, ...]] = {}
    for cname, c in data.get("composites", {}).items():
        if not isinstance(c, dict) or c.get("part") not in parts or not isinstance(c.get("scenarios"), list):
            raise SuiteError(f"{toml} [composites.{cname}]: part (one of {list(parts)}) and scenarios expected")
        composites[(c["part"], cname)] = tuple(str(s) for s in c["scenarios"])
    sections = data.get("sections", [])
    for s in sections:
        missing = {"key", "title", "where", "vary"} - set(s)
        if missing:
            raise SuiteError(f"{toml} [[sections]] {s.get('key', '?')!r}: missing {sorted(missing)}")
    order = data.get("order", DEFAULT_ORDER)
    if not isinstance(order, int):
        raise SuiteError(f"{toml}: order must be a whole number")
    return Suite(name=folder.name, folder=folder, parts=parts, title=str(data.get("title", folder.name)),
                 seed=(data.get("seed") or {}).get("number"), seed_doc=dict(data.get("seed") or {}),
                 order=order, baseline=data.get("baseline"),
                 headline={str(k): str(v) for k, v in data.get("headline", {}).items()},
                 scenario_pairs=sp, suite_pairs=xp,  # type: ignore[arg-type]
                 composites=composites, wording=data.get("wording", {}), sections=tuple(sections),
                 full=full_design(data.get("full", {}), f"{toml} [full]"))


@lru_cache(maxsize=4)
def _all(folder: Path) -> tuple[Suite, ...]:
    found = [load_suite(d) for d in sorted(folder.iterdir()) if (d / "suite.toml").is_file()] if folder.is_dir() else []
    return tuple(sorted(found, key=lambda s: (s.order, s.name)))


def all_suites(root: Path | None = None) -> tuple[Suite, ...]:
    """Every suite, in run order."""
    return _all(suites_dir(root))


def suite(name: str, root: Path | None = None) -> Suite:
    """The suite of that name; KeyError naming the known ones."""
    for s in all_suites(root):
        if s.name == name:
            return s
    raise KeyError(f"no suite {name!r} (known: {[s.name for s in all_suites(root)]})")


def suite_of_part(part: str, root: Path | None = None) -> Suite | None:
    """The suite a part (a directory of a raw run) belongs to; None for a part no suite declares."""
    for s in all_suites(root):
        if part in s.parts:
            return s
    return None


def suite_of_seed(number: str, root: Path | None = None) -> Suite | None:
    """The suite that mirrors a write-up ([seed] number, "000"); None when no suite does."""
    for s in all_suites(root):
        if s.seed_doc and str(s.seed_doc.get("number")) == str(number):
            return s
    return None


def seed_suites(root: Path | None = None) -> tuple[Suite, ...]:
    """The suites that mirror a write-up, in run order."""
    return tuple(s for s in all_suites(root) if s.seed_doc)


def scenario_pairs(root: Path | None = None) -> tuple[tuple[str, str, str], ...]:
    """Every suite's scenario pairs, sorted (a frame's row order must not hang on folder order)."""
    return tuple(sorted({p for s in all_suites(root) for p in s.scenario_pairs}))


def suite_pairs(root: Path | None = None) -> tuple[tuple[str, str, str, str], ...]:
    """Every suite's cross-part pairs, sorted."""
    return tuple(sorted({p for s in all_suites(root) for p in s.suite_pairs}))


def composites(root: Path | None = None) -> dict[tuple[str, str], tuple[str, ...]]:
    """Every suite's composite cells."""
    return {k: v for s in all_suites(root) for k, v in s.composites.items()}


def full_assignments(part: str, root: Path | None = None) -> list[str]:
    """The shell's view of a part's [full] table: VAR=value lines (scripts/lib/suite.sh,
    apply_profile); none for a part of no suite or a suite without the table."""
    s = suite_of_part(part, root)
    return [f"{FULL_KEYS[k][0]}={v}" for k, v in (s.full if s else {}).items()]


def main(argv: list[str] | None = None) -> int:
    """`python -m httplab suites`: one line per suite: its name, run order, parts and title;
    `--full PART`: the full profile's design of the part's suite, as VAR=value lines."""
    import argparse
    ap = argparse.ArgumentParser(description="List the suites (suites/<name>/) and their parts.")
    ap.add_argument("--full", metavar="PART", help="print the design the full profile runs PART in "
                    "(its suite's [full] table) as VAR=value lines for scripts/lib/suite.sh")
    a = ap.parse_args(argv)
    try:
        if a.full:
            for line in full_assignments(a.full):
                print(line)
            return 0
        for s in all_suites():
            print(f"{s.name}\torder {s.order}\tparts {' '.join(s.parts)}\t{s.title}")
    except SuiteError as e:
        print(f"httplab suites: {e}", file=sys.stderr)
        return 2
    return 0


def suite_module(name: str, module: str = "report") -> ModuleType:
    """The suite's own Python code, suites/<name>/<module>.py, imported once as
    `suites.<name>.<module>` (the suites' folders are not a package of httplab: a suite's code may use
    every layer of httplab, and nothing in httplab imports it by name). KeyError for an unknown
    suite, FileNotFoundError for a module the suite does not have."""
    full = f"suites.{name}.{module}"
    if full in sys.modules:
        return sys.modules[full]
    path = suite(name).folder / f"{module}.py"
    if not path.is_file():
        raise FileNotFoundError(f"suite {name!r} has no {module}.py ({path})")
    spec = importlib.util.spec_from_file_location(full, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[full] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[full]
        raise
    return mod


def has_module(name: str, module: str = "report") -> bool:
    """Whether the suite has suites/<name>/<module>.py."""
    return (suite(name).folder / f"{module}.py").is_file()
