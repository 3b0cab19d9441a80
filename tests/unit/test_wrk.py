import json
import math

import pytest

from httplab.parse.errors import RawConsistencyError, RawFormatError
from httplab.parse.wrk import (check_req_per_s, parse_bytes, parse_metric, parse_time_us, parse_wrk_json,
                         parse_wrk_text, read_wrk_json, read_wrk_text)

STEMS = ["clean_ping", "latency_ping", "non2xx", "write_errors", "read_errors", "timeouts",
         "post_1k", "pipeline_16"]


def test_units():
    assert parse_time_us("2.30ms") == pytest.approx(2300)
    assert parse_time_us("123.98us") == pytest.approx(123.98)
    assert parse_time_us("1.10s") == pytest.approx(1.1e6)
    assert parse_time_us("2.00m") == pytest.approx(120e6)
    assert parse_metric("1.91k") == pytest.approx(1910)
    assert parse_metric("747.18") == pytest.approx(747.18)
    assert parse_metric("2.5M") == pytest.approx(2.5e6)
    assert parse_bytes("1.04MB") == pytest.approx(1.04 * 2**20)
    assert parse_bytes("415.39KB") == pytest.approx(415.39 * 1024)
    assert parse_bytes("0.00B") == 0
    assert parse_bytes("1.26GB") == pytest.approx(1.26 * 2**30)


@pytest.mark.parametrize("stem", STEMS)
def test_every_fixture_parses_and_text_agrees_with_json(fixtures, stem):
    text = read_wrk_text(fixtures / f"{stem}.stdout.txt")
    hook = read_wrk_json(fixtures / f"{stem}.wrk.json")
    assert text.requests == hook.requests
    check_req_per_s(text, hook, stem)  # raises if > 1 % apart
    assert text.socket_errors == hook.socket_errors
    assert text.non2xx == hook.status_errors


def test_clean_run_numbers_match_text(fixtures):
    raw = (fixtures / "clean_ping.stdout.txt").read_text()
    t = parse_wrk_text(raw, "clean_ping")
    assert t.url == "http://127.0.0.1:18991/ping"
    assert (t.threads, t.connections) == (1, 10)
    assert t.test_duration == "1s"
    line = next(ln for ln in raw.splitlines() if "requests in" in ln).split()
    assert t.requests == int(line[0])
    rps = float(next(ln for ln in raw.splitlines() if ln.startswith("Requests/sec")).split()[1])
    assert t.requests_per_s == rps
    lat = next(ln for ln in raw.splitlines() if ln.strip().startswith("Latency")).split()
    assert t.latency.avg == pytest.approx(parse_time_us(lat[1]))
    assert t.latency.max == pytest.approx(parse_time_us(lat[3]))
    assert t.socket_errors.total == 0 and t.non2xx == 0
    assert t.latency_distribution == {}


def test_latency_distribution_block(fixtures):
    t = read_wrk_text(fixtures / "latency_ping.stdout.txt")
    assert sorted(t.latency_distribution) == [50.0, 75.0, 90.0, 99.0]
    hook = read_wrk_json(fixtures / "latency_ping.wrk.json")
    # wrk's printed percentiles come from the same histogram as the hook's
    assert t.latency_distribution[50.0] == pytest.approx(hook.latency.p50, abs=0.01)
    assert t.latency_distribution[99.0] == pytest.approx(hook.latency.p99, abs=0.01)


def test_socket_error_and_non2xx_lines(fixtures):
    t = read_wrk_text(fixtures / "read_errors.stdout.txt")
    assert t.socket_errors.read > 0 and t.requests == 0 and math.isnan(t.latency.within_stdev_pct)
    t = read_wrk_text(fixtures / "timeouts.stdout.txt")
    assert t.socket_errors.timeout == 4
    t = read_wrk_text(fixtures / "write_errors.stdout.txt")
    assert t.socket_errors.write > 0
    t = read_wrk_text(fixtures / "non2xx.stdout.txt")
    assert t.non2xx == t.requests > 0


def test_example_from_brief_with_connect_errors():
    text = """Running 1s test @ http://127.0.0.1:18999/nonexistent
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.30ms    2.34ms  27.58ms   97.35%
    Req/Sec     1.91k   274.58     2.25k    81.82%
  2088 requests in 1.10s, 1.04MB read
  Socket errors: connect 7, read 12, write 0, timeout 3
  Non-2xx or 3xx responses: 2088
Requests/sec:   1897.74
Transfer/sec:      0.94MB
"""
    t = parse_wrk_text(text)
    assert (t.socket_errors.connect, t.socket_errors.read, t.socket_errors.timeout) == (7, 12, 3)
    assert t.non2xx == 2088 and t.runtime_s == pytest.approx(1.1)
    assert t.latency.avg == pytest.approx(2300) and t.req_per_thread.avg == pytest.approx(1910)
    assert t.transfer_per_s == pytest.approx(0.94 * 2**20)


