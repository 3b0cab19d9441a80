"""The raw layout (httplab.parse.layout) and the parsers' pure cores: each core, given the contents of
the captured fixtures (text, bytes or the parsed JSON object) and a `where` label, gives what its
path-taking wrapper gives for the same files, and its errors name `where`."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from httplab.parse import layout
from httplab.parse.client_hosts import client_host_of, read_client_host
from httplab.parse.cpuwindow import (client_time_of, read_client_time, server_window_cpu,
                                     server_window_cpu_of, window_cpu, window_cpu_of)
from httplab.parse.errors import RawFormatError
from httplab.parse.h2load_loader import h2load_result, load_h2load_point
from httplab.parse.h2log import h2log_of, read_compact
from httplab.parse.layout import RepFiles
from httplab.parse.loaders import load_rep, register_loader
from httplab.parse.oha import oha_report, parse_oha_json
from httplab.parse.oha_loader import load_oha_point, oha_result
from httplab.parse.tls_info import parse_certificate, point_tls, read_certificate, tls_columns
from httplab.parse.wrk_loader import load_wrk_point, wrk_result
from httplab.tidy import rawrun
from httplab.tidy.rawrun import read_server_cost, server_cost

FIX = Path(__file__).resolve().parents[1] / "fixtures"
WRK, OHA, TLS = FIX / "wrk", FIX / "oha", FIX / "tls"
MULTI = FIX / "multihost" / "real" / "20261124T091323Z-vm"
H2C_POINT = MULTI / "h2c" / "evloop" / "get_ping_c100"


def _same(a, b) -> None:
    """Two LoadResults with the same figures."""
    assert (a is None) == (b is None)
    if a is None:
        return
    for f in ("tool", "requests", "errors", "hist_kind", "notes", "extra", "text", "error_total"):
        x, y = getattr(a, f), getattr(b, f)
        assert x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)), f
    for f in ("duration_s", "bytes_read", "lat_mean_us", "lat_max_us"):
        x, y = getattr(a, f), getattr(b, f)
        assert x == y or (math.isnan(x) and math.isnan(y)), f
    assert np.array_equal(a.hist_values_us, b.hist_values_us)
    assert np.array_equal(a.hist_counts, b.hist_counts)


# ---------------------------------------------------------------- RepFiles
def test_rep_files_from_contents_name_where_and_absent() -> None:
    f = RepFiles.from_contents({"r2.wrk.json": "{}", "r2.h1.host.json": b"{}"}, rep=2, where="pt")
    assert f.stem == "r2" and f.name(layout.WRK_JSON) == "r2.wrk.json"
    assert f.where(layout.WRK_JSON) == "pt/r2.wrk.json"
    assert f.has(layout.WRK_JSON) and not f.has(layout.STDOUT)
    assert f.text(layout.STDOUT) is None and f.json(layout.RUN_JSON) is None and f.size(layout.STDOUT) == 0
    h = f.host_files(1)
    assert h.stem == "r2.h1" and h.host == 1 and h.json(layout.HOST_JSON) == {}
    assert f.directory is None


def test_rep_files_errors_name_the_file_and_line() -> None:
    f = RepFiles.from_contents({"r1.run.json": "{\n  \"a\": 1,\n  oops\n}"}, where="raw/x/pt")
    with pytest.raises(RawFormatError) as exc:
        f.json(layout.RUN_JSON)
    assert exc.value.path == "raw/x/pt/r1.run.json" and exc.value.line == 3
    bad = RepFiles.from_contents({"r1.client.time.txt": b"\xff\xfe"}, where="pt")
    with pytest.raises(RawFormatError, match=r"pt/r1.client.time.txt: not UTF-8"):
        bad.text(layout.CLIENT_TIME)
    assert bad.text(layout.CLIENT_TIME, errors="replace") == "\ufffd\ufffd"
    crlf = RepFiles.from_contents({"r1.stdout.txt": "a\r\nb\rc"})
    assert crlf.text(layout.STDOUT) == "a\nb\nc"     # as Path.read_text gives it


def test_rep_files_read_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(H2C_POINT, tmp_path / "pt")
    reads: list[str] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: reads.append(p.name) or real(p))
    f = RepFiles.of_dir(tmp_path / "pt", 1)
    assert f.json(layout.RUN_JSON) is f.json(layout.RUN_JSON)
    f.text(layout.SERVER_JSON), f.json(layout.SERVER_JSON)
    assert reads == ["r1.run.json", "r1.server.json"]


def test_iter_points_lists_points_and_finished_reps() -> None:
    points = list(layout.iter_points(MULTI))
    rels = [p.rel for p in points]
    assert rels == sorted(rels) and "h2c/evloop/get_ping_c100" in rels
    p = next(p for p in points if p.rel == "h2c/evloop/get_ping_c100")
    assert p.reps == (1,) and p.scenario["tool"] == "h2load"
    assert p.scenario_where == str(H2C_POINT / "scenario.json")
    assert p.rep(1).where(layout.CPU_JSON) == str(H2C_POINT / "r1.cpu.json")
    assert layout.raw_path("RUN", p.rel, 3) == "RUN/h2c/evloop/get_ping_c100/r3"


def test_meta_is_read_once_per_load(fake_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    real = rawrun.read_meta
    monkeypatch.setattr(rawrun, "read_meta", lambda d: calls.append(Path(d)) or real(d))
    run = rawrun.load_run(fake_run)
    assert len(calls) == 1 and len(run.runs) and len(run.suites)


# ---------------------------------------------------------------- the loaders' cores
def _wrk_contents(stem: str) -> dict[str, bytes]:
    return {"r1.wrk.json": (WRK / f"{stem}.wrk.json").read_bytes(),
            "r1.stdout.txt": (WRK / f"{stem}.stdout.txt").read_bytes()}


@pytest.mark.parametrize("stem", ["clean_ping", "latency_ping", "read_errors", "non2xx"])
def test_wrk_core_on_contents_matches_the_files(tmp_path: Path, stem: str) -> None:
    contents = _wrk_contents(stem)
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    core = wrk_result(RepFiles.from_contents(contents, where=str(tmp_path)))
    _same(core, load_wrk_point(tmp_path, 1))
    assert core.source_files == (str(tmp_path / "r1.wrk.json"), str(tmp_path / "r1.stdout.txt"))
    assert wrk_result(RepFiles.from_contents({"r1.stdout.txt": b""})) is None


def test_wrk_core_error_names_where() -> None:
    bad = RepFiles.from_contents({"r1.wrk.json": '{"tool": "wrk"}'}, where="raw/r/pt")
    with pytest.raises(RawFormatError, match=r"raw/r/pt/r1\.wrk\.json.*summary"):
        wrk_result(bad)


def test_oha_core_on_contents_matches_the_files(tmp_path: Path) -> None:
    scen = {"connections": 100, "streams": 1, "load_model": "open", "target_rps": 53685,
            "load_fraction": 0.8, "capacity_ref_rps": 67106.1}
    data = (OHA / "open_h1_evloop.json").read_bytes()
    (tmp_path / "r1.oha.json").write_bytes(data)
    (tmp_path / "scenario.json").write_text(json.dumps(scen))
    core = oha_result(RepFiles.from_contents({"r1.oha.json": data}, where=str(tmp_path)), scen)
    _same(core, load_oha_point(tmp_path, 1))
    doc = json.loads(data)
    assert oha_report(doc, "x").responses == parse_oha_json(OHA / "open_h1_evloop.json").responses
    with pytest.raises(RawFormatError, match="^where, key 'total': missing key"):
        oha_report({"summary": {}}, "where")


def test_h2load_core_on_contents_matches_the_files(tmp_path: Path) -> None:
    names = {"r1.stdout.txt": "h2_ping.stdout.txt", "r1.lat.stdout.txt": "h2_ping.lat.stdout.txt",
             "r1.lat.h2log.json": "h2_ping.lat.h2log.json", "r1.lat.stderr.txt": "h2_ping.lat.stderr.txt"}
    contents = {k: (TLS / v).read_bytes() for k, v in names.items()}
    for k, v in contents.items():
        (tmp_path / k).write_bytes(v)
    (tmp_path / "scenario.json").write_text(json.dumps({"tls": True}))
    core = h2load_result(RepFiles.from_contents(contents, where=str(tmp_path)), {"tls": True})
    _same(core, load_h2load_point(tmp_path, 1))
    assert core.text["alpn"] == "h2" and core.text["alpn_source"] == "h2load"
    doc = json.loads(contents["r1.lat.h2log.json"])
    assert h2log_of(doc, "w").requests == read_compact(TLS / "h2_ping.lat.h2log.json").requests
    missing = h2load_result(RepFiles.from_contents({}, rep=4), {})
    assert "throughput run: r4.stdout.txt missing" in missing.notes


def test_multihost_host_core_matches_the_files() -> None:
    host = RepFiles.of_dir(H2C_POINT, 1).host_files(2)
    _same(h2load_result(host, json.loads((H2C_POINT / "scenario.json").read_text())),
          load_h2load_point(H2C_POINT, 1, host=2))
    doc = json.loads((H2C_POINT / "r1.h2.host.json").read_text())
    assert client_host_of(doc, "w", 2) == read_client_host(H2C_POINT / "r1.h2.host.json", 2).__class__(
        **{**read_client_host(H2C_POINT / "r1.h2.host.json", 2).__dict__, "path": "w"})
    with pytest.raises(RawFormatError, match="^w, key 'host'"):
        client_host_of(doc, "w", 1)


def test_path_registered_loader_needs_a_directory() -> None:
    register_loader("pathonly", lambda scenario_dir, rep, host=None: None)
    with pytest.raises(TypeError, match="reads files, not contents"):
        load_rep("pathonly", RepFiles.from_contents({}), {})


# ---------------------------------------------------------------- windows, TLS, server cost
def test_window_cores_on_contents_match_the_files() -> None:
    cpu_doc = json.loads((H2C_POINT / "r1.cpu.json").read_text())
    server = server_window_cpu_of(cpu_doc, "cpu", 1.5, 0.2)
    assert server == server_window_cpu(H2C_POINT, 1, 1.5, 0.2)
    text = (H2C_POINT / "r1.h1.client.time.txt").read_text()
    assert client_time_of(text, "t") == read_client_time(H2C_POINT / "r1.h1.client.time.txt")
    with pytest.raises(RawFormatError, match=r"^t, line 1: no 'user_s="):
        client_time_of("nothing here\n", "t")


def test_window_cpu_core_matches_the_files(tmp_path: Path) -> None:
    shutil.copy(H2C_POINT / "r1.cpu.json", tmp_path / "r1.cpu.json")
    doc = json.loads((H2C_POINT / "r1.cpu.json").read_text())
    time_text = (H2C_POINT / "r1.h1.client.time.txt").read_text()
    (tmp_path / "r1.client.time.txt").write_text(time_text)
    core = window_cpu_of(doc, "cpu", time_text, "time", 1.0, 0.0)
    assert core == window_cpu(tmp_path, 1, 1.0, 0.0)
    assert core.client_cpu_s == pytest.approx(0.53 + 0.48)
    assert math.isnan(window_cpu_of(doc, "cpu", None, "time", 1.0).client_cpu_s)   # no GNU time line
    assert window_cpu(tmp_path, 2, 1.0) is None                                     # no r2.cpu.json


def test_tls_core_on_contents() -> None:
    text = (TLS / "h2_tls13.full.tls.txt").read_text()
    cols, reasons = tls_columns(text, "w", "r1.tls.txt", {"protocol": "h2"})
    assert cols["alpn"] == "h2" and cols["alpn_source"] == "s_client" and reasons == []
    cols, reasons = tls_columns(None, "w", "r1.tls.txt", {"protocol": "h2"},
                                {"alpn": "h2", "alpn_source": "h2load"})
    assert reasons == ["TLS: r1.tls.txt missing"] and cols["alpn_source"] == "h2load"


def test_tls_core_matches_point_tls(tmp_path: Path) -> None:
    shutil.copy(TLS / "h1_tls12.full.tls.txt", tmp_path / "r1.tls.txt")
    text = (TLS / "h1_tls12.full.tls.txt").read_text()
    scen = {"protocol": "h1"}
    assert tls_columns(text, str(tmp_path / "r1.tls.txt"), "r1.tls.txt", scen) == point_tls(tmp_path, 1, scen)


def test_certificate_through_the_layout(tmp_path: Path) -> None:
    (tmp_path / "https").mkdir()
    shutil.copy(TLS / "certificate_san.txt", tmp_path / "https" / "certificate.txt")
    text, where = layout.certificate_text(tmp_path, "https")
    assert read_certificate(tmp_path, "https") == parse_certificate(text, where)
    assert layout.certificate_text(tmp_path, "h2c") is None


def test_server_cost_core(tmp_path: Path) -> None:
    doc = json.loads((H2C_POINT / "r1.server.json").read_text())
    (tmp_path / "s.json").write_text(json.dumps(doc))
    assert server_cost(doc, "w") == read_server_cost(tmp_path / "s.json")
    with pytest.raises(RawFormatError, match="^w, key 'clk_tck'"):
        server_cost({k: v for k, v in doc.items() if k != "clk_tck"}, "w")
