"""lang_python_uvicorn: the shoot-out's Python "production" server.

Starlette on uvicorn with the uvloop event loop and the httptools parser, one
worker process per CPU in the affinity mask (os.sched_getaffinity, so under
`taskset -c 0` there is one worker, which uvicorn then runs in this process;
with more, uvicorn's supervisor binds the socket and forks the workers).
Access log off. Run it with the venv that `make -C servers/python` builds:

    $(BUILD)/pyservers/bin/python servers/python/prod/server.py PORT

The ready line is printed once the socket accepts connections.
"""
import json
import logging
import os
import socket
import sys
import threading
import time
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

NAME = "lang_python_uvicorn"
HELLO = b"Hello, World!"
MAX_BODY = 1 << 20
TEXT = {"content-type": "text/plain"}
JSON_TYPE = {"content-type": "application/json"}


def reply(status, headers, body):
    # headers= rather than media_type=: Starlette would add "; charset=utf-8"
    # to text/plain.
    return Response(body, status_code=status, headers=headers)


def not_found():
    return reply(404, TEXT, b"not found\n")


def endpoint(handler):
    """Wraps `async handler(request) -> Response` as a plain ASGI app.

    A Route whose endpoint is an ASGI app matches every method, so a wrong
    method reaches the handler and gets a 404 like an unknown path (a function
    endpoint with methods=[...] would answer 405).
    """
    async def app(scope, receive, send):
        response = await handler(Request(scope, receive))
        await response(scope, receive, send)

    class Endpoint:  # an instance, not a function: Route leaves it as ASGI
        __call__ = staticmethod(app)

    return Endpoint()


async def root(request):
    if request.method != "GET":
        return not_found()
    return reply(200, TEXT, HELLO)


async def something(request):
    if request.method == "GET":
        query = request.scope["query_string"].decode("latin-1")
        params = parse_qsl(query, keep_blank_values=True)
        if ("json", "true") in params:
            body = json.dumps({"message": "Hello, World!", "query": dict(params)})
            return reply(200, JSON_TYPE, body.encode("ascii"))
        text = "".join(f"{k}={v}\n" for k, v in params)
        return reply(200, TEXT, text.encode("utf-8", "surrogateescape"))
    if request.method == "POST":
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY:
            return reply(413, TEXT, b"body too large\n")
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return reply(413, TEXT, b"body too large\n")
        try:
            value = json.loads(raw)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            return reply(400, TEXT, b"invalid JSON\n")
        body = json.dumps({"received": value, "bytes": len(raw)})
        return reply(200, JSON_TYPE, body.encode("ascii"))
    return not_found()


async def fallback(scope, receive, send):
    await not_found()(scope, receive, send)


app = Starlette(routes=[
    Route("/", endpoint(root)),
    Route("/something", endpoint(something)),
])
app.router.default = fallback


def announce_when_listening(host, port, timeout=30.0):
    """Prints the ready line once a connection to host:port succeeds.

    With more than one worker uvicorn logs "running on" when the supervisor
    has bound the socket, but listen() happens in the workers as they start:
    poll until it accepts (the probe connection is closed unused).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.01)
    sys.stderr.write(f"{NAME}: listening on {host}:{port}\n")
    sys.stderr.flush()


class ReadyLine(logging.Handler):
    """Turns uvicorn's "Uvicorn running on http://HOST:PORT" record into the
    lab's ready line; passes on warnings and errors, drops the other info."""

    def emit(self, record):
        if record.getMessage().startswith("Uvicorn running on"):
            _scheme, host, port = record.args[:3]
            threading.Thread(target=announce_when_listening, args=(host, port),
                             daemon=True).start()
        elif record.levelno >= logging.WARNING:
            sys.stderr.write(f"{NAME}: {record.getMessage()}\n")


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit():
        print(f"usage: {NAME} PORT [ADDR]", file=sys.stderr)
        sys.exit(2)
    # ADDR: 127.0.0.1, or the server host's address in the lab's netns host mode
    addr = sys.argv[2] if len(sys.argv) == 3 else "127.0.0.1"
    workers = len(os.sched_getaffinity(0))
    log = logging.getLogger("uvicorn.error")
    log.setLevel(logging.INFO)
    log.addHandler(ReadyLine())
    log.propagate = False
    uvicorn.run(
        "server:app",
        app_dir=os.path.dirname(os.path.abspath(__file__)),
        host=addr,
        port=int(sys.argv[1]),
        workers=workers,
        loop="uvloop",
        http="httptools",
        lifespan="off",
        access_log=False,
        log_config=None,
        backlog=1024,
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
