"""What the resolver tests share: the archive's series, the text deposited, the names, and running ``pdi serve``."""

from __future__ import annotations

import datetime
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from pdi.archive import Archive, Content

S = "library.example.us"
#: A second series of the shared archive: what some tests deposit, kept out of S's listings.
ELSEWHERE = "elsewhere.example.us"
#: The private series of :func:`sealed_archive`.
SEALED = "court.example.us"
#: Stored CRLF-canonical: "Hello, world.\r\n" is characters 0-14, "Second 𝕚 line.\r\n" 15-30. Its 𝕚 (U+1D55A, a
#: letter outside the BMP: one code point, two UTF-16 units, four UTF-8 octets) is one DejaVu Sans Mono draws, the
#: monospace font the screenshots show it in, not a box: a G clef (U+1D11E) was a box, no installed font having it.
TEXT = "Hello, world.\nSecond 𝕚 line.\n<script>alert(1)</script>\n".encode()


@dataclass(frozen=True)
class Served:
    """The resolver's base URL, its archive and the names deposited in it."""

    url: str
    archive: Archive
    text: str
    page: str
    picture: str
    sound: str
    foreign: str
    versioned: str
    long: str
    capture: str = ""
    replay_url: str = ""
    captured: str = ""


def long_line(i: int) -> str:
    """Line ``i`` of the long text (``Served.long``), its LF included: 160,000 lines, about 2 MB."""
    return f"{i:07d} line of a long text\n"


LONG_LINES = 160_000


class Clock:
    """A settable clock, so deposit times are known to the test."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


#: The document ``Served.versioned`` names (generic): version 1 in HTML and text, version 2 in text.
VERSIONS_ID = "versions"
#: When each version of it was deposited, as the catalog records it (ISO 8601, UTC).
VERSION_TIMES = ("2026-11-22T14:30:00.000000Z", "2026-11-23T09:05:07.000000Z")


def deposit_versions(location: str) -> str:
    """Deposit the two versions of ``VERSIONS_ID`` at the times of ``VERSION_TIMES``; returns its generic name."""
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    with Archive.open(location, clock=clock) as archive:
        first = archive.deposit(
            S, [Content(b"<p>first</p>", "html"), Content(b"first\n", "text")], foreign_id=VERSIONS_ID
        )
        generic = str(first[0]).rsplit(".", 2)[0]
        clock.now = datetime.datetime(2026, 11, 23, 9, 5, 7, tzinfo=datetime.UTC)
        archive.add_version(generic, [Content(b"second\n", "text")])
    return generic


#: The page ``Served.capture`` holds, as it was on the web (a style sheet and an image beside it).
CAPTURED_URL = "http://www.example.com/news/today.html"
CAPTURED_PAGE = (
    b'<!DOCTYPE html>\n<html><head><title>Today</title><link rel="stylesheet" href="style.css"></head>\n'
    b'<body><h1 id="news">News of the day</h1><p>First story: <b>rain</b> expected.</p>'
    b'<p><img src="/img/sun.png" alt="a sun" width="60" height="40"></p>'
    b'<p>Read <a href="https://www.example.com/more">more</a>.</p></body></html>\n'
)
CAPTURED_STYLE = b"body{background:#e8f4ff;font-family:serif} h1{color:#b00000}\n"


def captured_aggregate(png: bytes) -> bytes:
    """The MHTML of the captured page (``CAPTURED_PAGE`` with its style sheet and ``png`` as its image)."""
    from pdi.mhtml.write import Resource, build

    return build(
        Resource(CAPTURED_URL, "text/html", CAPTURED_PAGE, charset="utf-8"),
        [Resource("http://www.example.com/news/style.css", "text/css", CAPTURED_STYLE),
         Resource("http://www.example.com/img/sun.png", "image/png", png)],
    )


def sealed_archive(location: str) -> tuple[Archive, str, str, str]:
    """A new archive at ``location`` with a public text in ``S`` and a text in the private series ``SEALED``:
    the archive (open), the two names and a read token for ``SEALED``."""
    archive = Archive.init(location)
    archive.add_series(S)
    archive.add_series(SEALED)
    public = str(archive.add(S, b"open minutes of the board\n", format="text"))
    sealed = str(archive.add(SEALED, b"sealed minutes of the board\n", format="text"))
    archive.set_series_access(SEALED, "private")
    _, reader = archive.add_token("clerk", role="read", series=[SEALED])
    return archive, public, sealed, reader


#: The first line ``pdi serve`` writes: the ports it listens on.
SERVING = re.compile(r"pdi: serving .* at http://(?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/ \(replay at"
                     r" http://(?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/\)")


def start_serve(
    location: Path | str, *options: str, port: int = 0, drain: bool = False, **popen: Any,
) -> tuple[subprocess.Popen[str], int, str]:
    """``pdi serve`` of ``location`` started: the process, the port it listens on and its first line.

    ``port`` 0 (the default) lets the server take a free port and say which
    (a port probed here and bound there could be taken between the two).
    With ``drain`` the rest of standard error is read by a thread (and
    lost), so that a server that logs much never blocks on a full pipe;
    without, the caller may read it. The caller stops the process.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "pdi", "serve", "--port", str(port), "--archive", str(location), *options],
        stderr=subprocess.PIPE, text=True, **popen,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    if drain:
        reader = threading.Thread(target=process.stderr.read, daemon=True)
        reader.start()
        _DRAINS[process.pid] = reader
    found = SERVING.search(line)  # the line itself, or (--log-format json) its JSON record's message
    if found is None:
        process.kill()
        stop(process)
        raise AssertionError(f"pdi serve did not start: {line!r}")
    return process, int(found[1]), line


