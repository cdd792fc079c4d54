"""``pdi._answer_head.client``: the trusted certificates are loaded once a client (one TLS context, shared by
httpx's transport and the connection pool that replaces its own), as httpx's own client loads them once."""

from __future__ import annotations

import ssl
from typing import Any

import httpx
import pytest

from pdi import _answer_head as answer_head


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        calls.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return calls


def test_httpx_own_client_loads_the_certificates_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _loads(monkeypatch)
    with httpx.Client():
        pass
    assert len(calls) == 1


def test_a_client_loads_the_certificates_once_and_verifies_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _loads(monkeypatch)
    with answer_head.client(5.0, timeout=5.0) as client:
        assert len(calls) == 1
        pool = client._transport._pool  # type: ignore[attr-defined]
        context = pool._ssl_context
        assert context is calls[0]
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
