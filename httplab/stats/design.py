"""Rep designs sized by power: how wide a suite's server-vs-server intervals will be for a number of
reps and a run length, predicted from runs the lab has made, and checked by simulation.

The reports' server-vs-server intervals are paired by rep: for servers A and B on one point, rep r
gives ℓ_r = ln(x_A,r / x_B,r) and the interval is ℓ̄ ± t(0.975, n−1) · s / √n (stats.methods). Its
half-width on the log scale (0.05: about ±5 %) is what a design sets:

* the spread s of ℓ_r has a part that shrinks with the length d of a run (the count of requests in
  it, scheduling jitter averaged over d seconds) and a part that does not (what differs between two
  rep's server starts and the machine's drift between A's run and B's): var(ℓ; d) = a + b / d.
  The same points run at two lengths give a and b per pair (`components`);
* a point costs d + w + o seconds (w the warm-up, o the harness's own time per point, `point_cost`),
  so n reps of `points` points take n · points · (d + w + o) seconds; `plan` gives, for the design
  a run measured, the minutes and the simulated half-widths at other numbers of reps;
* the half-widths a design will print are simulated (`simulate`): n draws per pair from the pair's
  own centred log ratios (resampled, so a heavy tail in the real runs stays in the simulation),
  scaled to the spread at length d, the interval computed as the reports compute it. The same draws
  give the intervals' coverage of the known centre, which must stay within 93-97 %.

`python -m httplab design DATA_DIR [--long DATA_DIR2]` prints a run's spreads, the share of them a
longer run length removes (with DATA_DIR2), and the run's design at other numbers of reps
(docs/method.md "Sizing the reps").
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..tidy.rawrun import point_warmups, suite_params
from ..tidy.read import read_frame
from .methods import t_bounds
from .write import RUN_JSON, read_stats

METRICS = ("req_per_s", "cpu_us_per_req")
PAIR = ["suite", "scenario", "a_server", "b_server"]


def rep_log_ratios(runs: pd.DataFrame, comparisons: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per server pair the reports compare (the comparisons frame's `server` rows of `metric`), the
    log ratio of each rep both servers finished ok: columns PAIR + rep, log_ratio."""
    ok = runs[(runs["status"] == "ok") & runs[metric].notna() & (runs[metric] > 0)]
    cells = ok[["suite", "scenario", "server", "rep", metric]].rename(columns={metric: "x"})
    pairs = comparisons[(comparisons["kind"] == "server") & (comparisons["metric"] == metric)]
    pairs = pairs[["a_suite", "a_scenario", "a_server", "b_server"]].drop_duplicates()
    pairs = pairs.rename(columns={"a_suite": "suite", "a_scenario": "scenario"})
    a = pairs.merge(cells.rename(columns={"server": "a_server", "x": "xa"}), on=["suite", "scenario", "a_server"])
    ab = a.merge(cells.rename(columns={"server": "b_server", "x": "xb"}), on=["suite", "scenario", "b_server", "rep"])
    ab["log_ratio"] = np.log(ab["xa"].astype(float) / ab["xb"].astype(float))
    return ab[PAIR + ["rep", "log_ratio"]].sort_values(PAIR + ["rep"]).reset_index(drop=True)


