"""The latency suites' smoke run of scripts/test.sh (LAB_LATENCY_SMOKE_DIR: raw/, data/, reports/ of
`run_all.sh --quick --suites latency`, two servers, two reps): oha ran every kind of point, the
fractions are of the capacity the run measured, every point is read into the tidy frames, and the
exported report carries the curves, the knee table and the closed/open contrast."""
from __future__ import annotations

import json
import os
import re
import tarfile
from pathlib import Path

import pytest

from smoke_runs import the_run

from httplab.tidy.rawrun import load_run

SMOKE = os.environ.get("LAB_LATENCY_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_LATENCY_SMOKE_DIR not set (scripts/test.sh sets it)")
SUITES = ("latency_h1", "latency_h2c", "latency_https")


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


def test_every_suite_completed_and_was_read(run_dir: Path) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["suites"] == list(SUITES) and meta["complete"] is True
    assert meta["tools"]["oha"].startswith("oha ")
    runs = load_run(run_dir).runs
    assert set(runs["suite"]) == set(SUITES)
    assert set(runs["load_model"]) == {"closed", "open", "open_uncorrected"}
    # no error of any kind; a high fraction may saturate on a busy CI machine (that is what the status
    # is for), the capacity and the low rates may not
    bad = runs[(runs["status"] == "failed") | ((runs["status"] != "ok") & ~runs["scenario"].isin(["f080", "f080_uncorrected"]))]
    assert bad.empty, bad[["suite", "server", "scenario", "fail_reason"]]
    assert set(runs["status"]) <= {"ok", "saturated"}
    sat = runs[runs["status"] == "saturated"]
    assert (sat["req_per_s"] < 0.95 * sat["target_rps"]).all()
    runs = runs[runs["status"] == "ok"]
    assert (runs["lat_p99_us"] > 0).all() and (runs["hist_kind"] == "exact").all()
    assert runs["cpu_us_per_req"].notna().all()


def test_fractions_are_of_the_measured_capacity(run_dir: Path) -> None:
    runs = load_run(run_dir).runs
    for (suite, server), g in runs.groupby(["suite", "server"]):
        with tarfile.open(run_dir / suite / f"{server}.tar.xz") as tar:
            cap = json.load(tar.extractfile(f"{server}/capacity.json"))["capacity_rps"]  # type: ignore[arg-type]
        closed = g[(g["scenario"] == "closed") & (g["rep"] == 1)]["req_per_s"].iloc[0]
        assert cap == pytest.approx(closed, rel=1e-6), (suite, server)
        f80 = g[g["scenario"] == "f080"]
        assert (f80["target_rps"] == round(0.8 * cap)).all(), (suite, server)
        assert (f80["load_fraction"] == 0.8).all() and (f80["capacity_ref_rps"] == cap).all()


def test_report_has_curves_knees_and_contrast(run_dir: Path) -> None:
    out = Path(SMOKE) / "reports" / run_dir.name
    md = (out / "latency.md").read_text()
    for title in ("P99 against offered load", "The knee of each curve", "What coordinated omission hides",
                  "Percentiles at one shared rate", "Every point: HTTP/1.1", "Every point: HTTP/2 (h2c)",
                  "Every point: HTTPS/1.1"):
        assert f">{title}</h2>" in md, title
    assert "no data" not in md.split("The knee of each curve")[1].split("</h2>")[1][:2000]
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", md)
    assert len(images) >= 4 and all((out / i).is_file() for i in images)
    html = (out / "latency.html").read_text()
    assert "Traceback" not in html and "jp-OutputArea-output-error" not in html
    index = (Path(SMOKE) / "reports" / "index.html").read_text()
    assert f"{run_dir.name}/latency.html" in index
