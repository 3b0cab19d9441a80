"""The offline archive (scripts/offline.sh): packed here, unpacked outside the checkout, run in a
network namespace with no route out and nothing but the archive's tools and /usr/bin:/bin on PATH,
where package managers and toolchains are shims that log any call and fail; the run it brings back
is imported and built at home.

The archive is packed once for the module (about 25 s on the two-core lab machine), the run is one
quick point of the http1 suite on two servers and of the h3 suite on three (about 20 s): HTTP/1.1
over TCP, and HTTP/3 over QUIC with the lab's h3load, ngtcp2's client at the gate, and the C
server's own HTTP/3 (its QUIC libraries carried with it) and ngtcp2's example server among the
servers.

The HTTP/3 point is 10 connections × 10 streams (h3:get_ping_c10), not h3's 100 × 10: run inside
the test command, beside its other loads, quic-go once lost 60 of 100 connections made in one
burst (30 not made, 30 cut), most likely by its accept queue, which refuses connections beyond 32
waiting for a starved accept loop. That is quic-go's behaviour on an oversubscribed core, which the
h3 suite itself reports (a failed point, with h3load's first error as the reason); this test is
about the archive.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 60 << 20
SHIMS = ("apt", "apt-get", "dpkg", "pip", "pip3", "cargo", "go", "npm", "wget")
RUN_FLAGS = ["--quick", "--suites", "http1,h3", "--servers", "evloop,floor,go_h3,ngtcp2", "--scenarios", "http1:get_ping_c100,h3:get_ping_c10",
             "--reps", "1", "--duration", "1", "--warmup", "0"]

pytestmark = [pytest.mark.concurrent, pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="the offline run is checked in a network namespace: needs root and iproute2")]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("offline-pack") / "httplab-offline-test.tar.xz"
    r = subprocess.run([str(ROOT / "scripts/offline.sh"), "pack", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == str(out)
    return out


@pytest.fixture(scope="module")
def unpacked(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive unpacked in a fresh folder outside the checkout (as `tar xJf` would)."""
    where = tmp_path_factory.mktemp("offline-host")
    assert ROOT not in where.parents
    with tarfile.open(archive) as tar:
        tar.extractall(where, filter="tar")
    return where / "httplab-offline"


def test_the_archive_fits_and_says_what_it_holds(archive: Path, unpacked: Path) -> None:
    assert archive.stat().st_size <= BUDGET, f"{archive.stat().st_size / 2**20:.1f} MiB"
    manifest = (unpacked / "MANIFEST").read_text()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert f"git {rev}" in manifest and "glibc >= 2." in manifest and "python3 >= 3.11" in manifest
    for prog in ("wrk", "h2load", "oha", "nginx", "h2o", "jq", "curl", "openssl", "time", "gtlsclient", "gtlsserver"):
        assert (unpacked / "tools/bin" / prog).is_file() and f"  {prog} " in manifest
    assert "ngtcp2-client 0." in manifest and (unpacked / "build/tools/h3load").is_file()
    for name in ("evloop", "evloop_uring", "go", "nginx", "h2o", "floor", "floor/uring", "go/h3", "rust/h3", "ngtcp2"):
        assert (unpacked / "servers" / name / "lab.toml").is_file() or \
            (unpacked / "servers" / name.replace("_", "/") / "lab.toml").is_file(), name
    # the servers that need a runtime the archive does not carry stay out of every suite
    assert not (unpacked / "servers/node").exists() and not (unpacked / "servers/python").exists()
    # only the run-time layers of the package: the analysis stays at home
    assert (unpacked / "httplab/lab").is_dir() and not (unpacked / "httplab/stats").exists()