def test_json_hook(fixtures):
    h = read_wrk_json(fixtures / "clean_ping.wrk.json")
    assert h.hist_kind == "exact"
    # wrk's histogram total is close to, but not exactly, its request count (observed +3 % here;
    # under pipelining far fewer samples than requests): percentiles use the histogram as a sample.
    assert h.hist_counts.sum() == pytest.approx(h.requests, rel=0.1)
    assert list(h.hist_values_us) == sorted(h.hist_values_us)
    assert h.hist_values_us[0] == h.latency.min and h.hist_values_us[-1] == h.latency.max
    assert h.req_per_s == pytest.approx(h.requests / (h.duration_us / 1e6))


def test_json_empty_histogram_means_no_latency(fixtures):
    h = read_wrk_json(fixtures / "read_errors.wrk.json")
    assert h.latency.min is None and h.latency.p99 is None and len(h.hist_values_us) == 0


def test_json_quantiles_kind():
    doc = {"tool": "wrk", "summary": {"duration_us": 1e6, "requests": 10, "bytes": 100,
           "errors": {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0}},
           "latency": {k: 1 for k in ("min", "max", "mean", "stdev", "p50", "p90", "p99", "p999")},
           "requests_per_thread": {"mean": 10, "stdev": 0, "max": 10}, "hist_kind": "quantiles",
           "latency_hist": [[3, 1], [1, 1], [2, 1]]}
    h = parse_wrk_json(json.dumps(doc))
    assert h.hist_kind == "quantiles" and list(h.hist_values_us) == [1, 2, 3]


# ------------------------------------------------------------------ bad input
def test_truncated_json_names_file_and_line(fixtures, tmp_path):
    text = (fixtures / "clean_ping.wrk.json").read_text()
    bad = tmp_path / "r1.wrk.json"
    bad.write_text(text[:200] + "\n" + text[200:400])
    with pytest.raises(RawFormatError) as ei:
        read_wrk_json(bad)
    assert str(bad) in str(ei.value) and "line 2" in str(ei.value)
    assert ei.value.line == 2


def test_missing_key_names_file_and_key(fixtures, tmp_path):
    doc = json.loads((fixtures / "clean_ping.wrk.json").read_text())
    del doc["summary"]["errors"]["read"]
    bad = tmp_path / "r3.wrk.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError) as ei:
        read_wrk_json(bad)
    assert str(bad) in str(ei.value) and "summary.errors.read" in str(ei.value)


def test_wrong_type_names_key():
    with pytest.raises(RawFormatError, match="summary"):
        parse_wrk_json('{"tool":"wrk","summary":"x"}', "f.json")


def test_garbage_line_in_text_names_file_and_line(fixtures, tmp_path):
    lines = (fixtures / "clean_ping.stdout.txt").read_text().splitlines()
    lines.insert(4, "lua: oops, something printed here")
    bad = tmp_path / "r2.stdout.txt"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RawFormatError) as ei:
        read_wrk_text(bad)
    assert str(bad) in str(ei.value) and ei.value.line == 5 and "line 5" in str(ei.value)


def test_bad_unit_in_text_names_line(fixtures):
    text = (fixtures / "clean_ping.stdout.txt").read_text().replace("requests in 1.00s", "requests in 1.00parsecs")
    with pytest.raises(RawFormatError) as ei:
        parse_wrk_text(text, "x.txt")
    assert ei.value.line == 6


def test_text_without_report_is_an_error(fixtures):
    with pytest.raises(RawFormatError) as ei:
        read_wrk_text(fixtures / "connect_refused.stdout.txt")  # empty stdout
    assert "Requests" in str(ei.value) or "Running" in str(ei.value)


def test_req_per_s_disagreement_raises(fixtures):
    t = read_wrk_text(fixtures / "clean_ping.stdout.txt")
    doc = json.loads((fixtures / "clean_ping.wrk.json").read_text())
    doc["summary"]["requests"] = int(doc["summary"]["requests"] * 1.02)
    h = parse_wrk_json(json.dumps(doc))
    with pytest.raises(RawConsistencyError, match="Requests/sec"):
        check_req_per_s(t, h, "clean_ping.stdout.txt")
