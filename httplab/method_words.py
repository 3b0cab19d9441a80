"""How the reports describe the statistics, in one place (stats.methods is what they describe)."""
from __future__ import annotations

from .stats import MIN_RUNS


def ci_words(confidence: float) -> str:
    """The interval of one server's figure."""
    return (f"geometric mean over ok runs with its {confidence:.0%} t interval on the log scale "
            f"(n = ok runs; no interval below {MIN_RUNS} runs)")


def delta_words(confidence: float) -> str:
    """A Δ between two cells of the same suite (servers, or one server's scenarios)."""
    return (f"Δ = ratio of geometric means − 1 with its {confidence:.0%} t interval on the log scale, "
            f"paired by rep (Welch's t where the two share fewer than {MIN_RUNS} reps); "
            "'no clear difference' when it holds 0")


def between_suites_words(confidence: float) -> str:
    """A Δ between two suites of one run: unpaired, and not a controlled comparison."""
    return (f"Δ = ratio of geometric means − 1 with its {confidence:.0%} Welch t interval on the log "
            "scale; the two suites ran one after the other, so this is a between-suite comparison: "
            "drift between them is part of the Δ (see the A/A noise floor)")


def statistics_line(confidence: float) -> str:
    """The report header's Statistics row."""
    return (f"{confidence:.0%} confidence; figures: geometric mean with a t interval on the log scale; "
            f"Δ: ratio of geometric means, t interval on the log scale, paired by rep within a suite "
            f"(Welch between suites); no interval below {MIN_RUNS} runs; coverage measured by "
            "simulation (method notes)")
