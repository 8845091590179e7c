"""A real HTTP server on this machine (127.0.0.1 unless told another local
address) that records what webhooks POST to it and answers with scripted
status codes (200 once the script is used up). Its answers carry
:data:`PRIVATE_BODY`, which no delivery log may show; a 3xx points at
``/elsewhere`` on the same server."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PRIVATE_BODY = b"internal page: db password hunter2"


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes


@dataclass
class Receiver:
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    host: str = "127.0.0.1"

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                receiver.received.append(Received(self.path, dict(self.headers), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                answer = b"ok" if status < 300 else PRIVATE_BODY
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        server_class = type("Server", (ThreadingHTTPServer,), {"address_family": family})
        self.server = server_class((self.host, 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
