"""The package's layers: every module imports only its own layer and the layers below it
(parse < lab < tidy < stats < report, and the command line, httplab.__main__, above them all), there
is no import circle, every module imports on its own, the reports never reach the raw layer (report
imports nothing of parse but its exception types), the shell's one way in is `python -m httplab VERB`
(no other module runs as __main__), and no module is dead (each is imported by another, is a verb's
module, or is used by a notebook)."""
import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "httplab"
LAYERS = {"parse": 1, "lab": 2, "tidy": 3, "stats": 4, "report": 5, "__main__": 6}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """httplab modules that `name` imports (anywhere in the file, relative or absolute)."""
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                mod = ".".join(anchor + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets.append(mod)
            targets += [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name and t.startswith("httplab"):
                found.add(t)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    parts = name.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def test_every_module_is_in_a_layer():
    loose = [m for m in MODULES if m != "httplab" and _layer(m) == 0]
    assert not loose, f"modules outside parse/, lab/, tidy/, stats/, report/ and the command line: {loose}"


def test_no_upward_import():
    bad = [f"{m} (layer {_layer(m)}) imports {d} (layer {_layer(d)})"
           for m, deps in GRAPH.items() if m != "httplab" for d in deps
           if _layer(d) > _layer(m) or (_layer(d) == 0 and d != "httplab")]
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in GRAPH.get(m, ()):
            if d == "httplab" or (m.startswith(d + ".") and MODULES[d].name == "__init__.py"):
                continue  # a module importing its own package's __init__ is not a circle of modules
            if state.get(d) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in GRAPH:
        if m not in state:
            visit(m)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_imports_on_its_own(name):
    importlib.import_module(name)


def _verb_modules() -> set[str]:
    from httplab.__main__ import VERBS
    return {f"httplab.{module}" for module, _ in VERBS.values()}


def test_report_never_reaches_the_raw_layer():
    """A report reads data/<run_id>/ only: nothing of parse (which knows the raw files) but the
    package's exception types."""
    bad = [f"{m} imports {d}" for m, deps in GRAPH.items() if _layer(m) == LAYERS["report"]
           for d in deps if _layer(d) == LAYERS["parse"] and d != "httplab.parse.errors"]
    assert not bad, "\n".join(bad)


def test_the_command_line_is_the_one_way_in():
    runs_itself = [m for m, p in MODULES.items() if m != "httplab.__main__" and '__name__ == "__main__"' in p.read_text()]
    assert not runs_itself, f"modules the shell could run on their own (use a verb of httplab.__main__): {runs_itself}"
    from httplab.__main__ import VERBS
    for verb, (module, _) in VERBS.items():
        assert f"httplab.{module}" in MODULES, verb
        assert callable(getattr(importlib.import_module(f"httplab.{module}"), "main", None)), f"{verb}: {module} has no main()"
    shell = "\n".join(p.read_text() for p in [*ROOT.glob("scripts/**/*.sh"), *ROOT.glob("suites/*/*.sh")])
    assert "-m httplab." not in shell, "the shell calls a module directly instead of `python -m httplab VERB`"


def test_no_dead_module():
    used_by_code = {d for deps in GRAPH.values() for d in deps} | _verb_modules()
    outside = "\n".join(p.read_text() for p in [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("suites/*/*.ipynb"), *ROOT.glob("suites/*/*.sh"), *ROOT.glob("scripts/*.sh"),
                                                 *ROOT.glob("scripts/**/*.sh")])
    dead = []
    for name, path in MODULES.items():
        if path.name in ("__init__.py", "__main__.py") or name in used_by_code:
            continue
        text = path.read_text()
        if name in outside or name.rpartition(".")[2] in outside:
            continue
        dead.append(name)
    assert not dead, f"modules nothing imports or runs: {dead}"
