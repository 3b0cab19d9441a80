"""`python -m httplab manifest`: the servers' manifests (lab.manifest) as the shell reads them:
the registry as bash declarations, the build and test jobs, the start command of one server, the
fields, checks and lists. Only the standard library: setup.sh calls it before the lab's Python
environment exists.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from .manifest import (CORE_USES, FIELDS, PLACEHOLDERS, ROOT, ROUTE_KINDS, Manifest, ManifestError, Values,
                       TLS_MODES, _show, fill, load_all, render_config, servers_dir, start_argv, version_of)


# ---------------------------------------------------------------- the shell's view

def _bash_assoc(name: str, values: dict[str, str]) -> str:
    body = " ".join(f"[{k}]={shlex.quote(v)}" for k, v in values.items())
    return f"declare -gA {name}=({body})"


def shell_declarations(ms: list[Manifest]) -> str:
    """Bash that defines the registry the scripts use (scripts/servers.sh loads it once)."""
    lines = [
        "LAB_SERVERS=(" + " ".join(m.name for m in ms) + ")",
        # the start modes whose command gets the certificate and key (the shell's takes_cert)
        "LAB_CERT_MODES=(" + " ".join(TLS_MODES) + ")",
        _bash_assoc("SERVER_CAPS", {m.name: " ".join(m.caps()) for m in ms}),
        _bash_assoc("SERVER_MODES", {m.name: " ".join(m.start) for m in ms}),
        _bash_assoc("SERVER_TIER", {m.name: m.tier for m in ms}),
        _bash_assoc("SERVER_READY", {m.name: m.ready for m in ms}),
        _bash_assoc("SERVER_READY_TIMEOUT", {m.name: str(m.ready_timeout_s) for m in ms}),
        _bash_assoc("SERVER_CONFIG", {m.name: ("1" if m.config else "") for m in ms}),
        _bash_assoc("SERVER_MANIFEST", {m.name: str(m.path) for m in ms}),
        _bash_assoc("SERVER_CORES_USES", {m.name: m.cores.uses for m in ms}),
        _bash_assoc("SERVER_MIN_WARMUP", {m.name: str(m.min_warmup_s) for m in ms}),
    ]
    return "\n".join(lines) + "\n"


def _select(ms: list[Manifest], names: list[str]) -> list[Manifest]:
    if not names:
        return ms
    known = {m.name: m for m in ms}
    for n in names:
        if n not in known:
            raise ManifestError(servers_dir(), "(server)", f"no manifest names {n!r} (servers: {', '.join(known)})")
    return [known[n] for n in names]


def shell_jobs(ms: list[Manifest], what: str, build: Path) -> list[tuple[str, str, str]]:
    """(folder, command, servers) for the build or test commands. A command that reads the same
    after filling in runs once, in the folder of the first manifest naming it: two variants that
    share one Makefile (`make -C {servers}/rust`) are built by one make."""
    jobs: dict[str, tuple[str, list[str]]] = {}
    for m in ms:
        cmd = getattr(m, what)
        if cmd:
            jobs.setdefault(fill(cmd, Values(build).table(m), quote=True), (str(m.dir), []))[1].append(m.name)
    return [(d, c, ",".join(names)) for c, (d, names) in jobs.items()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m httplab manifest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR") or str(ROOT / "build"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("validate", help="check every manifest; print one line per server")
    p.add_argument("--built", action="store_true", help="also check that every start command is built / installed")
    sub.add_parser("shell", help="bash declarations of the registry")
    sub.add_parser("list", help="name, tier, modes and route kinds per server")
    sub.add_parser("cores", help="how each server uses n cores: name, uses, how (tab-separated)")
    sub.add_parser("fields", help="the manifest's fields, placeholders and route kinds")
    for name in ("builds", "tests"):
        p = sub.add_parser(name, help=f"the {name[:-1]} commands: folder, command, servers (NUL-separated)")
        p.add_argument("servers", nargs="*")
    p = sub.add_parser("versions", help="JSON {server: version}")
    p.add_argument("servers", nargs="*")
    for name in ("apt", "services"):
        sub.add_parser(name, help=f"the {name} of every manifest, one a line")
    p = sub.add_parser("command", help="the start command of SERVER in MODE, shell-quoted (renders its config)")
    p.add_argument("server")
    p.add_argument("mode")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--addr", default=os.environ.get("SERVER_ADDR") or "127.0.0.1")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--conf-dir")
    p.add_argument("--www")
    p.add_argument("--cores", type=int, default=1, help="the number of CPUs it is pinned to ({cores})")
    args = ap.parse_args(argv)
    build = Path(args.build)
    try:
        ms = load_all()
        if args.cmd == "validate":
            for m in ms if args.built else ():
                for mode in m.start:  # dummy values: only the program is checked here
                    start_argv(m, mode, Values(build, 1, "cert.pem", "key.pem", "/nonexistent"))
            for m in ms:
                print(f"{m.name:22} {_show(m.path)}: {m.tier}, modes {' '.join(m.start)}, {len(m.caps())} route kinds")
        elif args.cmd == "shell":
            sys.stdout.write(shell_declarations(ms))
        elif args.cmd == "list":
            for m in ms:
                print(f"{m.name:20} {m.tier:11} {','.join(m.start):11} {' '.join(m.caps())}")
        elif args.cmd == "fields":
            for k, v in FIELDS.items():
                print(f"{k:28} {v}")
            print("\nplaceholders:")
            for k, v in PLACEHOLDERS.items():
                print(f"  {{{k}}}{' ' * (12 - len(k))}{v}")
            print("\n[cores] uses:")
            for k, v in CORE_USES.items():
                print(f"  {k:12} {v}")
            print("\nroute kinds:")
            for k, v in ROUTE_KINDS.items():
                print(f"  {k:12} {v}")
        elif args.cmd == "cores":
            for m in ms:
                print(f"{m.name}\t{m.cores.uses}\t{m.cores.how}")
        elif args.cmd in ("builds", "tests"):
            for job in shell_jobs(_select(ms, args.servers), args.cmd[:-1], build):
                sys.stdout.write("\0".join(job) + "\0")
        elif args.cmd == "versions":
            print(json.dumps({m.name: version_of(m, build) for m in _select(ms, args.servers)}, indent=1))
        elif args.cmd in ("apt", "services"):
            for item in dict.fromkeys(x for m in ms for x in getattr(m, args.cmd)):
                print(item)
        elif args.cmd == "command":
            m = _select(ms, [args.server])[0]
            if args.mode in TLS_MODES and not (args.cert and args.key):
                raise ManifestError(m.path, f"start.{args.mode}", f"{args.mode} mode needs a certificate and key (LAB_CERT, LAB_KEY)")
            if args.cores < 1:
                raise ManifestError(m.path, "cores", f"--cores takes a number ≥ 1 (got {args.cores})")
            values = Values(build, args.port, args.cert, args.key, args.conf_dir, args.addr, args.cores)
            argv_ = start_argv(m, args.mode, values)
            if m.config is not None:
                if not (args.conf_dir and args.www):
                    raise ManifestError(m.path, "config", "rendering the config needs --conf-dir and --www")
                render_config(m, args.mode, values, args.www)
            print(" ".join(shlex.quote(a) for a in argv_))  # the shell evals it into an array
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
