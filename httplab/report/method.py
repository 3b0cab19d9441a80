"""A report's method in one screen, after its findings: the load tools' command lines exactly as
run (read back from raw/, paths made repository-relative), durations, warm-up, reps and order,
pinning, the host's state, and the interval method with its measured coverage."""
from __future__ import annotations

import re
import textwrap

import pandas as pd

from ..stats import MIN_RUNS
from ..lab.servers import contestants, display_name
from ..tidy.rawrun import server_warmups, suite_params
from .engine import ReportContext
from .method_words import stand_in_sentence
from .quality import no_aa_reason

# An absolute path into a checkout ("/home/x/lab/scripts/lua/report.lua"): only the part from the
# lab's own folders on is kept, so a report never shows the machine that made it.
_ABS = re.compile(r"(?<![\w.])/\S*?/(scripts|build|servers|raw)/")
_HOST_PORT = re.compile(r"127\.0\.0\.1:\d+")



def relative(cmd: str) -> str:
    """A command line with absolute lab paths made repository-relative and the port shown as PORT
    (each server has its own; the rest of the line is the same)."""
    return _HOST_PORT.sub("127.0.0.1:PORT", _ABS.sub(r"\1/", cmd))


def commands(ctx: ReportContext) -> list[tuple[str, str]]:
    """(scenario, command) of each scenario's first finished rep, for the suite's first contestant
    (else its first server): the load tool's line exactly as run (r<rep>.run.json), as the part's
    facts hold it (data/<run_id>/run.json), in the order the points ran."""
    runs = ctx.runs
    if runs.empty:
        return []
    present = sorted(set(runs["server"]))
    cs = contestants(present)
    server = cs[0] if cs else present[0]
    cmds = ctx.run.part_facts(ctx.suite).get("commands", {}).get(server, {})
    sub = runs[(runs["server"] == server)].sort_values(["start_utc", "rep"]) if "start_utc" in runs else \
        runs[(runs["server"] == server)].sort_values(["scenario", "rep"])
    return [(str(s), relative(cmds[str(s)])) for s in dict.fromkeys(sub["scenario"]) if cmds.get(str(s))]


# The values that vary between a suite's scenarios of one shape (connections, sizes, streams).
_VARYING = re.compile(r"(BODY_SIZE=|PIPELINE_DEPTH=|-c |-m |size=|/x)(\d+)")


