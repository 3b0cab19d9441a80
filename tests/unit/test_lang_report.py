"""The languages suite: ranking with ties (synthetic data), the seed's guesses, the P99/P50 rule,
the fake run built from real wrk captures, and the notebooks' shape."""
from __future__ import annotations

import math
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from httplab.lab.suites import suite_module
L = suite_module("languages")
from httplab.tidy.rawrun import RUNS_COLUMNS, load_run
from httplab.stats import MeanCI, RatioCI, format_delta

REPO = Path(__file__).resolve().parents[2]


def _normal(mean: float, n: int = 6, sd: float = 0.01, seed: int = 0) -> dict[int, float]:
    """rep -> score for reps 1..n."""
    rng = np.random.default_rng(seed)
    return {i + 1: float(v) for i, v in enumerate(mean * (1 + rng.normal(0, sd, n)))}


def _reps(values) -> dict[int, float]:
    return {i + 1: float(v) for i, v in enumerate(values)}


# ---------------------------------------------------------------- ranking
def test_clear_order_has_single_ranks():
    ranked = L.rank_with_ties({"a": _normal(100, seed=1), "b": _normal(200, seed=2), "c": _normal(300, seed=3)})
    assert [(r.server, r.label) for r in ranked] == [("c", "1"), ("b", "2"), ("a", "3")]
    assert all(r.tied_with == () for r in ranked)


def test_two_equal_servers_tie():
    ranked = L.rank_with_ties({"x": _normal(300, seed=1), "y": _normal(200, seed=2), "z": _normal(200.5, seed=3),
                               "w": _normal(100, seed=4)})
    labels = {r.server: r.label for r in ranked}
    assert labels == {"x": "1", "y": "2–3 (tie)", "z": "2–3 (tie)", "w": "4"}
    tie = {r.server: r.tied_with for r in ranked}
    assert set(tie["y"]) == {"z"} and set(tie["z"]) == {"y"}


def test_non_transitive_ties_give_rank_ranges():
    # a ≈ b and b ≈ c (b is noisy), but a is clearly ahead of c
    a = np.array([100.0, 101, 99, 100.5, 99.5, 100])
    b = np.array([70.0, 110, 75, 105, 80, 100])
    c = np.array([80.0, 81, 79, 80.5, 79.5, 80])
    ranked = L.rank_with_ties({"a": _reps(a), "b": _reps(b), "c": _reps(c)})
    labels = {r.server: r.label for r in ranked}
    assert labels == {"a": "1–2 (tie)", "b": "1–3 (tie)", "c": "2–3 (tie)"}


def test_server_without_ci_ties_with_everyone():
    ranked = L.rank_with_ties({"a": _normal(300), "b": _reps([150.0, 151.0, 149.0]), "c": _normal(100)})
    labels = {r.server: r.label for r in ranked}
    assert labels == {"a": "1–2 (tie)", "b": "1–3 (tie)", "c": "2–3 (tie)"}
    assert next(r for r in ranked if r.server == "b").score.reason == "CI needs ≥ 5 runs"


def test_rep_scores_use_complete_ok_reps_only(tmp_path):
    from make_fake_languages import make_fake_languages_run
    run = load_run(make_fake_languages_run(tmp_path, servers=("lang_go_std", "lang_rust_std"),
                                           failed=(("lang_go_std", "post_json_c100", 2),)))
    scores = L.rep_scores(run.runs)
    assert len(scores["lang_go_std"]) == 4 and len(scores["lang_rust_std"]) == 5
    r = run.runs
    rep1 = r[(r["server"] == "lang_rust_std") & (r["rep"] == 1) & r["scenario"].isin(L.KEEPALIVE)]
    assert scores["lang_rust_std"][1] == pytest.approx(rep1["req_per_s"].mean())


# ---------------------------------------------------------------- guesses and rules
def _ci(mean, low=None, high=None, n=5):
    return MeanCI(mean, low, high, n, 0.95, None if low is not None else "CI needs ≥ 5 runs")


@pytest.mark.parametrize("ci, low, high, want", [
    (_ci(100e3, 95e3, 105e3), 150e3, math.inf, "below"),
    (_ci(260e3, 255e3, 265e3), 250e3, math.inf, "meets"),
    (_ci(250e3, 245e3, 255e3), 250e3, math.inf, "overlaps the lower end"),
    (_ci(175e3, 170e3, 180e3), 150e3, 200e3, "within"),
    (_ci(198e3, 195e3, 205e3), 150e3, 200e3, "overlaps the upper end"),
    (_ci(450e3, 420e3, 480e3), 200e3, 400e3, "above"),
    (_ci(40e3, n=3), 30e3, 50e3, "within (no CI, n=3)"),
    (_ci(None, n=0), 30e3, 50e3, "no data"),
])
def test_compare_to_guess(ci, low, high, want):
    assert L.compare_to_guess(ci, low, high) == want


