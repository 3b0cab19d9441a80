"""A scenario id in the tables' words (httplab.report.scenarios.scenario_words / ids_worded): every
id of every committed suite matrix reads as a request a person recognises, and a text that carries
ids (the claim ledger's points) is worded without touching anything else."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from httplab.report.scenarios import ids_worded, scenario_words

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("sid, words", [
    ("get_ping_c100", "GET /ping (100 conns)"),
    ("get_echo_s1024_c100", "GET /echo 1 KiB (100 conns)"),
    ("h2_post_echo_b65536_c100", "HTTPS/2 POST /echo 64 KiB body (100 conns)"),
    ("h1_get_ping_c50", "HTTPS/1.1 GET /ping (50 conns)"),
    ("get_root_close_c100", "GET / (100 conns, Connection: close)"),
    ("get_ping_pipe16_c100", "GET /ping (100 conns, pipeline 16)"),
    ("get_ping_c10_m1", "GET /ping (10 conns, one stream each)"),
    ("get_json_c100", "GET /something?json=true (100 conns)"),
    ("post_json_c100", "POST /something (100 conns)"),
    ("keepalive_score", "keepalive_score"),       # not a request: as it is
])
def test_an_id_in_words(sid, words):
    assert scenario_words(sid) == words


def test_every_matrix_id_is_worded():
    """Every scenario a suite's matrix declares (its quoted lines) has words, not its id."""
    ids = set()
    for sh in (ROOT / "suites").glob("*/*.sh"):
        ids |= set(re.findall(r'^\s*"([a-z0-9_]+)\s', sh.read_text(encoding="utf-8"), re.M))
    assert len(ids) > 30
    left = sorted(i for i in ids if scenario_words(i) == i)
    assert not left, left


def test_a_ledger_text_is_worded_and_nothing_else_moves():
    text = "h2c/get_ping_c100 vs http1/get_ping_c100: +20% [+5%, +37%] vs the write-up's +269% in `R`"
    assert ids_worded(text) == ("h2c GET /ping (100 conns) vs HTTP/1.1 GET /ping (100 conns): +20% [+5%, +37%] "
                                "vs the write-up's +269% in `R`")
