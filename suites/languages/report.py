"""Tables, statistics and plots of the languages suite (notebooks/languages.ipynb, seed 003's
five-language shoot-out, stdlib and production tiers, plus the lab's contestants).

Servers are told apart by their manifests' language and tier (lab.servers), never by id: a
contestant-tier server (the lab's own, no framework) is shown with the stdlib tier's views.

Methods (stated again in every caption):
* Per endpoint: geometric mean over ok runs with a log-scale t interval (stats.mean_ci); Δ between
  servers: ratio of geometric means − 1, paired by rep (the comparisons rows of stats.frames).
* Ranking score of a server = the mean req/s over the four keep-alive endpoints. It is formed PER
  REP (a rep's four runs come from the same server process, back to back), only from reps whose four
  runs are all ok, then averaged over reps. Two servers tie when the Holm-adjusted paired comparison
  CI of the ratio of their scores holds 0; a server's rank is then the range of places consistent
  with the clear differences: from 1 + (servers clearly ahead) to N − (servers clearly behind),
  printed "1–2 (tie)". A server without a CI (fewer than 5 complete reps) cannot be separated from
  anyone and ties with everyone.
* P99/P50 per run, then mean and CI across runs; seed 003's rule "> 10× means trouble" is applied
  to the CI: "trouble" when the whole CI is above 10, "fine" when it is below, "unclear" otherwise.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from httplab.stats.select import column, ok_runs
from httplab.report.fmt import fmt_count, fmt_float, fmt_kilo, fmt_mean_ci, fmt_us
from httplab.report.scenarios import Section
from httplab.lab.servers import language, short_name, tier
from httplab.report.quality import mostly_client_bound
from httplab.report.tables import (CLIENT_BOUND_MARK, bound_figure, client_bound_words, delta_cell, estimate_bound,
                                   req_cell)
from httplab.stats.frames import RunStats
from httplab.stats.write import run_stats
from httplab.report.cells import comparison, mean_ci_of, ratio_ci_of
from httplab.stats import MIN_RUNS, MeanCI, format_delta, mean_ci, tail_ratio
from httplab.report.tables import _with_meta

from httplab.lab.suites import suite_module

# the suite's vocabulary (common.py) and the seed's guesses (seed.py), under the names the notebook uses
_C = suite_module("languages", "common")
_S = suite_module("languages", "seed")
rep_scores = _C.rep_scores
_vals = _C._vals
count_cpus = _C.count_cpus
one_core_note = _C.one_core_note
ROOT = _C.ROOT
QUERY = _C.QUERY
JSON = _C.JSON
POST = _C.POST
CLOSE = _C.CLOSE
SUITE = _C.SUITE
KEEPALIVE = _C.KEEPALIVE
ENDPOINT_SHORT = _C.ENDPOINT_SHORT
TAIL_THRESHOLD = _C.TAIL_THRESHOLD
LANGUAGE_ORDER = _C.LANGUAGE_ORDER
RUNTIME = _C.RUNTIME
SEED_STDLIB_AVG = _C.SEED_STDLIB_AVG
TIER_VIEWS = _C.TIER_VIEWS
name = _C.name
open_languages_report = _C.open_languages_report
_ci_words = _C._ci_words
_delta_words = _C._delta_words
_servers = _C._servers
in_tier = _C.in_tier
languages_of = _C.languages_of
_rss_mib = _C._rss_mib
MEMORY_WORDS = _C.MEMORY_WORDS
_tier_label = _C._tier_label
Guess = _S.Guess
SEED_IMPROVEMENTS = _S.SEED_IMPROVEMENTS
SEED_PRODUCTION = _S.SEED_PRODUCTION
compare_to_guess = _S.compare_to_guess
guesses_table = _S.guesses_table
production_table = _S.production_table
# the final ranking with its ties (ranking.py)
_R = suite_module("languages", "ranking")
RankRow = _R.RankRow
rank_with_ties = _R.rank_with_ties
ranking_from_stats = _R.ranking_from_stats
ranking_table = _R.ranking_table
_score_delta = _R._score_delta
_score_cell = _R._score_cell
HOLM_TIE = _R.HOLM_TIE


def endpoint_table(runs: pd.DataFrame, scenario: str, baseline: str | None = None,
                   tier_name: str | None = None, confidence: float = 0.95,
                   stats: RunStats | None = None) -> pd.DataFrame:
    """Seed 003's per-endpoint table, one row per server (fastest first): Language | Server |
    Tier | n | Requests | Req/s | P50 | P99 | Max | CPU | Memory | Δ req/s vs baseline (the column
    only when the baseline has runs of the endpoint)."""
    key_title = LANGUAGE_ENDPOINTS.get(scenario, (scenario, scenario))[1]
    title = key_title + (f" — {tier_name} tier" if tier_name else "")
    sub = runs[runs["scenario"] == scenario] if not runs.empty else runs
    servers = _servers(sub, tier_name)
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no data for this endpoint in this run")
    base = ok_runs(sub[sub["server"] == baseline]) if baseline else sub.iloc[0:0]
    rows = []
    for s in servers:
        ok = ok_runs(sub[sub["server"] == s])
        rps = mean_ci(column(ok, "req_per_s"), confidence)
        row = {
            "Language": language(s) or "—", "Server": name(s), "Tier": _tier_label(s), "n": len(ok),
            "Requests": fmt_mean_ci(mean_ci(column(ok, "requests"), confidence), show_n=False) if not ok.empty else "—",
            "Req/s": req_cell(ok, confidence, show_n=False),
            "P50": fmt_mean_ci(mean_ci(column(ok, "lat_p50_us"), confidence), fmt_us, show_n=False),
            "P99": fmt_mean_ci(mean_ci(column(ok, "lat_p99_us"), confidence), fmt_us, show_n=False),
            # a maximum over the runs, not an estimate: it says how many runs it is the largest of
            "Max": f"{fmt_us(ok['lat_max_us'].max())} (max of {len(ok)} runs)" if not ok.empty else "—",
            "CPU": fmt_mean_ci(mean_ci(column(ok, "cpu_pct"), confidence), lambda v: f"{fmt_float(v, 0)}%",
                               show_n=False),
            "Memory": _rss_mib(ok),
            "_sort": rps.mean if rps.mean is not None else -1.0,
        }
        if baseline and baseline in set(sub["server"]):
            row[f"Δ req/s vs {short_name(baseline)}"] = ("—" if s == baseline else delta_cell(
                ok, base, "req_per_s", confidence, stats))
        rows.append(row)
    df = pd.DataFrame(rows).sort_values("_sort", ascending=False, kind="stable").drop(columns="_sort")
    first = sub.iloc[0]
    n_failed = int((sub[sub["server"].isin(servers)]["status"] != "ok").sum())
    cap = (f"wrk, {int(first['connections'])} connections, {float(first['duration_s']):g} s per run, n = ok runs. "
           f"Requests (per run), Req/s, P50, P99, CPU: mean ± half-width of the {_ci_words(confidence)}; "
           "P50/P99 per run from its full latency histogram; Max: the largest latency of any run; CPU: "
           f"% of one core, utime + stime of the server's whole process tree; {MEMORY_WORDS}"
           + (f"; {_delta_words(confidence)}" if baseline else "") + f"; {client_bound_words()}"
           + (f". {n_failed} failed run(s) excluded." if n_failed else "."))
    out = _with_meta(df.reset_index(drop=True), title, cap)
    out.attrs["key_columns"] = ["Language", "Server"]   # repeated in each part when the table is split
    return out


# ---------------------------------------------------------------- tail latency
def tail_verdict(ci: MeanCI, threshold: float = TAIL_THRESHOLD) -> str:
    """Seed 003's rule on the CI of P99/P50: 'trouble' (whole CI > threshold), 'fine' (whole CI
    < threshold), 'unclear' (CI holds it); without a CI the mean decides, marked '(no CI)'."""
    if ci.mean is None:
        return "no data"
    if ci.has_interval:
        if ci.low > threshold:  # type: ignore[operator]
            return "trouble"
        if ci.high < threshold:  # type: ignore[operator]
            return "fine"
        return "unclear"
    return ("trouble" if ci.mean > threshold else "fine") + f" (no CI, n={ci.n})"


def tail_points(runs: pd.DataFrame, server: str, scenarios: Sequence[str], confidence: float,
                threshold: float = TAIL_THRESHOLD) -> list[tuple[str, np.ndarray, MeanCI, str]]:
    """Per scenario of one server: its runs' P99/P50, their estimate and the seed's verdict."""
    out = []
    for sc in scenarios:
        ok = ok_runs(runs[(runs["server"] == server) & (runs["scenario"] == sc)])
        per_run = tail_ratio(column(ok, "lat_p99_us"), column(ok, "lat_p50_us"))
        ci = mean_ci(per_run, confidence)
        out.append((sc, per_run, ci, tail_verdict(ci, threshold)))
    return out


def tail_table(runs: pd.DataFrame, scenarios: Sequence[str] = KEEPALIVE + (CLOSE,),
               confidence: float = 0.95, threshold: float = TAIL_THRESHOLD) -> pd.DataFrame:
    """Per server: P99/P50 per endpoint (per run, then mean [CI]) with the seed's verdict, and
    the endpoints where it signals trouble."""
    title = f"Tail latency: P99/P50 per run (seed 003: \"> {threshold:g}× indicates architectural issues\")"
    servers = _servers(runs)
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no data in this run")
    present = [sc for sc in scenarios if sc in set(runs["scenario"])]
    rows = []
    for s in servers:
        row: dict[str, Any] = {"Language": language(s) or "—", "Server": name(s), "Tier": _tier_label(s)}
        trouble, unclear = [], []
        for sc, per_run, ci, v in tail_points(runs, s, present, confidence, threshold):
            over = int(np.sum(per_run > threshold))
            if ci.mean is None:
                cell = "no data"
            elif ci.has_interval:
                cell = f"{ci.mean:.1f}× [{ci.low:.1f}, {ci.high:.1f}]"
            else:
                cell = f"{ci.mean:.1f}× (n={ci.n}, {ci.reason})"
            if over:
                cell += f" ({over}/{len(per_run)} runs > {threshold:g}×)"
            row[ENDPOINT_SHORT.get(sc, sc)] = cell
            if v.startswith("trouble"):
                trouble.append(ENDPOINT_SHORT.get(sc, sc) + ("" if v == "trouble" else " (no CI)"))
            elif v == "unclear":
                unclear.append(ENDPOINT_SHORT.get(sc, sc))
        verdict = ("trouble: " + ", ".join(trouble)) if trouble else "fine"
        if unclear:
            verdict += "; unclear: " + ", ".join(unclear)
        row["Verdict"] = verdict
        rows.append(row)
    cap = (f"P99 and P50 per run from its full latency histogram; P99/P50 per run, then geometric mean "
           f"[{confidence:.0%} t interval on the log scale] over the ok runs (none below {MIN_RUNS}), and how many runs exceed {threshold:g}× when any do. "
           f"Verdict per endpoint on the CI: trouble = the whole CI above {threshold:g}×, fine = below, "
           "unclear = the CI holds it. The Connection: close column is shown for completeness: there "
           "each request also pays a TCP handshake.")
    return _with_meta(pd.DataFrame(rows), title, cap)


# ---------------------------------------------------------------- POST and JSON vs root
def relative_table(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> pd.DataFrame:
    """Seed 003's insights 4 and 5 per server: POST throughput against root and the JSON endpoint's
    against root, each a Δ = ratio − 1 paired by rep with its interval, printed as every Δ of the
    lab is (stats.format_delta: 'POST 65 % of root' is −35 % [−42 %, −27 %] slower, never a share
    worded as a Δ)."""
    title = "POST and JSON against root"
    servers = _servers(runs)
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no data in this run")
    rows = []
    for s in servers:
        def v(sc: str) -> pd.DataFrame:
            return ok_runs(runs[(runs["server"] == s) & (runs["scenario"] == sc)])

        def kilo(x: pd.DataFrame) -> str:
            return req_cell(x, confidence, fmt=fmt_kilo)
        root, post, js = v(ROOT), v(POST), v(JSON)
        rows.append({
            "Language": language(s) or "—", "Server": name(s), "Tier": _tier_label(s),
            "Root req/s": kilo(root),
            "POST req/s": kilo(post),
            "Δ POST vs root": format_delta(ratio_ci_of(comparison(stats, "req_per_s", post, root, confidence))),
            "JSON req/s": kilo(js),
            "Δ JSON vs root": format_delta(ratio_ci_of(comparison(stats, "req_per_s", js, root, confidence))),
        })
    cap = (f"req/s: geometric mean over ok runs with its {confidence:.0%} t interval (n = ok runs). Δ = "
           "the endpoint's req/s ÷ root req/s − 1 (the seed's 'POST at 65 % of root' is −35 %; its 'JSON "
           "drop of 15 %' is −15 %), paired by rep (the endpoints of a rep hit the same server process), "
           f"brackets: the {confidence:.0%} t interval on the log scale of the ratio. Each with its "
           "verdict: the comparison's word (slower, faster) for a clear difference, 'no clear difference' "
           "when the interval holds 0 %.")
    return _with_meta(pd.DataFrame(rows), title, cap)


# ---------------------------------------------------------------- memory vs runtime
def _peak_rss_kb(runs: pd.DataFrame, s: str) -> float:
    """The largest window peak RSS of a server's ok runs (NaN when none was recorded)."""
    all_ok = ok_runs(runs[runs["server"] == s])
    return float(all_ok["rss_peak_kb"].max()) if not all_ok.empty else math.nan


