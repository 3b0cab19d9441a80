"""The package's layers: every module imports only its own layer and the layers below it
(lab < parse < tidy < stats < report), there is no import circle, every module imports on its own, and
no module is dead (each is imported by another, run with `python -m`, or used by a notebook)."""
import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "httplab"
LAYERS = {"lab": 1, "parse": 2, "tidy": 3, "stats": 4, "report": 5}


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
    assert not loose, f"modules outside lab/, parse/, tidy/, stats/, report/: {loose}"


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


def test_no_dead_module():
    used_by_code = {d for deps in GRAPH.values() for d in deps}
    outside = "\n".join(p.read_text() for p in [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("suites/*/*.ipynb"), *ROOT.glob("suites/*/*.sh"), *ROOT.glob("scripts/*.sh"),
                                                 *ROOT.glob("scripts/**/*.sh")])
    dead = []
    for name, path in MODULES.items():
        if path.name == "__init__.py" or name in used_by_code:
            continue
        text = path.read_text()
        if 'if __name__ == "__main__"' in text or name in outside or name.rpartition(".")[2] in outside:
            continue
        dead.append(name)
    assert not dead, f"modules nothing imports or runs: {dead}"