ALL_LANG_SERVERS = ("evloop", "lang_go_std", "lang_rust_std", "lang_node_std", "lang_cpp_std", "lang_python_std",
                    "lang_go_fasthttp", "lang_rust_axum", "lang_node_fastify", "lang_cpp_beast",
                    "lang_python_uvicorn", "go", "nginx", "evloop~aa")


def test_seed_guesses_as_stated():
    # each guess is answered by the run's server of its (language, tier), found in the manifests
    imp = {(g.language, *g.servers(ALL_LANG_SERVERS)): (g.text, g.low, g.high) for g in L.SEED_IMPROVEMENTS}
    assert imp[("Go", "lang_go_fasthttp")] == ("250K+ req/s", 250e3, math.inf)
    assert imp[("Rust", "lang_rust_axum")] == ("200K+ req/s", 200e3, math.inf)
    assert imp[("JavaScript", "lang_node_fastify")] == ("150K+ req/s", 150e3, math.inf)
    assert imp[("C++", "evloop")] == imp[("C++", "lang_cpp_beast")] == ("150K+ req/s", 150e3, math.inf)
    assert imp[("Python", "lang_python_uvicorn")] == ("50K+ req/s", 50e3, math.inf)
    prod = {g.language: (*g.servers(ALL_LANG_SERVERS), g.low, g.high) for g in L.SEED_PRODUCTION}
    assert prod == {"Go": ("go", "lang_go_std", 150e3, 200e3), "Rust": ("lang_rust_axum", 200e3, 300e3),
                    "JavaScript": ("lang_node_fastify", 100e3, 150e3), "C++": ("lang_cpp_beast", 200e3, 400e3),
                    "Python": ("lang_python_uvicorn", 30e3, 50e3)}
    # a run without such a server: the guess has no answer rather than a wrong one
    assert [g.servers(("lang_go_std",)) for g in L.SEED_IMPROVEMENTS] == [[]] * len(L.SEED_IMPROVEMENTS)


@pytest.mark.parametrize("ci, want", [
    (_ci(12.0, 11.0, 13.0), "trouble"), (_ci(3.0, 2.5, 3.5), "fine"), (_ci(10.0, 8.0, 12.0), "unclear"),
    (_ci(30.0, n=2), "trouble (no CI, n=2)"), (_ci(None, n=0), "no data"),
])
def test_tail_verdict(ci, want):
    assert L.tail_verdict(ci) == want


def test_relative_cells_are_deltas_not_shares():
    """POST and JSON against root are printed as every Δ is, ratio − 1 (a POST at 65 % of root is
    −35 % [−42 %, −27 %]), never as the share worded 'slower'."""
    rel = L.relative_table(pd.DataFrame(columns=["server"]))
    assert rel.empty
    r = RatioCI(-0.35, -0.42, -0.27, 12, 12, 0.95)
    assert format_delta(r) == "−35% [−42%, −27%]"


def test_count_cpus_and_one_core_note():
    assert L.count_cpus("0") == 1 and L.count_cpus("0-1") == 2 and L.count_cpus("0,2-3") == 3
    assert L.count_cpus("x") is None
    assert "ONE core" in L.one_core_note({"server_cpus": "0", "client_cpus": "1"})


# ---------------------------------------------------------------- the fake run
@pytest.fixture(scope="module")
def lang_run(tmp_path_factory):
    from make_fake_languages import make_fake_languages_run
    return load_run(make_fake_languages_run(tmp_path_factory.mktemp("raw")))


def test_fake_languages_frames(lang_run):
    r = lang_run.runs
    assert list(r.columns) == list(RUNS_COLUMNS)
    assert set(r["scenario"]) == set(L.KEEPALIVE) | {L.CLOSE} and len(set(r["server"])) == 11
    assert set(r.loc[r["scenario"] == L.QUERY, "route"]) == {"/something?foo=bar"}
    assert set(r.loc[r["scenario"] == L.POST, "method"]) == {"POST"}
    assert (r["status"] == "failed").sum() == 1


