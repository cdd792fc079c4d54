"""The resolver at a path of a host, as a browser sees it: Debian's nginx in front of ``pdi serve --base-url .../pdi/``.

nginx runs the ``location /pdi/`` block of docs/how-to/deploy.md as it is written there (its port alone changed:
:func:`_location`, so the page cannot drift from what is tested), the prefix taken off as it hands a request on,
and answers ``404`` for every other path of the host. Headless Chromium opens the main pages through it (home, the
catalogue at two depths, a text's, an image's and a PDF's viewer, a document page, search, sign-in, the API
reference, an error page, the replay banner of an archived page), and every request the page made (its style's
icon, pdf.js's modules, worker and wasm, the scripts' fetches of ``/api`` and ``N2R``) is on the host at a path
under ``/pdi/`` and answered 2xx or 3xx, or at the replay origin; every link and form of the page points under
``/pdi/``, and each link followed through nginx answers 2xx or 3xx with any ``Location`` under ``/pdi/`` too. Each
page is shot into tests/artifacts/screenshots/ (``base-path-*.png``). N2L's ``Location`` is under ``/pdi/`` when it
is answered from the cache too.
"""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from server_helpers import serving
from test_server_pages_screenshots import SHOTS

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi._ports import free_port
from pdi.archive import Archive, Content
from pdi.capture.browser import Pipe, devtools
from support.nginxnode import nginx

S = "library.example.us"
DEPLOY_PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "deploy.md"
DATA = Path(__file__).resolve().parents[1] / "data"
PAGE_URL = "https://www.example.org/news"


def _location(pdi_port: int) -> str:
    """The deploy page's ``location /pdi/`` block, pdi's port in place of the page's 8000."""
    page = DEPLOY_PAGE.read_text("utf-8")
    block = re.search(r"```nginx\n(location /pdi/ \{.*?\})\n```", page, re.S)
    assert block is not None, "docs/how-to/deploy.md has no ```nginx block of location /pdi/"
    assert "proxy_pass http://127.0.0.1:8000/;" in block.group(1)
    return block.group(1).replace("127.0.0.1:8000", f"127.0.0.1:{pdi_port}")


@dataclass
class Proxied:
    origin: str  # nginx's: http://127.0.0.1:PORT
    pdi_port: int  # pdi serve's own, behind it
    names: dict[str, str]


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    root = tmp_path_factory.mktemp("base-path-browser")
    image = Image.new("RGB", (120, 80), (30, 90, 160))
    image.save(root / "picture.png")
    with Archive.init(root / "archive") as archive:
        archive.add_series(S)
        names = {
            "text": str(archive.add(S, b"The minutes of the meeting.\nA second line of them.\n", format="text")),
            "image": str(archive.add(S, (root / "picture.png").read_bytes(), format="png")),
            "pdf": str(archive.add(S, (DATA / "pdf" / "tracemonkey.pdf").read_bytes(), format="pdf")),
            "page": str(archive.deposit(S, [Content(b"<h1>News</h1><p>The minutes, as published.</p>", "html")],
                                        foreign_id=PAGE_URL)[0]),
        }
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    with serving(root / "archive", "--base-url", f"{origin}/pdi/") as (_, pdi_port):
        site = f"server {{\n    listen 127.0.0.1:{port};\n    {_location(pdi_port)}\n    location / {{ return 404; }}\n}}\n"
        with nginx(site, root / "nginx", lambda: httpx.get(f"{origin}/pdi/readyz", timeout=5).raise_for_status()):
            yield Proxied(origin, pdi_port, names)


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


#: What a page has loaded once its script has done what it does on opening (None: its load event alone).
PDF_DRAWN = "!!document.querySelector('.pdf-page canvas')"
CITE_CHECKED = "!!document.querySelector('#cite-status') && !document.querySelector('[data-state=checking]')"
#: Every link, form and icon of the page, as the browser resolved them against the page's own URL.
TARGETS = ("JSON.stringify([...document.querySelectorAll('a[href]')].map((a) => a.href)"
           ".concat([...document.forms].map((f) => f.action))"
           ".concat([...document.querySelectorAll('link[href]')].map((l) => l.href)))")


