"""pdi.server.http.forwarded: X-Forwarded-* believed from a trusted proxy only, and only in their own forms."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from pdi.errors import ParseError
from pdi.server.http.forwarded import (
    NO_PROXIES,
    Origin,
    TrustedForwarding,
    TrustedProxies,
    forwarded_origin,
)

LOCAL = TrustedProxies.parse(["127.0.0.1", "::1"])
NETWORKS = TrustedProxies.parse(["10.0.0.0/8", "fd00::/8"])


def _fields(**fields: str) -> list[tuple[bytes, bytes]]:
    return [(key.replace("_", "-").lower().encode(), value.encode()) for key, value in fields.items()]


def test_trusted_proxies_are_addresses_and_networks() -> None:
    assert LOCAL.trusts("127.0.0.1") and LOCAL.trusts("::1") and LOCAL.trusts("::ffff:127.0.0.1")
    assert not LOCAL.trusts("127.0.0.2") and not LOCAL.trusts(None) and not LOCAL.trusts("not an address")
    assert NETWORKS.trusts("10.200.3.4") and NETWORKS.trusts("fd12::1") and not NETWORKS.trusts("11.0.0.1")
    assert not NO_PROXIES and not NO_PROXIES.trusts("127.0.0.1")


@pytest.mark.parametrize("value", ["localhost", "10.0.0.1/8", "300.1.1.1", "::1/200", ""])
def test_a_trusted_proxy_that_is_not_an_address_or_network_is_refused_by_name(value: str) -> None:
    with pytest.raises(ParseError, match=re.escape(repr(value))):
        TrustedProxies.parse([value])


def test_an_untrusted_peer_or_no_fields_changes_nothing() -> None:
    forged = _fields(host="pdi.example.org", x_forwarded_host="evil.example", x_forwarded_proto="https")
    assert forwarded_origin(forged, "127.0.0.2", "http", LOCAL) is None
    assert forwarded_origin(forged, "127.0.0.1", "http", NO_PROXIES) is None
    assert forwarded_origin(_fields(host="pdi.example.org"), "127.0.0.1", "http", LOCAL) is None


@pytest.mark.parametrize(("fields", "origin"), [
    (dict(host="pdi.example.org", x_forwarded_proto="https", x_forwarded_for="203.0.113.9"),
     Origin("https", b"pdi.example.org", "203.0.113.9")),
    # nginx's $host has no port: X-Forwarded-Port adds it, unless it is the scheme's default
    (dict(host="127.0.0.1", x_forwarded_proto="https", x_forwarded_host="127.0.0.1", x_forwarded_port="8443"),
     Origin("https", b"127.0.0.1:8443", "127.0.0.1")),
    (dict(host="pdi.example.org", x_forwarded_proto="HTTPS", x_forwarded_port="443"),
     Origin("https", b"pdi.example.org", "127.0.0.1")),
    (dict(host="x", x_forwarded_proto="https", x_forwarded_host="pdi.example.org:443"),
     Origin("https", b"pdi.example.org", "127.0.0.1")),
    (dict(host="x", x_forwarded_host="[2001:db8::1]:8080"), Origin("http", b"[2001:db8::1]:8080", "127.0.0.1")),
    # a list: its last item, the one the nearest proxy wrote
    (dict(host="x", x_forwarded_proto="http, https", x_forwarded_host="evil.example, pdi.example.org"),
     Origin("https", b"pdi.example.org", "127.0.0.1")),
    # a long one is read as a short one (not remembered: pdi.server.http.forwarded._REMEMBERED)
    (dict(host="x", x_forwarded_host="evil.example, " * 50 + "pdi.example.org"), Origin("http", b"pdi.example.org", "127.0.0.1")),
    # the client: the rightmost address that is not a trusted proxy; what is left of it is not believed
    (dict(host="x", x_forwarded_for="198.51.100.1, 203.0.113.9, 127.0.0.1"), Origin("http", b"x", "203.0.113.9")),
    (dict(host="x", x_forwarded_for="[2001:db8::5]"), Origin("http", b"x", "2001:db8::5")),
])
def test_a_trusted_proxys_fields_say_the_clients_scheme_host_and_address(fields: dict[str, str], origin: Origin) -> None:
    assert forwarded_origin(_fields(**fields), "127.0.0.1", "http", LOCAL) == origin


@pytest.mark.parametrize(("fields", "named"), [
    (dict(x_forwarded_proto="javascript"), "X-Forwarded-Proto"),
    (dict(x_forwarded_host="evil.example/path"), "X-Forwarded-Host"),
    (dict(x_forwarded_host="user@evil.example"), "X-Forwarded-Host"),
    (dict(x_forwarded_host="evil.example:0"), "X-Forwarded-Host"),
    (dict(x_forwarded_host="[not:v6]"), "X-Forwarded-Host"),
    (dict(x_forwarded_host="a b"), "X-Forwarded-Host"),
    (dict(x_forwarded_port="70000"), "X-Forwarded-Port"),
    (dict(x_forwarded_for="unknown"), "X-Forwarded-For"),
    (dict(host="evil.example\\x", x_forwarded_proto="https"), "Host"),
])
def test_a_bad_value_from_a_trusted_proxy_is_an_error_naming_the_field(fields: dict[str, str], named: str) -> None:
    with pytest.raises(ParseError, match=f"^{named} from the proxy at 127.0.0.1 (is|names) '"):
        forwarded_origin(_fields(**{"host": "pdi.example.org", **fields}), "127.0.0.1", "http", LOCAL)


#: What a host (and port) pdi puts in a URL may be: nothing that ends the authority or adds to it.
_SAFE_HOST = re.compile(rb"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:[0-9]{1,5})?")


@given(host=st.binary(max_size=40), proto=st.binary(max_size=10), port=st.binary(max_size=8))
def test_whatever_a_trusted_proxy_sends_the_host_is_a_host_or_an_error(host: bytes, proto: bytes, port: bytes) -> None:
    fields = [(b"host", b"pdi.example.org"), (b"x-forwarded-host", host), (b"x-forwarded-proto", proto),
              (b"x-forwarded-port", port)]
    try:
        origin = forwarded_origin(fields, "127.0.0.1", "http", LOCAL)
    except ParseError:
        return
    assert origin is not None and origin.scheme in ("http", "https")
    assert _SAFE_HOST.fullmatch(origin.host), origin.host


async def _seen(request: Request) -> JSONResponse:
    return JSONResponse({"base": str(request.base_url), "client": request.client.host if request.client else None})


def test_the_middleware_rewrites_a_trusted_request_and_answers_400_to_a_bad_one() -> None:
    app = TrustedForwarding(Starlette(routes=[Route("/", _seen)]), TrustedProxies.parse(["127.0.0.0/8"]))
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pdi.example.org", "X-Forwarded-For": "203.0.113.9"}
    with TestClient(app, base_url="http://test", client=("127.0.0.1", 5000)) as c:
        assert c.get("/", headers=forwarded).json() == {"base": "https://pdi.example.org/", "client": "203.0.113.9"}
        assert c.get("/").json() == {"base": "http://test/", "client": "127.0.0.1"}
        bad = c.get("/", headers={"X-Forwarded-Proto": "gopher"})
        assert bad.status_code == 400 and "X-Forwarded-Proto" in bad.json()["detail"]
    with TestClient(app, base_url="http://test", client=("192.0.2.7", 5000)) as c:
        assert c.get("/", headers=forwarded).json() == {"base": "http://test/", "client": "192.0.2.7"}
