"""The claims summary: every claim of the four write-ups the lab reproduces, on one page
(reports/claims.html and claims.md), each with the verdict of the run that speaks to it best.

It is rendered from the claim ledgers of the current runs (data/<run_id>/claims.parquet, which the
build step writes: httplab.stats.claims); superseded runs (reports/runs.toml) are not read. For each
claim the page takes the run whose reading says most: a verdict (confirmed, partly, refuted) before
"not comparable" before "untested"; among equals, a run under the write-up's conditions (profile
seed), then the reference run (raw/REFERENCE), then the newest. The other current runs' verdicts are
counted beside it.

A claim's points may be read in different runs: a run under the write-up's conditions is often made
for one scenario at a time (the many-core host's calls are short). Each point is a comparison within
one run (two servers, or one server on two points, measured in the same interleaved reps), so a claim
is read across runs point by point (combine): where runs that measured the claim's servers as the
write-up did read different points of it, each point is taken from the run that speaks to it best
(the same order as above, never by what it reads) and the verdict is the points' together.
index.write_index writes this page first and links it at the top of the index.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..lab import suites as lab_suites
from ..lab.servers import pairs_named
from ..stats.claims import OUTCOMES, VERDICTS, outcome_reason, verdict
from ..stats.write import read_stats
from .run_status import read_run_status, RUNS_FILE
from .scenarios import ids_worded

CLAIMS_PAGE_MD = "claims.md"
_RANK = {"confirmed": 0, "same direction, different size": 0, "partly": 0, "refuted": 0, "not comparable": 1, "untested": 2}


def collect(reports_dir: Path, raw_root: Path, data_root: Path) -> pd.DataFrame:
    """Every current run's ledger, one frame, with the run's profile and whether it is the reference."""
    status = read_run_status(reports_dir / RUNS_FILE)
    ref = (raw_root / "REFERENCE").read_text(encoding="utf-8").strip() if (raw_root / "REFERENCE").is_file() else ""
    frames = []
    for d in sorted(data_root.glob("*/claims.parquet")):
        run_id = d.parent.name
        if run_id in status and status[run_id].status == "superseded":
            continue
        book = read_stats(d.parent, "claims")
        run_json = d.parent / "run.json"     # the run's meta.json as the build step kept it
        meta = (json.loads(run_json.read_text(encoding="utf-8")).get("meta") or {}) if run_json.is_file() else {}
        frames.append(book.assign(profile=str(meta.get("profile", "")), reference=run_id == ref))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def choose(books: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: the run that speaks to it best (module docstring), with `others`: the
    other current runs' verdicts counted."""
    if books.empty:
        return books
    b = books.assign(_rank=books["verdict"].map(_RANK), _seed=(books["profile"] != "seed").astype(int),
                     _ref=(~books["reference"]).astype(int))
    b = b.sort_values(["claim_id", "_rank", "_seed", "_ref", "run_id"], ascending=[True, True, True, True, False])
    out = []
    for _, g in b.groupby("claim_id", sort=False):
        best, rest = g.iloc[0], g.iloc[1:]
        counted = rest["verdict"].value_counts()
        others = ", ".join(f"{int(counted[v])} {v}" for v in VERDICTS if v in counted) or "—"
        out.append({**best.drop(labels=["_rank", "_seed", "_ref"]).to_dict(), "others": others})
    order = {c: i for i, c in enumerate(books.drop_duplicates("claim_id")["claim_id"])}
    return pd.DataFrame(out).sort_values("claim_id", key=lambda s: s.map(order)).reset_index(drop=True)


