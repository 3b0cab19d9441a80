"""raw/<run_id>/<suite>/hosts.json (scripts/lib/hosts.sh; issue 19): the host mode a suite ran in and
each host's facts, read into a typed record, and said in one line for a report's header."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import RawFormatError
from .jsonio import read_json_object, require

MODES = ("local", "netns")


@dataclass(frozen=True)
class Host:
    role: str            # server or client
    netns: str | None    # its network namespace (netns mode)
    addr: str
    cpus: str


@dataclass(frozen=True)
class Hosts:
    mode: str
    server_addr: str
    rate: str | None             # tbf rate of the link (netns), None: unshaped
    netem_available: bool | None  # None in local mode (not probed)
    hosts: tuple[Host, ...]

    def words(self) -> str:
        """'netns: server host 10.231.0.1 (CPUs 0), client host 10.231.0.11 (CPUs 1); link unshaped;
        no netem in this kernel (no added delay)'."""
        if self.mode == "local":
            cpus = {h.role: h.cpus for h in self.hosts}
            return (f"local: this machine over loopback ({self.server_addr}), server CPUs "
                    f"{cpus.get('server', '?')}, load tool CPUs {cpus.get('client', '?')}")
        parts = ", ".join(f"{h.role} host {h.addr} (CPUs {h.cpus})" for h in self.hosts)
        link = f"link shaped by tbf at {self.rate}" if self.rate else "link unshaped"
        netem = ("netem available (not used)" if self.netem_available
                 else "no netem in this kernel: no added delay")
        return f"netns: {parts}, joined by a veth pair; {link}; {netem}"


def read_hosts(path: str | Path) -> Hosts:
    """The file as a Hosts; RawFormatError naming the file and key when it does not fit."""
    p = Path(path)
    doc = read_json_object(p)
    mode = require(doc, "mode", p, str)
    if mode not in MODES:
        raise RawFormatError(p, f"unknown host mode {mode!r} (modes: {', '.join(MODES)})", key="mode")
    hosts = []
    for i, h in enumerate(require(doc, "hosts", p, list)):
        if not isinstance(h, dict):
            raise RawFormatError(p, "not an object", key=f"hosts[{i}]")
        hosts.append(Host(str(require(h, "role", p, str)), h.get("netns"), str(require(h, "addr", p, str)),
                          str(require(h, "cpus", p, str))))
    netem = doc.get("netem_available")
    return Hosts(mode, str(require(doc, "server_addr", p, str)), doc.get("rate"),
                 netem if isinstance(netem, bool) else None, tuple(hosts))


def suite_hosts(run_dir: str | Path, suite: str) -> Hosts | None:
    """The suite's hosts.json, None when the suite has none (runs made before host modes: local)."""
    path = Path(run_dir) / suite / "hosts.json"
    return read_hosts(path) if path.is_file() else None
