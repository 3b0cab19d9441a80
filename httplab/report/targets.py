"""A suite's targets, declared as data in its folder (suites/<name>/targets.toml) and decided on a
run: each target is a bound on a ratio contestant / reference of one metric (server CPU-µs per
request or req/s) on one point, decided from the ratio's interval, never from the point estimate:
met when the whole interval lies on the target's side of its bound, missed when the whole interval
lies beyond it, not decided otherwise (the interval holds the bound, or there is no interval:
fewer than 5 runs a side). A req/s target cannot be missed by a point whose req/s measured the load
tool: client-bound points (tidy.bounds, the lab's rule) are said to be so. No suite or server is
named here: the file names them.
"""
from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..lab.servers import contestants, manifests, short_name
from ..stats.frames import RunStats
from ..stats.methods import MIN_RUNS
from .cells import mean_ci_of
from .fmt import fmt_count, fmt_float, fmt_mean_ci
from .plots import log_ticks
from .tables import CLIENT_BOUND_MARK


METRIC_WORDS: dict[str, str] = {"cpu_us_per_req": "CPU-µs/req", "req_per_s": "req/s"}
RATIO_METRICS: tuple[str, ...] = ("cpu_us_per_req", "req_per_s")


@dataclass(frozen=True)
class Target:
    """One target of a suite: contestant / reference of `metric` on one point, at most (or at
    least) `bound`."""
    suite: str
    scenario: str
    metric: str
    reference: str
    bound: float
    at_most: bool
    what: str                # the point, in a few words
    caveat: str = ""         # what a reader must know before taking the verdict
    contestant: str = ""     # the server divided by the reference; "" -> the run's contestant

    def words(self, contestant: str | None = None) -> str:
        """'<contestant's short name> CPU-µs/req ≤ 0.6 × <reference's short name>'s' (contestant:
        the target's own, else the given one, else the_contestant())."""
        sign = "≤" if self.at_most else "≥"
        return (f"{_short(self.contestant or contestant or the_contestant())} {METRIC_WORDS[self.metric]} {sign} "
                f"{self.bound:g} × {short_name(self.reference)}'s")


class TargetsError(ValueError):
    """A target file that cannot be read; the message names the file and the target."""


# key -> (type, required)
_TARGET_KEYS: dict[str, tuple[type, bool]] = {
    "suite": (str, True), "scenario": (str, True), "metric": (str, True), "reference": (str, True),
    "bound": (float, True), "at_most": (bool, True), "what": (str, True), "caveat": (str, False),
    "contestant": (str, False)}


def _target(path: Path, i: int, entry: object, suites: tuple[str, ...]) -> Target:
    where = f"{path}: [[target]] {i}"
    if not isinstance(entry, dict):
        raise TargetsError(f"{where}: not a table")
    unknown = sorted(set(entry) - set(_TARGET_KEYS))
    if unknown:
        raise TargetsError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_TARGET_KEYS)})")
    values: dict[str, object] = {}
    for key, (kind, required) in _TARGET_KEYS.items():
        if key not in entry:
            if required:
                raise TargetsError(f"{where}: '{key}' is missing")
            continue
        v = entry[key]
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kind) or (kind is str and not v):
            raise TargetsError(f"{where}: '{key}' must be a{'' if kind is not str else ' non-empty'} "
                               f"{kind.__name__} (got {v!r})")
        values[key] = v
    if values["metric"] not in METRIC_WORDS:
        raise TargetsError(f"{where}: metric '{values['metric']}' is not one of {', '.join(METRIC_WORDS)}")
    if values["suite"] not in suites:
        raise TargetsError(f"{where}: suite '{values['suite']}' is not one of {', '.join(suites)}")
    bound = values["bound"]
    if not (isinstance(bound, float) and math.isfinite(bound) and bound > 0):
        raise TargetsError(f"{where}: 'bound' must be a ratio > 0 (got {bound!r})")
    return Target(**values)  # type: ignore[arg-type]


