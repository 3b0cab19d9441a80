"""The servers' order per rep: seeded, random, balanced over positions (httplab.lab.schedule)."""
import json
import subprocess
import sys

import pytest

from httplab.lab.schedule import balanced_orders, is_balanced, position_counts

SERVERS = ["evloop", "go", "nginx", "floor", "evloop~aa"]


@pytest.mark.parametrize("k, reps", [(4, 5), (5, 5), (11, 5), (3, 10), (2, 7), (1, 3)])
def test_each_rep_is_a_permutation_and_positions_balance(k, reps):
    servers = [f"s{i}" for i in range(k)]
    orders = balanced_orders(servers, reps, seed=7)
    assert len(orders) == reps
    assert all(sorted(o) == sorted(servers) for o in orders)
    assert is_balanced(orders)
    for counter in position_counts(orders).values():
        held = [counter.get(p, 0) for p in range(1, k + 1)]
        assert max(held) - min(held) <= 1
        if reps <= k:
            assert max(held) == 1  # no position twice


def test_full_square_gives_every_position_once():
    orders = balanced_orders(SERVERS, len(SERVERS), seed=3)
    for counter in position_counts(orders).values():
        assert sorted(counter) == [1, 2, 3, 4, 5] and set(counter.values()) == {1}


def test_seeded_and_not_fixed():
    a = balanced_orders(SERVERS, 5, seed=11)
    assert a == balanced_orders(SERVERS, 5, seed=11)
    assert a != balanced_orders(SERVERS, 5, seed=12)
    # over many seeds, who follows whom varies (not a fixed rotation of one sequence)
    followers = {tuple(o[o.index("evloop") + 1:o.index("evloop") + 2])
                 for s in range(30) for o in balanced_orders(SERVERS, 5, seed=s)}
    assert len(followers) >= 3


def test_is_balanced_catches_fixed_order():
    assert not is_balanced([["a", "b", "c"]] * 3)


def test_bad_input():
    with pytest.raises(ValueError):
        balanced_orders(["a", "a"], 2, 1)
    with pytest.raises(ValueError):
        balanced_orders(["a"], 0, 1)


def test_cli_writes_order_document():
    out = subprocess.run([sys.executable, "-m", "httplab", "schedule", "--seed", "5", "--reps", "3", "--suite", "http1",
                          "--", *SERVERS], check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    assert doc["seed"] == 5 and doc["servers"] == SERVERS and len(doc["orders"]) == 3
    assert doc["orders"] == balanced_orders(SERVERS, 3, 5)
    bad = subprocess.run([sys.executable, "-m", "httplab", "schedule", "--seed", "5", "--reps", "0", "--", "a"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "reps" in bad.stderr