def _memory_row(runs: pd.DataFrame, s: str, confidence: float) -> dict[str, Any]:
    all_ok = ok_runs(runs[runs["server"] == s])
    root = ok_runs(runs[(runs["server"] == s) & (runs["scenario"] == ROOT)])
    peak = _peak_rss_kb(runs, s)
    return {
        "Language": language(s) or "—", "Server": name(s), "Tier": _tier_label(s),
        "Runtime": RUNTIME.get(language(s) or "", "—"),
        # a maximum and a median over the runs, not estimates: each says how many runs it is of
        "Peak RSS (largest scenario)": ("not recorded" if pd.isna(peak) else
                                        f"{peak / 1024:.1f} MiB (max of {int(all_ok['rss_peak_kb'].notna().sum())} runs)"),
        "RSS after start-up": ("not recorded" if all_ok.empty or all_ok["rss_start_kb"].isna().all()
                               else f"{all_ok['rss_start_kb'].median() / 1024:.1f} MiB "
                                    f"(median of {int(all_ok['rss_start_kb'].notna().sum())} runs)"),
        "Peak RSS per run, GET /": fmt_mean_ci(mean_ci(column(root, "rss_peak_kb") / 1024, confidence),
                                               lambda v: f"{v:.1f} MiB"),
        "CPU %, GET /": fmt_mean_ci(mean_ci(column(root, "cpu_pct"), confidence),
                                    lambda v: fmt_float(v, 1), show_n=False),
        "CPU-µs/req, GET /": fmt_mean_ci(mean_ci(column(root, "cpu_us_per_req"), confidence),
                                         lambda v: fmt_float(v, 2), show_n=False),
        "_sort": peak if not pd.isna(peak) else math.inf,
    }


