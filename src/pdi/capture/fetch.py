"""Fetching over HTTP with ``httpx``, guarded and bounded (an edge).

- Only ``http`` and ``https``.
- Every TCP connection goes through :class:`_GuardedBackend`, which resolves
  the host itself, refuses every address that is not public
  (:mod:`pdi._addresses`: private, loopback, link-local, shared,
  reserved, multicast, unspecified, and IPv6 forms that carry such an IPv4
  address) unless ``allow_private`` is set, and then connects to the address
  it checked. Checking the address that is actually connected to (not a
  second lookup) closes the DNS-rebinding hole; TLS still verifies the host
  name, which httpcore takes from the URL, not from the connected address.
- Proxies from the environment are not used (``trust_env=False``): a proxy
  would connect on our behalf to addresses we never see.
- Cookies the site sets are kept for the capture and sent back, as a browser
  would, within a browser's bounds (:class:`_BoundedCookieJar`): a site cannot
  make every request carry megabytes of them.
- Redirects are followed by hand, at most ``max_redirects``, each hop
  checked and recorded.
- Bodies are streamed and cut off at ``max_resource_bytes``, as sent and as
  decoded (:mod:`pdi.capture.decoding`: each content coding is undone with its
  output bounded, so a small compressed body cannot grow past the limit in
  memory). The decoded bodies of the whole capture, those fetched and those
  being fetched, are counted as they arrive against ``max_total_bytes``: the
  first octet past it is a :class:`~pdi.errors.WholeCaptureLimit`, so a page of
  hundreds of parts each within the resource limit is never held whole.
  Time-outs apply to connecting, each read, and the whole capture.
"""

from __future__ import annotations

import asyncio
import datetime
import http.cookiejar
import ipaddress
import re
import ssl
from collections.abc import Iterable

import httpcore
import httpx

from pdi import formats
from pdi._addresses import not_public
from pdi._lookups import Lookups
from pdi._wording import clipped, plural
from pdi.capture.decoding import ACCEPTED, BodyDecoder
from pdi.capture.values import Exchange, Fetched, Limits, Redirect
from pdi.errors import (
    LimitError,
    NotFoundError,
    ParseError,
    RemoteError,
    UnsupportedError,
    WholeCaptureLimit,
)
from pdi.uri import resolve

__all__ = ["Exchange", "Fetched", "Fetcher", "Limits", "Redirect", "check_address", "check_url"]


def check_address(host: str, address: str, *, allow_private: bool) -> None:
    """Refuse ``address`` (found for ``host``) unless it is public or private ones are allowed.

    What is public is :func:`pdi._addresses.not_public`'s to say.
    """
    reason = not_public(address)
    if reason is not None and not allow_private:
        bare = address.split("%", 1)[0]
        where = host if host.strip("[]") == bare else f"{host} at {bare}"  # an address given as the host: once
        raise UnsupportedError(
            f"refusing to connect to {where}: not a public address ({reason}); pass --allow-private to allow it"
        )


class _AddressRefused(Exception):  # never seen outside: Fetcher.fetch says it as an UnsupportedError
    """:func:`check_address` refused the address a connection was to go to: raised through httpx (which passes on
    what is not its own) to :meth:`Fetcher.fetch`, the one sender of requests over :class:`_GuardedBackend`, which
    says it as the :class:`~pdi.errors.UnsupportedError` it was, naming the URL."""


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check, then connect to the checked address."""

    def __init__(self, allow_private: bool, concurrency: int) -> None:
        self._allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()
        self._resolver = Lookups(concurrency)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            infos = await asyncio.wait_for(self._resolver.lookup(host, port), timeout=timeout)
        except TimeoutError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: no answer within {timeout:g} s") from exc
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses: list[str] = []
        for _family, _type, _proto, _canon, sockaddr in infos:
            address = str(sockaddr[0])
            try:
                check_address(host, address, allow_private=self._allow_private)
            except UnsupportedError as exc:
                raise _AddressRefused(str(exc)) from None
            if address not in addresses:
                addresses.append(address)
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise httpcore.ConnectError(f"cannot connect to {host}:{port}: {last}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise UnsupportedError("capture does not use Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, with its connection pool built over :class:`_GuardedBackend`.

    httpx does not take a network backend as an argument, so the pool it made
    is replaced by one that has ours (same arguments httpx would pass).
    """

    def __init__(self, *, allow_private: bool, limits: Limits) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(),
            max_connections=limits.concurrency,
            max_keepalive_connections=limits.concurrency,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            network_backend=_GuardedBackend(allow_private, limits.concurrency),
        )


