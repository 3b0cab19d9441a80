"""The claim ledger (httplab.stats.claims): every write-up's claims as data, each point read off a
comparisons row, the verdicts, and the conditions under which a run may speak to a claim."""
from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from httplab.lab import suites as lab_suites
from httplab.stats import claims as C

ROOT = Path(__file__).resolve().parents[2]


def part_scenarios(part: str) -> set[str]:
    """The scenario ids a part's script declares (SCENARIOS=( "id ..." ... ))."""
    s = lab_suites.suite_of_part(part)
    assert s is not None, part
    text = (s.folder / f"{part}.sh").read_text()
    block = re.search(r"^SCENARIOS=\($(.*?)^\)$", text, flags=re.M | re.S)
    assert block, part
    return {line.strip().strip('"').split()[0] for line in block.group(1).splitlines() if line.strip().startswith('"')}


def test_every_write_up_is_in_the_ledger():
    claims = C.all_claims()
    by = Counter((c.seed, c.kind) for c in claims)
    assert {c.seed for c in claims} == {"000", "001", "002", "003"}
    # the versus tables, each single server's curve, the peaks, seed 003's ranking (5 languages: 4 pairs)
    assert by[("003", "rank")] == 4 and by[("002", "versus")] == 5      # with HTTPS/1.1 GET /echo 1 KiB
    assert all(by[(s, "curve")] >= 4 for s in ("000", "001", "002", "003"))
    assert len({c.claim_id for c in claims}) == len(claims)


def test_every_claim_names_scenarios_its_suite_runs():
    for c in C.all_claims():
        for p in c.points:
            for part, scenario, _ in (p.a, p.b):
                known = part_scenarios(part) | ({C.KEEPALIVE_SCORE} if part == "languages" else set())
                assert scenario in known, f"{c.claim_id}: {part}/{scenario}"


def test_the_curves_comparisons_are_computed():
    pairs, xpairs = set(lab_suites.scenario_pairs()), set(lab_suites.suite_pairs())
    for c in C.all_claims():
        if c.kind != "curve":
            continue
        p = c.points[0]
        if p.a[0] == p.b[0]:
            assert (p.a[0], p.a[1], p.b[1]) in pairs, c.claim_id
        else:
            assert (p.a[0], p.b[0], p.a[1], p.b[1]) in xpairs, c.claim_id


def row(ratio: float, lo: float, hi: float, verdict: str, a_cb: bool = False, b_cb: bool = False) -> pd.Series:
    return pd.Series({"ratio": ratio, "lo": lo, "hi": hi, "verdict": verdict, "a_client_bound": a_cb,
                      "b_client_bound": b_cb})


@pytest.mark.parametrize("r, reading", [
    (None, "not run"),
    (row(1.2, math.nan, math.nan, "no interval"), "fewer than 5 runs"),
    (row(1.2, 1.1, 1.3, "both client-bound"), "client-bound: capacity only"),
    (row(1.2, 1.1, 1.3, "faster"), "higher"),
    (row(0.8, 0.7, 0.9, "slower"), "lower"),
    (row(1.02, 0.95, 1.1, "no clear difference"), "same"),
    (row(1.05, 1.01, 1.09, "below the noise floor"), "inside the noise floor"),
    # the contestant's req/s was the tool's ceiling: "same" or "lower" says nothing of the server
    (row(0.98, 0.9, 1.05, "no clear difference", a_cb=True), "client-bound: capacity only"),
    (row(1.3, 1.2, 1.4, "faster", a_cb=True), "higher"),      # a floor of its lead: still higher
    (row(1.3, 1.2, 1.4, "faster", b_cb=True), "client-bound: capacity only"),
    (row(0.9, 0.85, 0.95, "below the noise floor", a_cb=True), "client-bound: capacity only"),
])
def test_a_point_reads_off_its_comparisons_row(r, reading):
    assert C.read_point(r)[0] == reading


def test_expected_reading_from_the_write_ups_ratio():
    assert C.expected(1.18) == "higher" and C.expected(0.9) == "lower" and C.expected(1.03) == "same"
    assert C.expected(0.975, "lower") == "lower"      # a claim's own words win ("Go degrades")


