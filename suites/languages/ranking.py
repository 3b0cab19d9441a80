"""The languages suite's final ranking: each server's score (mean req/s over the four keep-alive
endpoints, formed per rep) and the ranks with their ties, every pair compared by the ratio of the
scores paired by rep and the pairs' p-values adjusted together with Holm's procedure (report.py's
docstring states the method; the notebook reaches these through report.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from httplab.lab.servers import language, short_name
from httplab.lab.suites import suite_module
from httplab.report.cells import mean_ci_of, ratio_ci_of
from httplab.report.fmt import fmt_mean_ci
from httplab.report.quality import mostly_client_bound
from httplab.report.tables import CLIENT_BOUND_MARK, _with_meta, bound_figure
from httplab.stats import MeanCI, format_delta, mean_ci, ratio_by_rep
from httplab.stats.frames import RunStats
from httplab.stats.multiple import rank
from httplab.stats.select import ok_runs
from httplab.stats.write import KEEPALIVE_SCORE, run_stats

_C = suite_module("languages", "common")
SUITE, KEEPALIVE, MEMORY_WORDS = _C.SUITE, _C.KEEPALIVE, _C.MEMORY_WORDS
_vals, _servers, _rss_mib, _tier_label, name = _C._vals, _C._servers, _C._rss_mib, _C._tier_label, _C.name


# ---------------------------------------------------------------- ranking with ties
@dataclass(frozen=True)
class RankRow:
    server: str
    score: MeanCI
    rank_low: int
    rank_high: int
    tied_with: tuple[str, ...]

    @property
    def label(self) -> str:
        if self.rank_low == self.rank_high:
            return str(self.rank_low)
        return f"{self.rank_low}–{self.rank_high} (tie)"


def _ranked(order: list[str], est: Mapping[str, MeanCI],
            pairs: Mapping[tuple[str, str], tuple[float | None, float | None]], confidence: float,
            must_tie: frozenset[str], floor_ties: frozenset[tuple[str, str]] = frozenset()) -> list[RankRow]:
    ranks = rank(order, pairs, confidence, must_tie, floor_ties)
    return [RankRow(s, est[s], *ranks[s]) for s in order]


def rank_with_ties(scores: Mapping[str, Mapping[int, float]], confidence: float = 0.95,
                   must_tie: frozenset[str] = frozenset()) -> list[RankRow]:
    """Rank servers by score (rep -> score; descending geometric mean over reps). Every pair is
    compared by the ratio of their scores, paired by rep (stats.ratio_by_rep), and the pairs'
    p-values are adjusted together with Holm's procedure (stats.multiple.rank), so the whole
    ranking's chance of calling any difference that is not there stays within 1 − confidence.
    Two servers of `must_tie` (both client-bound: their req/s measured the load tool) always tie.
    Rank range of i = [1 + #ahead of i, N − #behind i]. Servers without data are left out."""
    items = {s: dict(v) for s, v in scores.items() if len(v)}
    est = {s: mean_ci(_vals(items[s]), confidence) for s in items}
    order = sorted(items, key=lambda s: -float(est[s].mean))  # type: ignore[arg-type]
    pairs = {}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            r = ratio_by_rep(items[a], items[b], confidence)
            pairs[(a, b)] = (r.ratio, r.p_value)
    return _ranked(order, est, pairs, confidence, must_tie)


def _score_cell(runs: pd.DataFrame, server: str) -> tuple[str, str, str]:
    return (str(runs["suite"].iloc[0]) if not runs.empty else SUITE, KEEPALIVE_SCORE, server)


def ranking_from_stats(runs: pd.DataFrame, servers: Sequence[str], stats: RunStats, confidence: float,
                       must_tie: frozenset[str] = frozenset()) -> list[RankRow]:
    """rank_with_ties on the run's frames: the score cells' estimates and comparisons rows; a pair
    whose difference lies inside the run's A/A noise floor (verdict 'below the noise floor') ties."""
    est = {}
    for s in servers:
        row = stats.estimate(_score_cell(runs, s), "req_per_s")
        if row is not None and row["n"] > 0:
            est[s] = mean_ci_of(row)
    order = sorted(est, key=lambda s: -float(est[s].mean))  # type: ignore[arg-type]
    pairs, floor = {}, set()
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            row = stats.compare("req_per_s", _score_cell(runs, a), _score_cell(runs, b))
            if row is not None:
                pairs[(a, b)] = (row["ratio"], None if pd.isna(row["p_value"]) else float(row["p_value"]))
                if row["verdict"] == "below the noise floor":
                    floor.add((a, b))      # a Δ no larger than two copies of one server differ by: a tie
    return _ranked(order, est, pairs, confidence, must_tie, frozenset(floor))


def _score_delta(runs: pd.DataFrame, stats: RunStats, a: str, b: str) -> str:
    return format_delta(ratio_ci_of(stats.compare("req_per_s", _score_cell(runs, a), _score_cell(runs, b))))


def ranking_table(runs: pd.DataFrame, tier_name: str | None = None, confidence: float = 0.95,
                  stats: RunStats | None = None) -> pd.DataFrame:
    """Seed 003's final ranking: Rank | Language | Server | Tier | Avg req/s (4 endpoints) | n reps
    | Δ vs next | Memory | Tied with. Rank ranges mark ties (see rank_with_ties)."""
    title = "Final ranking by mean req/s over the four keep-alive endpoints" + (
        f" — {tier_name} tier" if tier_name else " — both tiers")
    stats = stats or run_stats(runs, confidence)
    servers = _servers(runs, tier_name)
    keepalive = runs[runs["scenario"].isin(KEEPALIVE)] if not runs.empty else runs
    bound = frozenset(s for s in servers if mostly_client_bound(keepalive[keepalive["server"] == s]))
    ranked = ranking_from_stats(runs, servers, stats, confidence, must_tie=bound)
    if not ranked:
        return _with_meta(pd.DataFrame(), title, "no server has a rep with all four keep-alive endpoints ok")
    rows = []
    for i, r in enumerate(ranked):
        nxt = ranked[i + 1] if i + 1 < len(ranked) else None
        rows.append({
            "Rank": r.label, "Language": language(r.server) or "—", "Server": name(r.server),
            "Tier": _tier_label(r.server),
            "Avg req/s": bound_figure(fmt_mean_ci(r.score, show_n=False), r.server in bound),
            "n reps": r.score.n,
            "Δ vs next": ("—" if nxt is None else
                          f"{CLIENT_BOUND_MARK} both client-bound: no req/s finding"
                          if r.server in bound and nxt.server in bound else
                          _holm_note(_score_delta(runs, stats, r.server, nxt.server), nxt.server in r.tied_with)),
            "Memory": _rss_mib(ok_runs(runs[runs["server"] == r.server])),
            "Tied with": ", ".join(short_name(t) for t in r.tied_with) or "—",
        })
    df = pd.DataFrame(rows)
    df.attrs["key_columns"] = ["Rank", "Server"]
    df.attrs["column_groups"] = [["Language", "Tier", "Avg req/s", "n reps"], ["Δ vs next", "Tied with", "Memory"]]
    cap = ("Score = mean req/s of GET /, POST /something, GET /something?json=true and GET "
           "/something?foo=bar, formed per rep (the four runs of a rep hit the same server process) "
           "from reps whose four runs are all ok, then averaged over those reps (n reps) with a "
           f"{confidence:.0%} t interval on the log scale. Ties: every pair of servers is compared by "
           "the ratio of their scores, paired by rep, and the p-values of all the pairs are adjusted "
           f"together with Holm's procedure, so the chance that the ranking calls any difference that "
           f"is not there stays within {1 - confidence:.0%}; two servers tie when the adjusted p-value "
           f"is ≥ {1 - confidence:.2f}, or when their difference lies inside the run's A/A noise floor (the "
           "A/A copy's own spread: no larger than two instances of one server differ by). A rank is the range of places consistent with the differences "
           "found, from 1 + (servers ahead) to N − (servers behind). Δ vs next (uncorrected, paired "
           "by rep): against the server "
           f"ranked just below. {CLIENT_BOUND_MARK} = client-bound on most of its keep-alive runs (the load "
           "generator's cores saturated, the server's not): its req/s measured the tool, so two such "
           "servers always tie here; compare their CPU-µs per request instead. A Δ vs next whose "
           "uncorrected interval excludes 0 while the two still tie after Holm's adjustment says so. "
           + MEMORY_WORDS + ".")
    return _with_meta(df, title, cap)


HOLM_TIE = "tie after Holm's adjustment"


def _holm_note(text: str, tied: bool) -> str:
    """The Δ vs next cell: an uncorrected interval that excludes 0 beside a tie is marked, so the
    cell never reads as a difference the ranking does not call."""
    clear = text[:1] in "+−-" and "[" in text
    return f"{text}; {HOLM_TIE}" if tied and clear else text
