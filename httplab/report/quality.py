"""How far a run's numbers can be trusted: its A/A noise floor, and which points were client-bound
or noisy (httplab.tidy.bounds). Pure functions over the runs frame; report.py and the tables format them.

The A/A noise floor: in the full profile each suite runs a second, independent instance of one
server (the A/A copy "<server>~aa", lab.servers.AA_SUFFIX) in its own slot of every rep's order, on the suite's headline
scenarios. Both instances are the same binary with the same flags, so any Δ between them is what
the method (drift, order, the machine) produces on its own. The floor is the largest distance from
0 of the A/A Δ's confidence bounds over the headline scenarios: a Δ between two different servers
whose interval lies within ±floor is no finding in this run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import pandas as pd

from ..tidy import bounds
from ..stats.select import ok_runs
from .fmt import fmt_pct
from ..lab.servers import display_name
from ..stats import RatioCI, format_delta
from ..stats.frames import RunStats
from .cells import delta

FLOOR_METRICS: dict[str, str] = {"req_per_s": "req/s", "cpu_us_per_req": "CPU-µs/req"}


@dataclass(frozen=True)
class NoiseFloor:
    """The A/A comparison of one run (or suite): per scenario and metric the Δ copy vs original."""
    original: str | None                 # the server that was copied; None: no A/A copy
    deltas: dict[tuple[str, str], RatioCI]   # (scenario, metric) -> Δ
    floor: dict[str, float | None]       # metric -> largest |bound| over scenarios (fraction)
    # why there is no A/A copy (no_aa_reason of the run's meta.json; ReportContext.noise sets it)
    absent_why: str = "no A/A copy ran"

    @property
    def present(self) -> bool:
        return self.original is not None and bool(self.deltas)

    def pct(self, metric: str = "req_per_s") -> float | None:
        v = self.floor.get(metric)
        return None if v is None else 100.0 * v


def aa_copies(runs: pd.DataFrame) -> dict[str, str]:
    """A/A copy -> the server it copies, for the copies present in the frame."""
    if runs.empty or "aa_of" not in runs:
        return {}
    sub = runs[runs["aa_of"].notna()]
    return dict(zip(sub["server"], sub["aa_of"]))


def noise_floor(runs: pd.DataFrame, confidence: float = 0.95, stats: RunStats | None = None) -> NoiseFloor:
    """The A/A Δ (copy vs original) per headline scenario for req/s and CPU-µs per request (the
    comparisons rows of the copy against its original); the floor as in stats.frames.noise_floors."""
    copies = aa_copies(runs)
    if not copies:
        return NoiseFloor(None, {}, {m: None for m in FLOOR_METRICS})
    copy, original = sorted(copies.items())[0]
    ok = ok_runs(runs)
    deltas: dict[tuple[str, str], RatioCI] = {}
    for scenario in sorted(set(ok.loc[ok["server"] == copy, "scenario"])):
        at = ok[ok["scenario"] == scenario]
        for metric in FLOOR_METRICS:
            deltas[(scenario, metric)] = delta(stats, metric, at[at["server"] == copy],
                                               at[at["server"] == original], confidence)
    floor: dict[str, float | None] = {}
    for metric in FLOOR_METRICS:
        widths = [max(abs(r.low), abs(r.high)) for (s, m), r in deltas.items()
                  if m == metric and r.has_interval]
        floor[metric] = max(widths) if widths else None
    return NoiseFloor(original, deltas, floor)


def noise_floor_table(nf: NoiseFloor, title: str = "A/A noise floor") -> pd.DataFrame:
    """`Scenario | Δ req/s (copy vs original) | Δ CPU-µs/req`, one row per headline scenario."""
    df = pd.DataFrame([
        {"Scenario": scenario,
         **{f"A/A Δ {label}": format_delta(nf.deltas[(scenario, m)]) for m, label in FLOOR_METRICS.items()
            if (scenario, m) in nf.deltas},
         "n (copy / original)": f"{nf.deltas[(scenario, 'req_per_s')].n_a} / {nf.deltas[(scenario, 'req_per_s')].n_b}"}
        for scenario in sorted({s for s, _ in nf.deltas})
    ])
    df.attrs["title"] = title
    df.attrs["caption"] = (
        (f"A/A: a second, independent instance of {display_name(nf.original)} against the first, each "
         "started fresh in its own slot of every rep's order. Δ as in the other tables. "
         + floor_sentence(nf)) if nf.present else floor_sentence(nf))
    return df


def no_aa_reason(meta: Mapping[str, Any] | None) -> str:
    """Why a run has no A/A copy, from its meta.json: the quick profile runs none, a run made with
    --no-aa was asked for none, and runs made before the copy existed record no `aa` at all."""
    params = (meta or {}).get("params") or {}
    if meta is None:
        return "no A/A copy ran"
    if "aa" not in params:
        return "no A/A copy ran (the run was made before the lab had one)"
    if meta.get("profile") == "quick":
        return "no A/A copy ran (the quick profile runs none)"
    return "no A/A copy ran (the run was made with --no-aa)"


def floor_sentence(nf: NoiseFloor, meta: Mapping[str, Any] | None = None) -> str:
    """The sentence printed beside every Δ table (meta: the run's meta.json, which says why a run
    has no A/A copy)."""
    if not nf.present:
        why = no_aa_reason(meta) if meta is not None else nf.absent_why
        return why[0].upper() + why[1:] + ": there is no measured noise floor, so read small Δs with care."
    if all(nf.floor.get(m) is None for m in FLOOR_METRICS):
        return ("The A/A copy ran, but with fewer than 5 ok runs per scenario: no interval, so no "
                "measured noise floor in this run; read small Δs with care.")
    parts = []
    for metric, label in FLOOR_METRICS.items():
        p = nf.pct(metric)
        parts.append(f"±{fmt_pct(p, 1 if p < 10 else 0)} on {label}" if p is not None
                     else f"not measured on {label} (CI needs ≥ 5 runs)")
    return ("**Noise floor of this run** (A/A, two instances of the same server): differences within "
            + " and ".join(parts) + " are not findings in this run.")


def below_floor(r: RatioCI, nf: NoiseFloor, metric: str) -> bool:
    """True when a Δ's whole interval lies within ±floor of the metric: no finding."""
    f = nf.floor.get(metric)
    return bool(nf.present and f is not None and r.has_interval and -f <= r.low and r.high <= f)  # type: ignore[operator]


