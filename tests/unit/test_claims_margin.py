"""The equivalence margin of the claim verdicts (httplab.stats.claims.EQUIVALENCE_MARGIN), checked
against the committed criterion run of the seed suites' design: it must be one the design can show
for two figures that are truly equal (the A/A pair, two copies of the C server), and it must not be
so wide that it calls the sizes the write-ups got wrong the same (docs/method.md, "Verdicts that
check the size")."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from httplab.stats import claims as C

ROOT = Path(__file__).resolve().parents[2]
CRITERION = ROOT / "data" / "20261206T032534Z-vm"     # 12 interleaved reps of 1 s, the four seed suites


def aa_pairs(metric: str) -> pd.DataFrame:
    cmp = pd.read_parquet(CRITERION / "comparisons.parquet")
    pair = cmp[(cmp["kind"] == "server") & (cmp["metric"] == metric)
               & (cmp["a_server"] + "|" + cmp["b_server"]).isin(["evloop|evloop~aa", "evloop~aa|evloop"])]
    return pair.dropna(subset=["lo", "hi"])


@pytest.mark.parametrize("metric", ["req_per_s", "cpu_us_per_req"])
def test_two_copies_of_one_server_are_equivalent_at_the_margin_on_every_point(metric):
    pairs = aa_pairs(metric)
    assert len(pairs) >= 10
    assert all(C.within_margin(lo, hi) for lo, hi in zip(pairs["lo"], pairs["hi"]))
    # half the margin would call truly equal figures "too wide to tell" on a share of the points
    half = sum(C.within_margin(lo, hi, margin=C.EQUIVALENCE_MARGIN / 2) for lo, hi in zip(pairs["lo"], pairs["hi"]))
    assert half < len(pairs)


def test_the_sizes_the_write_ups_got_wrong_are_not_called_the_same():
    """Seed 003: Python's POST at 86 % of its GET and JavaScript's JSON at −22 % read −34 % and −10 %
    in the criterion run: same direction, different size, not confirmed."""
    pts = pd.read_parquet(CRITERION / "claim_points.parquet").set_index("claim_id")
    whats = {c.claim_id: c.what for c in C.all_claims()}
    python_post = next(k for k, w in whats.items() if w == "Python: a JSON POST against GET /")
    js_json = next(k for k, w in whats.items() if w == "JavaScript: a JSON response against GET /")
    for cid in (python_post, js_json):
        assert pts.loc[cid, "outcome"] == "same direction, different size", pts.loc[cid, "text"]
