"""One resolver, however its base URL is spelt, is one resolver: asked once, listed once (RFC 3986 §6.2.2, §6.2.3).

Found by a review (2026-11-30): a recent change merged the spellings of one
resolver (``HTTP://H:80/``, ``http://h``) among the candidates of a series,
but not in :meth:`Authorities.every_resolver`, the network the legacy rescue
asks for captures: a resolver named by a registry for two series, or by a
registry and a mirror, in two spellings was asked twice (two of the rescue's
8 resolvers and its seconds spent on one), and a peer the operator recorded
was taken for a stranger's when a stranger had announced it too in another
spelling. Nor were escapes of unreserved characters (``/%70di/`` is
``/pdi/``, §6.2.2.2) and dot segments (§6.2.2.3) taken for the same path.
"""

from __future__ import annotations

import datetime
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.federation.authorities import Authorities, same_resolver
from pdi.federation.registry import Registry, write_registry_file
from pdi.federation.rescue import RemoteCaptures


@pytest.mark.parametrize(("one", "other"), [
    ("HTTP://Resolver.Example:80/pdi/", "http://resolver.example/pdi"),  # §6.2.2.1 case, §6.2.3 default port
    ("http://resolver.example/%70di/", "http://resolver.example/pdi/"),  # §6.2.2.2 an unreserved letter escaped
    ("http://resolver.example/a/../pdi/", "http://resolver.example/pdi/"),  # §6.2.2.3 dot segments
    ("https://[::1]:443/", "https://[::1]"),
])
def test_spellings_of_one_resolver_are_the_same_resolver(one: str, other: str) -> None:
    assert same_resolver(one, other) and same_resolver(other, one)


_LABEL = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)
_SEGMENT = st.from_regex(r"[A-Za-z0-9_~-]{1,8}", fullmatch=True)


@given(st.lists(_LABEL, min_size=1, max_size=3), st.sampled_from(["http", "https"]), st.lists(_SEGMENT, max_size=3),
       st.integers(1, 65535))
def test_a_base_url_in_any_spelling_is_one_resolver_and_another_port_another(
        labels: list[str], scheme: str, segments: list[str], port: int) -> None:
    host = ".".join(labels)
    path = "".join(f"/{s}" for s in segments)
    default = 80 if scheme == "http" else 443
    plain = f"{scheme}://{host}{path}/"
    # upper-case scheme and host, the default port said, the path's every character escaped (§2.3: all unreserved),
    # a dot segment, no last /
    escaped = "".join(f"/{''.join(f'%{ord(c):02X}' for c in s)}" for s in segments)
    spelt = f"{scheme.upper()}://{host.upper()}:{default}/.{escaped}"
    assert same_resolver(plain, spelt)
    assert same_resolver(plain, f"{scheme}://{host}:{port}{path}/") == (port == default)


@pytest.mark.parametrize(("one", "other"), [
    ("http://resolver.example/", "https://resolver.example/"),
    ("http://resolver.example/", "http://resolver.example:8000/"),
    ("http://resolver.example/pdi/", "http://resolver.example/PDI/"),  # a path is case-sensitive (§6.2.2.1)
    ("http://resolver.example/pdi/", "http://resolver.example/"),
])
def test_other_resolvers_are_not(one: str, other: str) -> None:
    assert not same_resolver(one, other)


def test_the_candidates_of_a_series_list_one_resolver_once(tmp_path: Path) -> None:
    """N2Ls lists the candidates, and a reader is sent to the first that is up: each resolver once, as first spelt."""
    own = tmp_path / "registry.json"
    write_registry_file(own, Registry({"x.example.us": (
        "http://resolver.example/%70di/", "HTTP://Resolver.Example:80/pdi", "http://resolver.example/a/../pdi/",
        "http://mirror.example/")}))
    found = Authorities(own, [], None).candidates("x.example.us", "urn:pdi://x.example.us/2026/11/20/1.text.1")
    assert [c.base for c in found] == ["http://resolver.example/%70di/", "http://mirror.example/"]


def test_every_resolver_lists_each_once_and_a_stranger_only_when_no_one_else_named_it(tmp_path: Path) -> None:
    own = tmp_path / "registry.json"
    write_registry_file(own, Registry({
        "x.example.us": ("HTTP://Resolver.Example:80/pdi/",),
        "y.example.us": ("http://resolver.example/%70di/", "http://mirror.example/"),
    }))
    peers = ["http://MIRROR.example:80", "http://Peer.Example/", "http://peer.example:80/", "https://stranger.example/",
             "https://STRANGER.example:443/"]
    # announced with a token: Peer.Example (which the operator also recorded, as peer.example:80) and stranger.example
    strangers = ["http://Peer.Example/", "https://stranger.example/", "https://STRANGER.example:443/"]
    authorities = Authorities(own, [], None, peers=lambda: peers, strangers=lambda: strangers)
    assert authorities.every_resolver() == [
        ("HTTP://Resolver.Example:80/pdi/", False),
        ("http://mirror.example/", False),
        ("http://Peer.Example/", False),  # the operator named it too: not a stranger's alone
        ("https://stranger.example/", True),
    ]


class _TimeGate(http.server.BaseHTTPRequestHandler):
    """A resolver that is up and holds no capture: its TimeGate answers 404; counts what it is asked."""

    asked: ClassVar[list[str]] = []

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def timegate() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TimeGate)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _TimeGate.asked.clear()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_rescue_asks_one_resolver_once_however_it_is_spelt(tmp_path: Path, timegate: int) -> None:
    own = tmp_path / "registry.json"
    write_registry_file(own, Registry({
        "x.example.us": (f"HTTP://127.0.0.1:{timegate}/",),
        "y.example.us": (f"http://127.0.0.1:{timegate}",),
    }))
    authorities = Authorities(own, [], None, peers=lambda: [f"http://127.0.0.1:{timegate}/./"])
    assert RemoteCaptures(authorities).nearest("http://www.whitehouse.gov/", datetime.date(1994, 10, 20)) is None
    assert _TimeGate.asked == ["/timegate/http://www.whitehouse.gov/"]
