"""Server ids -> display name, short name, language, tier, display order and colour, all read
from the servers' manifests (servers/**/lab.toml, httplab.lab.manifest), so a new server (one
new lab.toml) looks right in every report without a change here.

The manifests are read once per servers folder (servers_dir(), which honours LAB_SERVERS_DIR);
clear_cache() forgets them. An id without a manifest (an old run's server, since removed) is shown
under its id, sorted after the known servers, in a neutral colour derived from its name. An A/A copy
(`<server>~aa`) is named, ordered and coloured after its original, and so is a server the scaling
suite pinned to n cores (`<server>@<n>`), its n in its name.
"""
from __future__ import annotations

import re

import colorsys
import hashlib
from collections.abc import Iterable
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from .manifest import Manifest, ManifestError, load_all, servers_dir

AA_SUFFIX = "~aa"  # an A/A copy: a second instance of a server (scripts' AA_SUFFIX)
CORES_SEP = "@"    # <server>@<n>: the server pinned to n cores (scripts' cores_of)

# Tiers that are reference points rather than contestants (docs/glossary.md; lab.manifest.TIERS).
REFERENCE_TIERS: tuple[str, ...] = ("reference", "floor")
CONTESTANT_TIER = "contestant"


@lru_cache(maxsize=8)
def _load(base: Path) -> dict[str, Manifest]:
    try:
        found = load_all(base)
    except ManifestError as e:
        if e.field == "(folder)":  # no manifest at all: every id is unknown
            return {}
        raise
    return {m.name: m for m in found}


def manifests() -> dict[str, Manifest]:
    """name -> Manifest of every server, in display order (read once per servers folder)."""
    return _load(servers_dir().resolve())


def clear_cache() -> None:
    """Forget the manifests read so far (a test that edits a servers folder calls this)."""
    _load.cache_clear()


def manifest(server: str) -> Manifest | None:
    """The manifest of a server id, or of the original of an A/A copy or of <server>@<n>; None
    when there is none."""
    return manifests().get(base_of(server))


def cores_of(server: str) -> int | None:
    """n of <server>@<n> (the scaling suite's server pinned to n cores); None for any other id."""
    head, sep, n = server.removesuffix(AA_SUFFIX).rpartition(CORES_SEP)
    return int(n) if sep and head and n.isdigit() else None


def base_of(server: str) -> str:
    """The manifest's server of an id: without the A/A mark and without @<n>."""
    s = server.removesuffix(AA_SUFFIX)
    return s.rpartition(CORES_SEP)[0] if cores_of(s) is not None else s


def is_aa_copy(server: str) -> bool:
    return server.endswith(AA_SUFFIX)


def aa_of(server: str) -> str | None:
    """The server an A/A copy copies ("<server>~aa" -> "<server>"); None for an ordinary server."""
    return server.removesuffix(AA_SUFFIX) if is_aa_copy(server) else None


def tcp_twin(server: str) -> str | None:
    """The server that serves the same application over TCP as `server` does over HTTP/3 (its
    manifest's tcp_twin; an A/A copy's is the twin's copy's), None when it names none."""
    m = manifest(base_of(server))
    if m is None or m.tcp_twin is None:
        return None
    return m.tcp_twin + server[len(base_of(server)):]


# The cores the run being reported gave each server that has no count of its own (<server>@<n>),
# where it gave them more than one: a report of a many-core run names the C server with ", 12
# cores" / "×12" (twelve worker processes, its manifest's `how`), so that it never shares a name
# with the one-process C server of the two-core runs. Set once per report by the report's context
# (report.engine.open_report, name_servers_for_run); None names servers as their manifests do.
_RUN_CORES: ContextVar[int | None] = ContextVar("run_cores", default=None)


def name_servers_for_run(server_cores: int | None) -> None:
    """Name the servers of a run that gave each of them `server_cores` CPUs (None or 1: no count)."""
    _RUN_CORES.set(server_cores if server_cores and server_cores > 1 else None)


