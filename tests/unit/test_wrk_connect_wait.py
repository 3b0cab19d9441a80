"""The lab's wrk with --lab-connect-wait, on a captured run (tests/fixtures/wrk/tls_connect_wait.*):
connections still in their TLS handshake when the wait ran out are read from stderr, and the point
fails on them; a run whose stderr says every connection connected passes."""
import shutil
from pathlib import Path

from httplab.parse.layout import RepFiles
from httplab.parse.wrk_loader import load_wrk_point, unconnected
from httplab.tidy.rawrun import fail_reasons

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "wrk"


def _point(tmp_path: Path, stem: str, stderr: str | None = None) -> Path:
    for ext in ("stdout.txt", "stderr.txt", "wrk.json"):
        shutil.copy(FIX / f"{stem}.{ext}", tmp_path / f"r1.{ext}")
    if stderr is not None:
        (tmp_path / "r1.stderr.txt").write_text(stderr)
    return tmp_path


def test_connections_late_for_the_wait_fail_the_point(tmp_path):
    d = _point(tmp_path, "tls_connect_wait")
    assert unconnected(RepFiles.of_dir(d, 1)) == 319
    res = load_wrk_point(d, 1)
    reasons = "; ".join(fail_reasons(0, res, True, "wrk"))
    assert "319 connections still connecting when the connect wait ended" in reasons, reasons


def test_every_connection_connected_is_no_fault(tmp_path):
    d = _point(tmp_path, "clean_ping", stderr="wrk: every connection connected; the clock starts\n")
    assert unconnected(RepFiles.of_dir(d, 1)) == 0
    assert fail_reasons(0, load_wrk_point(d, 1), True, "wrk") == []
