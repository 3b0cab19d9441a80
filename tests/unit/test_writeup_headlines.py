"""The index's "write-ups' headlines beside ours" (httplab.report.writeup_headlines): one row per
write-up with its lead claim, the point the lab read on it, the verdict and the count of all its
claims, from the same rows as the claims page, so the two never disagree."""
from __future__ import annotations

import html
import re
from pathlib import Path

from httplab.report.claims_page import chosen_claims
from httplab.report.writeup_headlines import headlines_table, lead_point, seed_counts, short_reason
from httplab.stats.claims import VERDICTS

ROOT = Path(__file__).resolve().parents[2]


def test_the_lead_point_is_the_headline_scenarios_when_read():
    ours = ("get_ping_c50: not run; get_ping_c100: −38% [−46%, −30%] vs the write-up's +18% (refuted); "
            "get_ping_c500: −61% [−64%, −57%] vs the write-up's +24% (refuted)")
    assert lead_point(ours, "get_ping_c100").startswith("get_ping_c100: −38%")
    assert lead_point(ours, "h2_get_ping_c100").startswith("get_ping_c100: −38%")   # the first read one
    assert lead_point("get_ping_c50: not run", "get_ping_c100") == "get_ping_c50: not run"
    assert lead_point("get_root_c100 (go vs node): +11% [+1%, +21%] vs the write-up's +39% (x)",
                      "get_root_c100").startswith("get_root_c100 (go vs node)")
    assert short_reason("go ran on 1 core here, unpinned on the write-up's machine: only a run …") == \
        "go ran on 1 core here, unpinned on the write-up's machine"


def test_the_committed_claims_give_one_row_per_write_up_that_agrees_with_the_claims_page():
    chosen = chosen_claims(ROOT / "reports", ROOT / "raw", ROOT / "data")
    table = headlines_table(chosen)
    rows = re.findall(r"<tr><th>(\d{3}) ", table)
    assert rows == sorted(set(chosen["seed"].astype(str))) and len(rows) == 4, rows
    for seed in rows:
        lead = chosen[chosen["seed"].astype(str) == seed].iloc[0]
        assert html.escape(str(lead["seed_text"])) in table
        assert seed_counts(chosen, seed) in table
    # every verdict printed is one of the ledger's words, and the counts add up to the page's
    printed = re.findall(r"<td><strong>([^<]+)</strong>", table)
    assert printed and set(printed) <= set(VERDICTS), printed
    total = sum(int(m) for m in re.findall(r"<td>(\d+) claims?:", table))
    assert total == len(chosen)
    md = (ROOT / "reports" / "claims.md").read_text(encoding="utf-8")
    assert f"**{len(chosen)} claims**" in md


def test_no_ledger_no_section():
    import pandas as pd
    assert headlines_table(pd.DataFrame()) == ""
