"""Small raw-file readers that turn every problem into a RawFormatError naming file and line/key."""
from __future__ import annotations

import json
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RawFormatError

if TYPE_CHECKING:
    import numpy as np


def decode_utf8(data: bytes, where: str | Path) -> str:
    """data as text, newlines translated as a text-mode read does; RawFormatError naming `where`
    when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RawFormatError(where, f"not UTF-8 text ({exc.reason})") from exc
    return universal_newlines(text)


def universal_newlines(text: str) -> str:
    """\\r\\n and \\r as \\n (what Path.read_text gives)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def parse_json_object(text: str, where: str | Path) -> dict[str, Any]:
    """A JSON document that must be an object; RawFormatError naming `where` and the line."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RawFormatError(where, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from exc
    if not isinstance(doc, dict):
        raise RawFormatError(where, "top level is not a JSON object", line=1)
    return doc


def read_utf8(path: str | Path) -> str:
    """The file's text, or RawFormatError naming the file when it is not UTF-8."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RawFormatError(p, f"not UTF-8 text ({exc.reason})") from exc


def read_json_object(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    return parse_json_object(read_utf8(p), p)


def require(doc: dict[str, Any], key: str, path: str | Path, types: type | tuple[type, ...] | None = None) -> Any:
    """doc[key], or RawFormatError naming the file and the key (missing or of the wrong type)."""
    if key not in doc:
        raise RawFormatError(path, "missing key", key=key)
    value = doc[key]
    if types is not None:
        bad_bool = isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,))
        if bad_bool or not isinstance(value, types):
            raise RawFormatError(path, f"unexpected value {value!r}", key=key)
    return value


def number_pairs(pairs: Any, integers: bool = False) -> "tuple[np.ndarray, np.ndarray] | None":
    """A JSON histogram, [[value, count], ...], as (values float64, counts int64) when every entry
    is a two-number list (integers only with integers=True; no booleans) with a count ≥ 0, checked
    in bulk; None otherwise, for the caller to name the bad entry (the slow path)."""
    import numpy as np

    allowed = {int} if integers else {int, float}
    # (map and set in C: these checks ran over millions of numbers per run)
    if not isinstance(pairs, list) or not set(map(type, pairs)) <= {list}:
        return None
    if not set(map(len, pairs)) <= {2} or not set(map(type, chain.from_iterable(pairs))) <= allowed:
        return None
    arr = np.array(pairs, dtype=np.float64).reshape(len(pairs), 2)
    if (arr[:, 1] < 0).any():
        return None
    return arr[:, 0], arr[:, 1].astype(np.int64)