def test_a_smaller_archive_takes_only_the_servers_modes_and_tools_named(tmp_path: Path) -> None:
    """pack --servers/--modes/--without: for a host that runs a few suites, or a transfer with a size
    limit. Only the named servers' manifests, only their named modes' programs, no left-out tool."""
    out = tmp_path / "lean.tar.xz"
    r = subprocess.run([str(ROOT / "scripts/offline.sh"), "pack", "--servers", "evloop,go", "--modes", "h1",
                        "--without", "oha,h2o", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
        manifest = tar.extractfile("httplab-offline/MANIFEST").read().decode()  # type: ignore[union-attr]
    bench = {n.rsplit("/", 1)[1] for n in names if n.startswith("httplab-offline/build/bench/")}
    # not the TLS or h2c programs; the machine's canary whatever the servers (scripts/lib/canary.sh)
    assert bench == {"http_bench_server", "go_http_bench", "canary"}
    manifests = {n for n in names if n.endswith("/lab.toml")}
    assert manifests == {"httplab-offline/servers/evloop/lab.toml", "httplab-offline/servers/go/lab.toml"}
    assert "httplab-offline/tools/bin/oha" not in names and "httplab-offline/tools/bin/h2o" not in names
    assert "httplab-offline/tools/bin/wrk" in names
    assert "packed for: servers evloop,go; modes h1; programs left out: oha,h2o" in manifest


def test_nothing_in_the_archive_points_into_the_checkout(unpacked: Path) -> None:
    """No script, manifest or setting names the checkout (its compiled programs may hold their
    source paths in strings: never a path they open; their RUNPATHs must not)."""
    needle = str(ROOT).encode()
    for f in unpacked.rglob("*"):
        if not f.is_file() or f.is_symlink():
            continue
        data = f.read_bytes()
        if data[:4] == b"\x7fELF":
            dyn = subprocess.run(["readelf", "-d", str(f)], capture_output=True, text=True).stdout
            assert str(ROOT) not in dyn, f
        else:
            assert needle not in data, f


def shims(where: Path) -> tuple[Path, Path]:
    """A folder of package-manager and toolchain shims that log their call and fail, and the log."""
    d, log = where / "shims", where / "shims.log"
    d.mkdir()
    for name in SHIMS:
        (d / name).write_text(f'#!/bin/sh\necho "{name} $*" >>"{log}"\nexit 97\n')
        (d / name).chmod(0o755)
    return d, log


@pytest.fixture(scope="module")
def offline_run(unpacked: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """run.sh with the quick flags in a namespace whose only link is lo; the run's folder."""
    d, log = shims(tmp_path_factory.mktemp("offline-shims"))
    ns = f"hloffline{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        env = {"PATH": f"{d}:/usr/bin:/bin", "HOME": str(unpacked.parent), "LANG": "C.UTF-8"}
        r = subprocess.run(["ip", "netns", "exec", ns, str(unpacked / "run.sh"), *RUN_FLAGS],
                           capture_output=True, text=True, timeout=180, env=env, cwd=unpacked.parent)
    finally:
        subprocess.run(["ip", "netns", "del", ns])
    assert r.returncode == 0, r.stderr[-3000:]
    assert not log.exists(), "called on the offline host: " + log.read_text()
    runs = sorted((unpacked / "raw").iterdir())
    assert len(runs) == 1
    return runs[0], r.stderr


def test_the_offline_run_is_complete(offline_run: tuple[Path, str]) -> None:
    run, stderr = offline_run
    meta = json.loads((run / "meta.json").read_text())
    assert meta["complete"] is True and meta["suites"] == ["http1", "h3"]
    assert meta["git"]["commit"] != "none" and meta["tools"]["go"] != "not found"   # recorded at pack time
    assert meta["tools"]["gtlsclient"].startswith("ngtcp2-client 0.") and meta["tools"]["h3load"].startswith("h3load ")
    for suite in ("http1", "h3"):
        assert json.loads((run / suite / "suite.json").read_text())["status"] == "complete"
    # packed on the host (the packer is on the standard library): one archive per server
    from httplab.tidy import rawpack
    for server in ("evloop", "floor"):
        assert not (run / "http1" / server).exists(), stderr
        files = rawpack.read_archive(run / "http1" / f"{server}.tar.xz").files
        point = json.loads(files[f"{server}/get_ping_c100/r1.run.json"])
        assert point["exit_code"] == 0 and point["server_alive"] is True, point
        assert b"PASS" in files[f"{server}/verify.r1.txt"]
        assert len(files[f"{server}/get_ping_c100/r1.wrk.json"]) > 0
    for server in ("evloop", "go_h3", "ngtcp2"):       # the C server's HTTP/3: its QUIC libraries carried
        files = rawpack.read_archive(run / "h3" / f"{server}.tar.xz").files
        point = json.loads(files[f"{server}/get_ping_c10/r1.run.json"])
        assert point["exit_code"] == 0 and point["server_alive"] is True, point
        assert b"PASS GET /ping: HTTP/3 200" in files[f"{server}/verify.r1.txt"]
        assert json.loads(files[f"{server}/get_ping_c10/r1.h3load.json"])["requests_window"] > 0
    assert "--reports-only" in stderr


def test_the_run_is_built_at_home(offline_run: tuple[Path, str], tmp_path: Path) -> None:
    """Brought home: imported (copied into raw/ and packed), then the build step makes its data."""
    run, _ = offline_run
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data")}
    r = subprocess.run([str(ROOT / "scripts/offline.sh"), "import", str(run)], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == run.name
    home = tmp_path / "raw" / run.name
    assert (home / "http1/evloop.tar.xz").is_file() and not (home / "http1/evloop").exists()
    r = subprocess.run([sys.executable, "-m", "httplab", "build", str(home), str(tmp_path / "data" / run.name)],
                       capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    runs = pd.read_parquet(tmp_path / "data" / run.name / "runs.parquet")
    assert sorted(zip(runs["suite"], runs["server"])) == [("h3", "evloop"), ("h3", "go_h3"), ("h3", "ngtcp2"),
                                                          ("http1", "evloop"), ("http1", "floor")]
    assert (runs["status"] == "ok").all(), runs.loc[runs["status"] != "ok", ["server", "fail_reason"]].to_dict("records")
    assert set(zip(runs["suite"], runs["scenario"])) == {("http1", "get_ping_c100"), ("h3", "get_ping_c10")}
