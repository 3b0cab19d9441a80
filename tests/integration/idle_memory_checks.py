"""Checks of the idle-connection memory measurement (scripts/idle_memory.sh) for tests: what an idle
keep-alive connection costs a server, read from the run's tidy frame (data/<run_id>/idle_memory,
httplab.tidy.idle_memory).

`assert_idle_cost` checks that every point of a server (and mode, and N) measured all its
connections and that the cost per connection is computed and within bounds. The target
(docs/hostile-clients.md) is IDLE_TARGET_KIB at TARGET_CONNS connections. The C server meets it over
HTTP/1.1 since its buffers are taken on demand (about 0.5 KiB each; 15.8 KiB before), and over h2c
since its own HTTP/2 codec replaced nghttp2's session (about 1.2 KiB: the codec state and the
client's HPACK table; 14.7 KiB with the session, 30.7 before the buffers were lazy); the integration
test asserts it in both modes. The committed full run measures both at 20,000 connections
(`scripts/idle_memory.sh`).
"""
from __future__ import annotations

import math

import pandas as pd

IDLE_TARGET_KIB = 4.0    # the target: an idle keep-alive connection ≤ 4 KiB of server memory ...
TARGET_CONNS = 20_000    # ... at 20,000 of them (< 80 MiB)
SANE_MAX_KIB = 64.0      # far above any server here: only a broken measurement passes it


def assert_idle_cost(frame: pd.DataFrame, server: str, mode: str | None = None, conns: int | None = None,
                     max_kib: float = SANE_MAX_KIB, min_kib: float = 0.0) -> pd.DataFrame:
    """The points of `server` (in `mode`, at `conns` asked, when given): each ok, with every
    connection answered and still open when the memory was read, and min_kib < KiB per connection
    ≤ max_kib. Returns those rows; AssertionError naming the points otherwise."""
    rows = frame[frame["server"] == server]
    if mode is not None:
        rows = rows[rows["mode"] == mode]
    if conns is not None:
        rows = rows[rows["conns_asked"] == conns]
    what = f"{server}" + (f" {mode}" if mode else "") + (f" at {conns:,} connections" if conns else "")
    assert not rows.empty, f"no idle-memory point of {what}"
    bad = rows[rows["status"] != "ok"]
    assert bad.empty, f"failed points of {what}: " + "; ".join(
        f"{r.mode} N={r.conns} r{r.rep}: {r.fail_reason} ({r.raw_path})" for r in bad.itertuples())
    if conns is not None:
        short = rows[rows["conns"] < conns]
        assert short.empty, (f"{what}: measured at {sorted(set(short['conns']))} connections only (the "
                             "open-file limit); the target is for the full number")
    assert (rows["answered"] == rows["conns"]).all() and (rows["alive_after"] == rows["conns"]).all()
    out = [f"{r.mode} N={r.conns} r{r.rep}: {r.kib_per_conn:.2f} KiB" for r in rows.itertuples()
           if not (math.isfinite(r.kib_per_conn) and min_kib < r.kib_per_conn <= max_kib)]
    assert not out, f"{what}: KiB per idle connection outside ({min_kib:g}, {max_kib:g}]: " + "; ".join(out)
    return rows
