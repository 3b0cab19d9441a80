"""A report notebook executed inside the running kernel, as if its cells were the caller's: a
write-up notebook (notebooks/http1.ipynb, …) shows a suite's own report (suites/<name>/report.ipynb,
or notebooks/suite.ipynb for a suite without one) without copying its cells.

Papermill's way, in one process: the cell tagged `parameters` runs first, then the given parameters
override what it set, then every other cell runs in order in a namespace of the notebook's own (so
two reports shown one after the other never see each other's variables). A markdown cell is
displayed as Markdown; a code cell whose last statement is an expression displays its value, as
Jupyter does. An exception in a cell propagates, naming the notebook and the cell."""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any


class NotebookCellError(RuntimeError):
    """A cell of the inlined notebook raised (the message names the notebook and the cell)."""


def cells(path: Path) -> list[dict[str, Any]]:
    """The notebook's cells (nbformat 4 JSON), each with its source as one string."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for c in doc.get("cells", []):
        src = c.get("source", "")
        out.append({**c, "source": "".join(src) if isinstance(src, list) else str(src)})
    return out


def is_parameters(cell: dict[str, Any]) -> bool:
    return "parameters" in (cell.get("metadata") or {}).get("tags", [])


def parameter_names(path: Path) -> set[str]:
    """The names the notebook's parameters cell assigns (what it accepts as parameters)."""
    names: set[str] = set()
    for c in cells(path):
        if c["cell_type"] == "code" and is_parameters(c):
            for node in ast.parse(c["source"]).body:
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) else [])
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def run_code(source: str, namespace: dict[str, Any], where: str) -> Any:
    """Execute a code cell's source in namespace; the value of its last statement when that is an
    expression (None otherwise)."""
    tree = ast.parse(source, filename=where)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, where, "exec"), namespace)  # noqa: S102 (the lab's own notebooks)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), where, "eval"), namespace)  # noqa: S307


def run_notebook(path: Path, parameters: dict[str, Any]) -> dict[str, Any]:
    """Every cell of the notebook at path, in this kernel, with `parameters` in place of its
    parameters cell's values (a name the cell does not assign is refused: ValueError). The
    notebook's namespace afterwards."""
    from IPython.display import Markdown, display

    path = Path(path)
    unknown = sorted(set(parameters) - parameter_names(path))
    if unknown:
        raise ValueError(f"{path} takes no parameter {', '.join(unknown)}")
    namespace: dict[str, Any] = {"__name__": f"inline:{path.stem}"}
    all_cells = cells(path)
    order = [c for c in all_cells if is_parameters(c)] + [c for c in all_cells if not is_parameters(c)]
    for i, cell in enumerate(order):
        if cell["cell_type"] == "markdown":
            if cell["source"].strip():
                display(Markdown(cell["source"]))
            continue
        if cell["cell_type"] != "code" or not cell["source"].strip():
            continue
        where = f"{path} cell {all_cells.index(cell) + 1}"
        try:
            value = run_code(cell["source"], namespace, where)
        except Exception as exc:
            raise NotebookCellError(f"{where} failed: {exc!r}") from exc
        if is_parameters(cell):
            namespace.update(parameters)
        elif value is not None:
            display(value)
    return namespace
