"""scripts/lib/json.sh: the JSON the harness writes in bash (every point's run.json, server.json,
cpu.json and the slicer's spec) must read back as what was meant, whatever a string holds, and a
value that is not JSON must stop the harness rather than land in a raw file."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib" / "json.sh"


def _bash(script: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    prelude = f'set -euo pipefail; die() {{ echo "died: $*" >&2; exit 3; }}; source "{LIB}"\n'
    return subprocess.run(["bash", "-c", prelude + script, "bash", *args], capture_output=True)


AWKWARD = [
    "", "plain", 'a "quoted" word', "back\\slash \\n not a newline", "tab\there", "line\nbreak\r\n",
    "\x01\x07\x1b[0m\x1f", "é ü → 雪", "$HOME `x` $(y)", "-o", "--args", "a,b", "%s %d %%",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_a_string_reads_back_as_itself(text):
    out = _bash('json_str "$1"; echo; json_str -v q "$1"; printf "%s\\n" "$q"', text)
    assert out.returncode == 0, out.stderr
    printed, assigned = out.stdout.decode().splitlines()
    assert json.loads(printed) == text and json.loads(assigned) == text


def test_word_lists_and_numbers():
    out = _bash('json_strs "$@"; printf "%s\\n" "$JSON_STRS"; json_strs; printf "%s\\n" "$JSON_STRS"; '
                'json_nums 12 345; echo; json_nums; echo', *AWKWARD)
    assert out.returncode == 0, out.stderr
    words, empty, nums, none = out.stdout.decode().splitlines()
    assert json.loads(words) == AWKWARD and json.loads(empty) == []
    assert json.loads(nums) == [12, 345] and json.loads(none) == []


@pytest.mark.parametrize("value, ok", [
    ("0", True), ("-12", True), ("1.500000", True), ("-0.000001", True), ("2e-3", True), ("null", True),
    ("true", True), ("false", True), ("", False), ("1.", False), (".5", False), ("007", False),
    ("12 ", False), ("NaN", False), ('"x"', False), ("1,5", False),
])
def test_a_value_that_is_not_json_stops_the_harness(value, ok):
    out = _bash('json_check "the window of evloop" 1 "$1" null; echo passed', value)
    if ok:
        assert out.returncode == 0 and out.stdout == b"passed\n", out.stderr
    else:
        assert out.returncode == 3 and b"passed" not in out.stdout
        assert b"the window of evloop" in out.stderr and b"is not a JSON number" in out.stderr
