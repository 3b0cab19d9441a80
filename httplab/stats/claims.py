"""The claim ledger: every claim of the four write-ups the lab reproduces, set against one run's
comparisons frame, with a verdict and its reason. The claims are data, declared in each suite's
suite.toml [seed] (docs/suites.md); this module reads them (claims_of), reads each one's points off
the comparisons frame (read_point) and decides (verdict). The build step writes the result as
data/<run_id>/claims.parquet (stats.write); the reports' findings and the summary page read it.

Kinds of claim:
- versus: the write-up's event loop against its other server, on each row of its table that the
  claim summarises ([[seed.claims]]): our stand-in's req/s over the other server's, per scenario.
- curve: one server against itself on two points ([[seed.curves]]): another scenario of the same
  part (Go at 500 connections against 50), or another part (HTTP/2 over HTTP/1.1, what TLS costs).
- peak: the write-up's highest req/s, an absolute figure of its machine (never comparable).
- rank: seed 003's ranking, as each pair of adjacent languages ([seed] stdlib_avg, in its order):
  the higher-ranked language's stdlib server against the next one's, on the keep-alive score.

Each point is read first (READINGS): higher, lower or same (its interval holds 1, or lies inside the
run's A/A noise floor), or why it cannot be read (not run, fewer than 5 runs, client-bound: the
load tool set the figure; too wide to tell: the interval holds both 1 and the write-up's own ratio,
where the write-up claims a difference). The seed's own ratio sets what the point should read (expected: higher or
lower past ±5 %, else same, or the claim's `expect`). A claim whose points all read as expected is
confirmed, one with none refuted, one with some partly; untested when no point could be read; not
comparable when the run's conditions differ from the write-up's for a server the claim is about
(the write-ups ran every server on a 12-core laptop, their event loop on one thread: our stand-in
on one core is that, any other server only under run_all.sh --seed-conditions).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import pandas as pd

from ..lab import suites as lab_suites

VERDICTS = ("confirmed", "partly", "refuted", "not comparable", "untested")
READINGS = ("higher", "lower", "same", "inside the noise floor", "too wide to tell", "not run",
            "fewer than 5 runs", "client-bound: capacity only")
# A seed ratio within ±5 % of 1 claims no difference (the write-ups call +3 % "nearly identical").
SAME_BAND = 0.05
# The write-ups' conditions, for the ledger's conditions column.
SEED_CONDITIONS = "Apple M3 Pro laptop, 12 cores; every server unpinned, its event loop single-threaded; wrk/h2load -t4, 10 s"
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


# ---------------------------------------------------------------- the declarations

def claims_of(suite: lab_suites.Suite) -> tuple[Claim, ...]:
    """The claims a suite's [seed] declares (none without one). SuiteError names suite.toml."""
    doc = suite.seed_doc
    if not doc:
        return ()
    where = str(suite.folder / "suite.toml")
    num, part = str(doc["number"]), suite.parts[0]
    out: list[Claim] = []
    if doc.get("kind") == "claims":
        a_role, b_role = "contestant", "baseline"
        for i, c in enumerate(doc.get("claims", []), 1):
            pts = tuple(Point((part, str(sc), a_role), (part, str(sc), b_role), float(x), float(y))
                        for sc, x, y in c["points"])
            out.append(Claim(num, f"{num}/versus/{i}", "versus", str(c["what"]), str(c["text"]), pts,
                             c.get("expect"), (a_role, b_role)))
        peak = doc.get("peak")
        if peak:
            pts = tuple(Point((part, str(sc), a_role), (part, str(sc), a_role), float(peak["req_per_s"]), 1.0)
                        for sc in peak["scenarios"])
            out.append(Claim(num, f"{num}/peak", "peak", str(peak["what"]), f"{float(peak['req_per_s']) / 1e3:.0f}K req/s",
                             pts, None, (a_role,)))
    if doc.get("kind") == "ranking":
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
    for i, c in enumerate(doc.get("curves", []), 1):
        missing = {"what", "text", "server", "a", "b", "seed", "expect"} - set(c)
        if missing:
            raise lab_suites.SuiteError(f"{where} [[seed.curves]] {i}: missing {sorted(missing)}")
        if c["expect"] not in ("higher", "lower", "same"):
            raise lab_suites.SuiteError(f"{where} [[seed.curves]] {i}: expect is higher, lower or same")
        a, b = lab_suites.curve_cell(c["a"], part, where), lab_suites.curve_cell(c["b"], part, where)
        who = str(c["server"])
        out.append(Claim(num, f"{num}/curve/{i}", "curve", str(c["what"]), str(c["text"]),
                         (Point((*a, who), (*b, who), float(c["seed"][0]), float(c["seed"][1])),),
                         str(c["expect"]), (who,)))
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
                "on 12 in the write-up: only a run under its conditions (run_all.sh --seed-conditions) speaks to this")


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


