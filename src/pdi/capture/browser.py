"""Capturing a page with Debian's Chromium (an edge).

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe``
(messages are JSON objects separated by NUL bytes on file descriptors 3 and 4):
no port is opened, nothing else on the machine can talk to the browser, and
no WebSocket library is needed. The browser starts with a fresh, temporary
profile and without background networking.

Every connection Chromium makes goes through pdi's own forward proxy
(:mod:`pdi.capture.proxy`), which resolves each host itself, checks every
address like the HTTP fetcher does (no private, loopback or link-local
addresses unless ``allow_private``), connects only to an address it checked,
and records what it refused. So the check covers every request, of every
kind, from every frame and worker: the page's, a cross-site frame's (in a
process of its own), a dedicated, shared or service worker's, WebSockets,
redirects. Chromium is told to send everything there (``--proxy-server`` with
``--proxy-bypass-list=<-loopback>``, so that loopback hosts go through it
too), to resolve no name itself (``--host-resolver-rules``: every name but
the proxy's address is not found), to use no QUIC (``--disable-quic``;
WebTransport is refused when a proxy is set) and to send WebRTC only through
the proxy (``--webrtc-ip-handling-policy=disable_non_proxied_udp``: no UDP,
STUN included, since the proxy carries none).

Nothing is fetched or looked up that the page did not cause: Chromium's own
services are switched off by flags where a flag exists (:data:`_FLAGS`), and
the proxy resolves only hosts the page asked for (:class:`pdi.capture.proxy.PageHosts`):
every target of the page (the tab, frames in processes of their own, dedicated,
shared and service workers) is attached before it runs, with the Network domain
on, and each request or WebSocket it announces names a host the proxy may look
up. Chromium runs in its sandbox, as an unprivileged user when pdi is root
(:func:`devtools`).

After the load event and ``settle`` more seconds (for pages that build
themselves with JavaScript), pdi writes the MHTML itself
(:mod:`pdi.capture.rendered`), as ``pdi mhtml pack`` writes a folder: each
frame's document as it stands after its scripts, serialized by the browser, and
the resources the page loaded, with the bytes the proxy saw pass (plain http)
or Chromium kept (https). Chromium's own ``Page.captureSnapshot`` MHTML was not
kept: Chromium cannot fully reopen it (4 of the 9 pages of
tests/capture/nine_pages.py rendered otherwise than live).
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import select
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pdi._wording import plural
from pdi._workdirs import WorkFolder
from pdi.capture.fetch import Fetched, Limits, check_url
from pdi.capture.proxy import AddressPolicy, CaptureProxy, PageHosts
from pdi.capture.rendered import (
    SERIALIZE,
    Document,
    NetworkLog,
    pack_rendered,
    recorded_body,
    response_body,
)
from pdi.errors import LimitError, NotFoundError, PDIError, UnsupportedError
from pdi.mhtml.limits import Deadline
from pdi.mhtml.resolve import comparable

__all__ = ["BrowserCapture", "capture_with_browser", "chromium_path"]

# Chromium's own services, each of which would fetch on its own during a capture, switched
# off (the flags of "Chrome Flags for Tooling", GoogleChrome/chrome-launcher's
# docs/chrome-flags-for-tools.md, and Debian's /etc/chromium.d/default-flags). Measured
# on Debian's Chromium 150 over an 8 s capture, they leave 3 requests of Chromium's own of
# 11 (one each to accounts.google.com, android.clients.google.com for GCM's check-in, and
# www.google.com), which no switch turns off and a managed policy could only from
# /etc/chromium/policies (no switch points Chromium elsewhere): those the capture proxy
# refuses without looking the name up, since the page never asked for those hosts
# (pdi.capture.proxy.PageHosts).
_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",  # extension updates, safe browsing, upgrade detector, translate, UMA
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--safebrowsing-disable-auto-update",
    "--disable-sync",
    "--metrics-recording-only",  # UMA records but never uploads
    "--disable-breakpad",
    "--no-pings",  # no hyperlink auditing pings
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-search-engine-choice-screen",
    "--media-router=0",
    "--allow-browser-signin=false",  # no sign-in: fewer of its ListAccounts calls
    "--disable-features=" + ",".join((
        "Translate",
        "OptimizationHints",
        "OptimizationHintsFetching",
        "OptimizationGuideModelDownloading",
        "MediaRouter",
        "DialMediaRouteProvider",
        "AutofillServerCommunication",
        "NetworkTimeServiceQuerying",  # clients2.google.com/time
        "CertificateTransparencyComponentUpdater",
        "InterestFeedContentSuggestions",
        "PreconnectToSearch",  # the default search engine's preconnects to www.google.com
        "SearchEnginePreconnect2",
        "SearchEnginePreconnector",
    )),
    "--mute-audio",
    "--remote-debugging-pipe",
    # WebRTC only through the proxy (which carries no UDP): no STUN, no UDP candidates.
    # (This Chromium's switch for the webrtc.ip_handling_policy preference.)
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

# Targets (frames in processes of their own, workers) are attached before they run, so that
# their requests are seen (Network domain) before they are made.
_AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}


def _proxy_flags(proxy: str) -> tuple[str, ...]:
    """Chromium's flags to send every connection through ``proxy`` (``http://127.0.0.1:PORT``)."""
    address = urllib.parse.urlsplit(proxy).hostname
    return (
        f"--proxy-server={proxy}",
        # Chromium sends loopback hosts (localhost, 127/8, [::1]) direct unless told otherwise.
        "--proxy-bypass-list=<-loopback>",
        # Chromium resolves no name itself (the proxy does): nothing that escaped the
        # proxy, a DNS prefetch included, could find an address.
        f"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {address}",
    )


