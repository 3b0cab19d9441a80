"""Helpers of the lab's load-tool builds' tests (test_wrk_build.py, test_h2load_build.py): the tool
on PATH when it is the lab's build, and a listener that never answers."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator

import pytest


def lab_tool(name: str, version_flag: str) -> str:
    """The path of `name` on PATH when its version output (`name version_flag`) names the lab's
    build; else the test is skipped, or failed under LAB_REQUIRE_TOOLS."""
    path = shutil.which(name)
    version = subprocess.run([path, version_flag], capture_output=True, text=True).stdout if path else ""
    if "lab build" not in version:
        if os.environ.get("LAB_REQUIRE_TOOLS"):
            pytest.fail(f"{name} on PATH ({path}) is not the lab's build: scripts/setup.sh builds it")
        pytest.skip(f"the lab's {name} is not on PATH (scripts/setup.sh builds it)")
    return path


@contextlib.contextmanager
def silent_listener() -> Iterator[int]:
    """A port on 127.0.0.1 whose listener the kernel completes TCP handshakes for and that never
    answers: every client stays in its TLS handshake (or waits for its answer) until it gives up."""
    with socket.socket() as lsn:
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(16)
        yield lsn.getsockname()[1]
