"""What a trusted reverse proxy says of the request it forwards: ``X-Forwarded-Proto``, ``-Host``, ``-Port``, ``-For``.

Behind a proxy that ends TLS (nginx: ``docs/deploy/nginx.conf``), ``pdi
serve`` sees plain HTTP from the proxy's address; the URL the client asked
for — its scheme, its host and port — and the client's address are only
in the fields the proxy adds. Every absolute URL the resolver makes
(``Link``, a TimeGate's ``Location``, N2Ls's lists, OAI-PMH, annotations'
IRIs, the sign-in's own origin) and whether a cookie is ``Secure`` follow
from them: so they are read **only from a direct peer named trusted**
(``pdi serve --trusted-proxy ADDR``, addresses or networks; by default
none), and from anyone else ignored, as if never sent. A client that
reaches ``pdi serve`` directly cannot make it name another host.

From a trusted peer:

* ``X-Forwarded-Proto`` — ``http`` or ``https`` (any case); the request's scheme.
* ``X-Forwarded-Host`` — ``host`` or ``host:port`` (a DNS name, an IPv4
  address or a bracketed IPv6 address, RFC 3986 §3.2.2); it takes the place
  of ``Host``. Without it, the proxy's own ``Host`` stands.
* ``X-Forwarded-Port`` — the port the client connected to, added to a host
  that names none (left out when it is the scheme's default).
* ``X-Forwarded-For`` — the client's address: the rightmost address of the
  list not itself a trusted proxy (each proxy appends the peer it took the
  request from; what is left of a trusted one was said by whoever it
  forwarded, and is not believed further).

A field given more than once, or as a list, counts by its last item (the one
the nearest proxy wrote). A value a trusted proxy sends that is not one of
these forms is answered ``400`` with what was wrong
(a :class:`~pdi.errors.ParseError` whose ``rule`` is the field): never put into a URL. RFC 7239's ``Forwarded``
is not read (nginx, the proxy documented, writes the ``X-Forwarded-*``
fields); uvicorn's own reading of them (``proxy_headers``, trusting
127.0.0.1 by default) is turned off in ``pdi serve``, which reads them here,
in :class:`TrustedForwarding` and in its connections' answers made without the
app (:mod:`pdi.server.process.connection`).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from pdi._wording import shown_field
from pdi.errors import ParseError
from pdi.server.http.problems import problem

__all__ = ["NO_PROXIES", "Origin", "TrustedForwarding", "TrustedProxies", "forwarded_origin"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: A host as a URL's authority names it, and its port: a DNS name (letters, digits, ``-``, ``_``, ``.``), an
#: IPv4 address, or an IPv6 address in brackets (RFC 3986 §3.2.2; no user information, no percent-encoding).
_HOST = re.compile(rb"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?)(?::([0-9]{1,5}))?")
_PORT = re.compile(rb"[0-9]{1,5}")
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: The fields read, lower-cased as ASGI gives them.
_FIELDS = frozenset({b"x-forwarded-proto", b"x-forwarded-host", b"x-forwarded-port", b"x-forwarded-for"})


@dataclass(frozen=True, eq=False)
class TrustedProxies:
    """The addresses and networks whose ``X-Forwarded-*`` fields are believed (``pdi serve --trusted-proxy``).

    Compared and hashed by identity (a process has one), so that what it decided is cheaply remembered.
    """

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, values: Iterable[str]) -> TrustedProxies:
        """``127.0.0.1``, ``::1``, ``10.0.0.0/8``…: a :class:`~pdi.errors.ParseError` naming one that is not an
        address or a network (host bits set, ``10.0.0.1/8``, is refused too: say the network)."""
        networks = []
        for value in values:
            try:
                networks.append(ipaddress.ip_network(value.strip(), strict=True))
            except ValueError as exc:
                raise ParseError(f"{value!r} is not an IP address or network (127.0.0.1, ::1, 10.0.0.0/8): {exc}",
                                 text=value, rule="trusted proxy") from None
        return cls(tuple(networks))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, address: str | None) -> bool:
        """Whether ``address`` (a peer's, as ASGI's ``client`` gives it) is one of the trusted proxies."""
        if not self.networks or not address:
            return False
        return _trusted(self, address)


@functools.lru_cache(maxsize=4096)
def _trusted(proxies: TrustedProxies, address: str) -> bool:
    """:meth:`TrustedProxies.trusts`, remembered: a proxy's address comes again with every request it forwards."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 on a dual-stack socket is 127.0.0.1
    return any(ip in network for network in proxies.networks)


#: Trusting no proxy (``pdi serve``'s default): every request as it came.
NO_PROXIES = TrustedProxies()


@dataclass(frozen=True, slots=True)
class Origin:
    """What the client asked for, as a trusted proxy says: its scheme, ``Host`` (``host[:port]``) and address."""

    scheme: str
    host: bytes
    client: str | None


