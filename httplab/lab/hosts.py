"""raw/<run_id>/<suite>/hosts.json (scripts/lib/hosts.sh; docs/host-modes.md): the host mode a
suite ran in and each host's facts, read into a typed record, and said in one line for a report's
header.

Modes: local (this machine over loopback), netns (a server host and one or more client hosts as
network namespaces of this machine) and inventory (real machines of an Ansible inventory, whose
entries may carry the machine's facts: name, cpu_model, cores, kernel, distro). The hosts list
holds one server and N ≥ 1 clients."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..parse.errors import RawFormatError
from ..parse.jsonio import read_json_object, require

MODES = ("local", "netns", "inventory")

# Optional facts of a host entry (inventory mode) and their JSON types.
_FACTS: dict[str, type] = {"name": str, "cpu_model": str, "cores": int, "kernel": str, "distro": str}


@dataclass(frozen=True)
class Host:
    role: str            # server or client
    netns: str | None    # its network namespace (netns mode)
    addr: str
    cpus: str
    name: str | None = None        # inventory: the machine's name
    cpu_model: str | None = None
    cores: int | None = None
    kernel: str | None = None
    distro: str | None = None

    def label(self) -> str:
        """'NAME ADDR', or ADDR alone when the host has no name."""
        return f"{self.name} {self.addr}" if self.name else self.addr

    def facts(self) -> str:
        """'Xeon E-2288G, 8 cores, kernel 6.1.0, Debian 12, CPUs 0-3' (the facts it has, CPUs last)."""
        parts = [self.cpu_model, f"{self.cores} cores" if self.cores is not None else None,
                 f"kernel {self.kernel}" if self.kernel else None, self.distro, f"CPUs {self.cpus}"]
        return ", ".join(p for p in parts if p)


def _hosts_words(role: str, hosts: list[Host]) -> str:
    """'client host A (F)'; 'N client hosts A, B (F)' when they share their facts (netns: the
    same CPUs); 'N client hosts A (F1), B (F2)' otherwise."""
    if len(hosts) == 1:
        return f"{role} host {hosts[0].label()} ({hosts[0].facts()})"
    facts = {h.facts() for h in hosts}
    if len(facts) == 1:
        return f"{len(hosts)} {role} hosts {', '.join(h.label() for h in hosts)} ({facts.pop()})"
    return f"{len(hosts)} {role} hosts " + ", ".join(f"{h.label()} ({h.facts()})" for h in hosts)


@dataclass(frozen=True)
class Hosts:
    mode: str
    server_addr: str
    rate: str | None             # tbf rate of the link (netns), None: unshaped
    netem_available: bool | None  # None in local mode (not probed)
    hosts: tuple[Host, ...]

    @property
    def clients(self) -> list[Host]:
        return [h for h in self.hosts if h.role == "client"]

    def _roles(self) -> str:
        servers = [h for h in self.hosts if h.role == "server"]
        parts = [_hosts_words("server", servers)] if servers else []
        if self.clients:
            parts.append(_hosts_words("client", self.clients))
        return ", ".join(parts)

    def words(self) -> str:
        """'netns: server host 10.231.0.1 (CPUs 0), client host 10.231.0.11 (CPUs 1); link unshaped;
        no netem in this kernel (no added delay)'; with several clients '..., 2 client hosts
        10.231.0.11, 10.231.0.12 (CPUs 1), ...'; 'inventory: server host NAME ADDR (CPU model,
        N cores, ...), client hosts ...'."""
        if self.mode == "local":
            cpus = {h.role: h.cpus for h in self.hosts}
            return (f"local: this machine over loopback ({self.server_addr}), server CPUs "
                    f"{cpus.get('server', '?')}, load tool CPUs {cpus.get('client', '?')}")
        if self.mode == "inventory":
            link = f"; links shaped by tbf at {self.rate}" if self.rate else ""
            return f"inventory: {self._roles()}{link}"
        several = len(self.clients) > 1
        joined = "joined by veth pairs through a bridge" if several else "joined by a veth pair"
        link = (f"{'each client link' if several else 'link'} shaped by tbf at {self.rate}" if self.rate
                else f"link{'s' if several else ''} unshaped")
        netem = ("netem available (not used)" if self.netem_available
                 else "no netem in this kernel: no added delay")
        return f"netns: {self._roles()}, {joined}; {link}; {netem}"


def _host(h: Any, i: int, p: Path) -> Host:
    if not isinstance(h, dict):
        raise RawFormatError(p, "not an object", key=f"hosts[{i}]")
    facts: dict[str, Any] = {}
    for key, typ in _FACTS.items():
        value = h.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, typ)):
            raise RawFormatError(p, f"unexpected value {value!r}", key=f"hosts[{i}].{key}")
        facts[key] = value
    return Host(str(require(h, "role", p, str)), h.get("netns"), str(require(h, "addr", p, str)),
                str(require(h, "cpus", p, str)), **facts)


def read_hosts(path: str | Path) -> Hosts:
    """The file as a Hosts; RawFormatError naming the file and key when it does not fit."""
    p = Path(path)
    return hosts_of(read_json_object(p), p)


def hosts_of(doc: dict[str, Any], p: str | Path = "<hosts.json>") -> Hosts:
    """A hosts.json document (as read) as a Hosts; RawFormatError naming `p` and the key."""
    p = Path(p)
    mode = require(doc, "mode", p, str)
    if mode not in MODES:
        raise RawFormatError(p, f"unknown host mode {mode!r} (modes: {', '.join(MODES)})", key="mode")
    hosts = [_host(h, i, p) for i, h in enumerate(require(doc, "hosts", p, list))]
    netem = doc.get("netem_available")
    return Hosts(mode, str(require(doc, "server_addr", p, str)), doc.get("rate"),
                 netem if isinstance(netem, bool) else None, tuple(hosts))


def suite_hosts(run_dir: str | Path, suite: str) -> Hosts | None:
    """The suite's hosts.json, None when the suite has none (runs made before host modes: local)."""
    path = Path(run_dir) / suite / "hosts.json"
    return read_hosts(path) if path.is_file() else None