class _BoundedCookieJar(http.cookiejar.CookieJar):
    """A cookie jar a site cannot fill without bound.

    A cookie whose name and value are more than :attr:`MAX_COOKIE` octets is ignored (RFC 6265bis §5.6,
    as Chromium does); a new cookie is ignored when its domain has :attr:`MAX_PER_DOMAIN` already (RFC
    6265 §6.1's least, which a user agent may keep to), and when the jar holds :attr:`MAX_COOKIES` or
    :attr:`MAX_OCTETS` of names and values (servers take a request's head of 8 to 16 KB, so more is never of
    use; without it, each request of a capture carried every cookie set before it: megabytes, quadratic in
    the parts). A cookie already held may always be set again (its new value within the bounds).
    """

    MAX_COOKIE = 4096
    MAX_PER_DOMAIN = 50
    MAX_COOKIES = 3000
    MAX_OCTETS = 64 * 1024

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        octets = len(cookie.name) + len(cookie.value or "")
        if octets > self.MAX_COOKIE:
            return
        domain = cookie.domain.lstrip(".")
        count = in_domain = held = 0
        for kept in self:
            if (kept.domain, kept.path, kept.name) == (cookie.domain, cookie.path, cookie.name):
                continue  # the one this replaces
            count += 1
            in_domain += kept.domain.lstrip(".") == domain
            held += len(kept.name) + len(kept.value or "")
        if count >= self.MAX_COOKIES or in_domain >= self.MAX_PER_DOMAIN or held + octets > self.MAX_OCTETS:
            return
        super().set_cookie(cookie)


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
#: An authority with user information (RFC 3986 §3.2.1), empty or not: what precedes its "@".
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*:[/\\]{2})[^/\\?#]*@")


def _redirected(source: str | None) -> str:
    return f" (redirected from {clipped(source)})" if source is not None else ""


def _check_labels(host: str, url: str, via: str) -> None:
    """Refuse a host name no name server could hold: an empty label (RFC 1034 §3.1: only the root's is empty, the
    one a final "." ends) or one past 63 octets (RFC 1035 §2.3.4). The lookup would fail all the same, in Python's
    idna codec's words (a ``UnicodeError``)."""
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass  # a name
    name = clipped(host, 100)
    for label in (host[:-1] if host.endswith(".") else host).split("."):
        if not label:
            raise ParseError(f"not a host capture can fetch: {name} has an empty label{via}", text=url, offset=0,
                             rule="RFC 1034 §3.1 label")
        if len(label) > 63:
            raise ParseError(f"not a host capture can fetch: {name} has a label of {len(label)} octets, more than"
                             f" 63{via}", text=url, offset=0, rule="RFC 1035 §2.3.4 label")


def check_url(url: str, *, redirected_from: str | None = None) -> httpx.URL:
    """``url`` read by httpx, if capture can fetch it: http or https, without user information, with a
    host (an ``xn--`` one an IDNA A-label that decodes; no label empty or past 63 octets) and a valid port; else a :class:`~pdi.errors.PDIError`
    naming it (cut short when long) and, when given, the URL that redirected to it."""
    via = _redirected(redirected_from)
    scheme = _SCHEME.match(url)
    if scheme is not None and scheme.group(1).lower() not in ("http", "https"):  # however long the rest is
        raise UnsupportedError(f"capture fetches only http and https URLs, not {scheme.group(1)}: {clipped(url)}{via}")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ParseError(
            f"not a URL capture can fetch: {clipped(url)}: {exc}{via}", text=url, offset=0, rule="RFC 3986 URI"
        ) from exc
    if not parsed.scheme:  # a host or a path alone (example.org, notaurl): no URL at all
        raise UnsupportedError(f"{clipped(url)} is not a URL: give an http:// or https:// URL{via}")
    if parsed.scheme not in ("http", "https"):
        raise UnsupportedError(
            f"capture fetches only http and https URLs, not {parsed.scheme}: {clipped(url)}{via}"
        )
    if parsed.userinfo or _USERINFO.match(url):
        # httpx would send it as Basic credentials, and a page's URL becomes its permanent name
        shown = _USERINFO.sub(r"\1…@", url, 1)  # the credentials are not repeated on the terminal either
        raise UnsupportedError(
            f"capture refuses a URL with user information ({clipped(shown)}){via}: credentials must never be sent"
            " for a capture or become part of a persistent name; give the URL without 'user:password@'"
        )
    try:
        host = parsed.host  # httpx decodes an "xn--" host when it is first asked for: a bad one raises then
    except ValueError as exc:  # idna.IDNAError (a UnicodeError)
        raise ParseError(
            f"not a host capture can fetch: {parsed.raw_host.decode('ascii', 'replace')} is no IDNA A-label ({exc})",
            text=url, offset=0, rule="RFC 5890 §2.3.2.1 A-label",
        ) from exc
    if not host:
        raise ParseError(f"URL has no host: {clipped(url)}{via}", text=url, offset=0, rule="RFC 3986 authority")
    _check_labels(parsed.raw_host.decode("ascii", "replace"), url, via)
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ParseError(f"port {parsed.port} is not a TCP port (1 to 65535): {clipped(url)}{via}", text=url,
                         offset=0, rule="port")
    return parsed


_LOCATION = "x-pdi-location"


def _what_went_wrong(exc: Exception) -> str:
    """httpx's words for ``exc``, made plain where they are h11's alone."""
    if isinstance(exc, httpx.RemoteProtocolError) and str(exc) == "Receive buffer too long":
        # h11's words when an answer's head passes httpcore's bound (AsyncHTTP11Connection.MAX_INCOMPLETE_EVENT_SIZE)
        return "the head of its answer (status line and header fields) is longer than 100 KiB"
    return str(exc)


def _peer(response: httpx.Response) -> str | None:
    """The address the response came from (read while the connection is open)."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    return str(peer[0]) if isinstance(peer, tuple) and peer else None


async def _set_location_aside(response: httpx.Response) -> None:
    """Move ``Location`` where httpx does not look.

    Even with ``follow_redirects=False`` httpx builds the next request of a redirect
    (``response.next_request``) from the raw ``Location``, and raises
    ``InvalidURL`` on one it cannot read (``http:127.0.0.1/x``) before the response
    reaches us. Redirects are resolved here, with :func:`pdi.uri.resolve`.
    """
    location = response.headers.get_list("location")
    if location:
        del response.headers["location"]
        response.headers[_LOCATION] = location[0]


class Fetcher:
    """A bounded HTTP client for one capture. Use as ``async with Fetcher(...) as f``."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        limits: Limits | None = None,
        user_agent: str | None = None,
        exchanges: list[Exchange] | None = None,
    ) -> None:
        self.limits = limits or Limits()
        #: when given, every exchange (redirects and errors too) is appended to it, in the order they end
        self.exchanges = exchanges
        #: Octets of the bodies kept in :attr:`exchanges`: at most the total limit, an error's and a redirect's
        #: too (they are never packed, so the crawl's count of the parts does not see them).
        self._kept = 0
        #: Octets of the decoded bodies held: those fetched and those being fetched (one that fails gives its own
        #: back). At most the total limit, counted as they arrive: the crawl adds the parts up only once a level of
        #: them is fetched, and a level may be hundreds of parts of up to the resource limit each.
        self._held = 0
        self.allow_private = allow_private
        headers = {"User-Agent": user_agent or "pdi-capture/0.1 (+RFC 2557 archiver)", "Accept-Encoding": ACCEPTED}
        self._client = httpx.AsyncClient(
            transport=_GuardedTransport(allow_private=allow_private, limits=self.limits),
            timeout=httpx.Timeout(
                connect=self.limits.connect_timeout,
                read=self.limits.read_timeout,
                write=self.limits.read_timeout,
                pool=self.limits.total_timeout,
            ),
            follow_redirects=False,
            trust_env=False,
            headers=headers,
            cookies=_BoundedCookieJar(),
            event_hooks={"response": [_set_location_aside]},
        )
        self._semaphore = asyncio.Semaphore(self.limits.concurrency)

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> Fetched:
        """GET ``url``, following and recording redirects; raises a :mod:`pdi.errors` error on failure."""
        async with self._semaphore:
            return await self._fetch(url)

    async def _fetch(self, url: str) -> Fetched:
        current = url
        hops: list[Redirect] = []
        while True:
            source = hops[-1].source if hops else None  # what redirected here
            check_url(current, redirected_from=source)
            named = clipped(current) + _redirected(source)  # in messages
            try:
                async with self._client.stream("GET", current) as response:
                    started = (datetime.datetime.now(datetime.UTC), _peer(response))
                    location = response.headers.get(_LOCATION)
                    if self.exchanges is not None and (response.status_code >= 400 or response.is_redirect):
                        await self._record(response, current, started, None)
                    if response.is_redirect and location is not None:
                        target = resolve(str(response.url), location, strict=False)
                        hops.append(Redirect(response.status_code, current, target))
                        if len(hops) > self.limits.max_redirects:
                            raise LimitError(
                                f"more than {plural(self.limits.max_redirects, 'redirect')} from {clipped(url)}"
                            )
                        current = target
                        continue
                    if response.status_code in (404, 410):
                        raise NotFoundError(f"{named} answered HTTP {response.status_code}")
                    if response.status_code >= 400:  # the server's failure, or its refusal: perhaps not so later
                        raise RemoteError(f"{named} answered HTTP {response.status_code}")
                    # ASCII digits only (h11 refuses others before this; str.isdigit is true of "²" too), and more
                    # than 19 of them over any limit unread (int() reads no more than 4,300)
                    declared = (response.headers.get("content-length") or "").strip(" \t").lstrip("0") or "0"
                    if re.fullmatch(r"[0-9]+", declared) and (
                            len(declared) > 19 or int(declared) > self.limits.max_resource_bytes):
                        size = plural(int(declared), "byte") if len(declared) <= 19 else f"{len(declared)} digits of bytes"
                        raise LimitError(f"{named} is {size}, more than the limit of {self.limits.max_resource_bytes}")
                    limit = self.limits.max_resource_bytes
                    decoder = BodyDecoder(
                        response.headers.get_list("content-encoding", split_commas=True), limit=limit, url=named
                    )
                    received = held = 0
                    raw: list[bytes] | None = [] if self.exchanges is not None else None
                    try:
                        async for chunk in response.aiter_raw():
                            received += len(chunk)
                            if received > limit:
                                raise LimitError(f"{named} is larger than the limit of {plural(limit, 'byte')}")
                            if raw is not None and self._kept + received > self.limits.max_total_bytes:
                                raise self._too_much()
                            decoder.feed(chunk)
                            self._held += len(decoder.body) - held
                            held = len(decoder.body)
                            if self._held > self.limits.max_total_bytes:
                                raise self._too_large(named)
                            if raw is not None:
                                raw.append(chunk)
                        data = decoder.finish()
                    except BaseException:
                        self._held -= held  # not kept: its octets are given back
                        raise
                    if raw is not None:
                        await self._record(response, current, started, b"".join(raw))
                    media, charset = formats.content_type_of(response.headers.get("content-type"))
                    return Fetched(
                        url=url,
                        final_url=current,
                        status=response.status_code,
                        media_type=media,
                        charset=charset,
                        data=data,
                        redirects=tuple(hops),
                    )
            except _AddressRefused as exc:
                raise UnsupportedError(f"cannot fetch {named}: {exc}") from None
            except httpx.TimeoutException as exc:
                raise LimitError(f"timed out fetching {named}: {type(exc).__name__}") from exc
            except httpx.InvalidURL as exc:
                raise NotFoundError(f"cannot fetch {named}: {_what_went_wrong(exc)}") from exc
            except httpx.HTTPError as exc:  # not reached, or no answer HTTP can read: the server's doing, not ours
                raise RemoteError(f"cannot fetch {named}: {_what_went_wrong(exc)}") from exc

    def _too_large(self, url: str) -> WholeCaptureLimit:
        return WholeCaptureLimit(
            f"the capture is larger than the limit of {plural(self.limits.max_total_bytes, 'byte')}"
            f" (passed while fetching {url})"
        )

    def _too_much(self) -> WholeCaptureLimit:
        return WholeCaptureLimit(f"the exchanges kept for the WARC (errors' and redirects' bodies too) are more than the"
                          f" capture's limit of {plural(self.limits.max_total_bytes, 'byte')}")

    async def _record(
        self, response: httpx.Response, url: str, started: tuple[datetime.datetime, str | None], body: bytes | None
    ) -> None:
        """Keep the exchange for a WARC; ``body`` ``None``: read it here (a redirect's or an error's, bounded)."""
        assert self.exchanges is not None
        if body is None:
            pieces: list[bytes] = []
            size = 0
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > self.limits.max_resource_bytes:
                    raise LimitError(f"{url} is larger than the limit of {plural(self.limits.max_resource_bytes, 'byte')}")
                if self._kept + size > self.limits.max_total_bytes:
                    raise self._too_much()
                pieces.append(chunk)
            body = b"".join(pieces)
        self._kept += len(body)
        if self._kept > self.limits.max_total_bytes:
            raise self._too_much()
        headers: list[tuple[str, str]] = []
        for name, value in response.headers.multi_items():
            if name == _LOCATION:
                name = "Location"
            elif name.lower() == "transfer-encoding":
                continue  # the body is kept without its transfer coding (httpx removed it)
            headers.append((name, value))
        if response.headers.get("transfer-encoding") is not None and response.headers.get("content-length") is None:
            headers.append(("Content-Length", str(len(body))))
        self.exchanges.append(Exchange(
            url=url,
            date=started[0],
            method=response.request.method,
            request_headers=tuple(response.request.headers.multi_items()),
            http_version=response.http_version,
            status=response.status_code,
            reason=response.reason_phrase,
            response_headers=tuple(headers),
            body=body,
            address=started[1],
        ))
