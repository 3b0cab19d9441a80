"""Server manifests (servers/**/lab.toml): every committed one is valid, and each kind of mistake
is refused with the file and the field named."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from httplab.lab import manifest as mf
from httplab.lab import manifest_cli as mcli

ROOT = Path(__file__).resolve().parents[2]
GOOD = """
name = "tiny"
display = "Tiny (test)"
language = "Python"
tier = "contestant"
colour = "#123456"
version = "python3 --version"
[start]
h1 = "python3 {dir}/server.py {port} {addr}"
[serves]
h1 = ["ping"]
[cores]
uses = "single"
how = "one thread"
"""


def write(tmp: Path, text: str, folder: str = "tiny") -> Path:
    d = tmp / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "lab.toml").write_text(text)
    return d / "lab.toml"


def error_of(path: Path) -> mf.ManifestError:
    with pytest.raises(mf.ManifestError) as e:
        mf.read_manifest(path)
    return e.value


def test_committed_manifests_are_valid_and_unique():
    ms = mf.load_all(ROOT / "servers")
    names = [m.name for m in ms]
    assert len(names) == len(set(names)) >= 15
    assert {"contestant", "stdlib", "production", "reference", "floor"} <= {m.tier for m in ms}
    assert len({m.colour for m in ms}) == len(ms)
    for m in ms:
        assert m.caps(), m.name
        assert m.version


def test_committed_manifests_follow_the_family_layout():
    """One convention for variants (docs/adding-a-server.md): a family folder servers/<family>/
    with its default server's lab.toml at the top, if it has one, and one subfolder per variant,
    servers/<family>/<variant>/lab.toml; nothing deeper, and no variant as a sibling family folder
    (floor_uring lives in servers/floor/uring/, not in a sibling folder of floor)."""
    base = ROOT / "servers"
    ms = mf.load_all(base)
    for m in ms:
        parts = m.path.relative_to(base).parts
        assert len(parts) in (2, 3), f"{m.path}: servers/<family>/[<variant>/]lab.toml"
    families = {m.path.relative_to(base).parts[0] for m in ms}
    for f in families:
        assert not [g for g in families if g.startswith(f + "_")], f"a variant of {f} is a family"
    where = {m.name: m.path.parent.relative_to(base).as_posix() for m in ms}
    assert where["floor_uring"] == "floor/uring" and where["evloop_uring"] == "evloop/uring"
    assert where["lang_go_std"] == "go/std" and where["lang_go_fasthttp"] == "go/fasthttp"


def test_a_minimal_manifest_reads(tmp_path):
    m = mf.read_manifest(write(tmp_path, GOOD))
    assert (m.name, m.display, m.short, m.tier, m.ready) == ("tiny", "Tiny (test)", "Tiny (test)", "contestant", "port")
    assert m.caps() == ["h1:ping"]
    argv = mf.start_argv(m, "h1", mf.Values(tmp_path, port=18000))
    assert argv == ["python3", str(tmp_path / "tiny" / "server.py"), "18000", "127.0.0.1"]
    # the netns host mode's server address, as the shell passes it (SERVER_ADDR)
    argv = mf.start_argv(m, "h1", mf.Values(tmp_path, port=18000, addr="10.231.0.1"))
    assert argv[-1] == "10.231.0.1"


@pytest.mark.parametrize("edit, fld, words", [
    (lambda t: t.replace('display = "Tiny (test)"\n', ""), "display", "missing"),
    (lambda t: t.replace('tier = "contestant"', 'tier = "champion"'), "tier", "unknown tier"),
    (lambda t: t.replace('colour = "#123456"', 'colour = "blue"'), "colour", "#rrggbb"),
    (lambda t: t.replace("[start]\n", "[start]\nquic = \"x {port}\"\n"), "start.quic", "unknown mode"),
    (lambda t: t.replace(" {addr}", ""), "start.h1", "does not pass {addr}"),
    (lambda t: t.replace('h1 = ["ping"]', 'h1 = ["ping", "teleport"]'), "serves.h1", "unknown route kind"),
    (lambda t: t.replace('h1 = ["ping"]', 'h1 = ["ping"]\nh2 = ["ping"]'), "serves.h2", "no start mode carries h2"),
    (lambda t: t.replace("{port}", "{prot}"), "start.h1", "unknown placeholder {prot}"),
    (lambda t: t.replace('version = "python3 --version"\n', ""), "version", "missing"),
    (lambda t: t.replace("[start]", 'colours = "#000000"\n[start]'), "colours", "unknown field"),
    (lambda t: t.replace('name = "tiny"', 'name = "Tiny-1"'), "name", "lower-case"),
    (lambda t: t.replace("[start]", 'ready = "soon"\n[start]'), "ready", "'port' or a path"),
    (lambda t: t.replace("[start]", "[start\n"), "(syntax)", ""),
])
def test_each_mistake_names_file_and_field(tmp_path, edit, fld, words):
    path = write(tmp_path, edit(GOOD))
    e = error_of(path)
    assert e.field == fld
    assert str(path.name) in str(e) and f": {fld}: " in str(e) and words in str(e)


def test_a_start_command_that_is_not_built_is_named(tmp_path):
    m = mf.read_manifest(write(tmp_path, GOOD.replace("python3 {dir}/server.py", "{build}/bench/tiny_server")))
    with pytest.raises(mf.ManifestError) as e:
        mf.start_argv(m, "h1", mf.Values(tmp_path / "build", port=1))
    assert e.value.field == "start.h1" and "is not built" in str(e.value)
    with pytest.raises(mf.ManifestError) as e:
        mf.start_argv(m, "tls", mf.Values(tmp_path / "build", port=1))
    assert e.value.field == "start.tls" and "has no mode" in str(e.value)
    m2 = mf.read_manifest(write(tmp_path, GOOD.replace("python3 {dir}", "no-such-program-xyz {dir}"), "t2"))
    with pytest.raises(mf.ManifestError, match="not installed"):
        mf.start_argv(m2, "h1", mf.Values(tmp_path, port=1))


def test_duplicate_names_and_colours_name_both_files(tmp_path):
    write(tmp_path, GOOD, "a")
    write(tmp_path, GOOD, "b")
    with pytest.raises(mf.ManifestError, match=r"b/lab.toml: name: 'tiny' is also the name in .*a/lab.toml"):
        mf.load_all(tmp_path)
    write(tmp_path, GOOD.replace('"tiny"', '"other"'), "b")
    with pytest.raises(mf.ManifestError, match=r"colour: #123456 is also the colour of tiny"):
        mf.load_all(tmp_path)


def test_config_template_vars_are_checked_per_mode(tmp_path):
    d = tmp_path / "cfg"
    d.mkdir()
    (d / "x.conf.in").write_text("listen @ADDR@:@PORT@@FLAGS@;\nroot @WWW@;\n")
    text = GOOD.replace('"tiny"', '"cfg"').replace(" {addr}", "") + '[config]\ntemplate = "x.conf.in"\n'
    (d / "lab.toml").write_text(text)
    e = error_of(d / "lab.toml")
    assert e.field == "config.h1" and "@FLAGS@" in str(e)
    (d / "lab.toml").write_text(text + '[config.vars]\nFLAGS = " fast"\n')
    m = mf.read_manifest(d / "lab.toml")
    out = mf.render_config(m, "h1", mf.Values(tmp_path, port=9, conf_dir=str(tmp_path)), www="/w")
    assert out.read_text() == "listen 127.0.0.1:9 fast;\nroot /w;\n"


def test_shell_declarations_define_the_registry():
    ms = mf.load_all(ROOT / "servers")
    decl = mcli.shell_declarations(ms)
    out = subprocess.run(["bash", "-c", decl + 'echo "${LAB_SERVERS[*]}|${SERVER_CAPS[floor]}|${SERVER_MODES[floor]}"'],
                         capture_output=True, text=True, check=True).stdout.strip()
    names, caps, modes = out.split("|")
    assert names.split() == [m.name for m in ms]
    assert caps == "h1:ping h1:pipeline" and modes == "h1"


def test_shared_build_commands_run_once():
    jobs = mcli.shell_jobs(mf.load_all(ROOT / "servers"), "build", Path("/b"))
    cmds = [c for _, c, _ in jobs]
    assert len(cmds) == len(set(cmds))
    rust = [names for _, c, names in jobs if "servers/rust" in c]
    # the shoot-out's two servers share one command; the HTTP/3 rival (its own workspace) has its own
    assert sorted(rust) == ["lang_rust_std,lang_rust_axum", "rust_h3"]


def test_gate_knows_every_route_kind():
    """scripts/lib/gate.sh's gate_expectation has an expected answer for each route kind a manifest
    may declare, and no other."""
    text = (ROOT / "scripts" / "lib" / "gate.sh").read_text()
    body = text[text.index("gate_expectation() {"):]
    body = body[:body.index("\n}\n")]
    kinds = set()
    for line in re.findall(r"^\s+([a-z_|]+)\)", body, re.M):
        kinds |= set(line.split("|"))
    assert kinds == set(mf.ROUTE_KINDS)


def test_serve_list_and_a_broken_manifest_through_the_shell(tmp_path):
    servers = tmp_path / "servers"
    write(servers, GOOD)
    env = {**os.environ, "LAB_SERVERS_DIR": str(servers)}
    out = subprocess.run([str(ROOT / "scripts" / "serve.sh"), "--list"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[:3] == ["tiny", "contestant", "h1"]
    write(servers, GOOD.replace('h1 = ["ping"]', 'h1 = ["pong"]'))
    out = subprocess.run([str(ROOT / "scripts" / "serve.sh"), "tiny", "18999"], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "tiny/lab.toml: serves.h1: unknown route kind 'pong'" in out.stderr
    assert shutil.which("bash")


# ---------------------------------------------------------------- [cores]: how a server uses n cores

def test_every_committed_server_says_how_it_uses_cores():
    ms = mf.load_all(ROOT / "servers")
    for m in ms:
        assert m.cores.uses in mf.CORE_USES and m.cores.how, m.name
    uses = {m.name: m.cores.uses for m in ms}
    assert uses["evloop"] == "processes" and uses["floor"] == "single" and uses["go"] == "threads"
    assert uses["nginx"] == "processes" and uses["h2o"] == "threads"


@pytest.mark.parametrize("server, cores, want", [
    ("evloop", 4, ["--workers", "4"]),     # flags
    ("go", 8, ["GOMAXPROCS=8"]),          # environment
])
def test_cores_fill_flags_and_environment(server, cores, want, tmp_path):
    m = {x.name: x for x in mf.load_all(ROOT / "servers")}[server]
    build = tmp_path / "build"
    (build / "bench").mkdir(parents=True)
    for mode in m.start:
        prog = mf.fill(m.start[mode].split()[0], mf.Values(build).table(m))
        Path(prog).parent.mkdir(parents=True, exist_ok=True)
        Path(prog).write_text("#!/bin/sh\n")
        Path(prog).chmod(0o755)
        argv = mf.start_argv(m, mode, mf.Values(build, port=1, cert="c", key="k", cores=cores))
        text = " ".join(argv)
        assert " ".join(want) in text, (mode, argv)


def test_cores_fill_config_templates(tmp_path):
    m = {x.name: x for x in mf.load_all(ROOT / "servers")}["nginx"]
    out = mf.render_config(m, "h1", mf.Values(tmp_path, port=9, conf_dir=str(tmp_path), cores=6), www="/w")
    assert "worker_processes 6;" in out.read_text()
    h2o = {x.name: x for x in mf.load_all(ROOT / "servers")}["h2o"]
    out = mf.render_config(h2o, "h1", mf.Values(tmp_path, port=9, conf_dir=str(tmp_path), cores=1), www="/w")
    assert "num-threads: 1\n" in out.read_text()


CORES_OK = '[cores]\nuses = "processes"\nhow = "n processes"\n'


@pytest.mark.parametrize("edit, fld, words", [
    (lambda t: t.replace('[cores]\nuses = "single"\nhow = "one thread"\n', ""), "cores", "missing"),
    (lambda t: t.replace('uses = "single"', 'uses = "many"'), "cores.uses", "is not one of"),
    (lambda t: t.replace('how = "one thread"', 'how = ""'), "cores.how", "one sentence"),
    (lambda t: t.replace('how = "one thread"', 'how = "x"\nmax = 4'), "cores.max", "unknown key"),
    # told nothing, yet said to scale by processes: how would it know n?
    (lambda t: t.replace('uses = "single"', 'uses = "processes"'), "cores.uses", "never passes {cores}"),
    # single, yet told n
    (lambda t: t.replace("{addr}\"", "{addr} --threads {cores}\""), "cores.uses", "passes {cores}"),
    (lambda t: t.replace("{addr}\"", "{addr} {core}\""), "start.h1", "unknown placeholder {core}"),
])
def test_each_cores_mistake_names_file_and_field(tmp_path, edit, fld, words):
    good = GOOD
    mf.read_manifest(write(tmp_path, good, "ok"))     # the base is valid
    path = write(tmp_path, edit(good))
    e = error_of(path)
    assert e.field == fld, str(e)
    assert f": {fld}: " in str(e) and words in str(e)


def test_cores_may_reach_a_mode_through_env_or_config(tmp_path):
    text = GOOD.replace('[cores]\nuses = "single"\nhow = "one thread"\n', CORES_OK + '[env]\nWORKERS = "{cores}"\n')
    assert text != GOOD
    m = mf.read_manifest(write(tmp_path, text))
    assert m.cores.uses == "processes" and m.cores.scales
    argv = mf.start_argv(m, "h1", mf.Values(tmp_path, port=1, cores=3))
    assert argv[:2] == ["env", "WORKERS=3"]


H3 = GOOD.replace('name = "tiny"', 'name = "tiny_h3"').replace('colour = "#123456"', 'colour = "#654321"').replace(
    'h1 = "python3 {dir}/server.py {port} {addr}"', 'h3 = "python3 {dir}/server.py {port} {cert} {key} {addr}"').replace(
    'h1 = ["ping"]', 'h3 = ["ping"]')


def test_a_tcp_twin_is_an_http3_servers_and_names_another_server(tmp_path):
    """tcp_twin: the server of the same application over TCP, whose HTTPS/2 figures the HTTP/3
    suite sets beside an HTTP/3 server's; only an h3 server names one, and it must exist."""
    write(tmp_path, GOOD, "a")
    twin = lambda text, name: text.replace("version = ", f'tcp_twin = "{name}"\nversion = ')  # noqa: E731
    write(tmp_path, twin(H3, "tiny"), "b")
    assert {m.name: m.tcp_twin for m in mf.load_all(tmp_path)} == {"tiny": None, "tiny_h3": "tiny"}
    write(tmp_path, twin(H3, "nobody"), "b")
    with pytest.raises(mf.ManifestError, match=r"b/lab.toml: tcp_twin: no manifest names 'nobody'"):
        mf.load_all(tmp_path)
    e = error_of(write(tmp_path, twin(H3, "tiny_h3"), "b"))
    assert e.field == "tcp_twin" and "another server" in str(e)
    e = error_of(write(tmp_path, twin(GOOD, "tiny_h3"), "a"))
    assert e.field == "tcp_twin" and "only a server with an h3 mode" in str(e)
    assert [m.tcp_twin for m in mf.load_all(ROOT / "servers") if m.name == "go_h3"] == ["go"]
