"""``pdi serve``'s own HTTP/1.1 protocol: an :class:`asyncio.Protocol` fed by ``httptools``' parser, calling an ASGI 3 app.

uvicorn takes the class of its HTTP protocol as ``uvicorn.Config(http=...)``
and makes one for each connection with ``config=``, ``server_state=``,
``app_state=`` and ``_loop=`` (what its ``Server.startup`` passes); the
protocol adds itself to ``server_state.connections`` while it is open (its
``shutdown()`` is called on a graceful shutdown), its ASGI tasks to
``server_state.tasks`` (waited for then), counts each answer in
``server_state.total_requests`` (``--limit-max-requests``) and writes
``server_state.default_headers`` (``Date`` and ``Server``, made anew each
second) at the head of each answer. That, and ``config.loaded_app`` (the app
``Config.load()`` made), is all of uvicorn this module relies on
(:data:`UVICORN_CONTRACT`); the rest is public:

* :class:`asyncio.Protocol` (``connection_made``, ``data_received``,
  ``pause_writing`` and ``resume_writing`` for flow control,
  ``connection_lost``) on uvicorn's loop (uvloop's where installed);
* ``httptools.HttpRequestParser``'s documented callbacks (``on_message_begin``,
  ``on_url``, ``on_header``, ``on_headers_complete``, ``on_body``,
  ``on_message_complete``, ``on_chunk_header``, ``on_chunk_complete``) and
  its ``HttpParserError`` and ``HttpParserUpgrade``;
* the ASGI 3 HTTP spec (version 2.3) for the app: ``scope``, ``receive``
  (``http.request``, ``http.disconnect``) and ``send``
  (``http.response.start``, ``http.response.body``).

What it does is what uvicorn 0.54.0's ``httptools`` protocol does (its
behaviour is the reference, adapted from its ``httptools_impl.py``, whose
licence follows): keep-alive, with a timeout between requests; pipelining,
reading paused while a request is answered and the requests behind it queued;
``Expect: 100-continue`` answered when the app first reads the body;
``HEAD`` answered without a body; ``Transfer-Encoding: chunked`` when an
answer names no ``Content-Length``; ``Connection: close``; a ``500`` when the
app fails before it starts its answer; ``503`` past ``limit_concurrency``;
the ``uvicorn.access`` log line of each answer when that logger has handlers.
It never switches protocols (``pdi serve`` runs with ``ws="none"``): a
request asking to is handed to :meth:`HttpProtocol.upgrade_asked`.

Unlike uvicorn's, it refuses (``400``, and closes) two requests the parser reads on
that RFC 9112 asks a server to refuse: an HTTP/1.0 request with
``Transfer-Encoding`` (§6.1) and a target ``*`` of another method than
``OPTIONS`` (§3.2.4) (:meth:`HttpProtocol.framing_refused`).

Unlike uvicorn's too, the ASGI ``scope`` and the request's :class:`RequestCycle`
are made only for a request that goes to the app (:meth:`HttpProtocol.to_app`):
a subclass that answers a request itself in ``on_headers_complete``
(:class:`pdi.server.process.connection.CachedAnswerProtocol`) makes neither.

Adapted from uvicorn (https://github.com/encode/uvicorn), ``uvicorn/protocols/http/httptools_impl.py`` and
``uvicorn/protocols/http/flow_control.py``, under its BSD 3-Clause licence:

    Copyright © 2017-present, Encode OSS Ltd (https://www.encode.io/). All rights reserved.

    Redistribution and use in source and binary forms, with or without modification, are permitted provided that
    the following conditions are met:

    * Redistributions of source code must retain the above copyright notice, this list of conditions and the
      following disclaimer.
    * Redistributions in binary form must reproduce the above copyright notice, this list of conditions and the
      following disclaimer in the documentation and/or other materials provided with the distribution.
    * Neither the name of the copyright holder nor the names of its contributors may be used to endorse or promote
      products derived from this software without specific prior written permission.

    THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR IMPLIED
    WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A
    PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY
    DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,
    PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
    CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR
    OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH
    DAMAGE.
"""

from __future__ import annotations

import asyncio
import contextvars
import http
import logging
import re
import socket
import urllib.parse
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import httptools

#: An ASGI 3 application: ``await app(scope, receive, send)``.
ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
    Awaitable[None],
]