def display_name(server: str) -> str:
    """Human name of a server id (the manifest's `display`); unknown ids are returned as given.
    An A/A copy is named after its original ("<display>, A/A copy")."""
    original = aa_of(server)
    if original is not None:
        return display_name(original) + ", A/A copy"
    n = cores_of(server) or _RUN_CORES.get()
    m = manifests().get(base_of(server))
    name = m.display if m else base_of(server)
    return f"{name}, {n} core{'s' if n != 1 else ''}" if n else name


def short_name(server: str) -> str:
    """Short label for column headers (the manifest's `short`; an A/A copy: "<short> A/A")."""
    original = aa_of(server)
    if original is not None:
        return short_name(original) + " A/A"
    n = cores_of(server) or _RUN_CORES.get()
    m = manifests().get(base_of(server))
    name = m.short if m else base_of(server)
    return f"{name} ×{n}" if n else name


def language(server: str) -> str | None:
    """Programming language of a server (an A/A copy: its original's); None without a manifest."""
    m = manifest(server)
    return m.language if m else None


def tier(server: str) -> str | None:
    """The server's tier (lab.manifest.TIERS; an A/A copy: its original's); None without a manifest."""
    m = manifest(server)
    return m.tier if m else None


def is_reference(server: str) -> bool:
    """A reference point rather than a contestant: tier reference or floor (never an A/A copy)."""
    return not is_aa_copy(server) and tier(server) in REFERENCE_TIERS


def sort_servers(servers: Iterable[str]) -> list[str]:
    """Servers in display order (the manifests' order, then name); ids without a manifest after
    them, alphabetically; an A/A copy right after its original."""
    known = manifests()

    def key(s: str) -> tuple:
        base, n = base_of(s), cores_of(s) or 0
        m = known.get(base)
        return (0, m.order, m.name, n, is_aa_copy(s), s) if m else (1, 0, base, n, is_aa_copy(s), s)
    return sorted(set(servers), key=key)


def contestants(servers: Iterable[str]) -> list[str]:
    """Those of `servers` with tier contestant (A/A copies left out), in display order."""
    return [s for s in sort_servers(servers) if not is_aa_copy(s) and tier(s) == CONTESTANT_TIER]


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb)


def _rgb(colour_hex: str) -> tuple[float, float, float]:
    h = colour_hex.lstrip("#")
    return (int(h[0:2], 16) / 255, int(h[2:4], 16) / 255, int(h[4:6], 16) / 255)


def lighten(colour_hex: str, amount: float = 0.45) -> str:
    """'#rrggbb' mixed with white (amount 0: unchanged, 1: white)."""
    return _hex(tuple(c + (1.0 - c) * amount for c in _rgb(colour_hex)))  # type: ignore[arg-type]


def _neutral(server: str) -> str:
    """A stable greyish colour from the id alone (the same in every process and report)."""
    d = hashlib.sha256(server.encode()).digest()
    hue, light = d[0] / 255, 0.38 + 0.24 * d[1] / 255
    return _hex(colorsys.hls_to_rgb(hue, light, 0.12))


def colour(server: str) -> str:
    """The server's colour in every plot ('#rrggbb'): its manifest's; an A/A copy gets its
    original's, lightened; an id without a manifest a neutral colour derived from its name."""
    original = aa_of(server)
    if original is not None:
        return lighten(colour(original))
    if cores_of(server) is not None:      # one colour per server across its cores (the scaling plots)
        return colour(base_of(server))
    m = manifests().get(server)
    return m.colour if m else _neutral(server)


_PAIR = re.compile(r"\((\S+) vs (\S+)\)")


def pairs_named(text: str) -> str:
    """Server ids in "(a vs b)" pairs (the claim ledger's point names) as the servers' short names."""
    return _PAIR.sub(lambda m: f"({short_name(m.group(1))} vs {short_name(m.group(2))})", text)
