"""What the seed 003 write-up guessed about improvements and production servers, set against this
run's measurements (its guesses as data: Guess)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from httplab.stats.select import column, ok_runs
from httplab.report.fmt import fmt_count, fmt_float, fmt_kilo, fmt_mean_ci, fmt_us
from httplab.report.scenarios import Section
from httplab.report.engine import ReportContext, open_report
from httplab.lab.servers import display_name, is_aa_copy, language, short_name, sort_servers, tier
from httplab.report.quality import mostly_client_bound
from httplab.report.tables import CLIENT_BOUND_MARK, bound_figure, client_bound_words, delta_cell
from httplab.report.method_words import ci_words, delta_words
from httplab.stats.frames import RunStats
from httplab.stats.multiple import rank
from httplab.lab import suites
from httplab.stats.write import KEEPALIVE_SCORE, run_stats
from httplab.report.cells import comparison, mean_ci_of, ratio_ci_of
from httplab.stats import (MIN_RUNS, MINUS, MeanCI, RatioCI, format_delta, mean_ci, ratio_by_rep,
                    tail_ratio)
from httplab.report.tables import _with_meta

from httplab.lab.suites import suite_module

_C = suite_module("languages", "common")


@dataclass(frozen=True)
class Guess:
    language: str
    seed_change: str  # what seed 003 proposed
    text: str  # the guess as printed
    low: float
    high: float  # math.inf for "N+"
    tier: str  # the tier of our server answering it (lab.servers.tier)
    note: str = ""
    answered_in: str | None = None  # the language of that server, when not the guess's own

    @property
    def answer_language(self) -> str:
        return self.answered_in or self.language

    def servers(self, present: Sequence[str]) -> list[str]:
        """The servers of `present` answering the guess: those of its answer language and tier,
        in display order (A/A copies left out)."""
        return [s for s in sort_servers(present) if not is_aa_copy(s)
                and language(s) == self.answer_language and tier(s) == self.tier]


# "How Each Language Could Be Improved" (its Expected Result column)
SEED_IMPROVEMENTS: tuple[Guess, ...] = (
    Guess("Go", "use fasthttp", "250K+ req/s", 250e3, math.inf, "production"),
    Guess("Rust", "use tokio async", "200K+ req/s", 200e3, math.inf, "production"),
    Guess("JavaScript", "use cluster mode", "150K+ req/s", 150e3, math.inf, "production"),
    Guess("C++", "use io_uring or epoll", "150K+ req/s", 150e3, math.inf, "contestant",
          "answered in C: the lab's epoll event loop", answered_in="C"),
    Guess("C++", "use io_uring or epoll", "150K+ req/s", 150e3, math.inf, "production",
          "Asio runs on epoll"),
    Guess("Python", "use uvloop + asyncio", "50K+ req/s", 50e3, math.inf, "production"),
)
# "Recommended Production Stack" (its Expected Performance column)
SEED_PRODUCTION: tuple[Guess, ...] = (
    Guess("Go", "stdlib (already excellent)", "150–200K req/s", 150e3, 200e3, "stdlib"),
    Guess("Rust", "Actix-web or Axum + Tokio", "200–300K req/s", 200e3, 300e3, "production"),
    Guess("JavaScript", "Fastify + cluster", "100–150K req/s", 100e3, 150e3, "production"),
    Guess("C++", "Drogon or uWebSockets", "200–400K req/s", 200e3, 400e3, "production",
          "we run Boost.Beast/Asio, not Drogon or uWebSockets"),
    Guess("Python", "FastAPI + uvicorn", "30–50K req/s", 30e3, 50e3, "production",
          "Starlette, the toolkit FastAPI is built on"),
)


def compare_to_guess(ci: MeanCI, low: float, high: float = math.inf) -> str:
    """Where a measured mean (with its CI) lies against a guessed range [low, high] (high = inf
    for 'N+'): 'below', 'above', 'within' when the whole CI is on that side / inside; 'overlaps
    the lower end' / 'overlaps the upper end' when the CI straddles a bound; for an open-ended
    guess ('N+') 'within' reads 'meets'. Without a CI the mean decides, marked '(no CI, n=…)'."""
    def word(w: str) -> str:
        return "meets" if w == "within" and math.isinf(high) else w
    if ci.mean is None:
        return "no data"
    if not ci.has_interval:
        m = ci.mean
        where = "below" if m < low else ("above" if m > high else "within")
        return f"{word(where)} (no CI, n={ci.n})"
    lo, hi = ci.low, ci.high
    if hi < low:  # type: ignore[operator]
        return "below"
    if lo > high:  # type: ignore[operator]
        return "above"
    if lo >= low and hi <= high:  # type: ignore[operator]
        return word("within")
    return "overlaps the lower end" if lo < low else "overlaps the upper end"  # type: ignore[operator]


def guesses_table(runs: pd.DataFrame, guesses: Sequence[Guess] = SEED_IMPROVEMENTS,
                  confidence: float = 0.95,
                  title: str = "Seed 003's guesses (\"How each language could be improved\") against our measurements"
                  ) -> pd.DataFrame:
    """One row per guess: the seed's proposal and expected req/s beside our server's score (mean
    req/s over the four keep-alive endpoints, per rep, log-scale t interval), share of the guess's lower
    bound, and where the CI lies against the guess. The answering server is picked by language and
    tier (Guess.servers): one row per such server of the run, or one 'no data' row when it has none."""
    scores = _C.rep_scores(runs)
    present = _C._servers(runs)
    rows = []
    for g in guesses:
        for s in g.servers(present) or [None]:
            ci = mean_ci(_C._vals(scores.get(s) if s else None), confidence)
            our = _C.name(s) if s else f"no {g.answer_language} server of tier {g.tier} in this run"
            rows.append({
                "Language": g.language, "Seed's proposal": g.seed_change, "Seed's guess": g.text,
                "Our server": our + (f" ({g.note})" if g.note and s else ""),
                "Measured avg req/s (1 core)": bound_figure(fmt_mean_ci(ci), bool(s) and mostly_client_bound(
                    runs[(runs["server"] == s) & runs["scenario"].isin(_C.KEEPALIVE)])),
                "Share of the guess's low end": "—" if ci.mean is None else f"{ci.mean / g.low:.0%}",
                "Against the guess": compare_to_guess(ci, g.low, g.high),
            })
    cap = ("Measured = the ranking score (mean req/s over the four keep-alive endpoints, per rep, "
           f"{confidence:.0%} t interval on the log scale over reps; n = reps). The guesses are compared as the seed "
           "stated them, unscaled, although the seed's numbers came from one machine (its hardware not stated) with wrk and "
           "server on it together, while our server runs on ONE core (its CPU set) with "
           "wrk on another. 'below'/'within'/'above' = the whole CI lies there; 'overlaps' = the CI "
           "straddles a bound of the guess.")
    return _with_meta(pd.DataFrame(rows), title, cap)


def production_table(runs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    return guesses_table(runs, SEED_PRODUCTION, confidence,
                         title="Seed 003's \"Recommended Production Stack\" against our measurements")