#: The uvicorn version whose server-to-protocol contract was checked (``pyproject.toml`` pins it).
UVICORN_VERSION: Final = "0.54.0"

#: What of uvicorn this module relies on beyond ``uvicorn.Config``'s and ``uvicorn.Server``'s documented use: the
#: contract between uvicorn's server and the class given as ``Config(http=...)``, by part, and how it is used.
UVICORN_CONTRACT: Final[dict[str, str]] = {
    "uvicorn.server.Server.startup":
        "makes each connection's protocol as http_protocol_class(config=, server_state=, app_state=, _loop=)",
    "uvicorn.server.Server.shutdown":
        "calls shutdown() of each protocol in server_state.connections, then waits for them and for server_state.tasks"
        " (timeout_graceful_shutdown), cancels the tasks left and sends the lifespan its shutdown, when"
        " pdi.server.process.run's stop watch ends a worker with a thread still at work",
    "uvicorn.server.Server.capture_signals":
        "sets handle_exit as the SIGINT and SIGTERM handler before the lifespan starts (pdi.server.process.run chains"
        " its stop watch before it there), and sets the handlers it found again, and raises the signal again, after"
        " the server has stopped",
    "uvicorn.server.Server.on_tick":
        "sets server_state.default_headers anew each second (Date, then Config's headers: Server)",
    "uvicorn.server.ServerState.__init__":
        "connections (the open protocols: each adds itself, and Server.shutdown calls its shutdown()), tasks (the"
        " ASGI tasks, waited for on shutdown), total_requests (counted for --limit-max-requests), default_headers"
        " (Date and Server, made anew each second by Server.on_tick: written at the head of every answer)",
    "uvicorn.config.Config.load":
        "sets loaded_app, the app as uvicorn wraps it, which the protocol calls; the protocol reads the Config"
        " options root_path, asgi_version, limit_concurrency, timeout_keep_alive and reset_contextvars",
}

#: ``\x00``-``\x1f``, DEL and RFC 9110 §5.6.2's delimiters: not in a field name (uvicorn's ``HEADER_RE``).
_BAD_NAME = re.compile(b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]')
#: Controls but HTAB: not in a field value (uvicorn's ``HEADER_VALUE_RE``).
_BAD_VALUE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")
#: Octets of a request's content held before reading is paused (uvicorn's ``HIGH_WATER_LIMIT``).
HIGH_WATER_LIMIT: Final = 65536


def status_line(status: int) -> bytes:
    """An HTTP/1.1 status line, with the reason phrase of RFC 9110 §15 (as uvicorn writes it)."""
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


#: The status line of each status, with Python's ``http.HTTPStatus`` phrase (RFC 9110 §15), as uvicorn writes it.
STATUS_LINE: Final = {status: status_line(status) for status in range(100, 600)}


def local_address(transport: asyncio.BaseTransport) -> tuple[str, int | None] | None:
    """The connection's local address (host, port), or a Unix socket's path and ``None``."""
    sock: socket.socket | None = transport.get_extra_info("socket")
    info = sock.getsockname() if sock is not None else transport.get_extra_info("sockname")
    if isinstance(info, (list, tuple)) and len(info) >= 2:
        return str(info[0]), int(info[1])
    if isinstance(info, str):
        return info, None
    return None


def remote_address(transport: asyncio.BaseTransport) -> tuple[str, int] | None:
    """The client's address (host, port), or ``None`` (a Unix socket's)."""
    sock: socket.socket | None = transport.get_extra_info("socket")
    if sock is not None:
        try:
            info = sock.getpeername()
        except OSError:  # uvloop, on a Unix socket, at times
            return None
    else:
        info = transport.get_extra_info("peername")
    if isinstance(info, (list, tuple)) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None