def test_verdicts():
    assert C.verdict([("higher", "higher"), ("higher", "higher")])[0] == "confirmed"
    assert C.verdict([("lower", "higher"), ("same", "higher")])[0] == "refuted"
    assert C.verdict([("higher", "higher"), ("same", "higher")]) == ("partly", 2, 1)
    assert C.verdict([("not run", "higher"), ("fewer than 5 runs", "higher")])[0] == "untested"
    # inside the floor: as good as "same" where that is the claim, unreadable where a difference is
    assert C.verdict([("inside the noise floor", "same")])[0] == "confirmed"
    assert C.verdict([("inside the noise floor", "lower")])[0] == "untested"


def frames(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    base = {"metric": "req_per_s", "lo": math.nan, "hi": math.nan, "a_client_bound": False, "b_client_bound": False}
    return pd.DataFrame([{**base, **r} for r in rows]), pd.DataFrame(
        columns=["metric", "suite", "scenario", "server", "estimate", "lo", "hi", "n"])


def cmp(a: tuple[str, str, str], b: tuple[str, str, str], ratio: float, lo: float, hi: float, verdict: str) -> dict:
    return {"a_suite": a[0], "a_scenario": a[1], "a_server": a[2], "b_suite": b[0], "b_scenario": b[1],
            "b_server": b[2], "ratio": ratio, "lo": lo, "hi": hi, "verdict": verdict}


def ledger(rows: list[dict], profile: str, cpus: str, servers: set[str]) -> pd.DataFrame:
    comparisons, estimates = frames(rows)
    meta = {"profile": profile, "server_cpus": cpus, "host": {"cores": 16, "cpu_model": "Xeon"}}
    runs = pd.DataFrame({"server": sorted(servers)})
    return C.claims_frame(comparisons, estimates, meta, runs, "r1").set_index("claim_id")


def test_a_one_core_run_speaks_to_the_event_loops_own_curve_not_to_go():
    rows = [cmp(("http1", "get_ping_c500", "evloop"), ("http1", "get_ping_c50", "evloop"), 0.99, 0.95, 1.03, "no clear difference"),
            cmp(("http1", "get_ping_c500", "go"), ("http1", "get_ping_c50", "go"), 0.8, 0.7, 0.9, "slower"),
            cmp(("http1", "get_ping_c100", "evloop"), ("http1", "get_ping_c100", "go"), 1.8, 1.6, 2.0, "faster")]
    led = ledger(rows, "full", "0", {"evloop", "go"})
    assert led.loc["000/curve/1", "verdict"] == "confirmed"          # the event loop flat: single-threaded both
    go = led.loc["000/curve/2"]
    assert go["verdict"] == "not comparable" and "go ran on 1 core here, on 12" in go["reason"]
    assert "Read anyway: confirmed" in go["reason"]
    vs = led.loc["000/versus/1"]
    assert vs["verdict"] == "not comparable" and vs["points_read"] == 1 and "3 not read (not run)" in vs["reason"]
    assert led.loc["000/peak", "verdict"] == "untested"              # no estimate of it here: silent
    assert led.loc["001/versus/1", "verdict"] == "untested"            # h2c never ran: silent, whatever the cores
    assert led.loc["001/curve/1", "verdict"] == "untested"            # h2c never ran


def test_under_the_seeds_conditions_the_single_threaded_c_server_is_read():
    rows = [cmp(("http1", "get_ping_c100", "evloop@1"), ("http1", "get_ping_c100", "go"), 0.62, 0.54, 0.7, "slower"),
            cmp(("http1", "get_ping_c100", "evloop"), ("http1", "get_ping_c100", "go"), 1.7, 1.57, 1.85, "faster")]
    led = ledger(rows, "seed", "0-11", {"evloop", "evloop@1", "go"})
    vs = led.loc["000/versus/1"]
    assert vs["servers"] == "evloop@1, go" and vs["verdict"] == "refuted"
    assert vs["ours"].startswith("get_ping_c50: not run; get_ping_c100: −38% [−46%, −30%] (lower)")
    assert math.isclose(vs["ours_over_seed_lo"], 0.62 / (152316 / 128915))


def test_counts_in_verdict_order():
    led = pd.DataFrame({"verdict": ["refuted", "untested", "untested"]})
    assert C.counts(led) == {"confirmed": 0, "partly": 0, "refuted": 1, "not comparable": 0, "untested": 2}


def test_a_curve_without_its_expectation_is_refused(tmp_path):
    folder = tmp_path / "suites" / "demo"
    folder.mkdir(parents=True)
    (folder / "demo.sh").write_text("SCENARIOS=(\n)\n")
    (folder / "suite.toml").write_text('title = "demo"\n[seed]\nnumber = "009"\nkind = "claims"\n'
                                       '[[seed.curves]]\nwhat = "x"\ntext = "y"\nserver = "go"\na = "p"\nb = "q"\nseed = [1, 2]\n')
    with pytest.raises(lab_suites.SuiteError, match=r"suite.toml \[\[seed.curves\]\] 1: missing \['expect'\]"):
        C.claims_of(lab_suites.load_suite(folder))


def test_a_peak_is_never_comparable():
    comparisons, _ = frames([])
    estimates = pd.DataFrame([{"metric": "req_per_s", "suite": "http1", "scenario": "get_ping_c100", "server": "evloop@1",
                               "estimate": 203025.0, "lo": 183640.0, "hi": 224457.0, "n": 5}])
    meta = {"profile": "seed", "server_cpus": "0-11", "host": {"cores": 16, "cpu_model": "Xeon"}}
    led = C.claims_frame(comparisons, estimates, meta, pd.DataFrame({"server": ["evloop", "evloop@1", "go"]}), "r1")
    peak = led.set_index("claim_id").loc["000/peak"]
    assert peak["verdict"] == "not comparable" and peak["ours"] == "get_ping_c100: 203,025 [183,640, 224,457] req/s (n=5)"


def test_a_single_threaded_servers_own_curve_is_read_on_one_core():
    """Node's stdlib server runs on one core whatever it is given (its manifest's [cores] uses is
    single): on one core here it ran as in the write-up, so its own curve is comparable; Go's is not."""
    rows = [cmp(("languages", "get_json_c100", "lang_node_std"), ("languages", "get_root_c100", "lang_node_std"),
                0.8, 0.7, 0.9, "slower"),
            cmp(("languages", "get_json_c100", "lang_go_std"), ("languages", "get_root_c100", "lang_go_std"),
                0.7, 0.6, 0.8, "slower")]
    led = ledger(rows, "full", "0", {"lang_node_std", "lang_go_std"})
    node = next(c.claim_id for c in C.all_claims() if c.kind == "curve" and c.roles == ("lang_node_std",)
                and c.points[0].a[1] == "get_json_c100")
    go = next(c.claim_id for c in C.all_claims() if c.kind == "curve" and c.roles == ("lang_go_std",)
              and c.points[0].a[1] == "get_json_c100")
    assert led.loc[node, "verdict"] == "confirmed" and led.loc[go, "verdict"] == "not comparable"


def test_an_interval_that_holds_both_no_change_and_the_claim_neither_confirms_nor_refutes():
    """Go: a JSON response −31 % in the write-up. [−40 %, +5 %] holds both 0 and −31 %: too wide to
    tell; [−10 %, +5 %] excludes −31 % and finds no difference: refuted."""
    go = next(c for c in C.all_claims() if c.kind == "curve" and c.roles == ("lang_go_std",)
              and c.points[0].a[1] == "get_json_c100")
    pt = go.points[0]

    def read(lo: float, hi: float) -> pd.Series:
        rows = [cmp((pt.a[0], pt.a[1], "lang_go_std"), (pt.b[0], pt.b[1], "lang_go_std"), (lo + hi) / 2, lo, hi,
                    "no clear difference")]
        return ledger(rows, "seed", "0-11", {"lang_go_std"}).loc[go.claim_id]
    wide = read(0.60, 1.05)
    assert wide["verdict"] == "untested" and "too wide to tell" in wide["ours"]
    assert read(0.90, 1.05)["verdict"] == "refuted"
