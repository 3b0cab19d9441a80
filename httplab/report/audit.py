"""Check an exported report against its run's frames: every Δ it prints (`X% [L%, H%]`) must equal,
to the printed digits, a row of data/<run_id>/comparisons (read as a Δ = ratio − 1, a share = ratio,
or a drop = 1 − ratio, in either direction) or an estimates row of the per-run ratio log_cost; and
every Δ that is a comparison must carry its verdict (VERDICT_WORDS: the frame's word for a clear
difference right after it, 'no clear difference (…)', 'inside the noise floor (…)', 'client-bound:
capacity only (…)' around it, or a claim point's reading in brackets after it); and no sentence
about client-bound points or the A/A noise floor may say what the run's data do not support; and
no client-bound req/s may be printed as the server's (without "≥", or a Δ on it worded faster or
slower: client_bound_figures); and
nothing may be mislabelled (mislabels: a peak transfer off the suite's transfer scenarios, a compiler's
version as a server's, a core count that is not the run's, a latency Δ worded faster/slower, a share
printed as a Δ, a geometric mean as ± its larger side, a legend naming a server twice).

    python -m httplab audit reports/<run_id> data/<run_id>
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

NUM = r"[+\u2212-]?\d+(?:\.\d+)?"
TRIPLE = re.compile(rf"({NUM})% \[({NUM})%, ({NUM})%\]")


def _value(text: str) -> tuple[float, int]:
    text = text.replace("\u2212", "-")
    return float(text), len(text.partition(".")[2])


def candidates(data_dir: Path) -> np.ndarray:
    """(ratio, lo, hi) of every comparison, both directions, of every log_cost estimate, and of every
    trend the claim ledger read (a ratio of two leads, which no comparisons row holds)."""
    c = pd.read_parquet(data_dir / "comparisons.parquet")
    c = c[np.isfinite(c["lo"]) & np.isfinite(c["hi"])]
    fwd = c[["ratio", "lo", "hi"]].to_numpy()
    rev = np.column_stack([1 / fwd[:, 0], 1 / fwd[:, 2], 1 / fwd[:, 1]])
    e = pd.read_parquet(data_dir / "estimates.parquet")
    e = e[(e["metric"] == "log_cost") & np.isfinite(e["lo"])]
    return np.vstack([fwd, rev, e[["estimate", "lo", "hi"]].to_numpy(), _trends(data_dir)])


def _trends(data_dir: Path) -> np.ndarray:
    """(ratio, lo, hi) of the ledger's trend readings, as data/<run_id>/claims.parquet prints them."""
    path = data_dir / "claims.parquet"
    if not path.is_file():
        return np.empty((0, 3))
    led = pd.read_parquet(path)
    got = [[1 + _value(x)[0] / 100 for x in m.groups()]
           for text in led.loc[led["kind"] == "trend", "ours"] for m in TRIPLE.finditer(str(text))]
    return np.array(got, dtype=float).reshape(-1, 3)


def matches(printed: tuple[str, str, str], rows: np.ndarray) -> bool:
    """Whether some row, read as a Δ, a share or a drop, prints as these three numbers."""
    (e, d), (lo, _), (hi, _) = (_value(x) for x in printed)
    tol = 0.5 * 10.0 ** -d + 1e-9
    want = np.array([e, lo, hi])
    readings = (100 * (rows - 1), 100 * rows, 100 * (1 - rows[:, [0, 2, 1]]))
    return any(bool(np.any(np.all(np.abs(r - want) <= tol, axis=1))) for r in readings)


def verdict_words() -> tuple[str, ...]:
    """Every word a Δ's verdict may be printed as: the comparisons frame's (each metric's better
    and worse word, and the words of no clear difference), and a claim point's readings and the
    outcomes it is judged to (confirmed, same direction, different size, refuted)."""
    from ..stats.cells import NOT_CLEAR
    from ..stats.claims import OUTCOMES, READINGS
    from ..stats.metrics import METRICS
    words = {w for m in METRICS.values() for w in (m.better, m.worse)} | set(NOT_CLEAR) | set(READINGS) | set(OUTCOMES)
    return tuple(sorted(words, key=len, reverse=True))


