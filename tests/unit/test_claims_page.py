"""The claims summary page (httplab.report.claims_page): per claim, the current run that speaks to
it best, the other runs counted, and the page's Markdown and HTML."""
from __future__ import annotations

import pandas as pd

from httplab.report import claims_page as P


def book(run_id: str, verdict: str, profile: str = "full", reference: bool = False, claim: str = "000/versus/1") -> dict:
    return {"run_id": run_id, "seed": "000", "claim_id": claim, "kind": "versus", "what": "GET /ping",
            "seed_text": "xKit +18%", "servers": "evloop, go", "scenarios": "", "statistic": "", "ours": "c100: −38%",
            "seed_ratio": "", "ours_over_seed_lo": 0.5, "ours_over_seed_hi": 0.5, "seed_conditions": "",
            "our_conditions": "", "verdict": verdict, "reason": "why", "points": 4, "points_read": 1,
            "points_agree": 0, "profile": profile, "reference": reference}


def test_a_verdict_beats_not_comparable_and_the_seeds_conditions_beat_the_reference():
    books = pd.DataFrame([book("r1", "not comparable", reference=True), book("r2", "refuted", profile="seed"),
                          book("r3", "untested"), book("r4", "confirmed", reference=True, claim="000/peak")])
    got = P.choose(books).set_index("claim_id")
    assert got.loc["000/versus/1", "run_id"] == "r2"
    assert got.loc["000/versus/1", "others"] == "1 not comparable, 1 untested"
    assert got.loc["000/peak", "others"] == "—"
    books2 = pd.DataFrame([book("r1", "confirmed", reference=True), book("r9", "confirmed")])
    assert P.choose(books2).iloc[0]["run_id"] == "r1"            # equal verdicts: the reference run


def test_the_page_counts_every_verdict_and_links_the_run():
    chosen = P.choose(pd.DataFrame([book("r2", "refuted", profile="seed")]))
    md = P.render_md(chosen)
    assert "**1 claim**: 0 confirmed, 0 same direction, different size, 0 partly, 1 refuted, 0 not comparable, 0 untested." in md
    assert "[`r2`](r2/http1.html)" in md and "stands in for the write-ups' xKit" in md
    page = P.render_html(chosen)
    assert '<a href="r2/http1.html"><code>r2</code></a>' in page and "<strong>refuted</strong>" in page


def test_a_claim_read_in_a_run_with_a_caveat_is_marked():
    chosen = P.choose(pd.DataFrame([book("r1", "confirmed", reference=True)]))
    md = P.render_md(chosen, {"r1": "its C server used nghttp2", "r9": "unused"})
    assert "[`r1`](r1/http1.html) †" in md and "† `r1`: its C server used nghttp2" in md and "r9" not in md


# the outcome a reading has when the write-up's figure lies inside the interval (httplab.stats.claims.judge_point)
OUTCOME = {"higher": "confirmed", "lower": "refuted"}


def point(run_id: str, name: str, reading: str, ratio: float, profile: str = "seed", comparable: bool = True,
          expected: str = "higher", claim: str = "000/versus/1") -> dict:
    return {"run_id": run_id, "claim_id": claim, "point": name, "reading": reading, "expected": expected,
            "outcome": OUTCOME.get(reading, reading), "seed_ratio": ratio,
            "ratio": ratio, "lo": ratio - 0.05, "hi": ratio + 0.05, "comparable": comparable,
            "text": f"{name}: {reading}", "profile": profile, "reference": False}


def test_a_claim_is_read_across_runs_that_each_read_some_of_its_points():
    """Two runs under the write-up's conditions, each made for one scenario: the claim reads both
    points, each in its own run, and its verdict is theirs together."""
    books = pd.DataFrame([book("rA", "refuted", profile="seed"), book("rB", "refuted", profile="seed"),
                          book("rC", "not comparable")])
    points = pd.DataFrame([point("rA", "c100", "lower", 0.62), point("rA", "c500", "not run", float("nan")),
                           point("rB", "c100", "not run", float("nan")), point("rB", "c500", "higher", 1.2),
                           point("rC", "c100", "higher", 1.9, profile="full", comparable=False),
                           point("rC", "c500", "higher", 1.9, profile="full", comparable=False)])
    got = P.combine(P.choose(books), books, points).iloc[0]
    assert got["verdict"] == "partly" and got["points_read"] == 2 and got["points_agree"] == 1
    assert got["read_in"] == ["rB", "rA"] and got["run_id"] == "rB"      # the newest first (both seed)
    assert got["ours"] == "c100: lower in `rA`; c500: higher in `rB`"
    assert "read across 2 runs" in got["reason"] and got["others"] == "1 not comparable"
    md = P.render_md(pd.DataFrame([got]))
    assert "[`rB`](rB/http1.html), [`rA`](rA/http1.html)" in md


def test_a_point_comes_from_the_best_run_not_from_what_it_reads():
    """Two runs read the same point: the better run's reading is taken (here the one under the
    write-up's conditions), even where the other agrees with the write-up; runs that cannot speak
    to the claim (not comparable) never lend it a point."""
    books = pd.DataFrame([book("rA", "refuted", profile="seed"), book("rB", "confirmed", profile="full")])
    points = pd.DataFrame([point("rA", "c100", "lower", 0.6), point("rA", "c500", "not run", float("nan")),
                           point("rB", "c100", "higher", 1.2, profile="full"), point("rB", "c500", "higher", 1.3, profile="full"),
                           point("rB", "c200", "higher", 1.3, profile="full", comparable=False)])
    got = P.combine(P.choose(books), books, points).iloc[0]
    assert got["ours"] == "c100: lower in `rA`; c500: higher in `rB`; c200: not run as the write-up ran it"
    assert got["verdict"] == "partly" and got["points_read"] == 2


def test_a_claim_read_in_one_run_stays_as_that_run_read_it():
    books = pd.DataFrame([book("rA", "refuted", profile="seed"), book("rB", "untested", profile="seed")])
    points = pd.DataFrame([point("rA", "c100", "lower", 0.6), point("rB", "c100", "not run", float("nan"))])
    chosen = P.choose(books)
    got = P.combine(chosen, books, points)
    assert got.drop(columns="read_in").equals(chosen) and list(got["read_in"]) == [["rA"]]
    assert P.combine(chosen, books, pd.DataFrame())["read_in"].tolist() == [["rA"]]   # data built before the frame
