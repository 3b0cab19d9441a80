"""Checks of the pipeline smoke run that scripts/test.sh makes: run_all.sh with tiny durations
into a scratch folder (LAB_SMOKE_DIR holding raw/, data/ and reports/). Skipped when that
variable is not set, so a plain `pytest` of the tree does not need a live run."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest

from smoke_runs import the_run

SMOKE = os.environ.get("LAB_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_SMOKE_DIR not set (scripts/test.sh sets it)")

DELTA_WITH_CI = re.compile(r"[+−]\d+(\.\d)?% \[[+−]\d+(\.\d)?%, [+−]\d+(\.\d)?%\]")


@pytest.fixture(scope="module")
def run_id() -> str:
    runs = sorted(p.name for p in (Path(SMOKE) / "raw").iterdir() if p.is_dir())
    assert len(runs) == 1, f"expected one smoke run, found {runs}"
    return runs[0]


# report name → (suite, the seed tables whose C and Go columns must carry n=5 and a Δ with its CI
# in the smoke run's scenarios)
REPORTS = {
    "http1": ("http1", ("GET /ping — minimal response", "POST /echo — request body")),
    "h2c": ("h2c", ("GET /ping — minimal response", "POST /echo — request body")),
    "https": ("https", ("HTTPS/1.1 GET /ping — by connections", "HTTPS/2 GET /ping — by connections")),
    "languages": ("languages", ()),
}
IMG_SRC = re.compile(r"<img\b[^>]*?\bsrc=\"([^\"]+)\"")
MD_IMG = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module", params=sorted(REPORTS))
def report(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def markdown(run_id: str, report: str) -> str:
    return (Path(SMOKE) / "reports" / run_id / f"{report}.md").read_text()


def table_rows(md: str, title: str) -> list[list[str]]:
    """The header and body rows of the Markdown table that follows the bold caption `title`."""
    start = md.index(f"**{title}")
    rows = []
    for line in md[start:].splitlines()[2:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        if not re.fullmatch(r"[|:\- ]+", line):  # the header's underline
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_reports_exist_and_index_links_them(run_id: str, report: str) -> None:
    reports = Path(SMOKE) / "reports"
    index = (reports / "index.html").read_text()
    assert f"{run_id}/{report}.html" in index and f"{run_id}/{report}.md" in index


def test_each_figure_is_stored_once_and_loads(run_id: str, report: str, markdown: str) -> None:
    """The HTML links the same PNG files as the Markdown (none embedded), every one exists beside
    the report and decodes, and the figures folder holds nothing else."""
    from PIL import Image

    out = Path(SMOKE) / "reports" / run_id
    html = (out / f"{report}.html").read_text()
    srcs = IMG_SRC.findall(html)
    assert srcs, "the HTML export must show its plots"
    assert not [s for s in srcs if s.startswith("data:")], "plots must be linked files, not embedded"
    assert set(srcs) == set(MD_IMG.findall(markdown)), "HTML and Markdown must share one set of figures"
    for src in srcs:
        path = out / src
        assert path.parent == out / f"{report}_files" and path.is_file(), src
        with Image.open(path) as img:
            img.verify()
            assert img.format == "PNG" and img.size[0] > 100 and img.size[1] > 100, (src, img.size)
    on_disk = {p.relative_to(out).as_posix() for p in (out / f"{report}_files").iterdir()}
    assert on_disk == set(srcs), f"orphan figures: {sorted(on_disk - set(srcs))}"


def test_every_gate_passed(markdown: str) -> None:
    rows = table_rows(markdown, "Verify gate")[1:]
    assert rows and all(r[1] == "PASS" for r in rows), rows


def test_seed_tables_carry_intervals(markdown: str, report: str) -> None:
    for title in REPORTS[report][1]:
        header, *body = table_rows(markdown, title)
        assert any("C req/s" in h for h in header) and any("Go req/s" in h for h in header), header
        assert body, f"{title}: no rows"
        for row in body:
            assert "(n=5)" in row[1] and "(n=5)" in row[2], row
            assert DELTA_WITH_CI.search(row[header.index(next(h for h in header if h.startswith("Δ")))]), row


def test_pipelined_latency_is_labelled_per_batch(run_id: str) -> None:
    assert "per batch" in (Path(SMOKE) / "reports" / run_id / "http1.md").read_text()


def test_h2c_report_compares_with_http1_of_the_same_run(run_id: str) -> None:
    md = (Path(SMOKE) / "reports" / run_id / "h2c.md").read_text()
    header, *body = table_rows(md, "HTTP/2 vs HTTP/1.1")
    servers = {row[0] for row in body}
    assert {"C (evloop)", "Go net/http"} <= servers, body
    assert all(DELTA_WITH_CI.search(" ".join(row)) for row in body if row[0] in servers), body


def test_languages_report_lists_every_server_of_both_tiers(run_id: str) -> None:
    md = (Path(SMOKE) / "reports" / run_id / "languages.md").read_text()
    header, *body = table_rows(md, "Root endpoint (GET /)")
    assert len(body) == 11, body
    assert {row[header.index("Tier")] for row in body} == {"contestant", "stdlib", "production"}
    assert all(row[header.index("n")] == "5" for row in body), body


def test_https_runs_record_the_negotiated_tls(run_id: str) -> None:
    runs = pd.read_parquet(Path(SMOKE) / "data" / run_id / "runs.parquet")
    runs = runs[runs["suite"] == "https"]
    assert set(runs.loc[runs["protocol"] == "h2", "alpn"]) == {"h2"}
    # The lab's client config (kept in raw/) makes every server agree on one version and cipher,
    # so the servers are compared on the same cryptography.
    assert (Path(SMOKE) / "raw" / run_id / "https" / "client-openssl.cnf").is_file()
    assert set(runs["tls_version"]) == {"TLSv1.3"}, runs.groupby("server")["tls_version"].unique()
    assert set(runs["tls_cipher"]) == {"TLS_AES_128_GCM_SHA256"}, runs.groupby("server")["tls_cipher"].unique()


def test_complete_suites_are_packed(run_id: str, report: str) -> None:
    """run_all.sh packs every complete suite: one .tar.xz per server, no loose server folder."""
    suite_dir = Path(SMOKE) / "raw" / run_id / REPORTS[report][0]
    assert (suite_dir / "suite.json").is_file()
    assert not [p.name for p in suite_dir.iterdir() if p.is_dir()]
    assert list(suite_dir.glob("*.tar.xz"))


def test_tidy_frame_has_one_ok_row_per_finished_point(run_id: str, report: str) -> None:
    from httplab.tidy.rawpack import readable_view

    suite, _ = REPORTS[report]
    raw = readable_view(Path(SMOKE) / "raw" / run_id)
    finished = list(raw.glob(f"{suite}/*/*/r*.run.json"))
    data = Path(SMOKE) / "data" / run_id
    assert not list(data.glob("runs.csv")), "tidy frames as parquet (CSV only on request)"
    # the one build step's output: tidy frames, the gate's transcripts and each part's end, the
    # machine's canary, the statistics, the claim ledger, and run.json (meta.json and the parts' facts)
    assert {p.name for p in data.iterdir()} == {"runs.parquet", "latency.parquet", "verify.parquet", "suites.parquet",
                                                "canary.parquet", "estimates.parquet", "estimates.csv",
                                                "comparisons.parquet", "comparisons.csv", "claims.parquet",
                                                "claims.csv", "claim_points.parquet", "claim_points.csv", "run.json"}
    # the canary at the part's start and end (the quick profile has no middle one), each part measured
    canary = pd.read_parquet(data / "canary.parquet")
    mine = canary[canary["suite"] == suite]
    assert list(mine["when"]) == ["start", "end"], mine
    assert (mine["problems"] == "").all() and (mine[["cpu_mops_per_s", "pingpong_rt_per_s", "floor_req_per_s"]] > 0).all().all()
    runs = pd.read_parquet(data / "runs.parquet")
    runs = runs[runs["suite"] == suite]
    assert len(runs) == len(finished) > 0
    assert set(runs["status"]) == {"ok"}, runs.loc[runs["status"] != "ok", ["server", "scenario", "fail_reason"]]
    assert (runs["server_cpu_s"] > 0).all() and (runs["cpu_us_per_req"] > 0).all()
    latency = pd.read_parquet(data / "latency.parquet")
    assert latency["count"].sum() > 0


# The audits run over the main run's reports and over those of the versus suites' run beside it
# (LAB_VERSUS_SMOKE_DIR, scripts/test.sh smoke_side).
@pytest.fixture(scope="module", params=["LAB_SMOKE_DIR", "LAB_VERSUS_SMOKE_DIR"])
def audited(request: pytest.FixtureRequest) -> tuple[Path, Path]:
    """(reports/<run_id>/, data/<run_id>/) of one smoke run."""
    if not os.environ.get(request.param):
        pytest.skip(f"{request.param} not set (scripts/test.sh sets it)")
    folder = Path(os.environ[request.param])
    run_id = the_run(folder).name
    return folder / "reports" / run_id, folder / "data" / run_id


def test_every_delta_of_the_smoke_reports_is_a_comparisons_row(audited: tuple[Path, Path]) -> None:
    """The smoke run's reports print only Δs that are rows of its statistics frames."""
    from httplab.report.audit import unmatched_deltas

    checked, bad = unmatched_deltas(*audited)
    assert checked > 0, "the smoke reports print no Δ with an interval"
    assert not bad, "\n".join(bad[:20])


def test_every_delta_of_the_smoke_reports_carries_its_verdict_and_no_sentence_overstates(
        audited: tuple[Path, Path]) -> None:
    """The smoke run's reports: every comparison Δ with its verdict, and no client-bound or A/A
    sentence that the run's data do not support (httplab.report.audit)."""
    from httplab.report.audit import unsupported_sentences, unverdicted_deltas

    checked, bare = unverdicted_deltas(*audited)
    assert checked > 0 and not bare, "\n".join(bare[:20])
    wrong = unsupported_sentences(*audited)
    assert not wrong, "\n".join(wrong[:20])


def test_every_measured_figure_of_the_smoke_reports_has_its_interval_or_reason(audited: tuple[Path, Path]) -> None:
    """The smoke run's tables: no req/s, latency, CPU or RSS figure without its interval or the
    stated reason it has none (httplab.report.audit.unstated_figures)."""
    from httplab.report.audit import unstated_figures

    checked, bad = unstated_figures(audited[0])
    assert checked > 0 and not bad, "\n".join(bad[:20])
