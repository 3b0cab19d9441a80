"""The h2load --log-file compactor (httplab.parse.h2log) and its CLI."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from httplab.parse.errors import RawFormatError
from httplab.parse.h2log import compact_log, main, read_compact, write_compact

H2 = Path(__file__).resolve().parents[1] / "fixtures" / "h2load"
REPO = Path(__file__).resolve().parents[2]


def _by_hand(path):
    rows = [tuple(int(x) for x in ln.split("\t")) for ln in Path(path).read_text().splitlines()]
    arr = np.array(rows, dtype=np.int64)
    return arr


def test_real_log_counts_and_histogram():
    log = compact_log(H2 / "log_ping.log.tsv")
    arr = _by_hand(H2 / "log_ping.log.tsv")
    assert log.requests == len(arr) == 3000
    assert log.status_counts == {200: 3000}
    vals, counts = np.unique(arr[:, 2], return_counts=True)
    assert np.array_equal(log.hist_values_us, vals) and np.array_equal(log.hist_counts, counts)
    assert log.first_start_us == arr[:, 0].min() and log.last_end_us == (arr[:, 0] + arr[:, 2]).max()
    assert log.failed_streams == 0 and log.non_2xx == {}


def test_small_chunks_give_the_same_result():
    """Chunk boundaries (lines split across reads) must not change anything."""
    a = compact_log(H2 / "killed_server.log.tsv")
    b = compact_log(H2 / "killed_server.log.tsv", chunk_bytes=37)
    assert a.requests == b.requests == 2000
    assert a.status_counts == b.status_counts == {0: 25, 200: 1975}
    assert np.array_equal(a.hist_values_us, b.hist_values_us) and np.array_equal(a.hist_counts, b.hist_counts)


def test_status_zero_404_and_minus_one(tmp_path):
    assert compact_log(H2 / "log_404.log.tsv").non_2xx == {404: 500}
    # -1 lines (stream failed) synthesized: no captured log has them
    p = tmp_path / "mixed.log"
    p.write_text("1795239965622879\t200\t2631\n1795239965622898\t-1\t15000\n"
                 "1795239965622899\t503\t10\n1795239965622900\t0\t4900\n1795239965622901\t200\t2631")
    log = compact_log(p)  # last line without newline is fine
    assert log.requests == 5
    assert log.status_counts == {-1: 1, 0: 1, 200: 2, 503: 1}
    assert log.failed_streams == 1 and log.non_2xx == {503: 1}  # 0 is not an error
    assert log.hist_values_us.tolist() == [10, 2631, 4900, 15000] and log.hist_counts.tolist() == [1, 2, 1, 1]
    assert log.last_end_us == 1795239965622898 + 15000


@pytest.mark.parametrize("bad, why", [
    ("1795239965622898\t200\n", "three integers"),
    ("1795239965622898\t200\t5\t7\n", "three integers"),
    ("1795239965622898\t2x0\t5\n", "three integers"),
    ("\n", "three integers"),
    ("1795239965622898 200 5\n", "three integers"),
    ("1795239965622898\t200\t-5\n", "negative duration"),
    ("1795239965622898\t1200\t5\n", "outside -1..999"),
    ("0\t200\t5\n", "positive"),
])
@pytest.mark.parametrize("chunk", [1 << 20, 64])
def test_bad_line_names_file_and_line(tmp_path, bad, why, chunk):
    good = (H2 / "log_ping.log.tsv").read_text().splitlines(keepends=True)
    p = tmp_path / "bad.log"
    p.write_text("".join(good[:123]) + bad + "".join(good[123:200]))
    with pytest.raises(RawFormatError, match=why) as ei:
        compact_log(p, chunk_bytes=chunk)
    assert ei.value.line == 124 and "bad.log" in str(ei.value)


def test_empty_log(tmp_path):
    p = tmp_path / "empty.log"
    p.write_text("")
    log = compact_log(p)
    assert log.requests == 0 and log.first_start_us is None and len(log.hist_values_us) == 0


def test_json_roundtrip_and_format(tmp_path):
    log = compact_log(H2 / "killed_server.log.tsv")
    out = write_compact(log, tmp_path / "r1.lat.h2log.json")
    doc = json.loads(out.read_text())
    assert doc["tool"] == "h2load-log" and doc["requests"] == 2000
    assert doc["status_counts"] == {"0": 25, "200": 1975}
    assert doc["latency_hist"][0][0] < doc["latency_hist"][-1][0]
    assert sum(c for _, c in doc["latency_hist"]) == 2000
    assert isinstance(doc["first_start_us"], int) and isinstance(doc["last_end_us"], int)
    back = read_compact(out)
    assert back.requests == log.requests and back.status_counts == log.status_counts
    assert np.array_equal(back.hist_values_us, log.hist_values_us)
    doc["requests"] = 1999
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(RawFormatError, match="latency_hist"):
        read_compact(tmp_path / "bad.json")


def test_cli(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert main([str(H2 / "log_ping.log.tsv"), str(out)]) == 0
    assert json.loads(out.read_text())["requests"] == 3000
    bad = tmp_path / "bad.log"
    bad.write_text("1795239965622879\t200\t2631\nnot a line\n")
    out2 = tmp_path / "o2.json"
    assert main([str(bad), str(out2)]) == 2
    assert not out2.exists()
    err = capsys.readouterr().err
    assert "bad.log, line 2" in err
    assert main([str(tmp_path / "missing.log"), str(out2)]) == 2
    assert main([]) == 64


def test_cli_as_module(tmp_path):
    out = tmp_path / "m.json"
    r = subprocess.run([sys.executable, "-m", "httplab", "h2log", str(H2 / "log_404.log.tsv"), str(out)],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["status_counts"] == {"404": 500}


def test_speed_one_million_lines(tmp_path):
    """~5 M lines must take well under 10 s: 1 M here costs about 1.3 s of CPU on the two-core lab
    machine. Measured as a ratio to a reference on the same file in the same process (the file
    split into tokens and read as integers by numpy, about 0.35 s there): under the test command
    the unit tests share both cores with the fuzzers and the smoke runs, and even CPU time grows
    with the neighbours (shared caches, the host's frequency); once, 2.05 s against an absolute
    line of 2.0. The parser's cost is what the test guards: about 3.5-4x the reference, so a
    parser twice as slow (8x) fails and a busy machine does not."""
    import time
    rng = np.random.default_rng(0)
    n = 1_000_000
    starts = 1795239965622879 + np.arange(n) // 7
    durs = rng.integers(100, 40000, n)
    p = tmp_path / "big.log"
    with open(p, "w") as fh:
        fh.write("".join(f"{s}\t200\t{d}\n" for s, d in zip(starts.tolist(), durs.tolist())))
    t0 = time.process_time()
    log = compact_log(p)
    took = time.process_time() - t0
    t0 = time.process_time()
    tokens = np.array(p.read_bytes().split(), dtype=np.int64)
    reference = time.process_time() - t0
    assert log.requests == n and int(log.hist_counts.sum()) == n and tokens.size == 3 * n
    assert took < 6.0 * reference, f"{took:.2f} s of CPU for 1 M lines, {took / reference:.1f}x the reference's {reference:.2f} s"
