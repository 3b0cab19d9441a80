"""The languages suite's vocabulary: its endpoints and score, the servers' names, languages and tiers
(from their manifests), the seed write-up's published averages, and the report's opening. Shared by
report.py and seed.py."""
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
from httplab.report.tables import CLIENT_BOUND_MARK, client_bound_words, delta_cell
from httplab.report.method_words import ci_words, delta_words
from httplab.stats.frames import RunStats
from httplab.stats.multiple import rank
from httplab.lab import suites
from httplab.stats.write import KEEPALIVE_SCORE, run_stats
from httplab.report.cells import comparison, mean_ci_of, ratio_ci_of
from httplab.stats import (MIN_RUNS, MINUS, MeanCI, RatioCI, format_delta, mean_ci, ratio_by_rep,
                    tail_ratio)
from httplab.report.tables import _with_meta

SUITE = "languages"
ROOT, QUERY, JSON, POST, CLOSE = ("get_root_c100", "get_query_c100", "get_json_c100", "post_json_c100",
                                  "get_root_close_c100")
KEEPALIVE: tuple[str, ...] = suites.composites()[(SUITE, KEEPALIVE_SCORE)]  # seed 003's four endpoints, its order
ENDPOINT_SHORT = {ROOT: "Root", POST: "POST", JSON: "JSON", QUERY: "Query", CLOSE: "Root, Connection: close"}
TAIL_THRESHOLD = 10.0
LANGUAGE_ORDER = ("Go", "Rust", "JavaScript", "C++", "Python", "C")
RUNTIME = {"Go": "Go runtime + GC", "Rust": "none (no GC)", "JavaScript": "V8 engine + JIT + GC",
           "C++": "none (no GC)", "Python": "CPython interpreter", "C": "none (libc only)"}
# Seed 003's own measurements (stdlib; its hardware not stated, wrk and server unpinned on one machine): avg req/s
# the write-up's stdlib averages (suite.toml, [seed] stdlib_avg): language -> req/s
SEED_STDLIB_AVG: dict[str, float] = dict(suites.suite("languages").seed_doc["stdlib_avg"])


# Tiers shown together in the views of a tier: the contestants (the lab's own servers: libc and
# epoll, no framework) stand beside the standard libraries.
TIER_VIEWS: dict[str, tuple[str, ...]] = {"stdlib": ("stdlib", "contestant")}


def name(server: str) -> str:
    return display_name(server)


def open_languages_report(run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                          raw_root: str | Path = "raw", data_root: str | Path = "data",
                          confidence: float = 0.95, *,
                          baseline: str) -> ReportContext:
    """open_report for the languages suite; tidy frames go to out_dir as languages_runs.* and
    languages_latency.*. baseline: the server the per-endpoint Δ column compares with."""
    return open_report(SUITE, run_dir=run_dir, out_dir=out_dir, raw_root=raw_root, data_root=data_root,
                       confidence=confidence, baseline=baseline)


def _ci_words(confidence: float) -> str:
    return ci_words(confidence)


def _delta_words(confidence: float) -> str:
    return delta_words(confidence)


def _servers(runs: pd.DataFrame, tier_name: str | None = None) -> list[str]:
    if runs.empty:
        return []
    # the A/A copy is the run's noise floor (quality.noise_floor), not a contestant
    present = [s for s in sort_servers(set(runs["server"])) if not is_aa_copy(s)]
    return [s for s in present if tier_name is None or in_tier(s, tier_name)]


def in_tier(server: str, tier_name: str) -> bool:
    """The server belongs to the view of tier_name (TIER_VIEWS: stdlib views hold the contestants)."""
    return tier(server) in TIER_VIEWS.get(tier_name, (tier_name,))


def languages_of(servers: Sequence[str]) -> list[str]:
    """The servers' languages: LANGUAGE_ORDER first, then any other in the servers' order."""
    present = [lang for s in servers if (lang := language(s))]
    return [lang for lang in LANGUAGE_ORDER if lang in present] + [
        lang for lang in dict.fromkeys(present) if lang not in LANGUAGE_ORDER]


def _rss_mib(df: pd.DataFrame) -> str:
    """The largest per-window peak RSS over the runs (runs made before the per-window peak show
    'not recorded')."""
    rss = df["rss_peak_kb"].max() if not df.empty else math.nan
    # a maximum, not an estimate: it says how many runs it is the largest of
    n = int(df["rss_peak_kb"].notna().sum()) if not df.empty else 0
    return "not recorded" if pd.isna(rss) else f"{rss / 1024:.1f} MiB (max of {n} runs)"


MEMORY_WORDS = ("Memory: the largest per-scenario peak RSS, each the peak of its measured window alone "
                "(VmHWM of the whole process tree, summed, reset just before the window)")


def _tier_label(server: str) -> str:
    return tier(server) or "—"


# ---------------------------------------------------------------- per-endpoint tables


def rep_scores(runs: pd.DataFrame, scenarios: Sequence[str] = KEEPALIVE) -> dict[str, dict[int, float]]:
    """server -> {rep: score}: the score is the mean req/s of `scenarios` in one rep, for the reps
    whose runs of all those scenarios are ok (a rep missing one is left out)."""
    out: dict[str, dict[int, float]] = {}
    if runs.empty:
        return out
    sub = ok_runs(runs[runs["scenario"].isin(scenarios)])
    for s in sort_servers(set(runs["server"])):
        grp = sub[sub["server"] == s]
        if grp.empty:
            out[s] = {}
            continue
        wide = grp.pivot_table(index="rep", columns="scenario", values="req_per_s", aggfunc="mean")
        wide = wide.reindex(columns=list(scenarios)).dropna()
        out[s] = {int(r): float(v) for r, v in wide.mean(axis=1).items()}
    return out


def _vals(scores: Mapping[int, float] | None) -> np.ndarray:
    return np.array(list((scores or {}).values()), dtype=np.float64)


def count_cpus(spec: Any) -> int | None:
    """Number of CPUs in a cpuset list like "0", "0-1", "0,2-3"; None when unreadable."""
    n = 0
    try:
        for part in str(spec).split(","):
            a, _, b = part.strip().partition("-")
            n += int(b) - int(a) + 1 if b else (int(a) * 0 + 1)
    except ValueError:
        return None
    return n or None


def one_core_note(meta: Mapping[str, Any]) -> str:
    """The caveat every comparison with seed 003 needs: how many cores our server had."""
    srv, cli = meta.get("server_cpus", "?"), meta.get("client_cpus", "?")
    n = count_cpus(srv)
    cores = "ONE core" if n == 1 else (f"{n} cores" if n else f"CPU set {srv}")
    return (f"**We measure each server on {cores}** (server CPU set `{srv}`, wrk on `{cli}`): "
            "multi-threaded runtimes (Go's GOMAXPROCS, thread pools, Node's cluster, uvicorn workers) "
            "see only that set. Seed 003 ran server and wrk on one machine, whose hardware it does not state. Its "
            "numbers and guesses are quoted as stated, not scaled: read 'below the guess' here as "
            f"'below on {cores.lower() if n == 1 else cores}', not as a refutation of the seed.")


# ---------------------------------------------------------------- plots
