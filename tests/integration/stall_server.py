"""A toy HTTP/1.1 server whose event loop freezes for STALL ms every PERIOD ms.

    python stall_server.py [--stall-ms 50] [--period-ms 500]

It listens on 127.0.0.1 on a port the kernel picks and prints "listening on 127.0.0.1:PORT" once
ready. Every request (keep-alive, pipelined or not; a request body is not expected and not read)
gets 200 "pong" with a Content-Length. The stall is a time.sleep() inside a loop callback, so
while it lasts nothing is accepted, read or answered: the whole server is frozen, as in a
stop-the-world GC pause. The stalls run on an absolute schedule (start + k * period), so they do
not drift with the load. --stall-ms 0 disables them (the control).
"""
from __future__ import annotations

import argparse
import asyncio
import time

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\npong"
END_OF_HEAD = b"\r\n\r\n"


class PingProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        answers = self.buffer.count(END_OF_HEAD)
        if answers and self.transport is not None:
            self.buffer = self.buffer[self.buffer.rfind(END_OF_HEAD) + len(END_OF_HEAD):]
            self.transport.write(RESPONSE * answers)


def schedule_stalls(loop: asyncio.AbstractEventLoop, stall_s: float, period_s: float) -> None:
    start = loop.time()

    def stall(k: int) -> None:
        time.sleep(stall_s)  # blocks the whole event loop
        loop.call_at(start + (k + 1) * period_s, stall, k + 1)

    loop.call_at(start + period_s, stall, 1)


async def serve(stall_ms: float, period_ms: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(PingProtocol, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if stall_ms > 0:
        schedule_stalls(loop, stall_ms / 1000, period_ms / 1000)
    print(f"listening on 127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stall-ms", type=float, default=50.0)
    ap.add_argument("--period-ms", type=float, default=500.0)
    args = ap.parse_args()
    asyncio.run(serve(args.stall_ms, args.period_ms))


if __name__ == "__main__":
    main()
