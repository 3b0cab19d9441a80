"""Which raw loader reads the points of which load tool: tool name -> function (scenario dir,
rep, host=None) -> LoadResult. A new load tool is one loader module and one line here."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Protocol

from .h2load_loader import load_h2load_point
from .oha_loader import load_oha_point
from .wrk_loader import load_wrk_point
from .loadresult import LoadResult


class Loader(Protocol):
    """loader(scenario_dir, rep) reads the single-host files r<rep>.*; loader(scenario_dir, rep,
    host=I) client host I's r<rep>.h<I>.* (loadresult.point_stem). A loader registered without the
    host argument serves single-host points only."""

    def __call__(self, scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None: ...


_LOADERS: dict[str, Loader] = {"wrk": load_wrk_point, "h2load": load_h2load_point, "oha": load_oha_point}


def register_loader(tool: str, loader: Loader) -> None:
    _LOADERS[tool] = loader


def loader_for(tool: str) -> Loader:
    try:
        return _LOADERS[tool]
    except KeyError:
        raise KeyError(f"no raw loader for load tool {tool!r} (known: {sorted(_LOADERS)})") from None


def load_host_point(tool: str, scenario_dir: Path, rep: int, host: int) -> LoadResult | None:
    """Client host `host`'s share of a several-host point, by the tool's loader; TypeError naming
    the tool when its loader reads single-host points only (registered without `host`)."""
    loader = loader_for(tool)
    params = inspect.signature(loader).parameters
    if "host" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise TypeError(f"the raw loader of load tool {tool!r} cannot read one client host's files "
                        f"(it takes no host argument)")
    return loader(scenario_dir, rep, host=host)


def known_tools() -> list[str]:
    return sorted(_LOADERS)
