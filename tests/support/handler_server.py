"""A plain HTTP server of a test's own handler, on a free port of 127.0.0.1, in a thread: for the tests whose other
side (a time-stamping authority, a stranger's resolver, a redirect) is a few lines of ``http.server``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def handler_server(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server of ``handler`` on 127.0.0.1 in a thread: its URL (ending in ``/``); stopped on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True  # a client left hanging never holds the test's end
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