def _opened(pipe: Pipe, url: str, shot: str, ready: str | None) -> tuple[list[tuple[str, str]], list[str]]:
    """Open ``url`` in a new tab, wait for its load (and ``ready``), save its screenshot as ``shot``: every request
    the tab made, with its status or error, and every link, form and icon URL of the page."""
    deadline = time.monotonic() + 30
    session = new_tab(pipe, "Page", "Network", deadline=deadline)
    sent: dict[str, str] = {}
    answered: list[tuple[str, str]] = []

    def seen(message: dict[str, Any]) -> None:
        if message.get("sessionId") != session:
            return
        params = message.get("params", {})
        if message.get("method") == "Network.requestWillBeSent":
            if "redirectResponse" in params:  # the answer that sent it on: a 3xx
                answered.append((params["redirectResponse"]["url"], str(params["redirectResponse"]["status"])))
            sent[params["requestId"]] = params["request"]["url"]
        elif message.get("method") == "Network.responseReceived":
            answered.append((params["response"]["url"], str(params["response"]["status"])))
        elif message.get("method") == "Network.loadingFailed" and not params.get("canceled"):
            answered.append((sent.get(params["requestId"], "?"), params.get("errorText", "failed")))

    pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1000, "height": 1400, "deviceScaleFactor": 1,
                                                      "mobile": False}, session, deadline)
    pipe.listeners.append(seen)
    try:
        navigate_and_wait_for_load(pipe, session, url, deadline)
        settled = time.monotonic() + 2
        while time.monotonic() < settled or ready is not None:
            if ready is not None:
                done = pipe.call("Runtime.evaluate", {"expression": ready, "returnByValue": True}, session,
                                 time.monotonic() + 30)
                if done["result"].get("value"):
                    ready = None
                    settled = time.monotonic() + 1.5
                assert time.monotonic() < deadline, f"{url}: {ready} never held"
            pipe.receive(min(deadline, time.monotonic() + 0.25))
        targets = pipe.call("Runtime.evaluate", {"expression": TARGETS, "returnByValue": True}, session, deadline)
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / shot).write_bytes(base64.b64decode(
            pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"]))
    finally:
        pipe.listeners.remove(seen)
    # a request whose answer this tab's session is not told of (a worker's script: its own target's), asked again
    unanswered = {u for u in sent.values() if not u.startswith(("data:", "blob:")) and all(a != u for a, _ in answered)}
    answered += [(u, str(httpx.get(u, timeout=60).status_code)) for u in sorted(unanswered)]
    return answered, json.loads(targets["result"]["value"])


def _pages(names: dict[str, str]) -> list[tuple[str, str, str | None]]:
    """(path under /pdi, screenshot, what shows it ready) of the pages opened."""
    year = names["text"].split("/")[3]
    return [
        ("/pdi/", "home", None),
        ("/pdi/series", "series", None),
        (f"/pdi/series/{S}", "series-one", None),
        (f"/pdi/series/{S}/{year}", "series-year", None),  # the catalogue one level deeper
        (f"/pdi/view?pdi={_q(names['text'])}", "text", CITE_CHECKED),
        (f"/pdi/view?pdi={_q(names['text'])}%23line=2", "text-passage", CITE_CHECKED),
        (f"/pdi/view?pdi={_q(names['text'].rsplit('.', 2)[0])}", "document", None),
        (f"/pdi/view?pdi={_q(names['image'])}", "image", CITE_CHECKED),
        (f"/pdi/view?pdi={_q(names['pdf'])}", "pdf", PDF_DRAWN),
        (f"/pdi/view?pdi={_q(names['page'])}", "replay", None),
        (f"/pdi/view?pdi={_q(names['page'])}&select=1", "replay-select", None),
        ("/pdi/search?q=minutes", "search", None),
        ("/pdi/signin", "signin", None),
        ("/pdi/api", "api", None),
        ("/pdi/no/such/page", "not-found", None),
        (f"/pdi/captures?url={_q(PAGE_URL)}", "captures", None),
    ]


def test_every_page_loads_everything_from_under_the_path_and_links_under_it(proxied: Proxied) -> None:
    origin = proxied.origin
    escaped: list[tuple[str, str, str]] = []
    failed: list[tuple[str, str, str]] = []
    linked: set[str] = set()
    with devtools() as pipe:
        for path, shot, ready in _pages(proxied.names):
            requests, targets = _opened(pipe, origin + path, f"base-path-{shot}.png", ready)
            assert any(u == origin + path for u, _ in requests), (path, requests[:3])
            for url, status in requests:
                parts = urllib.parse.urlsplit(url)
                if url.startswith(origin + "/"):
                    if not parts.path.startswith("/pdi/"):
                        escaped.append((path, url, status))
                elif parts.scheme in ("data", "blob") or (
                        parts.hostname == "127.0.0.1" and parts.port not in (proxied.pdi_port, None)):
                    pass  # the replay origin (a port of its own, not proxied here) or the page's own bytes
                else:
                    escaped.append((path, url, status))
                answered = status.isdigit() and 200 <= int(status) < 400
                if not answered and (url != origin + path or shot != "not-found"):  # (that page's 404 is its own)
                    failed.append((path, url, status))
            for target in targets:
                if target.startswith(origin):
                    if not urllib.parse.urlsplit(target).path.startswith("/pdi/"):
                        escaped.append((path, "link", target))
                    if target.split("#")[0] != origin + path:  # not the page's own (its skip link #main)
                        linked.add(target.split("#")[0])
                elif not target.startswith(("http://127.0.0.1", "https://", "http://www.example")):
                    escaped.append((path, "link", target))
    assert not escaped, escaped
    assert not failed, failed
    # every link of those pages, followed through nginx: an answer, never the host's 404 or a way out of /pdi/
    wrong = []
    with httpx.Client(timeout=60, follow_redirects=False) as client:
        for url in sorted(linked):
            answer = client.get(url, headers={"Accept": "text/html"})
            where = answer.headers.get("location", "")
            if answer.status_code >= 400 or (where and not urllib.parse.urljoin(url, where).startswith(f"{origin}/pdi/")
                                              and answer.status_code != 405):
                wrong.append((url, answer.status_code, where))
    assert len(linked) > 20, linked
    assert not wrong, wrong


def test_the_icon_the_pages_name_is_found_under_the_path(proxied: Proxied) -> None:
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", deadline=deadline)
        navigate_and_wait_for_load(pipe, session, f"{proxied.origin}/pdi/series", deadline)
        found = pipe.call("Runtime.evaluate", {
            "expression": "fetch(document.querySelector('link[rel=icon]').href)"
                          ".then((r) => [r.url, r.status, r.headers.get('content-type')])",
            "awaitPromise": True, "returnByValue": True}, session, deadline)["result"]["value"]
    assert found == [f"{proxied.origin}/pdi/favicon.svg", 200, "image/svg+xml"], found
    # and through the proxy alone, not at the host's root (where nginx answers 404)
    assert httpx.get(f"{proxied.origin}/favicon.svg").status_code == 404


def test_n2l_through_the_proxy_redirects_under_the_path_each_time(proxied: Proxied) -> None:
    """N2L's ``302`` (RFC 2169 §4) of a name asked again, which ``pdi serve`` answers from its cache: its
    ``Location`` under ``/pdi/`` the second and third time too, and followed, the name's octets. nginx asks pdi in
    HTTP/1.0 here; asked in HTTP/1.1 on one connection, as a proxy keeping connections open asks, the connection's
    own answers from the cache (which pass no middleware) are not given under a path, so the same holds."""
    name = proxied.names["text"]
    with httpx.Client(base_url=proxied.origin, timeout=60, follow_redirects=False) as client:
        located = [client.get(f"/pdi/uri-res/N2L?{name}") for _ in range(3)]
        assert [a.status_code for a in located] == [302] * 3
        assert {a.headers["location"] for a in located} == {f"/pdi/uri-res/N2R?{name}"}, located[0].headers
        octets = client.get(located[-1].headers["location"])
    assert octets.status_code == 200 and octets.content == b"The minutes of the meeting.\nA second line of them.\n"
    # asked as a proxy that keeps its connections to pdi open asks (HTTP/1.1, one connection): the same
    with httpx.Client(base_url=f"http://127.0.0.1:{proxied.pdi_port}", timeout=60, follow_redirects=False) as client:
        again = [client.get(f"/uri-res/N2L?{name}") for _ in range(3)]
        again += [client.get(f"/uri-res/N2L?{name.rsplit('.', 2)[0]}") for _ in range(2)]
    assert {a.headers.get("location") for a in again} == {f"/pdi/uri-res/N2R?{name}"}
