"""The machine's canary (scripts/lib/canary.sh → raw/<run_id>/<part>/canary.<when>/, read by
httplab.tidy.canary into the tidy frame `canary`, printed by httplab.report.canary in every report's
header): the files as the harness writes them, a malformed one named, the drift and its warning."""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from httplab.parse.errors import RawFormatError
from httplab.report.canary import NOT_RECORDED, canary_text, canary_warnings, drift
from httplab.tidy import schema
from httplab.tidy.canary import load_canary

REPO = Path(__file__).resolve().parents[2]

# wrk's text report of a floor run, as wrk 4.2 prints it (captured here, 1 s, 100 connections)
WRK = """Running 1s test @ http://127.0.0.1:8090/ping
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.32ms  210.44us   4.87ms   89.13%
    Req/Sec    75.62k     3.02k   79.11k    70.00%
  75264 requests in 1.00s, 5.53MB read
Requests/sec:  75188.31
Transfer/sec:      5.52MB
"""


def write_canary(run: Path, part: str, when: str, cpu: float | None, rt: float | None, wrk: str | None,
                 problems: tuple[str, ...] = (), probe_seconds: float | None = None) -> None:
    d = run / part / f"canary.{when}"
    d.mkdir(parents=True)
    if cpu is not None:
        (d / "cpu.json").write_text(json.dumps({"kind": "cpu", "batches": 10, "ops_per_batch": 1000000,
                                                "seconds": 1.0, "mops_per_s": cpu, "checksum": "00"}) + "\n")
    if rt is not None:
        (d / "pingpong.json").write_text(json.dumps({"kind": "pingpong", "round_trips": 100, "seconds": 1.0,
                                                     "round_trips_per_s": rt, "echo_cpu": 0, "send_cpu": 1}) + "\n")
    if wrk is not None:
        (d / "floor.stdout.txt").write_text(wrk)
    doc = {"when": when, "utc": "2026-11-26T05:00:00Z", "seconds": 1, "server_cpu": "0", "client_cpus": "1",
           "client_threads": 1, "send_cpu": "1", "problems": list(problems)}
    if probe_seconds is not None:
        doc["probe_seconds"] = probe_seconds
    (d / "canary.json").write_text(json.dumps(doc) + "\n")


def test_a_part_with_its_three_moments(tmp_path):
    run = tmp_path / "r1"
    write_canary(run, "http1", "start", 160.0, 24000.0, WRK)
    write_canary(run, "http1", "end", 150.0, 23000.0, WRK.replace("75188.31", "60000.00"))
    write_canary(run, "http1", "mid", 158.0, 23900.0, WRK)
    df = load_canary(run, ["http1", "h2c"], {"run_id": "r1"})
    schema.validate(df, "canary")
    assert list(df["when"]) == ["start", "mid", "end"]
    assert df.loc[0, "floor_req_per_s"] == pytest.approx(75188.31) and df.loc[0, "floor_errors"] == 0
    assert df.loc[2, "raw_path"] == "r1/http1/canary.end"
    assert drift(df, "floor_req_per_s", "end") == pytest.approx(60000 / 75188.31 - 1)
    text = canary_text(df, ["http1"])
    assert text.startswith("CPU loop 160.0 Mops/s, loopback ping-pong 24,000 round trips/s, floor 75,188 req/s at the start")
    assert "at the end: CPU loop −6.2 %" in text and "floor −20.2 %" in text
    assert canary_warnings(df, ["http1"]) == ["the canary's floor fell 20.2 % from the start to the end of `http1`"]


def test_the_quick_profiles_shorter_programs_are_said(tmp_path):
    """probe_seconds (the CPU loop's and the ping-pong's length) is read where canary.json has it,
    else it is the one length of the canaries written before it; the header names both lengths."""
    run = tmp_path / "r1"
    write_canary(run, "http1", "start", 160.0, 24000.0, WRK, probe_seconds=0.25)
    write_canary(run, "h2c", "start", 160.0, 24000.0, WRK)
    df = load_canary(run, ["http1", "h2c"], {"run_id": "r1"})
    schema.validate(df, "canary")
    assert list(df["probe_seconds"]) == [0.25, 1.0] and list(df["seconds"]) == [1.0, 1.0]
    assert "at the start (the floor 1 s, the CPU loop and the ping-pong 0.25 s, one run)" in canary_text(df, ["http1"])
    assert "at the start (1 s each, one run)" in canary_text(df, ["h2c"])
    # a frame built before the column existed reads as one length
    assert "(1 s each, one run)" in canary_text(df.drop(columns="probe_seconds"), ["h2c"])


