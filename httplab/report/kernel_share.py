"""Where a server's CPU goes by kernel layer, from `perf report` (evidence for the backends suite:
what a syscall model can save at most). The input is `perf report --no-children --sort sym -g none
--percent-limit 0 --stdio` of one server process (scripts/profile_kernel_share.sh writes it); every
symbol's self share is put in the first layer whose pattern matches its name (LAYERS, in order),
user-space symbols in their own. The layers are coarse on purpose: the question is how much of a
request's CPU is the syscall model (entry and exit, epoll, io_uring, sleeping and waking) and how
much is TCP/IP and the loopback device, which no syscall model changes.

    python -m httplab kernel-share NAME=FILE [NAME=FILE ...]   # a Markdown table
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

from ..parse.errors import RawFormatError

USER = "user space (the server's own code and libc)"
NETWORK = "TCP/IP, sk_buffs, loopback device, softirq (the rest of the kernel)"
# (layer, pattern on the kernel symbol), first match wins; unmatched kernel symbols are NETWORK.
LAYERS: tuple[tuple[str, str], ...] = (
    ("epoll", r"(ep_|do_epoll|__ep_|sock_poll$|tcp_poll$|__pollwait|__x64_sys_epoll)"),
    ("io_uring", r"(io_|__io_|__do_sys_io_uring|tctx_|__io_uring)"),
    ("syscall entry and exit, file lookup, iov import",
     r"(entry_SYSCALL|do_syscall_64|syscall_exit|syscall_return|__x64_sys_|__do_sys_|ksys_|x64_sys_call|"
     r"fdget|__fget|fput|__fdget|rw_verify|vfs_read|vfs_write|sock_read_iter|sock_write_iter|do_iter_|"
     r"import_iovec|__import_iovec|iovec_from_user|security_file|fsnotify|__fsnotify|exit_to_user|"
     r"arch_exit|switch_fpu|restore_fpregs|__rseq|rseq_|clear_bhb|audit_|__audit)"),
    ("sleeping and waking (scheduler)",
     r"(finish_task_switch|schedule|__schedule|pick_next|dequeue_|enqueue_task|update_curr|try_to_wake|"
     r"ttwu|__wake_up|autoremove_wake|default_wake|psi_|update_load|__update_load|set_next|put_prev|"
     r"select_task|hrtimer|__hrtimer|sched_|prepare_task|native_sched|update_rq|newidle|cpuacct|"
     r"__switch_to|context_switch|pick_task|account_|_raw_spin_unlock_irq$)"),
)
_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s+\[(.)\]\s+(\S+)")


def layer_of(symbol: str, user: bool) -> str:
    """The layer a symbol's self time belongs to."""
    if user:
        return USER
    for name, pattern in LAYERS:
        if re.match(pattern, symbol):
            return name
    return NETWORK


def shares(lines: Iterable[str], source: str = "<perf report>") -> dict[str, float]:
    """Per layer, the share (%) of the samples; raises RawFormatError naming source and line when
    the text has no symbol line or a share is not a percentage."""
    out: dict[str, float] = {}
    total = 0.0
    for n, line in enumerate(lines, 1):
        m = _LINE.match(line)
        if not m:
            continue
        pct = float(m.group(1))
        if pct > 100.0:
            raise RawFormatError(source, f"a share of {pct}% (perf report lines are at most 100%)", line=n)
        key = layer_of(m.group(3), m.group(2) == ".")
        out[key] = out.get(key, 0.0) + pct
        total += pct
    if not out:
        raise RawFormatError(source, "no symbol lines ('  12.34%  [k] name'): not perf report --stdio output")
    return {k: v * 100.0 / total for k, v in out.items()} if total > 0 else out


def read_shares(path: str | Path) -> dict[str, float]:
    p = Path(path)
    with p.open(encoding="utf-8", errors="replace") as f:
        return shares(f, str(p))


def table_markdown(by_server: dict[str, dict[str, float]]) -> str:
    """| layer | server A | server B | ... with each layer's share (%), the layers in a fixed order."""
    order = [USER, *(name for name, _ in LAYERS), NETWORK]
    names = list(by_server)
    rows = ["| layer | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for layer in order:
        rows.append(f"| {layer} | " + " | ".join(f"{by_server[s].get(layer, 0.0):.1f} %" for s in names) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or any("=" not in a for a in argv):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        by_server = {name: read_shares(path) for name, path in (a.split("=", 1) for a in argv)}
    except (OSError, RawFormatError) as e:
        print(f"kernel_share: {e}", file=sys.stderr)
        return 1
    print(table_markdown(by_server))
    return 0