# A not-clear Δ is printed inside its verdict: "no clear difference (+1% [−2%, +4%])".
PREFIXES = ("no clear difference (", "inside the noise floor (", "client-bound: capacity only (",
            "client-bound: the gap is at least (", "client-bound: no verdict (")


def has_verdict(line: str, start: int, end: int, words: tuple[str, ...]) -> bool:
    """Whether the Δ at line[start:end] carries its verdict: a prefix before it, or a verdict word in
    what follows it up to the end of its cell or clause ('|', ';' or the next Δ): 'faster',
    '(lower)', 'over <server> (faster)', 'slower (c100)'."""
    if any(line[:start].endswith(p) for p in PREFIXES):
        return True
    rest = line[end:]
    nxt = TRIPLE.search(rest)
    clause = re.split(r"[|;]", rest[:nxt.start()] if nxt else rest, maxsplit=1)[0]
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", clause) for w in words)


def unverdicted_deltas(reports_dir: str | Path, data_dir: str | Path) -> tuple[int, list[str]]:
    """(how many comparison Δs the run's Markdown reports print, those without their verdict). A Δ
    that is a log_cost estimate (a per-run ratio, not a comparison) needs none."""
    d = Path(data_dir)
    e = pd.read_parquet(d / "estimates.parquet")
    e = e[(e["metric"] == "log_cost") & np.isfinite(e["lo"])]
    estimates = e[["estimate", "lo", "hi"]].to_numpy()
    words = verdict_words()
    checked, bad = 0, []
    for md in sorted(Path(reports_dir).glob("*.md")):
        for line in md.read_text().splitlines():
            for m in TRIPLE.finditer(line):
                if len(estimates) and matches(m.groups(), estimates):  # type: ignore[arg-type]
                    continue
                checked += 1
                if not has_verdict(line, m.start(), m.end(), words):
                    bad.append(f"{md.name}: {m.group(0)} has no verdict  in  {line.strip()[:160]}")
    return checked, bad


# ---------------------------------------------------------------- figures without an interval

# A column whose cells are measured figures of this run (by its header) ...
FIGURE_COLUMN = re.compile(r"req/s|Transfer/s|\bP50\b|\bP99|mean latency|CPU-µs/req|\bCPU\b|RSS|^Max$|Memory|"
                           r"capacity|^Requests$|KiB per|Knee|latency", re.I)
# ... unless it holds the write-up's figures, a Δ (checked above, with its verdict), a share or a
# count of runs, a claim's words, or a maximum over the runs the header names as one.
NOT_A_FIGURE = re.compile(r"^Seed|^max |^Δ|\bvs\b|^n\b|share|÷|ratio|Verdict|^Claim|Target|Offered|guess|"
                          r"^Smallest Δ found", re.I)
# An interval ([lo – hi], [lo, hi], ±) or the stated reason a figure has none.
STATED = re.compile(r"\[[^\]]*\d[^\]]*\]|±|max of \d+|medians? of \d+|CI needs|one run|\(n=1\b|client-bound|"
                    r"all runs equal|no interval")
# Where a section says how many runs its figures are of: an n column, "n=5" in a cell, "n = ok runs"
# in its caption.
N_STATED = re.compile(r"\bn ?= ?\w|\(n=\d|\| *n(?: runs| reps| \(| = \d)?[^|]{0,20}\|", re.I)
# ... or the cell itself: "(n=3, CI needs ≥ 5 runs)", "(max of 5 runs)".
OWN_N = re.compile(r"\(n=\d|of \d+ (?:runs?|points?)\b")
DELIM = re.compile(r"^\|[:\- |]+\|$")


def _tables(lines: list[str]) -> list[tuple[int, list[str], list[list[str]], str]]:
    """(line of the header, header cells, rows, its section's text) of each Markdown table."""
    out, section, starts = [], [], []
    heads = [i for i, l in enumerate(lines) if l.startswith("#")] + [len(lines)]
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and DELIM.match(lines[i + 1].strip()):
            cells = lambda l: [c.strip() for c in l.strip().strip("|").split("|")]  # noqa: E731
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            lo = max([h for h in heads if h <= i], default=0)
            hi = min(h for h in heads if h > i)
            out.append((i + 1, cells(lines[i]), [cells(l) for l in lines[i + 2:j]], "\n".join(lines[lo:hi])))
            i = j
        else:
            i += 1
    return out


