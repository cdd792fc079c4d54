"""Object stores that misbehave in ways a real Swift node cannot be made to on demand, for the S3 fault tests.

Each runs on a free loopback port in a thread of the test's process and is
an S3 endpoint (``AWS_ENDPOINT_URL``) to point an archive at:

* :class:`StalledStore` accepts every connection, takes whatever a request sends
  and never answers (a store whose disks hang, a proxy that lost its
  upstream);
* :class:`RangeIgnoringStore` answers ``HEAD`` and ``GET`` of the objects of
  a real store, but a ranged ``GET`` with the whole object and ``200``, as an
  HTTP cache or gateway that does not know ``Range`` does (RFC 9110 §14.2
  lets a server ignore it).

None checks a request's signature.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


class StalledStore:
    """A TCP server on loopback that takes requests and never answers them."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._held: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(connection)  # kept open, read by nobody: the client's request sits unanswered

    def __enter__(self) -> StalledStore:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._listener.close()
        self._thread.join(timeout=10)
        for connection in self._held:
            connection.close()


class RangeIgnoringStore:
    """``HEAD`` and ``GET`` of a real store's objects (read with ``client``), a ``GET`` answered whole whatever its ``Range``."""

    def __init__(self, client: Any) -> None:
        store = self

        class Handler(BaseHTTPRequestHandler):
            def _object(self) -> tuple[str, str]:
                bucket, _, key = urlsplit(self.path).path.lstrip("/").partition("/")
                return bucket, unquote(key)

            def do_HEAD(self) -> None:
                bucket, key = self._object()
                size = client.head_object(Bucket=bucket, Key=key)["ContentLength"]
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()

            def do_GET(self) -> None:
                bucket, key = self._object()
                store.ranges.append(self.headers.get("Range"))
                body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return None

        self.ranges: list[str | None] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RangeIgnoringStore:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
