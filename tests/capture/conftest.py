"""The local HTTP server the capture tests fetch from (only tests/capture/ uses it)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server answering with the test module's ``Handler`` class."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), request.module.Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
