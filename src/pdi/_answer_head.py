"""The head of another server's answer (its status line and header fields) read within a time, at whatever pace
it comes: an httpx client for strangers' servers (a mirror's origin and peers, a registry, a TimeGate, a
time-stamping authority).

httpx bounds each read of a connection (its ``timeout``), never a whole
head: a server that sends one octet of its header section just inside
each read's timeout holds the request for as long as the head may grow
(httpcore reads up to 100 KiB of it: at 29 s an octet, a month). What is
read after the head is bounded by its reader (:class:`pdi.network.peers.Pace`,
a deadline); the head, here. A request's ``request`` event hook (httpx's,
run in the thread that sends it, before it is sent) sets the time its
head must be read by; its ``response`` hook, run once the head is read
(before any of the body), clears it; each read of the connection meanwhile
waits no longer than what is left (:class:`_Stream`), and past it the
request fails as httpx's :class:`httpx.ReadTimeout`, saying so. A client
made ``whole`` (a fetch that is bounded in all: a registry, a key set) bounds
every read of its connections, a body's too, and every connection (its
look-up included), by its ``by``: what is left of the fetch's time, not each
read's own timeout, so a body sent an octet just inside each read's timeout
ends at the deadline, as :class:`httpx.ReadTimeout` saying :data:`LATE`.

httpx does not take a network backend as an argument, so its transport is
given a connection pool over :class:`_Backend`, with the arguments httpx would
pass (as :mod:`pdi.capture.fetch` does), in place of the one it would make:
:class:`_TwoPools`, which makes its TLS context at the first ``https://``
request, never for a client that asks only ``http://`` addresses. An answer
through a proxy the environment names is the proxy's to bound.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["HTTPX_INTERNALS", "HTTPX_VERSION", "LATE", "client"]

#: The httpx release whose private parts this module and :mod:`pdi.capture.fetch` rely on (``pyproject.toml``
#: pins it; ``tests/test_httpx_internals.py`` checks each part against that release's wheel).
HTTPX_VERSION = "0.28.1"
#: Each private part of httpx relied on, and what relies on it.
HTTPX_INTERNALS = {
    "httpx._transports.default.HTTPTransport.__init__": (
        "sets nothing but the connection pool it keeps as _pool (made over a TLS context it makes at once):"
        " client() makes a transport without calling it and sets _pool itself, to a _TwoPools over _Backend (the"
        " arguments httpx would pass, and the pool's public ones), whose TLS context is made when first needed"),
    "httpx._transports.default.HTTPTransport.handle_request": (
        "sends each request through self._pool: client()'s pool, so each read of a head is bounded"),
    "httpx._transports.default.AsyncHTTPTransport.__init__": (
        "makes the pool pdi.capture.fetch._GuardedTransport replaces by one over its guarded backend"),
    "httpx._transports.default.AsyncHTTPTransport.handle_async_request": (
        "sends each request through self._pool: capture's guarded pool, so no connection reaches a private"
        " address"),
}

log = logging.getLogger("pdi")

#: What a read past a ``whole`` client's deadline raises (:class:`httpx.ReadTimeout`, its message).
LATE = "the answer was not all read by its deadline"

_pending = threading.local()  # .by: the time.monotonic() the head being read must be read by; .seconds: its bound


class _Stream(httpcore.NetworkStream):
    """A connection whose reads wait no longer than what is left of the head's time, while a head is read, and
    (given ``until``, a :func:`time.monotonic` time) no longer than what is left until then, whatever is read."""

    def __init__(self, inner: httpcore.NetworkStream, until: float | None = None) -> None:
        self._inner = inner
        self._until = until

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        by: float | None = getattr(_pending, "by", None)
        if by is None:
            if self._until is None:
                return self._inner.read(max_bytes, timeout)
            return self._read_until(max_bytes, timeout, self._until)
        left = by - time.monotonic()
        too_long = f"the head of the answer took more than {_pending.seconds:g} s (its status line and header fields)"
        if left <= 0:
            raise httpcore.ReadTimeout(too_long)
        try:
            return self._inner.read(max_bytes, left if timeout is None else min(timeout, left))
        except httpcore.ReadTimeout:
            if time.monotonic() >= by:
                raise httpcore.ReadTimeout(too_long) from None
            raise

    def _read_until(self, max_bytes: int, timeout: float | None, until: float) -> bytes:
        """A read of a ``whole`` client's connection past its head: within what is left until ``until``."""
        left = until - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout(LATE)
        wait = left if timeout is None else min(timeout, left)
        try:
            return self._inner.read(max_bytes, wait)
        except httpcore.ReadTimeout:
            if wait == left:  # the deadline's wait, not the read's own timeout, ran out
                raise httpcore.ReadTimeout(LATE) from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._until)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own connections, each a :class:`_Stream`, to the addresses the host name resolves to within the
    connection's time (:func:`pdi._lookups.look_up_within`); with ``public_only``, made only to a public address
    (:mod:`pdi._public_connect`), else :class:`httpcore.ConnectError`. Given ``until`` (a :func:`time.monotonic`
    time), each connection is made (its look-up included) and read (:class:`_Stream`) within what is left until
    then."""

    def __init__(self, public_only: bool = False, until: float | None = None) -> None:
        self._inner = httpcore.SyncBackend()
        self._public_only = public_only
        self._until = until

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        from pdi._public_connect import LOOKUP_SECONDS, NotPublicError, addresses_within

        seconds = LOOKUP_SECONDS if timeout is None else timeout
        if self._until is not None:
            left = self._until - time.monotonic()
            if left <= 0:
                raise httpcore.ConnectTimeout(LATE)
            seconds = timeout = min(seconds, left)
        try:  # looked up here, within the connection's time (getaddrinfo itself waits as long as name servers do)
            addresses = addresses_within(host, port, seconds, public_only=self._public_only)
        except NotPublicError as exc:
            log.warning("pdi: not connecting to %s: %s", host[:200], exc)
            raise httpcore.ConnectError(f"not connecting to {host}: {exc}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        last: Exception = httpcore.ConnectError(f"{host} resolves to no address")
        for address in addresses:  # the address checked, not the name again: it may resolve elsewhere by now
            try:
                return _Stream(self._inner.connect_tcp(address, port, timeout, local_address, socket_options),
                               self._until)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options), self._until)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _TwoPools(httpcore.ConnectionPool):
    """httpcore's pool for ``http://`` requests, and for ``https://`` ones a second pool with the same arguments,
    made at the first such request with httpx's TLS context (the trusted certificates of httpx's ``certifi``, or
    of ``$SSL_CERT_FILE`` or ``$SSL_CERT_DIR``): loading them costs some 20 to 40 ms of CPU, which a client that
    asks only ``http://`` addresses (a mirror of an origin on the same network) never spends. Each pool keeps to
    the limits given (so a client asking both schemes may hold twice as many connections)."""

    def __init__(self, **arguments: Any) -> None:
        super().__init__(**arguments)  # no ssl_context: none of its connections is https://
        self._pdi_arguments = arguments
        self._pdi_secure: httpcore.ConnectionPool | None = None
        self._pdi_lock = threading.Lock()

    def handle_request(self, request: httpcore.Request) -> httpcore.Response:
        if request.url.scheme == b"https":
            return self._secure().handle_request(request)
        return super().handle_request(request)

    def _secure(self) -> httpcore.ConnectionPool:
        with self._pdi_lock:
            if self._pdi_secure is None:
                self._pdi_secure = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(),
                                                           **self._pdi_arguments)
            return self._pdi_secure

    def close(self) -> None:
        try:
            super().close()
        finally:
            with self._pdi_lock:
                if self._pdi_secure is not None:
                    self._pdi_secure.close()


def client(head_seconds: float, *, by: float | None = None, limits: httpx.Limits | None = None,
           public_only: bool = False, whole: bool = False, **options: Any) -> httpx.Client:
    """An :class:`httpx.Client` (``options`` as httpx takes them) whose every answer's head must be read within
    ``head_seconds`` of its request being sent, and by ``by`` (a :func:`time.monotonic` time: the redirects a
    client follows are requests of their own), else :class:`httpx.ReadTimeout`. With ``public_only`` (a
    stranger's host name), it connects only to public addresses, else :class:`httpx.ConnectError`, and never
    through a proxy the environment names (which would connect wherever it was sent). With ``whole``, every
    connection and every read (a body's too) is within what is left until ``by``, past it
    :class:`httpx.ReadTimeout` (or :class:`httpx.ConnectTimeout`) saying :data:`LATE`."""

    def sent(request: httpx.Request) -> None:
        due = time.monotonic() + head_seconds
        _pending.by, _pending.seconds = due if by is None else min(due, by), head_seconds

    def headed(response: httpx.Response) -> None:
        _pending.by = None

    limits = limits or httpx.Limits()
    # the transport made without its __init__, which would make its own pool over a TLS context made at once
    # (HTTPX_INTERNALS), and given ours, whose context is made at its first https:// connection, if any
    transport = httpx.HTTPTransport.__new__(httpx.HTTPTransport)
    transport._pool = _TwoPools(  # httpx's own pool, replaced: see the module's docstring
        max_connections=limits.max_connections, max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry, network_backend=_Backend(public_only, by if whole else None))
    if public_only:
        options["trust_env"] = False
    return httpx.Client(transport=transport, limits=limits, event_hooks={"request": [sent], "response": [headed]},
                        **options)
