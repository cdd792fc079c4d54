"""A page of another origin reads the resolver's answers in Debian's Chromium (CORS), and does not once it is off.

The page is served by a plain :mod:`http.server` on another loopback port (another origin); its script
``fetch``es from the resolver (``pdi serve``'s own HTTP protocol, in a thread): N2R with ``Accept-Datetime``
(not a CORS-safelisted field: Chromium preflights it), N2R with ``Range: bytes=0-3`` (safelisted today: no
preflight; asked first, so that no preflight answer Chromium keeps could stand for its own), N2L (a ``302``,
followed), reading ``Link``, ``ETag``, ``Memento-Datetime`` and ``Content-Range``;
and tries a write, which Chromium refuses. What Chromium sent is what the resolver heard. With ``--cors-origin
none`` every such ``fetch`` fails (a ``TypeError``), as it did before the resolver said CORS.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from server_helpers import S, in_thread
from starlette.types import Receive, Scope, Send

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server import create_app
from pdi.server.http.cors import CrossOrigin

TEXT = b"Hello from the archive.\n"

#: The page's script: each fetch's status and what it read of the answer, or the error it threw.
READS = """(async () => {
  const base = %s, name = %s, out = {};
  async function attempt(key, made) {
    try { out[key] = await made(); } catch (e) { out[key] = 'error: ' + e.name; }
  }
  await attempt('range', async () => {
    const a = await fetch(base + '/uri-res/N2R?' + name, {headers: {Range: 'bytes=0-3'}, cache: 'no-store'});
    return [a.status, a.headers.get('content-range'), a.headers.get('etag'), await a.text()];
  });
  await attempt('n2r', async () => {
    const a = await fetch(base + '/uri-res/N2R?' + name, {headers: {'Accept-Datetime': 'Thu, 01 Jan 2099 00:00:00 GMT'}});
    return [a.status, a.headers.get('link'), a.headers.get('etag'), a.headers.get('memento-datetime'), await a.text()];
  });
  await attempt('n2l', async () => {
    const a = await fetch(base + '/uri-res/N2L?' + name, {cache: 'no-store'});
    return [a.status, a.redirected, a.url, a.headers.get('etag'), await a.text()];
  });
  await attempt('deposit', async () => {
    const a = await fetch(base + '/api/deposit', {method: 'POST', headers: {Authorization: 'Bearer nothing'}, body: 'x'});
    return [a.status];
  });
  return JSON.stringify(out);
})()"""


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>a reading app</title><p>elsewhere"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _page_origin() -> Iterator[str]:
    """A page of another origin: a plain http.server on a free loopback port, its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Heard:
    """The resolver's app, noting each request's method, path and fields (as the app is asked: a request the
    connection answers itself from the cache is not noted)."""

    def __init__(self, app: Any) -> None:
        self.app, self.state, self.heard = app, app.state, []  # type: ignore[var-annotated]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            fields = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            self.heard.append((scope["method"], scope["path"], fields))
        await self.app(scope, receive, send)


@contextmanager
def _resolver(location: Path, archive: Archive, cors: CrossOrigin) -> Iterator[tuple[str, _Heard]]:
    from pdi.server.process.connection import answering_protocol
    from pdi.server.process.run import listening_socket

    app = create_app(str(location), archive=archive, cors=cors)
    heard = _Heard(app)
    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(heard, [sock], join=30, log_level="critical", loop="uvloop",
                   http=answering_protocol(10, app.state.cache, None, app.state.public)):
        yield f"http://localhost:{sock.getsockname()[1]}", heard


@pytest.fixture(scope="module")
def deposited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Archive, str]]:
    location = tmp_path_factory.mktemp("cors-chromium") / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    name = str(archive.add(S, TEXT, format="text"))
    try:
        yield location, archive, name
    finally:
        archive.close()


def _read_in_chromium(page: str, base: str, name: str) -> dict[str, Any]:
    with devtools() as pipe:
        deadline = time.monotonic() + 90
        session = new_tab(pipe, "Page", deadline=deadline)
        navigate_and_wait_for_load(pipe, session, page + "/", deadline)
        answer = pipe.call("Runtime.evaluate", {"expression": READS % (json.dumps(base), json.dumps(name)),
                                                "awaitPromise": True, "returnByValue": True}, session, deadline)
        assert "exceptionDetails" not in answer, answer
        got: dict[str, Any] = json.loads(answer["result"]["value"])
        return got


