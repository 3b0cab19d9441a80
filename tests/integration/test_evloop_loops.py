"""The C server's event-loop backends (--loop): io_uring is really used when asked for,
and where io_uring is unavailable the server says so in one line and serves on epoll
(io_uring forbidden by a seccomp filter, as container runtimes do, or switched off
with /proc/sys/kernel/io_uring_disabled), unless --loop-fallback no asks it to stop instead
(a benchmark of that loop must not quietly measure epoll)."""
import ctypes
import os
import pathlib
import platform
import re
import signal
import socket
import subprocess

import pytest

from evloop_process import DEFAULT_BIN, Server, finish

DISABLED = pathlib.Path("/proc/sys/kernel/io_uring_disabled")
FALLBACK = re.compile(r"the uring event loop is unavailable here \((.+)\); "
                      r"falling back to epoll")


def io_uring_fds(pid: int) -> int:
    fd_dir = pathlib.Path(f"/proc/{pid}/fd")
    return sum(1 for fd in fd_dir.iterdir()
               if os.readlink(fd) == "anon_inode:[io_uring]")


def get_ping(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /ping HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    return data


def start(*args, preexec_fn=None):
    """The server started directly (not through Server, whose environment would
    add EVLOOP_LOOP): returns the process, its port and its stderr lines so far."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1")
    proc = subprocess.Popen([str(DEFAULT_BIN), "0", *args], stderr=subprocess.PIPE,
                            env=env, preexec_fn=preexec_fn, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        m = re.match(r"\S+: listening on \S+:(\d+)$", line.strip())
        if m:
            return proc, int(m.group(1)), lines
    proc.wait(5)
    pytest.fail("server did not start: " + "".join(lines))


def stop(proc, lines):
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(10)
    lines += proc.stderr.readlines()
    assert rc == 0, "".join(lines)
    assert not any("Sanitizer" in l or "runtime error" in l for l in lines), "".join(lines)


# ---- seccomp: io_uring_setup refused with EPERM in the child only -------------------

class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def deny_io_uring_setup():
    """preexec_fn: a seccomp filter that fails io_uring_setup(2) with EPERM and allows
    everything else (x86-64 only: syscall 425, AUDIT_ARCH_X86_64)."""
    ld_w_abs, jeq_k, ret_k = 0x20, 0x15, 0x06
    allow, errno_eperm = 0x7FFF0000, 0x00050000 | 1
    prog = (SockFilter * 7)(
        SockFilter(ld_w_abs, 0, 0, 4),             # seccomp_data.arch
        SockFilter(jeq_k, 1, 0, 0xC000003E),       # x86-64? on to the number
        SockFilter(ret_k, 0, 0, allow),
        SockFilter(ld_w_abs, 0, 0, 0),             # seccomp_data.nr
        SockFilter(jeq_k, 0, 1, 425),              # io_uring_setup
        SockFilter(ret_k, 0, 0, errno_eperm),
        SockFilter(ret_k, 0, 0, allow),
    )
    fprog = SockFprog(len(prog), prog)
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0 or \
            libc.prctl(pr_set_seccomp, mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        os._exit(97)


def test_uring_loop_really_uses_io_uring():
    s = Server("--loop", "uring")
    try:
        assert io_uring_fds(s.proc.pid) == 1
        assert b"pong" in get_ping(s.port)
        assert not FALLBACK.search(s.stderr()), s.stderr()
    finally:
        finish(s)


def test_default_loop_is_epoll():
    proc, port, lines = start()
    try:
        assert io_uring_fds(proc.pid) == 0
        assert b"pong" in get_ping(port)
    finally:
        stop(proc, lines)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the filter is x86-64's")
def test_io_uring_forbidden_by_seccomp_falls_back_to_epoll():
    proc, port, lines = start("--loop", "uring", preexec_fn=deny_io_uring_setup)
    try:
        m = FALLBACK.search("".join(lines))
        assert m, "".join(lines)
        assert m.group(1) == os.strerror(1)  # EPERM, as the filter says
        assert io_uring_fds(proc.pid) == 0
        assert b"pong" in get_ping(port)
    finally:
        stop(proc, lines)


def test_io_uring_disabled_by_sysctl_falls_back_to_epoll():
    if os.geteuid() != 0 or not DISABLED.exists() or not os.access(DISABLED, os.W_OK):
        pytest.skip("needs root and a writable /proc/sys/kernel/io_uring_disabled")
    before = DISABLED.read_text().strip()
    DISABLED.write_text("2\n")
    try:
        proc, port, lines = start("--loop", "uring")
    finally:
        DISABLED.write_text(before + "\n")
    try:
        assert FALLBACK.search("".join(lines)), "".join(lines)
        assert io_uring_fds(proc.pid) == 0
        assert b"pong" in get_ping(port)
    finally:
        stop(proc, lines)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the filter is x86-64's")
def test_loop_fallback_no_stops_instead_of_serving_on_epoll():
    r = subprocess.run([str(DEFAULT_BIN), "0", "--loop", "uring", "--loop-fallback", "no"],
                       capture_output=True, text=True, timeout=10, preexec_fn=deny_io_uring_setup)
    assert r.returncode == 1, r.stderr
    assert ("the uring event loop is unavailable here (Operation not permitted), and "
            "--loop-fallback no forbids serving on epoll") in r.stderr
    assert "listening" not in r.stderr


def test_loop_fallback_takes_yes_or_no():
    r = subprocess.run([str(DEFAULT_BIN), "0", "--loop-fallback", "maybe"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "bad --loop-fallback: maybe (yes or no)" in r.stderr
    proc, port, lines = start("--loop", "uring", "--loop-fallback", "no")
    try:
        assert io_uring_fds(proc.pid) == 1
        assert b"pong" in get_ping(port)
    finally:
        stop(proc, lines)
