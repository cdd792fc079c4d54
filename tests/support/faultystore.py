"""Object stores that misbehave in ways a real Swift node cannot be made to on demand, for the S3 fault tests.

Each runs on a free loopback port in a thread of the test's process and is
an S3 endpoint (``AWS_ENDPOINT_URL``) to point an archive at:

* :class:`StalledStore` accepts every connection, takes whatever a request sends
  and never answers (a store whose disks hang, a proxy that lost its
  upstream).

None checks a request's signature.
"""

from __future__ import annotations

import socket
import threading


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