# ---------------------------------------------------------------- client-bound and noisy points
def share(flags: pd.Series) -> float:
    """Fraction of True among the known values of a boolean column (NaN when none is known)."""
    known = flags.dropna()
    return float(known.astype(bool).mean()) if len(known) else math.nan


def client_bound_points(runs: pd.DataFrame) -> pd.Series | None:
    """The share of client-bound ok runs of each point (suite, scenario, server; A/A copies left
    out), or None where the run recorded no load-tool cores (made before the lab read them): the
    one source of the reports' and the audit's client-bound sentences. A point with a share above
    one half is client-bound."""
    if runs.empty or "client_bound" not in runs:
        return None
    ok = runs[runs["status"] == "ok"] if "status" in runs else runs
    if not ok["client_bound"].notna().any():
        return None
    if "aa_of" in ok:
        ok = ok[ok["aa_of"].isna()]
    return ok.groupby(["suite", "scenario", "server"])["client_bound"].mean()


def mostly_client_bound(runs: pd.DataFrame) -> bool:
    """A server's point counts as client-bound when most of its ok runs were (ties: yes)."""
    if runs.empty or "client_bound" not in runs:
        return False
    s = share(ok_runs(runs)["client_bound"])
    return bool(not math.isnan(s) and s >= 0.5)