@dataclass(frozen=True)
class BrowserCapture:
    """What Chromium wrote: the MHTML bytes, the URL it ended on, what the capture proxy refused (``request: why``)."""

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
        # Called with every event as it is read, whoever is waiting for what.
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        payload = json.dumps(message).encode("utf-8") + b"\0"
        while payload:
            try:
                written = os.write(self._out, payload)
            except BrokenPipeError as exc:  # Chromium exited (or never started)
                raise NotFoundError("Chromium closed the DevTools pipe (did it crash?)") from exc
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
        if "method" in message:
            for listener in self.listeners:
                listener(message)
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


def _check_page(url: str, policy: AddressPolicy, seconds: float) -> None:
    """Refuse ``url`` before Chromium starts if its host is not one the proxy would let through (looked up within
    the capture's ``seconds``: past them, the capture's own :class:`LimitError`)."""
    parsed = check_url(url)  # http or https, a host, a port that is one
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        policy.addresses(parsed.host, port, seconds)
    except LimitError as exc:
        raise LimitError(f"capturing {url} took longer than {seconds:g} s ({exc})") from exc
    except PDIError as exc:
        raise UnsupportedError(f"refusing to capture {url}: {exc}") from exc


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
    allow: Collection[tuple[str, int]] = (),
    timeout: float = 60.0,
    settle: float = 1.0,
    chromium: str | None = None,
    max_bytes: int | None = None,
) -> BrowserCapture:
    """Load ``url`` in headless Chromium and return the MHTML of what it loaded and rendered.

    Every connection Chromium makes passes the capture proxy's address check:
    public addresses, every address if ``allow_private``, and the ``(address,
    port)`` pairs of ``allow`` (a local mirror; the tests' own sites). A page
    that ends on a URL the proxy refused is refused (:class:`UnsupportedError`).

    ``max_bytes`` bounds the MHTML and each resource (four times that all the page
    loaded): more is a :class:`LimitError`, raised while it arrives (a DevTools message
    may carry at most twice that, for JSON escapes), so no more than that is ever held.
    """
    policy = AddressPolicy.of(allow_private=allow_private, allow=allow)
    deadline = Deadline.after(timeout, f"capturing {url} took longer than {timeout:g} s")
    _check_page(url, policy, timeout)  # its first step: the capture's whole time is left
    page = PageHosts()
    page.announce(url)
    # Bodies are kept in the browser until asked for: up to the limit each, four times it in all.
    each = max_bytes if max_bytes is not None else 50 * 1024 * 1024
    network = {"maxResourceBufferSize": each, "maxTotalBufferSize": 4 * each}
    with CaptureProxy(policy, page=page, record_bytes=each) as proxy, devtools(chromium, max_bytes, proxy=proxy.url) as pipe:
        watch = _PageWatch(pipe, page, network)
        pipe.listeners.append(watch)
        return _drive(pipe, proxy, watch, url, deadline=deadline, settle=settle, max_bytes=max_bytes)