def unstated_figures(reports_dir: str | Path) -> tuple[int, list[str]]:
    """(how many measured figures the run's Markdown tables print, those printed bare: without an
    interval or a stated reason, or in a section that nowhere says its n)."""
    checked, bad = 0, []
    for md in sorted(Path(reports_dir).glob("*.md")):
        for line_no, header, rows, section in _tables(md.read_text().splitlines()):
            cols = [k for k, h in enumerate(header) if FIGURE_COLUMN.search(h) and not NOT_A_FIGURE.search(h)]
            has_n = bool(N_STATED.search(section))
            for r, row in enumerate(rows, 1):
                for k in cols:
                    cell = row[k] if k < len(row) else ""
                    if not re.search(r"\d", cell):
                        continue
                    checked += 1
                    if not STATED.search(cell):
                        bad.append(f"{md.name}:{line_no + 1 + r}: {header[k]} '{cell}' has no interval or reason")
                    elif not has_n and not OWN_N.search(cell):
                        bad.append(f"{md.name}:{line_no + 1 + r}: {header[k]} '{cell}': its section states no n")
    return checked, bad


def unsupported_sentences(reports_dir: str | Path, data_dir: str | Path) -> list[str]:
    """The sentences of the run's Markdown reports that its data do not support: a client-bound
    finding where the run recorded no load-tool cores (or 'none was client-bound' where some point
    was), an A/A noise floor where no A/A copy ran (or 'no A/A copy' where one did), and a reason for
    the missing copy that is not this run's (the quick profile, under another profile)."""
    import json
    d = Path(data_dir)
    runs = pd.read_parquet(d / "runs.parquet")
    meta = (json.loads((d / "run.json").read_text(encoding="utf-8")).get("meta") or {}) if (d / "run.json").is_file() else {}
    bad = []
    for md in sorted(Path(reports_dir).glob("*.md")):
        bad += _unsupported_in(md, _runs_of_report(runs, md.stem), meta)
    return bad


def _runs_of_report(runs: pd.DataFrame, stem: str) -> pd.DataFrame:
    """The runs a report of that name covers: its suite's parts (all of the run's for a name that is
    no suite)."""
    from ..lab.suites import all_suites
    parts = next((s.parts for s in all_suites() if s.name == stem), None)
    return runs[runs["suite"].isin(parts)] if parts and "suite" in runs else runs


def _unsupported_in(md: Path, runs: pd.DataFrame, meta: dict) -> list[str]:
    from .quality import client_bound_points
    points = client_bound_points(runs)
    recorded = points is not None
    any_bound = recorded and bool((points > 0.5).any())
    has_aa = "aa_of" in runs and runs["aa_of"].notna().any()
    checks = [
        (re.compile(r"None of the \d+ points was client-bound"), lambda: not recorded or any_bound,
         "says no point was client-bound, but " + ("the run recorded no load-tool cores" if not recorded else "some point was")),
        (re.compile(r"\d+ of \d+ points \([^)]*\) the load generator's core was saturated"), lambda: not recorded,
         "names client-bound points, but the run recorded no load-tool cores"),
        (re.compile(r"Two instances of the same server \(the A/A copy\)|A/A: a second, independent instance"),
         lambda: not has_aa, "states an A/A noise floor, but no A/A copy ran"),
        (re.compile(r"No A/A copy ran"), lambda: has_aa, "says no A/A copy ran, but one did"),
        (re.compile(r"No A/A copy ran[^.]*\(the quick profile"), lambda: meta.get("profile") != "quick",
         f"gives the quick profile as the reason, but the run's profile is {meta.get('profile', '?')!r}"),
    ]
    bad = []
    for i, line in enumerate(md.read_text().splitlines(), 1):
        for pattern, wrong, why in checks:
            if pattern.search(line) and wrong():
                bad.append(f"{md.name}:{i}: {why}: {line.strip()[:140]}")
    return bad


# ---------------------------------------------------------------- mislabels

NUMBER_WORDS = {w: i for i, w in enumerate(("no", "one", "two", "three", "four", "five", "six", "seven",
                                            "eight", "nine", "ten", "eleven", "twelve"))}
