"""A stranger's host name is connected to at a public address only (pdi._public_connect's check, made by
pdi._answer_head's client as it connects): a real listening socket on loopback, reached by this machine's own host name (its /etc/hosts
names loopback for it), is reached by a plain connection and refused by the checked one."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import httpx
import pytest

from pdi import _answer_head as answer_head
from pdi._public_connect import NotPublicError, public_addresses


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield int(server.getsockname()[1])


def test_a_host_name_for_loopback_is_refused_where_a_plain_connection_reaches_it(listening: int) -> None:
    host = socket.gethostname()
    found = {info[4][0] for info in socket.getaddrinfo(host, listening, type=socket.SOCK_STREAM)}
    assert "127.0.0.1" in found, f"{host} resolves to {found}: this test needs a host name for loopback"
    with socket.create_connection((host, listening), timeout=5):
        pass  # the listener is there, by that name
    with pytest.raises(NotPublicError, match=rf"{host} is at 127\.0\.0\.1, not a public address \(loopback\)"):
        public_addresses(host, listening, 5)
    with answer_head.client(5, timeout=5, public_only=True) as client, pytest.raises(
            httpx.ConnectError, match=rf"{host} is at 127\.0\.0\.1, not a public address \(loopback\)"):
        client.head(f"http://{host}:{listening}/")  # what connects to a stranger's name: never there


@pytest.mark.parametrize(("host", "why"), [
    ("localhost", "a name of this host itself"),
    ("127.1", "loopback"),  # inet_aton's spelling of 127.0.0.1
    ("2130706433", "loopback"),
    ("[::1]", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("169.254.169.254", "link-local"),
    ("10.1.2.3", "private (RFC 1918)"),
])
def test_addresses_that_are_not_public_are_refused_whatever_their_spelling(host: str, why: str) -> None:
    with pytest.raises(NotPublicError, match=f"not a public address .*{re.escape(why)}"):
        public_addresses(host, 80)


def test_a_public_address_is_taken_as_it_is() -> None:
    # numeric: getaddrinfo reads it without asking any DNS (the machine has no way out to connect, only to check)
    assert public_addresses("192.0.43.10", 80) == ["192.0.43.10"]
    assert public_addresses("[2001:500:8f::53]", 53) == ["2001:500:8f::53"]


def test_the_answer_head_client_refuses_such_a_name_only_when_told_it_is_a_strangers() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = int(server.getsockname()[1])
        url = f"http://{socket.gethostname()}:{port}/"
        with answer_head.client(5, timeout=5, public_only=True) as client, pytest.raises(
                httpx.ConnectError, match="not a public address"):
            client.get(url)
        # the operator's own peers and registries: connected to wherever they are (this one accepts, then
        # says nothing, so the client's read times out: it was connected)
        with answer_head.client(0.5, timeout=0.5) as client, pytest.raises(httpx.ReadTimeout):
            client.get(url)