class _PageWatch:
    """Tells the proxy every host the page asks for, from every target of the page, and logs its responses.

    A listener of the pipe: each target attached (a frame in a process of its own, a
    dedicated, shared or service worker; all wait for the debugger before they run) gets
    the Network domain and the same auto-attach, then runs; each request and WebSocket
    that any of them announces is passed to :class:`PageHosts`, and every Network event
    to the :class:`NetworkLog` the MHTML is written from. Chromium's own services belong
    to no target and are never announced.
    """

    def __init__(self, pipe: Pipe, page: PageHosts, network: dict[str, Any]) -> None:
        self._pipe = pipe
        self._page = page
        self.network = network
        self.log = NetworkLog()
        self.frame_sessions: list[str] = []  # frames of other sites, each a target of its own

    def __call__(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params", {})
        if method == "Network.requestWillBeSent":
            self._page.announce(str(params.get("request", {}).get("url", "")))
        elif method == "Network.webSocketCreated":
            self._page.announce(str(params.get("url", "")))
        elif method == "Target.attachedToTarget":
            session = params["sessionId"]
            if params.get("targetInfo", {}).get("type") == "iframe":
                self.frame_sessions.append(session)
            # Sent, not called: this runs inside a read of the pipe. The answers are dropped.
            self._pipe.send("Network.enable", self.network, session)
            self._pipe.send("Target.setAutoAttach", _AUTO_ATTACH, session)
            self._pipe.send("Runtime.runIfWaitingForDebugger", None, session)
        if isinstance(method, str) and method.startswith("Network."):
            self.log.event(message)


_SANDBOX_USER = "nobody"


def _unprivileged() -> tuple[int, int]:
    """The uid and gid Chromium runs as when pdi runs as root (``$PDI_CHROMIUM_USER``, else ``nobody``)."""
    name = os.environ.get("PDI_CHROMIUM_USER") or _SANDBOX_USER
    try:
        entry = pwd.getpwnam(name)
    except KeyError as exc:
        raise UnsupportedError(f"cannot run Chromium sandboxed: there is no user {name!r} to run it as") from exc
    if entry.pw_uid == 0:
        raise UnsupportedError(f"cannot run Chromium sandboxed as {name!r}: that user is root")
    return entry.pw_uid, entry.pw_gid


@contextmanager
def devtools(
    chromium: str | None = None, max_bytes: int | None = None, proxy: str | None = None, *, sandbox: bool | None = None
) -> Iterator[Pipe]:
    """A headless Chromium with a new empty profile, driven over the DevTools pipe; closed on exit.

    Chromium reads commands on its descriptor 3 and answers on 4
    (``--remote-debugging-pipe``): no port is opened. ``max_bytes`` bounds one
    message (see :class:`Pipe`). With ``proxy`` (``http://127.0.0.1:PORT``) every
    connection goes through that proxy and Chromium resolves no name itself.

    ``sandbox`` (by default: when there is a ``proxy``, i.e. for a stranger's page)
    runs Chromium in its own sandbox. Chromium refuses to run sandboxed as root, so
    a root pdi starts it as an unprivileged user (``nobody``, or
    ``$PDI_CHROMIUM_USER``) through ``setpriv``, with no supplementary groups, no
    new privileges, and the temporary profile (its HOME too) its own. Debian's
    Chromium has no setuid sandbox helper: it sandboxes its renderers in user
    namespaces, which the kernel must allow unprivileged users to make. Without
    ``sandbox`` (pdi's own pages and files, in the tests) it runs ``--no-sandbox``.
    """
    binary = chromium or chromium_path()
    sandboxed = proxy is not None if sandbox is None else sandbox
    as_user = _unprivileged() if sandboxed and os.geteuid() == 0 else None
    setpriv = shutil.which("setpriv") if as_user else None
    if as_user and not setpriv:
        raise UnsupportedError("cannot run Chromium sandboxed as root without setpriv (Debian's util-linux)")
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    # The child ends must not already sit on 3 or 4, where they are about to be moved.
    to_browser_r = _above_four(to_browser_r)
    from_browser_w = _above_four(from_browser_w)
    with WorkFolder("pdi-chromium-") as profile:  # a killed capture's profile: removed by the next
        env = None
        wrapper: list[str] = []
        if as_user and setpriv:
            os.chown(profile, *as_user)
            # its temporary files in its own folder too: $TMPDIR may be a folder only root may write in, where the
            # unprivileged Chromium died at start ("did it crash?")
            env = {**os.environ, "HOME": profile, "XDG_CONFIG_HOME": profile, "XDG_CACHE_HOME": profile,
                   "TMPDIR": profile}
            env.pop("XDG_RUNTIME_DIR", None)
            uid, gid = as_user
            wrapper = [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--no-new-privs", "--"]
        args = [*_FLAGS, *(() if sandboxed else ("--no-sandbox",)), *(_proxy_flags(proxy) if proxy else ())]
        args += [f"--user-data-dir={profile}", "about:blank"]
        # bash only moves the two pipe ends to descriptors 3 and 4, then becomes Chromium.
        script = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        process = subprocess.Popen(
            [*wrapper, shutil.which("bash") or "/bin/bash", "-c", script, binary, *args],
            pass_fds=(to_browser_r, from_browser_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        pipe = Pipe(to_browser_w, from_browser_r, max_bytes)
        try:
            yield pipe
        finally:
            try:
                pipe.send("Browser.close")
            except (OSError, NotFoundError):
                pass  # already gone
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            os.close(to_browser_w)
            os.close(from_browser_r)


def _refusals(proxy: CaptureProxy) -> str:
    refused = list(proxy.refused)
    return "; ".join(str(r) for r in refused[-3:]) + (f" (and {len(refused) - 3} more)" if len(refused) > 3 else "")


def _drive(
    pipe: Pipe, proxy: CaptureProxy, watch: _PageWatch, url: str, *, deadline: Deadline, settle: float,
    max_bytes: int | None,
) -> BrowserCapture:
    at = deadline.at
    # Every target from now on (the tab, its frames, its workers) is attached before it runs.
    pipe.call("Target.setAutoAttach", _AUTO_ATTACH, None, at)
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, at)["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, at)["sessionId"]
    pipe.call("Network.enable", watch.network, session, at)
    pipe.call("Target.setAutoAttach", _AUTO_ATTACH, session, at)
    pipe.call("Page.enable", None, session, at)
    final_url = _load(pipe, proxy, session, url, deadline=at, settle=settle)
    # A page that led (by a redirect, or a script) to a plain-http URL the proxy refused
    # shows the proxy's 403 answer: that is no capture of the page.
    for refusal in list(proxy.refused):
        if refusal.request == f"GET {final_url.partition('#')[0]}":
            raise UnsupportedError(f"refusing to capture {url}: it led to {refusal}")
    documents = _documents(pipe, session, at)
    for frame_session in watch.frame_sessions:
        try:
            documents += _documents(pipe, frame_session, at)
        except (UnsupportedError, LimitError):
            continue  # a frame gone meanwhile: what it loaded is taken as it arrived
    limits = Limits() if max_bytes is None else Limits(max_resource_bytes=max_bytes, max_total_bytes=4 * max_bytes)
    loaded = _responses(pipe, proxy, watch, limits, at)
    # Writing the MHTML reads every page again: pack_rendered looks at the deadline as it does.
    mhtml, _ = pack_rendered(final_url, documents, loaded, limits, deadline)
    if max_bytes is not None and len(mhtml) > max_bytes:
        raise LimitError(f"the page's MHTML is {plural(len(mhtml), 'byte')}, more than the limit of {max_bytes}")
    refused = [str(r) for r in proxy.refused]
    if proxy.refused_unkept:
        refused.append(f"{plural(proxy.refused_unkept, 'more request')} (not listed)")
    return BrowserCapture(mhtml=mhtml, url=url, final_url=final_url, refused=tuple(refused))


def _load(pipe: Pipe, proxy: CaptureProxy, session: str, url: str, *, deadline: float, settle: float) -> str:
    """Navigate the tab to ``url`` and wait for its load event and ``settle`` seconds more; the URL it ended on."""
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
                why = f"; the capture proxy refused {_refusals(proxy)}" if proxy.refused else ""
                raise NotFoundError(f"Chromium could not load {url}: {result['errorText']}{why}")
            continue
        method = message.get("method")
        params = message.get("params", {})
        if method == "Page.frameNavigated" and "parentId" not in params.get("frame", {}):
            final_url = params["frame"].get("url", final_url)
        elif method == "Page.loadEventFired" and not loaded:
            loaded = True
            settle_until = time.monotonic() + settle
    if not loaded:
        raise LimitError(f"{url} did not finish loading in time")
    return final_url


def _responses(
    pipe: Pipe, proxy: CaptureProxy, watch: _PageWatch, limits: Limits, deadline: float
) -> dict[str, Fetched]:
    """What the page loaded: the bodies the proxy recorded, and the others asked of Chromium, within ``limits``."""
    each = limits.max_resource_bytes
    recorded = {comparable(url): data for url, (head, sent) in list(proxy.recorded.items())
                if (data := recorded_body(head, sent, each)) is not None}
    bodies: dict[tuple[str | None, str], tuple[bytes, bool]] = {}
    total = sum(len(data) for data in recorded.values())
    for key in watch.log.finished(have=recorded):
        try:
            answer = pipe.call("Network.getResponseBody", {"requestId": key[1]}, key[0], deadline)
        except UnsupportedError:
            continue  # no body kept (a redirect, a 204, one evicted from the buffer)
        body = response_body(answer)
        total += len(body[0])
        if total > limits.max_total_bytes:
            raise LimitError(f"the page loaded more than {plural(limits.max_total_bytes, 'byte')}")
        bodies[key] = body
    return watch.log.responses(bodies, recorded)


def _frames(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node["frame"], *(f for child in node.get("childFrames", []) for f in _frames(child))]


def _documents(pipe: Pipe, session: str, deadline: float) -> list[Document]:
    """Each frame's document as it stands, serialized in a world of pdi's own (main frame first).

    A frame in a process of its own (another site's) is not reachable from the tab's
    session: what it loaded is taken as it arrived.
    """
    documents: list[Document] = []
    for index, frame in enumerate(_frames(pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"])):
        try:
            world = pipe.call("Page.createIsolatedWorld", {"frameId": frame["id"], "worldName": "pdi-capture"}, session, deadline)
            evaluate = {"expression": SERIALIZE, "contextId": world["executionContextId"], "returnByValue": True}
            value = pipe.call("Runtime.evaluate", evaluate, session, deadline)["result"].get("value")
        except UnsupportedError:
            if index == 0:
                raise
            continue
        if not isinstance(value, dict):
            if index == 0:
                raise UnsupportedError("Chromium did not serialize the page")
            continue
        documents.append(Document(str(value["url"]), str(value["html"]), str(value["charset"]), str(value["type"])))
    return documents
