"""Locating the repository root (the directory holding pyproject.toml)."""
from __future__ import annotations

from pathlib import Path

from ..parse.errors import NoRunError


def repo_root(start: str | Path | None = None) -> Path:
    """Walk up from start (default: cwd) to the first directory with a pyproject.toml; if there is
    none, use the directory above this package when it has one (editable install)."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return d
    pkg_parent = Path(__file__).resolve().parent.parent
    if (pkg_parent / "pyproject.toml").is_file():
        return pkg_parent
    raise NoRunError(f"no pyproject.toml above {here}: cannot find the repository root")


def resolve(path: str | Path, root: Path) -> Path:
    """Absolute paths stay; relative ones are taken from the repository root."""
    p = Path(path)
    return p if p.is_absolute() else (root / p)
