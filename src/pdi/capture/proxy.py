"""The forward proxy every request of a ``--browser`` capture goes through (an edge).

Chromium is started with this proxy as its only way out (see
:mod:`pdi.capture.browser`), so whatever asks for a connection — the page, a
frame of another site in its own process, a dedicated, shared or service
worker, a WebSocket, a redirect — asks here, and here it is checked the way
the plain capture checks its own (:mod:`pdi.capture.fetch`):

- the proxy resolves the host itself, checks every address found
  (:func:`pdi.capture.fetch.check_address`: only public ones unless
  ``allow_private``), refuses the request if any is refused, and then connects
  to an address it checked, never looking the name up again (no DNS
  rebinding between check and connection);
- ``CONNECT host:port`` (https, wss, and Chromium's ws through a proxy) is
  answered ``200`` and tunnelled once the connection stands;
- a plain-http request in absolute form (``GET http://host/path``) is sent on
  in origin form with ``Connection: close`` and its answer passed back, the
  connection then closed; an ``Upgrade`` (a ws:// handshake) answered ``101``
  becomes a tunnel;
- with a :class:`PageHosts` (a ``--browser`` capture), a host is resolved and
  connected to only once the page has asked for it: Chromium's own services
  (sign-in, GCM, the search engine's preconnect…) ask the proxy too, and are
  refused with ``403`` without their names ever being looked up;
- what cannot be checked is refused with ``403`` (an ``https://`` URL not
  tunnelled, another scheme, a request in origin form, a host that is not a
  host name or an IP literal, a connection to the proxy itself), as is what
  the policy refuses; malformed requests get ``400``, request bodies in chunks
  ``501``. Every refusal is recorded (:attr:`CaptureProxy.refused`).

Bounds (:class:`ProxyLimits`): the size of a request's and a response's
header block (64 KiB and, as Chromium's own limit, 256 KiB), the time to send
a request's header block, to connect, and without a byte either way on an
open connection, and the number of connections open at once (more are
answered ``503``).

Written here rather than taken from a library: the proxy must resolve and
connect itself, through the capture's own address check, and no maintained
asyncio proxy takes a connect hook; what it has to speak (RFC 9110 §9.3.6
CONNECT, RFC 9112 request and status lines, header blocks, message framing
of a request body) is small.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import threading
import urllib.parse
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pdi._lookups import Lookups
from pdi.capture.fetch import check_address
from pdi.errors import LimitError, ParseError, PDIError, UnsupportedError

__all__ = ["AddressPolicy", "CaptureProxy", "PageHosts", "ProxyLimits", "Refusal"]

_LENGTH = re.compile(rb"[0-9]{1,19}")

_CHUNK = 64 * 1024
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# A host as Chromium sends it, canonical: an ASCII (IDNA) name, an IPv4 literal, or an IPv6 literal in brackets.
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?", re.IGNORECASE)
_HOP_BY_HOP = frozenset(
    {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade"}
)


@dataclass(frozen=True)
class ProxyLimits:
    """Bounds of the proxy. Sizes in bytes, times in seconds."""

    max_request_head_bytes: int = 64 * 1024
    max_response_head_bytes: int = 256 * 1024  # Chromium's own limit on a response's header block
    head_timeout: float = 10.0
    connect_timeout: float = 10.0
    idle_timeout: float = 30.0
    max_connections: int = 64
    page_timeout: float = 10.0  # how long a request waits for the page to be seen asking for its host
    max_refusals_kept: int = 1000  # the rest are only counted (a page can ask for millions)


@dataclass(frozen=True)
class AddressPolicy:
    """Which addresses the proxy may connect to.

    Public ones always; every other one when ``allow_private``; and the
    ``(address, port)`` pairs of ``allow`` (a local mirror, or a test's own
    site), on that port only. ``forbid`` pairs are refused whatever the rest
    says (the proxy's own address).
    """

    allow_private: bool = False
    allow: frozenset[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = frozenset()
    forbid: frozenset[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = frozenset()

    @classmethod
    def of(cls, *, allow_private: bool = False, allow: Collection[tuple[str, int]] = ()) -> AddressPolicy:
        """The policy for ``allow_private`` and ``(address, port)`` pairs given as text."""
        pairs = set()
        for address, port in allow:
            try:
                pairs.add((ipaddress.ip_address(address), port))
            except ValueError as exc:
                raise ParseError(f"not an IP address: {address!r}", text=address, offset=0, rule="IP address") from exc
        return cls(allow_private=allow_private, allow=frozenset(pairs))

    def check(self, host: str, address: str, port: int) -> None:
        """Refuse (:class:`UnsupportedError`) connecting to ``address``:``port``, found for ``host``, unless allowed."""
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if (ip, port) in self.forbid:
            raise UnsupportedError(f"refusing to connect to {host} at {ip} port {port}: that is the capture proxy itself")
        if (ip, port) in self.allow:
            return
        check_address(host, address, allow_private=self.allow_private)

    def addresses(self, host: str, port: int, seconds: float = 60.0) -> list[str]:
        """The addresses ``host`` resolves to, every one checked (for a check made before the capture), looked up
        within ``seconds`` (:func:`pdi._lookups.look_up_within`: a name server that never answers held it for as
        long as the system's resolver waits, outside the capture's own time): a :class:`LimitError` past them."""
        from pdi._lookups import look_up_within

        try:
            infos = look_up_within(host, port, seconds)
        except TimeoutError as exc:
            raise LimitError(f"resolving {host} took longer than {seconds:g} s") from exc
        except (OSError, UnicodeError) as exc:
            raise UnsupportedError(f"cannot resolve {host}: {exc}") from exc
        return self._checked(host, port, infos)

    async def resolve(self, host: str, port: int, timeout: float, lookups: Lookups) -> list[str]:
        """The addresses ``host`` resolves to, every one checked, in the resolver's order (looked up by ``lookups``:
        a lookup given up on at ``timeout`` never holds the proxy's loop as it ends)."""
        try:
            infos = await asyncio.wait_for(lookups.lookup(host, port), timeout=timeout)
        except TimeoutError as exc:
            raise LimitError(f"resolving {host} took longer than {timeout} s") from exc
        except (OSError, UnicodeError) as exc:
            raise UnsupportedError(f"cannot resolve {host}: {exc}") from exc
        return self._checked(host, port, infos)

    def _checked(self, host: str, port: int, infos: Sequence[tuple[Any, ...]]) -> list[str]:
        addresses: list[str] = []
        for *_rest, sockaddr in infos:
            address = str(sockaddr[0])
            self.check(host, address, port)  # one refused address refuses the host
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise UnsupportedError(f"{host} resolves to no address")
        return addresses


_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class PageHosts:
    """The ``(host, port)`` pairs the page under capture has asked for, told by the browser's driver.

    The driver (:mod:`pdi.capture.browser`) announces every URL that Chromium's
    DevTools protocol attributes to the page: its frames and its workers
    (``Network.requestWillBeSent``, ``Network.webSocketCreated``). Chromium's
    own services run in the browser process, under no page, and are never
    announced. Thread-safe: announced from the driver's thread, awaited on the
    proxy's event loop.
    """

    def __init__(self) -> None:
        self._asked: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    @staticmethod
    def key(url: str) -> tuple[str, int] | None:
        """``(host, port)`` of an http, https, ws or wss URL; ``None`` for any other URL."""
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError:
            return None
        default = _DEFAULT_PORTS.get(parts.scheme.lower())
        if default is None or not parts.hostname:
            return None
        return parts.hostname.lower(), port or default

    def announce(self, url: str) -> None:
        """The page asked for ``url``: its host and port may be resolved and connected to."""
        key = self.key(url)
        if key is None:
            return
        with self._lock:
            if key in self._asked:
                return
            self._asked.add(key)
            waiting = list(self._waiting)
        for loop, event in waiting:
            loop.call_soon_threadsafe(event.set)

    async def asked(self, host: str, port: int, timeout: float) -> bool:
        """Whether the page asks for ``host``:``port`` within ``timeout`` seconds (at once if it has)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        key = (host.lower(), port)
        while True:
            event = asyncio.Event()
            with self._lock:
                if key in self._asked:
                    return True
                self._waiting.append((loop, event))
            try:
                left = deadline - loop.time()
                if left <= 0:
                    return False
                try:
                    await asyncio.wait_for(event.wait(), timeout=left)
                except TimeoutError:
                    with self._lock:
                        return key in self._asked
            finally:
                with self._lock:
                    self._waiting.remove((loop, event))


@dataclass(frozen=True)
class Refusal:
    """A request the proxy did not let through: what was asked, and why not."""

    request: str
    reason: str

    def __str__(self) -> str:
        return f"{self.request}: {self.reason}"


@dataclass
class _Activity:
    """When a tunnel last carried a byte either way (the event loop's clock)."""

    last: float


class _Refused(Exception):
    """Answer the client with ``status`` and record the refusal (internal control flow)."""

    def __init__(self, status: int, request: str, reason: str, record: bool = True) -> None:
        super().__init__(reason)
        self.status = status
        self.request = request
        self.reason = reason
        self.record = record


_REASONS = {400: "Bad Request", 403: "Forbidden", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


@dataclass
class _Head:
    """A parsed header block: the start line's three pieces and the fields in order."""

    start: tuple[bytes, bytes, bytes]
    fields: list[tuple[bytes, bytes]] = field(default_factory=list)

    def get(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.fields if key.lower() == name]

    def connection_tokens(self) -> set[str]:
        tokens: set[str] = set()
        for value in self.get(b"connection"):
            tokens.update(t.strip(" \t").lower() for t in value.decode("latin-1").split(",") if t.strip(" \t"))
        return tokens


async def _read_head(reader: asyncio.StreamReader, limit: int, timeout: float, what: str) -> list[bytes] | None:
    """The lines of a header block (without line ends), read within ``timeout`` and ``limit`` bytes.

    ``None`` when the peer sent not one byte before closing or before the time ran
    out: Chromium opens connections ahead of need and closes those it did not use.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        pending = await asyncio.wait_for(reader.read(1), timeout=timeout)
    except TimeoutError:
        return None
    if not pending:
        return None

    async def lines(pending: bytes) -> list[bytes]:
        got: list[bytes] = []
        size = 0
        while True:
            try:
                line = pending + await reader.readline()
            except ValueError as exc:  # one line longer than the stream's limit
                raise LimitError(f"{what} has a header line longer than {limit} bytes") from exc
            pending = b""
            size += len(line)
            if size > limit:
                raise LimitError(f"{what} has a header block longer than {limit} bytes")
            if not line.endswith(b"\n"):
                raise ParseError(f"{what} ended inside its header block", text="", offset=0, rule="RFC 9112 §2.1")
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            if not line:
                if got:
                    return got
                continue  # RFC 9112 §2.2: empty lines before a request line are ignored
            got.append(line)

    try:
        return await asyncio.wait_for(lines(pending), timeout=max(deadline - loop.time(), 0.001))
    except TimeoutError as exc:
        raise LimitError(f"{what} did not send its header block within {timeout} s") from exc


def _parse_fields(lines: list[bytes], *, what: str, strict: bool) -> list[tuple[bytes, bytes]]:
    fields: list[tuple[bytes, bytes]] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            # obs-fold (RFC 9112 §5.2): a request with one is refused; a response's is
            # replaced by a space, as the RFC allows a proxy to.
            if strict or not fields:
                raise ParseError(f"{what} folds a header line", text=line.decode("latin-1"), offset=0, rule="RFC 9112 §5.2")
            name, value = fields[-1]
            fields[-1] = (name, value + b" " + line.strip(b" \t"))
            continue
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise ParseError(f"{what} has a malformed header line", text=line.decode("latin-1"), offset=0, rule="RFC 9112 §5")
        value = value.strip(b" \t")
        if b"\r" in value or b"\0" in value:
            raise ParseError(f"{what} has a control character in a header", text=line.decode("latin-1"), offset=0, rule="RFC 9110 §5.5")
        fields.append((name, value))
    return fields


def _parse_request(lines: list[bytes]) -> _Head:
    start = lines[0].split(b" ")
    if len(start) != 3 or not _TOKEN.fullmatch(start[0]) or start[2] not in (b"HTTP/1.1", b"HTTP/1.0") or not start[1]:
        raise ParseError("not an HTTP/1.x request line", text=lines[0].decode("latin-1"), offset=0, rule="RFC 9112 §3")
    return _Head((start[0], start[1], start[2]), _parse_fields(lines[1:], what="the request", strict=True))


def _parse_response(lines: list[bytes]) -> _Head:
    version, _, rest = lines[0].partition(b" ")
    status, _, reason = rest.partition(b" ")
    if version not in (b"HTTP/1.1", b"HTTP/1.0") or not re.fullmatch(rb"[1-5][0-9][0-9]", status):
        raise ParseError("not an HTTP/1.x status line", text=lines[0].decode("latin-1"), offset=0, rule="RFC 9112 §4")
    return _Head((version, status, reason), _parse_fields(lines[1:], what="the response", strict=False))


def _host_and_port(authority: str, default_port: int | None, request: str) -> tuple[str, int]:
    """``host`` and ``port`` of an authority, if the host is one the proxy can check."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in authority):
        # urlsplit silently drops TAB, CR and LF (WHATWG URL's rule): "0\t:1" would reach "0"
        raise _Refused(400, request, f"{authority!r} holds white space or a control character")
    try:
        parts = urllib.parse.urlsplit("//" + authority)
        port = parts.port
    except ValueError as exc:  # an unbalanced bracket, a port that is not a number
        raise _Refused(400, request, f"{authority!r} has no valid port") from exc
    if parts.username is not None or parts.password is not None or parts.path or parts.query or parts.fragment:
        raise _Refused(400, request, f"{authority!r} is not host:port")
    host = parts.hostname or ""
    if authority.startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError as exc:
            raise _Refused(403, request, f"{authority!r} is not an IPv6 literal the proxy can check") from exc
    elif not _HOST_NAME.fullmatch(host) or len(host) > 253:
        raise _Refused(403, request, f"{host!r} is not a host name the proxy can check")
    if port is None:
        if default_port is None:
            raise _Refused(400, request, f"{authority!r} has no port")
        port = default_port
    if not 0 < port < 65536:
        raise _Refused(400, request, f"port {port} is not a TCP port (1 to 65535)")
    return host, port


class CaptureProxy:
    """The proxy on ``127.0.0.1`` for one capture, run on its own thread. Use as ``with CaptureProxy(policy) as p``.

    :attr:`port` is where it listens; :attr:`refused` what it has refused so far (the
    first ``max_refusals_kept``, each request cut to 1000 characters), and
    :attr:`refused_unkept` how many more. With ``page``, only the hosts the page
    asked for are resolved (a request waits up to ``limits.page_timeout`` for
    the page to be seen asking); any other is refused unresolved. With
    ``record_bytes``, the answer to each plain-http GET of at most that many
    bytes (and four times that in all) is kept in :attr:`recorded` (``URL: (header block, body as sent)``;
    https passes through a tunnel, unread).
    """

    def __init__(
        self, policy: AddressPolicy, limits: ProxyLimits | None = None, page: PageHosts | None = None, record_bytes: int = 0
    ) -> None:
        self.limits = limits or ProxyLimits()
        self._policy = policy
        self._page = page
        # Plain-http answers to GET as they passed (header block, body as framed), by URL.
        self.record_bytes = record_bytes
        self.recorded: dict[str, tuple[bytes, bytes]] = {}
        self._recorded_bytes = 0
        self.port = 0
        self.refused: list[Refusal] = []
        self.refused_unkept = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._open = 0
        self._connections: set[asyncio.Task[None]] = set()
        self._lookups = Lookups(self.limits.max_connections)  # (its places are taken within the proxy's loop)

    def __enter__(self) -> CaptureProxy:
        self._thread = threading.Thread(target=self._run, name="pdi-capture-proxy", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            self._thread.join()
            raise UnsupportedError(f"cannot start the capture proxy: {self._failed}") from self._failed
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join()

    @property
    def url(self) -> str:
        """The proxy as Chromium's ``--proxy-server`` takes it."""
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported by __enter__ if it happens while starting
            self._failed = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(
            self._accept, "127.0.0.1", 0, limit=self.limits.max_request_head_bytes, backlog=self.limits.max_connections
        )
        self.port = int(server.sockets[0].getsockname()[1])
        self._policy = AddressPolicy(
            allow_private=self._policy.allow_private,
            allow=self._policy.allow,
            forbid=self._policy.forbid | {(ipaddress.ip_address("127.0.0.1"), self.port)},
        )
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            for task in list(self._connections):
                task.cancel()
            if self._connections:
                await asyncio.gather(*self._connections, return_exceptions=True)
            await server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._open += 1
        try:
            if self._open > self.limits.max_connections:
                self._record("a connection", f"more than {self.limits.max_connections} open at once")
                await self._answer(writer, 503, f"more than {self.limits.max_connections} connections open at once")
                return
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the browser or the server went away: nothing to answer
        except asyncio.CancelledError:
            pass  # the proxy is closing
        finally:
            self._open -= 1
            self._connections.discard(task)
            writer.close()

    def _record(self, request: str, reason: str) -> None:
        if len(self.refused) >= self.limits.max_refusals_kept:
            self.refused_unkept += 1
            return
        if len(request) > 1000:
            request = request[:1000] + "…"
        self.refused.append(Refusal(request, reason))

    async def _answer(self, writer: asyncio.StreamWriter, status: int, reason: str) -> None:
        body = f"pdi capture proxy: {reason}\n".encode("utf-8", "replace")
        writer.write(
            f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("ascii")
            + body
        )
        await asyncio.wait_for(writer.drain(), timeout=self.limits.idle_timeout)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        limits = self.limits
        request = "a request"
        try:
            try:
                lines = await _read_head(reader, limits.max_request_head_bytes, limits.head_timeout, "the request")
                if lines is None:
                    return  # a connection never used: nothing to answer
                head = _parse_request(lines)
            except (LimitError, ParseError) as exc:
                raise _Refused(400, request, str(exc), record=False) from exc
            method, target = head.start[0].decode("ascii"), head.start[1].decode("latin-1")
            request = f"{method} {target}"
            if method == "CONNECT":
                await self._tunnel(reader, writer, target, request)
            else:
                await self._forward(reader, writer, head, target, request)
        except _Refused as refusal:
            if refusal.record:
                self._record(refusal.request, refusal.reason)
            await self._answer(writer, refusal.status, refusal.reason)

    async def _connect(self, host: str, port: int, request: str, limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Resolve ``host``, check every address, connect to one of those checked."""
        if self._page is not None and not await self._page.asked(host, port, self.limits.page_timeout):
            # Chromium's own (sign-in, GCM…): no part of the page, so not among its refusals.
            raise _Refused(403, request, f"the page asked for nothing on {host} port {port} (not looked up)", record=False)
        try:
            addresses = await self._policy.resolve(host, port, self.limits.connect_timeout, self._lookups)
        except PDIError as exc:
            raise _Refused(403, request, str(exc)) from exc
        failures: list[str] = []
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(address, port, limit=limit), timeout=self.limits.connect_timeout
                )
            except TimeoutError:
                failures.append(f"{address}: no answer within {self.limits.connect_timeout} s")
            except OSError as exc:
                failures.append(f"{address}: {exc.strerror or exc}")
        raise _Refused(502, request, f"cannot connect to {host} port {port} ({'; '.join(failures)})", record=False)

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: str, request: str) -> None:
        host, port = _host_and_port(target, None, request)
        up_reader, up_writer = await self._connect(host, port, request, _CHUNK)
        try:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await self._pipe_both(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _forward(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: _Head, target: str, request: str
    ) -> None:
        parts = urllib.parse.urlsplit(target)
        scheme = parts.scheme.lower()
        if scheme == "https":
            raise _Refused(403, request, "https is only tunnelled (CONNECT), never fetched by the proxy")
        if scheme != "http" or not target.lower().startswith("http://"):
            raise _Refused(403, request, "only http URLs in absolute form and CONNECT go through the capture proxy")
        host, port = _host_and_port(parts.netloc, 80, request)
        if head.get(b"transfer-encoding"):
            raise _Refused(501, request, "request bodies sent in chunks are not forwarded", record=False)
        lengths = {v.strip() for v in head.get(b"content-length")}
        # RFC 9110 §8.6: 1*DIGIT, ASCII; 19 of them at most (int() reads no more than 4,300, and no body is larger)
        if len(lengths) > 1 or any(_LENGTH.fullmatch(v) is None for v in lengths):
            raise _Refused(400, request, "the request has a malformed Content-Length")
        length = int(next(iter(lengths))) if lengths else 0
        upgrade = "upgrade" in head.connection_tokens() and bool(head.get(b"upgrade"))
        dropped = _HOP_BY_HOP | head.connection_tokens()
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        authority = parts.netloc.rpartition("@")[2]
        out = [f"{head.start[0].decode('ascii')} {path} HTTP/1.1".encode("latin-1"), b"Host: " + authority.encode("latin-1")]
        out += [name + b": " + value for name, value in head.fields if name.lower().decode("ascii") not in dropped | {"host"}]
        if upgrade:
            out += [b"Upgrade: " + head.get(b"upgrade")[0], b"Connection: Upgrade"]
        else:
            out.append(b"Connection: close")
        up_reader, up_writer = await self._connect(host, port, request, self.limits.max_response_head_bytes)
        try:
            up_writer.write(b"\r\n".join(out) + b"\r\n\r\n")
            await self._copy_exactly(reader, up_writer, length)
            await self._respond(reader, writer, up_reader, up_writer, upgrade, request)
        finally:
            up_writer.close()

    async def _respond(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        upgrade: bool,
        request: str,
    ) -> None:
        limits = self.limits
        while True:
            try:
                lines = await _read_head(up_reader, limits.max_response_head_bytes, limits.idle_timeout, "the server's response")
                if lines is None:
                    raise ParseError("the server closed the connection without answering", text="", offset=0, rule="RFC 9112 §4")
                head = _parse_response(lines)
            except (LimitError, ParseError) as exc:
                raise _Refused(502, request, str(exc), record=False) from exc
            status = int(head.start[1])
            switching = status == 101 and upgrade
            dropped = _HOP_BY_HOP | head.connection_tokens()
            if switching:
                dropped = dropped - {"upgrade"}
            out = [b" ".join(head.start)]
            out += [name + b": " + value for name, value in head.fields if name.lower().decode("ascii") not in dropped]
            out.append(b"Connection: upgrade" if switching else b"Connection: close")
            writer.write(b"\r\n".join(out) + b"\r\n\r\n")
            if switching:
                await self._pipe_both(reader, writer, up_reader, up_writer)
                return
            if 100 <= status < 200:
                continue  # an interim response (100, 103): the final one follows
            sink = bytearray() if self.record_bytes and request.startswith("GET ") else None
            record = None if sink is None else functools.partial(self._keep, request[4:], lines, sink)
            await self._copy(up_reader, writer, _Activity(asyncio.get_running_loop().time()), sink, record)
            return

    def _keep(self, url: str, head: list[bytes], sink: bytearray) -> None:
        """Keep a plain-http answer that passed whole, within ``record_bytes`` (four times that in all)."""
        fits = len(sink) <= self.record_bytes and self._recorded_bytes + len(sink) <= 4 * self.record_bytes
        if fits and url not in self.recorded:
            self._recorded_bytes += len(sink)
            self.recorded[url] = (b"\r\n".join(head) + b"\r\n\r\n", bytes(sink))

    async def _copy_exactly(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, length: int) -> None:
        while length > 0:
            try:
                chunk = await asyncio.wait_for(src.read(min(length, _CHUNK)), timeout=self.limits.idle_timeout)
            except TimeoutError as exc:
                raise _Refused(400, "a request body", f"no byte of it for {self.limits.idle_timeout} s", record=False) from exc
            if not chunk:
                raise asyncio.IncompleteReadError(b"", length)
            length -= len(chunk)
            dst.write(chunk)
            await asyncio.wait_for(dst.drain(), timeout=self.limits.idle_timeout)

    async def _copy(
        self,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        activity: _Activity,
        sink: bytearray | None = None,
        ended: Callable[[], None] | None = None,
    ) -> None:
        """Pass bytes on until ``src`` ends, or until neither way has carried one for the idle time.

        ``sink`` keeps a copy of what passed, up to one byte more than ``record_bytes``;
        ``ended`` is called when ``src`` has ended, before ``dst`` is told so.
        """
        loop = asyncio.get_running_loop()
        idle = self.limits.idle_timeout
        while True:
            left = activity.last + idle - loop.time()
            if left <= 0:
                return
            try:
                chunk = await asyncio.wait_for(src.read(_CHUNK), timeout=left)
            except TimeoutError:
                continue  # the other way may have carried bytes meanwhile
            if not chunk:
                if ended is not None:
                    ended()
                if dst.can_write_eof():
                    dst.write_eof()
                return
            activity.last = loop.time()
            if sink is not None and len(sink) <= self.record_bytes:
                sink += chunk[: self.record_bytes + 1 - len(sink)]
            dst.write(chunk)
            await asyncio.wait_for(dst.drain(), timeout=idle)

    async def _pipe_both(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> None:
        """Pass bytes both ways until both ends are done, one fails, or the tunnel idles."""
        activity = _Activity(asyncio.get_running_loop().time())
        tasks = [
            asyncio.create_task(self._copy(reader, up_writer, activity)),
            asyncio.create_task(self._copy(up_reader, writer, activity)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in tasks:
                task.cancel()
            # A reset or a stalled end stops the tunnel; nothing is left to answer.
            await asyncio.gather(*tasks, return_exceptions=True)
