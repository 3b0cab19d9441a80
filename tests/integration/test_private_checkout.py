"""The reference servers from a checkout in a private directory.

h2o and nginx's worker run as nobody, which cannot enter a directory of mode
0700 (private home directories, `mktemp -d`). A checkout there used to lose
h2o in the h2c and https suites: it answered 403 on /ping, read from build/www
under the checkout (nginx: 404 on /echo). render_conf now serves them from a
world-traversable runtime directory (runtime_dir in scripts/lib/servers.sh).

Each test copies the lab's scripts, the two servers' config templates and
build/www (what scripts/build.sh makes) into <mkdtemp, mode 0700>/lab, so
LAB_ROOT and BUILD_DIR are both private, as in such a clone, then runs the
suites' own path through that copy: start_server (serve.sh, render_conf) and
the verify gate, over the suite's protocols (h2c; TLS with h1 and h2).
Needs root (the servers drop to nobody only when started as root).
"""
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile

import pytest

from evloop_process import missing

pytestmark = pytest.mark.concurrent

REPO = pathlib.Path(__file__).resolve().parents[2]
NOBODY = 65534

# The suite variables of a suite's part (suites/<name>/<part>.sh) and scenario lines from its matrix:
# the gate asks each route the server serves over each protocol used.
SUITES = {
    "h1": ("SUITE=http1 PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1", [
        "get_ping_c100 ping GET /ping 0 100 1 report.lua",
        "get_echo_s64_c100 echo_get GET /echo 64 100 1 report.lua"]),
    "h2c": ("SUITE=h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c", [
        "get_ping_c100 ping GET /ping 0 100 10 -",
        "get_echo_s64_c100 echo_get GET /echo 64 100 10 -",
        "get_echo_s4096_c100 echo_get GET /echo 4096 100 10 -"]),
    "tls": ("SUITE=https TLS=true SCHEME=https SERVER_MODE=tls", [
        "h1_get_ping_c100 h1:ping GET /ping 0 100 1 report.lua",
        "h1_get_echo_s1024_c100 h1:echo_get GET /echo 1024 100 1 report.lua",
        "h2_get_ping_c100 h2:ping GET /ping 0 100 10 -",
        "h2_get_echo_s64_c100 h2:echo_get GET /echo 64 100 10 -"]),
}

