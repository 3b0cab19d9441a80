"""Packing finished raw suites into one compressed archive per server, and reading them back.

    python -m httplab pack pack   RAW_RUN_DIR [--suite S]...   # every complete suite (suite.json)
    python -m httplab pack unpack RAW_RUN_DIR [--suite S]... [--out DIR]
    python -m httplab pack check  RAW_RUN_DIR

Packed layout: each server directory of a complete suite, raw/<run>/<suite>/<server>/ (verify
transcripts, server logs, every scenario directory and point file), becomes one archive
raw/<run>/<suite>/<server>.tar.xz; the suite's small files (suite.json, order.json, host.*.json,
certificate.txt, client-openssl.cnf, ...) and meta.json stay plain. A suite without suite.json is
never packed (resuming it needs the files).

The archive is a tar (sorted members, mtime 0, uid/gid 0, modes 0644/0755: packing the same files
twice gives the same bytes) compressed with xz (LZMA2 preset 9e, single-threaded). Before it is
compressed, the latency histograms (the `"latency_hist": [[value, count], ...]` arrays of
r<rep>.wrk.json and r<rep>.lat.h2log.json, 95 % of a run's bytes) are moved out of their JSON
files into one member <server>/.rawpack-hist: per file the value deltas and counts as
little-endian uint32, split into byte planes, which xz compresses to half the size of the JSON
text. The JSON member keeps a placeholder string in the array's place. Only histograms that
re-serialise to the exact same bytes are moved, so unpacking gives back every file byte for byte;
`tar xJf` alone gives the files with the placeholder: use `unpack`.

A server directory is removed only after its archive was written to a temporary file, fsynced,
read back and compared with the directory (member list, sizes and SHA-256 of every file after the
histograms are put back), and renamed into place. Packing is idempotent (an archive without its
directory is left alone); a directory next to an archive of the same server is refused.

Reading: readable_view(run_dir) is run_dir itself when nothing is packed, else a cached directory
(HTTPLAB_RAW_CACHE, else $XDG_CACHE_HOME/httplab-raw, else /tmp/httplab-rawcache-<uid>) named
<key>/<run_id>/, where the archives are extracted and every plain file is a symlink to the
original; rawrun.load_run reads through it, so paths relative to raw/ (raw_path) do not change.
Errors in an archive name the archive and the member (RawPackError).
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import sys
import tarfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..parse.errors import RawFormatError
from . import rawhist
from .rawhist import HIST_MEMBER, LEGACY_PLACEHOLDERS, PLACEHOLDER  # noqa: F401 (the archive format's names)

ARCHIVE_SUFFIX = ".tar.xz"
# Half-written files of an interrupted point (see .gitignore): never archived.
SCRATCH_FILE = re.compile(r"\.r.*\..*|.*\.tmp")
XZ_PRESET = 9 | lzma.PRESET_EXTREME
# Preset 9's dictionary is 64 MiB, and the encoder sets up its match finder for all of it whatever
# the input: 60 ms for each of a quick run's archives of a few KiB (a tenth of the run's packing
# time), against under a millisecond with a dictionary the input's size. A match never reaches
# further back than the input's start, so the compressed data are the same (only the header's
# dictionary size differs): same archive size, same decoder output, and less memory to read it.
XZ_MIN_DICT = 1 << 12


def xz_filters(size: int) -> list[dict[str, int]]:
    """Preset 9e's LZMA2 filter with its dictionary cut to the smallest power of two ≥ size
    (at least 4 KiB, at most the preset's own 64 MiB)."""
    dict_size = min(max(XZ_MIN_DICT, 1 << max(size - 1, 0).bit_length()), 1 << 26)
    return [{"id": lzma.FILTER_LZMA2, "preset": XZ_PRESET, "dict_size": dict_size}]
MTIME, FILE_MODE, DIR_MODE = 0, 0o644, 0o755
VIEW_MARKER = ".rawview.json"


class RawPackError(RuntimeError):
    """A packing problem or a broken archive; the message names the archive (and the member)."""


# ---------------------------------------------------------------- archives
def _posix(rel: Path) -> str:
    return rel.as_posix()


def _walk(server_dir: Path) -> tuple[list[str], dict[str, Path], list[str]]:
    """(directories, files, skipped scratch files) under server_dir, names relative to its parent
    (so they start with '<server>/'), sorted. Only directories and regular files are allowed."""
    base = server_dir.parent
    dirs, files, skipped = [_posix(server_dir.relative_to(base))], {}, []
    for root, dnames, fnames in os.walk(server_dir, followlinks=False):
        r = Path(root)
        for d in dnames:
            p = r / d
            if p.is_symlink():
                raise RawPackError(f"{p}: a symbolic link; only regular files and directories are packed")
            dirs.append(_posix(p.relative_to(base)))
        for f in fnames:
            p = r / f
            if p.is_symlink() or not p.is_file():
                raise RawPackError(f"{p}: not a regular file; only regular files and directories are packed")
            if SCRATCH_FILE.fullmatch(f):
                skipped.append(_posix(p.relative_to(base)))
                continue
            files[_posix(p.relative_to(base))] = p
    return sorted(dirs), dict(sorted(files.items())), sorted(skipped)


def _tarinfo(name: str, size: int | None) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = MTIME, 0, 0, "", ""
    if size is None:
        ti.type, ti.mode = tarfile.DIRTYPE, DIR_MODE
    else:
        ti.size, ti.mode = size, FILE_MODE
    return ti


def archive_bytes(dirs: Iterable[str], contents: dict[str, bytes], server: str) -> bytes:
    """The deterministic .tar.xz of these directories and files (names '<server>/...')."""
    hists: list[rawhist.Hist] = []
    members: dict[str, bytes] = {}
    for name, data in contents.items():
        split = rawhist.split(name, data) if name.endswith(".json") else None
        if split is None:
            members[name] = data
        else:
            members[name], h = split
            hists.append(h)
    if hists:
        members[f"{server}/{HIST_MEMBER}"] = rawhist.encode(hists)
    entries = sorted([(d, None) for d in dirs] + list(members.items()), key=lambda e: e[0].split("/"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in entries:
            if data is None:
                tar.addfile(_tarinfo(name, None))
            else:
                tar.addfile(_tarinfo(name, len(data)), io.BytesIO(data))
    tar_bytes = buf.getvalue()
    return lzma.compress(tar_bytes, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                         filters=xz_filters(len(tar_bytes)))


@dataclass(frozen=True)
class ArchiveContent:
    path: Path
    dirs: tuple[str, ...]
    files: dict[str, bytes]  # the original bytes (histograms put back)
    n_hists: int


def read_archive(path: str | Path, server: str | None = None) -> ArchiveContent:
    """Every directory and file of a <server>.tar.xz with the histograms put back; RawPackError
    naming the archive (and member) when it cannot be read or does not belong where it is
    (every member must lie under <server>/, server = the archive's name without .tar.xz)."""
    path = Path(path)
    server = server or path.name[: -len(ARCHIVE_SUFFIX)]
    try:
        raw = lzma.decompress(path.read_bytes(), format=lzma.FORMAT_XZ)
    except (lzma.LZMAError, EOFError, OSError) as exc:
        raise RawPackError(f"{path}: not a readable .tar.xz ({exc})") from exc
    dirs: list[str] = []
    files: dict[str, bytes] = {}
    blob: bytes | None = None
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for ti in tar:
                name = ti.name
                parts = name.split("/")
                if parts[0] != server or ".." in parts or name.startswith("/") or "" in parts[1:]:
                    raise RawPackError(f"{path} (member {name}): outside {server}/")
                if ti.isdir():
                    dirs.append(name)
                elif ti.isfile():
                    f = tar.extractfile(ti)
                    data = f.read() if f is not None else b""
                    if len(data) != ti.size:
                        raise RawPackError(f"{path} (member {name}): truncated")
                    if name == f"{server}/{HIST_MEMBER}":
                        blob = data
                    else:
                        files[name] = data
                else:
                    raise RawPackError(f"{path} (member {name}): not a regular file or directory")
    except tarfile.TarError as exc:
        raise RawPackError(f"{path}: not a readable tar ({exc})") from exc
    try:
        hists = rawhist.decode(blob, f"{path} (member {server}/{HIST_MEMBER})") if blob is not None else []
    except rawhist.HistFormatError as exc:
        raise RawPackError(str(exc)) from exc
    for h in hists:
        where = f"{path} (member {h.name})"
        skel = files.get(h.name)
        if skel is None:
            raise RawPackError(f"{where}: listed in {HIST_MEMBER} but not in the archive")
        mark = rawhist.placeholder_at(skel, h.offset)
        if mark is None:
            raise RawPackError(f"{where}: no histogram placeholder at byte {h.offset}")
        files[h.name] = (skel[:h.offset] + rawhist.serialise(h.values, h.counts, h.style)
                         + skel[h.offset + len(mark):])
    if f"{server}" not in dirs:
        raise RawPackError(f"{path}: no {server}/ directory member")
    return ArchiveContent(path, tuple(dirs), files, len(hists))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def archive_of(server_dir: Path) -> Path:
    return server_dir.with_name(server_dir.name + ARCHIVE_SUFFIX)


def _conflict(server_dir: Path) -> str:
    a = archive_of(server_dir)
    return (f"both {server_dir}/ and {a} exist: refusing to guess which is right. If `python -m "
            f"httplab.tidy.rawpack check {server_dir.parent.parent}` passes, the archive is complete "
            f"(packing verifies it before removing the directory): remove the directory; otherwise "
            f"remove the archive and pack again")


@dataclass(frozen=True)
class PackResult:
    archive: Path
    files: int
    bytes_in: int
    bytes_out: int
    hists: int
    skipped: tuple[str, ...]


def pack_server(server_dir: str | Path) -> PackResult:
    """Pack one server directory into <server>.tar.xz beside it, verify, then remove the directory."""
    server_dir = Path(server_dir)
    archive = archive_of(server_dir)
    if archive.exists():
        raise RawPackError(_conflict(server_dir))
    dirs, paths, skipped = _walk(server_dir)
    contents = {name: p.read_bytes() for name, p in paths.items()}
    data = archive_bytes(dirs, contents, server_dir.name)
    tmp = archive.with_name(archive.name + ".tmp")
    _write_synced(tmp, data)
    try:
        back = read_archive(tmp, server_dir.name)
        # (read_archive names tmp; the member list and every file's size and hash must match)
        if set(back.dirs) != set(dirs) or set(back.files) != set(contents):
            missing = sorted(set(contents) - set(back.files)) + sorted(set(dirs) - set(back.dirs))
            extra = sorted(set(back.files) - set(contents)) + sorted(set(back.dirs) - set(dirs))
            raise RawPackError(f"{tmp}: member list differs from {server_dir} (missing {missing[:5]}, "
                               f"extra {extra[:5]})")
        for name, want in contents.items():
            got = back.files[name]
            if len(got) != len(want) or _sha(got) != _sha(want):
                raise RawPackError(f"{tmp} (member {name}): content differs from {paths[name]}")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, archive)
    _fsync_dir(archive.parent)
    shutil.rmtree(server_dir)
    _fsync_dir(archive.parent)
    return PackResult(archive, len(contents), sum(len(b) for b in contents.values()), len(data),
                      back.n_hists, tuple(skipped))


def _suite_dirs(run_dir: Path, suites: Iterable[str] | None) -> list[Path]:
    if suites:
        out = []
        for s in suites:
            d = run_dir / s
            if not d.is_dir():
                raise RawPackError(f"{d}: no such suite directory")
            out.append(d)
        return out
    return sorted(p for p in run_dir.iterdir() if p.is_dir())


def suite_complete(suite_dir: Path) -> bool:
    return (suite_dir / "suite.json").is_file()


def pack_run(run_dir: str | Path, suites: Iterable[str] | None = None,
             log=lambda msg: print(msg, file=sys.stderr)) -> list[PackResult]:
    """Pack every server directory of every complete suite of the run (or only `suites`: then an
    incomplete one is an error). Already packed servers are left alone."""
    run_dir = Path(run_dir)
    if not (run_dir / "meta.json").is_file():
        raise RawPackError(f"{run_dir}: not a raw run directory (no meta.json)")
    chosen = list(suites or [])
    results = []
    for suite_dir in _suite_dirs(run_dir, chosen):
        if not suite_complete(suite_dir):
            msg = f"{suite_dir}: suite not complete (no suite.json); not packed (resuming it needs the files)"
            if chosen:
                raise RawPackError(msg)
            log(msg)
            continue
        for server_dir in sorted(p for p in suite_dir.iterdir() if p.is_dir()):
            r = pack_server(server_dir)
            log(f"{r.archive}: {r.files} files, {r.bytes_in / 2**20:.1f} MiB -> {r.bytes_out / 2**20:.2f} MiB"
                + (f" ({len(r.skipped)} half-written scratch files dropped)" if r.skipped else ""))
            results.append(r)
    return results


def archives(run_dir: str | Path) -> list[Path]:
    return sorted(Path(run_dir).glob(f"*/*{ARCHIVE_SUFFIX}"))


def is_packed(run_dir: str | Path) -> bool:
    return bool(archives(run_dir))


def _write_tree(content: ArchiveContent, dest_parent: Path) -> None:
    for d in content.dirs:
        (dest_parent / d).mkdir(parents=True, exist_ok=True)
    for name, data in content.files.items():
        (dest_parent / name).write_bytes(data)


def unpack_run(run_dir: str | Path, suites: Iterable[str] | None = None, out: str | Path | None = None,
               log=lambda msg: print(msg, file=sys.stderr)) -> list[Path]:
    """In place (out=None): each <server>.tar.xz becomes <server>/ again and the archive is removed.
    With out: a full unpacked copy of the run is written to `out` (which must not exist); the
    run itself is not touched."""
    run_dir = Path(run_dir)
    chosen = set(suites or [])
    todo = [a for a in archives(run_dir) if not chosen or a.parent.name in chosen]
    if out is not None:
        dest = Path(out)
        if dest.exists():
            raise RawPackError(f"{dest} exists; pass a new directory to --out")
        tmp = dest.with_name(dest.name + ".unpack.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(run_dir, tmp, ignore=lambda d, names: [n for n in names if n.endswith(ARCHIVE_SUFFIX)
                                                                   and Path(d, n) in todo])
        for a in todo:
            _write_tree(read_archive(a), tmp / a.parent.name)
        os.replace(tmp, dest)
        log(f"{dest}: unpacked copy of {run_dir} ({len(todo)} archives)")
        return [dest]
    done = []
    for a in todo:
        server_dir = a.with_name(a.name[: -len(ARCHIVE_SUFFIX)])
        if server_dir.exists():
            raise RawPackError(_conflict(server_dir))
        content = read_archive(a)
        tmp = a.parent / f".{server_dir.name}.unpack.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        _write_tree(content, tmp)
        os.replace(tmp / server_dir.name, server_dir)
        tmp.rmdir()
        a.unlink()
        _fsync_dir(a.parent)
        log(f"{server_dir}/: {len(content.files)} files")
        done.append(server_dir)
    return done


def check_run(run_dir: str | Path, log=lambda msg: print(msg, file=sys.stderr)) -> list[str]:
    """Read every archive back in full; the problems found (empty = all good). Also notes complete
    suites that still hold unpacked server directories."""
    run_dir = Path(run_dir)
    problems = []
    for a in archives(run_dir):
        try:
            c = read_archive(a)
            server_dir = a.with_name(a.name[: -len(ARCHIVE_SUFFIX)])
            if server_dir.exists():
                problems.append(_conflict(server_dir))
                continue
            log(f"ok {a}: {len(c.files)} files, {sum(map(len, c.files.values())) / 2**20:.1f} MiB, "
                f"{c.n_hists} histograms")
        except RawPackError as exc:
            problems.append(str(exc))
    for suite_dir in _suite_dirs(run_dir, None):
        loose = [p.name for p in suite_dir.iterdir() if p.is_dir()]
        if loose and suite_complete(suite_dir):
            log(f"note {suite_dir}: complete but not packed: {', '.join(sorted(loose))}")
    for p in problems:
        log(f"PROBLEM {p}")
    return problems


# ---------------------------------------------------------------- the readable view
def cache_root() -> Path:
    env = os.environ.get("HTTPLAB_RAW_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "httplab-raw"
    return Path("/tmp") / f"httplab-rawcache-{os.getuid()}"


def _plain_entries(run_dir: Path) -> Iterator[tuple[str, bool]]:
    """(relative path, is_dir) of everything under run_dir that is not an archive, sorted."""
    for root, dnames, fnames in os.walk(run_dir):
        dnames.sort()
        r = Path(root)
        for d in dnames:
            yield _posix((r / d).relative_to(run_dir)), True
        for f in sorted(fnames):
            if f.endswith(ARCHIVE_SUFFIX) and r.parent == run_dir:
                continue
            yield _posix((r / f).relative_to(run_dir)), False


def _count_files(d: Path) -> int:
    return sum(len(f) for _, _, f in os.walk(d))


def readable_view(run_dir: str | Path) -> Path:
    """run_dir when nothing in it is packed; else the cached unpacked view of it (see the module
    docstring), made on first use. Its name is the run's, so paths relative to its parent are the
    same as for run_dir."""
    run_dir = Path(run_dir)
    packed = archives(run_dir)
    if not packed:
        return run_dir
    src = run_dir.resolve()
    for a in packed:
        server_dir = a.with_name(a.name[: -len(ARCHIVE_SUFFIX)])
        if server_dir.exists():
            raise RawPackError(_conflict(server_dir))
    plain = list(_plain_entries(src))
    h = hashlib.sha256(str(src).encode() + b"\0")
    for a in packed:
        h.update(_posix(a.relative_to(run_dir)).encode() + b"\0" + hashlib.sha256(a.read_bytes()).digest())
    for rel, is_dir in plain:
        h.update(rel.encode() + (b"/\0" if is_dir else b"\0"))
    key = h.hexdigest()[:24]
    base = cache_root() / key
    view = base / run_dir.name
    marker = base / VIEW_MARKER
    if marker.is_file():
        try:
            want = json.loads(marker.read_text())["files"]
        except (ValueError, KeyError):
            want = -1
        if view.is_dir() and _count_files(view) == want:
            return view
        shutil.rmtree(base, ignore_errors=True)  # damaged (e.g. a /tmp cleaner): made again
    base.parent.mkdir(parents=True, exist_ok=True)
    tmp = base.parent / f".{key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tview = tmp / run_dir.name
    tview.mkdir(parents=True)
    n = 0
    for rel, is_dir in plain:
        if is_dir:
            (tview / rel).mkdir(parents=True, exist_ok=True)
        else:
            (tview / rel).symlink_to(src / rel)
            n += 1
    for a in packed:
        c = read_archive(a)
        _write_tree(c, tview / a.parent.name)
        n += len(c.files)
    (tmp / VIEW_MARKER).write_text(json.dumps({"run_dir": str(src), "files": n,
                                               "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    try:
        os.rename(tmp, base)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
        if not (base / VIEW_MARKER).is_file():
            raise
    _prune(base.parent, keep=base)
    return view


def _prune(root: Path, keep: Path, max_age_s: float = 14 * 86400) -> None:
    """Remove views not made or used for two weeks (their marker's mtime)."""
    now = time.time()
    os.utime(keep / VIEW_MARKER)
    for d in root.iterdir():
        m = d / VIEW_MARKER
        if d != keep and m.is_file() and now - m.stat().st_mtime > max_age_s:
            shutil.rmtree(d, ignore_errors=True)


def original_location(path: str | Path, view: Path, run_dir: Path) -> str:
    """A path inside a readable view, as the reader should see it: the archive and member when the
    file came from an archive, else the same path under run_dir."""
    p = Path(path)
    try:
        rel = p.relative_to(view)
    except ValueError:
        return str(path)
    parts = rel.parts
    if len(parts) >= 2:
        archive = run_dir / parts[0] / (parts[1] + ARCHIVE_SUFFIX)
        if archive.is_file():
            return f"{archive} (member {'/'.join(parts[1:])})"
    return str(run_dir / rel)


def relocate_error(exc: RawFormatError, view: Path, run_dir: Path) -> RawFormatError:
    """The same error, naming the archive and member instead of the cached copy."""
    if view == run_dir:
        return exc
    where = original_location(exc.path, view, run_dir)
    if where == exc.path:
        return exc
    new = type(exc)(where, exc.detail, line=exc.line, key=exc.key)
    return new


# ---------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Pack complete raw suites into one .tar.xz per server, "
                                             "unpack them, or check the archives.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, text in (("pack", "pack every complete suite (or --suite)"),
                       ("unpack", "archives back into directories (in place, or a copy with --out)"),
                       ("check", "read every archive back in full")):
        p = sub.add_parser(name, help=text)
        p.add_argument("run_dir", type=Path, help="raw/<run_id>")
        if name != "check":
            p.add_argument("--suite", action="append", default=[], help="only this suite (repeatable)")
        if name == "unpack":
            p.add_argument("--out", type=Path, help="write an unpacked copy of the run here instead")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "pack":
            res = pack_run(args.run_dir, args.suite)
            if not res:
                print(f"{args.run_dir}: nothing to pack", file=sys.stderr)
        elif args.cmd == "unpack":
            unpack_run(args.run_dir, args.suite, args.out)
        else:
            return 1 if check_run(args.run_dir) else 0
    except RawPackError as exc:
        print(f"rawpack: {exc}", file=sys.stderr)
        return 1
    return 0
