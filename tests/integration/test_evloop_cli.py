"""The C server's command line: every limit flag is accepted with a value in its
range, and a bad value or an unknown flag is refused with exit 2 and a message
that names the flag (servers/evloop/README.md, "Limits")."""
import re
import subprocess

import pytest

from evloop_process import DEFAULT_BIN, Server, finish

README = DEFAULT_BIN.parents[2] / "servers" / "evloop" / "README.md"


def run_cli(*args):
    return subprocess.run([str(DEFAULT_BIN), "0", *args], capture_output=True,
                          text=True, timeout=10)


def readme_flags():
    text = README.read_text()
    limits = text[text.index("## Limits"):text.index("## Routes")]
    return sorted(set(re.findall(r"`(--[a-z0-9-]+)", limits)))


def test_every_documented_limit_is_a_flag_and_starts():
    flags = [f for f in readme_flags() if f != "--handshake-timeout"]
    assert len(flags) >= 13, flags
    values = {"--h2-conn-memory": "16777216", "--h2-max-header-list": "16384",
              "--max-conns": "100"}
    args = [x for f in flags for x in (f, values.get(f, "5000"))]
    s = Server(*args)
    finish(s)


@pytest.mark.parametrize("args,message", [
    (("--send-timeout", "0"), "bad --send-timeout: 0"),
    (("--body-min-rate", "x"), "bad --body-min-rate: x"),
    (("--max-conns", "99999999999"), "bad --max-conns"),
    (("--h2-max-header-list", "10"), "bad --h2-max-header-list: 10 (256.."),
    (("--max-body", "100", "--h2-conn-memory", "50"),
     "--h2-conn-memory must be at least --max-body"),
    (("--bogus", "1"), "unknown flag --bogus"),
    (("--handshake-timeout", "5"), "unknown flag --handshake-timeout"),
])
def test_bad_flags_are_named(args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr
