"""The published schema of the statistics frames (estimates, comparisons), declared with
httplab.tidy.schema's Column and checked by its functions: the code validates a frame when it
writes or reads it, and docs/data.md prints the same tables (a test keeps the two in step)."""
from __future__ import annotations

import pandas as pd

from ..tidy.schema import Column, check, empty_frame, table
from ..tidy.schema import markdown as _markdown


ESTIMATES: tuple[Column, ...] = table("""
run_id             | str   |          | the run (raw/<run_id>/)
suite              | str   |          | http1, h2c, https or languages
scenario           | str   |          | the scenario id (route, method, size, connections, streams)
server             | str   |          | server id; '~aa' marks the A/A copy of a server
metric             | str   |          | req_per_s, lat_p50_us, lat_p99_us, lat_p999_us, tail_ratio (P99/P50 per run), log_cost (h2load: req/s with its log ÷ without, per run), cpu_us_per_req, capacity_rps, cpu_pct, rss_peak_kb (httplab.stats.metrics)
unit               | str   |          | the metric's unit (1/s, µs, ratio, % of a core, KiB)
n                  | int   | runs     | ok runs with a value of the metric
n_failed           | int   | runs     | failed runs of the point (never in the estimate)
estimate           | float | unit     | geometric mean of the runs (mean where a value is ≤ 0)
lo                 | float | unit     | lower bound of the interval; NaN without one (see reason)
hi                 | float | unit     | upper bound of the interval
confidence         | float |          | nominal coverage of the interval (0.95)
method             | str   |          | how the interval was computed (httplab.stats.methods)
reason             | str   |          | why there is no interval ('' when there is one)
client_bound_share | float | fraction | share of the ok runs that were client-bound; NaN if not recorded
noisy_share        | float | fraction | share of the ok runs flagged noisy; NaN if not recorded
""")

COMPARISONS: tuple[Column, ...] = table("""
run_id         | str   |          | the run
kind           | str   |          | server: two servers, same suite and scenario; scenario: one server, two scenarios; suite: two suites (a between-suite comparison, not a controlled one); drift: a suite's last rep against its first over all its points (a_scenario 'all points', a_server 'last rep', b_server 'first rep'), the drift a between-suite Δ also holds
metric         | str   |          | as in estimates
a_suite        | str   |          | A's suite
a_scenario     | str   |          | A's scenario
a_server       | str   |          | A's server
b_suite        | str   |          | B's suite
b_scenario     | str   |          | B's scenario
b_server       | str   |          | B's server
n_a            | int   | runs     | ok runs of A used
n_b            | int   | runs     | ok runs of B used
n_pairs        | int   | reps     | reps in which both A and B have an ok run
paired         | bool  |          | True: paired by rep (t on per-rep log ratios); False: Welch t on logs
ratio          | float |          | A/B: ratio of geometric means (1.18 = A 18 % higher)
lo             | float |          | lower bound of the ratio's interval; NaN without one
hi             | float |          | upper bound of the ratio's interval
p_value        | float |          | two-sided p-value of ratio = 1 (unadjusted)
confidence     | float |          | nominal coverage of the interval
method         | str   |          | the interval's method
reason         | str   |          | why there is no interval ('' when there is one)
noise_floor    | float | fraction | the suite's A/A noise floor for this metric (largest |bound − 1| of the A/A ratios); NaN when no A/A copy ran
verdict        | str   |          | A against B: the metric's better/worse word (faster, slower, cheaper, ...), 'no clear difference' (the interval holds 1), 'below the noise floor' (the interval excludes 1 but lies within ±noise_floor), 'both client-bound' (req/s of two client-bound points measures the load tool), or 'no interval'
a_client_bound | bool  |          | most of A's ok runs were client-bound
b_client_bound | bool  |          | most of B's ok runs were client-bound
mde            | float | fraction | minimum detectable effect: the smallest |ratio − 1| this comparison finds with 80 % power at its reps (from its interval's width and d.f.: httplab.stats.power); NaN without an interval
""")

