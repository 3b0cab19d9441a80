"""The order in which a suite's servers run in each rep: seeded, random, balanced over positions.

Each rep is a block in which every server runs once. A fixed order (A, B, C every rep, or the
alternation A, B, C / C, B, A) lets a position effect — the first server after a quiet pause, the
last one on a machine warmed by the others — fall on the same server every time. Here each block
of k reps (k = number of servers) is the set of rows of a random Latin square, so over those k reps
every server takes every position exactly once; with fewer reps than servers no server takes a
position twice. Rows, columns and symbols of a cyclic square are each permuted at random, so which
server follows which also varies from rep to rep.

CLI (called by scripts/lib.sh suite_order, written to raw/<run_id>/<suite>/order.json):
    python -m httplab schedule --seed N --reps R [--suite S] -- server...
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Sequence


def latin_square(servers: Sequence[str], rng: random.Random) -> list[list[str]]:
    """A random k×k Latin square over the servers: rows are orders, each server once per column."""
    k = len(servers)
    symbols = list(servers)
    rng.shuffle(symbols)
    rows = list(range(k))
    cols = list(range(k))
    rng.shuffle(rows)
    rng.shuffle(cols)
    return [[symbols[(r + c) % k] for c in cols] for r in rows]


def balanced_orders(servers: Sequence[str], reps: int, seed: int) -> list[list[str]]:
    """One order of the servers per rep (reps ≥ 1), reproducible from the seed."""
    if reps < 1:
        raise ValueError(f"reps must be ≥ 1, got {reps}")
    if not servers:
        raise ValueError("no servers to order")
    if len(set(servers)) != len(servers):
        raise ValueError(f"servers repeat: {list(servers)}")
    rng = random.Random(seed)
    orders: list[list[str]] = []
    while len(orders) < reps:
        orders.extend(latin_square(servers, rng))
    return orders[:reps]


def position_counts(orders: Sequence[Sequence[str]]) -> dict[str, Counter[int]]:
    """server -> Counter(position (1-based) -> how many reps it held it)."""
    counts: dict[str, Counter[int]] = {}
    for order in orders:
        for i, server in enumerate(order, start=1):
            counts.setdefault(server, Counter())[i] += 1
    return counts


def is_balanced(orders: Sequence[Sequence[str]]) -> bool:
    """True when, for every server, the number of times it held any two positions differs by ≤ 1
    (and, with fewer reps than servers, no position was held twice)."""
    if not orders:
        return True
    k = len(orders[0])
    for counter in position_counts(orders).values():
        held = [counter.get(p, 0) for p in range(1, k + 1)]
        if max(held) - min(held) > 1:
            return False
    return True


def order_document(servers: Sequence[str], reps: int, seed: int, suite: str | None = None) -> dict:
    orders = balanced_orders(servers, reps, seed)
    return {"suite": suite, "seed": seed, "method": "random Latin square per block of len(servers) reps",
            "servers": list(servers), "reps": reps, "orders": orders}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--suite", default=None)
    ap.add_argument("servers", nargs="+")
    args = ap.parse_args(argv)
    try:
        doc = order_document(args.servers, args.reps, args.seed, args.suite)
    except ValueError as exc:
        print(f"httplab.order: {exc}", file=sys.stderr)
        return 2
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0
