"""The http1 suite's report code: its tables' layout (the seed 000 write-up's tables, defined on
the scenarios' columns, not on their names). The notebook (report.ipynb) does the rest with the
generic engine (httplab.report)."""
from __future__ import annotations

import pandas as pd

from httplab.report.scenarios import Section, common_connections
from httplab.stats.select import select


def table_layout(runs: pd.DataFrame) -> list[Section]:
    """Seed 000's tables, defined on scenario columns (not on scenario names):
    GET /ping by connections; GET /echo by size at 100 connections; POST /echo by body size
    (with Transfer/s); pipelined GET /ping. Connections for the /echo tables: 100 when present,
    else the most common value in the data."""
    not_pipelined = {"pipeline": lambda s: s <= 1}
    get_echo = select(runs, {"method": "GET", "route": "/echo", **not_pipelined})
    post_echo = select(runs, {"method": "POST", "route": "/echo", **not_pipelined})
    c_get, c_post = common_connections(get_echo), common_connections(post_echo)
    pipelined = select(runs, {"pipeline": lambda s: s > 1})
    depths = sorted(int(d) for d in pipelined["pipeline"].unique()) if not pipelined.empty else []
    depth_txt = "/".join(str(d) for d in depths) or "N"
    return [
        Section("ping", "GET /ping — minimal response", {"method": "GET", "route": "/ping", **not_pipelined},
                "connections", "Connections"),
        Section("echo_get", f"GET /echo — response size ({c_get or 100} connections)",
                {"method": "GET", "route": "/echo", "connections": c_get, **not_pipelined},
                "size_bytes", "Response size", fixed={"connections": c_get}),
        Section("echo_post", f"POST /echo — request body ({c_post or 100} connections)",
                {"method": "POST", "route": "/echo", "connections": c_post, **not_pipelined},
                "size_bytes", "Body size", transfer=True, fixed={"connections": c_post}),
        Section("pipeline", f"GET /ping pipelined ({depth_txt} deep)",
                {"route": "/ping", "pipeline": lambda s: s > 1}, "connections", "Connections",
                note="wrk records one latency sample per pipelined batch, so latency here is per "
                     "batch, not per request."),
    ]


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve")


def _cores_words(n: int) -> str:
    """'one core', 'four cores', '16 cores'."""
    word = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else f"{n:,}"
    return f"{word} core" + ("" if n == 1 else "s")


def cost_note(ctx) -> str:
    """The cost section's opening sentences, with the load generator's and the server's cores as the
    run recorded them (meta.json's client_cpus and server_cpus), not as the two-core lab machine has
    them."""
    from httplab.lab.hoststate import parse_cpu_list
    meta = ctx.run.meta
    c_cpus, s_cpus = meta.get("client_cpus"), meta.get("server_cpus")
    n_client = len(parse_cpu_list(str(c_cpus)) or []) if c_cpus not in (None, "") else 0
    n_server = len(parse_cpu_list(str(s_cpus)) or []) if s_cpus not in (None, "") else 0
    tool = (f"The load generator has {_cores_words(n_client)} (CPU {c_cpus})" if n_client
            else "The run recorded no load-generator cores")
    server = (f"the server's {_cores_words(n_server)} {'was' if n_server == 1 else 'were'}" if n_server
              else "the server's cores were")
    return (f"{tool}. When it saturates, every server that keeps up shows about the same req/s, so req/s "
            "stops telling servers apart; the server CPU time spent per request (CPU-µs/request, from "
            f"`/proc` over the measured window) still does, and CPU % shows how close {server} to full.")
