"""The C server's layers (servers/evloop/): its folders depend one way, its files form no cycle.

Each folder is a layer, lowest first (LAYERS below). A file may include and call its own folder's
files and those of lower layers only: folders of the same rank (http1, http2, app) not each other.
Checked, for every .c/.h outside tests/ and fuzz/:

- `#include "..."`: every quoted include resolves to a file of the tree (next to the includer,
  else from the server's root, as the Makefile's -I. finds it), points to its own or a lower
  layer, and the include graph between files has no cycle;
- the file-level call graph (file A -> file B when A uses a function or object B defines with
  external linkage) has no cycle and no edge up the layers. It is derived from the sources
  (definitions at file scope, identifiers used elsewhere, member names after `.`/`->` left out),
  and, where the bench build's objects are there and newer than their sources
  (build/obj/bench/<folder>/<file>.o), again exactly from `nm` (defined vs undefined symbols),
  which also sees the calls that macros expand to;
- no file is longer than MAX_LINES (tests/ excepted).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVLOOP = ROOT / "servers" / "evloop"
OBJ = ROOT / "build" / "obj" / "bench"

# folder -> rank; "" is the top level (the programs, their command line, the protocol table).
LAYERS = {
    "loop": 0,  # the event loop and its kernel backends (epoll, io_uring)
    "net": 1,  # connections, transports, the listener, worker processes
    "http": 2,  # what both protocols share: the router, the status table, sbuf
    "http1": 3,  # the HTTP/1 handler and its parser and chunked decoder
    "http2": 3,  # the HTTP/2 handler and its codec
    "http3": 3,  # HTTP/3 over QUIC: the UDP endpoint, ngtcp2 connections, nghttp3 glue
    "app": 3,  # the application's routes, query decoding, JSON
    "": 4,
}
EXCLUDED = {"tests", "fuzz"}
MAX_LINES = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _sources() -> list[Path]:
    return sorted(
        p for p in EVLOOP.rglob("*")
        if p.suffix in (".c", ".h") and p.relative_to(EVLOOP).parts[0] not in EXCLUDED
    )


def _folder(p: Path) -> str:
    rel = p.relative_to(EVLOOP)
    return rel.parts[0] if len(rel.parts) > 1 else ""


def _rel(p: Path) -> str:
    return str(p.relative_to(EVLOOP))


def _allowed(src: Path, dst: Path) -> bool:
    a, b = _folder(src), _folder(dst)
    return a == b or LAYERS[b] < LAYERS[a]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle as [a, b, ..., a] where each file uses the next, or None."""
    try:
        TopologicalSorter(graph).prepare()  # (graph: file -> the files it uses, done first)
    except CycleError as e:
        return list(reversed(e.args[1]))
    return None


def _check_edges(graph: dict[str, set[str]], what: str) -> None:
    up = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs
                if not _allowed(EVLOOP / a, EVLOOP / b))
    assert not up, f"{what} from a lower layer into a higher one (or a sibling): {up}"
    cycle = _cycle(graph)
    assert cycle is None, f"{what} cycle (a -> b: a uses b): {' -> '.join(cycle)}"


def test_every_file_is_in_a_layer():
    stray = [_rel(p) for p in _sources() if _folder(p) not in LAYERS]
    assert not stray, f"C files in a folder with no declared layer (add it to LAYERS): {stray}"


def test_no_file_over_max_lines():
    files = [p for p in EVLOOP.rglob("*") if p.suffix in (".c", ".h")
             and p.relative_to(EVLOOP).parts[0] != "tests"]
    long = {_rel(p): n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them along a seam): {long}"


def _include_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    unresolved = []
    for p in _sources():
        deps = graph.setdefault(_rel(p), set())
        for name in INCLUDE.findall(p.read_text()):
            for cand in (p.parent / name, EVLOOP / name):
                if cand.is_file():
                    deps.add(_rel(Path(os.path.normpath(cand))))
                    break
            else:
                unresolved.append(f"{_rel(p)}: {name}")
    assert not unresolved, f"quoted includes that name no file of the tree: {unresolved}"
    return graph


def test_includes_point_down_and_form_no_cycle():
    _check_edges(_include_graph(), "include")


# ---- the call graph from the sources ----

_STRIP = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_PREPROC = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
_IDENT = re.compile(r'[A-Za-z_]\w*')
_TYPE_START = re.compile(r'^\s*(?:typedef\b|struct\b|union\b|enum\b)')


def _code(p: Path) -> str:
    """The file without comments, string and character literals, or preprocessor lines."""
    text = _STRIP.sub(lambda m: " " if m.group(0)[0] == "/" else '""', p.read_text())
    return _PREPROC.sub("", text)


