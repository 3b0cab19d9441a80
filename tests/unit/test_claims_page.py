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
    assert "**1 claim**: 0 confirmed, 0 partly, 1 refuted, 0 not comparable, 0 untested." in md
    assert "[`r2`](r2/http1.html)" in md and "stands in for the write-ups' xKit" in md
    page = P.render_html(chosen)
    assert '<a href="r2/http1.html"><code>r2</code></a>' in page and "<strong>refuted</strong>" in page


def test_a_claim_read_in_a_run_with_a_caveat_is_marked():
    chosen = P.choose(pd.DataFrame([book("r1", "confirmed", reference=True)]))
    md = P.render_md(chosen, {"r1": "its C server used nghttp2", "r9": "unused"})
    assert "[`r1`](r1/http1.html) †" in md and "† `r1`: its C server used nghttp2" in md and "r9" not in md
