"""What a report says about a run beyond its frames, read from the raw run once, when the data is
built (stats.write.build_data), and kept in data/<run_id>/run.json: per part, the host's state at
the part's start and end, its hosts.json (the host mode), its certificate (TLS parts), and the load
tool's command line of each point's first finished rep. The reports read these from data/, never
from raw/.

    {"parts": {"<part>": {"host_states": {"start": {...} | null, "end": {...} | null},
                          "hosts": {...} | null,
                          "certificate": {CertInfo's fields} | null,
                          "commands": {"<server>": {"<scenario>": "<command line>"}},
                          "scaling_plan": "<the CPU plan's sentence>" | null,
                          "scaling_ladder": [1, 2, 4, ...] | null}}}

The scaling suite's plan is recorded in every point's scenario.json; the points of a part agree on
it (one plan per run), and a part whose points disagree gets null and the sentences in
scaling_plans, so that a report never states one plan where there were two.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..parse import layout
from ..parse.tls_info import read_certificate


def _commands(view: Path, runs: pd.DataFrame) -> dict[str, dict[str, str]]:
    """server -> scenario -> the command of the point's first finished rep (r<rep>.run.json's cmd)."""
    out: dict[str, dict[str, str]] = {}
    if runs.empty or "raw_path" not in runs:
        return out
    order = ["start_utc", "rep"] if "start_utc" in runs else ["scenario", "rep"]
    for (server, scenario), grp in runs.sort_values(order).groupby(["server", "scenario"], sort=False):
        cmd = layout.rep_command(view, str(grp["raw_path"].iloc[0]))
        if cmd:
            out.setdefault(str(server), {})[str(scenario)] = str(cmd)
    return out


def _scaling(view: Path, part: str) -> dict[str, Any]:
    """scaling_plan and scaling_ladder of the part's points (scenario.json), where they have them."""
    plans: dict[str, list[int]] = {}
    for f in sorted((view / part).glob("*/*/scenario.json")):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue   # the frames' own reading names a broken scenario.json
        if isinstance(doc, dict) and doc.get("scaling_plan"):
            plans.setdefault(str(doc["scaling_plan"]), [int(n) for n in doc.get("scaling_ladder") or []])
    if not plans:
        return {}
    if len(plans) > 1:
        return {"scaling_plan": None, "scaling_ladder": None, "scaling_plans": sorted(plans)}
    (plan, ladder), = plans.items()
    return {"scaling_plan": plan, "scaling_ladder": ladder}


def part_facts(view: Path, part: str, runs: pd.DataFrame) -> dict[str, Any]:
    """One part's facts (the module docstring), from the run's readable view."""
    cert = read_certificate(view, part)
    return {
        **_scaling(view, part),
        "host_states": layout.host_states(view, part),
        "hosts": layout.hosts_doc(view, part),
        "certificate": dataclasses.asdict(cert) if cert is not None else None,
        "commands": _commands(view, runs[runs["suite"] == part] if "suite" in runs else runs),
    }


def run_facts(view: Path, parts: list[str], runs: pd.DataFrame) -> dict[str, Any]:
    """Every part's facts."""
    return {"parts": {p: part_facts(view, p, runs) for p in parts}}
