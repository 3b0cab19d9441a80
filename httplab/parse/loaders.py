"""Which raw loader reads the points of which load tool. Two forms: the built-in loaders' pure
cores, tool name -> function (RepFiles: one rep's, or one client host's, file contents;
scenario.json) -> LoadResult, which load_rep calls; and the path-taking form, tool name -> function
(scenario dir, rep, host=None) -> LoadResult (loader_for, register_loader: the tests' and a new
tool's way in). A new load tool is one loader module and one line here."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Protocol

from collections.abc import Callable, Mapping
from typing import Any

from .h2load_loader import h2load_result, load_h2load_point
from .h3load_loader import h3load_result, load_h3load_point
from .layout import RepFiles
from .oha_loader import load_oha_point, oha_result
from .wrk_loader import load_wrk_point, wrk_result
from .loadresult import LoadResult

ContentLoader = Callable[[RepFiles, Mapping[str, Any]], "LoadResult | None"]


class Loader(Protocol):
    """loader(scenario_dir, rep) reads the single-host files r<rep>.*; loader(scenario_dir, rep,
    host=I) client host I's r<rep>.h<I>.* (loadresult.point_stem). A loader registered without the
    host argument serves single-host points only."""

    def __call__(self, scenario_dir: Path, rep: int, host: int | None = None) -> LoadResult | None: ...


_LOADERS: dict[str, Loader] = {"wrk": load_wrk_point, "h2load": load_h2load_point, "oha": load_oha_point,
                               "h3load": load_h3load_point}
_CONTENT_LOADERS: dict[str, ContentLoader] = {"wrk": wrk_result, "h2load": h2load_result, "oha": oha_result,
                                              "h3load": h3load_result}


def register_loader(tool: str, loader: Loader) -> None:
    """A path-taking loader for `tool` (it reads its files itself; replaces a built-in one)."""
    _LOADERS[tool] = loader
    _CONTENT_LOADERS.pop(tool, None)


def loader_for(tool: str) -> Loader:
    try:
        return _LOADERS[tool]
    except KeyError:
        raise KeyError(f"no raw loader for load tool {tool!r} (known: {sorted(_LOADERS)})") from None


def load_rep(tool: str, files: RepFiles, scen: Mapping[str, Any]) -> LoadResult | None:
    """One rep's LoadResult (files.host None), or client host files.host's share of a several-host
    point, from the contents in `files` and scenario.json `scen`; a loader registered by path reads
    the point's directory itself (load_host_point's TypeError for one that takes no host)."""
    content = _CONTENT_LOADERS.get(tool)
    if content is not None:
        return content(files, scen)
    directory = files.directory
    if directory is None:
        raise TypeError(f"the raw loader of load tool {tool!r} reads files, not contents")
    if files.host is None:
        return loader_for(tool)(directory, files.rep)
    return load_host_point(tool, directory, files.rep, files.host)


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
