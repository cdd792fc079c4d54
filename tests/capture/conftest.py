"""The local HTTP server the capture tests fetch from (only tests/capture/ uses it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.handler_server import handler_server


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server answering with the test module's ``Handler`` class."""
    with handler_server(request.module.Handler) as url:
        yield url.rstrip("/")
