"""HTTP/3 in the server registry: a server whose manifest has an h3 mode (the C server's, servers/evloop
with --h3 yes; quic-go's, servers/go/h3;
quinn's with the h3 crate, servers/rust/h3; ngtcp2's example server, servers/ngtcp2) is started by the harness as every server is (start_server: serve.sh, then the readiness wait, which
for h3 waits for the UDP port to be bound), and answers the lab's routes over HTTP/3 to ngtcp2's
client (gtlsclient): GET /ping, GET /echo?size=N, POST /echo with a body. The probe the suites ask
between points (server_check) reads the answer over HTTP/3 and tells a stopped server. A second start
on the same UDP port is refused before it starts."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evloop_process import missing

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(os.environ.get("BUILD_DIR", ROOT / "build")) / "bench"

SCRIPT = r'''
set -euo pipefail
source "$LAB_ROOT/scripts/lib.sh"
SERVER_CPUS=0 SERVER_MODE=h3 start_server "$SERVER" "$OUT/server.log"
echo "port $SERVER_PORT"
echo "ping $(h3_status "https://127.0.0.1:$SERVER_PORT/ping")"
echo "missing $(h3_status "https://127.0.0.1:$SERVER_PORT/nowhere")"
get() { gtlsclient --quiet --exit-on-all-streams-close --download="$OUT/$1" "${@:3}" 127.0.0.1 "$SERVER_PORT" "https://127.0.0.1:$SERVER_PORT$2"; }
mkdir -p "$OUT/ping" "$OUT/echo" "$OUT/post"
get ping /ping
if [[ $ECHO == 1 ]]; then
    get echo "/echo?size=1024"
    get post /echo -m POST -d "$OUT/body.bin"
fi
# the liveness probe between points (server_check) asks over HTTP/3: an answer, then none from a
# stopped server
SC_PROTOCOL=h3 SC_URL="https://127.0.0.1:$SERVER_PORT/ping" CLIENT_CPUS=1 PROBE_TIMEOUT=2
server_check && echo "check answers" || echo "check $SERVER_TROUBLE"
kill -STOP "$SERVER_PID"
server_check && echo "stopped answers" || echo "stopped $SERVER_TROUBLE"
kill -CONT "$SERVER_PID"
# the port is taken: a second start is refused, naming it
(SERVER_CPUS=0 SERVER_MODE=h3 start_server "$SERVER" "$OUT/second.log") 2>"$OUT/second.err" && echo "second started" || echo "second refused"
stop_server
udp_bound "$SERVER_PORT" && echo "after-stop bound" || echo "after-stop released"
'''


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed server certificate for 127.0.0.1 that a verifying client accepts: h3load's
    --cacert checks the address, and webpki refuses a CA certificate as the server's own (openssl
    req -x509 makes one unless told)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:FALSE", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


# (ngtcp2's example server, Debian's, serves files: /ping from build/www, no /echo)
@pytest.mark.parametrize("server,binary", [("evloop", BENCH / "https_bench_server"), ("go_h3", BENCH / "go_h3_bench"),
                                           ("rust_h3", BENCH / "rust_h3_bench"), ("ngtcp2", Path("/usr/sbin/gtlsserver"))])
def test_an_http3_server_answers_the_lab_routes(tmp_path, certificate, server, binary):
    if not binary.exists():
        missing(f"{server} is not built or installed (scripts/setup.sh, scripts/build.sh --servers {server})")
    if shutil.which("gtlsclient") is None:
        missing("ngtcp2's HTTP/3 client (gtlsclient, Debian's ngtcp2-client) is missing: scripts/setup.sh")
    body = bytes(range(256)) * 17 + b"end"                   # 4355 bytes, no two halves alike
    (tmp_path / "body.bin").write_bytes(body)
    env = {**os.environ, "LAB_ROOT": str(ROOT), "OUT": str(tmp_path), "LAB_CERT": str(certificate[0]),
           "LAB_KEY": str(certificate[1]), "SERVER": server, "ECHO": "0" if server == "ngtcp2" else "1"}
    r = subprocess.run(["bash", "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    said = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert said["ping"] == "200" and said["missing"] == "404"
    assert (tmp_path / "ping" / "ping").read_bytes() == b"pong"
    if server != "ngtcp2":
        assert (tmp_path / "echo" / "echo?size=1024").read_bytes() == b"x" * 1024
        assert (tmp_path / "post" / "echo").read_bytes() == body
    assert said["check"] == "answers" and said["stopped"] == "stopped answering"
    assert said["second"] == "refused" and f"port {said['port']} is already in use" in (tmp_path / "second.err").read_text()
    assert said["after-stop"] == "released"                  # stop_server ended it


H3LOAD = Path(os.environ.get("BUILD_DIR", ROOT / "build")) / "tools" / "h3load"

LOAD = r'''
set -euo pipefail
source "$LAB_ROOT/scripts/lib.sh"
SERVER_CPUS=0 SERVER_MODE=h3 start_server "$SERVER" "$OUT/server.log"
load() { taskset -c 1 "$H3LOAD" -c 2 -m 4 -w 0.5 -d 1 "$@"; }
load --cacert "$LAB_CERT" --json "$OUT/get.json" "https://127.0.0.1:$SERVER_PORT/echo?size=1024"
load --insecure --body "$OUT/body.bin" --json "$OUT/post.json" "https://127.0.0.1:$SERVER_PORT/echo"
load --insecure --json "$OUT/missing.json" "https://127.0.0.1:$SERVER_PORT/nowhere"
stop_server
# no server: every connection fails within the timeout, and the report says so
taskset -c 1 "$H3LOAD" -c 2 -d 1 --timeout 1 --insecure --json "$OUT/refused.json" "https://127.0.0.1:$SERVER_PORT/ping"
'''


@pytest.mark.parametrize("server,binary", [("evloop", "https_bench_server"), ("go_h3", "go_h3_bench"),
                                           ("rust_h3", "rust_h3_bench")])
def test_h3load_loads_an_http3_server_and_counts_only_its_window(tmp_path, certificate, server, binary):
    """The lab's HTTP/3 load tool: a closed loop over C connections × M streams; what it counts in
    the window, the whole run's totals, statuses and errors as its JSON report says; and no idle
    wait after the window (oha's HTTP/3 client waits out quic-go's 30 s idle timeout)."""
    import json
    import time

    if not (BENCH / binary).exists() or not H3LOAD.exists():
        missing(f"{server} or h3load is not built (scripts/build.sh)")
    body = bytes(range(256)) * 17 + b"end"
    (tmp_path / "body.bin").write_bytes(body)
    cert, key = certificate
    env = {**os.environ, "LAB_ROOT": str(ROOT), "OUT": str(tmp_path), "LAB_CERT": str(cert), "LAB_KEY": str(key),
           "SERVER": server, "H3LOAD": str(H3LOAD)}
    t0 = time.monotonic()
    r = subprocess.run(["bash", "-c", LOAD], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert time.monotonic() - t0 < 20                         # four runs of 1.5 s, no 30 s idle waits
    for name, size in (("get", 1024), ("post", len(body)), ("missing", None)):
        doc = json.loads((tmp_path / f"{name}.json").read_text())
        assert doc["tool"] == "h3load" and doc["connections"] == 2 and doc["streams"] == 4
        assert doc["errors"] == {"connect": 0, "stream": 0, "timeout": 0} and doc["connected"] == 2
        n = doc["requests_window"]
        assert n > 100 and doc["requests_total"] > n          # the warm-up's answers are in the totals only
        assert sum(c for _, c in doc["latency_hist"]) == n
        assert doc["run_s"] < 1.5 + 1.0                       # closed at once after the window
        if size is None:
            assert doc["status_counts"] == {"404": n}
        else:
            assert doc["status_counts"] == {"200": n} and doc["body_bytes_window"] == n * size
    refused = json.loads((tmp_path / "refused.json").read_text())
    assert refused["connected"] == 0 and refused["errors"]["connect"] == 2 and refused["requests_total"] == 0