#: The threads that drain a started server's standard error, by its process id (stop joins them).
_DRAINS: dict[int, threading.Thread] = {}


def stop(process: subprocess.Popen[str], timeout: float = 30) -> None:
    """Stop a server :func:`start_serve` started (SIGTERM, then wait) and close its pipe: a pipe left open is
    a ResourceWarning, and warnings fail the suite."""
    if process.poll() is None:
        process.terminate()
    process.wait(timeout=timeout)
    reader = _DRAINS.pop(process.pid, None)
    if reader is not None:
        reader.join(timeout=timeout)  # it reads to the end of the pipe, which the process's exit closed
    if process.stderr is not None:
        process.stderr.close()


def wait_answering(process: subprocess.Popen[str], url: str) -> None:
    """Wait (30 s at most) until ``url`` answers."""
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline and process.poll() is None, f"{url} did not answer"
            time.sleep(0.05)


@contextmanager
def serving(location: Path | str, *options: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``pdi serve`` of ``location`` on a free port of 127.0.0.1, answering; stopped (SIGTERM) after."""
    # the replay origin on any free port too: port + 1 may be another test server's
    replay = () if "--replay-port" in options else ("--replay-port", "0")
    process, port, _ = start_serve(location, *replay, *options, start_new_session=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield process, port
    finally:
        stop(process)


#: The URL ``deposit_captures`` captures.
CAPTURES_URL = "https://www.example.org/news"
#: When each capture of it was deposited (as the catalog records it), oldest first: three days,
#: the second captured twice (its versions 1 and 2). All in ``S``, the served archive's one series.
CAPTURE_TIMES = (
    "2025-06-01T08:00:00.000000Z",
    "2026-11-21T10:00:00.000000Z",
    "2026-11-21T18:30:00.000000Z",
    "2026-11-22T12:00:00.000000Z",
)


def deposit_captures(location: str) -> str:
    """Deposit the captures of ``CAPTURES_URL`` at the times of ``CAPTURE_TIMES``; returns the URL."""
    clock = Clock(datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    with Archive.open(location, clock=clock) as archive:
        previous: dict[str, str] = {}
        for n, at in enumerate(CAPTURE_TIMES):
            clock.now = datetime.datetime.fromisoformat(at.replace("Z", "+00:00"))
            content = [Content(f"<h1>News</h1><p>capture {n}</p>".encode(), "html")]
            day = at[:10]
            if day in previous:
                archive.add_version(previous[day], content)
            else:
                previous[day] = str(archive.deposit(S, content, foreign_id=CAPTURES_URL)[0])
    return CAPTURES_URL


@contextmanager
def in_thread(
    app: ASGIApp, sockets: list[socket.socket] | None = None, *, join: float = 10, **config: Any,
) -> Iterator[uvicorn.Server]:
    """uvicorn serving ``app`` in a thread of this process, once it has started; stopped on exit.

    It listens on ``sockets`` (bound and listening), or, without, where
    ``config`` says (``host="127.0.0.1", port=0``: a free port, read from
    ``server.servers[0].sockets``). ``config`` goes to ``uvicorn.Config``
    (``log_level``, ``loop``, ``http``: pdi serve's own protocol).
    Waits up to 30 s for the start; on exit waits ``join`` seconds for the
    thread to end.
    """
    server = uvicorn.Server(uvicorn.Config(app, **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets} if sockets else {}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(timeout=join)


@contextmanager
def on_own_protocol(app: Starlette, *, public: bool = False) -> Iterator[str]:
    """``app`` served in a thread on ``pdi serve``'s own HTTP protocol and uvloop (so with ``sendfile``,
    :mod:`pdi.server.process.zerocopy`), on a free port of 127.0.0.1: its URL. ``public``: the connections also
    make a plain N2R or N2L the cache does not hold (``app.state.public``), as ``pdi serve``'s do."""
    from pdi.server.process.connection import answering_protocol
    from pdi.server.process.run import listening_socket

    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(app, [sock], join=30, log_level="critical", loop="uvloop",
                   http=answering_protocol(10, app.state.cache, None, app.state.public if public else None)):
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def served_port(served: Served, how: str) -> Iterator[int]:
    """The port of ``served``'s archive answered ``how``: ``uvicorn`` (the served fixture's own server, uvicorn's
    protocol), ``own`` (``pdi serve``'s protocol, in a thread), or ``own, public`` (that protocol making plain N2R
    and N2L answers itself, as ``pdi serve``'s connections do)."""
    if how == "uvicorn":
        port = urllib.parse.urlsplit(served.url).port
        assert port is not None
        yield port
        return
    from pdi.server import create_app

    with on_own_protocol(create_app(served.archive.location), public=how == "own, public") as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port


@contextmanager
def with_replay(
    location: str, *, scripts: bool = False, heard: list[tuple[int, str, dict[str, str]]] | None = None,
) -> Iterator[tuple[str, str]]:
    """The resolver and its replay origin on two free ports of one server in a thread, as ``pdi serve`` runs
    them: their URLs. ``scripts`` lets archived scripts run on the replay origin. ``heard`` is given every
    request either port answers: its port, its path and query, and its headers."""
    from pdi.server import ReplaySite, create_app
    from pdi.server.process.origins import ByPort
    from pdi.server.process.run import listening_socket
    from pdi.server.replay.origin import create_replay_app

    sockets = [listening_socket("127.0.0.1", 0), listening_socket("127.0.0.1", 0)]
    try:
        for each in sockets:
            each.listen()
        port, replay_port = (each.getsockname()[1] for each in sockets)
        resolver = create_app(location, replay=ReplaySite(port=replay_port, scripts=scripts))
        replay = create_replay_app(location, resolver_origin=f"http://127.0.0.1:{port}", scripts=scripts)
        served: ASGIApp = ByPort(resolver, replay, replay_port)
        if heard is not None:
            served = _hearing(served, heard)
        with in_thread(served, sockets, log_level="warning"):
            yield f"http://127.0.0.1:{port}", f"http://127.0.0.1:{replay_port}"
    finally:
        for each in sockets:
            each.close()


def _hearing(app: ASGIApp, heard: list[tuple[int, str, dict[str, str]]]) -> ASGIApp:
    """``app``, noting each HTTP or WebSocket request in ``heard`` before it answers it."""

    async def hearing(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            query = scope.get("query_string", b"").decode("latin-1")
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            heard.append((scope["server"][1], scope["path"] + (f"?{query}" if query else ""), headers))
        await app(scope, receive, send)

    return hearing


# --- raw HTTP/1.1 on one kept-alive connection (the answering protocol's tests) ---------------

def read_response(conn: socket.socket, buffered: bytearray, *, head_only: bool = False) -> bytes:
    """The next response's bytes (its length from Content-Length; none for HEAD and 304), Date left out."""
    while b"\r\n\r\n" not in buffered:
        piece = conn.recv(65536)
        assert piece, "the connection closed"
        buffered += piece
    end = buffered.index(b"\r\n\r\n") + 4
    head = bytes(buffered[:end])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if head_only or head.startswith(b"HTTP/1.1 304"):
        length = 0
    while len(buffered) < end + length:
        piece = conn.recv(65536)
        assert piece, "the connection closed"
        buffered += piece
    response = bytes(buffered[: end + length])
    del buffered[: end + length]
    return b"\r\n".join(line for line in response.split(b"\r\n") if not line.lower().startswith(b"date:"))


def pixel_bomb(width: int, height: int) -> bytes:
    """A PNG of a few dozen octets whose header claims ``width`` × ``height`` pixels (PNG §11.2.2: IHDR, one
    IDAT, IEND; each chunk's CRC-32): what Pillow refuses to open past twice its ``MAX_IMAGE_PIXELS``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 1000)) + chunk(b"IEND", b""))


def until_closed(port: int, request: bytes) -> bytes:
    """Send ``request`` and read what comes back until the server closes the connection (a refusal closes it; a
    reset after the answer ends it too)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        try:
            while piece := conn.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    return answer


def exchange(port: int, requests: list[bytes]) -> list[bytes]:
    """Each request and its response in turn, on one kept-alive connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        buffered = bytearray()
        answers = []
        for request in requests:
            conn.sendall(request)
            answers.append(read_response(conn, buffered, head_only=request.startswith(b"HEAD")))
        return answers


def h11_answers(raw: bytes, methods: list[str]) -> tuple[list[tuple[int, dict[str, str], bytes]], bool]:
    """``raw``, the octets a server wrote on one connection, read by h11 (an HTTP/1.1 parser independent of the
    server's) as the answers to requests of ``methods`` in turn: each answer's status, fields (lower-cased names;
    a field given twice is an error here) and body; and whether octets were left over after them. An answer that is
    not well-formed HTTP/1.1 raises h11's error; fewer answers than requests means the connection ended first."""
    import h11

    reader = h11.Connection(h11.CLIENT)
    reader.receive_data(raw)
    ended = False
    answers: list[tuple[int, dict[str, str], bytes]] = []
    for method in methods:
        reader.send(h11.Request(method=method, target="/", headers=[("Host", "a")]))
        reader.send(h11.EndOfMessage())
        status, fields, body = 0, {}, b""
        while True:
            event = reader.next_event()
            if event is h11.NEED_DATA:
                if not status or ended:
                    return answers, False  # the connection ended before this answer, or within it
                reader.receive_data(b"")  # the connection's end, which may end a body
                ended = True
            elif isinstance(event, h11.Response):
                status = event.status_code
                for name, value in event.headers:
                    assert name.decode() not in fields, f"{name!r} twice in an answer"
                    fields[name.decode()] = value.decode("latin-1")
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
        answers.append((status, fields, body))
        if reader.their_state is not h11.DONE or reader.our_state is not h11.DONE:
            break
        reader.start_next_cycle()
    return answers, bool(reader.trailing_data[0])


class WriteArchive:
    """A new archive for a write test: its series, a token that deposits in each (``tokens[series]``, the first
    also ``token``), and a Starlette ``TestClient`` of its app. :meth:`snapshot` is what a refused write must
    leave as it was."""

    def __init__(self, location: Path, series: tuple[str, ...] = (S,), names: tuple[str, ...] = ("depositor",)) -> None:
        from starlette.testclient import TestClient

        from pdi.server import create_app

        self.location = location
        self.archive = Archive.init(location)
        self.tokens: dict[str, str] = {}
        for one, name in zip(series, names, strict=True):
            self.archive.add_series(one)
            self.tokens[one] = self.archive.add_token(name, role="deposit", series=[one])[1]
        self.token = self.tokens[series[0]]
        self.client = TestClient(create_app(str(location), archive=self.archive))

    def snapshot(self, files: bool = False) -> object:
        """The catalog's representations, blobs and audit log; with ``files``, every file of the archive's
        directory but the catalog's own."""
        store = self.archive.store
        kept = (list(store.iter_representations()), sorted(store.blob_names()),
                [(e.action, e.subject) for e in store.audit_log()])
        if not files:
            return kept
        return (*kept, sorted(str(p.relative_to(self.location)) for p in self.location.rglob("*")
                              if p.is_file() and not p.name.startswith("catalog.sqlite")))

    def close(self) -> None:
        self.archive.close()
