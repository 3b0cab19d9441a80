"""TLS info of the https suite: s_client / h2load / certificate parsers on real captures
(tests/fixtures/tls), the ALPN rule, the h2load loader over TLS, and the fake https run."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from httplab.parse.errors import RawFormatError
from httplab.parse.h2load_loader import load_h2load_point
from httplab.tidy.rawrun import RUNS_COLUMNS, TEXT_EXTRA_COLUMNS, load_run
from httplab.parse.tls_info import (alpn_problem, parse_certificate, parse_h2load_tls, parse_s_client,
                              read_certificate, read_s_client)

TLS = Path(__file__).resolve().parents[1] / "fixtures" / "tls"


# ---------------------------------------------------------------- s_client
def test_brief_reports_have_version_and_cipher_but_no_alpn():
    for name in ("h2_tls13.brief.tls.txt", "h1_tls13.brief.tls.txt"):
        info = read_s_client(TLS / name)
        assert info.connected and info.version == "TLSv1.3" and info.cipher == "TLS_AES_128_GCM_SHA256"
        assert info.alpn is None and not info.alpn_stated  # OpenSSL 3.0 -brief prints no ALPN
        assert info.temp_key == "X25519, 253 bits" and info.peer == "CN = localhost" and info.error is None
    info = read_s_client(TLS / "h1_tls12.brief.tls.txt")
    assert (info.version, info.cipher) == ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384")


def test_full_reports_state_alpn():
    h2 = read_s_client(TLS / "h2_tls13.full.tls.txt")
    assert (h2.version, h2.cipher, h2.alpn, h2.alpn_stated) == ("TLSv1.3", "TLS_AES_128_GCM_SHA256", "h2", True)
    h1 = read_s_client(TLS / "h1_tls12.full.tls.txt")
    assert (h1.version, h1.alpn) == ("TLSv1.2", "http/1.1")


def test_failed_handshakes():
    # the server offered only http/1.1 and rejected ALPN h2 with an alert: no session
    full = read_s_client(TLS / "h2_no_app_protocol.full.tls.txt")
    assert not full.connected and full.alpn is None and full.alpn_stated
    assert "no application protocol" in full.error
    brief = read_s_client(TLS / "h2_no_app_protocol.brief.tls.txt")
    assert not brief.connected and "no application protocol" in brief.error
    refused = read_s_client(TLS / "refused.brief.tls.txt")
    assert not refused.connected and refused.version is None and "Connection refused" in refused.error


@pytest.mark.parametrize("text, line, words", [
    ("CONNECTION ESTABLISHED\nProtocol version: TLS 9\n", 2, "protocol version"),
    ("CONNECTION ESTABLISHED\nProtocol version: TLSv1.3\nCiphersuite: TLS AES\n", 3, "cipher suite"),
    ("CONNECTION ESTABLISHED\nProtocol version: TLSv1.3\nNew, TLSv1.2, Cipher is X\n", 3, "contradicts"),
    ("CONNECTED(00000003)\nALPN protocol: h2\nNo ALPN negotiated\n", 3, "contradicts"),
    ("CONNECTED(00000003)\nNew, TLSv1.3 Cipher is\n", 2, "session line"),
    ("\nhello world\nsomething else\n", 2, "not an openssl s_client report"),
])
def test_bad_s_client_input_names_file_and_line(text, line, words):
    with pytest.raises(RawFormatError) as exc:
        parse_s_client(text, "raw/x/https/go/h2_get_ping_c100/r1.tls.txt")
    assert exc.value.line == line and words in str(exc.value)
    assert str(exc.value).startswith(f"raw/x/https/go/h2_get_ping_c100/r1.tls.txt, line {line}:")


def test_non_utf8_tls_file(tmp_path):
    p = tmp_path / "r1.tls.txt"
    p.write_bytes(b"\xff\xfe CONNECTED")
    with pytest.raises(RawFormatError, match="r1.tls.txt: not UTF-8"):
        read_s_client(p)


# ---------------------------------------------------------------- h2load and certificate
def test_h2load_tls_lines():
    info = parse_h2load_tls((TLS / "h2_ping.stdout.txt").read_text(), "h2_ping.stdout.txt")
    assert (info.version, info.cipher, info.alpn, info.temp_key) == (
        "TLSv1.3", "TLS_AES_128_GCM_SHA256", "h2", "X25519 253 bits")
    as_h1 = parse_h2load_tls((TLS / "h2_as_h1.stdout.txt").read_text())
    assert as_h1.alpn == "http/1.1"
    cleartext = (Path(__file__).resolve().parents[1] / "fixtures" / "h2load" / "clean_ping.stdout.txt").read_text()
    assert parse_h2load_tls(cleartext) is None
    with pytest.raises(RawFormatError, match=r"h2.txt, line 2: cannot read TLS protocol"):
        parse_h2load_tls("starting benchmark...\nTLS Protocol: TLS v1.3\n", "h2.txt")


def test_certificate(tmp_path):
    cert = parse_certificate((TLS / "certificate.txt").read_text())
    assert cert.subject == "CN = localhost" and cert.fingerprint_alg == "SHA256"
    assert cert.fingerprint.startswith("C6:63:33") and cert.key.startswith("RSA 2048, self-signed")
    assert cert.not_after == "Nov 22 07:00:17 2026 GMT"
    with pytest.raises(RawFormatError, match=r"certificate.txt, line 2: unexpected line"):
        parse_certificate("subject=CN = localhost\n-----BEGIN CERTIFICATE-----\n", "certificate.txt")
    with pytest.raises(RawFormatError, match="no 'subject=' line"):
        parse_certificate("notBefore=Nov 21 07:00:17 2026 GMT\n", "certificate.txt")
    assert read_certificate(tmp_path, "https") is None and cert.san is None
    # as scripts/lib.sh writes it: -ext subjectAltName adds a header line and an indented value
    san = parse_certificate((TLS / "certificate_san.txt").read_text())
    assert san.san == "DNS:localhost, IP Address:127.0.0.1" and san.fingerprint.startswith("8D:12")
    assert san.key == "RSA 2048, self-signed, made for run 20261121T120000Z-x"
    assert parse_certificate("No extensions in certificate\nsubject=CN = x\n").subject == "CN = x"


@pytest.mark.parametrize("protocol, alpn, ok", [
    ("h2", "h2", True), ("h2", None, False), ("h2", "http/1.1", False),
    ("h1", "http/1.1", True), ("h1", None, True), ("h1", "h2", False),
])
def test_alpn_rule(protocol, alpn, ok):
    problem = alpn_problem(protocol, alpn)
    assert (problem is None) == ok
    if not ok:
        assert f"negotiated ALPN {alpn or 'none'}" in problem


# ---------------------------------------------------------------- h2load loader over TLS
def _h2_point(tmp_path: Path, name: str, stdout: str, tls: bool) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "scenario.json").write_text(json.dumps({"tls": tls, "protocol": "h2"}))
    shutil.copy(TLS / stdout, d / "r1.stdout.txt")
    shutil.copy(TLS / "h2_ping.lat.stdout.txt", d / "r1.lat.stdout.txt")
    shutil.copy(TLS / "h2_ping.lat.h2log.json", d / "r1.lat.h2log.json")
    return d


def test_h2load_loader_requires_h2_over_tls(tmp_path):
    ok = load_h2load_point(_h2_point(tmp_path, "ok", "h2_ping.stdout.txt", True), 1)
    assert not any("application protocol" in n for n in ok.notes)
    assert ok.text == {"alpn": "h2", "alpn_source": "h2load", "tls_version": "TLSv1.3",
                       "tls_cipher": "TLS_AES_128_GCM_SHA256"}
    assert ok.requests == 34024 and ok.req_per_s == pytest.approx(17012.0)
    bad = load_h2load_point(_h2_point(tmp_path, "bad", "h2_as_h1.stdout.txt", True), 1)
    assert "throughput run: application protocol http/1.1, expected h2 (TLS with ALPN)" in bad.notes
    # cleartext scenarios keep the old rule (h2c or h2 accepted, h2c named in the note)
    clear = load_h2load_point(_h2_point(tmp_path, "clear", "h2_as_h1.stdout.txt", False), 1)
    assert "throughput run: application protocol http/1.1, expected h2c" in clear.notes and clear.text == {}


# ---------------------------------------------------------------- the fake https run
@pytest.fixture(scope="module")
def https_run(tmp_path_factory):
    from make_fake_https import make_fake_https_run
    root = tmp_path_factory.mktemp("raw")
    return load_run(make_fake_https_run(root, missing_tls=(("nginx", "h1_get_ping_c50", 4),)))


def test_fake_https_frames(https_run):
    h = https_run.suite("https").runs
    tls_cols = ["tls_version", "tls_cipher", "alpn", "alpn_source"]
    assert set(tls_cols) <= set(TEXT_EXTRA_COLUMNS)
    assert list(h.columns) == list(RUNS_COLUMNS) + ["req_per_s_with_log"] + tls_cols
    assert set(h["protocol"]) == {"h1", "h2"} and h["tls"].all()
    assert set(h.loc[h["protocol"] == "h1", "streams"]) == {1} and set(h.loc[h["protocol"] == "h2", "streams"]) == {10}
    ok = h[h["status"] == "ok"]
    assert (ok["tls_version"] == "TLSv1.3").all() and (ok["tls_cipher"] == "TLS_AES_128_GCM_SHA256").all()
    assert set(ok.loc[ok["protocol"] == "h2", "alpn"]) == {"h2"}
    assert ok.loc[ok["protocol"] == "h1", "alpn"].isna().all()
    # h2o and nginx serve no POST
    assert set(h.loc[h["method"] == "POST", "server"]) == {"evloop", "go"}
    # the other suites of the run keep their own columns
    assert list(https_run.suite("http1").runs.columns) == list(RUNS_COLUMNS)
    assert list(https_run.suite("h2c").runs.columns) == list(RUNS_COLUMNS) + ["req_per_s_with_log"]


def test_alpn_mismatch_and_missing_tls_fail(https_run):
    h = https_run.suite("https").runs
    failed = h[h["status"] == "failed"].set_index(["server", "scenario", "rep"])["fail_reason"]
    assert set(failed.index) == {("go", "h2_get_ping_c100", 3), ("evloop", "h2_get_echo_s64_c100", 2),
                                 ("nginx", "h1_get_ping_c50", 4)}
    assert failed[("go", "h2_get_ping_c100", 3)] == (
        "TLS: negotiated ALPN http/1.1, expected h2 for this h2 scenario (from s_client)")
    assert "throughput run: application protocol http/1.1, expected h2 (TLS with ALPN)" in failed[
        ("evloop", "h2_get_echo_s64_c100", 2)]
    assert failed[("nginx", "h1_get_ping_c50", 4)] == "TLS: r4.tls.txt missing"
    row = h[(h["server"] == "go") & (h["scenario"] == "h2_get_ping_c100") & (h["rep"] == 3)].iloc[0]
    assert (row["tls_version"], row["alpn"], row["alpn_source"]) == ("TLSv1.2", "http/1.1", "s_client")


def test_tls_tables_and_summary(https_run):
    from httplab.lab.suites import suite_module
    tls_cost_table, tls_params_table = suite_module("https").tls_cost_table, suite_module("https").tls_params_table
    h = https_run.suite("https").runs
    full = https_run.runs
    t1 = tls_cost_table(h, full[full["suite"] == "http1"], "h1")
    assert list(t1.columns) == ["Server", "HTTP/1.1 req/s", "HTTPS/1.1 req/s", "Δ req/s (TLS cost)",
                                "HTTP/1.1 CPU-µs/req", "HTTPS/1.1 CPU-µs/req", "Δ CPU-µs/req (TLS cost)"]
    assert list(t1["Server"]) == ["C (evloop)", "Go net/http", "nginx (ref)"]
    assert all(c.startswith(("−", "+", "no clear")) for c in t1["Δ req/s (TLS cost)"])
    t2 = tls_cost_table(h, full[full["suite"] == "h2c"], "h2")
    assert "h2c req/s" in t2.columns and len(t2) == 4
    none = tls_cost_table(h, None, "h2")
    assert none.empty and "no h2c suite in this run" in none.attrs["caption"]
    p = tls_params_table(h)
    go_h2 = p[(p["Server"] == "Go net/http") & (p["Protocol"] == "HTTPS/2 (h2load)")].iloc[0]
    assert go_h2["ALPN mismatches"] == 1 and "TLSv1.2 (1/" in go_h2["TLS version"]
    assert "s_client (1/" in go_h2["ALPN from"]


def test_https_report_context(https_run, tmp_path):
    from httplab.report import engine as R
    from httplab.lab.suites import suite_module
    HS = suite_module("https")
    from httplab.stats.write import build_data
    _, _, written = build_data(https_run.run_dir, tmp_path / "out")
    assert "run.json" in {p.name for p in written}
    ctx = HS.open_https_report(run_dir=https_run.run_dir, out_dir=tmp_path / "out", baseline="go")
    assert [s for s in HS.sections(ctx)] == ["h1_ping", "h1_echo", "h2_ping", "h2_echo_get", "h2_echo_post"]
    post = R.section_table(ctx, "h2_echo_post")
    assert "C Transfer/s" in post.columns and "h2load's traffic total over TLS" in post.attrs["caption"]
    ping = R.section_table(ctx, "h1_ping")
    assert "nginx req/s (ref)" in ping.columns and list(ping["Connections"]) == ["50", "100", "500"]
    text = HS.summary_text(ctx)
    assert "HTTPS/1.1 GET /ping:" in text and "HTTPS/2 POST /echo:" in text
    assert "TLS cost HTTP/1.1 → HTTPS/1.1" in text and "ALPN mismatches (failed): 2" in text
    # the event loop against each reference server, per connection count (fake speeds: C 1.9, h2o 1.7)
    h2o_line = next(line for line in text.splitlines() if line.startswith("C vs h2o, HTTPS/2 GET /ping req/s: "))
    # every Δ with its verdict from the comparisons frame
    assert re.search(r"\+\d+(\.\d)?% \[\+\d+(\.\d)?%, \+\d+(\.\d)?%\] faster \(50 conns\); .* faster \(100 conns\)$", h2o_line), h2o_line
    assert "C vs nginx, HTTPS/2 GET /ping req/s: " in text
    assert "Subject | CN = localhost" in HS.certificate(ctx)


def test_filtered_probe_as_lib_sh_writes_it():
    """scripts/lib.sh keeps only s_client's descriptive lines; they still give version, cipher and ALPN."""
    from httplab.parse.tls_info import read_s_client

    info = read_s_client(TLS / "h2_tls13.filtered.tls.txt")
    assert (info.version, info.cipher, info.alpn, info.connected) == (
        "TLSv1.3", "TLS_AES_128_GCM_SHA256", "h2", True)