class FlowControl:
    """Whether reading from and writing to the connection are paused (uvicorn's ``FlowControl``)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self.read_paused = False
        #: Whether reading is paused for good (:meth:`stop_reading`).
        self.read_stopped = False
        self.write_paused = False
        self._writable = asyncio.Event()
        self._writable.set()

    async def drain(self) -> None:
        """Once writing is not paused."""
        await self._writable.wait()

    def pause_reading(self) -> None:
        if not self.read_paused:
            self.read_paused = True
            self._transport.pause_reading()

    def stop_reading(self) -> None:
        """Reading paused for good (a request refused: nothing after it is read, and the connection closes once the
        answers before it are written): :meth:`resume_reading` no longer resumes it, whether the queue's next request
        starts or an app reads its content."""
        self.read_stopped = True
        self.pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused and not self.read_stopped:
            self.read_paused = False
            self._transport.resume_reading()

    def pause_writing(self) -> None:
        if not self.write_paused:
            self.write_paused = True
            self._writable.clear()

    def resume_writing(self) -> None:
        if self.write_paused:
            self.write_paused = False
            self._writable.set()


async def service_unavailable(scope: Any, receive: Any, send: Any) -> None:
    """The app of a request past ``limit_concurrency``: ``503`` (as uvicorn answers it)."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"19"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": b"Service Unavailable", "more_body": False})