# Runs in the private copy: $1 server, $2 free port, $3 "break" to make the
# served /ping unreadable to nobody after start-up; then the suite variables and
# scenario lines. Prints the runtime directory, the config and the gate's
# transcript; exits with the gate's status.
DRIVER = r'''
set -euo pipefail
source "$LAB/scripts/lib.sh"
load_servers
server=$1 port=$2 brk=$3; shift 3
eval "$1"; shift
SCENARIOS=("$@")
for i in "${!LAB_SERVERS[@]}"; do
    [[ ${LAB_SERVERS[$i]} == "$server" ]] && LAB_PORT_BASE=$(( port - i ))
done
export LAB_PORT_BASE
RUN_DIR=$PRIVATE/raw/test-run
mkdir -p "$RUN_DIR/$SUITE"
default_cpu_sets
if [[ $TLS == true ]]; then make_run_certificate; make_client_tls_config; fi
PAYLOAD_DIR=$BUILD_DIR/payload GATE_TMP=$(mktemp -d)
make_gate_payloads
trap 'stop_server; rm -rf "$GATE_TMP"' EXIT
# (older checkouts have no runtime directory: everything was in BUILD_DIR)
if declare -F runtime_dir >/dev/null; then runtime_dir; echo "runtime: $LAB_RUNTIME_DIR"; fi
served=${LAB_RUNTIME_DIR:-$BUILD_DIR}
start_server "$server" "$RUN_DIR/$SUITE/server.log"
[[ $brk == break ]] && chmod 0600 "$served/www/ping"
echo "conf:"; cat "$served/run/$server-$SERVER_PORT-$SERVER_MODE"/*.conf
rc=0
gate "$server" 1 || rc=$?
echo "transcript:"; cat "$RUN_DIR/$SUITE/$server"/verify.r1*.txt
exit $rc
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def private_lab():
    """A copy of the lab in a fresh mkdtemp directory (mode 0700); the runtime
    directories the runs made are removed with it."""
    if os.geteuid() != 0:
        pytest.skip("h2o and nginx drop to nobody only when started as root")
    for tool in ("curl", "jq", "openssl"):
        if shutil.which(tool) is None:
            missing(f"{tool} not installed")
    www = pathlib.Path(os.environ.get("BUILD_DIR", REPO / "build")) / "www"
    if not (www / "ping").is_file():
        missing(f"{www} not built (run scripts/build.sh)")
    private = pathlib.Path(tempfile.mkdtemp(prefix="httplab-private-"))
    assert private.stat().st_mode & 0o777 == 0o700
    lab = private / "lab"
    shutil.copytree(REPO / "scripts", lab / "scripts")
    for name in ("h2o", "nginx"):
        shutil.copytree(REPO / "servers" / name, lab / "servers" / name)
    shutil.copytree(www, lab / "build" / "www")
    runtimes = []
    yield private, runtimes
    for d in set(runtimes):
        if d.startswith(("/run/httplab/", "/tmp/httplab-")):
            shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(private, ignore_errors=True)


def run_gate(private_lab, server, mode, brk=""):
    private, runtimes = private_lab
    if shutil.which(server) is None:
        missing(f"{server} not installed (Debian package {server})")
    lab = private / "lab"
    # What made the failure: nobody cannot read the checkout's www files.
    probe = subprocess.run(["cat", str(lab / "build" / "www" / "ping")],
                           user=NOBODY, group=NOBODY, capture_output=True)
    assert probe.returncode != 0, "the private directory is readable by nobody"
    env = {k: v for k, v in os.environ.items()
           if k not in ("BUILD_DIR", "LAB_CERT", "LAB_KEY", "LAB_PORT_BASE",
                        "RUN_DIR", "LAB_CLIENT_OPENSSL_CONF")}
    env.update(LAB=str(lab), PRIVATE=str(private))
    suite_vars, scenarios = SUITES[mode]
    res = subprocess.run(
        ["bash", "-c", DRIVER, "driver", server, str(free_port()), brk,
         suite_vars, *scenarios],
        env=env, capture_output=True, text=True, timeout=60)
    out = res.stdout + res.stderr
    for line in res.stdout.splitlines():
        if line.startswith("runtime: "):
            runtimes.append(line.split(" ", 1)[1])
    return res.returncode, out


@pytest.mark.parametrize("server,mode", [
    ("h2o", "h2c"), ("h2o", "tls"),
    ("nginx", "h1"), ("nginx", "h2c"), ("nginx", "tls")])
def test_gate_passes_from_private_checkout(private_lab, server, mode):
    rc, out = run_gate(private_lab, server, mode)
    assert rc == 0, out
    transcript = out.split("transcript:", 1)[1]
    passes = [ln for ln in transcript.splitlines() if ln.startswith("PASS")]
    assert "FAIL" not in transcript, out
    assert any("/ping" in ln for ln in passes), out
    assert any("/echo?size=" in ln for ln in passes), out
    if mode == "tls":   # both HTTP/1.1 and h2 over TLS
        assert {"HTTP/1.1", "HTTP/2"} <= {ln.split()[3].rstrip(",") for ln in passes}, out
    # Nothing the server opens is under the private directory.
    conf = out.split("conf:", 1)[1].split("transcript:", 1)[0]
    private = str(private_lab[0])
    assert private not in conf, conf


def test_gate_still_fails_loudly_on_403(private_lab):
    """A /ping h2o cannot read is a 403, and the gate says so and fails."""
    rc, out = run_gate(private_lab, "h2o", "h2c", brk="break")
    assert rc != 0, out
    assert "FAIL GET /ping: status 403" in out, out
