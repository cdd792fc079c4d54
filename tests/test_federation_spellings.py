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
import ipaddress
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.federation.authorities import RESOLVER_HEADER, Authorities, same_resolver
from pdi.federation.naptr import NaptrFinder
from pdi.federation.registry import Registry, write_registry_file
from pdi.federation.rescue import RemoteCaptures
from support.dnsnode import dnsmasq
from test_addresses_browser_ipv4 import spellings


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
    probed: ClassVar[int] = 0

    def do_HEAD(self) -> None:
        type(self).probed += 1
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
    _TimeGate.probed = 0
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


# --- the host in any spelling: IPv4 as a browser reads it, a domain's last dot (review, 2026-12) -------------------
# Found by a review: the spellings above were merged, but not an IPv4 address in the legacy forms inet_aton and
# every browser read as 127.0.0.1 (127.1, 0x7f.0.0.1, 2130706433: the WHATWG URL Standard's IPv4 parser, §3.5), nor
# a host name with its last dot (example.org.: the same DNS name, RFC 1034 §3.1). A registry entry or a NAPTR answer
# so spelt was another resolver: asked again (one of a rescue's 8), listed again by N2Ls, and this resolver's own
# address so spelt was probed as a stranger's (three such spellings spent the three probes of an answer, and the
# authority after them, not known, was taken to be down).

@pytest.mark.parametrize(("one", "other"), [
    ("http://127.1:8000/", "http://127.0.0.1:8000/"),  # WHATWG URL §3.5: the last part fills the octets left
    ("http://0x7f.0.0.1:8000/", "http://127.0.0.1:8000/"),  # hex
    ("http://0177.0.0.01:8000/", "http://127.0.0.1:8000/"),  # octal
    ("http://2130706433:8000/", "http://127.0.0.1:8000/"),  # one number
    ("http://0X7F000001:8000/pdi/", "http://127.0.0.1:8000/pdi"),
    ("http://127.0.0.1.:8000/", "http://127.0.0.1:8000/"),  # §3.5 IPv4 parser step 2: one last dot
    ("http://%31%32%37.1:8000/", "http://127.0.0.1:8000/"),  # RFC 3986 §6.2.2.2: digits escaped, then §3.5
    ("http://Resolver.Example./", "http://resolver.example/"),  # RFC 1034 §3.1: the absolute name is the same name
    ("https://[0:0:0:0:0:0:0:1]/", "https://[::1]:443/"),  # RFC 5952, as the WHATWG serializer writes IPv6
    ("http://[::FFFF:127.0.0.1]/", "http://[::ffff:7f00:1]/"),
])
def test_a_host_in_any_spelling_is_one_resolver(one: str, other: str) -> None:
    assert same_resolver(one, other) and same_resolver(other, one)


@pytest.mark.parametrize(("one", "other"), [
    ("http://127.1/", "http://127.0.1.0/"),  # the last part fills the octets left: 127.0.0.1, not 127.0.1.0
    ("http://127.1/", "http://[::ffff:127.0.0.1]/"),  # another address (a browser keeps them apart too)
    ("http://example.org../", "http://example.org/"),  # an empty label is no DNS name's
    ("http://1.2.3.256/", "http://1.2.4.0/"),  # no address (a browser refuses it): only itself
    ("http://127.0.0.1/", "http://localhost/"),  # a name is not looked up (an alias is known by its token)
])
def test_other_hosts_are_other_resolvers(one: str, other: str) -> None:
    assert not same_resolver(one, other)


@given(spellings(), st.integers(1, 65535), st.booleans())
def test_property_an_address_in_any_spelling_inet_aton_reads_is_one_resolver(
        spelt: tuple[str, ipaddress.IPv4Address], port: int, dot: bool) -> None:
    host, address = spelt
    assert socket.inet_aton(host) == address.packed  # the oracle: a connection to it reaches that address
    assert same_resolver(f"http://{host}{'.' if dot else ''}:{port}/", f"http://{address}:{port}/")


def _spelt(port: int) -> list[str]:
    """127.0.0.1:PORT in five spellings a browser (and but the last, inet_aton) reads as it."""
    return [f"http://127.1:{port}/", f"http://0x7f.0.0.1:{port}/", f"http://2130706433:{port}/",
            f"http://017700000001:{port}", f"http://127.0.0.1.:{port}/"]


def test_the_candidates_of_a_series_list_an_address_once_however_spelt_by_registry_or_dns(tmp_path: Path) -> None:
    own = tmp_path / "registry.json"
    write_registry_file(own, Registry({"a.example.us": ("http://127.0.0.1:8000/", *_spelt(8000),
                                                        "http://mirror.example./", "http://MIRROR.example/")}))
    urn = "urn:pdi://a.example.us/2026/11/20/1.text.1"
    # the DNS names it too: a U record's URI, an A record's host
    records = ["--naptr-record=a.example.us,100,10,U,THTTP+N2R,!^(.*)$!http://0x7F.1:8000/uri-res/N2R?\\1!",
               "--naptr-record=a.example.us,100,10,A,THTTP+N2R,,mirror.example",
               "--naptr-record=a.example.us,100,10,U,THTTP+N2R,!^.*$!http://other.example/!"]
    with dnsmasq(records) as node:
        authorities = Authorities(own, [], NaptrFinder(node.server, private=True))
        found = authorities.candidates("a.example.us", urn)
        assert [(c.base, c.source) for c in found] == [
            ("http://127.0.0.1:8000/", "registry"), ("http://mirror.example./", "registry"),
            ("http://other.example/", "dns")]
        # this resolver reached at 127.0.0.1:8000: none of its spellings is a candidate, the registry's nor the DNS's
        found = authorities.candidates("a.example.us", urn, selves=("http://127.0.0.1:8000/",))
        assert [c.base for c in found] == ["http://mirror.example./", "http://other.example/"]
        found = authorities.candidates("a.example.us", urn, selves=("http://0x7f000001:8000",))
        assert [c.base for c in found] == ["http://mirror.example./", "http://other.example/"]


def test_a_probe_that_finds_itself_at_one_spelling_knows_it_at_every_other() -> None:
    authorities = Authorities(None, [], None, token="t0ken")
    assert authorities.note_answer("http://127.0.0.1:8000/", {RESOLVER_HEADER: "t0ken"})
    for base in _spelt(8000):
        assert authorities.is_self(base), base
    assert not authorities.is_self("http://127.0.0.1:8001/")


def test_the_rescue_asks_an_address_once_however_spelt_and_probes_it_once(tmp_path: Path, timegate: int) -> None:
    """The registry and the mirrors name one resolver in the spellings of 127.0.0.1 inet_aton reads (a connection
    reaches it at each): its TimeGate is asked once, and whether it is up, once."""
    spelt = _spelt(timegate)[:4]  # 127.0.0.1. is no name a connection reads (the browser does): never reached
    own = tmp_path / "registry.json"
    write_registry_file(own, Registry({"x.example.us": (spelt[0], spelt[1]), "y.example.us": (spelt[2],)}))
    authorities = Authorities(own, [], None, peers=lambda: [spelt[3], f"http://127.0.0.1:{timegate}/"])
    assert RemoteCaptures(authorities).nearest("http://www.whitehouse.gov/", datetime.date(1994, 10, 20)) is None
    assert _TimeGate.asked == ["/timegate/http://www.whitehouse.gov/"]
    assert _TimeGate.probed == 1
