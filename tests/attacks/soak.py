"""Sanitizer soak: the ASan/UBSan servers (plain and TLS) under minutes of mixed
legitimate load -- wrk on HTTP/1.1, h2load on h2c and on TLS (h2 and
http/1.1) -- interleaved with the attack clients of attack_cases.py, malformed
and mutated requests and broken TLS hellos. Passes when both servers are alive
at the end, exit 0 on SIGTERM (LeakSanitizer runs at exit), printed no
sanitizer report, and every request of the load tools succeeded. Run by scripts/soak.sh (any length) and, short, by the test
command (tests/attacks/test_soak.py).

    python tests/attacks/soak.py SECONDS
"""
from __future__ import annotations

import itertools
import pathlib
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from attack_cases import CASES  # noqa: E402
from attack_run import ServerProcess  # noqa: E402
from httplab.parse.errors import RawFormatError  # noqa: E402
from httplab.parse.h2load import parse_h2load_text  # noqa: E402
from httplab.parse.wrk import parse_wrk_text  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
ASAN = REPO / "build" / "asan"
# Short limits, so that the timeout paths (408s, resets, idle closes) run
# under the sanitizers too, not only the request paths.
FLAGS = ["--max-body", str(4 << 20), "--header-timeout", "2000",
         "--body-timeout", "2000", "--send-timeout", "3000",
         "--idle-timeout", "5000"]

MALFORMED = [
    b"GET /ping HTTP/1.1\r\nX: " + b"a" * 17000 + b"\r\n\r\n",
    b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET  /ping HTTP/1.1\r\n\r\n",
    b"GET /ping HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
    b"GET /ping HTTP/1.1\nHost: t\n\n",
    b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"ffffffffffffffffff\r\n",
    b"POST /something HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\n\r\n[[[[[[[[[",
    b"GET /something?json=true&a=%ff%fe HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET /echo?size=99999999999999999999 HTTP/1.1\r\nHost: t\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\xff" * 64,
    b"GET / HTTP/1.1\r\nHost: t\r\nUpgrade: h2c\r\nConnection: Upgrade, "
    b"HTTP2-Settings\r\nHTTP2-Settings: !!!\r\n\r\n",
]
VALID = [
    b"GET /ping HTTP/1.1\r\nHost: t\r\n\r\n",
    b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n0\r\n\r\n",
    b'POST /something HTTP/1.1\r\nHost: t\r\nContent-Length: 24\r\n\r\n'
    b'{"a":[1,2.5e3,"\\u00e9"]}',
    b"GET /something?json=true&x=%41+b HTTP/1.1\r\nHost: t\r\n\r\n",
]


@dataclass
class Tally:
    rounds: int = 0
    load_runs: int = 0
    load_errors: list = field(default_factory=list)
    attacks: list = field(default_factory=list)
    junk_sent: int = 0


def _send_junk(port: int, data: bytes) -> None:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
    except OSError:
        pass


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(3)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif b:
            del b[i:i + rng.randint(1, 4)]
    return bytes(b)


def junk_round(port: int, tls_port: int, rng: random.Random, tally: Tally) -> None:
    for raw in MALFORMED:
        _send_junk(port, raw)
    for _ in range(40):
        _send_junk(port, mutate(rng, rng.choice(VALID + MALFORMED)))
    for _ in range(5):       # not TLS: random bytes and a plaintext request
        _send_junk(tls_port, bytes(rng.randrange(256) for _ in range(300)))
    _send_junk(tls_port, VALID[0])
    tally.junk_sent += len(MALFORMED) + 46


def load_commands(port: int, tls_port: int, seconds: int) -> list[list[str]]:
    d = str(seconds)
    return [
        ["wrk", "-t1", "-c50", f"-d{d}s", f"http://127.0.0.1:{port}/ping"],
        ["h2load", "-c20", "-m10", "-t1", "-D", d,
         f"http://127.0.0.1:{port}/echo?size=4096"],
        ["h2load", "-c10", "-m10", "-t1", "-D", d,
         f"https://127.0.0.1:{tls_port}/ping"],
        ["h2load", "-c10", "-t1", "-D", d, "--h1",
         f"https://127.0.0.1:{tls_port}/echo?size=100"],
    ]


