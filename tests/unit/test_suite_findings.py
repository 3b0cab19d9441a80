"""The findings that open a generic suite report (httplab.report.suite_findings), on the committed
HTTP/3 run: servers ranked by CPU-µs per request at the headline point, a client-bound req/s
printed as a bound, the contestant against the baseline per section, and the exported report
opening with them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from httplab.lab.servers import display_name, short_name
from httplab.report import engine as R
from httplab.report import suite_findings as SF

ROOT = Path(__file__).resolve().parents[2]
RUN = "20261127T054911Z-vm"


@pytest.fixture(scope="module")
def ctx():
    if not (ROOT / "data" / RUN / "estimates.parquet").is_file():
        pytest.skip("the HTTP/3 run is not in data/")
    return R.open_suite_report("h3", run_dir=ROOT / "raw" / RUN, out_dir=ROOT / "data" / RUN,
                               baseline="go_h3")


def test_servers_are_ranked_by_cpu_per_request_with_the_bound_marked(ctx):
    scen = SF.headline_scenario(ctx)
    assert scen == "get_ping_c100"
    table = SF.ranking_table(ctx, scen)
    costs = [float(c.split()[0].replace(",", "")) for c in table["CPU-µs per request (95 % CI)"]]
    assert costs == sorted(costs) and len(costs) >= 3
    for server in table["Server"]:
        est = ctx.stats.estimate(("h3", scen, next(s for s in set(ctx.runs["server"])
                                                 if display_name(s) == server)), "req_per_s")
        cell = table.loc[table["Server"] == server, "req/s"].iloc[0]
        assert cell.startswith("≥ ") == (float(est["client_bound_share"]) >= 0.5), (server, cell)
    # each row's Δ is against the cheapest other server: the first row's against the second, the rest
    # against the first
    names = {display_name(s): short_name(s) for s in set(ctx.runs["server"])}
    deltas = table["CPU-µs Δ vs the cheapest other"].tolist()
    assert deltas[0].endswith(" vs " + names[table["Server"].iloc[1]])
    assert all(d.endswith(" vs " + names[table["Server"].iloc[0]]) for d in deltas[1:])


def test_the_contestant_against_the_baseline_per_section(ctx):
    lines = SF.section_lines(ctx, "evloop", "go_h3")
    assert len(lines) == 4
    for line in lines:
        assert re.search(r"\[[−+]\d+%, [−+]\d+%\]|CI needs", line), line


def test_the_exported_report_opens_with_findings():
    md = (ROOT / "reports" / RUN / "h3.md").read_text(encoding="utf-8")
    assert md.index('id="findings"') < md.index('id="run-and-machine"') < md.index("The host changed")