def shapes(cmds: list[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """The commands grouped by shape (equal once connections, sizes and depths are masked): per
    shape the scenarios it ran and the first of its command lines, in the order first seen."""
    groups: dict[str, tuple[list[str], str]] = {}
    for scenario, cmd in cmds:
        key = _VARYING.sub(lambda m: m.group(1) + "N", cmd)
        groups.setdefault(key, ([], cmd))[0].append(scenario)
    return list(groups.values())


def _wrapped(scenarios: list[str], cmd: str, width: int = 96) -> str:
    lines = textwrap.wrap(cmd, width - 4, break_long_words=False, break_on_hyphens=False)
    head = f"# {scenarios[0]}" + (f" (and, with their own values, {', '.join(scenarios[1:])})" if scenarios[1:] else "")
    return "\n".join(textwrap.wrap(head, width, subsequent_indent="#   ")) + "\n" + " \\\n    ".join(lines)


def _host_line(meta: dict) -> str:
    host, st = meta.get("host") or {}, meta.get("host_state") or {}
    kernel = (st.get("kernel") or {}).get("release") or host.get("kernel", "?")
    smt = (st.get("smt") or {}).get("active")
    gov = {v for v in (st.get("governor") or {}).values() if v}
    mem = (st.get("memory") or {}).get("total_kb")
    load = (st.get("loadavg") or {}).get("1m")
    parts = [f"{host.get('cpu_model', '?')}, {host.get('cores', '?')} cores", f"kernel {kernel}"]
    if mem:
        parts.append(f"{mem / 2**20:.0f} GiB RAM")
    parts.append("SMT " + ("on" if smt else "off" if smt is False else "unknown"))
    parts.append("governor " + (", ".join(sorted(gov)) if gov else "not exposed (virtual machine)"))
    if st.get("thp"):
        parts.append(f"THP {st['thp']}")
    if load is not None:
        parts.append(f"load average {load:.2f} at the start")
    return "; ".join(parts)


def _blocks_words(blocks: str | None) -> str:
    """How a rep's points were grouped (meta params.blocks; runs made before it have none: server)."""
    if blocks == "scenario":
        return ("scenario by scenario: every server ran a scenario before any ran the next, each started "
                "fresh for it and passing the verify gate first, so that the two runs of a comparison are "
                "seconds apart")
    if blocks == "sliced":
        return ("interleaved: every server of a rep started fresh and passing the verify gate first, then "
                "up at once, and each scenario's load tools given the client CPUs in turn in short slices "
                "until each had run the measured duration, so that the two runs of a comparison share the "
                "same seconds; rates and cost are over the seconds each tool ran, and the latency of wrk's "
                "points is not measured (its requests in flight waited out the others' slices). Absolute "
                "req/s read about 5 % below contiguous runs of the same servers (CPU per request does not "
                "move): a factor common to every server, so the ratios between servers hold, but compare an "
                "absolute rate with another sliced run's, not with a server-block run's (docs/method.md, "
                "\"The level shift at 32 reps\": HTTP/1.1 at 100 connections, shifts of 1-9 %, median 5 %)")
    return "(each server started fresh and passed the verify gate first)"


def _latency_reps_words(p: dict) -> str:
    """Which reps had h2load's latency run (--latency-every N: reps 1, 1+N, ...); "" for every rep."""
    every, reps = int(p.get("latency_every") or 1), int(p.get("reps") or 0)
    if every <= 1 or reps <= 0:
        return ""
    chosen = [str(r) for r in range(1, reps + 1, every)]
    if len(chosen) == 1:
        return f", in rep 1 only (one rep in {every}: its latency figures rest on that rep)"
    listed = ", ".join(chosen[:-1]) + f" and {chosen[-1]}"
    return f", in reps {listed} only (one rep in {every}: its latency figures rest on {len(chosen)} reps)"


def _longer_warmups_words(meta: dict, servers: list[str]) -> str:
    """' (2 s for SERVER, SERVER: ...)' for the servers of the report warmed longer than the run's
    params say (their manifests' min_warmup_s); '' when none."""
    own = {s: w for s, w in server_warmups(meta).items() if s in servers}
    if not own:
        return ""
    groups: dict[float, list[str]] = {}
    for s, w in sorted(own.items()):
        groups.setdefault(w, []).append(s)
    listed = "; ".join(f"{w:g} s for {', '.join(names)}" for w, names in sorted(groups.items()))
    return f" ({listed}: runtimes that compile or specialise their code as they serve)"


def settings_table(ctx: ReportContext) -> pd.DataFrame:
    """Setting | value: the run's durations, reps, order, pinning, host and statistics."""
    meta = ctx.run.meta
    p = suite_params(meta, ctx.suite)
    tools = sorted(set(ctx.runs["server"])) if not ctx.runs.empty else []
    rows = [
        ("Measured run", f"{p.get('duration_s', '?')} s after {p.get('warmup_s', '?')} s of unrecorded warm-up"
         + _longer_warmups_words(meta, tools)
         + (f"; h2load's latency run (with its per-request log) {p['latency_run_s']} s"
            + (f" after {p['latency_warmup_s']} s of h2load's own warm-up (the clients connect in it)"
               if "latency_warmup_s" in p else "") + _latency_reps_words(p) if "latency_run_s" in p
            and not ctx.runs.empty and (ctx.runs["protocol"] == "h2").any() else "")),
        ("Repetitions", f"{p.get('reps', '?')} reps; within each, the servers in a seeded random balanced "
                        "order " + _blocks_words(p.get("blocks"))),
        ("A/A copy", "yes: a second instance of the contestant on the headline scenarios (the noise floor)"
         if p.get("aa") else f"no: {no_aa_reason(meta).removeprefix('no A/A copy ran ').strip('()')}; no measured noise floor"),
        ("Pinning", f"server on CPU {meta.get('server_cpus', '?')}, load generator on CPU "
                    f"{meta.get('client_cpus', '?')} ({meta.get('client_threads', '?')} load-tool thread per client CPU), taskset"),
        ("Host", _host_line(meta)),
        ("Servers", ", ".join(display_name(s) for s in tools if "~" not in s) or "—"),
        ("Stand-in", stand_in_sentence()),
        ("Intervals", f"{ctx.confidence:.0%} t intervals on the log scale (figures: geometric means; Δ: "
                      f"ratios paired by rep); none below {MIN_RUNS} runs"),
        ("Their coverage", _coverage_line()),
    ]
    df = pd.DataFrame(rows, columns=["Setting", "Value"])
    df.attrs["title"] = "Method in one screen"
    return df


def detectable_table(ctx: ReportContext) -> pd.DataFrame:
    """Per scenario: how large a server-vs-server Δ this run could find (the comparisons frame's mde:
    80 % power at the reps that ran), the median and the largest over the scenario's server pairs,
    on req/s and on CPU-µs per request."""
    from .scenarios import scenario_labels
    c = ctx.stats.comparisons
    parts = set(ctx.run.suites["suite"]) if not ctx.run.suites.empty else {ctx.suite}
    if c.empty or "mde" not in c:
        return pd.DataFrame()
    c = c[(c["kind"] == "server") & c["a_suite"].isin(parts) & c["mde"].notna()
          & ~c["a_server"].str.contains("~", regex=False) & ~c["b_server"].str.contains("~", regex=False)]
    if c.empty:
        return pd.DataFrame()
    labels = scenario_labels(ctx.runs)

    def cell(g: pd.DataFrame) -> str:
        if g.empty:
            return "—"
        return (f"±{100 * g['mde'].median():.0f} % / ±{100 * g['mde'].max():.0f} % "
                f"(median / largest of {len(g)} pair{'' if len(g) == 1 else 's'})")
    rows = []
    for (suite, scenario), g in c.groupby(["a_suite", "a_scenario"], sort=False):
        rows.append({"Scenario": labels.get(scenario, scenario) + (f" ({suite})" if len(parts) > 1 else ""),
                     "n (pairs of reps)": f"{int(g['n_pairs'].min())}–{int(g['n_pairs'].max())}"
                     if g["n_pairs"].min() != g["n_pairs"].max() else str(int(g["n_pairs"].min())),
                     "Smallest Δ found, req/s": cell(g[g["metric"] == "req_per_s"]),
                     "Smallest Δ found, CPU-µs/req": cell(g[g["metric"] == "cpu_us_per_req"])})
    df = pd.DataFrame(rows)
    df.attrs["title"] = "What this run could detect"
    df.attrs["caption"] = ("The minimum detectable effect of each server-vs-server comparison: the smallest "
                           "true difference its 95 % interval would have found (excluded no change) in 80 % of "
                           "runs like this one, from the interval's width and degrees of freedom "
                           "(httplab.stats.power; checked by simulation). A 'no clear difference' says only that "
                           "a difference, if any, is likely smaller than this.")
    return df


def _coverage_line() -> str:
    from ..stats.coverage import committed_table
    t = committed_table()
    t = t[(t["interval"] != "ranking_holm") & (t["n"] >= MIN_RUNS)]
    if t.empty:
        return "not measured"
    return (f"{100 * t['coverage'].min():.1f}–{100 * t['coverage'].max():.1f} % of {int(t['trials'].iloc[0]):,} "
            f"simulated samples per case held the truth at n ≥ {MIN_RUNS} (normal and lognormal noise, "
            "equal and 3:1 spreads, and the interleaved runs' own noise; table in the method notes)")


def method_markdown(ctx: ReportContext) -> str:
    """The section: the settings table, then the command lines as run."""
    from .tables import to_markdown
    cmds = commands(ctx)
    parts = ["## Method", "", to_markdown(settings_table(ctx)), ""]
    detect = detectable_table(ctx)
    if not detect.empty:
        parts += [to_markdown(detect), ""]
    if cmds:
        who = contestants(sorted(set(ctx.runs["server"])))
        parts += [f"The load tool's command lines exactly as run against "
                  f"{display_name(who[0]) if who else 'the first server'} (rep 1), one per shape; the other "
                  "scenarios of a shape differ only in the values named, the other servers only in the port:",
                  "", "```", "\n".join(_wrapped(sc, c) for sc, c in shapes(cmds)), "```"]
    return "\n".join(parts)
