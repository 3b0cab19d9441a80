"""scipy's modules, imported when first used.

Importing scipy.stats takes about 1.5 s of CPU on the two-core lab machine, a third of what a
report notebook spends on its imports; the notebooks read their statistics from data/ and most
never call scipy, while the build step and the tests that compute statistics do. Every use goes
through an attribute (`sps.t.ppf`), which imports the module on first access.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _OnFirstUse:
    """A module imported on its first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


sps: Any = _OnFirstUse("scipy.stats")
optimize: Any = _OnFirstUse("scipy.optimize")
