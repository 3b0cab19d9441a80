"""Server manifests: one `lab.toml` per server (servers/<impl>/lab.toml, or
servers/<impl>/<variant>/lab.toml when one folder holds several servers), read by the shell
(through this module's command line) and by the package (lab.servers) alike, so adding a
server is one new file. README "Add your server" walks through one; docs of every field are
in FIELDS below and in `python -m httplab manifest fields` (its command line: lab.manifest_cli).

Only the standard library is imported: the shell calls this before and between measured runs,
and setup.sh calls it before the lab's Python environment exists.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# How a suite talks to a server (its start command per mode), and which HTTP versions each
# mode carries: over TLS the client picks h1 or h2 by ALPN; h3 is HTTP/3 over QUIC (UDP, TLS 1.3
# inside QUIC, so it takes the certificate too).
MODES: dict[str, tuple[str, ...]] = {"h1": ("h1",), "h2c": ("h2",), "tls": ("h1", "h2"), "h3": ("h3",)}
PROTOCOLS = ("h1", "h2", "h3")
# the modes whose start command is given the run's certificate and key
TLS_MODES = ("tls", "h3")

# The route kinds a suite can ask for (scripts/lib.sh gate_expectation checks each answer).
ROUTE_KINDS: dict[str, str] = {
    "ping": "GET /ping answers 'pong'",
    "pipeline": "GET /ping, 16 requests pipelined per connection (HTTP/1.1)",
    "echo_get": "GET /echo?size=N answers N bytes of 'x' (N = 64, 256, 1024, 4096)",
    "echo_post": "POST /echo answers the request body (up to 64 KiB)",
    "root": "GET / answers 'Hello, World!'",
    "query": "GET /something?foo=bar answers 'foo=bar\\n' (each parameter 'k=v' on a line)",
    "json": "GET /something?json=true answers {\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\"}}",
    "post_json": "POST /something with a JSON body answers {\"received\":<the body>,\"bytes\":<its length>}",
    "root_close": "GET / with 'Connection: close' on every request",
}

# reference: a production server the others are read against; floor: the limit of
# the setup (no parsing); contestant: a server under test (the lab's C event loop, yours);
# stdlib / production: seed 003's two tiers of a language.
TIERS = ("contestant", "stdlib", "production", "reference", "floor")

PLACEHOLDERS = {
    "port": "the TCP port the suite gives the server",
    "addr": "the IPv4 address the server listens on: 127.0.0.1, or the server host's in the netns host mode",
    "cert": "TLS certificate file (PEM), tls mode only",
    "key": "TLS private key file (PEM), tls mode only",
    "build": "the build directory (build/, or BUILD_DIR)",
    "dir": "the folder of this lab.toml",
    "root": "the lab's checkout",
    "servers": "the folder holding every server's folder (servers/, or LAB_SERVERS_DIR)",
    "conf_dir": "the folder the rendered config file is written to ([config] servers only)",
    "cores": "the number of cores the server is pinned to, n (start commands, env and config vars)",
}

# How a server uses the n cores it is given ([cores] uses): every server says, so that a suite that
# gives servers several cores (the scaling suite) knows what n means for each, and a report can say
# it. The lab pins a server to n CPUs (taskset) and fills {cores} with n.
CORE_USES: dict[str, str] = {
    "single": "one thread serves (an event loop, or threads behind one lock such as Python's GIL): "
              "more cores do not help it; the scaling suite measures it at n = 1 only",
    "processes": "n processes, set through {cores} in its start command, env or config vars",
    "threads": "n threads in one process, set through {cores} in its start command, env or config vars",
    "affinity": "it sizes itself from the CPU set it is pinned to (or runs a fixed pool on it): the "
                "pinning is the setting; {cores} is not needed",
}

FIELDS: dict[str, str] = {
    "name": "server id: lower-case letters, digits and '_' (used in raw/ paths, data and flags)",
    "display": "name shown in reports",
    "short": "optional: short label for table headers (default: display)",
    "language": "programming language (reports group by it)",
    "tier": "one of " + ", ".join(TIERS),
    "colour": "'#rrggbb': the server's colour in every plot of every report (unique)",
    "order": "optional integer: position in tables and plots (default 1000; ties by name)",
    "build": "optional shell command run in this folder by scripts/build.sh ({build} etc. filled in)",
    "test": "optional shell command run in this folder by scripts/test.sh",
    "version": "shell command that prints the server's version (first line goes to meta.json)",
    "start.<mode>": "command line per mode (h1, h2c, tls, h3: HTTP/3 over QUIC on UDP); placeholders {port} {addr} {cert} {key} {build} {dir} {root} {conf_dir} {cores}; the server must listen on {addr} (in the command, or as @ADDR@ in its config template)",
    "env": "optional table of environment variables for the start command ({cores} allowed)",
    "serves.<protocol>": "route kinds served over h1 / h2 / h3: " + ", ".join(ROUTE_KINDS),
    "ready": ("'port' (ready when the port accepts a connection; in the h3 mode, when its UDP port is bound) "
              "or a path such as '/ping' (ready when it answers 2xx, over HTTP/3 in the h3 mode)"),
    "ready_timeout_s": "optional: seconds to wait for readiness (default 10)",
    "min_warmup_s": ("optional whole seconds (default 0): the least warm-up each of its points gets, for a server "
                     "whose runtime compiles or specialises its code as it serves (V8's JIT); a run's shorter "
                     "--warmup is raised to it for this server alone, and its points' scenario.json say so"),
    "config.template": "optional: a config file template in this folder; @PORT@ @ADDR@ @PREFIX@ @WWW@ and config.vars filled in per start",
    "config.vars / config.<mode>": "optional: @NAME@ values for the template (all modes / one mode); placeholders allowed",
    "apt": "optional list of Debian packages scripts/setup.sh installs for this server",
    "services": "optional list of packaged system services setup.sh stops (the lab starts its own instance)",
    "cores.uses": "how it uses n cores: one of " + ", ".join(CORE_USES) + " (python -m httplab manifest fields)",
    "cores.how": "one sentence for the reports: what n cores mean for this server (e.g. '--workers n: n event loops')",
    "tcp_twin": ("optional, for a server with an h3 mode only: the server of this registry that serves the same "
                 "application over TCP (Go's net/http for quic-go's), whose HTTPS/2 figures the HTTP/3 suite sets "
                 "beside this one's; a server that serves both itself needs none"),
}

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_TEMPLATE_VAR = re.compile(r"@([A-Z_]+)@")
_KNOWN_KEYS = {"name", "display", "short", "language", "tier", "colour", "order", "build", "test",
               "version", "start", "env", "serves", "ready", "ready_timeout_s", "config", "apt", "services",
               "cores", "tcp_twin", "min_warmup_s"}


class ManifestError(ValueError):
    """A manifest that cannot be used: the message names the file and the field."""

    def __init__(self, path: Path | str, fld: str, message: str):
        self.path, self.field = Path(path), fld
        super().__init__(f"{_show(path)}: {fld}: {message}")


def _show(path: Path | str) -> str:
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


@dataclass(frozen=True)
class Config:
    template: Path
    vars: dict[str, dict[str, str]]  # mode -> @NAME@ -> value (defaults merged in)


@dataclass(frozen=True)
class Cores:
    uses: str   # a key of CORE_USES
    how: str

    @property
    def scales(self) -> bool:
        """Whether giving it more cores can make it serve more (all but single)."""
        return self.uses != "single"


@dataclass(frozen=True)
class Manifest:
    path: Path
    name: str
    display: str
    short: str
    language: str
    tier: str
    colour: str
    order: int
    version: str
    start: dict[str, str]
    serves: dict[str, tuple[str, ...]]
    cores: Cores
    ready: str = "port"
    ready_timeout_s: float = 10.0
    build: str | None = None
    test: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    config: Config | None = None
    apt: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    tcp_twin: str | None = None
    min_warmup_s: int = 0

    @property
    def dir(self) -> Path:
        return self.path.parent

    def caps(self) -> list[str]:
        """'<protocol>:<kind>' for every route kind served (scripts' SERVER_CAPS)."""
        return [f"{p}:{k}" for p in PROTOCOLS for k in self.serves.get(p, ())]


# ---------------------------------------------------------------- reading and checking

def _str(path: Path, doc: dict, key: str, required: bool = True) -> str | None:
    v = doc.get(key)
    if v is None:
        if required:
            raise ManifestError(path, key, "missing (" + FIELDS.get(key, "required") + ")")
        return None
    if not isinstance(v, str) or not v.strip():
        raise ManifestError(path, key, f"must be a non-empty string (got {v!r})")
    return v


def _str_list(path: Path, value: object, fld: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise ManifestError(path, fld, f"must be a list of strings (got {value!r})")
    return tuple(value)


def _check_placeholders(path: Path, fld: str, text: str, allowed: set[str]) -> None:
    for name in _PLACEHOLDER.findall(text):
        if name not in allowed:
            raise ManifestError(path, fld, f"unknown placeholder {{{name}}} (known here: "
                                + ", ".join("{" + a + "}" for a in sorted(allowed)) + ")")


def _str_table(path: Path, value: object, fld: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ManifestError(path, fld, "must be a table of strings")
    return dict(value)


def _config(path: Path, value: object, modes: set[str]) -> Config:
    if not isinstance(value, dict):
        raise ManifestError(path, "config", "must be a table")
    template = _str(path, value, "template")
    assert template is not None
    tpath = path.parent / template
    if not tpath.is_file():
        raise ManifestError(path, "config.template", f"{_show(tpath)} does not exist")
    unknown = set(value) - {"template", "vars"} - set(MODES)
    if unknown:
        raise ManifestError(path, f"config.{sorted(unknown)[0]}", "unknown key (template, vars, or a mode: "
                            + ", ".join(MODES) + ")")
    base = _str_table(path, value.get("vars", {}), "config.vars")
    by_mode: dict[str, dict[str, str]] = {}
    used = set(_TEMPLATE_VAR.findall(tpath.read_text())) - {"PORT", "ADDR", "PREFIX", "WWW"}
    for mode in modes:
        merged = base | _str_table(path, value.get(mode, {}), f"config.{mode}")
        for k, v in merged.items():
            _check_placeholders(path, f"config.{mode}.{k}", v, set(PLACEHOLDERS))
        missing = used - set(merged)
        if missing:
            raise ManifestError(path, f"config.{mode}", f"the template uses @{sorted(missing)[0]}@, "
                                "which neither config.vars nor this mode sets")
        by_mode[mode] = merged
    return Config(tpath, by_mode)


def _mentions_cores(text: str) -> bool:
    return "cores" in _PLACEHOLDER.findall(text)


def _cores(path: Path, doc: dict) -> Cores:
    """[cores]: how the server uses n cores. {cores} must reach every mode's start (through its
    command, env or config vars) for processes and threads, and must not appear for single (a
    single-threaded server that is told n would be claiming what it cannot do)."""
    value = doc.get("cores")
    if not isinstance(value, dict):
        raise ManifestError(path, "cores", "missing: a table [cores] with uses = \"" + "|".join(CORE_USES)
                            + "\" and how = \"<one sentence>\" (how the server uses n cores)")
    unknown = set(value) - {"uses", "how"}
    if unknown:
        raise ManifestError(path, f"cores.{sorted(unknown)[0]}", "unknown key (uses, how)")
    uses = value.get("uses")
    if uses not in CORE_USES:
        raise ManifestError(path, "cores.uses", f"{uses!r} is not one of " + ", ".join(CORE_USES))
    how = value.get("how")
    if not isinstance(how, str) or not how.strip():
        raise ManifestError(path, "cores.how", "missing: one sentence saying what n cores mean for it")
    env = doc.get("env") if isinstance(doc.get("env"), dict) else {}
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    for mode, cmd in doc["start"].items():
        texts = [cmd, *(v for v in env.values() if isinstance(v, str))]
        for table in (config.get("vars"), config.get(mode)):
            if isinstance(table, dict):
                texts += [v for v in table.values() if isinstance(v, str)]
        told = any(_mentions_cores(t) for t in texts)
        if uses in ("processes", "threads") and not told:
            raise ManifestError(path, "cores.uses", f"{uses!r}, but mode {mode} never passes {{cores}} (in "
                                f"start.{mode}, env or config vars): how would it know n?")
        if uses == "single" and told:
            raise ManifestError(path, "cores.uses", f"'single', but mode {mode} passes {{cores}}: a server "
                                "that is told n uses processes or threads")
    return Cores(uses, how.strip())


def read_manifest(path: Path | str) -> Manifest:
    """One lab.toml, checked; ManifestError names the file and the field of the first problem."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(path, "(syntax)", str(e)) from None
    unknown = set(doc) - _KNOWN_KEYS
    if unknown:
        raise ManifestError(path, sorted(unknown)[0], "unknown field (fields: " + ", ".join(sorted(_KNOWN_KEYS)) + ")")
    name = _str(path, doc, "name")
    assert name is not None
    if not _NAME.match(name):
        raise ManifestError(path, "name", f"{name!r}: use lower-case letters, digits and '_', starting with a letter")
    tier = _str(path, doc, "tier")
    if tier not in TIERS:
        raise ManifestError(path, "tier", f"unknown tier {tier!r} (tiers: {', '.join(TIERS)})")
    colour = _str(path, doc, "colour")
    if not _COLOUR.match(colour or ""):
        raise ManifestError(path, "colour", f"{colour!r} is not '#rrggbb'")
    order = doc.get("order", 1000)
    if not isinstance(order, int) or isinstance(order, bool):
        raise ManifestError(path, "order", f"must be an integer (got {order!r})")

    start = doc.get("start")
    if not isinstance(start, dict) or not start:
        raise ManifestError(path, "start", "missing: a table with a command per mode (" + ", ".join(MODES) + ")")
    for mode, cmd in start.items():
        if mode not in MODES:
            raise ManifestError(path, f"start.{mode}", f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
        if not isinstance(cmd, str) or not cmd.strip():
            raise ManifestError(path, f"start.{mode}", "must be a non-empty command line")
        allowed = set(PLACEHOLDERS) - ({"cert", "key"} if mode not in TLS_MODES else set())
        if "config" not in doc:
            allowed.discard("conf_dir")
        _check_placeholders(path, f"start.{mode}", cmd, allowed)
        # the netns host mode gives the server another address: a server that cannot be told it
        # would be unreachable there
        config = doc.get("config")
        template = (path.parent / config["template"]) if isinstance(config, dict) and isinstance(
            config.get("template"), str) else None
        if "{addr}" not in cmd and not (template and template.is_file() and "@ADDR@" in template.read_text()):
            raise ManifestError(path, f"start.{mode}", "does not pass {addr}, the address to listen on "
                                "(or @ADDR@ in the config template)")
        try:
            shlex.split(cmd)
        except ValueError as e:
            raise ManifestError(path, f"start.{mode}", f"cannot be split into words: {e}") from None

    serves = doc.get("serves")
    if not isinstance(serves, dict) or not serves:
        raise ManifestError(path, "serves", "missing: route kinds per protocol, e.g. h1 = [\"ping\"]")
    out_serves: dict[str, tuple[str, ...]] = {}
    for proto, kinds in serves.items():
        if proto not in PROTOCOLS:
            raise ManifestError(path, f"serves.{proto}", f"unknown protocol {proto!r} (protocols: {', '.join(PROTOCOLS)})")
        kinds = _str_list(path, kinds, f"serves.{proto}")
        for k in kinds:
            if k not in ROUTE_KINDS:
                raise ManifestError(path, f"serves.{proto}", f"unknown route kind {k!r} (kinds: {', '.join(ROUTE_KINDS)})")
        if not any(proto in MODES[m] for m in start):
            raise ManifestError(path, f"serves.{proto}", f"no start mode carries {proto} (start has: {', '.join(start)})")
        out_serves[proto] = kinds

    ready = doc.get("ready", "port")
    if not isinstance(ready, str) or not (ready == "port" or ready.startswith("/")):
        raise ManifestError(path, "ready", f"'port' or a path starting with '/' (got {ready!r})")
    timeout = doc.get("ready_timeout_s", 10)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 300:
        raise ManifestError(path, "ready_timeout_s", f"seconds in (0, 300] (got {timeout!r})")

    shell_fields = {}
    for key in ("build", "test", "version"):
        v = _str(path, doc, key, required=(key == "version"))
        if v is not None:
            _check_placeholders(path, key, v, {"build", "dir", "root", "servers"})
        shell_fields[key] = v
    env = _str_table(path, doc.get("env", {}), "env")
    for k, v in env.items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k):
            raise ManifestError(path, f"env.{k}", "not a valid variable name")
        _check_placeholders(path, f"env.{k}", v, {"build", "dir", "root", "servers", "port", "cores"})

    twin = _str(path, doc, "tcp_twin", required=False)
    if twin is not None and "h3" not in start:
        raise ManifestError(path, "tcp_twin", "only a server with an h3 mode names a TCP twin")
    if twin is not None and (twin == name or not _NAME.match(twin)):
        raise ManifestError(path, "tcp_twin", f"{twin!r} is not another server's name")

    warm = doc.get("min_warmup_s", 0)
    if not isinstance(warm, int) or isinstance(warm, bool) or not 0 <= warm <= 30:
        raise ManifestError(path, "min_warmup_s", f"whole seconds in [0, 30] (got {warm!r})")

    display = _str(path, doc, "display")
    return Manifest(
        path=path.resolve(), name=name, display=display or name, short=_str(path, doc, "short", False) or display or name,
        language=_str(path, doc, "language") or "", tier=tier, colour=colour.lower(), order=order,
        version=shell_fields["version"] or "", start=dict(start), serves=out_serves, cores=_cores(path, doc), ready=ready,
        ready_timeout_s=float(timeout), build=shell_fields["build"], test=shell_fields["test"], env=env,
        config=_config(path, doc["config"], set(start)) if "config" in doc else None,
        apt=_str_list(path, doc.get("apt", []), "apt"), services=_str_list(path, doc.get("services", []), "services"),
        tcp_twin=twin, min_warmup_s=warm)


def servers_dir() -> Path:
    """Where the manifests are: LAB_SERVERS_DIR, else the checkout's servers/."""
    return Path(os.environ.get("LAB_SERVERS_DIR") or ROOT / "servers")


def manifest_paths(base: Path | None = None) -> list[Path]:
    base = base or servers_dir()
    # servers/<family>/lab.toml (the family's default server) and servers/<family>/<variant>/lab.toml
    return sorted(set(base.glob("*/lab.toml")) | set(base.glob("*/*/lab.toml")))


def load_all(base: Path | None = None) -> list[Manifest]:
    """Every manifest under servers/, in display order (order, then name). Names and colours must
    be unique: a clash names both files."""
    base = base or servers_dir()
    found = [read_manifest(p) for p in manifest_paths(base)]
    if not found:
        raise ManifestError(base, "(folder)", "no lab.toml found under it")
    by_name: dict[str, Manifest] = {}
    by_colour: dict[str, Manifest] = {}
    for m in found:
        if m.name in by_name:
            raise ManifestError(m.path, "name", f"{m.name!r} is also the name in {_show(by_name[m.name].path)}")
        if m.colour in by_colour:
            raise ManifestError(m.path, "colour", f"{m.colour} is also the colour of {by_colour[m.colour].name} "
                                f"({_show(by_colour[m.colour].path)}); every server needs its own")
        by_name[m.name] = m
        by_colour[m.colour] = m
    for m in found:
        if m.tcp_twin is not None and m.tcp_twin not in by_name:
            raise ManifestError(m.path, "tcp_twin", f"no manifest names {m.tcp_twin!r} (servers: {', '.join(by_name)})")
    return sorted(found, key=lambda m: (m.order, m.name))


# ---------------------------------------------------------------- filling in commands

@dataclass(frozen=True)
class Values:
    """What the placeholders stand for at one start."""
    build: Path
    port: int | None = None
    cert: str | None = None
    key: str | None = None
    conf_dir: str | None = None
    addr: str = "127.0.0.1"
    cores: int = 1          # how many CPUs the server is pinned to

    def table(self, m: Manifest) -> dict[str, str]:
        t = {"build": str(self.build), "dir": str(m.dir), "root": str(ROOT), "servers": str(servers_dir()),
             "addr": self.addr, "cores": str(self.cores)}
        for k in ("port", "cert", "key", "conf_dir"):
            v = getattr(self, k)
            if v is not None:
                t[k] = str(v)
        return t


def fill(text: str, values: dict[str, str], quote: bool = False) -> str:
    """Placeholders replaced (shell-quoted when the text is a shell command run by bash -c)."""
    def one(mt: re.Match) -> str:
        v = values.get(mt.group(1))
        if v is None:
            raise KeyError(mt.group(1))
        return shlex.quote(v) if quote else v
    return _PLACEHOLDER.sub(one, text)


def start_argv(m: Manifest, mode: str, values: Values) -> list[str]:
    """The start command as argv (environment as a leading `env K=V`), placeholders filled in per
    word, so a path with spaces stays one argument. ManifestError when the mode is not offered,
    a needed value is missing, or the program is not built / not installed."""
    if mode not in m.start:
        raise ManifestError(m.path, f"start.{mode}", f"{m.name} has no mode {mode!r} (it has: {', '.join(m.start)})")
    table = values.table(m)
    try:
        words = [fill(w, table) for w in shlex.split(m.start[mode])]
        env = [f"{k}={fill(v, table)}" for k, v in m.env.items()]
    except KeyError as e:
        raise ManifestError(m.path, f"start.{mode}", f"no value for {{{e.args[0]}}} at this start") from None
    prog = words[0]
    if "/" in prog:
        if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            raise ManifestError(m.path, f"start.{mode}", f"{prog} is not built (run scripts/build.sh)")
    elif shutil.which(prog) is None:
        raise ManifestError(m.path, f"start.{mode}", f"{prog!r} is not installed (not on PATH; run scripts/setup.sh)")
    return (["env", *env] if env else []) + words


def render_config(m: Manifest, mode: str, values: Values, www: str) -> Path:
    """Writes the server's config for this start into values.conf_dir (the template's name without
    .in); atomically, so a running server never reads half a file."""
    assert m.config is not None and values.conf_dir is not None and values.port is not None
    table = values.table(m)
    subst = {"PORT": str(values.port), "ADDR": values.addr, "PREFIX": values.conf_dir, "WWW": www}
    try:
        subst |= {k: fill(v, table) for k, v in m.config.vars[mode].items()}
    except KeyError as e:
        raise ManifestError(m.path, f"config.{mode}", f"no value for {{{e.args[0]}}} at this start") from None
    text = _TEMPLATE_VAR.sub(lambda mt: subst[mt.group(1)], m.config.template.read_text())
    out = Path(values.conf_dir) / m.config.template.name.removesuffix(".in")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    tmp.chmod(0o644)
    tmp.replace(out)
    return out


def version_of(m: Manifest, build: Path) -> str:
    """First line the version command prints (stdout, else stderr), or why there is none."""
    cmd = fill(m.version, Values(build).table(m), quote=True)
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=m.dir, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "unknown (version command timed out)"
    lines = [ln.strip() for ln in (p.stdout + "\n" + p.stderr).splitlines() if ln.strip()]
    if p.returncode != 0 or not lines:
        return f"unknown (version command exited {p.returncode})"
    return lines[0]
