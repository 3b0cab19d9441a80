"""httplab.report.kernel_share on perf's own report of two servers captured here
(tests/fixtures/perf_report: scripts/profile_kernel_share.sh, wrk -t1 -c100 GET /ping, the epoll
floor and the io_uring floor): every sample lands in one layer, the syscall model's layers hold what
they should, and a file that is not perf's report is named."""
from __future__ import annotations

from pathlib import Path

import pytest

from httplab.parse.errors import RawFormatError
from httplab.report import kernel_share as K

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "perf_report"


def test_layers_of_known_symbols():
    assert K.layer_of("do_epoll_wait", False) == "epoll"
    assert K.layer_of("io_submit_sqes", False) == "io_uring"
    assert K.layer_of("__do_sys_io_uring_enter", False) == "io_uring"
    assert K.layer_of("entry_SYSCALL_64", False).startswith("syscall entry")
    assert K.layer_of("finish_task_switch.isra.0", False).startswith("sleeping")
    assert K.layer_of("tcp_sendmsg_locked", False) == K.NETWORK
    assert K.layer_of("main", True) == K.USER


def test_the_two_floors_split_as_their_syscall_models_say():
    epoll, uring = K.read_shares(FIX / "floor.perf.txt"), K.read_shares(FIX / "floor_uring.perf.txt")
    for s in (epoll, uring):
        assert sum(s.values()) == pytest.approx(100.0)
        assert s[K.NETWORK] > 75.0          # the kernel's TCP path is nearly all of either
    assert epoll["epoll"] > 1.0 and "io_uring" not in epoll
    assert uring["io_uring"] > 1.0 and "epoll" not in uring
    entry = "syscall entry and exit, file lookup, iov import"
    assert epoll[entry] > 3 * uring[entry]   # a read and a write per request vs one enter per turn
    md = K.table_markdown({"floor": epoll, "floor_uring": uring})
    assert md.splitlines()[0] == "| layer | floor | floor_uring |" and md.count("\n") == 7


def test_not_a_perf_report_is_named(tmp_path):
    bad = tmp_path / "x.txt"
    bad.write_text("hello\n")
    with pytest.raises(RawFormatError, match=r"x\.txt: no symbol lines"):
        K.read_shares(bad)
    bad.write_text("# header\n   150.00%  [k] tcp_ack\n")
    with pytest.raises(RawFormatError, match=r"x\.txt, line 2: a share of 150.0%"):
        K.read_shares(bad)


def test_cli(capsys):
    assert K.main([f"floor={FIX / 'floor.perf.txt'}"]) == 0
    assert "| layer | floor |" in capsys.readouterr().out
    assert K.main(["floor.perf.txt"]) == 2
    assert K.main(["floor=/nonexistent"]) == 1