def test_a_page_of_another_origin_reads_the_resolver_in_chromium(deposited: tuple[Path, Archive, str]) -> None:
    location, archive, name = deposited
    tag = '"' + archive.resolve(name).sha256 + '"'
    with _page_origin() as page, _resolver(location, archive, CrossOrigin()) as (base, heard):
        got = _read_in_chromium(page, base, name)
    status, link, etag, dated, body = got["n2r"]
    assert status == 200 and body == TEXT.decode() and etag == tag and dated, got
    assert f'<{name}>; rel="canonical"' in link and 'rel="timegate"' in link, link
    assert got["range"] == [206, f"bytes 0-3/{len(TEXT)}", tag, TEXT[:4].decode()], got
    status, redirected, url, etag, body = got["n2l"]
    assert (status, redirected, etag, body) == (200, True, tag, TEXT.decode()), got
    assert url == f"{base}/uri-res/N2R?{name}", got
    assert got["deposit"] == "error: TypeError", got  # the write API's preflight refused: never sent
    # what Chromium sent: a preflight for Accept-Datetime, naming it, none for the Range; every request with Origin
    preflights = [(path, fields) for method, path, fields in heard.heard if method == "OPTIONS"]
    assert [(path, fields.get("access-control-request-method"), fields.get("access-control-request-headers"))
            for path, fields in preflights] == [("/uri-res/N2R", "GET", "accept-datetime"),
                                                ("/api/deposit", "POST", "authorization")], preflights
    # (the Range asked first: no preflight answer kept by Chromium could stand for one it needed)
    assert not any(method == "POST" for method, _, _ in heard.heard)
    assert all(fields["origin"] == page for _, _, fields in heard.heard), heard.heard


def test_chromium_reads_nothing_with_cors_off(deposited: tuple[Path, Archive, str]) -> None:
    location, archive, name = deposited
    with _page_origin() as page, _resolver(location, archive, CrossOrigin.parse(["none"])) as (base, _):
        got = _read_in_chromium(page, base, name)
    assert got == {key: "error: TypeError" for key in ("n2r", "range", "n2l", "deposit")}, got


#: A fetch with a field value holding a control character (Fetch's header value forbids only NUL, CR and LF, so
#: Chromium sends it, after a preflight naming the field), which pdi serve's parser refuses: its status and body's
#: problem status, or the error it threw.
CONTROL = """(async () => {
  try {
    const a = await fetch(%s + '/api/series', {headers: {'X-Request-Id': 'a\\x01b'}, cache: 'no-store'});
    return JSON.stringify([a.status, (await a.json()).status]);
  } catch (e) { return JSON.stringify('error: ' + e.name); }
})()"""


@pytest.mark.parametrize("listed", [False, True])
def test_chromium_reads_the_400_of_a_field_pdi_serve_cannot_read(deposited: tuple[Path, Archive, str],
                                                                  listed: bool) -> None:
    """Chromium sends the field before ``Origin``; ``pdi serve``'s parser refuses the head there, and its ``400``
    names the origin all the same (found in review, 2026-12-01: with ``--cors-origin`` listing the page's origin,
    the refusal carried only ``Vary: Origin``, and the script's fetch failed, a ``TypeError``)."""
    location, archive, _name = deposited
    with _page_origin() as page, _resolver(location, archive, CrossOrigin.parse([page] if listed else ["*"])) as (
            base, heard), devtools() as pipe:
        deadline = time.monotonic() + 90
        session = new_tab(pipe, "Page", deadline=deadline)
        navigate_and_wait_for_load(pipe, session, page + "/", deadline)
        answer = pipe.call("Runtime.evaluate", {"expression": CONTROL % json.dumps(base), "awaitPromise": True,
                                                "returnByValue": True}, session, deadline)
    assert json.loads(answer["result"]["value"]) == [400, 400], answer
    # the preflight reached the app; the request itself was refused before it
    assert [(method, path) for method, path, _ in heard.heard] == [("OPTIONS", "/api/series")], heard.heard