def load_errors(cmd: list[str], out: str) -> str | None:
    """None when the tool reports no failed request, else why. Read with the
    lab's own parsers of wrk's and h2load's text (which name a line they do
    not understand)."""
    try:
        if cmd[0] == "wrk":
            w = parse_wrk_text(out)
            bad = w.socket_errors.total or w.non2xx
            return (f"wrk: {w.socket_errors} socket errors, {w.non2xx} non-2xx"
                    if bad else None)
        h = parse_h2load_text(out)
    except RawFormatError as e:
        return f"{cmd[0]} output not understood: {e}"
    if (h.failed or h.errored or h.timeout or h.done == 0
            or h.succeeded != h.done or h.non_2xx):
        return (f"h2load {cmd[-1]}: {h.done} done, {h.succeeded} succeeded, "
                f"{h.failed} failed, {h.errored} errored, {h.timeout} timeout, "
                f"{h.non_2xx} non-2xx")
    return None


def make_cert(tmp: pathlib.Path) -> tuple[str, str]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-subj", "/CN=localhost", "-days", "2", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def soak(seconds: float, round_s: int = 3, seed: int = 1) -> tuple[bool, str]:
    """Returns (passed, report)."""
    rng = random.Random(seed)
    tally = Tally()
    attacks = itertools.cycle([c for c in CASES if c.prlimit_nofile is None])
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = make_cert(pathlib.Path(tmp))
        plain = ServerProcess([str(ASAN / "http_bench_server"), "0", *FLAGS])
        tls = ServerProcess([str(ASAN / "https_bench_server"), "0", cert, key,
                             *FLAGS])
        try:
            end = time.monotonic() + seconds
            while time.monotonic() < end and plain.alive() and tls.alive():
                tally.rounds += 1
                procs = [(c, subprocess.Popen(c, stdout=subprocess.PIPE,
                                              stderr=subprocess.DEVNULL, text=True))
                         for c in load_commands(plain.port, tls.port, round_s)]
                case = next(attacks)
                t = threading.Thread(target=lambda: tally.attacks.append(
                    (case.name, _attack(case, plain.port))), daemon=True)
                t.start()
                junk_round(plain.port, tls.port, rng, tally)
                for cmd, p in procs:
                    out, _ = p.communicate(timeout=round_s + 30)
                    tally.load_runs += 1
                    err = load_errors(cmd, out)
                    if err:
                        tally.load_errors.append(err)
                t.join(30)
            alive = plain.alive() and tls.alive()
        finally:
            rc_plain, rc_tls = plain.terminate(10), tls.terminate(10)
        reports = [r for r in (plain.sanitizer_report(), tls.sanitizer_report()) if r]
    ok = (alive and rc_plain == 0 and rc_tls == 0 and not reports
          and not tally.load_errors)
    lines = [f"soak {seconds:.0f} s: {tally.rounds} rounds, {tally.load_runs} load-tool "
             f"runs, {len(tally.attacks)} attacks, {tally.junk_sent} malformed/mutated "
             f"requests",
             f"servers alive at the end: {alive}; exit on SIGTERM: plain {rc_plain}, "
             f"tls {rc_tls}; sanitizer reports: {len(reports)}",
             f"load-tool runs with a failed request: {len(tally.load_errors)}"]
    lines += [f"  {e}" for e in tally.load_errors[:5]]
    lines += [r[:4000] for r in reports]
    return ok, "\n".join(lines)


def _attack(case, port: int) -> str:
    try:
        return case.run(port).summary
    except Exception as e:  # noqa: BLE001 -- the soak only needs the traffic
        return f"attack failed: {e!r}"


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 180
    passed, report = soak(secs)
    print(report)
    sys.exit(0 if passed else 1)
