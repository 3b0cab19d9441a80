"""lang_python_std: the shoot-out's Python stdlib server.

http.server's ThreadingHTTPServer (ThreadingMixIn: one thread per connection)
speaking HTTP/1.1, so connections are kept alive; JSON through the json module.

Three stdlib settings a careful user makes (measured: README, "Server audit"):
- wbufsize = -1: wfile is buffered, so a response's head and body leave in one
  send() when handle_one_request flushes. Unbuffered (the default), head and body
  are two small writes; with Nagle on, the body waits for the ACK of the head,
  which the client delays (~40 ms): every keep-alive request took 44 ms.
- disable_nagle_algorithm = True: TCP_NODELAY, as Go, Node and most servers set,
  for responses that still take more than one write (bodies over 8 KiB).
- request_queue_size = 1024: listen backlog (socketserver's default is 5, which a
  burst of 100 connects overflows: SYN retransmits, 1 s stalls).
A response to a request that closes the connection says "Connection: close", so
clients (wrk) do not try to reuse it.

    python3 servers/python/std/server.py PORT
"""
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

NAME = "lang_python_std"
HELLO = b"Hello, World!"
MAX_BODY = 1 << 20


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1                  # buffered wfile: one send() per response
    disable_nagle_algorithm = True  # TCP_NODELAY

    def version_string(self):
        return NAME

    def log_message(self, format, *args):  # no access log
        pass

    def _send(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)  # flushed by handle_one_request

    def handle_expect_100(self):
        # wfile is buffered: the interim 100 Continue must go out now.
        ok = super().handle_expect_100()
        self.wfile.flush()
        return ok

    def _not_found(self):
        self._send(404, "text/plain", b"not found\n")

    def _route(self):
        path, _, query = self.path.partition("?")
        return path, query

    def do_GET(self):
        path, query = self._route()
        if path == "/":
            self._send(200, "text/plain", HELLO)
        elif path == "/something":
            params = parse_qsl(query, keep_blank_values=True,
                               errors="surrogateescape")
            if ("json", "true") in params:
                body = json.dumps({"message": "Hello, World!",
                                   "query": dict(params)})
                self._send(200, "application/json", body.encode("ascii"))
            else:
                text = "".join(f"{k}={v}\n" for k, v in params)
                self._send(200, "text/plain",
                           text.encode("utf-8", "surrogateescape"))
        else:
            self._not_found()

    def do_POST(self):
        path, _ = self._route()
        if path != "/something":
            self._discard_body()
            self._not_found()
            return
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._send(501, "text/plain", b"chunked bodies not supported\n")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send(400, "text/plain", b"bad Content-Length\n")
            return
        if length > MAX_BODY:
            self.close_connection = True
            self._send(413, "text/plain", b"body too large\n")
            return
        raw = self.rfile.read(length)
        try:
            value = json.loads(raw)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            self._send(400, "text/plain", b"invalid JSON\n")
            return
        body = json.dumps({"received": value, "bytes": len(raw)})
        self._send(200, "application/json", body.encode("ascii"))

    def _discard_body(self):
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = 0
        if 0 < length <= MAX_BODY:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def _other(self):
        self._discard_body()
        self._not_found()

    def __getattr__(self, name):
        # Any other method (HEAD, DELETE, made-up ones) is a 404, not the
        # 501 BaseHTTPRequestHandler gives for a method it has no do_ for.
        if name.startswith("do_"):
            return self._other
        raise AttributeError(name)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def main():
    if len(sys.argv) not in (2, 3):
        print(f"usage: {NAME} PORT [ADDR]", file=sys.stderr)
        sys.exit(2)
    # ADDR: 127.0.0.1, or the server host's address in the lab's netns host mode
    addr = sys.argv[2] if len(sys.argv) == 3 else "127.0.0.1"
    server = Server((addr, int(sys.argv[1])), Handler)

    def on_term(signum, frame):
        # shutdown() waits for serve_forever to return: call it off-thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    host, port = server.server_address[:2]
    print(f"{NAME}: listening on {host}:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()


if __name__ == "__main__":
    main()
