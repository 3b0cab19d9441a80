"""The claim ledger: every claim of the four write-ups the lab reproduces, set against one run's
comparisons frame, with a verdict and its reason. The claims are data, declared in each suite's
suite.toml [seed] (docs/suites.md); this module reads them (claims_of), reads each one's points off
the comparisons frame (read_point) and decides (verdict). The build step writes the result as
data/<run_id>/claims.parquet (stats.write); the reports' findings and the summary page read it.

Kinds of claim (each on one metric of stats.metrics: req/s unless the declaration names another,
such as P99 latency, P99/P50 or peak RSS):
- versus: two servers on each row of the write-up's table that the claim summarises
  ([[seed.claims]]): by default the write-up's event loop (our stand-in) against its other server;
  a claim or a row may name its own pair (seed 003's per-endpoint orders, tails, memory, guesses).
- curve: one server against itself on two points ([[seed.curves]]): another scenario of the same
  part (Go at 500 connections against 50), or another part (HTTP/2 over HTTP/1.1, what TLS costs).
- trend: how one server's lead over another moves between two points ([[seed.trends]]: "the
  advantage grows with connections"): the lead at A over the lead at B, per rep.
- peak: the write-up's highest req/s or Transfer/s, an absolute figure of its machine (never comparable).
- rank: seed 003's ranking, as each pair of adjacent languages ([seed] stdlib_avg, in its order):
  the higher-ranked language's stdlib server against the next one's, on the keep-alive score.

Each point is read first (READINGS): higher, lower or same (its interval holds 1, or lies inside the
run's A/A noise floor), or why it cannot be read (not run, fewer than 5 runs, client-bound: the
load tool set the figure; too wide to tell: the interval holds both 1 and the write-up's own ratio,
where the write-up claims a difference). The seed's own ratio sets what the point should read (expected: higher or
lower past ±5 %, else same, or the claim's `expect`). Then the point is judged on its size as well
as its sign (judge_point, OUTCOMES; docs/method.md, "Verdicts that check the size"):
- a claimed difference is *confirmed* when the write-up's ratio lies inside our 95 % interval, or our
  ratio over the write-up's is equivalent to 1 within EQUIVALENCE_MARGIN; *same direction, different
  size* when the sign agrees and the write-up's figure lies outside; *refuted* when the sign is
  opposite, or our interval holds no change and excludes the write-up's figure;
- a claim of no difference ("nearly flat", "about the same") is an equivalence test, two one-sided
  tests at EQUIVALENCE_MARGIN: *confirmed* when the whole 95 % interval lies within the margin,
  *refuted* when it lies wholly outside it (a clear difference stands where the write-up saw none),
  too wide to tell otherwise;
- "not lower" / "not higher" state no size: the sign decides.
A claim whose read points are all confirmed is confirmed; all of one sign with the write-up but not
all of its size, same direction, different size; all refuted, refuted; a mix, partly; untested when no
point could be read; not comparable when the run's conditions differ from the write-up's for a
server the claim is about (the write-ups ran every server unpinned on one multi-core machine, their
event loop on one thread: our stand-in on one core is that, any other server only under
run_all.sh --seed-conditions).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import pandas as pd

from ..lab import suites as lab_suites
from .cells import mean_ci
from .frames import RunStats
from .methods import ratio_by_rep, ratio_welch

VERDICTS = ("confirmed", "same direction, different size", "partly", "refuted", "not comparable", "untested")
# what a point read as the write-up's says, once its size is checked (judge_point); any other
# outcome is a reading that could not be judged (READINGS' reasons)
OUTCOMES = ("confirmed", "same direction, different size", "refuted")
# The equivalence margin: a ratio within ±10 % of another (1/1.1 to 1.1) is "the same size". Why 10 %:
# the seed suites' design (12 interleaved reps of 1 s) gives server-vs-server intervals a 90th
# percentile half-width of 5.8-8.0 % on the two-core machine, and two copies of one server (the A/A
# pair) have a 95 % interval inside ±10 % on all 13 of the criterion run's points on both metrics
# (inside ±5 % on only 9 of 13): a narrower margin would call truly equal figures "too wide to tell"
# a third of the time. tests/unit/test_claims_margin.py checks both on the committed run.
EQUIVALENCE_MARGIN = 0.10
READINGS = ("higher", "lower", "same", "inside the noise floor", "too wide to tell", "not run",
            "fewer than 5 runs", "client-bound: capacity only")
# A seed ratio within ±5 % of 1 claims no difference (the write-ups call +3 % "nearly identical").
SAME_BAND = 0.05
# The write-ups' conditions, for the ledger's conditions column: each suite's [seed] conditions, in
# the write-up's own terms (no condition it does not state); this where a suite names none.
SEED_CONDITIONS = "as the write-up states them (its suite.toml names none)"
KEEPALIVE_SCORE = "keepalive_score"


@dataclass(frozen=True)
class Point:
    """One row of a write-up's table: A and B on their cells, with the write-up's figures."""
    a: tuple[str, str, str]          # (part, scenario, server role or server)
    b: tuple[str, str, str]
    seed_a: float
    seed_b: float

    @property
    def seed_ratio(self) -> float:
        return self.seed_a / self.seed_b


@dataclass(frozen=True)
class Claim:
    seed: str                        # "000"
    claim_id: str                    # "000/versus/1"
    kind: str                        # versus, curve, peak, rank
    what: str
    text: str                        # the write-up's words
    points: tuple[Point, ...]
    expect: str | None = None        # higher, lower, same: overrides the seed ratio's reading
    roles: tuple[str, ...] = ()      # the servers the claim is about (roles or server ids)
    metric: str = "req_per_s"        # the statistic its points compare (stats.metrics.METRICS)


# ---------------------------------------------------------------- the declarations

EXPECTS = ("higher", "lower", "same", "not lower", "not higher", "higher, any size", "lower, any size")
# "higher, any size" / "lower, any size": a claim of a direction without a size ("xKit wins every
# scenario"), judged on its sign only: a clear difference the claimed way confirms it, the other way
# refutes it, and so does a tie the interval shows (inside the equivalence margin); an interval that
# holds no change but is wider than the margin cannot tell.
ANY_SIZE = ", any size"
PEAK_UNITS = {"req_per_s": "req/s", "bytes_per_s": "B/s"}


def _expect(value: Any, where: str) -> str | None:
    if value is not None and value not in EXPECTS:
        raise lab_suites.SuiteError(f"{where}: expect is one of {', '.join(EXPECTS)}")
    return None if value is None else str(value)


def _metric(value: Any, where: str) -> str:
    from .metrics import METRICS
    metric = str(value or "req_per_s")
    if metric not in METRICS:
        raise lab_suites.SuiteError(f"{where}: metric {metric!r} is not one of {sorted(METRICS)}")
    return metric


def _versus(num: str, part: str, i: int, c: Mapping[str, Any], where: str) -> Claim:
    """[[seed.claims]]: two servers (the claim's `servers`, else contestant and baseline) on each row
    of the write-up's table; a row [scenario, a, b, server_a, server_b] names its own two."""
    where = f"{where} [[seed.claims]] {i}"
    pair = tuple(str(s) for s in c.get("servers", ("contestant", "baseline")))
    if len(pair) != 2:
        raise lab_suites.SuiteError(f"{where}: servers is [a, b]")
    pts, roles = [], []
    for p in c["points"]:
        if len(p) not in (3, 5):
            raise lab_suites.SuiteError(f"{where}: a point is [scenario, a, b] or [scenario, a, b, server_a, server_b]")
        sa, sb = (str(p[3]), str(p[4])) if len(p) == 5 else pair
        roles += [sa, sb]
        pts.append(Point((part, str(p[0]), sa), (part, str(p[0]), sb), float(p[1]), float(p[2])))
    return Claim(num, f"{num}/versus/{i}", "versus", str(c["what"]), str(c["text"]), tuple(pts),
                 _expect(c.get("expect"), where), tuple(dict.fromkeys(roles)), _metric(c.get("metric"), where))


def _curve(num: str, part: str, i: int, c: Mapping[str, Any], where: str) -> Claim:
    """[[seed.curves]]: one server on point a against point b."""
    where = f"{where} [[seed.curves]] {i}"
    missing = {"what", "text", "server", "a", "b", "seed", "expect"} - set(c)
    if missing:
        raise lab_suites.SuiteError(f"{where}: missing {sorted(missing)}")
    a, b = lab_suites.curve_cell(c["a"], part, where), lab_suites.curve_cell(c["b"], part, where)
    who = str(c["server"])
    return Claim(num, f"{num}/curve/{i}", "curve", str(c["what"]), str(c["text"]),
                 (Point((*a, who), (*b, who), float(c["seed"][0]), float(c["seed"][1])),),
                 _expect(c["expect"], where), (who,), _metric(c.get("metric"), where))


def _trend(num: str, part: str, i: int, c: Mapping[str, Any], where: str) -> Claim:
    """[[seed.trends]]: how the first server's lead over the second moves from point b to point a
    ("the advantage grows with connections"): two versus points, a first."""
    where = f"{where} [[seed.trends]] {i}"
    missing = {"what", "text", "a", "b", "seed", "expect"} - set(c)
    if missing:
        raise lab_suites.SuiteError(f"{where}: missing {sorted(missing)}")
    sa, sb = (str(s) for s in c.get("servers", ("contestant", "baseline")))
    (xa, ya), (xb, yb) = c["seed"]
    pts = tuple(Point((*cell, sa), (*cell, sb), float(x), float(y))
                for cell, x, y in ((lab_suites.curve_cell(c["a"], part, where), xa, ya),
                                   (lab_suites.curve_cell(c["b"], part, where), xb, yb)))
    return Claim(num, f"{num}/trend/{i}", "trend", str(c["what"]), str(c["text"]), pts,
                 _expect(c["expect"], where), (sa, sb), _metric(c.get("metric"), where))


def _peak(num: str, part: str, key: str, p: Mapping[str, Any], where: str) -> Claim:
    """[seed] peak (req/s) or peak_transfer (bytes/s): the write-up's highest figure, of its machine."""
    metric = "bytes_per_s" if key == "peak_transfer" else "req_per_s"
    value = float(p[metric])
    who = str(p.get("server", "contestant"))
    pts = tuple(Point((part, str(sc), who), (part, str(sc), who), value, 1.0) for sc in p["scenarios"])
    text = str(p.get("text") or (f"{value / 1e3:.0f}K req/s" if metric == "req_per_s" else f"{value / 2**20:,.0f} MiB/s"))
    cid = f"{num}/peak" if key == "peak" else f"{num}/peak/transfer"
    return Claim(num, cid, "peak", str(p["what"]), text, pts, None, (who,), metric)


def _ranking(num: str, part: str, doc: Mapping[str, Any], where: str) -> list[Claim]:
    """seed 003's ranking, as each pair of adjacent languages on the keep-alive score."""
    out = []
    servers = doc.get("stdlib_servers", {})
    ranked = sorted(doc.get("stdlib_avg", {}).items(), key=lambda kv: -float(kv[1]))
    for i, ((hi_lang, hi_avg), (lo_lang, lo_avg)) in enumerate(zip(ranked, ranked[1:]), 1):
        if hi_lang not in servers or lo_lang not in servers:
            raise lab_suites.SuiteError(f"{where} [seed] stdlib_servers: {hi_lang!r} and {lo_lang!r} need a server")
        a, b = str(servers[hi_lang]), str(servers[lo_lang])
        out.append(Claim(num, f"{num}/rank/{i}", "rank", f"{hi_lang} ranks above {lo_lang}",
                         f"{hi_lang} {float(hi_avg) / 1e3:.0f}K > {lo_lang} {float(lo_avg) / 1e3:.1f}K avg req/s",
                         (Point((part, KEEPALIVE_SCORE, a), (part, KEEPALIVE_SCORE, b), float(hi_avg), float(lo_avg)),),
                         "higher", (a, b)))
    return out


def claims_of(suite: lab_suites.Suite) -> tuple[Claim, ...]:
    """The claims a suite's [seed] declares (none without one). SuiteError names suite.toml."""
    doc = suite.seed_doc
    if not doc:
        return ()
    where = str(suite.folder / "suite.toml")
    num, part = str(doc["number"]), suite.parts[0]
    out: list[Claim] = [_versus(num, part, i, c, where) for i, c in enumerate(doc.get("claims", []), 1)]
    out += [_peak(num, part, key, doc[key], where) for key in ("peak", "peak_transfer") if doc.get(key)]
    if doc.get("kind") == "ranking":
        out += _ranking(num, part, doc, where)
    out += [_curve(num, part, i, c, where) for i, c in enumerate(doc.get("curves", []), 1)]
    out += [_trend(num, part, i, c, where) for i, c in enumerate(doc.get("trends", []), 1)]
    return tuple(out)


def all_claims() -> tuple[Claim, ...]:
    return tuple(c for s in lab_suites.all_suites() for c in claims_of(s))


# ---------------------------------------------------------------- the run's conditions

@dataclass(frozen=True)
class Conditions:
    """What decides whether a run can speak to a claim."""
    seed_conditions: bool            # profile "seed" (run_all.sh --seed-conditions)
    server_cores: int                # CPUs each server was pinned to
    servers: frozenset[str]          # the servers (cells) the run has
    text: str                        # one line for the ledger

    def resolve(self, role: str, seed_doc: Mapping[str, Any]) -> str:
        """A role (contestant, baseline) as the run's server: the write-up's event loop is our
        stand-in, single-threaded (<server>@1) under the seed's conditions when the run has it."""
        servers = seed_doc.get("servers", {})
        server = str(servers.get(role, role))
        if role == "contestant" and self.seed_conditions and f"{server}@1" in self.servers:
            return f"{server}@1"
        return server

    def comparable(self, server: str, role: str) -> str:
        """'' when the server ran as the write-up's did, else the reason it did not."""
        # the write-ups' event loop ran on one thread, and so does a server whose manifest says it
        # uses one core whatever it is given ([cores] uses = "single": Node's and Python's stdlib
        # servers): on one core here it is as it was there
        single = role == "contestant" or _single_threaded(server)
        if single and (server.endswith("@1") or self.server_cores == 1):
            return ""
        if self.seed_conditions:
            return ""
        return (f"{server} ran on {self.server_cores} core{'s' if self.server_cores != 1 else ''} here, "
                "unpinned on the write-up's machine: only a run under its conditions (run_all.sh --seed-conditions) speaks to this")


def _single_threaded(server: str) -> bool:
    """Whether the server's manifest says it runs on one core ([cores] uses = "single")."""
    from ..lab.servers import base_of, manifest
    m = manifest(base_of(server))
    return m is not None and m.cores.uses == "single"


def conditions_of(meta: Mapping[str, Any], runs: pd.DataFrame) -> Conditions:
    from ..lab.hoststate import parse_cpu_list
    cores = len(parse_cpu_list(str(meta.get("server_cpus", ""))) or []) or 1
    host = meta.get("host") or {}
    seed = meta.get("profile") == "seed"
    text = (f"{host.get('cores', '?')}-core {host.get('cpu_model', 'machine')}; "
            + ("the write-up's set-up: servers on 12 CPUs, the load tool with 4 threads on 4, 10 s runs, the C server also single-threaded"
               if seed else f"every server pinned to {cores} CPU{'s' if cores != 1 else ''} ({meta.get('server_cpus', '?')}), "
                            f"the load tool to {meta.get('client_cpus', '?')}"))
    servers = frozenset(runs["server"]) if not runs.empty and "server" in runs else frozenset()
    return Conditions(seed, cores, servers, text)


# ---------------------------------------------------------------- reading a point

def expected(ratio: float, override: str | None = None) -> str:
    if override:
        return override
    if ratio > 1 + SAME_BAND:
        return "higher"
    if ratio < 1 / (1 + SAME_BAND):
        return "lower"
    return "same"


def agrees(reading: str, want: str) -> bool:
    """Whether a point's reading is what the claim expects ("not lower": higher or the same)."""
    return reading == want.removesuffix(ANY_SIZE) or (want == "not lower" and reading in ("higher", "same")) \
        or (want == "not higher" and reading in ("lower", "same"))


def _reads_as_same(want: str) -> bool:
    # a difference inside the noise floor is as good as none where none is (also) what the claim says
    return want in ("same", "not lower", "not higher")


def is_read(reading: str, want: str) -> bool:
    """Whether a point's reading speaks to the claim (higher, lower, same; inside the noise floor
    where the write-up expects no difference) rather than saying why it cannot."""
    return reading in ("higher", "lower", "same") or (reading == "inside the noise floor" and _reads_as_same(want))


def read_point(row: pd.Series | None, throughput: bool = True) -> tuple[str, float, float, float]:
    """(reading, ratio, lo, hi) of a comparisons row (NaN where none). `throughput`: the metric is a
    rate the load tool may cap (req/s); for any other (latency, CPU, memory) a point with a
    client-bound side is not read at all: its figures are the tool's as much as the server's."""
    nan = float("nan")
    if row is None:
        return "not run", nan, nan, nan
    ratio, lo, hi = float(row["ratio"]), float(row["lo"]), float(row["hi"])
    v = str(row["verdict"])
    a_cb, b_cb = bool(row.get("a_client_bound")), bool(row.get("b_client_bound"))
    if v == "both client-bound" or (not throughput and (a_cb or b_cb)):
        return "client-bound: capacity only", ratio, lo, hi
    if v == "no interval" or not (math.isfinite(lo) and math.isfinite(hi)):
        return "fewer than 5 runs", ratio, lo, hi
    reading = "higher" if lo > 1 else "lower" if hi < 1 else "same"
    if v == "below the noise floor":
        # a clear Δ no larger than two instances of one server differ by: as good as the same where
        # the write-up claims no difference, unreadable where it claims one
        reading = "inside the noise floor"
    # one side client-bound: its req/s is the tool's ceiling, a floor of the server's own
    if a_cb and reading in ("same", "lower", "inside the noise floor"):
        return "client-bound: capacity only", ratio, lo, hi
    if b_cb and reading in ("same", "higher", "inside the noise floor"):
        return "client-bound: capacity only", ratio, lo, hi
    return reading, ratio, lo, hi


def within_margin(lo: float, hi: float, centre: float = 1.0, margin: float = EQUIVALENCE_MARGIN) -> bool:
    """Whether the interval [lo, hi], taken relative to `centre`, lies inside ±margin (a ratio band:
    1/(1+margin) to 1+margin): two one-sided tests at the interval's level each side."""
    return math.isfinite(lo) and math.isfinite(hi) and centre > 0 and \
        lo / centre >= 1 / (1 + margin) and hi / centre <= 1 + margin


def outside_margin(lo: float, hi: float, margin: float = EQUIVALENCE_MARGIN) -> bool:
    """Whether the interval lies wholly outside the band 1/(1+margin)..1+margin: a difference
    larger than the margin stands."""
    return math.isfinite(lo) and math.isfinite(hi) and (lo > 1 + margin or hi < 1 / (1 + margin))


def judge_point(reading: str, want: str, lo: float, hi: float, seed_ratio: float) -> str:
    """A point's outcome (OUTCOMES) once its size is checked against the write-up's ratio, or the
    reading itself where it could not be judged (module docstring; docs/method.md)."""
    if want == "same":
        # an equivalence test on the interval, whatever the run's noise floor says of the centre
        if reading not in ("higher", "lower", "same", "inside the noise floor"):
            return reading
        if within_margin(lo, hi):
            return "confirmed"
        if outside_margin(lo, hi):
            return "refuted"
        return "too wide to tell"
    if want.endswith(ANY_SIZE):
        if reading not in ("higher", "lower", "same", "inside the noise floor"):
            return reading
        if reading == want.removesuffix(ANY_SIZE):
            return "confirmed"
        if reading in ("higher", "lower"):
            return "refuted"
        # no clear difference: a tie the interval shows is no win; a wide one cannot tell
        return "refuted" if within_margin(lo, hi) else "too wide to tell"
    if not is_read(reading, want):
        return reading
    if want in ("not lower", "not higher"):
        # a claim of no size: its sign decides (a change inside the noise floor is none)
        return "confirmed" if agrees("same" if reading == "inside the noise floor" else reading, want) else "refuted"
    if reading != want:
        # the opposite sign, or no change where the interval also excludes the write-up's figure
        # (one that holds both read "too wide to tell" and is not judged)
        return "refuted"
    if lo <= seed_ratio <= hi or within_margin(lo, hi, seed_ratio):
        return "confirmed"
    return "same direction, different size"


UNREAD_ORDER = ("not run", "fewer than 5 runs", "client-bound: capacity only")


def read_trend(stats: RunStats, runs: pd.DataFrame, metric: str, a: Point, b: Point,
               confidence: float = 0.95) -> tuple[str, float, float, float]:
    """(reading, ratio, lo, hi) of how A's lead over B moves from point b to point a: the ratio of
    the two per-rep ratios (A/B at a over A/B at b), paired by rep within one suite (the reps ran
    both points back to back), Welch across suites (they ran at different times) — the methods whose
    coverage the coverage table checks for a ratio. Each end must first be readable as a versus point."""
    rows = [stats.compare(metric, p.a, p.b) for p in (a, b)]
    ends = [read_point(r, metric == "req_per_s")[0] for r in rows]
    for why in UNREAD_ORDER:
        if why in ends:
            return why, math.nan, math.nan, math.nan
    per_rep = [_rep_ratios(runs, metric, p) for p in (a, b)]
    if a.a[0] == b.a[0]:
        r = ratio_by_rep(per_rep[0], per_rep[1], confidence)
    else:
        r = ratio_welch(list(per_rep[0].values()), list(per_rep[1].values()), confidence)
    if r.ratio is None:
        return "not run", math.nan, math.nan, math.nan
    if not r.has_interval:
        return "fewer than 5 runs", float(r.ratio), math.nan, math.nan
    lo, hi = float(r.lo), float(r.hi)  # type: ignore[arg-type]
    return ("higher" if lo > 1 else "lower" if hi < 1 else "same"), float(r.ratio), lo, hi


def _rep_ratios(runs: pd.DataFrame, metric: str, p: Point) -> dict[int, float]:
    """rep -> A's figure over B's on one point, for the reps in which both were ok."""
    if runs.empty or metric not in runs:
        return {}
    ok = runs[(runs["status"] == "ok") & (runs["suite"] == p.a[0]) & (runs["scenario"] == p.a[1])]
    side = [ok[ok["server"] == s].groupby("rep")[metric].mean() for s in (p.a[2], p.b[2])]
    both = side[0].index.intersection(side[1].index)
    return {int(k): float(side[0][k] / side[1][k]) for k in both if side[1][k] > 0 and math.isfinite(side[0][k] / side[1][k])}


def _pct(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%".replace("-", "−")


def _point_text(scenario: str, outcome: str, ratio: float, lo: float, hi: float, seed_ratio: float) -> str:
    """'get_ping_c50: +93% [+86%, +101%] vs the write-up's +18% (same direction, different size)'."""
    if not math.isfinite(ratio):
        return f"{scenario}: {outcome}"
    ci = f" [{_pct(lo)}, {_pct(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else ""
    seed = f" vs the write-up's {_pct(seed_ratio)}" if math.isfinite(seed_ratio) else ""
    return f"{scenario}: {_pct(ratio)}{ci}{seed} ({outcome})"


# ---------------------------------------------------------------- one claim against one run

def verdict(outcomes: Iterable[str]) -> tuple[str, int, int]:
    """(verdict, points judged, points confirmed) from each point's outcome (judge_point): confirmed
    when every judged point is, same direction, different size when none is refuted, refuted when
    all are, partly for a mix; untested when no point could be judged."""
    judged = [o for o in outcomes if o in OUTCOMES]
    if not judged:
        return "untested", 0, 0
    confirmed, refuted = judged.count("confirmed"), judged.count("refuted")
    if confirmed == len(judged):
        v = "confirmed"
    elif refuted == 0:
        v = "same direction, different size"
    elif refuted == len(judged):
        v = "refuted"
    else:
        v = "partly"
    return v, len(judged), confirmed


def _wanted_text(wanted: list[str]) -> str:
    """'higher, higher, lower', or 'higher at all 12 points' where every point wants the same."""
    if len(wanted) > 1 and len(set(wanted)) == 1:
        return f"{wanted[0]} at all {len(wanted)} points"
    return ", ".join(wanted)


def outcome_reason(outcomes: list[str], wanted: list[str]) -> str:
    """The reason of a judged claim: its points' outcomes counted, what the write-up's figures
    said they should read, and the points that could not be judged."""
    judged = [o for o in outcomes if o in OUTCOMES]
    counted = ", ".join(f"{judged.count(o)} {o}" for o in OUTCOMES if o in judged)
    on = "sign" if wanted and all(w.endswith(ANY_SIZE) for w in wanted) else "sign and size"
    reason = (f"of {len(judged)} point{'s' if len(judged) != 1 else ''} judged on {on}: {counted} "
              f"(the write-up's figures read {_wanted_text(wanted)}; equivalence margin ±{EQUIVALENCE_MARGIN:.0%})")
    unread = [o for o in outcomes if o not in OUTCOMES]
    if unread:
        reason += f"; {len(unread)} not judged ({', '.join(sorted(set(unread)))})"
    return reason


def _cell_name(a: tuple[str, str, str], b: tuple[str, str, str], mixed: bool) -> str:
    """How a point is named in the ledger: its scenario; the two servers too where the claim's points
    pair different servers (`mixed`); both cells where they differ in part or scenario."""
    if a[:2] == b[:2]:
        return f"{a[1]} ({a[2]} vs {b[2]})" if mixed else a[1]
    return f"{a[0]}/{a[1]} vs {b[0]}/{b[1]}"


def _read_peak(c: Claim, server: str, stats: RunStats, runs: pd.DataFrame) -> tuple[list[str], str, str]:
    """(texts, verdict, reason) of a peak: the highest of the run's figures over the claim's points."""
    best = None
    for p in c.points:
        e = _figure(stats, runs, (p.a[0], p.a[1], server), c.metric)
        if e is not None and (best is None or e[0] > best[1][0]):
            best = (p.a[1], e)
    if best is None:
        return [], "untested", "no point could be read: not run"
    sc, (est, lo, hi, n) = best
    unit = PEAK_UNITS[c.metric]
    if c.metric == "bytes_per_s":
        # binary units, as the load tools print Transfer/s (and the write-ups copy them)
        ci = f" [{lo / 2**20:,.1f}, {hi / 2**20:,.1f}]" if math.isfinite(lo) else ""
        text = f"{sc}: {est / 2**20:,.1f}{ci} MiB/s (n={n})"
    else:
        ci = f" [{lo:,.0f}, {hi:,.0f}]" if math.isfinite(lo) else ""
        text = f"{sc}: {est:,.0f}{ci} {unit} (n={n})"
    return [text], "not comparable", f"an absolute {unit} of the write-up's machine; on another machine it measures the machine"


def _figure(stats: RunStats, runs: pd.DataFrame, cell: tuple[str, str, str], metric: str
            ) -> tuple[float, float, float, int] | None:
    """One server's figure on a point with its interval: the estimates frame's, or (bytes/s, which
    the statistics frames do not keep) the centre of its ok runs with a t interval (stats.cells.mean_ci,
    as the reports' Transfer/s columns)."""
    if metric == "bytes_per_s":
        if runs.empty or metric not in runs:
            return None
        ok = runs[(runs["status"] == "ok") & (runs["suite"] == cell[0]) & (runs["scenario"] == cell[1])
                  & (runs["server"] == cell[2])]
        if ok.empty:
            return None
        ci = mean_ci(ok[metric].to_numpy(dtype=float))
        nan = float("nan")
        return (float(ci.mean), float(ci.low) if ci.low is not None else nan,  # type: ignore[arg-type]
                float(ci.high) if ci.high is not None else nan, ci.n)
    r = stats.estimate(cell, metric)
    if r is None or not math.isfinite(float(r["estimate"])):
        return None
    return float(r["estimate"]), float(r["lo"]), float(r["hi"]), int(r["n"])


def ledger_rows(claims: Iterable[Claim], stats: RunStats, runs: pd.DataFrame,
                cond: Conditions, run_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the claims rows, their points' rows) of one run (schema: stats.schema CLAIMS, CLAIM_POINTS).
    A peak has no point rows: its figure is absolute, never read as higher or lower."""
    docs = {str(s.seed_doc.get("number")): s.seed_doc for s in lab_suites.seed_suites()}
    rows, point_rows = [], []
    for c in claims:
        doc = docs.get(c.seed, {})
        servers = [cond.resolve(r, doc) for r in c.roles]
        why_not = "; ".join(filter(None, (cond.comparable(s, r) for s, r in zip(servers, c.roles))))
        texts, pairs, ratios = [], [], []
        if c.kind == "peak":
            texts, v, reason = _read_peak(c, servers[0], stats, runs)
            n_read = n_agree = 0
        else:
            points = [Point((p.a[0], p.a[1], cond.resolve(p.a[2], doc)), (p.b[0], p.b[1], cond.resolve(p.b[2], doc)),
                            p.seed_a, p.seed_b) for p in c.points]
            if c.kind == "trend":
                # one reading: the lead at a over the lead at b
                reading, ratio, lo, hi = read_trend(stats, runs, c.metric, points[0], points[1])
                seed_ratio = c.points[0].seed_ratio / c.points[1].seed_ratio
                named = [(f"{points[0].a[0]}/{points[0].a[1]} vs {points[1].a[0]}/{points[1].a[1]}",
                          reading, ratio, lo, hi, seed_ratio)]
            else:
                named = []
                mixed = len({(p.a[2], p.b[2]) for p in points}) > 1
                for p, seed_p in zip(points, c.points):
                    row = stats.compare(c.metric, p.a, p.b)
                    named.append((_cell_name(p.a, p.b, mixed), *read_point(row, c.metric == "req_per_s"),
                                  seed_p.seed_ratio))
            outcomes, wanted = [], []
            for name, reading, ratio, lo, hi, seed_ratio in named:
                want = expected(seed_ratio, c.expect)
                if reading == "same" and want in ("higher", "lower") and lo <= seed_ratio <= hi:
                    # the interval holds both no change and the write-up's own figure: it cannot
                    # tell them apart, so it neither confirms nor refutes the claimed difference
                    reading = "too wide to tell"
                outcome = judge_point(reading, want, lo, hi, seed_ratio)
                texts.append(_point_text(name, outcome, ratio, lo, hi, seed_ratio))
                outcomes.append(outcome)
                wanted.append(want)
                point_rows.append({"run_id": run_id, "claim_id": c.claim_id, "point": name, "reading": reading,
                                   "expected": want, "outcome": outcome, "seed_ratio": seed_ratio,
                                   "ratio": ratio, "lo": lo, "hi": hi,
                                   "comparable": not why_not, "text": texts[-1]})
                if math.isfinite(ratio):
                    ratios.append(ratio / seed_ratio)
            v, n_read, n_agree = verdict(outcomes)
            if v == "untested":
                reason = "no point could be judged: " + ", ".join(sorted(set(outcomes)))
            else:
                reason = outcome_reason(outcomes, wanted)
        # a run that could read nothing of the claim is silent on it (untested), whatever its
        # conditions; one that read it under other conditions says what it read, not a verdict
        if c.kind != "peak" and why_not and v != "untested":
            reason = f"{why_not}. Read anyway: {v}, {reason}"
            v = "not comparable"
        rows.append({
            "run_id": run_id, "seed": c.seed, "claim_id": c.claim_id, "kind": c.kind, "what": c.what,
            "seed_text": c.text, "servers": ", ".join(servers),
            "scenarios": ", ".join(sorted({f"{p.a[0]}/{p.a[1]}" for p in c.points} | {f"{p.b[0]}/{p.b[1]}" for p in c.points if c.kind != "peak"})),
            "statistic": _statistic(c),
            "ours": "; ".join(texts) or "not run",
            "seed_ratio": _seed_ratio_text(c),
            "ours_over_seed_lo": min(ratios) if ratios else float("nan"),
            "ours_over_seed_hi": max(ratios) if ratios else float("nan"),
            "seed_conditions": str(doc.get("conditions") or SEED_CONDITIONS), "our_conditions": cond.text,
            "verdict": v, "reason": reason, "points": len(c.points) if c.kind != "trend" else 1,
            "points_read": n_read, "points_agree": n_agree,
        })
    return rows, point_rows


def _seed_ratio_text(c: Claim) -> str:
    if c.kind == "peak":
        return c.text
    if c.kind == "trend":
        return _pct(c.points[0].seed_ratio / c.points[1].seed_ratio)
    return "; ".join(_pct(p.seed_ratio) for p in c.points)


METRIC_WORDS = {"req_per_s": "req/s", "lat_p50_us": "P50 latency", "lat_p99_us": "P99 latency",
                "lat_mean_us": "mean latency", "lat_max_us": "max latency",
                "tail_ratio": "P99/P50", "rss_peak_kb": "peak RSS", "cpu_us_per_req": "CPU-µs per request"}


def _statistic(c: Claim) -> str:
    m = METRIC_WORDS.get(c.metric, c.metric)
    return {"versus": f"{m} ratio, the first server over the second, per scenario (paired by rep, 95 % t interval)",
            "curve": f"{m} ratio of one server, point A over point B (95 % t interval; Welch between parts)",
            "trend": f"{m} lead of the first server over the second at point A over its lead at point B (ratio of ratios; paired by rep, Welch between parts; 95 % t interval)",
            "peak": ("the first server's highest req/s over the scenarios (geometric mean, 95 % t interval)" if c.metric == "req_per_s"
                     else "the server's highest Transfer/s over the scenarios (bytes the client read per second: geometric mean of the runs, 95 % t interval)"),
            "rank": "keep-alive score ratio (mean req/s of the four keep-alive endpoints per rep), higher-ranked over next"}[c.kind]


def ledger_frames(comparisons: pd.DataFrame, estimates: pd.DataFrame, meta: Mapping[str, Any],
                  runs: pd.DataFrame, run_id: str) -> dict[str, pd.DataFrame]:
    """The ledger of one run: every claim of every write-up (those of suites the run did not have
    read as untested: not run), one row each ("claims"), and each claim's points as this run read
    them ("claim_points": what lets the summary page read a claim's points across runs)."""
    from .schema import empty, validate
    rows, points = ledger_rows(all_claims(), RunStats(estimates, comparisons), runs, conditions_of(meta, runs), run_id)
    return {name: validate(pd.DataFrame(data, columns=list(empty(name).columns)), name) if data else empty(name)
            for name, data in (("claims", rows), ("claim_points", points))}


def claims_frame(comparisons: pd.DataFrame, estimates: pd.DataFrame, meta: Mapping[str, Any],
                 runs: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """The claims rows of ledger_frames."""
    return ledger_frames(comparisons, estimates, meta, runs, run_id)["claims"]


def counts(ledger: pd.DataFrame) -> dict[str, int]:
    """Claims per verdict, in VERDICTS order."""
    got = ledger["verdict"].value_counts() if not ledger.empty else pd.Series(dtype=int)
    return {v: int(got.get(v, 0)) for v in VERDICTS}