def test_a_floor_run_with_errors_is_failed_not_a_figure(tmp_path):
    run = tmp_path / "r1"
    bad = WRK.replace("Requests/sec", "  Non-2xx or 3xx responses: 12\nRequests/sec")
    write_canary(run, "http1", "start", 160.0, None, bad, problems=("pingpong: connect: refused",))
    row = load_canary(run, ["http1"], {"run_id": "r1"}).iloc[0]
    assert math.isnan(row["floor_req_per_s"]) and row["floor_errors"] == 12
    assert math.isnan(row["pingpong_rt_per_s"])
    assert "pingpong: connect: refused" in row["problems"] and "floor: 12 socket errors" in row["problems"]


def test_a_malformed_canary_file_is_named(tmp_path):
    run = tmp_path / "r1"
    write_canary(run, "http1", "start", 160.0, 24000.0, WRK)
    path = run / "http1" / "canary.start" / "cpu.json"
    path.write_text('{"kind": "cpu", "mops_per_s": "fast"}\n')
    with pytest.raises(RawFormatError, match=r"cpu\.json.*mops_per_s"):
        load_canary(run, ["http1"], {"run_id": "r1"})
    (run / "http1" / "canary.start" / "canary.json").write_text("{\n  \"when\": \n")
    with pytest.raises(RawFormatError, match=r"canary\.json.*line 3"):
        load_canary(run, ["http1"], {"run_id": "r1"})


def test_a_run_before_the_canary_says_so():
    empty = schema.empty_frame(schema.CANARY)
    assert canary_text(empty, ["http1"]) == NOT_RECORDED and canary_warnings(empty, ["http1"]) == []


def test_the_canary_program_measures(tmp_path):
    """build/bench/canary (servers/floor/canary.c): one JSON object per part, positive rates."""
    exe = tmp_path / "canary"
    subprocess.run(["gcc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", str(exe),
                    str(REPO / "servers" / "floor" / "canary.c")], check=True)
    cpu = json.loads(subprocess.run([str(exe), "cpu", "0.2"], capture_output=True, text=True, check=True).stdout)
    assert cpu["kind"] == "cpu" and cpu["mops_per_s"] > 0 and cpu["batches"] >= 1
    pp = json.loads(subprocess.run([str(exe), "pingpong", "0.2", "0", "-1"], capture_output=True, text=True,
                                   check=True).stdout)
    assert pp["round_trips_per_s"] > 0 and pp["round_trips"] % 256 == 0
    assert subprocess.run([str(exe), "nonsense"], capture_output=True).returncode == 2


def test_each_part_is_summarised_once_by_its_geometric_mean_and_spread():
    """stats.canary.canary_parts: per run and part the moments' geometric mean and max/min − 1; a
    moment whose figure did not run (NaN) is left out of that figure only."""
    from httplab.stats.canary import canary_parts
    rows = [{"run_id": "r1", "suite": "http1", "when": w, "floor_req_per_s": f, "cpu_mops_per_s": c,
             "pingpong_rt_per_s": 20000.0}
            for w, f, c in (("start", 90_000.0, 200.0), ("mid", math.nan, 250.0), ("end", 160_000.0, 320.0))]
    rows.append({"run_id": "r2", "suite": "h2c", "when": "start", "floor_req_per_s": 100_000.0,
                 "cpu_mops_per_s": 0.0, "pingpong_rt_per_s": 18000.0})
    parts = canary_parts(pd.DataFrame(rows)).set_index("run_id")
    one, two = parts.loc["r1"], parts.loc["r2"]
    assert one["moments"] == 3 and one["suite"] == "http1"
    assert one["floor_req_per_s"] == pytest.approx(120_000.0)              # √(90k × 160k)
    assert one["floor_req_per_s_spread"] == pytest.approx(160 / 90 - 1)
    assert one["cpu_mops_per_s"] == pytest.approx((200 * 250 * 320) ** (1 / 3))
    assert one["pingpong_rt_per_s_spread"] == pytest.approx(0.0)
    assert two["moments"] == 1 and math.isnan(two["floor_req_per_s_spread"]) and math.isnan(two["cpu_mops_per_s"])
    assert canary_parts(pd.DataFrame(columns=["run_id", "suite"])).empty
