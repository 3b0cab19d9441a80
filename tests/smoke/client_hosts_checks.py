"""Checks shared by the smoke runs with several client hosts (netns --clients 2, the inventory mode):
every point's per-host raw files are there, the hosts started together, and the run's merged
counts are the sums of what each host's own tool output says, read here straight from the raw
files (wrk's JSON, h2load's text report), not from the merge code under test."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from httplab.tidy.rawpack import readable_view

_H2LOAD_DONE = re.compile(r"^requests: \d+ total, \d+ started, (\d+) done", re.M)


def host_requests(point_dir: Path, rep: int, host: int, tool: str) -> int:
    """Requests host `host` completed in the measured run, from its own raw output."""
    if tool == "wrk":
        doc = json.loads((point_dir / f"r{rep}.h{host}.wrk.json").read_text())
        return int(doc["summary"]["requests"])
    m = _H2LOAD_DONE.search((point_dir / f"r{rep}.h{host}.stdout.txt").read_text())
    assert m, point_dir / f"r{rep}.h{host}.stdout.txt"
    return int(m.group(1))


def check_merged_counts(run_dir: Path, runs: pd.DataFrame, hosts: int) -> int:
    """Every run's requests = the sum over its client hosts; each host ran, exited 0 and started
    within 100 ms of the others. Returns the number of runs checked."""
    view = readable_view(run_dir)
    checked = 0
    for row in runs.itertuples():
        point = view / row.raw_path.split("/", 1)[1].rsplit("/", 1)[0]
        scen = json.loads((point / "scenario.json").read_text())
        assert scen["client_hosts"] == hosts and scen["client_layout"] == "per_host", scen
        per_host = [host_requests(point, row.rep, h, scen["tool"]) for h in range(1, hosts + 1)]
        assert all(n > 0 for n in per_host), (point, per_host)
        assert int(row.requests) == sum(per_host), (point, row.requests, per_host)
        starts = []
        for h in range(1, hosts + 1):
            rec = json.loads((point / f"r{row.rep}.h{h}.host.json").read_text())
            assert rec["host"] == h and rec["exit_code"] == 0, rec
            starts.append(rec["started"])
        assert max(starts) - min(starts) < 0.1, (point, starts)
        checked += 1
    return checked