def read_toml(path: Path, tables: tuple[str, ...]) -> dict:
    """A targets file's TOML, whose top level may hold only arrays of the named tables."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise TargetsError(f"{path}: cannot be read ({e.strerror or e})") from e
    except tomllib.TOMLDecodeError as e:
        raise TargetsError(f"{path}: not valid TOML ({e})") from e
    extra = sorted(set(data) - set(tables))
    if extra:
        raise TargetsError(f"{path}: unknown top-level key(s) {', '.join(extra)} "
                           f"(only {', '.join(f'[[{t}]]' for t in tables)} tables)")
    for t in tables:
        if not isinstance(data.get(t, []), list):
            raise TargetsError(f"{path}: '{t}' must be an array of tables ([[{t}]])")
    return data


@lru_cache(maxsize=8)
def _load_targets(path: Path, suites: tuple[str, ...], tables: tuple[str, ...]) -> tuple[Target, ...]:
    data = read_toml(path, tables)
    return tuple(_target(path, i, e, suites) for i, e in enumerate(data.get("target", []), 1))


def load_targets(path: str | Path, suites: tuple[str, ...], tables: tuple[str, ...] = ("target",)
                 ) -> tuple[Target, ...]:
    """A suite's targets (its targets.toml), in their file's order, each on one of `suites` (the
    suite's parts); `tables`: the top-level tables the file may hold besides [[target]] (read by
    their own reader). Read once per file."""
    return _load_targets(Path(path).resolve(), tuple(suites), tuple(tables))


def the_contestant(servers: Iterable[str] = ()) -> str | None:
    """The server the ratios are about: the first of `servers` (a run's) of tier contestant in its
    manifest (lab.servers.contestants); without one, the first contestant among all the manifests;
    None when no manifest has that tier."""
    return next(iter(contestants(servers) or contestants(manifests())), None)


def _short(server: str | None) -> str:
    """The short name of a server (lab.servers.short_name); 'the contestant' for none."""
    return short_name(server) if server else "the contestant"


def _stats_contestant(stats: RunStats, contestant: str | None) -> str | None:
    """contestant, or the contestant among the servers of the run's estimates."""
    if contestant:
        return contestant
    present = set(stats.estimates["server"]) if not stats.estimates.empty else set()
    return the_contestant(present)


def _runs_contestant(runs: pd.DataFrame, contestant: str | None) -> str | None:
    """contestant, or the contestant among the run's servers."""
    if contestant:
        return contestant
    return the_contestant(set(runs["server"]) if not runs.empty else set())


MET, MISSED, OPEN, NO_DATA = "met", "missed", "not decided", "no data"


@dataclass(frozen=True)
class Decision:
    status: str   # MET, MISSED, OPEN or NO_DATA
    reason: str

    def text(self) -> str:
        return f"**{self.status}**: {self.reason}" if self.status in (MET, MISSED) else f"{self.status}: {self.reason}"


def fmt_ratio(x: float) -> str:
    """0.7412 -> '0.74×' (three figures below 0.1)."""
    return "—" if not math.isfinite(x) else (f"{x:.3f}×" if x < 0.0995 else f"{x:.2f}×")


def decide(target: Target, ratio: float, lo: float, hi: float, contestant_client_bound: bool = False,
           reference_client_bound: bool = False, contestant: str | None = None) -> Decision:
    """The target against a ratio contestant/reference and its interval [lo, hi] (NaN: none).
    contestant (named in the client-bound reasons): default the_contestant()."""
    contestant = contestant or the_contestant()
    if not math.isfinite(ratio):
        return Decision(NO_DATA, "no ok runs of one of the two servers on this point")
    bound = target.bound
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Decision(OPEN, f"no interval (the point estimate {fmt_ratio(ratio)} decides nothing; an "
                              f"interval needs ≥ {MIN_RUNS} ok runs of each server)")
    span = f"[{fmt_ratio(lo)}, {fmt_ratio(hi)}]"
    if target.at_most:
        status = MET if hi <= bound else (MISSED if lo > bound else OPEN)
    else:
        status = MET if lo >= bound else (MISSED if hi < bound else OPEN)
    if target.metric == "req_per_s":
        # A client-bound side's req/s is the load tool's ceiling, not the server's: the contestant's
        # true ratio is at least the measured one, a client-bound reference's at most.
        if contestant_client_bound and reference_client_bound:
            return Decision(OPEN, f"both servers client-bound {CLIENT_BOUND_MARK}: req/s measured the "
                                  "load tool on both sides, so the client core does not allow the target "
                                  "to be judged (compare CPU-µs/req instead)")
        if contestant_client_bound or reference_client_bound:
            # the measured ratio bounds the true one from below (contestant client-bound) or from
            # above (reference client-bound): only a decision in that direction stands
            lower = contestant_client_bound
            keeps = MET if lower != target.at_most else MISSED
            if status != keeps:
                who = contestant if lower else target.reference
                return Decision(OPEN, f"{_short(who)} was client-bound {CLIENT_BOUND_MARK}: its req/s is "
                                      f"the load tool's ceiling, so the true ratio is {'above' if lower else 'below'} "
                                      f"the measured {span}; the client core does not allow the target to be judged")
    side = "≤" if target.at_most else "≥"
    note = ""
    if target.metric == "req_per_s" and (contestant_client_bound or reference_client_bound):
        who = contestant if contestant_client_bound else target.reference
        note = (f" ({_short(who)} was client-bound {CLIENT_BOUND_MARK}: the true ratio lies further "
                "that way still)")
    if status == MET:
        return Decision(MET, f"the whole interval {span} is {side} {bound:g}×{note}")
    if status == MISSED:
        return Decision(MISSED, f"the whole interval {span} is beyond {bound:g}×{note}")
    return Decision(OPEN, f"the interval {span} holds {bound:g}×")


def target_results(stats: RunStats, contestant: str | None = None, targets: Iterable[Target] = ()
                   ) -> list[tuple[Target, pd.Series | None, Decision]]:
    """Each target with its comparisons row (contestant vs reference; None when the run lacks the
    point) and its decision. contestant: default the run's (the_contestant)."""
    contestant = _stats_contestant(stats, contestant)
    out = []
    for t in targets:
        who = t.contestant or contestant
        row = None if who is None else stats.compare(t.metric, (t.suite, t.scenario, who),
                                                     (t.suite, t.scenario, t.reference))
        if row is None:
            out.append((t, None, Decision(NO_DATA, f"this run has no {t.suite} {t.scenario} of both servers")))
            continue
        out.append((t, row, decide(t, float(row["ratio"]), float(row["lo"]), float(row["hi"]),
                                   bool(row["a_client_bound"]), bool(row["b_client_bound"]), who)))
    return out


def ratio_cell(row: pd.Series | None) -> str:
    """'0.74× [0.71×, 0.77×]' (no interval: the point estimate and why); ⚑ when a side is
    client-bound."""
    if row is None or not math.isfinite(row["ratio"]):
        return "no data"
    body = fmt_ratio(row["ratio"])
    if math.isfinite(row["lo"]) and math.isfinite(row["hi"]):
        body += f" [{fmt_ratio(row['lo'])}, {fmt_ratio(row['hi'])}]"
    else:
        body += f" (no interval: {row['reason'] or f'CI needs ≥ {MIN_RUNS} runs'})"
    if bool(row["a_client_bound"]) or bool(row["b_client_bound"]):
        body += f" {CLIENT_BOUND_MARK}"
    return body


def runs_cell(row: pd.Series | None) -> str:
    """'5 pairs (paired by rep)', or '1 / 1 runs (unpaired)' where the two share fewer than
    MIN_RUNS reps (Welch's t, stats.methods)."""
    if row is None:
        return "—"
    if bool(row["paired"]):
        return f"{int(row['n_pairs'])} pairs (paired by rep)"
    return f"{int(row['n_a'])} / {int(row['n_b'])} runs (unpaired)"


def figure_cell(stats: RunStats, cell: tuple[str, str, str], metric: str) -> str:
    """One server's figure with its unit: '1.35 ± 0.02 µs (n=5)', '715,900 ± 4,120/s (n=5)'; the
    share of its runs that were noisy (other processes or steal on the pinned cores) when any."""
    unit = " µs" if metric == "cpu_us_per_req" else "/s"
    fmt = (lambda v: fmt_float(v, 2) + unit) if metric == "cpu_us_per_req" else (lambda v: fmt_count(v) + unit)
    row = stats.estimate(cell, metric)
    text = fmt_mean_ci(mean_ci_of(row), fmt)
    if row is not None and math.isfinite(row["noisy_share"]) and row["noisy_share"] > 0:
        text += f"; {row['noisy_share']:.0%} of runs noisy"
    return text


def ratio_ticks(lo: float, hi: float) -> list[float]:
    """Ratio ticks inside [lo, hi]: 1× always, the others at least an eighth of the (log) axis apart."""
    return log_ticks(lo, hi, [0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0,
                              10.0, 20.0], 8)
