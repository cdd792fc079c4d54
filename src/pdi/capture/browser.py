"""Capturing a page with Debian's Chromium (an edge).

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe``
(messages are JSON objects separated by NUL bytes on file descriptors 3 and 4):
no port is opened, nothing else on the machine can talk to the browser, and
no WebSocket library is needed. The browser starts with a fresh, temporary
profile and without background networking, so a capture fetches only what the
page asks for.

Every request the page makes passes through ``Fetch.requestPaused``: its host
is resolved and checked like the HTTP fetcher's (no private, loopback or
link-local addresses unless ``allow_private``); refused requests fail with
``AccessDenied`` and are recorded. ``Page.captureSnapshot`` then returns
Chromium's own MHTML serialization of the page as it stands after the load
event and ``settle`` more seconds (for pages that build themselves with
JavaScript).
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pdi._wording import plural
from pdi.capture.fetch import check_address, check_url
from pdi.errors import LimitError, NotFoundError, PDIError, UnsupportedError

__all__ = ["BrowserCapture", "capture_with_browser", "chromium_path"]

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--remote-debugging-pipe",
)


@dataclass(frozen=True)
class BrowserCapture:
    """What Chromium wrote: the MHTML bytes, the URL it ended on, requests refused."""

    mhtml: bytes
    url: str
    final_url: str
    refused: tuple[str, ...]


def chromium_path() -> str:
    """The Chromium binary: ``$PDI_CHROMIUM``, else ``chromium`` on the PATH."""
    found = os.environ.get("PDI_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise UnsupportedError("Chromium is not installed (scripts/bootstrap installs Debian's chromium)")
    return found


class Pipe:
    """The DevTools protocol over two pipes: send commands, collect events."""

    def __init__(self, to_browser: int, from_browser: int, max_bytes: int | None = None) -> None:
        self._out = to_browser
        self._in = from_browser
        self._max_bytes = max_bytes
        # A message carries the MHTML JSON-escaped: at most twice as long, and a little more.
        self._max = None if max_bytes is None else 2 * max_bytes + 65536
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        payload = json.dumps(message).encode("utf-8") + b"\0"
        while payload:
            written = os.write(self._out, payload)
            payload = payload[written:]
        return self._next_id

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or ``None`` when ``deadline`` passes first."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise NotFoundError("Chromium closed the DevTools pipe (did it crash?)")
            self._buffer += chunk
            if self._max is not None and self._max_bytes is not None and len(self._buffer) > self._max:
                raise LimitError(
                    f"Chromium sent more than {plural(self._max, 'byte')} at once: the MHTML cannot fit the limit of "
                    f"{plural(self._max_bytes, 'byte')}"
                )
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None, session: str | None, deadline: float) -> dict[str, Any]:
        """Send a command and wait for its answer, keeping the events that arrive meanwhile."""
        ident = self.send(method, params, session)
        while True:
            message = self.receive(deadline)
            if message is None:
                raise LimitError(f"Chromium did not answer {method} in time")
            if message.get("id") == ident:
                if "error" in message:
                    raise UnsupportedError(f"Chromium refused {method}: {message['error'].get('message')}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)


def _host_allowed(url: str, allow_private: bool) -> bool:
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # "http://[::1": not a URL
        return False
    if parts.scheme in ("data", "blob", "about"):
        return True
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return False
    host = parts.hostname
    if not host:
        return False
    try:
        port = parts.port  # ValueError when it is not a port number
        infos = socket.getaddrinfo(host, port or 80, type=socket.SOCK_STREAM)
    except (OSError, ValueError, UnicodeError):
        return False
    try:
        for info in infos:
            check_address(host, str(info[4][0]), allow_private=allow_private)
    except PDIError:
        return False
    return True


def _above_four(fd: int) -> int:
    if fd > 4:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 5)
    os.close(fd)
    return moved


def capture_with_browser(
    url: str,
    *,
    allow_private: bool = False,
    timeout: float = 60.0,
    settle: float = 1.0,
    chromium: str | None = None,
    max_bytes: int | None = None,
) -> BrowserCapture:
    """Load ``url`` in headless Chromium and return its ``Page.captureSnapshot`` MHTML.

    ``max_bytes`` bounds the MHTML: a larger one is a :class:`LimitError`, raised while
    it arrives (a DevTools message may carry at most twice that, for JSON escapes), so
    no more than that is ever held.
    """
    host = check_url(url).host  # http or https, a host, a port that is one
    if not _host_allowed(url, allow_private):
        raise UnsupportedError(
            f"refusing to capture {url}: {host} is not a public address or cannot be resolved "
            "(pass --allow-private for private, loopback or link-local hosts)"
        )
    deadline = time.monotonic() + timeout
    with devtools(chromium, max_bytes) as pipe:
        return _drive(pipe, url, allow_private=allow_private, deadline=deadline, settle=settle, max_bytes=max_bytes)


@contextmanager
def devtools(chromium: str | None = None, max_bytes: int | None = None) -> Iterator[Pipe]:
    """A headless Chromium with a new empty profile, driven over the DevTools pipe; closed on exit.

    Chromium reads commands on its descriptor 3 and answers on 4
    (``--remote-debugging-pipe``): no port is opened. ``max_bytes`` bounds one
    message (see :class:`Pipe`).
    """
    binary = chromium or chromium_path()
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    # The child ends must not already sit on 3 or 4, where they are about to be moved.
    to_browser_r = _above_four(to_browser_r)
    from_browser_w = _above_four(from_browser_w)
    with tempfile.TemporaryDirectory(prefix="pdi-chromium-") as profile:
        args = [*_FLAGS, f"--user-data-dir={profile}", "about:blank"]
        # bash only moves the two pipe ends to descriptors 3 and 4, then becomes Chromium.
        script = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        process = subprocess.Popen(
            [shutil.which("bash") or "/bin/bash", "-c", script, binary, *args],
            pass_fds=(to_browser_r, from_browser_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        pipe = Pipe(to_browser_w, from_browser_r, max_bytes)
        try:
            yield pipe
        finally:
            try:
                pipe.send("Browser.close")
            except OSError:
                pass
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            os.close(to_browser_w)
            os.close(from_browser_r)


def _drive(
    pipe: Pipe, url: str, *, allow_private: bool, deadline: float, settle: float, max_bytes: int | None
) -> BrowserCapture:
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
    pipe.call("Page.enable", None, session, deadline)
    pipe.call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}, session, deadline)
    refused: list[str] = []
    loaded = False
    navigate_id = pipe.send("Page.navigate", {"url": url}, session)
    final_url = url
    settle_until: float | None = None
    while True:
        now = time.monotonic()
        if settle_until is not None and now >= settle_until:
            break
        wait_until = min(deadline, settle_until) if settle_until is not None else deadline
        if pipe.events:
            message: dict[str, Any] | None = pipe.events.pop(0)
        else:
            message = pipe.receive(wait_until)
        if message is None:
            if settle_until is not None:
                break
            raise LimitError(f"{url} did not finish loading in time")
        if message.get("id") == navigate_id:
            result = message.get("result", {})
            if "errorText" in result:
                raise NotFoundError(f"Chromium could not load {url}: {result['errorText']}")
            continue
        method = message.get("method")
        params = message.get("params", {})
        if method == "Fetch.requestPaused":
            request_url = params["request"]["url"]
            if _host_allowed(request_url, allow_private):
                pipe.send("Fetch.continueRequest", {"requestId": params["requestId"]}, session)
            else:
                refused.append(request_url)
                pipe.send("Fetch.failRequest", {"requestId": params["requestId"], "errorReason": "AccessDenied"}, session)
        elif method == "Page.frameNavigated" and "parentId" not in params.get("frame", {}):
            final_url = params["frame"].get("url", final_url)
        elif method == "Page.loadEventFired" and not loaded:
            loaded = True
            settle_until = time.monotonic() + settle
    if not loaded:
        raise LimitError(f"{url} did not finish loading in time")
    snapshot = pipe.call("Page.captureSnapshot", {"format": "mhtml"}, session, deadline)
    mhtml = str(snapshot["data"]).encode("utf-8")
    if max_bytes is not None and len(mhtml) > max_bytes:
        raise LimitError(f"Chromium wrote {plural(len(mhtml), 'byte')} of MHTML, more than the limit of {max_bytes}")
    return BrowserCapture(mhtml=mhtml, url=url, final_url=final_url, refused=tuple(refused))