class HttpProtocol(asyncio.Protocol):
    """One HTTP/1.1 connection: requests parsed by ``httptools``, each answered by the ASGI app in a task of its own.

    The attributes keep uvicorn's names: ``url`` and ``headers`` (lower-cased
    names, values as sent) are the request's whose head is being read;
    ``cycle`` the :class:`RequestCycle` of the request being answered by the
    app (``None`` before the first), ``pipeline`` the cycles queued behind it.
    """

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        if not config.loaded:
            config.load()
        self.config = config
        self.app: ASGIApp = config.loaded_app
        self.loop = _loop or asyncio.get_event_loop()
        self.logger = logging.getLogger("uvicorn.error")
        self.access_logger = logging.getLogger("uvicorn.access")
        self.access_log = self.access_logger.hasHandlers()
        self.parser = httptools.HttpRequestParser(self)
        # the first of pipelined requests answered even if one behind it says Connection: close
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self.root_path: str = config.root_path
        self.asgi_version: str = config.asgi_version
        self.limit_concurrency: int | None = config.limit_concurrency
        self.app_state = app_state
        self.timeout_keep_alive: float = config.timeout_keep_alive
        #: The keep-alive timeout's timer and when it is due (``None``: disarmed, a request's octets came). Armed
        #: again, it moves the time only: a timer that fires early sets itself again for it (no timer made and
        #: cancelled for each request of a kept-alive connection, as uvicorn's ``call_later`` is).
        self._idle_timer: asyncio.TimerHandle | None = None
        self._idle_due: float | None = None
        self.server_state = server_state
        self.connections: set[Any] = server_state.connections
        self.tasks: set[asyncio.Task[None]] = server_state.tasks
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.flow: FlowControl = None  # type: ignore[assignment]
        self.server: tuple[str, int | None] | None = None
        self.client: tuple[str, int] | None = None
        self.scheme: str | None = None
        self.pipeline: deque[tuple[RequestCycle, ASGIApp]] = deque()
        self.scope: dict[str, Any] = None  # type: ignore[assignment]
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.expect_100_continue = False
        self.cycle: RequestCycle = None  # type: ignore[assignment]

    # asyncio.Protocol's own signature takes a BaseTransport: a connection's is a Transport
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.connections.add(self)
        self.transport = transport
        self.flow = FlowControl(transport)
        self.server = local_address(transport)
        self.client = remote_address(transport)
        self.scheme = "https" if transport.get_extra_info("sslcontext") else "http"

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self)
        cycle = self.cycle
        if cycle is not None:
            if not cycle.response_complete:
                cycle.disconnected = True
            cycle.message_event.set()
        if self.flow is not None:
            self.flow.resume_writing()
        if exc is None:
            self.transport.close()
        self._idle_due = None
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        self.parser = None  # type: ignore[assignment]

    def eof_received(self) -> None:
        pass  # the transport closes the connection (a half-closed client gets no answer after: as uvicorn)

    def keep_alive(self) -> None:
        """An answer is complete and no request waits: the connection is closed if none comes within
        ``timeout_keep_alive`` (:meth:`timeout_keep_alive_handler`), unless octets come first (:meth:`data_received`)."""
        self._idle_due = due = self.loop.time() + self.timeout_keep_alive
        if self._idle_timer is None:
            self._idle_timer = self.loop.call_at(due, self._idle)

    def _idle(self) -> None:
        self._idle_timer = None
        due = self._idle_due
        if due is None:  # octets came since
            return
        if self.loop.time() < due:  # armed again since: on to the later time
            self._idle_timer = self.loop.call_at(due, self._idle)
            return
        self._idle_due = None
        self.timeout_keep_alive_handler()

    def data_received(self, data: bytes) -> None:
        self._idle_due = None  # the keep-alive timeout disarmed
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.parse_failed(exc)
        except httptools.HttpParserUpgrade as exc:
            self.upgrade_asked(exc)

    def parse_failed(self, exc: httptools.HttpParserError) -> None:
        """The parser stopped at the request (``exc``, or the error a callback raised, as its ``__context__``):
        ``400``, and the connection closed."""
        self.send_400_response("Invalid HTTP request received.")

    def upgrade_asked(self, exc: httptools.HttpParserUpgrade) -> None:
        """A request asked to switch protocols (``Connection: Upgrade``): its head was read, ``on_headers_complete``
        called, and the parser stopped at the head's end, ``exc.args[0]`` octets into what it was fed, leaving the
        rest; none is switched to, and the rest is dropped (as uvicorn without a WebSocket library does)."""

    def send_400_response(self, msg: str) -> None:
        content = [STATUS_LINE[400]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend([b"content-type: text/plain; charset=utf-8\r\n",
                        b"content-length: %d\r\n" % len(msg), b"connection: close\r\n", b"\r\n", msg.encode("ascii")])
        self.transport.write(b"".join(content))
        self.transport.close()

    # httptools' callbacks
    def on_message_begin(self) -> None:
        self.url = b""
        self.expect_100_continue = False
        self.headers = []

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.framing_refused() is not None:
            raise _Unreadable  # the parser stops: parse_failed answers 400 and closes (uvicorn reads it on)
        self.to_app()

    def framing_refused(self) -> str | None:
        """Why the request whose head is in must be refused ``400`` though the parser read it (``None``: it need not),
        as RFC 9112 asks and uvicorn does not (each a request smuggling's way in, §11.2, or an error the parser lets by):

        * an HTTP/1.0 request with ``Transfer-Encoding``: §6.1, "A server or client that receives an HTTP/1.0
          message containing a Transfer-Encoding header field MUST treat the message as if the framing is faulty,
          even if a Content-Length is present, and close the connection after processing the message" (an HTTP/1.0
          sender knows no transfer coding, so something between it and here added the field: the content's length
          cannot be known, §6.3 says ``400``; the parser would read the content as chunked);
        * a request target ``*`` of another method than ``OPTIONS``: §3.2.4, "The asterisk-form of request-target is
          only used for a server-wide OPTIONS request", and §3.2 asks an invalid request line to be answered ``400``.
        """
        if self.url == b"*" and self.parser.get_method() != b"OPTIONS":
            return ("the request target '*' is for OPTIONS alone (RFC 9112 §3.2.4): send another method's request to"
                    " a path")
        if self.parser.get_http_version() == "1.0":
            for name, _ in self.headers:
                if name == b"transfer-encoding":
                    return ("an HTTP/1.0 request has no Transfer-Encoding: its content's length cannot be known (RFC"
                            " 9112 §6.1, §6.3); send it as HTTP/1.1, or with Content-Length alone")
        return None

    def request_scope(self) -> dict[str, Any]:
        """The ASGI scope of the request whose head is in (ASGI 2.3's HTTP connection scope); ``headers`` is the
        request's list of fields itself."""
        parser = self.parser
        parsed = httptools.parse_url(self.url)
        raw_path = parsed.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        return {
            "type": "http",
            "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
            "http_version": parser.get_http_version(),
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "root_path": self.root_path,
            "headers": self.headers,
            "state": self.app_state.copy(),
            "method": parser.get_method().decode("ascii"),
            "path": self.root_path + path,
            "raw_path": self.root_path.encode("ascii") + raw_path,
            "query_string": parsed.query or b"",
        }

    def to_app(self) -> None:
        """The request whose head is in goes to the ASGI app: its scope (:attr:`scope`) and cycle (:attr:`cycle`)
        made, and its task started now, or queued behind the one being answered (reading paused meanwhile)."""
        self.scope = scope = self.request_scope()
        if self.limit_concurrency is not None and (
                len(self.connections) >= self.limit_concurrency or len(self.tasks) >= self.limit_concurrency):
            app: ASGIApp = self.busy_app()
            self.logger.warning("Exceeded concurrency limit.")
        else:
            app = self.app
        existing = self.cycle
        self.cycle = RequestCycle(
            scope, self.transport, self.flow, self.logger, self.access_logger, self.access_log,
            self.server_state.default_headers, asyncio.Event(), self.expect_100_continue,
            scope["http_version"] != "1.0" and self.parser.should_keep_alive(), self.on_response_complete,
        )
        if existing is None or existing.response_complete:
            self._start_asgi_task(self.cycle, app)
        else:  # pipelined: queued, and nothing more read until it starts
            self.flow.pause_reading()
            self.pipeline.appendleft((self.cycle, app))

    def busy_app(self) -> ASGIApp:
        """The app of the request whose head is in when it is past ``limit_concurrency``: :func:`service_unavailable`."""
        return service_unavailable

    def _start_asgi_task(self, cycle: RequestCycle, app: ASGIApp) -> None:
        if self.config.reset_contextvars:  # a task of a context of its own (uvicorn's opt-in, cpython#140947)
            task = self.loop.create_task(cycle.run_asgi(app), context=contextvars.Context())
        else:
            task = self.loop.create_task(cycle.run_asgi(app))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_complete:  # answered already: the rest of its content is dropped
            return
        cycle.body += body
        if len(cycle.body) > HIGH_WATER_LIMIT:
            self.flow.pause_reading()
        cycle.message_event.set()

    def on_message_complete(self) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return
        cycle.more_body = False
        cycle.message_event.set()

    def on_response_complete(self) -> None:
        """The app's answer is complete: the next pipelined request starts, or the keep-alive timeout is armed."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._idle_due = None
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self.keep_alive()

    def shutdown(self) -> None:
        """A graceful shutdown (uvicorn's server calls it): closed now if idle, else after the answer under way."""
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()
        else:
            self.cycle.keep_alive = False

    def pause_writing(self) -> None:
        self.flow.pause_writing()

    def resume_writing(self) -> None:
        self.flow.resume_writing()

    def timeout_keep_alive_handler(self) -> None:
        """No request came within the keep-alive timeout after an answer: the connection is closed."""
        if not self.transport.is_closing():
            self.transport.close()


class RequestCycle:
    """One request's ASGI ``receive`` and ``send``, on the connection's transport (uvicorn's ``RequestResponseCycle``).

    ``response_started``, ``response_complete``, ``chunked_encoding`` and
    ``expected_content_length`` say where the answer is (the zero-copy
    extension, :mod:`pdi.server.process.zerocopy`, sends octets past
    :meth:`send` and counts them here); ``disconnected``, that the client went
    away (later sends do nothing, ``receive`` says ``http.disconnect``).
    """

    def __init__(self, scope: dict[str, Any], transport: asyncio.Transport, flow: FlowControl,
                 logger: logging.Logger, access_logger: logging.Logger, access_log: bool,
                 default_headers: list[tuple[bytes, bytes]], message_event: asyncio.Event, expect_100_continue: bool,
                 keep_alive: bool, on_response: Callable[[], None]) -> None:
        self.scope = scope
        self.transport = transport
        self.flow = flow
        self.logger = logger
        self.access_logger = access_logger
        self.access_log = access_log
        self.default_headers = default_headers
        self.message_event = message_event
        self.on_response = on_response
        self.disconnected = False
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = expect_100_continue
        self.body = bytearray()
        self.more_body = True
        self.response_started = False
        self.response_complete = False
        self.chunked_encoding: bool | None = None
        self.expected_content_length = 0

    async def run_asgi(self, app: ASGIApp) -> None:
        """The app called; a failure before its answer started is a ``500``, after it, the connection closed."""
        try:
            result: object = await app(self.scope, self.receive, self.send)  # type: ignore[func-returns-value]
        except BaseException as exc:
            self.logger.error("Exception in ASGI application\n", exc_info=exc)
            if not self.response_started:
                await self.send_500_response()
            else:
                self.transport.close()
        else:
            if result is not None:  # an app that breaks ASGI's own typing
                self.logger.error("ASGI callable should return None, but returned '%s'.", result)
                self.transport.close()
            elif not self.response_started and not self.disconnected:
                self.logger.error("ASGI callable returned without starting response.")
                await self.send_500_response()
            elif not self.response_complete and not self.disconnected:
                self.logger.error("ASGI callable returned without completing response.")
                self.transport.close()
        finally:
            self.on_response = _nothing

    async def send_500_response(self) -> None:
        await self.send({"type": "http.response.start", "status": 500, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"21"), (b"connection", b"close")]})
        await self.send({"type": "http.response.body", "body": b"Internal Server Error", "more_body": False})

    async def send(self, message: dict[str, Any]) -> None:
        """ASGI ``send``: the answer's head (``http.response.start``), then its body (``http.response.body``)."""
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        if not self.response_started:
            if message["type"] != "http.response.start":
                raise RuntimeError(f"Expected ASGI message 'http.response.start', but got '{message['type']}'.")
            self.response_started = True
            self.waiting_for_100_continue = False
            status = message["status"]
            headers = self.default_headers + list(message.get("headers", []))
            if self.access_log:
                self._log_access(status)
            content = [STATUS_LINE[status]]
            closing = False
            for name, value in headers:
                if _BAD_NAME.search(name):
                    raise RuntimeError("Invalid HTTP header name.")
                if _BAD_VALUE.search(value):
                    raise RuntimeError("Invalid HTTP header value.")
                name = name.lower()
                if name == b"content-length" and self.chunked_encoding is None:
                    self.expected_content_length = int(value.decode())
                    self.chunked_encoding = False
                elif name == b"transfer-encoding" and value.lower() == b"chunked":
                    self.expected_content_length = 0
                    self.chunked_encoding = True
                elif name == b"connection" and b"close" in [token.lower().strip() for token in value.split(b",")]:
                    self.keep_alive = False
                    closing = True
                content.extend([name, b": ", value, b"\r\n"])
            if not self.keep_alive and not closing:
                content.append(b"connection: close\r\n")
            if self.chunked_encoding is None and self.scope["method"] != "HEAD" and status not in (204, 304):
                self.chunked_encoding = True  # neither Content-Length nor Transfer-Encoding: chunked
                content.append(b"transfer-encoding: chunked\r\n")
            content.append(b"\r\n")
            self.transport.write(b"".join(content))
        elif not self.response_complete:
            if message["type"] != "http.response.body":
                raise RuntimeError(f"Expected ASGI message 'http.response.body', but got '{message['type']}'.")
            body = message.get("body", b"")
            more_body = message.get("more_body", False)
            if self.scope["method"] == "HEAD":
                self.expected_content_length = 0
            elif self.chunked_encoding:
                parts = [b"%x\r\n" % len(body), body, b"\r\n"] if body else []
                if not more_body:
                    parts.append(b"0\r\n\r\n")
                self.transport.write(b"".join(parts))
            else:
                if len(body) > self.expected_content_length:
                    raise RuntimeError("Response content longer than Content-Length")
                self.expected_content_length -= len(body)
                self.transport.write(body)
            if not more_body:
                if self.expected_content_length != 0:
                    raise RuntimeError("Response content shorter than Content-Length")
                self.response_complete = True
                self.message_event.set()
                if not self.keep_alive:
                    self.transport.close()
                self.on_response()
        else:
            raise RuntimeError(f"Unexpected ASGI message '{message['type']}' sent, after response already completed.")

    def _log_access(self, status: int) -> None:
        scope = self.scope
        client = scope.get("client")
        path = urllib.parse.quote(scope["path"])
        if scope["query_string"]:
            path = f"{path}?{scope['query_string'].decode('ascii')}"
        self.access_logger.info('%s - "%s %s HTTP/%s" %d', f"{client[0]}:{client[1]}" if client else "",
                                scope["method"], path, scope["http_version"], status)

    async def receive(self) -> dict[str, Any]:
        """ASGI ``receive``: the request's content as it comes (``http.request``), then ``http.disconnect``."""
        if self.waiting_for_100_continue and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.waiting_for_100_continue = False
        if not self.disconnected and not self.response_complete:
            self.flow.resume_reading()
            await self.message_event.wait()
            self.message_event.clear()
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        message = {"type": "http.request", "body": bytes(self.body), "more_body": self.more_body}
        self.body = bytearray()
        return message


def _nothing() -> None:
    pass


class _Unreadable(Exception):
    """Raised in the parser's ``on_headers_complete`` to stop it at a request :meth:`HttpProtocol.framing_refused`."""
