"""Words and tables of a run-vs-run comparison (report.compare opens it, notebooks/compare.ipynb
shows these): the header with the runs and their differences, the findings, one table per suite,
the method notes and the plain-text summary compare.sh prints. Pure functions of the
run_comparisons frame (stats.compare) and the runs' meta.json."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..stats import MINUS, MIN_RUNS
from ..stats import compare as C
from ..stats.comparable import Difference, blocking, git_line
from ..lab.servers import display_name, sort_servers
from .fmt import fmt_count, fmt_us
from .scenarios import scenario_label, scenario_sort_key

METRIC_WORDS: dict[str, str] = {"req_per_s": "req/s", "cpu_us_per_req": "CPU-µs/req", "lat_p99_us": "P99 latency"}
BETTER_WORDS: dict[str, str] = {"req_per_s": "higher is better", "cpu_us_per_req": "lower is better",
                                "lat_p99_us": "lower is better"}
FINDINGS = (C.REGRESSION, C.IMPROVEMENT, C.POSSIBLE_REGRESSION, C.POSSIBLE_IMPROVEMENT)
INDEX_LINK = "../../index.html"  # reports/compare/<A>__vs__<B>/compare.html → reports/index.html


# ---------------------------------------------------------------- cells
def _pct(x: float, digits: int) -> str:
    return f"{x * 100:+.{digits}f}%".replace("-", MINUS)


def _finite(*xs: Any) -> bool:
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def delta_text(row: Mapping[str, Any]) -> str:
    """B vs A as a Δ: '−20% [−23%, −17%]'; '−20% (n=3/5, CI needs ≥ 5 runs)' without an interval;
    'no data' without a ratio."""
    ratio, lo, hi = row["ratio"], row["lo"], row["hi"]
    if not _finite(ratio):
        reason = str(row.get("reason") or "")
        return f"no data ({reason})" if reason and reason != "no data" else "no data"
    spread = [abs(x - 1.0) for x in (ratio, lo, hi) if _finite(x)]
    d = 1 if max(spread) < 0.02 else 0
    if not _finite(lo, hi):
        return f"{_pct(ratio - 1.0, d)} (n={int(row['n_a'])}/{int(row['n_b'])}, {row['reason']})"
    return f"{_pct(ratio - 1.0, d)} [{_pct(lo - 1.0, d)}, {_pct(hi - 1.0, d)}]"


def value_text(metric: str, x: float) -> str:
    """A run's figure: req/s with thousands separators, latency in µs/ms/s, CPU-µs/req to three
    significant digits (it is often 1-2 µs)."""
    if metric == "cpu_us_per_req":
        return "—" if not _finite(x) else f"{x:.3g} µs"
    return fmt_us(x) if metric == "lat_p99_us" else fmt_count(x)


def verdict_mark(row: Mapping[str, Any]) -> str:
    """The verdict as the tables print it after a Δ: '' for no clear difference and no interval
    (the Δ says it), except an interval that excludes 0 but not after Holm's correction."""
    verdict = row["verdict"]
    if verdict in (C.REGRESSION, C.IMPROVEMENT):
        return f"**{verdict}**"
    if verdict == C.NO_CLEAR and _finite(row["lo"], row["hi"]) and (row["lo"] > 1.0 or row["hi"] < 1.0):
        return "(not after Holm)"
    if verdict in (C.NO_CLEAR, C.NO_INTERVAL, ""):
        return ""
    return str(verdict)


def floor_text(row: Mapping[str, Any]) -> str:
    f = row["noise_floor"]
    star = "†" if row["floor_source"] == C.FLOOR_DEFAULT else ""
    return f"±{f * 100:.1f}%{star}" if _finite(f) else "—"


