"""A client-bound req/s is never a headline, in any report (issue: the https suite's tables printed
the C server's HTTPS/1.1 /ping as "84,577 … ⚑" and its Δ against Go as "+58 % faster", where the load
tool, not the server, set the figure): a client-bound cell reads "≥ … ⚑"; a req/s Δ with one
client-bound side is a bound ("the gap is at least", or no verdict where that side trails), never
"faster"; the audit fails a report that does otherwise, and no committed report does."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from httplab.report.audit import bare_client_bound, client_bound_figures, faster_on_client_bound
from httplab.report.cells import ratio_ci_of
from httplab.report.tables import bound_figure
from httplab.stats import format_delta

ROOT = Path(__file__).resolve().parents[2]
# the https suite in the sliced design: C's HTTPS/1.1 GET /ping at 100 connections is client-bound,
# Go's is not
HTTPS_RUN = ROOT / "data" / "20261207T145705Z-vm"


def _row(ratio: float, a_cb: bool, b_cb: bool, metric: str = "req_per_s", verdict: str = "faster") -> pd.Series:
    return pd.Series({"metric": metric, "ratio": ratio, "lo": ratio * 0.95, "hi": ratio * 1.05, "n_a": 12, "n_b": 12,
                      "confidence": 0.95, "reason": "", "method": "t log paired", "p_value": 0.001, "paired": True,
                      "n_pairs": 12, "verdict": verdict, "a_client_bound": a_cb, "b_client_bound": b_cb})


@pytest.mark.parametrize("ratio, a_cb, b_cb, metric, verdict, reads", [
    (1.58, True, False, "req_per_s", "faster", "client-bound: the gap is at least (+58%"),   # the bound side leads
    (0.63, False, True, "req_per_s", "slower", "client-bound: the gap is at least (−37%"),  # B bound and ahead
    (0.80, True, False, "req_per_s", "slower", "client-bound: no verdict (−20%"),           # the bound side trails
    (1.58, True, True, "req_per_s", "both client-bound", "client-bound: capacity only ("),
    (1.58, False, False, "req_per_s", "faster", "+58% [+50%, +66%] faster"),
    (0.60, True, False, "cpu_us_per_req", "cheaper", "−40% [−43%, −37%] cheaper"),           # cost is never capped
])
def test_a_req_per_s_delta_with_a_client_bound_side_is_a_bound(ratio, a_cb, b_cb, metric, verdict, reads):
    text = format_delta(ratio_ci_of(_row(ratio, a_cb, b_cb, metric, verdict)))
    assert text.startswith(reads) or reads in text, text
    if a_cb or b_cb:
        assert ("faster" not in text and "slower" not in text) or metric != "req_per_s", text


def test_a_client_bound_cell_is_a_lower_bound():
    assert bound_figure("84,577 [80,532 – 88,825] (n=12)", True) == "≥ 84,577 [80,532 – 88,825] (n=12) ⚑"
    assert bound_figure("53,505 [49,656 – 57,652] (n=12)", False) == "53,505 [49,656 – 57,652] (n=12)"
    assert bound_figure("no data", True) == "no data"


HEADER = "| Connections | C req/s | Go req/s | Δ C vs Go |\n|:--|:--|:--|:--|\n"


@pytest.mark.parametrize("row, caught", [
    # the mistake the committed https report made: a bare client-bound figure and "faster" on its Δ
    ("| 100 | 84,577 [80,532 – 88,825] (n=12) ⚑ | 53,505 [49,656 – 57,652] (n=12) | +58% [+52%, +64%] faster |", 2),
    # the figure as a bound, but its Δ still worded faster
    ("| 100 | ≥ 84,577 [80,532 – 88,825] (n=12) ⚑ | 53,505 [49,656 – 57,652] (n=12) | +58% [+52%, +64%] faster |", 1),
    # bare figure, Δ right
    ("| 100 | 84,577 [80,532 – 88,825] (n=12) ⚑ | 53,505 [49,656 – 57,652] (n=12) | "
     "⚑ client-bound: the gap is at least (+58% [+52%, +64%]) |", 1),
    # both right
    ("| 100 | ≥ 84,577 [80,532 – 88,825] (n=12) ⚑ | 53,505 [49,656 – 57,652] (n=12) | "
     "⚑ client-bound: the gap is at least (+58% [+52%, +64%]) |", 0),
])
def test_the_audit_fails_a_report_that_prints_a_client_bound_figure_as_the_servers(tmp_path, row, caught):
    (tmp_path / "https.md").write_text("# https\n\n" + HEADER + row + "\n", encoding="utf-8")
    assert len(client_bound_figures(tmp_path, HTTPS_RUN)) == caught, client_bound_figures(tmp_path, HTTPS_RUN)


def test_a_server_bound_figure_and_its_faster_pass(tmp_path):
    """Go's figure (not client-bound) stays plain, and a Δ between two server-bound points keeps its word."""
    page = "| 500 | 55,108 [47,863 – 63,449] (n=12) | 36,932 [33,289 – 40,973] (n=12) | +49% [+38%, +62%] faster |\n"
    assert bare_client_bound(page, HTTPS_RUN) == []
    (tmp_path / "https.md").write_text(HEADER + page, encoding="utf-8")
    assert faster_on_client_bound(tmp_path, HTTPS_RUN) == []


def _runs_with_reports() -> list[str]:
    return sorted(p.name for p in (ROOT / "reports").iterdir()
                  if p.is_dir() and (ROOT / "data" / p.name / "estimates.parquet").is_file() and list(p.glob("*.md")))


@pytest.mark.parametrize("run_id", _runs_with_reports())
def test_no_committed_report_prints_a_client_bound_req_per_s_as_the_servers(run_id):
    bad = client_bound_figures(ROOT / "reports" / run_id, ROOT / "data" / run_id)
    assert not bad, f"{len(bad)}:\n" + "\n".join(bad[:10])