def memory_table(runs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Seed 003's insight 2, measured: per server its runtime, peak RSS of the whole process tree
    (largest over all runs, and the per-run mean at GET /), CPU % and CPU-µs/request at GET /."""
    title = "Memory vs runtime (and CPU at GET /)"
    servers = _servers(runs)
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no data in this run")
    df = pd.DataFrame([_memory_row(runs, s, confidence) for s in servers]).sort_values("_sort", kind="stable").drop(columns="_sort").reset_index(drop=True)
    cap = ("Peak RSS = the sum of VmHWM over the server's whole process tree (workers, cluster children, "
           "thread pools all count), reset just before each measured window and read at its end, so each "
           "run's peak is its own scenario's; the largest scenario's peak is shown, smallest first (runs "
           "made before the reset recorded only the peak since start-up: 'not recorded'). RSS after "
           "start-up: the tree's RSS when its port opened (median over reps). Per-run mean "
           f"± half-width of the {_ci_words(confidence)}. CPU % of one core over the measured window; "
           "CPU-µs/req = server CPU time / completed requests.")
    return _with_meta(df, title, cap)


# ---------------------------------------------------------------- Connection: close
def close_table(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> pd.DataFrame:
    """GET / with `Connection: close` on every request against keep-alive GET /, per server:
    req/s, Δ, CPU-µs/req, Δ (the cost of setting up and tearing down a connection)."""
    title = "Connection: close vs keep-alive (GET /)"
    servers = [s for s in _servers(runs) if not runs[(runs["server"] == s) & (runs["scenario"] == CLOSE)].empty]
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no Connection: close scenario in this run")
    rows = []
    for s in servers:
        ka = ok_runs(runs[(runs["server"] == s) & (runs["scenario"] == ROOT)])
        cl = ok_runs(runs[(runs["server"] == s) & (runs["scenario"] == CLOSE)])
        rows.append({
            "Language": language(s) or "—", "Server": name(s), "Tier": _tier_label(s),
            "Keep-alive req/s": req_cell(ka, confidence),
            "Close req/s": req_cell(cl, confidence),
            "Δ req/s close vs keep-alive": format_delta(ratio_ci_of(comparison(stats, "req_per_s", cl, ka, confidence))),
            "Keep-alive CPU-µs/req": fmt_mean_ci(mean_ci(column(ka, "cpu_us_per_req"), confidence),
                                                 lambda v: fmt_float(v, 2), show_n=False),
            "Close CPU-µs/req": fmt_mean_ci(mean_ci(column(cl, "cpu_us_per_req"), confidence),
                                            lambda v: fmt_float(v, 2), show_n=False),
            "Δ CPU-µs/req": format_delta(ratio_ci_of(comparison(stats, "cpu_us_per_req", cl, ka, confidence))),
        })
    cap = (f"Mean ± half-width of the {_ci_words(confidence)}; {_delta_words(confidence)}. "
           "With Connection: close every request pays a TCP handshake and teardown on loopback (on the "
           "client's core too, so the load generator may limit both servers alike: then CPU-µs/req is "
           "the column that tells them apart).")
    return _with_meta(pd.DataFrame(rows), title, cap)


# ---------------------------------------------------------------- tiers and the seed's guesses
def tier_table(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> pd.DataFrame:
    """Per language: the stdlib server and the production server with their scores, Δ production vs
    stdlib (paired by rep), the seed's stdlib measurement and its guess for the production stack.
    A contestant-tier server stands in the stdlib column (TIER_VIEWS), its tier named beside it."""
    title = "Stdlib vs production tier per language"
    servers = _servers(runs)
    if not servers:
        return _with_meta(pd.DataFrame(), title, "no data in this run")
    stats = stats or run_stats(runs, confidence)

    def score(s: str | None) -> str:
        if not s:
            return "—"
        est = stats.estimate(_score_cell(runs, s), "req_per_s")
        return bound_figure(fmt_mean_ci(mean_ci_of(est)), estimate_bound(est))
    guess = {g.language: g for g in SEED_IMPROVEMENTS if g.tier == "production" and g.answered_in is None}
    rows = []
    for lang in languages_of(servers):
        std = [s for s in servers if language(s) == lang and in_tier(s, "stdlib")]
        prod = [s for s in servers if language(s) == lang and in_tier(s, "production")]
        if not std and not prod:
            continue
        a = std[0] if std else None
        b = prod[0] if prod else None
        g = guess.get(lang)
        rows.append({
            "Language": lang,
            "Stdlib server": (name(a) + ("" if tier(a) == "stdlib" else f" ({tier(a)})")) if a else "—",
            "Stdlib avg req/s": score(a),
            "Seed's stdlib avg (its machine)": fmt_kilo(SEED_STDLIB_AVG[lang]) if lang in SEED_STDLIB_AVG else "—",
            "Production server": name(b) if b else "—",
            "Production avg req/s": score(b),
            "Δ production vs stdlib": _score_delta(runs, stats, b, a) if a and b else "—",
            "Seed's guess": f"{g.text} ({g.seed_change})" if g else "—",
        })
    cap = ("Scores as in the ranking (mean req/s over the four keep-alive endpoints, per rep, "
           f"{confidence:.0%} t interval on the log scale; n = reps); {_delta_words(confidence)}. The seed's "
           "stdlib averages are its own single 5-s runs on 12 unpinned cores, shown for orientation only. "
           "A contestant (the lab's own server: libc and epoll, no framework) stands in the stdlib column, "
           "its tier in brackets.")
    return _with_meta(pd.DataFrame(rows), title, cap)


def endpoint_bars(runs: pd.DataFrame, tier_name: str | None, metric: str = "req_per_s",
                  confidence: float = 0.95, scenarios: Sequence[str] = KEEPALIVE + (CLOSE,)):
    """Grouped bars: x = endpoint, one bar per server of the tier (mean over ok runs), whiskers =
    log-scale t interval (n ≥ 5), dots = runs; the common look of report.plots (width, fonts,
    manifest colours, log y over a > 10× span, client-bound hatched, noisy runs ×). None when
    there is no data."""
    from httplab.report import plots as P

    ok = ok_runs(runs)
    if ok.empty:
        return None
    servers = _servers(ok, tier_name)
    present = [sc for sc in scenarios if sc in set(ok["scenario"])]
    ok = ok[ok["server"].isin(servers) & ok["scenario"].isin(present)]
    if ok.empty or ok[metric].dropna().empty:
        return None
    with P.matplotlib.rc_context(P.STYLE):
        fig, axes = P.new_figure(4.8)
        ax = axes[0, 0]
        values, any_cb, any_noisy = P.grouped_bars(ax, ok, "scenario", present, servers, metric, confidence,
                                                   label=name, small=True)
        log = P.set_value_axis(ax, values)
        ticks = [ENDPOINT_SHORT.get(sc, sc) for sc in present]
        ax.set_xticks(range(len(present)), [t.replace(", ", ",\n") for t in ticks])
        ylabel = {"req_per_s": "requests/s", "cpu_us_per_req": "server CPU-µs per request",
                  "capacity_rps": "requests per server CPU-second"}.get(metric, metric)
        ax.set_ylabel(ylabel)
        title = ({"req_per_s": "Throughput", "capacity_rps": "Capacity (requests per server CPU-second)"}
                 .get(metric, "Server CPU per request") + " by endpoint"
                 + (f" — {tier_name} tier" if tier_name else ""))
        P.title_and_caption(fig, ax, title, P.bars_caption(confidence, log))
        P.bar_legend(ax, any_cb, any_noisy)
    return P.describe(fig, P.bars_alt(f"Bar chart ({title})", ylabel, "endpoint", ticks, servers, confidence,
                                      log, any_cb, any_noisy))


def latency_curves(latency: pd.DataFrame, runs: pd.DataFrame, tier_name: str | None):
    """plots.latency_curves restricted to one tier's servers (one panel per endpoint)."""
    from httplab.report.plots import latency_curves as generic
    servers = _servers(runs, tier_name)
    if not servers:
        return None
    return generic(latency, runs, where={"server": lambda col: col.isin(servers)})


# ---------------------------------------------------------------- summary
def summary_text(runs: pd.DataFrame, run_id: str = "", confidence: float = 0.95,
                 stats: RunStats | None = None) -> str:
    """A computed summary block: the ranking with ties, the tier gains, tail-latency trouble, the
    guesses met or missed, and the memory extremes."""
    title = "Language shoot-out" + (f" — run {run_id}" if run_id else "")
    lines = [title, "=" * len(title),
             f"avg req/s = mean over the 4 keep-alive endpoints per rep; {confidence:.0%} CIs; ties where the Δ CI holds 0"]
    stats = stats or run_stats(runs, confidence)
    servers = _servers(runs)
    keepalive = runs[runs["scenario"].isin(KEEPALIVE)] if not runs.empty else runs
    bound = frozenset(s for s in servers if mostly_client_bound(keepalive[keepalive["server"] == s]))
    ranked = ranking_from_stats(runs, servers, stats, confidence, must_tie=bound)
    if not ranked:
        return "\n".join(lines + ["no data"])
    lines.append("Ranking (both tiers):")
    for r in ranked:
        ci = r.score
        interval = f" [{fmt_kilo(ci.low)}, {fmt_kilo(ci.high)}]" if ci.has_interval else f" (n={ci.n}, {ci.reason})"
        lines.append(f"  {r.label:<12} {name(r.server):<46} {fmt_kilo(ci.mean)}{interval}")
    gains = []
    for lang in languages_of(servers):
        std = [s for s in servers if language(s) == lang and in_tier(s, "stdlib")]
        prod = [s for s in servers if language(s) == lang and in_tier(s, "production")]
        if std and prod:
            gains.append(f"{lang} {_score_delta(runs, stats, prod[0], std[0])}")
    lines.append("Production vs stdlib tier: " + ("; ".join(gains) if gains else "no language has both tiers"))
    present = [sc for sc in KEEPALIVE + (CLOSE,) if sc in set(runs["scenario"])]
    bad = []
    for s in servers:
        trouble = [ENDPOINT_SHORT.get(sc, sc) + ("" if v == "trouble" else " (no CI)")
                   for sc, _, _, v in tail_points(runs, s, present, confidence) if v.startswith("trouble")]
        if trouble:
            bad.append(f"{name(s)} ({', '.join(trouble)})")
    lines.append(f"P99/P50 > {TAIL_THRESHOLD:g}× (whole CI): " + ("; ".join(bad) if bad else "none"))
    met = []
    for g in SEED_IMPROVEMENTS:
        answering = g.servers(servers)
        if not answering:
            met.append(f"{g.language} {g.seed_change!r} vs {g.text.split()[0]}: no {g.answer_language} "
                       f"server of tier {g.tier}")
        for s in answering:
            ci = mean_ci_of(stats.estimate(_score_cell(runs, s), "req_per_s"))
            met.append(f"{short_name(s)} vs {g.text.split()[0]}: {compare_to_guess(ci, g.low, g.high)}")
    lines.append("Seed's guesses (on 1 server core): " + "; ".join(met))
    peaks = {s: p for s in servers if not math.isnan(p := _peak_rss_kb(runs, s))}
    if peaks:
        lo, hi = min(peaks, key=peaks.get), max(peaks, key=peaks.get)  # type: ignore[arg-type]
        lines.append(f"Memory: smallest {name(lo)} {peaks[lo] / 1024:.1f} MiB, "
                     f"largest {name(hi)} {peaks[hi] / 1024:.1f} MiB")
    n_failed = int((runs["status"] != "ok").sum())
    lines.append(f"Failed runs: {n_failed} (excluded; see the failed-runs table)")
    return "\n".join(lines)


# ---------------------------------------------------------------- the tables' layout
# The languages suite's endpoints (seed 003), by scenario id: (key, title). Its tables are built
# by report.languages (one table per endpoint, every server a row), not by comparison_table.
LANGUAGE_ENDPOINTS: dict[str, tuple[str, str]] = {
    "get_root_c100": ("root", "Root endpoint (GET /)"),
    "post_json_c100": ("post", "POST endpoint (POST /something, JSON body)"),
    "get_json_c100": ("json", "JSON endpoint (GET /something?json=true)"),
    "get_query_c100": ("query", "Query endpoint (GET /something?foo=bar)"),
    "get_root_close_c100": ("close", "Connection: close (GET /, a new connection per request)"),
}


def table_layout(runs: pd.DataFrame) -> list[Section]:
    """One section per endpoint of seed 003 (by scenario id), in the seed's order."""
    return [Section(key, title, {"scenario": scen}, "scenario", "Endpoint")
            for scen, (key, title) in LANGUAGE_ENDPOINTS.items()]