def test_language_tables(lang_run):
    r = lang_run.runs
    root = L.endpoint_table(r, L.ROOT, "lang_go_std")
    assert list(root.columns) == ["Language", "Server", "Tier", "n", "Requests", "Req/s", "P50", "P99", "Max",
                                  "CPU", "Memory", "Δ req/s vs Go std"]
    assert root.iloc[0]["Server"] == "C (evloop)" and root.iloc[-1]["Language"] == "Python"
    assert "n = ok runs" in root.attrs["caption"] and "95%" in root.attrs["caption"]
    stdlib = L.endpoint_table(r, L.ROOT, None, "stdlib")
    # the contestant stands with the stdlib tier, labelled as what it is
    assert set(stdlib["Tier"]) == {"stdlib", "contestant"} and len(stdlib) == 6
    assert stdlib.loc[stdlib["Server"] == "C (evloop)", "Tier"].tolist() == ["contestant"]
    rank = L.ranking_table(r)
    labels = dict(zip(rank["Server"], rank["Rank"]))
    assert labels["Rust axum/tokio"] == labels["C++ Boost.Beast/Asio"] == "3–4 (tie)"
    assert labels["C (evloop)"] == "1"
    tail = L.tail_table(r)
    verdict = dict(zip(tail["Server"], tail["Verdict"]))
    assert verdict["Python http.server"].startswith("trouble: Root, POST, JSON, Query")
    assert verdict["C++ std::thread (8 threads)"].startswith("trouble: JSON")
    assert verdict["Go net/http"] == "fine"
    rel = L.relative_table(r)
    go = rel[rel["Server"] == "Go net/http"].iloc[0]
    # POST at about 72 % of root, JSON about 27 % below it: Δs of ratio − 1, signed
    assert go["Δ POST vs root"].startswith("−2"), go["Δ POST vs root"]
    assert go["Δ JSON vs root"].split("%")[0] in {"−25", "−26", "−27", "−28", "−29"}, go["Δ JSON vs root"]
    assert "POST / root" not in rel and "JSON drop vs root" not in rel
    mem = L.memory_table(r)
    assert mem.iloc[0]["Language"] in {"Rust", "C"} and mem.iloc[-1]["Server"] == "Node.js Fastify + cluster"
    close = L.close_table(r)
    assert all(d.startswith("−") for d in close["Δ req/s close vs keep-alive"] if "CI needs" not in d)
    tiers = L.tier_table(r)
    assert list(tiers["Language"]) == ["Go", "Rust", "JavaScript", "C++", "Python", "C"]
    guesses = L.guesses_table(r)
    assert len(guesses) == 6 and list(guesses["Seed's guess"])[0] == "250K+ req/s"
    assert dict(zip(guesses["Language"] + guesses["Our server"].str[:5], guesses["Against the guess"]))[
        "GoGo fa"] == "below"
    assert "ONE core" in guesses.attrs["caption"]
    prod = L.production_table(r)
    assert list(prod["Seed's guess"]) == ["150–200K req/s", "200–300K req/s", "100–150K req/s", "200–400K req/s",
                                          "30–50K req/s"]


def test_languages_summary(lang_run):
    text = L.summary_text(lang_run.runs, "run-x")
    assert "3–4 (tie)" in text and "Production vs stdlib tier: Go +" in text
    assert "Seed's guesses (on 1 server core):" in text and "Failed runs: 1" in text


def test_empty_runs_say_no_data(lang_run):
    empty = lang_run.runs.iloc[0:0]
    assert L.endpoint_table(empty, L.ROOT).empty and L.ranking_table(empty).empty
    assert L.tail_table(empty).empty and L.endpoint_bars(empty, "stdlib") is None
    assert L.summary_text(empty).endswith("no data")


# ---------------------------------------------------------------- notebooks
@pytest.mark.parametrize("name, fn", [("https", "open_https_report"),
                                      ("languages", "open_languages_report")])
def test_new_notebooks_shape(name, fn):
    nb = nbformat.read(REPO / "suites" / name / "report.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "httplab"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for p in ("run_dir = None", "out_dir = None", "confidence = 0.95", "baseline =", "raw_root =", "data_root ="):
        assert p in tagged[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert any(fn in c.source for c in code)
    assert all(len(c.source.splitlines()) <= 8 for c in code if c not in tagged)  # thin cells


def test_a_difference_inside_the_noise_floor_is_a_tie():
    """A pair that Holm's procedure would separate still ties when its Δ lies inside the run's A/A
    floor (comparisons verdict 'below the noise floor'); it stays in the family of p-values."""
    from httplab.stats.multiple import rank
    pairs = {("a", "b"): (1.07, 0.001), ("a", "c"): (1.5, 0.0001), ("b", "c"): (1.4, 0.0002)}
    apart = rank(["a", "b", "c"], pairs, 0.95)
    assert apart["a"] == (1, 1, ()) and apart["b"][:2] == (2, 2)
    tied = rank(["a", "b", "c"], pairs, 0.95, floor_ties=frozenset({("a", "b")}))
    assert tied["a"] == (1, 2, ("b",)) and tied["b"] == (1, 2, ("a",)) and tied["c"] == (3, 3, ())