LATENCY_HEADER = re.compile(r"\bP50\b|\bP99(?:\.9)?\b(?!/)|latency", re.I)
SPEED_WORD = re.compile(r"(?<![\w-])(faster|slower)(?![\w-])")
# a latency named, then within its clause a Δ worded as a speed (or the other way round)
LATENCY_PROSE = re.compile(rf"(?:\bP50\b|\bP99(?:\.9)?\b(?!/)|latency)[^|;.]{{0,80}}?{TRIPLE.pattern}\s*(?:faster|slower)\b"
                           rf"|{TRIPLE.pattern}\s*(?:faster|slower) (?:P50|P99|latency)\b")
PLUS_MINUS = re.compile(r"\d ± \d")
PROSE_PM = re.compile(r"\d ± [\d,.]+\s?\w* (?:\(n=\d+\) )?(?:req/s|MiB/s|GiB/s)")
PEAK_TRANSFER = re.compile(r"Peak transfer: .*\(([^()]*)\)\s*$")
CORES = re.compile(r"[Tt]he load generator has (\w+) cores?\b")
SERVER_CORES = re.compile(r"the server's (\w+) cores? (?:was|were)\b")
SERVER_ROW = re.compile(r"^\|\s*server ([^|]+?)\s*\|\s*([^|]*?)\s*\|\s*$")
TOOL_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|\s*$")
COMPILER_TOOLS = ("gcc", "g++", "clang", "cc", "rustc")


