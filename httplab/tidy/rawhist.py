"""The latency-histogram codec of the raw archives (httplab.tidy.rawpack): a `"latency_hist":
[[value, count], ...]` array taken out of its JSON file, and the block that holds every such array of
an archive as little-endian uint32 value deltas and counts split into byte planes (xz compresses the
planes to half the size of the JSON text).

Only the standard library (array, itertools): a benchmark host with no numpy can pack its own raw
run. The byte layout is the archives' format since the first packed run, so this code must write
and read exactly the same bytes (tests/unit/test_rawpack.py checks the committed archives).
"""
from __future__ import annotations

import json
import re
import sys
from array import array
from dataclasses import dataclass
from itertools import accumulate

HIST_MEMBER = ".rawpack-hist"  # inside <server>/ in the archive
HIST_MAGIC = b"httplab-rawpack-hist 1\n"
PLACEHOLDER = b'"@rawpack-hist: unpack with python -m httplab pack unpack"'
# The placeholders of older archives (the command of their day), read as PLACEHOLDER: they are data
# inside the committed archives and never change.
LEGACY_PLACEHOLDERS = (b'"@rawpack-hist: unpack with python -m httplab.rawpack unpack"',
                       b'"@rawpack-hist: unpack with python -m httplab.tidy.rawpack unpack"')
HIST_KEY = re.compile(rb'"latency_hist":\s?')
# a canonical array: [[v, c], [v, c], ...] with one of the two separator styles below
HIST_ARRAY = re.compile(rb"\[(?:\[\d+, ?\d+\](?:, ?\[\d+, ?\d+\])*)?\]")
HIST_STYLES = {0: (b",", b","), 1: (b", ", b", ")}  # style -> (inner separator, outer separator)
_U32 = 2**32


class HistFormatError(ValueError):
    """A histogram block that cannot be read; the message says where and why."""


@dataclass(frozen=True)
class Hist:
    name: str  # member name
    offset: int  # where the array was (and the placeholder is) in the file
    style: int
    values: tuple[int, ...]
    counts: tuple[int, ...]


def serialise(values: tuple[int, ...] | list[int], counts: tuple[int, ...] | list[int], style: int) -> bytes:
    """The JSON text of a histogram array in the given separator style."""
    inner, outer = HIST_STYLES[style]
    fmt = b"[%d" + inner + b"%d]"
    return b"[" + outer.join(fmt % p for p in zip(values, counts)) + b"]"


def has_placeholder(data: bytes) -> bool:
    return any(p in data for p in (PLACEHOLDER, *LEGACY_PLACEHOLDERS))


def placeholder_at(skeleton: bytes, offset: int) -> bytes | None:
    """The placeholder (current or legacy) that stands at offset, if any."""
    return next((p for p in (PLACEHOLDER, *LEGACY_PLACEHOLDERS) if skeleton[offset:offset + len(p)] == p), None)


def split(name: str, data: bytes) -> tuple[bytes, Hist] | None:
    """(skeleton, histogram) when the file holds exactly one latency_hist array that this codec
    reproduces byte for byte; else None (the file is stored as it is)."""
    keys = list(HIST_KEY.finditer(data))
    if len(keys) != 1 or has_placeholder(data):
        return None
    start = keys[0].end()
    m = HIST_ARRAY.match(data, start)
    if m is None or m.end() - start <= 2:  # not canonical, or empty: leave it
        return None
    span = data[start:m.end()]
    nums = [int(x) for x in re.findall(rb"\d+", span)]
    if len(nums) % 2:
        return None
    values, counts = tuple(nums[0::2]), tuple(nums[1::2])
    deltas = _deltas(values)
    if min(deltas) < 0 or max(deltas) >= _U32 or max(counts) >= _U32:
        return None
    style = 1 if b", " in span[:64] else 0
    if serialise(values, counts, style) != span:
        return None
    return data[:start] + PLACEHOLDER + data[m.end():], Hist(name, start, style, values, counts)


def _deltas(values: tuple[int, ...]) -> list[int]:
    return [b - a for a, b in zip((0, *values[:-1]), values)]


def _u32(numbers: list[int]) -> array:
    a = array("I", numbers) if array("I").itemsize == 4 else array("L", numbers)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def _planes(numbers: list[int]) -> bytes:
    """uint32 little-endian, byte plane 0 of every number first, then plane 1, 2 and 3."""
    b = _u32(numbers).tobytes()
    return b[0::4] + b[1::4] + b[2::4] + b[3::4]


def _unplanes(b: bytes) -> list[int]:
    n = len(b) // 4
    interleaved = bytearray(4 * n)
    for i in range(4):
        interleaved[i::4] = b[i * n:(i + 1) * n]
    a = array("I" if array("I").itemsize == 4 else "L")
    a.frombytes(bytes(interleaved))
    if sys.byteorder != "little":
        a.byteswap()
    return a.tolist()


def encode(hists: list[Hist]) -> bytes:
    """The histogram block of an archive: magic, a JSON index, the deltas' planes, the counts'."""
    index = [[h.name, h.offset, h.style, len(h.values)] for h in hists]
    deltas = [d for h in hists for d in _deltas(h.values)]
    counts = [c for h in hists for c in h.counts]
    head = json.dumps({"files": index}, separators=(",", ":")).encode()
    return HIST_MAGIC + head + b"\n" + _planes(deltas) + _planes(counts)


def decode(blob: bytes, where: str) -> list[Hist]:
    if not blob.startswith(HIST_MAGIC):
        raise HistFormatError(f"{where}: not a histogram block (bad magic)")
    nl = blob.find(b"\n", len(HIST_MAGIC))
    try:
        index = json.loads(blob[len(HIST_MAGIC):nl])["files"]
        sizes = [int(n) for _, _, _, n in index]
    except (ValueError, KeyError, TypeError) as exc:
        raise HistFormatError(f"{where}: unreadable index ({exc})") from exc
    total = sum(sizes)
    body = blob[nl + 1:]
    if nl < 0 or len(body) != 8 * total:
        raise HistFormatError(f"{where}: {len(body)} bytes of data for {total} histogram entries")
    deltas, counts = _unplanes(body[:4 * total]), _unplanes(body[4 * total:])
    out, pos = [], 0
    for (name, offset, style, n) in index:
        if style not in HIST_STYLES:
            raise HistFormatError(f"{where}: unknown style {style!r} for {name}")
        out.append(Hist(name, int(offset), int(style), tuple(accumulate(deltas[pos:pos + n])),
                        tuple(counts[pos:pos + n])))
        pos += n
    return out
