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
    # with HTTPS/1.1 GET /echo 1 KiB, and the mean latency of HTTPS/1.1 and HTTPS/2 GET /ping
    assert by[("003", "rank")] == 4 and by[("002", "versus")] == 8
    # the mean-latency columns beside 000's and 001's req/s tables
    # (000 also: "xKit wins every scenario", over all twelve rows of its three tables)
    assert by[("000", "versus")] == 6 and by[("001", "versus")] == 5
    every = next(c for c in claims if c.claim_id == "000/versus/6")
    assert every.expect == "higher, any size" and len(every.points) == 12
    # 001's transfer at 64 KiB against seed 000's over HTTP/1.1 (1.16 against 2.20 GB/s)
    transfer = next(c for c in claims if c.claim_id == "001/curve/7")
    assert transfer.points[0].a[:2] == ("h2c", "post_echo_b65536_c100") and transfer.points[0].b[:2] == ("http1", "post_echo_b65536_c100")
    assert abs(transfer.points[0].seed_ratio - 1.16 / 2.20) < 0.01
    assert all(by[(s, "curve")] >= 4 for s in ("000", "001", "002", "003"))
    # how the lead moves (000: grows with connections; 001: HTTP/2 amplifies it; 002: TLS erases it)
    # (000 also: the lead from 1 KiB to 4 KiB, on GET /echo and on POST /echo)
    assert by[("000", "trend")] == 5 and by[("001", "trend")] == 3 and by[("002", "trend")] == 5
    # both peaks of each table write-up (req/s and transfer); seed 003's per-endpoint orders, tails,
    # memory and guesses as claims between its servers
    assert all(by[(s, "peak")] == 2 for s in ("000", "001", "002"))
    assert by[("003", "versus")] == 13       # with its max-latency and CPU columns
    metrics = {c.metric for c in C.all_claims()}
    assert {"req_per_s", "lat_p50_us", "lat_p99_us", "lat_mean_us", "lat_max_us", "cpu_pct", "tail_ratio",
            "rss_peak_kb", "bytes_per_s"} <= metrics
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


def test_verdicts_count_the_points_judged_on_sign_and_size():
    assert C.verdict(["confirmed", "confirmed"]) == ("confirmed", 2, 2)
    assert C.verdict(["confirmed", "same direction, different size"]) == ("same direction, different size", 2, 1)
    assert C.verdict(["refuted", "refuted", "not run"]) == ("refuted", 2, 0)
    assert C.verdict(["confirmed", "refuted"]) == ("partly", 2, 1)
    assert C.verdict(["same direction, different size", "refuted"])[0] == "partly"
    assert C.verdict(["not run", "fewer than 5 runs", "too wide to tell"])[0] == "untested"


@pytest.mark.parametrize("reading,want,lo,hi,seed,outcome", [
    # the issue's cases: seed 003's Python POST at 86 % of its GET (−14 %), the lab −34 % [−41 %, −27 %]
    ("lower", "lower", 0.59, 0.73, 0.86, "same direction, different size"),
    # JavaScript's JSON drop: seed −22 %, the lab −10 % [−16 %, −3 %]
    ("lower", "lower", 0.84, 0.97, 0.78, "same direction, different size"),
    # the write-up's figure inside our interval: its size agrees
    ("lower", "lower", 0.80, 0.90, 0.86, "confirmed"),
    # outside the interval, but ours over the write-up's within ±10 % on the whole interval
    ("higher", "higher", 1.50, 1.56, 1.45, "confirmed"),
    ("higher", "lower", 1.10, 1.20, 0.80, "refuted"),                      # the opposite sign
    ("same", "higher", 0.97, 1.04, 1.30, "refuted"),                        # no change, the claim excluded
    ("too wide to tell", "higher", 0.95, 1.40, 1.30, "too wide to tell"),  # not judged
    ("inside the noise floor", "lower", 0.93, 0.97, 0.80, "inside the noise floor"),
    ("fewer than 5 runs", "higher", math.nan, math.nan, 1.2, "fewer than 5 runs"),
    # "nearly flat": an equivalence test at ±10 %, not "the interval holds 1"
    ("same", "same", 0.96, 1.06, 1.02, "confirmed"),
    ("lower", "same", 0.93, 0.98, 1.02, "confirmed"),       # a clear but small change is equivalent
    ("same", "same", 0.85, 1.12, 1.02, "too wide to tell"),  # holds 1, yet cannot show equivalence
    ("lower", "same", 0.70, 0.85, 1.02, "refuted"),          # a difference past the margin stands
    ("lower", "same", 0.85, 0.95, 1.02, "too wide to tell"), # straddles the margin
    ("inside the noise floor", "same", 0.95, 0.99, 1.0, "confirmed"),
    ("same", "not lower", 0.9, 1.1, 1.0, "confirmed"),       # no size claimed: the sign decides
    ("lower", "not lower", 0.7, 0.8, 1.0, "refuted"),
    # "wins every scenario": a direction without a size, judged on the sign alone
    ("higher", "higher, any size", 1.80, 2.10, 1.18, "confirmed"),   # far past the write-up's +18 %: still a win
    ("lower", "higher, any size", 0.55, 0.70, 1.18, "refuted"),
    ("same", "higher, any size", 0.97, 1.04, 1.18, "refuted"),       # a tie inside the margin is no win
    ("same", "higher, any size", 0.85, 1.20, 1.18, "too wide to tell"),
    ("inside the noise floor", "higher, any size", 1.01, 1.05, 1.18, "refuted"),
    ("client-bound: capacity only", "higher, any size", math.nan, math.nan, 1.18, "client-bound: capacity only"),
])
def test_a_point_is_judged_on_its_size_as_well_as_its_sign(reading, want, lo, hi, seed, outcome):
    assert C.judge_point(reading, want, lo, hi, seed) == outcome