def forwarded_origin(
    headers: Sequence[tuple[bytes, bytes]], peer: str | None, scheme: str, trusted: TrustedProxies,
) -> Origin | None:
    """The request's :class:`Origin` from the ``X-Forwarded-*`` fields of raw ``headers`` when ``peer`` is a
    trusted proxy that sent any; else ``None`` (the request as it came). A :class:`~pdi.errors.ParseError` for a value
    that is not one of the field's forms (the module's docstring)."""
    if not trusted.trusts(peer):
        return None
    given: dict[bytes, bytes] = {}
    host = b""
    for key, value in headers:
        if key in _FIELDS:
            given[key] = given[key] + b"," + value if key in given else value
        elif key == b"host" and not host:
            host = value
    if not given:
        return None
    # remembered only when short: a few hundred bytes at most an entry
    read = _origin if len(host) + sum(map(len, given.values())) <= _REMEMBERED else _origin.__wrapped__
    return read(trusted, peer, scheme, host, given.get(b"x-forwarded-proto"), given.get(b"x-forwarded-host"),
                given.get(b"x-forwarded-port"), given.get(b"x-forwarded-for"))


#: The most octets of a request's Host and forwarded fields whose reading is remembered (:func:`_origin`).
_REMEMBERED = 400


@functools.lru_cache(maxsize=1024)
def _origin(
    trusted: TrustedProxies, peer: str | None, scheme: str, host: bytes, proto_field: bytes | None,
    host_field: bytes | None, port_field: bytes | None, chain: bytes | None,
) -> Origin:
    """:func:`forwarded_origin` of the fields' values, remembered (a proxy sends the same few again and again;
    an error is not remembered, and said again each time)."""
    proto = _last(proto_field)
    if proto is not None:
        scheme = proto.decode("latin-1").lower()
        if scheme not in _DEFAULT_PORTS:
            raise ParseError(f"X-Forwarded-Proto from the proxy at {peer} is {_shown(proto)}, not http or https",
                                 rule="X-Forwarded-Proto")
    named = _last(host_field)
    if named is not None:
        host = named
    port = None
    if host:
        found = _HOST.fullmatch(host)
        if found is None or (found[1].startswith(b"[") and not _ipv6(found[1][1:-1])) \
                or (found[2] is not None and not 0 < int(found[2]) < 65536):
            said = "X-Forwarded-Host" if named is not None else "Host"
            raise ParseError(f"{said} from the proxy at {peer} is {_shown(host)}, not a host[:port]", rule=said)
        port = found[2]
    told = _last(port_field)
    if told is not None:
        if not _PORT.fullmatch(told) or not 0 < int(told) < 65536:
            raise ParseError(f"X-Forwarded-Port from the proxy at {peer} is {_shown(told)}, not a port",
                                 rule="X-Forwarded-Port")
        if host and port is None and int(told) != _DEFAULT_PORTS[scheme]:
            host += b":" + told
    if port is not None and int(port) == _DEFAULT_PORTS[scheme]:
        host = host[: -len(port) - 1]  # https://h:443/ is https://h/ (RFC 3986 §6.2.3)
    client = peer
    if chain is not None:
        client = _client(chain, peer, trusted)
    return Origin(scheme, host, client)


def _last(value: bytes | None) -> bytes | None:
    """The last item of a field's comma-separated list (``None``: not given, or only empty items)."""
    if value is None:
        return None
    for item in reversed(value.split(b",")):
        if item.strip(b" \t"):
            return item.strip(b" \t")
    return None


def _ipv6(text: bytes) -> bool:
    try:
        ipaddress.IPv6Address(text.decode("ascii"))
    except ValueError:
        return False
    return True


def _client(chain: bytes, peer: str | None, trusted: TrustedProxies) -> str | None:
    """The rightmost address of ``X-Forwarded-For`` that is not a trusted proxy (the last one, when all are)."""
    client = peer
    for item in reversed(chain.split(b",")):
        item = item.strip(b" \t")  # OWS (RFC 9110 §5.6.3): spaces and tabs
        text = item.decode("latin-1")
        if not text:
            continue
        bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            client = str(ipaddress.ip_address(bare))
        except ValueError:
            raise ParseError(f"X-Forwarded-For from the proxy at {peer} names {_shown(item)},"
                                 " not an IP address", rule="X-Forwarded-For") from None
        if not trusted.trusts(client):
            break
    return client


def _shown(value: bytes) -> str:
    """A value as an error message quotes it (at most 100 characters), as the proxy sent it."""
    return shown_field(value, 100)


class TrustedForwarding:
    """ASGI middleware: a request from a trusted proxy as the client made it (:func:`forwarded_origin`).

    Its scope's ``scheme``, its ``Host`` field and ``client`` are those the
    proxy says, so Starlette's ``request.url`` and ``request.base_url`` and
    every URL made from them name the client's scheme and host. A value that
    is not one of a field's forms: ``400``. ``state`` is the wrapped app's
    (``pdi serve`` reads its cache there).
    """

    def __init__(self, app: ASGIApp, trusted: TrustedProxies) -> None:
        self.app = app
        self.trusted = trusted
        self.state: Any = getattr(app, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.trusted:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        try:
            origin = forwarded_origin(scope["headers"], client[0] if client else None, scope["scheme"], self.trusted)
        except ParseError as exc:
            await problem(400, "bad request from the proxy", str(exc))(scope, receive, send)
            return
        if origin is not None:
            scope = dict(scope)
            scope["scheme"] = origin.scheme
            if origin.client is not None:
                scope["client"] = (origin.client, 0)
            if origin.host:
                scope["headers"] = [(b"host", origin.host), *((k, v) for k, v in scope["headers"] if k != b"host")]
        await self.app(scope, receive, send)
