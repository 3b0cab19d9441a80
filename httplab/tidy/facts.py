"""What a report says about a run beyond its frames, read from the raw run once, when the data is
built (stats.write.build_data), and kept in data/<run_id>/run.json: per part, the host's state at
the part's start and end, its hosts.json (the host mode), its certificate (TLS parts), and the load
tool's command line of each point's first finished rep. The reports read these from data/, never
from raw/.

    {"parts": {"<part>": {"host_states": {"start": {...} | null, "end": {...} | null},
                          "hosts": {...} | null,
                          "certificate": {CertInfo's fields} | null,
                          "commands": {"<server>": {"<scenario>": "<command line>"}}}}}
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..lab.hoststate import read_host_states
from ..parse.jsonio import read_json_object
from ..parse.tls_info import read_certificate


def _commands(view: Path, runs: pd.DataFrame) -> dict[str, dict[str, str]]:
    """server -> scenario -> the command of the point's first finished rep (r<rep>.run.json's cmd)."""
    out: dict[str, dict[str, str]] = {}
    if runs.empty or "raw_path" not in runs:
        return out
    order = ["start_utc", "rep"] if "start_utc" in runs else ["scenario", "rep"]
    for (server, scenario), grp in runs.sort_values(order).groupby(["server", "scenario"], sort=False):
        raw_path = Path(str(grp["raw_path"].iloc[0]))        # <run_id>/<part>/<server>/<scenario>/r<rep>
        f = view / Path(*raw_path.parts[1:]).parent / (raw_path.name + ".run.json")
        try:
            cmd = json.loads(f.read_text()).get("cmd") or ""
        except (OSError, ValueError):
            continue
        if cmd:
            out.setdefault(str(server), {})[str(scenario)] = str(cmd)
    return out


def part_facts(view: Path, part: str, runs: pd.DataFrame) -> dict[str, Any]:
    """One part's facts (the module docstring), from the run's readable view."""
    hosts_json = view / part / "hosts.json"
    cert = read_certificate(view, part)
    return {
        "host_states": read_host_states(view, part),
        "hosts": read_json_object(hosts_json) if hosts_json.is_file() else None,
        "certificate": dataclasses.asdict(cert) if cert is not None else None,
        "commands": _commands(view, runs[runs["suite"] == part] if "suite" in runs else runs),
    }


def run_facts(view: Path, parts: list[str], runs: pd.DataFrame) -> dict[str, Any]:
    """Every part's facts."""
    return {"parts": {p: part_facts(view, p, runs) for p in parts}}