def _external_definitions(code: str) -> set[str]:
    """Names a .c file defines at file scope with external linkage (functions, objects)."""
    names: set[str] = set()
    depth, start, kind = 0, 0, None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                if "=" in head:
                    kind = "data"
                elif "(" in head and not _TYPE_START.match(head):
                    kind = "function"
                else:
                    kind = "type"
                if kind != "type" and not re.search(r'\b(static|extern)\b', head):
                    name = _declared_name(head, kind)
                    if name:
                        names.add(name)
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and kind == "function":
                start, kind = i + 1, None
        elif ch == ";" and depth == 0:
            head = code[start:i]
            # (after a type's or an initializer's braces the statement ends here: seen already)
            if (kind is None and not _TYPE_START.match(head)
                    and not re.search(r'\b(static|extern|typedef)\b', head)
                    and ("=" in head or "(" not in head)):
                name = _declared_name(head, "data")
                if name:
                    names.add(name)
            start, kind = i + 1, None
    names.discard("main")
    return names


def _declared_name(head: str, kind: str) -> str | None:
    if kind == "function":
        m = re.search(r'([A-Za-z_]\w*)\s*\(', head)
        return m.group(1) if m else None
    if kind == "data":
        decl = head.split("=", 1)[0]
        decl = re.sub(r'\[[^\]]*\]', " ", decl)
        ids = _IDENT.findall(decl)
        return ids[-1] if ids else None
    return None


def _used_identifiers(code: str) -> set[str]:
    """Identifiers a file uses, without member names (after `.` or `->`)."""
    return {m.group(2) for m in re.finditer(r'(\.|->)?\s*\b([A-Za-z_]\w*)', code)
            if not m.group(1)}


def _source_call_graph() -> dict[str, set[str]]:
    cfiles = [p for p in _sources() if p.suffix == ".c"]
    codes = {_rel(p): _code(p) for p in cfiles}
    owner: dict[str, str] = {}
    for f, code in codes.items():
        for name in _external_definitions(code):
            assert name not in owner, f"{name} defined in both {owner[name]} and {f}"
            owner[name] = f
    graph = {f: set() for f in codes}
    for f, code in codes.items():
        for name in _used_identifiers(code):
            if name in owner and owner[name] != f:
                graph[f].add(owner[name])
    return graph


def test_source_call_graph_points_down_and_has_no_cycle():
    graph = _source_call_graph()
    # The derivation must see the files' real definitions (a check that checks nothing passes).
    used = {b for bs in graph.values() for b in bs}
    for f in ("loop/ae.c", "net/conn.c", "http/routes.c", "http2/h2_stream.c"):
        assert f in used, f"no file calls {f}: the source scan is broken"
    _check_edges(graph, "call (from the sources)")


def test_the_two_old_cycles_stay_broken():
    """h2_out.c and h2_stream.c called each other; the router called the shoot-out's routes."""
    graph = _source_call_graph()
    assert "http2/h2_out.c" not in graph["http2/h2_stream.c"]
    assert not [b for b in graph["http/routes.c"] if _folder(EVLOOP / b) != "http"]
    router = _code(EVLOOP / "http" / "routes.c") + _code(EVLOOP / "http" / "routes.h")
    assert "shootout" not in router


# ---- the call graph from the objects ----

def _objects() -> tuple[dict[str, Path] | None, str]:
    cfiles = [p for p in _sources() if p.suffix == ".c"]
    objs = {_rel(p): OBJ / p.relative_to(EVLOOP).with_suffix(".o") for p in cfiles}
    if not shutil.which("nm"):
        return None, "nm is not installed"
    missing = [f for f, o in objs.items() if not o.is_file()]
    if missing:
        return None, (f"the bench objects are not built ({len(missing)} missing under {OBJ}, "
                      f"e.g. {objs[missing[0]]}): make -C servers/evloop bench")
    stale = [f for f, o in objs.items() if o.stat().st_mtime < (EVLOOP / f).stat().st_mtime]
    if stale:
        return None, f"the bench objects are older than their sources ({stale[:3]}): rebuild"
    return objs, ""


def test_object_call_graph_points_down_and_has_no_cycle():
    objs, why = _objects()
    if objs is None:
        pytest.skip(f"object-level call graph not checked: {why} "
                    "(the source-level one above still ran)")
    by_path = {str(o): f for f, o in objs.items()}
    out = subprocess.run(["nm", "-g", "-A", *map(str, objs.values())],
                         capture_output=True, text=True, check=True).stdout
    defined: dict[str, str] = {}
    undefined: dict[str, set[str]] = {f: set() for f in objs}
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        fields = rest.split()
        if len(fields) < 2 or path not in by_path:
            continue
        kind, name = fields[-2], fields[-1]
        if kind in "Uw":
            undefined[by_path[path]].add(name)
        elif name != "main":
            defined[name] = by_path[path]
    graph = {f: {defined[s] for s in syms if s in defined and defined[s] != f}
             for f, syms in undefined.items()}
    assert "loop/ae.c" in {b for bs in graph.values() for b in bs}, "nm saw no calls"
    _check_edges(graph, "call (from nm)")