def read_point(row: pd.Series | None) -> tuple[str, float, float, float]:
    """(reading, ratio, lo, hi) of a comparisons row of req/s (NaN where none)."""
    nan = float("nan")
    if row is None:
        return "not run", nan, nan, nan
    ratio, lo, hi = float(row["ratio"]), float(row["lo"]), float(row["hi"])
    v = str(row["verdict"])
    if v == "both client-bound":
        return "client-bound: capacity only", ratio, lo, hi
    if v == "no interval" or not (math.isfinite(lo) and math.isfinite(hi)):
        return "fewer than 5 runs", ratio, lo, hi
    reading = "higher" if lo > 1 else "lower" if hi < 1 else "same"
    if v == "below the noise floor":
        # a clear Δ no larger than two instances of one server differ by: as good as the same where
        # the write-up claims no difference, unreadable where it claims one
        reading = "inside the noise floor"
    # one side client-bound: its req/s is the tool's ceiling, a floor of the server's own
    if bool(row.get("a_client_bound")) and reading in ("same", "lower", "inside the noise floor"):
        return "client-bound: capacity only", ratio, lo, hi
    if bool(row.get("b_client_bound")) and reading in ("same", "higher", "inside the noise floor"):
        return "client-bound: capacity only", ratio, lo, hi
    return reading, ratio, lo, hi


def _lookup(comparisons: pd.DataFrame, a: tuple[str, str, str], b: tuple[str, str, str]) -> pd.Series | None:
    c = comparisons
    if c.empty:
        return None
    m = c[(c["metric"] == "req_per_s") & (c["a_suite"] == a[0]) & (c["a_scenario"] == a[1]) & (c["a_server"] == a[2])
          & (c["b_suite"] == b[0]) & (c["b_scenario"] == b[1]) & (c["b_server"] == b[2])]
    return None if m.empty else m.iloc[0]