CLAIMS: tuple[Column, ...] = table("""
run_id             | str   |          | the run
seed               | str   |          | the write-up's number (000-003; docs/glossary.md)
claim_id           | str   |          | <seed>/<kind>/<n>: the claim's place in its suite.toml [seed]
kind               | str   |          | versus (two servers on each row of a table: by default its event loop against its other server), curve (one server, two points), trend (how one server's lead over another moves between two points), peak (an absolute req/s or Transfer/s), rank (seed 003's adjacent languages)
what               | str   |          | the claim, in the lab's words
seed_text          | str   |          | the write-up's words or figure
servers            | str   |          | the run's servers the claim is read on (the C server stands in for the write-ups' xKit)
scenarios          | str   |          | the points (part/scenario) that test it
statistic          | str   |          | what is compared
ours               | str   |          | per point: our ratio − 1 with its 95 % interval, the write-up's, and its outcome (confirmed, same direction, different size, refuted), or why it was not judged (inside the noise floor, too wide to tell, not run, fewer than 5 runs, client-bound: capacity only)
seed_ratio         | str   |          | per point: the write-up's ratio − 1 (a peak: its figure)
ours_over_seed_lo  | float | ratio    | smallest of our ratio ÷ the write-up's over the points read; NaN when none
ours_over_seed_hi  | float | ratio    | largest of the same
seed_conditions    | str   |          | how the write-ups measured
our_conditions     | str   |          | how this run measured
verdict            | str   |          | confirmed, same direction, different size, partly, refuted, not comparable or untested (httplab.stats.claims: sign and size checked)
reason             | str   |          | why: the points read as the write-up's, or what kept the run from speaking to the claim
points             | int   | points   | the claim's points
points_read        | int   | points   | points judged on sign and size (confirmed, same direction, different size or refuted)
points_agree       | int   | points   | points confirmed: the write-up's sign and size
""")

CLAIM_POINTS: tuple[Column, ...] = table("""
run_id             | str   |          | the run
claim_id           | str   |          | the claim (claims.claim_id)
point              | str   |          | the point as the ledger names it (its scenario; both cells where they differ)
reading            | str   |          | higher, lower, same, inside the noise floor, too wide to tell, not run, fewer than 5 runs or client-bound: capacity only
expected           | str   |          | what the write-up's figure says the point should read (higher, lower, same, not lower, not higher, higher or lower at any size)
outcome            | str   |          | the point judged on sign and size: confirmed, same direction, different size, refuted; else the reading that kept it from being judged (httplab.stats.claims.judge_point)
seed_ratio         | float |          | the write-up's ratio (A over B; a trend: its lead at A over its lead at B)
ratio              | float |          | our ratio (A over B); NaN when the point was not read
lo                 | float |          | lower bound of its 95 % interval; NaN without one
hi                 | float |          | upper bound
comparable         | bool  |          | the run measured the claim's servers as the write-up did (its claims row is not 'not comparable' for that reason)
text               | str   |          | the point as the claims row's `ours` prints it
""")

FRAMES: dict[str, tuple[Column, ...]] = {"estimates": ESTIMATES, "comparisons": COMPARISONS, "claims": CLAIMS,
                                         "claim_points": CLAIM_POINTS}


def validate(df: pd.DataFrame, frame: str, where: str = "") -> pd.DataFrame:
    """df unchanged when its columns are exactly the frame's, in order, with the schema's types;
    tidy.schema.SchemaError naming the frame, the place (file) and the column otherwise."""
    return check(df, frame, FRAMES[frame], where)


def empty(frame: str) -> pd.DataFrame:
    """A frame with the schema's columns and no rows."""
    return empty_frame(FRAMES[frame])


def markdown(frame: str) -> str:
    """The frame's schema as a Markdown table (docs/data.md)."""
    return _markdown(FRAMES[frame])


# ---------------------------------------------------------------- docs/data.md
def all_frames() -> dict[str, tuple[Column, ...]]:
    """Every published frame: the tidy frames (runs, latency) and the statistics frames."""
    from ..tidy.schema import FRAMES as TIDY
    return {**TIDY, **FRAMES}


def render_docs(text: str) -> str:
    """`text` (docs/data.md) with the table after each `<!-- schema:NAME -->` marker replaced by
    the current schema of frame NAME (up to the next blank line)."""
    from ..tidy.schema import OPTIONAL_FRAMES
    out, lines, i = [], text.splitlines(), 0
    frames = {**all_frames(), **OPTIONAL_FRAMES}   # and the frames only some runs write
    while i < len(lines):
        out.append(lines[i])
        if lines[i].startswith("<!-- schema:") and lines[i].endswith("-->"):
            name = lines[i][len("<!-- schema:"):-len("-->")].strip()
            out.append(_markdown(frames[name]))
            i += 1
            while i < len(lines) and lines[i].strip():
                i += 1
            continue
        i += 1
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m httplab schema-docs [docs/data.md]`: rewrite the schema tables of the page."""
    import sys
    from pathlib import Path
    args = sys.argv[1:] if argv is None else argv
    doc = Path(args[0] if args else "docs/data.md")
    doc.write_text(render_docs(doc.read_text()))
    print(f"{doc}: schema tables rewritten")
    return 0
