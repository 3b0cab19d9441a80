"""How the reports describe the statistics, in one place (stats.methods is what they describe)."""
from __future__ import annotations

import pandas as pd

from ..stats import MIN_RUNS, format_delta
from ..stats.frames import RunStats
from .cells import ratio_ci_of


def ci_words(confidence: float) -> str:
    """The interval of one server's figure."""
    return (f"geometric mean over ok runs with its {confidence:.0%} t interval on the log scale "
            f"(n = ok runs; no interval below {MIN_RUNS} runs)")


def delta_words(confidence: float) -> str:
    """A Δ between two cells of the same suite (servers, or one server's scenarios)."""
    return (f"Δ = ratio of geometric means − 1 with its {confidence:.0%} t interval on the log scale, "
            f"paired by rep (Welch's t where the two share fewer than {MIN_RUNS} reps); "
            "'no clear difference' when it holds 0")


def between_suites_words(confidence: float, stats: RunStats | None = None,
                         suites: tuple[str, ...] = ()) -> str:
    """A Δ between two suites of one run: not a controlled comparison. Its rows are paired by rep
    number as every Δ of a run is (stats.methods.ratio_by_rep): rep k of one suite against rep k of
    the other. Their runs are independent, so the per-rep log ratios are too and the interval is
    valid; it cancels no drift, as no block holds both. With the run's
    frames, the drift measured within each suite (its comparisons row of kind drift) is stated too."""
    text = (f"Δ = ratio of geometric means − 1 with its {confidence:.0%} t interval on the log scale "
            "over the reps, rep k of one suite against rep k of the other (Welch's t where they share "
            f"fewer than {MIN_RUNS}). The two suites ran one after the other, so this is a between-suite "
            "comparison, not a controlled one: whatever changed between them is part of the Δ")
    if stats is None or not suites:
        return text
    parts = []
    for suite in suites:
        row = stats.drift(suite)
        if row is not None:
            parts.append(f"{suite} {format_delta(ratio_ci_of(row))} over {int(row['n_pairs'])} points")
    if not parts:
        return text
    return (text + ". Drift measured in this run, the last rep against the first (req/s, paired by "
            "point): " + "; ".join(parts) + ". A between-suite Δ of that size can be drift alone")


def drift_note(stats: RunStats | None, suites: tuple[str, ...]) -> str:
    """The caveat a summary line of between-suite Δs carries, as its tables' captions do: not a
    controlled comparison, and the drift measured within each suite (its comparisons row of kind
    drift: req/s of the last rep against the first, paired by point)."""
    parts = []
    for suite in suites:
        row = stats.drift(suite) if stats is not None else None
        if row is not None:
            parts.append(f"{suite} {format_delta(ratio_ci_of(row))}")
    return ("(between suites run one after the other, not a controlled comparison"
            + (f"; drift within each, last rep vs first: {', '.join(parts)}" if parts else "") + ")")


def statistics_line(confidence: float) -> str:
    """The report header's Statistics row."""
    return (f"{confidence:.0%} confidence; figures: geometric mean with a t interval on the log scale; "
            f"Δ: ratio of geometric means, t interval on the log scale, paired by rep within a suite "
            f"(Welch between suites); no interval below {MIN_RUNS} runs; coverage measured by "
            "simulation (method notes)")


def coverage_table() -> "pd.DataFrame":
    """The measured coverage of the intervals (stats.coverage's committed table) as a report table:
    one row per method, design, noise and spread; one column per n."""
    from ..stats.coverage import TRUE_RATIO, committed_table

    t = committed_table()
    names = {"center": "one server's figure", "ratio_welch": "Δ, unpaired (Welch)",
             "ratio_paired": "Δ, paired by rep", "ranking_holm": "ranking (Holm), 1 − family-wise error"}
    t = t.assign(Interval=t["interval"].map(names), cov=(100 * t["coverage"]).map(lambda v: f"{v:.1f}%"))
    wide = t.pivot_table(index=["Interval", "noise", "spread"], columns="n", values="cov", aggfunc="first",
                         sort=False).reset_index()
    wide.columns = ["Interval", "Noise", "Spreads (A:B)"] + [f"n = {n}" for n in wide.columns[3:]]
    trials = int(t.loc[t["interval"] != "ranking_holm", "trials"].iloc[0])
    wide.attrs["title"] = "Method notes: measured coverage of the 95 % intervals"
    wide.attrs["caption"] = (
        f"Share of {trials:,} simulated samples per cell (seeded; httplab/stats/coverage.py, checked in CI) "
        "whose 95 % interval held the truth: the centre of one server's runs, or a true ratio of "
        f"{TRUE_RATIO:g}. Normal noise: x = μ(1 + s·z); lognormal: x = μ·exp(s·z); paired designs add a "
        "10 % rep effect shared by both servers; measured: the per-rep log ratios of the committed "
        "interleaved runs' server pairs (--blocks sliced), standardised and resampled, tails and all. "
        "Every cell at n ≥ 5 lies within 93-97 %. n = 3 is "
        f"shown for what it is: the lab prints no interval below {MIN_RUNS} runs, so a run made with "
        "--reps 3 shows estimates without intervals (and the ranking calls no differences, hence "
        "100 %). The ranking row is the chance that Holm's procedure over all pairs of 6 equal "
        "servers calls none of them different.")
    return wide


def stand_in() -> str:
    """The server the write-ups' event loop is read on (suite.toml [seed] servers.contestant), in its
    display name."""
    from ..lab.servers import display_name
    from ..lab.suites import seed_suites
    for s in seed_suites():
        c = (s.seed_doc.get("servers") or {}).get("contestant")
        if c:
            return display_name(str(c))
    return "The lab's C server"


def stand_in_sentence() -> str:
    """Every report says it: the write-ups measured xKit, the lab measures its own C server."""
    return (f"{stand_in()} stands in for the write-ups' xKit, whose source the lab cannot build: a claim "
            "about xKit is read on it, single-threaded as xKit was (every server on one core, or its "
            "one-core instance under the write-ups' conditions)")