def frames(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    base = {"metric": "req_per_s", "lo": math.nan, "hi": math.nan, "a_client_bound": False, "b_client_bound": False}
    return pd.DataFrame([{**base, **r} for r in rows]), pd.DataFrame(
        columns=["metric", "suite", "scenario", "server", "estimate", "lo", "hi", "n"])


def cmp(a: tuple[str, str, str], b: tuple[str, str, str], ratio: float, lo: float, hi: float, verdict: str,
        **more) -> dict:
    return {"a_suite": a[0], "a_scenario": a[1], "a_server": a[2], "b_suite": b[0], "b_scenario": b[1],
            "b_server": b[2], "ratio": ratio, "lo": lo, "hi": hi, "verdict": verdict, "n_a": 5, "n_b": 5, **more}


def ledger(rows: list[dict], profile: str, cpus: str, servers: set[str], runs: pd.DataFrame | None = None
           ) -> pd.DataFrame:
    comparisons, estimates = frames(rows)
    meta = {"profile": profile, "server_cpus": cpus, "host": {"cores": 16, "cpu_model": "Xeon"}}
    runs = pd.DataFrame({"server": sorted(servers)}) if runs is None else runs
    return C.claims_frame(comparisons, estimates, meta, runs, "r1").set_index("claim_id")


def test_a_one_core_run_speaks_to_the_event_loops_own_curve_not_to_go():
    rows = [cmp(("http1", "get_ping_c500", "evloop"), ("http1", "get_ping_c50", "evloop"), 0.99, 0.95, 1.03, "no clear difference"),
            cmp(("http1", "get_ping_c500", "go"), ("http1", "get_ping_c50", "go"), 0.8, 0.7, 0.9, "slower"),
            cmp(("http1", "get_ping_c100", "evloop"), ("http1", "get_ping_c100", "go"), 1.8, 1.6, 2.0, "faster")]
    led = ledger(rows, "full", "0", {"evloop", "go"})
    assert led.loc["000/curve/1", "verdict"] == "confirmed"          # the event loop flat: single-threaded both
    go = led.loc["000/curve/2"]
    assert go["verdict"] == "not comparable" and "go ran on 1 core here, unpinned on the write-up's machine" in go["reason"]
    assert "Read anyway: same direction, different size" in go["reason"]   # −20 % against −2.5 %
    vs = led.loc["000/versus/1"]
    assert vs["verdict"] == "not comparable" and vs["points_read"] == 1 and "3 not judged (not run)" in vs["reason"]
    assert led.loc["000/peak", "verdict"] == "untested"              # no estimate of it here: silent
    assert led.loc["001/versus/1", "verdict"] == "untested"            # h2c never ran: silent, whatever the cores
    assert led.loc["001/curve/1", "verdict"] == "untested"            # h2c never ran


def test_under_the_seeds_conditions_the_single_threaded_c_server_is_read():
    rows = [cmp(("http1", "get_ping_c100", "evloop@1"), ("http1", "get_ping_c100", "go"), 0.62, 0.54, 0.7, "slower"),
            cmp(("http1", "get_ping_c100", "evloop"), ("http1", "get_ping_c100", "go"), 1.7, 1.57, 1.85, "faster")]
    led = ledger(rows, "seed", "0-11", {"evloop", "evloop@1", "go"})
    vs = led.loc["000/versus/1"]
    assert vs["servers"] == "evloop@1, go" and vs["verdict"] == "refuted"
    assert vs["ours"].startswith("get_ping_c50: not run; get_ping_c100: −38% [−46%, −30%] vs the write-up's +18% (refuted)")
    assert math.isclose(vs["ours_over_seed_lo"], 0.62 / (152316 / 128915))


def test_each_point_is_a_row_of_its_own_with_whether_the_run_could_speak():
    rows = [cmp(("http1", "get_ping_c100", "evloop@1"), ("http1", "get_ping_c100", "go"), 0.62, 0.54, 0.7, "slower")]
    comparisons, estimates = frames(rows)
    meta = {"profile": "seed", "server_cpus": "0-11", "host": {"cores": 16, "cpu_model": "Xeon"}}
    got = C.ledger_frames(comparisons, estimates, meta, pd.DataFrame({"server": ["evloop", "evloop@1", "go"]}), "r1")
    pts = got["claim_points"].set_index(["claim_id", "point"])
    c100 = pts.loc[("000/versus/1", "get_ping_c100")]
    assert c100["reading"] == "lower" and c100["expected"] == "higher" and bool(c100["comparable"])
    assert c100["outcome"] == "refuted" and math.isclose(c100["seed_ratio"], 152316 / 128915)
    assert (c100["ratio"], c100["lo"], c100["hi"]) == (0.62, 0.54, 0.7)
    assert c100["text"] == "get_ping_c100: −38% [−46%, −30%] vs the write-up's +18% (refuted)"
    assert pts.loc[("000/versus/1", "get_ping_c500"), "reading"] == "not run"
    # one row per point of every claim but the peaks, whose figure is absolute
    claims = {c.claim_id: c for c in C.all_claims()}
    per_claim = got["claim_points"].groupby("claim_id").size()
    assert not any(claims[c].kind == "peak" for c in per_claim.index)
    assert all(n == (1 if claims[c].kind == "trend" else len(claims[c].points)) for c, n in per_claim.items())
    # a one-core run measured Go as the write-up did not: its points say so
    one_core = C.ledger_frames(comparisons, estimates, {**meta, "profile": "full", "server_cpus": "0"},
                               pd.DataFrame({"server": ["evloop", "go"]}), "r2")["claim_points"]
    assert not one_core[one_core["claim_id"] == "000/versus/1"]["comparable"].any()


def test_counts_in_verdict_order():
    led = pd.DataFrame({"verdict": ["refuted", "untested", "untested"]})
    assert C.counts(led) == {"confirmed": 0, "same direction, different size": 0, "partly": 0, "refuted": 1,
                             "not comparable": 0, "untested": 2}


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


def claim(seed: str, kind: str, pred) -> C.Claim:
    return next(c for c in C.all_claims() if c.seed == seed and c.kind == kind and pred(c))


def rep_runs(cells: dict[tuple[str, str, str], list[float]], metric: str = "req_per_s") -> pd.DataFrame:
    """A tidy frame: each (suite, scenario, server) with one ok run per rep (1-based) of `metric`."""
    return pd.DataFrame([{"suite": su, "scenario": sc, "server": sv, "rep": i, "status": "ok", metric: v}
                         for (su, sc, sv), vals in cells.items() for i, v in enumerate(vals, 1)])


def test_a_trend_is_the_ratio_of_two_leads_paired_by_rep():
    """000: the event loop's lead grows from 50 to 500 connections. Per rep, lead at c500 over lead
    at c50: 1.5/1.2 = 1.25 each rep, give or take: read higher, with the interval of those five."""
    t = claim("000", "trend", lambda c: c.points[0].a[1] == "get_ping_c500")
    c500 = [150.0, 151, 149, 152, 150]
    c50 = [120.0, 121, 119, 120, 122]
    runs = rep_runs({("http1", "get_ping_c500", "evloop"): c500, ("http1", "get_ping_c500", "go"): [100.0] * 5,
                     ("http1", "get_ping_c50", "evloop"): c50, ("http1", "get_ping_c50", "go"): [100.0] * 5})
    rows = [cmp(("http1", "get_ping_c500", "evloop"), ("http1", "get_ping_c500", "go"), 1.5, 1.48, 1.52, "faster"),
            cmp(("http1", "get_ping_c50", "evloop"), ("http1", "get_ping_c50", "go"), 1.2, 1.19, 1.21, "faster")]
    row = ledger(rows, "seed", "0-11", {"evloop", "go"}, runs).loc[t.claim_id]
    # the write-up's lead grows by +5 % (1.239 over 1.181); +25 % is its sign, not its size
    assert row["verdict"] == "same direction, different size" and row["kind"] == "trend" and row["points"] == 1
    ratio = float(re.search(r": \+(\d+)%", row["ours"]).group(1))
    assert ratio == 25 and "vs the write-up's +5% (same direction, different size)" in row["ours"]
    # an end the run cannot read (client-bound there) leaves the trend unread, whatever the reps say
    rows[1] = cmp(("http1", "get_ping_c50", "evloop"), ("http1", "get_ping_c50", "go"), 1.2, 1.19, 1.21,
                  "both client-bound")
    row = ledger(rows, "seed", "0-11", {"evloop", "go"}, runs).loc[t.claim_id]
    assert row["verdict"] == "untested" and "client-bound" in row["reason"]


def test_a_claim_between_named_servers_reads_a_row_stored_the_other_way_round():
    """003's memory table: Rust below C++ on peak RSS. The comparisons frame may hold C++ vs Rust;
    the ledger inverts it (1/ratio, bounds swapped) rather than calling the point not run."""
    mem = claim("003", "versus", lambda c: c.metric == "rss_peak_kb")
    rows = [cmp(("languages", "get_root_c100", "lang_cpp_std"), ("languages", "get_root_c100", "lang_rust_std"),
                2.0, 1.8, 2.2, "more", metric="rss_peak_kb")]
    row = ledger(rows, "seed", "0-11", {"lang_rust_std", "lang_cpp_std"}).loc[mem.claim_id]
    assert row["ours"].startswith("get_root_c100 (lang_rust_std vs lang_cpp_std): −50% [−55%, −44%] vs the write-up's −50% (confirmed)")
    assert row["verdict"] == "confirmed" and "3 not judged (not run)" in row["reason"]


def test_a_latency_point_with_a_client_bound_side_is_not_read():
    """On req/s a client-bound B still lets a lower A read (a floor of B's own); on latency the
    figures are the tool's queue as much as the server's, so neither reading stands."""
    assert C.read_point(row(0.5, 0.4, 0.6, "faster", b_cb=True), throughput=True)[0] == "lower"
    assert C.read_point(row(0.5, 0.4, 0.6, "faster", b_cb=True), throughput=False)[0] == "client-bound: capacity only"


def test_the_peak_transfer_is_read_off_the_runs_in_binary_units():
    peak = next(c for c in C.all_claims() if c.claim_id == "000/peak/transfer")
    runs = rep_runs({("http1", "post_echo_b65536_c100", "evloop"): [2.0 * 2**30] * 4 + [2.2 * 2**30],
                     ("http1", "post_echo_b1024_c100", "evloop"): [0.2 * 2**30] * 5}, "bytes_per_s")
    row = ledger([], "full", "0", {"evloop"}, runs).loc[peak.claim_id]
    assert row["verdict"] == "not comparable" and "B/s of the write-up's machine" in row["reason"]
    assert row["ours"].startswith("post_echo_b65536_c100: 2,087.4 [") and "MiB/s (n=5)" in row["ours"]


def test_match_or_beat():
    assert C.agrees("higher", "not lower") and C.agrees("same", "not lower") and not C.agrees("lower", "not lower")
    assert C.judge_point("inside the noise floor", "not lower", 0.97, 0.99, 1.0) == "confirmed"


def test_a_claim_on_an_unknown_metric_is_refused(tmp_path):
    folder = tmp_path / "suites" / "demo"
    folder.mkdir(parents=True)
    (folder / "demo.sh").write_text("SCENARIOS=(\n)\n")
    (folder / "suite.toml").write_text('title = "demo"\n[seed]\nnumber = "009"\nkind = "claims"\n'
                                       '[[seed.claims]]\nwhat = "x"\ntext = "y"\nmetric = "speed"\npoints = [["p", 1, 2]]\n')
    with pytest.raises(lab_suites.SuiteError, match=r"\[\[seed.claims\]\] 1: metric 'speed' is not one of"):
        C.claims_of(lab_suites.load_suite(folder))