def _top_level(text: str) -> list[str]:
    """A list split at its top-level commas ('C (a), C (a, b)' → two names)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [c for c in [*out, cur.strip()] if c]


def _count(word: str) -> int | None:
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word.lower())


def _transfer_labels(stem: str, runs: pd.DataFrame | None) -> set[str] | None:
    """The labels of the scenarios the report's suite reads its peak transfer on, as the summary
    prints them ('POST /echo 64 KiB, 100 conns'); None when the suite declares none or no runs."""
    from ..lab.suites import all_suites
    from .scenarios import scenario_label
    s = next((x for x in all_suites() if x.name == stem), None)
    scen = ((s.seed_doc if s else {}).get("peak_transfer") or {}).get("scenarios")
    if not scen or runs is None or "scenario" not in runs:
        return None
    rows = runs[runs["scenario"].isin(scen)]
    if "suite" in rows:
        rows = rows[rows["suite"].isin(s.parts)]      # the same scenario id in another suite is another point
    rows = rows.drop_duplicates("scenario")
    return {scenario_label(r, batch_note=False) for _, r in rows.iterrows()} or None


def mislabels_in(md: Path, runs: pd.DataFrame | None = None, meta: dict | None = None) -> list[str]:
    """What a report's text labels wrongly: a peak transfer read off a scenario that makes
    no transfer (GET /ping, or one outside the suite's [seed] peak_transfer scenarios); a compiler's
    version printed as a server's; a core count that is not the run's recorded one; a latency Δ worded
    faster/slower; a Δ printed as a share (unsigned: '65% [58%, 73%] slower' for −35 %); a geometric
    mean printed as ± its larger side; a figure's legend naming one server twice."""
    text = md.read_text(encoding="utf-8")
    lines = text.splitlines()
    bad: list[str] = []

    def flag(i: int, why: str, line: str) -> None:
        bad.append(f"{md.name}:{i}: {why}: {line.strip()[:140]}")

    transfer = _transfer_labels(md.stem, runs)
    compilers = {(m.group(1), v) for line in lines if (m := TOOL_ROW.match(line)) and m.group(1) in COMPILER_TOOLS
                 for v in re.findall(r"\d+(?:\.\d+)+", m.group(2))}
    client_n = server_n = None
    if meta is not None:
        from ..lab.hoststate import parse_cpu_list
        client_n = len(parse_cpu_list(str(meta.get("client_cpus") or "")) or [])
        server_n = len(parse_cpu_list(str(meta.get("server_cpus") or "")) or [])
    for i, line in enumerate(lines, 1):
        if (m := PEAK_TRANSFER.search(line)) and "not measured" not in line:
            label = m.group(1)
            if "GET /ping" in label or (transfer is not None and label not in transfer):
                flag(i, "a peak transfer read off a scenario that is not the suite's transfer", line)
        if m := SERVER_ROW.match(line):
            rest = re.sub(r"built with \S+ \S+", "", m.group(2))
            if any(v in re.findall(r"\d+(?:\.\d+)+", rest) for _, v in compilers):
                flag(i, "a compiler's version printed as the server's", line)
        for pattern, n, what in ((CORES, client_n, "load generator"), (SERVER_CORES, server_n, "server")):
            for c in pattern.finditer(line):
                said = _count(c.group(1))
                if n is not None and said != n:
                    flag(i, f"says the {what} has {c.group(1)} core(s), the run recorded {n or 'none'}", line)
        if LATENCY_PROSE.search(line) and not line.startswith("|"):
            flag(i, "a latency Δ worded faster/slower", line)
        for t in TRIPLE.finditer(line):
            est = t.group(1)
            if est[0] not in "+\u2212-" and float(est.replace("\u2212", "-")) != 0:
                flag(i, f"a Δ printed as a share ({t.group(0)}): a Δ is the ratio − 1, signed", line)
        if PROSE_PM.search(line) and not line.startswith("|"):
            flag(i, "a geometric mean printed as ± its larger side", line)
        for alt in re.finditer(r"of each server \(((?:[^()]|\([^()]*\))*)\)", line):
            names = _top_level(alt.group(1))
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                flag(i, f"a legend names {', '.join(twice)} twice", line)
    for line_no, header, rows, _ in _tables(lines):
        for k, h in enumerate(header):
            latency = bool(LATENCY_HEADER.search(h)) and not re.search(r"req/s", h)
            figure = bool(FIGURE_COLUMN.search(h)) and not NOT_A_FIGURE.search(h)
            for r, row in enumerate(rows, 1):
                cell = row[k] if k < len(row) else ""
                if latency and TRIPLE.search(cell) and SPEED_WORD.search(cell):
                    flag(line_no + 1 + r, f"a latency Δ ({h}) worded faster/slower", cell)
                if figure and PLUS_MINUS.search(cell):
                    flag(line_no + 1 + r, f"a geometric mean ({h}) printed as ± its larger side", cell)
    return bad


def mislabels(reports_dir: str | Path, data_dir: str | Path | None = None) -> list[str]:
    """mislabels_in over the Markdown reports of a folder, with the run's runs frame and meta when
    data_dir is given (a folder without it, reports/ itself, gets the checks that need no data)."""
    import json
    runs = meta = None
    if data_dir is not None:
        d = Path(data_dir)
        runs = pd.read_parquet(d / "runs.parquet") if (d / "runs.parquet").is_file() else None
        if (d / "run.json").is_file():
            meta = json.loads((d / "run.json").read_text(encoding="utf-8")).get("meta") or {}
    return [b for md in sorted(Path(reports_dir).glob("*.md")) for b in mislabels_in(md, runs, meta)]


def bare_client_bound(page_text: str, data_dir: str | Path) -> list[str]:
    """A page's client-bound req/s printed as if the server's (index headlines, report tables): each
    req/s estimate of the run whose runs were mostly client-bound (client_bound_share ≥ ½), printed as
    its figure with its interval (with or without its n), must read "≥ FIGURE" (a lower bound) and
    carry no "faster" or "slower" verdict after it in its clause (up to ';') or, in a table, its cell;
    a line that does either is returned."""
    from .cells import mean_ci_of
    from .fmt import fmt_mean_ci
    est_path = Path(data_dir) / "estimates.parquet"
    if not est_path.is_file():
        return []
    est = pd.read_parquet(est_path)
    if "client_bound_share" not in est:
        return []
    bound = est[(est["metric"] == "req_per_s") & (est["client_bound_share"].fillna(0) >= 0.5)]
    bad = []
    lines = page_text.splitlines()
    for _, row in bound.iterrows():
        ci = mean_ci_of(row)
        if ci.mean is None or not ci.has_interval:
            continue
        figure = fmt_mean_ci(ci, show_n=False)
        for line in lines:
            cells = line.lstrip().startswith("|")
            at = line.find(figure)
            while at >= 0:
                before, after = line[max(0, at - 2):at], line[at + len(figure):]
                scope = after.split("|")[0] if cells else after.split(";")[0]
                if before != "≥ " or re.search(r"\b(faster|slower)\b", scope):
                    bad.append(f"{row['suite']} {row['scenario']} {row['server']}: client-bound req/s printed as "
                               f"the server's: {line.strip()[:200]}")
                    break
                at = line.find(figure, at + 1)
    return bad


def _both_ways(c: pd.DataFrame) -> np.ndarray:
    """(ratio, lo, hi) of comparisons rows, A over B and B over A."""
    fwd = c[["ratio", "lo", "hi"]].to_numpy(dtype=float)
    return np.vstack([fwd, np.column_stack([1 / fwd[:, 0], 1 / fwd[:, 2], 1 / fwd[:, 1]])]) if len(fwd) else fwd


def faster_on_client_bound(reports_dir: str | Path, data_dir: str | Path) -> list[str]:
    """The Δs of the run's Markdown reports worded "faster" or "slower" that are a req/s comparison with
    a client-bound side (and no other comparison of the run): such a Δ is a bound, not a verdict
    (stats.cells.ONE_SIDE_WORDS); each is returned with its line."""
    path = Path(data_dir) / "comparisons.parquet"
    if not path.is_file():
        return []
    c = pd.read_parquet(path)
    if "a_client_bound" not in c:
        return []
    c = c[np.isfinite(c["lo"]) & np.isfinite(c["hi"])]
    on_bound = (c["metric"] == "req_per_s") & (c["a_client_bound"].fillna(False).astype(bool)
                                              | c["b_client_bound"].fillna(False).astype(bool))
    bound, free = _both_ways(c[on_bound]), _both_ways(c[~on_bound])
    if not len(bound):
        return []
    bad = []
    for md in sorted(Path(reports_dir).glob("*.md")):
        for line in md.read_text().splitlines():
            for m in TRIPLE.finditer(line):
                if not re.match(r"\s*(faster|slower)\b", line[m.end():]):
                    continue
                if matches(m.groups(), bound) and not (len(free) and matches(m.groups(), free)):  # type: ignore[arg-type]
                    bad.append(f"{md.name}: {m.group(0)} worded faster/slower on a client-bound req/s  in  "
                               f"{line.strip()[:160]}")
    return bad


def client_bound_figures(reports_dir: str | Path, data_dir: str | Path) -> list[str]:
    """bare_client_bound over each Markdown report of a run, then faster_on_client_bound."""
    bad = [f"{md.name}: {b}" for md in sorted(Path(reports_dir).glob("*.md"))
           for b in bare_client_bound(md.read_text(encoding="utf-8"), data_dir)]
    return bad + faster_on_client_bound(reports_dir, data_dir)


def unmatched_deltas(reports_dir: str | Path, data_dir: str | Path) -> tuple[int, list[str]]:
    """(how many Δs the run's Markdown reports print, those that are no row of its frames)."""
    rows = candidates(Path(data_dir))
    checked, bad = 0, []
    for md in sorted(Path(reports_dir).glob("*.md")):
        for line in md.read_text().splitlines():
            for m in TRIPLE.finditer(line):
                checked += 1
                if not matches(m.groups(), rows):  # type: ignore[arg-type]
                    bad.append(f"{md.name}: {m.group(0)}  in  {line.strip()[:160]}")
    return checked, bad


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    checked, bad = unmatched_deltas(argv[0], argv[1])
    print(f"{checked} Δs checked, {len(bad)} not in the frames")
    print("\n".join(bad))
    n, bare = unverdicted_deltas(argv[0], argv[1])
    print(f"{n} comparison Δs checked, {len(bare)} without their verdict")
    print("\n".join(bare))
    figures, unstated = unstated_figures(argv[0])
    print(f"{figures} measured figures checked, {len(unstated)} without an interval, a reason or an n")
    print("\n".join(unstated))
    wrong = unsupported_sentences(argv[0], argv[1])
    print(f"{len(wrong)} sentences the data do not support")
    print("\n".join(wrong))
    bound = client_bound_figures(argv[0], argv[1])
    print(f"{len(bound)} client-bound req/s printed as the server's (without ≥, or worded faster/slower)")
    print("\n".join(bound))
    labels = mislabels(argv[0], argv[1])
    print(f"{len(labels)} mislabels (a peak transfer off its scenarios, a compiler's version as a server's, "
          "a core count not the run's, a latency Δ worded faster/slower, a share as a Δ, a geometric mean as ±, "
          "a legend naming a server twice)")
    print("\n".join(labels))
    return 1 if bad or bare or unstated or wrong or bound or labels or not checked else 0
