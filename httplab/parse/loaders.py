"""Which raw loader reads the points of which load tool: tool name -> function (scenario dir,
rep) -> LoadResult. A new load tool is one loader module and one line here."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .h2load_loader import load_h2load_point
from .oha_loader import load_oha_point
from .wrk_loader import load_wrk_point
from .loadresult import LoadResult

Loader = Callable[[Path, int], LoadResult | None]
_LOADERS: dict[str, Loader] = {"wrk": load_wrk_point, "h2load": load_h2load_point, "oha": load_oha_point}


def register_loader(tool: str, loader: Loader) -> None:
    _LOADERS[tool] = loader


def loader_for(tool: str) -> Loader:
    try:
        return _LOADERS[tool]
    except KeyError:
        raise KeyError(f"no raw loader for load tool {tool!r} (known: {sorted(_LOADERS)})") from None


def known_tools() -> list[str]:
    return sorted(_LOADERS)
