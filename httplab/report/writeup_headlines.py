"""The write-ups' headlines beside the lab's, for the index's first screen: for each write-up the
lab reproduces, its lead claim (the first claim of its summary, the ledger's first row of that
write-up), what the lab's current runs read on it (the point of the suite's headline scenario where
that point was read, else the first point that was), the claim's verdict with its reason, and the
count of all that write-up's claims by verdict, linking the claims page for the rest.

Why the lead claim only: the first screen has room for one line per write-up; the claims page holds
every claim with every point. The rows come from claims_page.chosen_claims (the run that speaks to
each claim best), so the index and the claims page can never disagree. Pure functions of that frame.
"""
from __future__ import annotations

import html
import re

import pandas as pd

from ..lab import suites as lab_suites
from ..lab.servers import pairs_named
from ..stats.claims import VERDICTS
from .scenarios import ids_worded

READ_MARK = "vs the write-up's"   # what a point's text holds once it was read (stats.claims.read_point)


def headline_scenario(seed: str) -> str:
    """The headline scenario of the suite that mirrors write-up `seed` ('' when none)."""
    for s in lab_suites.seed_suites():
        if str(s.seed_doc.get("number")) == str(seed):
            return s.headline.get(s.name, "")
    return ""


def lead_point(ours: str, scenario: str) -> str:
    """The point of a claim's reading to show: the headline scenario's when it was read, else the
    first point that was read, else the first point (whatever it says: not run, too wide …)."""
    points = [p.strip() for p in str(ours or "").split("; ") if p.strip()]
    read = [p for p in points if READ_MARK in p]
    mine = [p for p in read if scenario and p.split(":", 1)[0].split(" ", 1)[0] == scenario]
    return (mine or read or points or ["—"])[0]


def _code(escaped: str) -> str:
    """`run id` spans of the ledger's Markdown as HTML code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def short_reason(reason: str) -> str:
    """A reason's first clause: up to its first ': ' (the rest is on the claims page)."""
    return str(reason or "").split(": ", 1)[0]


def seed_counts(chosen: pd.DataFrame, seed: str) -> str:
    """'20 claims: 1 confirmed, 3 refuted, 16 not comparable' for one write-up."""
    mine = chosen[chosen["seed"].astype(str) == str(seed)]
    counts = mine["verdict"].value_counts()
    parts = [f"{int(counts[v])} {v}" for v in VERDICTS if v in counts]
    return f"{len(mine)} claim{'' if len(mine) == 1 else 's'}: " + ", ".join(parts)


def headlines_table(chosen: pd.DataFrame, titles: dict[str, str] | None = None,
                    claims_href: str = "claims.html") -> str:
    """The section ('' when no run has a ledger): a row per write-up, in the ledger's order."""
    if chosen is None or chosen.empty:
        return ""
    titles = titles if titles is not None else {str(s.seed_doc.get("number")): str(s.seed_doc.get("title", ""))
                                                for s in lab_suites.seed_suites()}
    rows = []
    for seed, g in chosen.groupby(chosen["seed"].astype(str), sort=True):
        lead = g.iloc[0]
        point = ids_worded(pairs_named(lead_point(str(lead["ours"]), headline_scenario(seed))))
        why = short_reason(str(lead["reason"]))
        rows.append(
            f"<tr><th>{html.escape(seed)} {html.escape(titles.get(seed, ''))}</th>"
            f"<td>{html.escape(str(lead['what']))}: <em>{html.escape(str(lead['seed_text']))}</em></td>"
            f"<td>{_code(html.escape(point))}</td>"
            f"<td><strong>{html.escape(str(lead['verdict']))}</strong>"
            + (f"<br><span class=\"why\">{html.escape(why)}</span>" if why else "") + "</td>"
            f"<td>{html.escape(seed_counts(chosen, seed))}</td></tr>")
    return ("<h2>The write-ups' headlines beside ours</h2>\n<p>Each write-up's lead claim, what the lab's current "
            "runs read on it (ratio − 1 with its 95 % interval, against the write-up's own figure) and the verdict, "
            "which checks the size as well as the sign; a claim about a server the write-up ran on many cores is "
            "<em>not comparable</em> with a run that pinned it to one. Every claim, with every point, is on "
            f"<a href=\"{html.escape(claims_href)}\">the claims page</a>.</p>\n"
            "<table class=\"headlines\"><thead><tr><th>Write-up</th><th>Its headline</th><th>What the lab read</th>"
            "<th>Verdict</th><th>All its claims</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>")