def pair_spreads(ratios: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per pair: reps n, the log ratios' standard deviation sd and the paired t interval's half-width
    on the log scale (NaN below two reps)."""
    g = ratios.groupby(PAIR, sort=True)["log_ratio"]
    out = g.agg(n="count", sd="std").reset_index()
    out["half_width"] = [_half_width(v.to_numpy(dtype=float), confidence) for _, v in g]
    return out


def _half_width(logs: np.ndarray, confidence: float) -> float:
    """The half-width of the interval the reports print for these log ratios (stats.methods)."""
    if logs.shape[-1] < 2:
        return math.nan
    mean, _, hi = t_bounds(logs, confidence)
    return float(hi - mean)


def summary(spreads: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Median and 90th percentile of the half-widths (the goal is read on these), with the count."""
    by = by or ["suite"]
    g = spreads.dropna(subset=["half_width"]).groupby(by)["half_width"]
    return g.agg(pairs="count", median="median", p90=lambda s: s.quantile(0.9)).reset_index()


def components(short: pd.DataFrame, d_short: float, long: pd.DataFrame, d_long: float) -> pd.DataFrame:
    """Per pair measured at both lengths, var(ℓ; d) = a + b/d solved from the two spreads: a (the
    part no run length removes) and b (the part that shrinks as 1/d), each clipped at 0 (a spread
    that grew with d reads as all a)."""
    if not d_short < d_long:
        raise ValueError(f"the short runs must be shorter than the long ones ({d_short} s, {d_long} s)")
    m = short[PAIR + ["sd"]].merge(long[PAIR + ["sd"]], on=PAIR, suffixes=("_short", "_long")).dropna()
    v1, v2 = m["sd_short"] ** 2, m["sd_long"] ** 2
    b = ((v1 - v2) / (1 / d_short - 1 / d_long)).clip(lower=0)
    a = (v2 - b / d_long).clip(lower=0)
    return m.assign(a=a, b=b)


def point_cost(runs: pd.DataFrame, warmup_s: pd.Series) -> float:
    """Seconds the harness spends per point beyond the measured run and its warm-up, server starts
    and stops included: per suite, the wall time from its first point's start to its last one's over
    the points between, less the run length and the mean warm-up of its points (warmup_s: each
    row's, rawrun.point_warmups); the median over the suites."""
    r = runs.assign(_warm=warmup_s).dropna(subset=["start_utc"])
    costs = []
    for _, g in r.groupby("suite"):
        t = pd.to_datetime(g["start_utc"], utc=True).sort_values()
        if len(t) >= 2:
            per = (t.iloc[-1] - t.iloc[0]).total_seconds() / (len(t) - 1)
            costs.append(per - float(g["duration_s"].median()) - float(g["_warm"].mean()))
    return float(np.median(costs)) if costs else math.nan


@dataclass(frozen=True)
class Design:
    reps: int
    duration_s: float
    warmup_s: float

    def seconds(self, points: int, overhead_s: float) -> float:
        """The time of `points` points per rep, every rep."""
        return self.reps * points * (self.duration_s + self.warmup_s + overhead_s)


def simulate(comp: pd.DataFrame, residuals: pd.DataFrame, design: Design, trials: int = 400,
             seed: int = 20261126, confidence: float = 0.95) -> pd.DataFrame:
    """Per pair of `comp` (a, b): `trials` simulated runs of the design. Each draws `reps` log ratios
    from the pair's own centred, standardised residuals (resampled) times √(a + b/d), and computes
    the paired t interval the reports print. Returns per pair the median realised half-width and the
    share of intervals that cover the true centre (0)."""
    rng = np.random.default_rng(seed)
    n = design.reps
    res = {k: g.to_numpy() for k, g in residuals.groupby(PAIR, sort=False)["z"]}
    rows = []
    for rec in comp.itertuples(index=False):
        key = tuple(getattr(rec, c) for c in PAIR)
        z = res.get(key)
        if z is None or len(z) < 2:
            continue
        sigma = math.sqrt(rec.a + rec.b / design.duration_s)
        draws = rng.choice(z, size=(trials, n), replace=True) * sigma
        mean, _, hi = t_bounds(draws, confidence)
        hw = hi - mean
        rows.append({**dict(zip(PAIR, key)), "half_width": float(np.median(hw)),
                     "coverage": float(np.mean(np.abs(mean) <= hw))})
    return pd.DataFrame(rows)


def standardised_residuals(ratios: pd.DataFrame) -> pd.DataFrame:
    """Each pair's log ratios centred on their mean and divided by their sd, with the small-sample
    correction √(n/(n−1)) so that resampling them gives unit variance: column z."""
    g = ratios.groupby(PAIR)["log_ratio"]
    n = g.transform("count")
    z = (ratios["log_ratio"] - g.transform("mean")) / g.transform("std") * np.sqrt(n / (n - 1))
    return ratios.assign(z=z).dropna(subset=["z"])


def plan(spreads: pd.DataFrame, residuals: pd.DataFrame, duration_s: float, warmup_s: float,
         reps: tuple[int, ...], points: int, overhead_s: float, trials: int = 400) -> pd.DataFrame:
    """The design measured (its run length and warm-up, each pair's spread at them) at other numbers
    of reps: per n, the minutes for `points` points per rep and the simulated median and 90th
    percentile half-width over the pairs, with the intervals' coverage (lowest pair and median).
    (The spread is the measured design's own: it holds what the run length and the time between a
    pair's two runs put into it, which a longer or shorter run would change; `components` says how
    much of it the run length alone would remove.)"""
    comp = spreads.dropna(subset=["sd"]).assign(a=lambda f: f["sd"] ** 2, b=0.0)
    rows = []
    for n in reps:
        des = Design(n, duration_s, warmup_s)
        sim = simulate(comp, residuals, des, trials)
        rows.append({"reps": n, "duration_s": duration_s, "warmup_s": warmup_s,
                     "minutes": des.seconds(points, overhead_s) / 60,
                     "median": float(sim["half_width"].median()),
                     "p90": float(sim["half_width"].quantile(0.9)),
                     "coverage_min": float(sim["coverage"].min()),
                     "coverage_median": float(sim["coverage"].median())})
    return pd.DataFrame(rows)


def run_design(runs: pd.DataFrame, meta: dict, where: str) -> tuple[float, float]:
    """(duration_s, warmup_s) of the parts in `runs`, as each ran (suite_params: the full profile
    runs a suite in its own design); SystemExit naming `where` when they differ, since one plan
    cannot stand for two designs."""
    designs = {(float(p["duration_s"]), float(p["warmup_s"]))
               for p in (suite_params(meta, str(s)) for s in sorted(runs["suite"].unique()))}
    if len(designs) != 1:
        raise SystemExit(f"{where}: its parts ran in {len(designs)} designs (durations and warm-ups "
                         f"{sorted(designs)}); plan one design at a time (--parts)")
    return designs.pop()


def load_built_run(data_dir: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """A built run's runs and comparisons frames and its meta, read by the data layer's own readers
    (only these three files are needed: docs/evidence/rep-design/ keeps no more)."""
    d = Path(data_dir)
    meta = json.loads((d / RUN_JSON).read_text(encoding="utf-8"))["meta"]
    return read_frame(d, "runs"), read_stats(d, "comparisons"), meta


def main(argv: list[str] | None = None) -> int:
    """`python -m httplab design DATA_DIR [--long DATA_DIR] [--reps N ...]`: the server-vs-server
    half-widths of a built run per suite and metric, and the same design at other numbers of reps,
    simulated; with a run of the same points at a longer run length, how much of the spread the run
    length accounts for."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m httplab design", description=main.__doc__)
    ap.add_argument("data_dir", help="data/<run_id>/ of a built run")
    ap.add_argument("--long", help="data/<run_id>/ of the same points at a longer run length")
    ap.add_argument("--reps", type=int, nargs="+", default=[5, 10, 15, 20, 25, 30],
                    help="the numbers of reps to simulate")
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--parts", help="only these parts (a comma list), e.g. those of one design")
    args = ap.parse_args(argv)
    runs, cmp_, meta = load_built_run(args.data_dir)
    long = load_built_run(args.long) if args.long else None
    if args.parts:
        keep = set(args.parts.split(","))
        missing = keep - set(runs["suite"])
        if missing:
            raise SystemExit(f"{args.data_dir}: no part {', '.join(sorted(missing))} (it has {', '.join(sorted(set(runs['suite'])))})")
        # (the comparisons pair only the runs kept: rep_log_ratios)
        runs = runs[runs["suite"].isin(keep)]
        if long is not None:
            long = (long[0][long[0]["suite"].isin(keep)], long[1], long[2])
    pd.set_option("display.width", 160)
    ratios = {m: rep_log_ratios(runs, cmp_, m) for m in METRICS}
    short = {m: pair_spreads(ratios[m]) for m in METRICS}
    d_s, w = run_design(runs, meta, args.data_dir)
    for m, sp in short.items():
        print(f"{args.data_dir}: {m}, reps {int(sp['n'].max()) if len(sp) else 0}, {d_s:g} s runs")
        print(summary(sp).round(3).to_string(index=False))
    points = int(runs.groupby("rep").size().max())
    warmups = point_warmups(runs, meta)
    overhead = point_cost(runs, warmups)
    # (the suites whose points were warmed longer than the run's params on the mean)
    means = warmups.groupby(runs["suite"]).mean()
    own = ", ".join(f"{s} {v:.2g} s on the mean" for s, v in sorted(means.items()) if v != w)
    print(f"\nper point: {overhead:.2f} s of harness beside the {d_s:g} s run and its {w:g} s warm-up"
          f"{f' ({own})' if own else ''}; {points} points per rep")
    for m in METRICS:
        res = standardised_residuals(ratios[m])
        if long is not None:
            runs_l, cmp_l, meta_l = long
            comp = components(short[m], d_s, pair_spreads(rep_log_ratios(runs_l, cmp_l, m)),
                              run_design(runs_l, meta_l, args.long)[0])
            share = np.median(comp["b"] / d_s / (comp["a"] + comp["b"] / d_s))
            print(f"\n{m}: against the longer runs ({len(comp)} pairs), the run length accounts for "
                  f"{share:.0%} of the spread at {d_s:g} s (median over pairs)")
        print(f"\n{m}: this design at more reps (simulated, {args.trials} runs per pair)")
        print(plan(short[m], res, d_s, w, tuple(args.reps), points, overhead, args.trials).round(3).to_string(index=False))
    return 0