# ---------------------------------------------------------------- points
def point_labels(runs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(suite, scenario) -> the scenario's label (report.scenarios), from a runs frame."""
    if runs.empty:
        return {}
    first = runs.drop_duplicates(["suite", "scenario"])
    return {(str(r["suite"]), str(r["scenario"])): scenario_label(r, batch_note=False) for _, r in first.iterrows()}


def point_order(runs: pd.DataFrame) -> dict[tuple[str, str], tuple]:
    """(suite, scenario) -> its sort key in the seed order (report.scenarios.scenario_sort_key)."""
    if runs.empty:
        return {}
    first = runs.drop_duplicates(["suite", "scenario"])
    return {(str(r["suite"]), str(r["scenario"])): scenario_sort_key(r) for _, r in first.iterrows()}


def points(frame: pd.DataFrame, suite: str, runs: pd.DataFrame) -> list[tuple[str, str]]:
    """The (scenario, server) points of a suite in display order: scenarios in seed order, then
    servers in display order."""
    sub = frame[frame["suite"] == suite]
    order = point_order(runs)
    rank = {s: i for i, s in enumerate(sort_servers(set(sub["server"])))}
    pts = sub[["scenario", "server"]].drop_duplicates().itertuples(index=False)
    return sorted(((str(sc), str(sv)) for sc, sv in pts),
                  key=lambda p: (order.get((suite, p[0]), ()), p[0], rank[p[1]]))


def _meta_table(df: pd.DataFrame, title: str, caption: str) -> pd.DataFrame:
    df.attrs["title"] = title
    df.attrs["caption"] = caption
    return df


def _n_words(frame: pd.DataFrame, confidence: float) -> str:
    n_a = f"{int(frame['n_a'].min())}–{int(frame['n_a'].max())}" if len(frame) else "0"
    n_b = f"{int(frame['n_b'].min())}–{int(frame['n_b'].max())}" if len(frame) else "0"
    return (f"n = ok runs per point: {n_a} in A, {n_b} in B; Δ = B/A − 1, ratio of geometric means with "
            f"its {confidence:.0%} Welch t interval on the log scale (the runs of two runs are not paired); "
            f"verdicts use Holm-adjusted p-values over all {len(frame)} comparisons")


def findings_table(frame: pd.DataFrame, runs: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Every regression and improvement (then the possible ones), with both runs' values."""
    labels = point_labels(runs)
    sub = C.findings_first(frame[frame["verdict"].isin(FINDINGS)])
    rows = [{"Suite": r["suite"], "Point": f"{labels.get((r['suite'], r['scenario']), r['scenario'])} · "
                                           f"{display_name(r['server'])}",
             "Metric": METRIC_WORDS.get(r["metric"], r["metric"]),
             "A": value_text(r["metric"], r["a_estimate"]), "B": value_text(r["metric"], r["b_estimate"]),
             "Δ B vs A": delta_text(r), "Noise floor": floor_text(r), "Verdict": r["verdict"]}
            for _, r in sub.iterrows()]
    cap = (_n_words(frame, confidence) + "; † an assumed floor (no A/A copy in either run)"
           if rows else "no regression and no improvement beyond the noise floor")
    return _meta_table(pd.DataFrame(rows), "Regressions and improvements", cap)


def suite_table(frame: pd.DataFrame, suite: str, runs: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """One row per point of the suite: n, then per metric Δ B vs A with its interval and verdict."""
    labels = point_labels(runs)
    sub = frame[frame["suite"] == suite]
    cell = {(r["scenario"], r["server"], r["metric"]): r for _, r in sub.iterrows()}
    rows = []
    for scen, server in points(frame, suite, runs):
        any_row = next(cell[k] for k in cell if k[:2] == (scen, server))
        row = {"Scenario": labels.get((suite, scen), scen), "Server": display_name(server),
               "n A/B": f"{int(any_row['n_a'])}/{int(any_row['n_b'])}"}
        for metric in C.COMPARED_METRICS:
            r = cell.get((scen, server, metric))
            text = "—" if r is None else " ".join(t for t in (delta_text(r), verdict_mark(r)) if t)
            row[f"{METRIC_WORDS[metric]} Δ"] = text
        rows.append(row)
    floors = sub.drop_duplicates("metric").set_index("metric")
    fl = "; ".join(f"{METRIC_WORDS.get(m, m)} {floor_text(r)} ({r['floor_source']})" for m, r in floors.iterrows())
    cap = f"{_n_words(sub, confidence)}; noise floor: {fl}" if rows else f"no point of suite {suite} in both runs"
    df = _meta_table(pd.DataFrame(rows), f"Suite {suite}: B against A, point by point", cap)
    df.attrs["key_columns"] = ["Scenario", "Server"]
    return df


def verdict_counts(frame: pd.DataFrame) -> dict[str, int]:
    """verdict -> rows, in VERDICTS order, the verdicts present only."""
    counts = frame["verdict"].value_counts().to_dict() if len(frame) else {}
    return {v: int(counts[v]) for v in C.VERDICTS if v in counts}


def counts_sentence(frame: pd.DataFrame) -> str:
    c = verdict_counts(frame)
    if not c:
        return "No comparisons."
    return (f"{len(frame)} comparisons ({frame[['suite', 'scenario', 'server']].drop_duplicates().shape[0]} "
            f"points × up to {len(C.COMPARED_METRICS)} metrics): "
            + ", ".join(f"{n} {v}" for v, n in c.items()) + ".")


# ---------------------------------------------------------------- header and method
def run_line(label: str, run_id: str, meta: Mapping[str, Any]) -> str:
    date = str(meta.get("start_utc") or "—").replace("T", " ")
    suites = ", ".join(str(s) for s in meta.get("suites") or ()) or "—"
    return f"| {label} | `{run_id}` | {date} | `{git_line(meta)}` | {suites} |"


def header_markdown(run_a: str, run_b: str, meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> str:
    return (f"# Run against run: `{run_b}` (B) against `{run_a}` (A)\n\n[← all reports]({INDEX_LINK})\n\n"
            "| | Run | Start (UTC) | Commit | Suites |\n|---|---|---|---|---|\n"
            f"{run_line('A (before)', run_a, meta_a)}\n{run_line('B (after)', run_b, meta_b)}\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def differences_markdown(diffs: Sequence[Difference], forced: bool, refusal: str = "") -> str:
    """The differences between the runs: a refusal says why; a forced comparison lists every
    blocking difference first and prominently; the others (parameters) follow as notes."""
    block = blocking(list(diffs))
    info = [d for d in diffs if not d.blocking]
    out = []
    if refusal:
        out.append(f"> **Not compared.** {refusal}")
    elif block and forced:
        out.append("> ⚠ **Compared with --force although the runs differ in the machine, the CPU sets or "
                   "the tools.** A Δ below may come from these differences, not from the change under test:")
    elif not block:
        out.append("Same machine, CPU sets and tool versions in both runs (meta.json host, server_cpus, "
                   "client_cpus, tools).")
    if block:
        out.append("| Difference | A | B |\n|---|---|---|\n"
                   + "\n".join(f"| **{_cell(d.what)}** | {_cell(d.a)} | {_cell(d.b)} |" for d in block))
    if info:
        out.append("Other differences (they block nothing):\n\n| Difference | A | B |\n|---|---|---|\n"
                   + "\n".join(f"| {_cell(d.what)} | {_cell(d.a)} | {_cell(d.b)} |" for d in info))
    return "\n\n".join(out) + "\n"


def method_markdown(frame: pd.DataFrame, confidence: float, default_floor: float) -> str:
    """How the Δs and verdicts are made, with the assumed floors named."""
    assumed = sorted(set(frame.loc[frame["floor_source"] == C.FLOOR_DEFAULT, "suite"])) if len(frame) else []
    measured = frame[frame["floor_source"] != C.FLOOR_DEFAULT].drop_duplicates(["suite", "metric"])
    text = (
        "**Method.** A point is (suite, scenario, server) and is compared when both runs have it; only "
        "ok runs enter (failed runs are excluded, as everywhere in the lab); A/A copies are not compared. "
        f"Δ = B/A − 1, the ratio of the geometric means of the two runs' ok runs, with its {confidence:.0%} "
        "interval from Welch's t on the logs (the lab's unpaired method, stats.methods.ratio_welch, whose "
        "coverage is measured by simulation): the reps of two runs are independent, so nothing is paired. "
        f"Below {MIN_RUNS} ok runs on either side the Δ is shown without an interval and gets no verdict. "
        f"The p-values of all {len(frame)} comparisons are adjusted together with Holm's procedure; a "
        f"difference counts only when its adjusted p-value is below {1 - confidence:.2f} (the intervals "
        "shown are the unadjusted ones).\n\n"
        "**Verdicts** (req/s: higher is better; CPU-µs/req and P99 latency: lower is better): "
        "*regression* / *improvement* when the whole interval lies beyond the noise floor in the bad / "
        "good direction; *possible regression* / *possible improvement* when it excludes 0 but reaches "
        "into the floor; *below the noise floor* when it excludes 0 but lies within ±floor; *no clear "
        "difference* when it holds 0 (or the Holm-adjusted p-value is too large); *both client-bound* for "
        "req/s of a point whose load tool saturated in both runs (its req/s measures the tool: read its "
        "CPU-µs/req).\n\n"
        "**Noise floor.** Per suite and metric, the A/A floor of the runs (the largest distance from 0 "
        "of the bounds of the A/A copy's Δ against its original), the larger of the two runs' floors when "
        "both have one. It is measured within one run, so it holds no drift between runs (another day, "
        "another boot): a between-run Δ just outside it is weak evidence.")
    if len(measured):
        text += " Measured floors: " + "; ".join(
            f"{r['suite']} {METRIC_WORDS.get(r['metric'], r['metric'])} ±{r['noise_floor'] * 100:.1f}% "
            f"({r['floor_source']})" for _, r in measured.iterrows()) + "."
    if assumed:
        text += (f"\n\n**Assumption.** Neither run has an A/A copy in suite(s) {', '.join(assumed)}: the "
                 f"noise floor there is an assumed ±{default_floor:.0%} (marked † in the tables), not a "
                 "measured one. Run with the A/A copies (scripts/run_all.sh --aa) to measure it.")
    return text + "\n"


# ---------------------------------------------------------------- plain text (stdout)
def summary_text(frame: pd.DataFrame, run_a: str, run_b: str, forced: bool = False,
                 diffs: Sequence[Difference] = (), default_floor: float = C.DEFAULT_FLOOR) -> str:
    """The plain-text table compare.sh prints: findings first, every comparison one line."""
    lines = [f"B {run_b} against A {run_a}: {counts_sentence(frame)}"]
    block = blocking(list(diffs))
    if forced and block:
        lines.append("WARNING: compared with --force although the runs differ in:")
        lines += [f"  {d.text()}" for d in block]
    if (frame["floor_source"] == C.FLOOR_DEFAULT).any() if len(frame) else False:
        lines.append(f"(† assumed noise floor ±{default_floor:.0%}: no A/A copy in either run)")
    rows = [("verdict", "suite", "scenario", "server", "metric", "A", "B", "Δ B vs A [CI]", "floor")]
    for _, r in C.findings_first(frame).iterrows():
        rows.append((r["verdict"], r["suite"], r["scenario"], r["server"], METRIC_WORDS.get(r["metric"], r["metric"]),
                     value_text(r["metric"], r["a_estimate"]), value_text(r["metric"], r["b_estimate"]),
                     delta_text(r), floor_text(r)))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- through the canary (--canary)
def canary_table(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per part: each canary figure of A and B and B/A, with each run's spread over its moments."""
    from ..stats.canary import FIGURES
    rows = []
    for r in ratios.to_dict("records"):
        row: dict[str, str] = {"Suite part": str(r["suite"]), "Moments A / B": f"{r['moments_a']} / {r['moments_b']}"}
        for col, label in FIGURES:
            a, b, k = r[f"{col}_a"], r[f"{col}_b"], r[f"{col}_ratio"]
            sa, sb = r[f"{col}_spread_a"], r[f"{col}_spread_b"]
            spread = "/".join(f"±{s * 50:.1f}%" if _finite(s) else "—" for s in (sa, sb))
            row[label] = ("—" if not _finite(a, b, k) else
                          f"{fmt_count(a) if a >= 1000 else f'{a:.1f}'} → {fmt_count(b) if b >= 1000 else f'{b:.1f}'}: "
                          f"{_pct(k - 1.0, 1)} (spread A/B {spread})")
        rows.append(row)
    return _meta_table(pd.DataFrame(rows), "The two machines' canary",
                       "Each figure: the geometric mean over the part's canary moments (start, middle, end; one "
                       "run each) in A → in B, and B/A − 1. The spread is half the range of a run's moments: "
                       "the canary's own uncertainty, which no interval below includes.")


def through_canary_table(frame: pd.DataFrame, ratios: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per point and metric the canary scales: the Δ measured (with its verdict), the part's canary
    Δ, the Δ on equal machines, and the share of the difference the canary explains."""
    from ..stats.canary import through_canary
    t = through_canary(frame, ratios)
    if t.empty:
        return _meta_table(pd.DataFrame(), "Through the canary", "no point of a part with a canary in both runs")
    labels = point_labels(runs)
    rows = []
    for r in t.to_dict("records"):
        eq = {"ratio": r["ratio_equal_machines"], "lo": r["lo_equal_machines"], "hi": r["hi_equal_machines"],
              "n_a": r["n_a"], "n_b": r["n_b"], "reason": r.get("reason", "")}
        share = r["canary_explains"]
        rows.append({
            "Point": labels.get((r["suite"], r["scenario"]), r["scenario"]), "Server": display_name(str(r["server"])),
            "Metric": {"req_per_s": "req/s", "cpu_us_per_req": "CPU-µs/req"}[r["metric"]],
            "Δ measured (B vs A)": f"{delta_text(r)} {verdict_mark(r) or ('no clear difference' if r['verdict'] == C.NO_CLEAR else '')}".strip(),
            "Canary Δ (floor)": _pct(r["canary_ratio"] - 1.0, 1),
            "Δ on equal machines": delta_text(eq),
            "Canary explains": "—" if not _finite(share) else f"{share * 100:.0f} %".replace("-", MINUS),
        })
    return _meta_table(pd.DataFrame(rows), "Through the canary: what is left of each Δ on equal machines",
                       "Δ on equal machines: B/A ÷ the part's canary B/A (its floor req/s) for req/s, × it for "
                       "CPU-µs per request (a faster machine needs fewer); its bounds are the measured Δ's bounds "
                       "moved the same way, so they leave out the canary's own spread (above). 'Canary explains': "
                       "log(canary) / log(Δ), the share of the measured difference the machines' speed accounts "
                       "for (— for a Δ within ±1 %). P99 latency is not normalised: it does not scale with one "
                       "number.")