def _pct(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%".replace("-", "−")


def _point_text(scenario: str, reading: str, ratio: float, lo: float, hi: float) -> str:
    if not math.isfinite(ratio):
        return f"{scenario}: {reading}"
    ci = f" [{_pct(lo)}, {_pct(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else ""
    return f"{scenario}: {_pct(ratio)}{ci} ({reading})"


# ---------------------------------------------------------------- one claim against one run

def verdict(readings: Iterable[tuple[str, str]]) -> tuple[str, int, int]:
    """(verdict, points read, points as expected) from each point's (reading, expected): a point inside the
    noise floor reads as same where the write-up expects no difference, and is not read elsewhere."""
    read = [("same" if r == "inside the noise floor" else r, e) for r, e in readings
            if r in ("higher", "lower", "same") or (r == "inside the noise floor" and e == "same")]
    if not read:
        return "untested", 0, 0
    agree = sum(r == e for r, e in read)
    return ("confirmed" if agree == len(read) else "refuted" if agree == 0 else "partly"), len(read), agree


def ledger_rows(claims: Iterable[Claim], comparisons: pd.DataFrame, estimates: pd.DataFrame,
                cond: Conditions, run_id: str) -> list[dict[str, Any]]:
    docs = {s.seed_doc.get("number"): s.seed_doc for s in lab_suites.all_suites() if s.seed_doc}
    rows = []
    for c in claims:
        doc = docs.get(c.seed, {})
        servers = [cond.resolve(r, doc) for r in c.roles]
        why_not = "; ".join(filter(None, (cond.comparable(s, r) for s, r in zip(servers, c.roles))))
        texts, pairs, ratios = [], [], []
        if c.kind == "peak":
            best = None
            for p in c.points:
                e = _estimate(estimates, (p.a[0], p.a[1], servers[0]))
                if e is not None and (best is None or e[0] > best[1][0]):
                    best = (p.a[1], e)
            if best is not None:
                sc, (est, lo, hi, n) = best
                ci = f" [{lo:,.0f}, {hi:,.0f}]" if math.isfinite(lo) else ""
                texts.append(f"{sc}: {est:,.0f}{ci} req/s (n={n})")
            v, n_read, n_agree = ("not comparable", 0, 0) if best else ("untested", 0, 0)
            reason = ("an absolute req/s of the write-up's machine; on another machine it measures the machine"
                      if best else "no point could be read: not run")
        else:
            for p in c.points:
                a = (p.a[0], p.a[1], cond.resolve(p.a[2], doc))
                b = (p.b[0], p.b[1], cond.resolve(p.b[2], doc))
                reading, ratio, lo, hi = read_point(_lookup(comparisons, a, b))
                want = expected(p.seed_ratio, c.expect)
                if reading == "same" and want != "same" and lo <= p.seed_ratio <= hi:
                    # the interval holds both no change and the write-up's own figure: it cannot
                    # tell them apart, so it neither confirms nor refutes the claimed difference
                    reading = "too wide to tell"
                texts.append(_point_text(p.a[1] if p.a[0] == p.b[0] and p.a[1] == p.b[1]
                                         else f"{p.a[0]}/{p.a[1]} vs {p.b[0]}/{p.b[1]}", reading, ratio, lo, hi))
                pairs.append((reading, want))
                if math.isfinite(ratio):
                    ratios.append(ratio / p.seed_ratio)
            v, n_read, n_agree = verdict(pairs)
            if v == "untested":
                reasons = sorted({r for r, _ in pairs})
                reason = "no point could be read: " + ", ".join(reasons)
            else:
                reason = f"{n_agree} of {n_read} points read as the write-up's ({', '.join(e for _, e in pairs)})"
                untested = [r for r, e in pairs if r not in ("higher", "lower", "same")
                            and not (r == "inside the noise floor" and e == "same")]
                if untested:
                    reason += f"; {len(untested)} not read ({', '.join(sorted(set(untested)))})"
            # a run that could read nothing of the claim is silent on it (untested), whatever its
            # conditions; one that read it under other conditions says what it read, not a verdict
            if why_not and v != "untested":
                reason = f"{why_not}. Read anyway: {v}, {reason}"
                v = "not comparable"
        rows.append({
            "run_id": run_id, "seed": c.seed, "claim_id": c.claim_id, "kind": c.kind, "what": c.what,
            "seed_text": c.text, "servers": ", ".join(servers),
            "scenarios": ", ".join(sorted({f"{p.a[0]}/{p.a[1]}" for p in c.points} | {f"{p.b[0]}/{p.b[1]}" for p in c.points if c.kind != "peak"})),
            "statistic": _statistic(c),
            "ours": "; ".join(texts) or "not run",
            "seed_ratio": "; ".join(f"{_pct(p.seed_ratio)}" for p in c.points) if c.kind != "peak" else c.text,
            "ours_over_seed_lo": min(ratios) if ratios else float("nan"),
            "ours_over_seed_hi": max(ratios) if ratios else float("nan"),
            "seed_conditions": SEED_CONDITIONS, "our_conditions": cond.text,
            "verdict": v, "reason": reason, "points": len(c.points), "points_read": n_read, "points_agree": n_agree,
        })
    return rows


def _statistic(c: Claim) -> str:
    return {"versus": "req/s ratio, the claim's first server over its second, per scenario (paired by rep, 95 % t interval)",
            "curve": "req/s ratio of one server, point A over point B (95 % t interval; Welch between parts)",
            "peak": "the first server's highest req/s over the scenarios (geometric mean, 95 % t interval)",
            "rank": "keep-alive score ratio (mean req/s of the four keep-alive endpoints per rep), higher-ranked over next"}[c.kind]


def _estimate(estimates: pd.DataFrame, cell: tuple[str, str, str]) -> tuple[float, float, float, int] | None:
    e = estimates
    if e.empty:
        return None
    m = e[(e["metric"] == "req_per_s") & (e["suite"] == cell[0]) & (e["scenario"] == cell[1]) & (e["server"] == cell[2])]
    if m.empty or not math.isfinite(float(m.iloc[0]["estimate"])):
        return None
    r = m.iloc[0]
    return float(r["estimate"]), float(r["lo"]), float(r["hi"]), int(r["n"])


def claims_frame(comparisons: pd.DataFrame, estimates: pd.DataFrame, meta: Mapping[str, Any],
                 runs: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """The ledger of one run: every claim of every write-up (those of suites the run did not have
    read as untested: not run), one row each (schema: stats.schema CLAIMS)."""
    from .schema import empty, validate
    rows = ledger_rows(all_claims(), comparisons, estimates, conditions_of(meta, runs), run_id)
    if not rows:
        return empty("claims")
    return validate(pd.DataFrame(rows, columns=list(empty("claims").columns)), "claims")


def counts(ledger: pd.DataFrame) -> dict[str, int]:
    """Claims per verdict, in VERDICTS order."""
    got = ledger["verdict"].value_counts() if not ledger.empty else pd.Series(dtype=int)
    return {v: int(got.get(v, 0)) for v in VERDICTS}
