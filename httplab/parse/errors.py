"""Exceptions raised when raw benchmark output does not look like we expect."""
from __future__ import annotations

from pathlib import Path


class RawFormatError(ValueError):
    """Raw input (wrk text, hook JSON, meta.json, ...) is malformed.

    The message always names the file, and the line (1-based) or the missing key when known.
    """

    def __init__(self, path: str | Path, detail: str, *, line: int | None = None,
                 key: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.key = key
        self.detail = detail
        where = self.path
        if line is not None:
            where += f", line {line}"
        if key is not None:
            where += f", key {key!r}"
        super().__init__(f"{where}: {detail}")


class RawConsistencyError(RawFormatError):
    """Two raw sources for the same number disagree (e.g. wrk text vs hook JSON)."""


class NoRunError(LookupError):
    """No usable run directory could be found."""