def collect_points(data_root: Path, books: pd.DataFrame) -> pd.DataFrame:
    """The point readings (data/<run_id>/claim_points.parquet) of the runs in `books`, with each
    run's profile and whether it is the reference; data built before the frame existed gives none."""
    frames = []
    if books.empty:
        return pd.DataFrame()
    for run_id, g in books.groupby("run_id", sort=True):
        if (data_root / str(run_id) / "claim_points.parquet").is_file():
            frames.append(read_stats(data_root / str(run_id), "claim_points")
                          .assign(profile=g["profile"].iloc[0], reference=bool(g["reference"].iloc[0])))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _run_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in the order that says which run speaks best: the write-up's conditions, the reference
    run, the newest."""
    return (frame.assign(_seed=(frame["profile"] != "seed").astype(int), _ref=(~frame["reference"]).astype(int))
            .sort_values(["_seed", "_ref", "run_id"], ascending=[True, True, False], kind="stable")
            .drop(columns=["_seed", "_ref"]))


def combine(chosen: pd.DataFrame, books: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """`chosen` (one row per claim) with a claim re-read across runs where the runs that measured it
    as the write-up did read its points in two runs or more (module docstring): each point from the
    best such run that read it, the verdict over all of them. `read_in` lists the runs read."""
    out = chosen.assign(read_in=chosen["run_id"].map(lambda r: [r])) if not chosen.empty else chosen
    if chosen.empty or points.empty:
        return out
    rows = []
    for row in out.to_dict("records"):
        mine = points[points["claim_id"] == row["claim_id"]]
        read_ok = mine["outcome"].isin(OUTCOMES)
        readable = mine[mine["comparable"].astype(bool) & read_ok]
        best = _run_order(readable).drop_duplicates("point")
        if best["run_id"].nunique() < 2:
            rows.append(row)
            continue
        names = list(dict.fromkeys(mine["point"]))          # every point, in the ledger's order
        by_point = best.set_index("point")
        outcomes, wanted, texts = [], [], []
        for name in names:
            if name in by_point.index:
                p = by_point.loc[name]
                outcomes.append(str(p["outcome"]))
                wanted.append(str(p["expected"]))
                texts.append(f"{p['text']} in `{p['run_id']}`")
            else:
                # read in no run that measured it as the write-up did: why, as the best such run says
                # (a run under other conditions never lends a point its reading)
                alike = mine[(mine["point"] == name) & mine["comparable"].astype(bool)]
                if alike.empty:
                    outcomes.append("not run")
                    wanted.append(str(mine[mine["point"] == name]["expected"].iloc[0]))
                    texts.append(f"{name}: not run as the write-up ran it")
                else:
                    unread = _run_order(alike).iloc[0]
                    outcomes.append(str(unread["outcome"]))
                    wanted.append(str(unread["expected"]))
                    texts.append(str(unread["text"]))
        v, n_read, n_agree = verdict(outcomes)
        runs = list(dict.fromkeys(_run_order(best)["run_id"]))
        reason = (outcome_reason(outcomes, wanted)
                  + f"; read across {len(runs)} runs that measured it as the write-up did, each point in one run")
        alone = books[(books["claim_id"] == row["claim_id"]) & ~books["run_id"].isin(runs)]["verdict"].value_counts()
        others = ", ".join(f"{int(alone[x])} {x}" for x in VERDICTS if x in alone) or "—"
        rows.append({**row, "run_id": runs[0], "read_in": runs, "verdict": v, "reason": reason,
                     "ours": "; ".join(texts), "points_read": n_read, "points_agree": n_agree, "others": others})
    return pd.DataFrame(rows)


def _suite_of_seed() -> dict[str, str]:
    return {str(s.seed_doc.get("number")): s.name for s in lab_suites.seed_suites()}


def _titles() -> dict[str, str]:
    return {str(s.seed_doc.get("number")): str(s.seed_doc.get("title", "")) for s in lab_suites.seed_suites()}


INTRO = ("Every claim of the four write-ups the lab reproduces, with the verdict of the current run that "
         "speaks to it best. **The lab's C server stands in for the write-ups' xKit**, whose source the lab "
         "cannot build: a claim about xKit is read on the C server. Write-ups 000-002 ran every server on one "
         "12-core laptop, their event loop on one thread (003 does not state its hardware; server and client shared one machine); a claim about a server that spreads over cores "
         "(a language runtime, a pool of threads or processes) can only be judged by a run under the same conditions "
         "(`run_all.sh --seed-conditions`, 16-core or larger host), and reads **not comparable** elsewhere "
         "(the reason says what the run would have read). A point is read off the run's comparisons frame: "
         "higher or lower when its 95 % interval excludes no change, same when it holds it. Then it is judged on its "
         "size as well as its sign: a claimed difference is **confirmed** when the write-up's figure lies inside our "
         "interval (or our figure over the write-up's is within ±10 %, the equivalence margin), **same direction, "
         "different size** when the sign agrees and the figure lies outside, **refuted** when the sign is opposite or "
         "no change is clear; a claim of no difference (\"nearly flat\") is an equivalence test, confirmed when the "
         "whole interval lies within ±10 %, refuted when it lies wholly outside (docs/method.md, \"Verdicts that "
         "check the size\"). A claim is confirmed when every point it could judge is, same direction, different "
         "size when none is refuted, refuted when all are, **partly** for a mix, **untested** when no point could "
         "be judged (not run, fewer than 5 runs, too wide to tell, "
         "client-bound). Absolute figures (the peaks: req/s, transfer) measure the machine and are never comparable. "
         "A claim about how a lead moves (a trend) is read as the ratio of the two leads, paired by rep. "
         "Where runs that measured a claim's servers as the write-up did read different points of it, the claim is "
         "read across them, each point in one run (the run named beside it), and the verdict is the points' together: "
         "each point is a comparison within its own run, so no figure is carried from one run to another.")


def render_md(chosen: pd.DataFrame, caveats: dict[str, str] | None = None) -> str:
    """The page; `caveats`: run id -> its caveat (reports/runs.toml), marked † on every claim read in
    that run and given in full below the tables."""
    caveats = caveats or {}
    counts = chosen["verdict"].value_counts() if not chosen.empty else pd.Series(dtype=int)
    lines = ["# The write-ups' claims and what the lab's runs say", "", INTRO, "",
             f"**{len(chosen)} claim{'' if len(chosen) == 1 else 's'}**: " + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS) + ".", ""]
    suites, titles = _suite_of_seed(), _titles()
    for seed, g in chosen.groupby("seed", sort=True):
        lines += [f"## Seed {seed}: {titles.get(str(seed), '')}", "",
                  "| Claim | The write-up | Verdict | Read in run | What it read (ratio − 1, 95 % CI) | Why | Other current runs |",
                  "|---|---|---|---|---|---|---|"]
        for r in g.itertuples():
            read_in = getattr(r, "read_in", None) or [r.run_id]
            link = ", ".join(f"[`{run}`]({run}/{suites.get(str(seed), '')}.html)" + (" †" if run in caveats else "")
                             for run in read_in)
            cells = [r.what, r.seed_text, f"**{r.verdict}**", link, ids_worded(pairs_named(str(r.ours))), r.reason, r.others]
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    read = chosen["read_in"] if "read_in" in chosen else chosen["run_id"].map(lambda r: [r])
    used = [run for run in dict.fromkeys(x for runs in read for x in runs) if run in caveats]
    if used:
        lines += ["## Caveats of the runs read", ""]
        lines += [f"† `{run}`: {caveats[run]}" for run in used]
        lines.append("")
    return "\n".join(lines)


def render_html(chosen: pd.DataFrame, caveats: dict[str, str] | None = None) -> str:
    """The same page as HTML: its Markdown rendered by mistune (GitHub tables), in a plain page."""
    import mistune
    body = mistune.create_markdown(escape=True, plugins=["table"])(render_md(chosen, caveats))
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>The write-ups' claims</title>\n"
            "<style>body{font-family:sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}</style></head>\n<body>"
            "<p><a href=\"index.html\">← all reports</a></p>\n" + str(body) + "</body></html>\n")


def chosen_claims(reports_dir: Path, raw_root: Path, data_root: Path) -> pd.DataFrame:
    """One row per claim with the reading of the current runs that speak to it best (choose, then
    combine across runs): the page's rows, and the index's write-ups' headlines."""
    books = collect(reports_dir, raw_root, data_root)
    return combine(choose(books), books, collect_points(data_root, books))


def write_claims_page(reports_dir: Path, raw_root: Path, data_root: Path,
                      chosen: pd.DataFrame | None = None) -> list[Path]:
    """reports/claims.md and claims.html from the current runs' ledgers (`chosen`: chosen_claims'
    frame, when the caller has it); nothing when no run has one."""
    chosen = chosen_claims(reports_dir, raw_root, data_root) if chosen is None else chosen
    if chosen.empty:
        return []
    caveats = {run: st.caveat for run, st in read_run_status(reports_dir / RUNS_FILE).items() if st.caveat}
    md, page = reports_dir / CLAIMS_PAGE_MD, reports_dir / "claims.html"
    md.write_text(render_md(chosen, caveats) + "\n", encoding="utf-8")
    page.write_text(render_html(chosen, caveats), encoding="utf-8")
    return [md, page]
