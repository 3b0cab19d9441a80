"""The raw layout: the one module that knows the names and places of the files inside
raw/<run_id>/ (docs/architecture.md, "The raw layout") and reads them. The parsers take the
contents it hands out (text, bytes, JSON objects) and a `where` label, the file's path, for their
error messages; RawFormatError names the file (and line or key) as before.

    raw/<run_id>/meta.json                                   read_meta
    raw/<run_id>/<part>/suite.json                           suite_status
    raw/<run_id>/<part>/order.json, suite.aborted.<t>.json   (names only: the shell writes them)
    raw/<run_id>/<part>/hosts.json                           hosts_doc
    raw/<run_id>/<part>/host.start.json, host.end.json       host_states
    raw/<run_id>/<part>/certificate.txt                      certificate_text
    raw/<run_id>/<part>/<server>/verify.r<rep>[.<scenario>].txt  verify_files
    raw/<run_id>/<part>/<server>/<scenario>/scenario.json    iter_points -> PointFiles
    …/<scenario>/<stem>.<suffix>                             PointFiles.rep -> RepFiles

One rep's files share a stem: r<rep>, or r<rep>.h<I> for client host I of a point loaded through
per-host files (point_stem). The suffixes are the constants below (RUN_JSON, WRK_JSON, ...). A rep is
finished when r<rep>.run.json exists (written last). A scenario directory is listed once; each file is
read at most once (RepFiles caches what it read), so a rep's run.json read by the row and by the
h2load loader is one read.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jsonio import decode_utf8, parse_json_object, require, universal_newlines

# ---------------------------------------------------------------- names
META = "meta.json"
SUITE_JSON = "suite.json"
ORDER_JSON = "order.json"
HOSTS_JSON = "hosts.json"
HOST_STATE_FILES = {"start": "host.start.json", "end": "host.end.json"}
CERTIFICATE = "certificate.txt"
SCENARIO_JSON = "scenario.json"

# one rep's files: <stem>.<suffix>
RUN_JSON = "run.json"             # written last: times, exit code, command, position
SERVER_JSON = "server.json"       # the server's CPU ticks and RSS around the run
CPU_JSON = "cpu.json"             # /proc/stat of the pinned CPUs around the window
CLIENT_TIME = "client.time.txt"   # GNU time's line for the load tool
SLICES_JSON = "slices.json"       # a sliced point's record of its tool's slices (scripts/lib/sliced.sh)
TLS_TXT = "tls.txt"               # openssl s_client's report (TLS points)
STDOUT = "stdout.txt"
STDERR = "stderr.txt"
WRK_JSON = "wrk.json"             # wrk's done() hook
LAT_STDOUT = "lat.stdout.txt"     # the latency run (h2load's; wrk's in a sliced rep)
LAT_WRK_JSON = "lat.wrk.json"     # wrk's done() hook of its latency run (a sliced rep)
LAT_STDERR = "lat.stderr.txt"
LAT_H2LOG = "lat.h2log.json"      # its log, compacted
OHA_JSON = "oha.json"             # oha's report
OHA_HIST = "oha.hist.json"        # the window's histogram from oha's records
H3LOAD_JSON = "h3load.json"       # h3load's report (the HTTP/3 suite)
HOST_JSON = "host.json"           # client host I's record of its run (stem r<rep>.h<I>)
LAT_HOST_JSON = "lat.host.json"   # ... of h2load's latency run

_REP_RE = re.compile(r"r(\d+)\.run\.json")
# verify.r<rep>.txt, or verify.r<rep>.<scenario>.txt where scenario blocks start a server once per
# scenario (scripts/lib/suite.sh suite_blocks); a resumed start's verify.r<rep>[.<scenario>].resumed-<t>.txt
# is kept for a look and not read.
_VERIFY_RE = re.compile(r"verify\.r(\d+)(?:\.[A-Za-z0-9_]+)?\.txt")


def point_stem(rep: int, host: int | None = None) -> str:
    """The file-name stem of one rep's load-tool files: r<rep>, or r<rep>.h<host> for client host
    `host` of a several-host point (the shell's infix, scripts/lib/fanout.sh)."""
    return f"r{rep}" if host is None else f"r{rep}.h{host}"


def raw_path(run_id: str, rel: str, rep: int) -> str:
    """The runs frame's raw_path of a rep: <run_id>/<part>/<server>/<scenario>/r<rep>."""
    return f"{run_id}/{rel}/r{rep}"


# ---------------------------------------------------------------- one directory's files
class _Files:
    """The files of one directory: listed once, each read at most once. A directory on disk, or
    contents given in memory (file name -> bytes or text) under a label."""

    def __init__(self, where: str | Path, names: frozenset[str], data: dict[str, bytes] | None = None,
                 on_disk: bool = True) -> None:
        self.where = where
        self.names = names
        self.on_disk = on_disk
        self._bytes: dict[str, bytes] = dict(data or {})
        self._docs: dict[str, dict[str, Any]] = {}

    @classmethod
    def listed(cls, directory: Path) -> "_Files":
        names = frozenset(e.name for e in os.scandir(directory) if e.is_file()) if directory.is_dir() else frozenset()
        return cls(directory, names)

    def path(self, name: str) -> str:
        return str(Path(self.where) / name) if self.on_disk else f"{self.where}/{name}"

    def read(self, name: str) -> bytes:
        data = self._bytes.get(name)
        if data is None:
            data = self._bytes[name] = (Path(self.where) / name).read_bytes()
        return data

    def doc(self, name: str) -> dict[str, Any]:
        doc = self._docs.get(name)
        if doc is None:
            where = self.path(name)
            doc = self._docs[name] = parse_json_object(decode_utf8(self.read(name), where), where)
        return doc


class RepFiles:
    """The contents of one rep's files <stem>.<suffix> in a point's directory (stem r<rep>, or
    r<rep>.h<I> for client host I: host_files). Absent files are None; where(suffix) is the path
    the parsers name in their errors."""

    def __init__(self, files: _Files, rep: int, host: int | None = None) -> None:
        self._files = files
        self.rep = rep
        self.host = host
        self.stem = point_stem(rep, host)

    @classmethod
    def from_contents(cls, contents: Mapping[str, bytes | str], rep: int = 1, host: int | None = None,
                      where: str = "<memory>") -> "RepFiles":
        """RepFiles over contents held in memory: file name (r1.wrk.json, ...) -> bytes or text."""
        data = {k: v.encode("utf-8") if isinstance(v, str) else v for k, v in contents.items()}
        return cls(_Files(where, frozenset(data), data, on_disk=False), rep, host)

    @classmethod
    def of_dir(cls, directory: str | Path, rep: int, host: int | None = None) -> "RepFiles":
        """The rep's files in a directory (the path-taking wrappers of the loaders)."""
        return cls(_Files.listed(Path(directory)), rep, host)

    def host_files(self, host: int) -> "RepFiles":
        """Client host `host`'s files of the same rep (r<rep>.h<host>.*)."""
        return RepFiles(self._files, self.rep, host)

    def rep_files(self) -> "RepFiles":
        """The rep's own files (r<rep>.*, its run.json), also from a client host's."""
        return self if self.host is None else RepFiles(self._files, self.rep)

    @property
    def directory(self) -> Path | None:
        """The point's directory (None for contents held in memory)."""
        return Path(self._files.where) if self._files.on_disk else None

    def name(self, suffix: str) -> str:
        return f"{self.stem}.{suffix}"

    def where(self, suffix: str) -> str:
        return self._files.path(self.name(suffix))

    def has(self, suffix: str) -> bool:
        return self.name(suffix) in self._files.names

    def size(self, suffix: str) -> int:
        return len(self._files.read(self.name(suffix))) if self.has(suffix) else 0

    def bytes(self, suffix: str) -> bytes | None:
        return self._files.read(self.name(suffix)) if self.has(suffix) else None

    def text(self, suffix: str, errors: str = "strict") -> str | None:
        """The file's text (None when absent): strict UTF-8 (RawFormatError naming the file
        otherwise), or errors="replace"."""
        data = self.bytes(suffix)
        if data is None:
            return None
        if errors == "strict":
            return decode_utf8(data, self.where(suffix))
        return universal_newlines(data.decode("utf-8", errors=errors))

    def json(self, suffix: str) -> dict[str, Any] | None:
        """The file as a JSON object (None when absent); RawFormatError naming the file and line."""
        return self._files.doc(self.name(suffix)) if self.has(suffix) else None


@dataclass(frozen=True, eq=False)
class PointFiles:
    """One point: raw/<run_id>/<part>/<server>/<scenario>/, its scenario.json as read (unchecked),
    and its finished reps."""
    directory: Path
    rel: str                          # <part>/<server>/<scenario>
    scenario: dict[str, Any]
    reps: tuple[int, ...]
    files: _Files = field(repr=False)

    @property
    def scenario_where(self) -> str:
        return self.files.path(SCENARIO_JSON)

    def rep(self, rep: int) -> RepFiles:
        return RepFiles(self.files, rep)


def _finished(names: frozenset[str]) -> tuple[int, ...]:
    return tuple(sorted(int(m.group(1)) for n in names if (m := _REP_RE.fullmatch(n))))


def iter_points(run_dir: str | Path) -> Iterator[PointFiles]:
    """Every raw/<run_id>/<part>/<server>/<scenario>/ that has a scenario.json, sorted."""
    run_dir = Path(run_dir)
    for path in sorted(run_dir.glob(f"*/*/*/{SCENARIO_JSON}")):
        files = _Files.listed(path.parent)
        doc = files.doc(SCENARIO_JSON)
        yield PointFiles(path.parent, path.parent.relative_to(run_dir).as_posix(), doc,
                         _finished(files.names), files)


def scenario_doc(scenario_dir: str | Path) -> dict[str, Any]:
    """A point's scenario.json as read; {} when the file is absent (the loaders' wrappers)."""
    files = _Files.listed(Path(scenario_dir))
    return files.doc(SCENARIO_JSON) if SCENARIO_JSON in files.names else {}


# ---------------------------------------------------------------- run and part files
def _json_file(path: Path) -> dict[str, Any]:
    return parse_json_object(decode_utf8(path.read_bytes(), path), path)


def read_meta(run_dir: str | Path) -> dict[str, Any]:
    """raw/<run_id>/meta.json as a dict (RawFormatError if it lacks run_id; complete defaults to
    False)."""
    path = Path(run_dir) / META
    meta = _json_file(path)
    require(meta, "run_id", path, str)
    meta.setdefault("complete", False)
    return meta


def part_names(run_dir: str | Path, meta: Mapping[str, Any]) -> set[str]:
    """The run's parts: meta.json's "suites", those with a suite.json, those with a point."""
    run_dir = Path(run_dir)
    return set(meta.get("suites") or []) | {p.parent.name for p in run_dir.glob(f"*/{SUITE_JSON}")} | {
        p.parent.parent.parent.name for p in run_dir.glob(f"*/*/*/{SCENARIO_JSON}")}


def suite_status(run_dir: str | Path, part: str) -> tuple[dict[str, Any], str] | None:
    """(<part>/suite.json, its path) or None when the part did not finish."""
    path = Path(run_dir) / part / SUITE_JSON
    return (_json_file(path), str(path)) if path.is_file() else None


def hosts_doc(run_dir: str | Path, part: str) -> dict[str, Any] | None:
    """<part>/hosts.json as read, None when absent."""
    path = Path(run_dir) / part / HOSTS_JSON
    return _json_file(path) if path.is_file() else None


def host_states(run_dir: str | Path, part: str) -> dict[str, dict[str, Any] | None]:
    """{'start': .., 'end': ..} from <part>/host.{start,end}.json; None for a missing file."""
    out: dict[str, dict[str, Any] | None] = {}
    for when, name in HOST_STATE_FILES.items():
        path = Path(run_dir) / part / name
        out[when] = _json_file(path) if path.is_file() else None
    return out


def certificate_text(run_dir: str | Path, part: str = "https") -> tuple[str, str] | None:
    """(<part>/certificate.txt's text, its path), None when absent."""
    path = Path(run_dir) / part / CERTIFICATE
    return (decode_utf8(path.read_bytes(), path), str(path)) if path.is_file() else None


def rep_command(run_dir: str | Path, raw_path_: str) -> str:
    """The load tool's command line ("cmd") of the rep named by a runs row's raw_path; "" when its
    run.json is unreadable or has none."""
    rp = Path(raw_path_)                      # <run_id>/<part>/<server>/<scenario>/r<rep>
    f = Path(run_dir) / Path(*rp.parts[1:]).parent / f"{rp.name}.{RUN_JSON}"
    try:
        return json.loads(f.read_text()).get("cmd") or ""
    except (OSError, ValueError):
        return ""


@dataclass(frozen=True)
class VerifyFile:
    part: str
    server: str
    rep: int
    text: str           # decoded with errors replaced
    raw_path: str       # <run_id>/<part>/<server>/verify.r<rep>[.<scenario>].txt


def verify_files(run_dir: str | Path) -> Iterator[VerifyFile]:
    """Every <part>/<server>/verify.r<rep>[.<scenario>].txt, sorted by path."""
    run_dir = Path(run_dir)
    for path in sorted(run_dir.glob("*/*/verify.r*.txt")):
        m = _VERIFY_RE.fullmatch(path.name)
        if not m:
            continue
        yield VerifyFile(path.parent.parent.name, path.parent.name, int(m.group(1)),
                         path.read_text(encoding="utf-8", errors="replace"),
                         path.relative_to(run_dir.parent).as_posix())

