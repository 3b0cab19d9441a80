"""h3load's JSON report (httplab.parse.h3load) and the h3load point loader, on reports captured here
with the lab's HTTP/3 load tool against quinn's server (tests/fixtures/h3load/: see README there)."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from httplab.parse.errors import RawFormatError
from httplab.parse.h3load import h3load_report
from httplab.parse.h3load_loader import load_h3load_point
from httplab.parse.layout import RepFiles
from httplab.parse.loaders import load_rep
from httplab.tidy.points import fail_reasons

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "h3load"


def doc(name: str) -> dict:
    return json.loads((FIX / f"{name}.json").read_text())


def point(tmp_path: Path, name: str, **scenario: object) -> Path:
    d = tmp_path / "pt"
    d.mkdir()
    shutil.copy(FIX / f"{name}.json", d / "r1.h3load.json")
    (d / "scenario.json").write_text(json.dumps({"connections": 4, "streams": 2} | scenario))
    return d


def test_a_get_run_reads_the_whole_run_over_its_load_time(tmp_path: Path) -> None:
    raw = doc("get_ping_rust_h3")
    r = load_h3load_point(point(tmp_path, "get_ping_rust_h3"), 1)
    assert r is not None and r.tool == "h3load"
    # every answer of the run over the time from the start to the last answer: the server's CPU
    # window holds the same requests
    n = raw["requests_total"]
    assert r.requests == n == raw["requests_window"] > 10_000   # no warm-up (-w) in this run
    assert r.duration_s == pytest.approx(raw["load_s"])
    assert r.req_per_s == pytest.approx(n / raw["load_s"])
    assert r.bytes_read == 4 * n                           # "pong" bodies only
    assert r.total_errors == 0 and r.notes == ()
    # the window's latencies, exact to the µs
    assert r.hist_kind == "exact" and int(r.hist_counts.sum()) == raw["requests_window"]
    assert r.lat_max_us == max(v for v, _ in raw["latency_hist"])
    assert fail_reasons(0, r, True, "h3load") == []


def test_a_post_run_counts_the_echoed_bodies(tmp_path: Path) -> None:
    r = load_h3load_point(point(tmp_path, "post_echo_b4096_rust_h3", connections=2), 1)
    assert r is not None and r.bytes_read == 4096 * r.requests and r.total_errors == 0 and r.notes == ()


def test_non_2xx_answers_and_connections_not_made_fail_the_run() -> None:
    r404 = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "status_404_rust_h3.json").read_bytes()}),
                    {"connections": 2, "streams": 1})
    n = doc("status_404_rust_h3")["requests_total"]
    assert r404 is not None and r404.errors["non-2xx responses"] == r404.requests == n > 1000
    assert fail_reasons(0, r404, True, "h3load") == [f"{n:,} non-2xx responses"]
    refused = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "refused.json").read_bytes()}),
                       {"connections": 2, "streams": 1})
    assert refused is not None and refused.requests == 0 and refused.hist_kind == "none"
    assert math.isnan(refused.req_per_s) and math.isnan(refused.lat_mean_us)
    assert fail_reasons(0, refused, True, "h3load") == ["2 h3load: connections not made", "no request completed"]
    # with its stderr, the reason says why, in h3load's words
    told = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "refused.json").read_bytes(),
                                                      "r1.stderr.txt": (FIX / "refused.stderr.txt").read_bytes()}),
                    {"connections": 2, "streams": 1})
    assert told is not None and fail_reasons(0, told, True, "h3load") == [
        "2 h3load: connections not made", "h3load's first connect error: 127.0.0.1:19443: no handshake within 1s",
        "no request completed"]
    # a run without errors never reads its stderr's lines as reasons
    ok = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "get_ping_rust_h3.json").read_bytes(),
                                                    "r1.stderr.txt": (FIX / "refused.stderr.txt").read_bytes()}),
                  {"connections": 4, "streams": 2})
    assert ok is not None and ok.notes == ()


def test_a_run_with_other_connections_than_its_scenario_is_noted(tmp_path: Path) -> None:
    r = load_h3load_point(point(tmp_path, "get_ping_rust_h3", connections=100, streams=10), 1)
    assert r is not None
    assert r.notes == ("h3load ran 4 connections × 2 streams, the scenario says 100 × 10",)
    assert "h3load ran 4 connections × 2 streams, the scenario says 100 × 10" in fail_reasons(0, r, True, "h3load")


def test_no_report_is_no_result(tmp_path: Path) -> None:
    d = tmp_path / "pt"
    d.mkdir()
    (d / "r1.h3load.json").write_text("")
    assert load_h3load_point(d, 1) is None


@pytest.mark.parametrize("change,key", [
    (lambda d: d.pop("load_s"), "load_s"),
    (lambda d: d.update(tool="oha"), "tool"),
    (lambda d: d.update(requests_window=d["requests_window"] + 1), "status_counts"),
    (lambda d: d["status_counts_total"].update({"200": 1}), "status_counts_total"),
    (lambda d: d["latency_hist"].append([9, 1]), "latency_hist"),
    (lambda d: d["latency_hist"].append([9, True]), "latency_hist"),
    (lambda d: d["errors"].update(stream=-1), "stream"),
    (lambda d: d["errors"].pop("timeout"), "timeout"),
    (lambda d: d["status_counts"].update({"2OO": 0}), "status_counts"),
    (lambda d: d.update(connected=5), "connected"),
    (lambda d: d.update(aborted_at_end=9), "aborted_at_end"),     # more than 4 × 2 streams hold
    (lambda d: d.update(requests_total=True), "requests_total"),
])
def test_a_malformed_report_names_the_file_and_key(change, key) -> None:
    d = doc("get_ping_rust_h3")
    change(d)
    with pytest.raises(RawFormatError) as exc:
        h3load_report(d, "pt/r1.h3load.json")
    assert exc.value.key == key and "pt/r1.h3load.json" in str(exc.value)


def test_an_http3_point_takes_its_tls_facts_from_h3load() -> None:
    """No s_client probe over QUIC: the point's ALPN and version are those of h3load's handshakes,
    and a run whose handshakes agreed no h3 (none made) fails on it."""
    from httplab.parse.tls_info import tls_columns

    ok = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "get_ping_rust_h3.json").read_bytes()}), {})
    cols, reasons = tls_columns(None, "pt/r1.tls.txt", "r1.tls.txt", {"protocol": "h3", "tls": True}, ok.text)
    assert reasons == [] and cols == {"tls_version": "TLSv1.3", "tls_cipher": None, "alpn": "h3",
                                      "alpn_source": "h3load"}
    refused = load_rep("h3load", RepFiles.from_contents({"r1.h3load.json": (FIX / "refused.json").read_bytes()}), {})
    _, reasons = tls_columns(None, "pt/r1.tls.txt", "r1.tls.txt", {"protocol": "h3", "tls": True}, refused.text)
    assert reasons == ["TLS: negotiated ALPN none, expected h3 for this h3 scenario"]
    # an HTTP/2-over-TLS point without its probe still fails on the missing file
    _, reasons = tls_columns(None, "pt/r1.tls.txt", "r1.tls.txt", {"protocol": "h2", "tls": True}, None)
    assert "TLS: r1.tls.txt missing" in reasons
