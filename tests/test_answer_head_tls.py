"""``pdi._answer_head.client``: the trusted certificates are loaded once a client, as httpx's own client loads
them once, and only at its first ``https://`` request (a client that asks only ``http://`` loads none)."""

from __future__ import annotations

import socket
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


def test_a_client_loads_the_certificates_at_its_first_https_request_once_and_verifies_with_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _loads(monkeypatch)
    with socket.socket() as closed:  # bound, not listening: each connection to it is refused at once
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}/"
        with answer_head.client(5.0, timeout=5.0) as client:
            assert calls == []
            for _ in range(2):
                with pytest.raises(httpx.ConnectError):
                    client.get("http://" + address)
            assert calls == []  # plain http:// only: no certificate loaded
            for _ in range(2):  # the first https:// request loads them (before it connects), once
                with pytest.raises(httpx.ConnectError):
                    client.get("https://" + address)
            assert len(calls) == 1
            secure = client._transport._pool._pdi_secure  # type: ignore[attr-defined]
            context = secure._ssl_context
            assert context is calls[0]
            assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