def point_flags_table(runs: pd.DataFrame, title: str = "Client-bound and noisy points") -> pd.DataFrame:
    """`Server | Scenario | n | client-bound | noisy | client cores busy | server cores busy | steal | other CPU`
    for every (server, scenario) with at least one flagged run; empty when none is flagged."""
    if runs.empty or "client_bound" not in runs:
        df = pd.DataFrame()
        df.attrs.update(title=title, caption="this run did not record the cores (an older run)")
        return df
    ok = ok_runs(runs)
    rows = []
    for (server, scenario), g in ok.groupby(["server", "scenario"], sort=True):
        cb = int(g["client_bound"].fillna(False).astype(bool).sum())
        nz = int(g["noisy"].fillna(False).astype(bool).sum())
        if not (cb or nz):
            continue
        rows.append({"Server": display_name(server), "Scenario": scenario, "n": len(g),
                     "client-bound runs": cb, "noisy runs": nz,
                     "client cores busy": fmt_pct(100 * g["client_busy"].mean()),
                     "server cores busy": fmt_pct(100 * g["server_busy"].mean()),
                     "max steal": fmt_pct(g["steal_pct"].max(), 1),
                     "max other CPU": fmt_pct(g["foreign_cpu_pct"].max(), 1)})
    known = ok["client_bound"].notna().sum()
    df = pd.DataFrame(rows)
    df.attrs["title"] = title
    df.attrs["key_columns"] = ["Server", "Scenario"]  # repeated in each part when the table is split
    df.attrs["caption"] = (bounds.describe_thresholds() + f" Of {known} ok runs with the cores recorded, "
                           f"{int(ok['client_bound'].fillna(False).astype(bool).sum())} were client-bound and "
                           f"{int(ok['noisy'].fillna(False).astype(bool).sum())} noisy"
                           + ("; the table lists the points with any." if rows else "."))
    return df


def noisy_sentence(runs: pd.DataFrame) -> str:
    """One line for the report header: how many runs were noisy, or that the cores were not recorded."""
    if runs.empty or "noisy" not in runs or runs["noisy"].isna().all():
        return "not recorded in this run"
    n = int(runs["noisy"].fillna(False).astype(bool).sum())
    known = int(runs["noisy"].notna().sum())
    return f"{n} of {known} runs noisy (steal > {bounds.STEAL_MAX_PCT:g} % or other CPU > {bounds.FOREIGN_MAX_PCT:g} % of a pinned core)"


# ---------------------------------------------------------------- position in the rep
def position_effect_table(runs: pd.DataFrame, metric: str = "req_per_s", confidence: float = 0.95,
                          title: str = "Position effect") -> pd.DataFrame:
    """`Position | n runs | Δ vs the point's mean`: for each slot of the reps' order, how far a run's
    metric sat from the mean of its (server, scenario) point, averaged over all runs in that slot,
    with a Student-t CI. With a randomised, balanced order every server visits every slot, so a slot
    whose interval excludes 0 shows a position effect of the method itself (a first server after a
    pause, a last one on a warm machine), not of any server."""
    from ..stats import signed_mean_ci

    ok = ok_runs(runs)
    if ok.empty or "position" not in ok or ok["position"].isna().all():
        df = pd.DataFrame()
        df.attrs.update(title=title, caption="no positions recorded in this run")
        return df
    ok = ok[ok["position"].notna() & ok[metric].notna()].copy()
    point_mean = ok.groupby(["server", "scenario"])[metric].transform("mean")
    ok["rel"] = 100.0 * (ok[metric] / point_mean - 1.0)
    rows = []
    for pos, g in ok.groupby("position", sort=True):
        ci = signed_mean_ci(g["rel"].to_numpy(dtype=float), confidence)
        text = "—" if ci.mean is None else f"{ci.mean:+.1f}%".replace("-", "−") + (
            f" ± {ci.half_width:.1f}%" if ci.has_interval else f" ({ci.reason})")
        rows.append({"Position": int(pos), "n runs": len(g),
                     f"{FLOOR_METRICS.get(metric, metric)} vs the point's mean": text})
    df = pd.DataFrame(rows)
    df.attrs["title"] = title
    df.attrs["caption"] = (f"Each ok run's {FLOOR_METRICS.get(metric, metric)} relative to the mean of its own "
                           "server and scenario, averaged over the runs that held each slot of the rep's "
                           f"order; mean ± half-width of the {confidence:.0%} Student-t CI over those runs (relative values "
                           "can be negative, so no log scale here). "
                           "An interval that excludes 0 is a position effect of the method.")
    return df
