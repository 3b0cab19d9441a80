"""h2load text report parser (nghttp2 1.52 captured fixtures, and the ≥ 1.69 layout)."""
from pathlib import Path

import pytest

from httplab.parse.errors import RawConsistencyError, RawFormatError
from httplab.parse.h2load import (check_consistency, has_summary, is_h2, parse_duration_us, parse_h2load_text,
                            parse_size_bytes, read_h2load_text)

H2 = Path(__file__).resolve().parents[1] / "fixtures" / "h2load"


def test_units():
    assert parse_duration_us("301us") == 301
    assert parse_duration_us("8.14ms") == pytest.approx(8140)
    assert parse_duration_us("1.08s") == pytest.approx(1.08e6)
    assert parse_duration_us("3.00") is None
    assert parse_size_bytes("641.27KB") == pytest.approx(641.27 * 1024)
    assert parse_size_bytes("0B") == 0
    assert parse_size_bytes("1.16GB") == pytest.approx(1.16 * 1024**3)


def test_clean_ping_152():
    t = read_h2load_text(H2 / "clean_ping.stdout.txt")
    assert t.layout == "1.52" and t.protocol == "h2c" and is_h2(t.protocol)
    assert (t.requests_total, t.started, t.done, t.succeeded) == (41930, 41930, 41930, 41930)
    assert (t.failed, t.errored, t.timeout) == (0, 0, 0)
    assert (t.status_2xx, t.status_3xx, t.status_4xx, t.status_5xx) == (41877, 0, 0, 0)
    assert t.traffic_bytes == 1089951 and t.header_bytes == 241264 and t.data_bytes == 240176
    assert t.header_space_savings_pct == pytest.approx(94.98)
    assert t.request.min == 214 and t.request.max == pytest.approx(14360) and t.request.mean == pytest.approx(4740)
    assert t.request.within_sd_pct == pytest.approx(71.05)
    assert t.request.median is None and t.request.p99 is None and not t.has_percentiles
    assert t.req_s.mean == pytest.approx(2095.88)
    assert t.clients == 10


def test_req_per_s_is_over_main_duration_not_finished_time():
    """`finished in` (3.00 s) includes the 1 s warm-up; req/s on that line = done / 2 s."""
    t = read_h2load_text(H2 / "clean_ping.stdout.txt")
    assert t.finished_s == pytest.approx(3.0)
    assert t.warmup_s == 1.0 and t.main_duration_s == 2.0 and t.measured_duration_s == 2.0
    assert t.req_per_s == pytest.approx(20965.0) == t.done / t.measured_duration_s
    assert t.done / t.finished_s < 0.7 * t.req_per_s  # requests / finished time would be wrong
    assert t.traffic_bytes / t.measured_duration_s == pytest.approx(t.bytes_per_s, rel=1e-4)
    check_consistency(t)


def test_count_based_run_uses_finished_time():
    t = read_h2load_text(H2 / "count_ping.stdout.txt")
    assert t.main_duration_s is None and t.warmup_s is None
    assert t.measured_duration_s == pytest.approx(0.90338)
    assert t.done / t.measured_duration_s == pytest.approx(t.req_per_s, rel=1e-5)
    assert t.connect.mean == pytest.approx(355) and t.ttfb.max == pytest.approx(7230)
    check_consistency(t)


@pytest.mark.parametrize("stem", ["clean_ping", "not_found", "post_1k", "echo_4k", "connect_refused",
                                  "log_ping", "log_404", "killed_server", "h1_ping", "count_ping",
                                  "v169_ping"])
def test_every_fixture_parses_and_is_consistent(stem):
    t = read_h2load_text(H2 / f"{stem}.stdout.txt")
    check_consistency(t)
    assert t.req_s is not None


def test_error_and_protocol_fixtures():
    nf = read_h2load_text(H2 / "not_found.stdout.txt")
    assert nf.failed == 61025 and nf.succeeded == 61 and nf.status_4xx == 61062 and nf.non_2xx == 61062
    refused = read_h2load_text(H2 / "connect_refused.stdout.txt")
    assert refused.protocol is None and refused.done == 0 and refused.req_per_s == 0
    assert read_h2load_text(H2 / "h1_ping.stdout.txt").protocol == "http/1.1"
    assert not is_h2("http/1.1") and not is_h2(None) and is_h2("h2")


def test_v169_layout_has_percentiles():
    t = read_h2load_text(H2 / "v169_ping.stdout.txt")
    assert t.layout == "1.69" and t.has_percentiles
    assert t.request.median == pytest.approx(3900) and t.request.p95 == pytest.approx(5610)
    assert t.request.p99 == pytest.approx(6920) and t.request.within_sd_pct == pytest.approx(74.88)
    assert t.connect.median == 0 and t.ttfb.p99 == 0
    assert t.req_s.median == pytest.approx(2521.40) and t.req_s.p99 == pytest.approx(2550.31)
    assert t.req_per_s == 25235.0 and t.done == 50470 and t.status_2xx == 50520
    assert t.req_per_s == t.done / t.measured_duration_s


def _lines(stem="clean_ping"):
    return (H2 / f"{stem}.stdout.txt").read_text().splitlines()


def _line_no(lines, prefix):
    return next(i for i, ln in enumerate(lines) if ln.strip().startswith(prefix)) + 1


@pytest.mark.parametrize("stem", ["clean_ping", "v169_ping"])
def test_garbage_where_a_row_belongs(stem):
    lines = _lines(stem)
    n = _line_no(lines, "time for connect" if stem == "clean_ping" else "connect")
    lines[n - 1] = "garbage garbage"
    with pytest.raises(RawFormatError) as ei:
        parse_h2load_text("\n".join(lines), "x.stdout.txt")
    assert ei.value.line == n and "x.stdout.txt" in str(ei.value) and "connect" in str(ei.value)


def test_bad_value_in_a_row():
    lines = _lines()
    n = _line_no(lines, "time for request")
    lines[n - 1] = lines[n - 1].replace("214us", "214xx")
    with pytest.raises(RawFormatError, match="214xx") as ei:
        parse_h2load_text("\n".join(lines), "x")
    assert ei.value.line == n


def test_missing_requests_line():
    lines = _lines()
    n = _line_no(lines, "requests:")
    del lines[n - 1]
    with pytest.raises(RawFormatError, match="'requests:'") as ei:
        parse_h2load_text("\n".join(lines), "x")
    assert ei.value.line == n


@pytest.mark.parametrize("cut_after", ["finished in", "traffic:", "time for request"])
def test_truncated_file(cut_after):
    lines = _lines()
    n = _line_no(lines, cut_after)
    with pytest.raises(RawFormatError, match="truncated") as ei:
        parse_h2load_text("\n".join(lines[:n]), "x")
    assert ei.value.line == n


def test_no_report_and_unknown_header():
    text = "starting benchmark...\nspawning thread #0: 10 total client(s). 100 total requests\n"
    assert not has_summary(text)
    with pytest.raises(RawFormatError, match="finished in"):
        parse_h2load_text(text, "x")
    lines = _lines()
    n = _line_no(lines, "min")
    lines[n - 1] = "   min   max   mean"
    with pytest.raises(RawFormatError, match="header") as ei:
        parse_h2load_text("\n".join(lines), "x")
    assert ei.value.line == n


def test_inconsistent_req_per_s():
    text = (H2 / "clean_ping.stdout.txt").read_text().replace("20965.00 req/s", "30000.00 req/s")
    with pytest.raises(RawConsistencyError, match="req/s"):
        check_consistency(parse_h2load_text(text, "x"))
