"""An archived page served by N2R loads nothing from the live web and runs no script (issue 12).

``Content-Security-Policy: sandbox`` alone stopped scripts but not loads: a
page served by N2R still fetched third-party CSS and images. Here the "live
web" is a second HTTP server on 127.0.0.1 that counts every request it gets;
Chromium opens the archived page through the resolver, and the live server
must see nothing, while an image the page takes from the archive itself
(a ``data:`` URI) still shows.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
from server_helpers import S, Served

from chromium_helpers import open_page
from pdi.capture.browser import devtools

DOT = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///ywAAAAAAQABAAACAUwAOw=="


class _Live(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Live.seen.append(self.path)
        body = b"body{background:red}" if self.path.endswith(".css") else b"GIF89a"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def live() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Live)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Live.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()  # its listening socket


def _page(live: str) -> bytes:
    return f"""<!DOCTYPE html><html><head>
<link rel="stylesheet" href="{live}/style.css">
<style>@font-face {{ font-family: f; src: url({live}/font.woff); }} body {{ font-family: f; }}
div {{ background-image: url({live}/background.gif); width: 10px; height: 10px }}</style>
<script src="{live}/script.js"></script>
</head><body>
<img id="live" src="{live}/image.gif"><img id="archived" src="{DOT}">
<div>x</div><iframe src="{live}/frame.html"></iframe><video src="{live}/film.mp4"></video>
<script>fetch("{live}/fetched"); document.title = "scripts ran";</script>
<form id="f" action="{live}/form" method="get"><input name="q" value="1"></form>
</body></html>""".encode()



def test_an_archived_page_loads_nothing_from_the_live_web(served: Served, live: str) -> None:
    name = str(served.archive.add(S, _page(live), format="html"))
    url = f"{served.url}/uri-res/N2R?{name}"
    with devtools() as pipe:
        session = open_page(pipe, url)
        time.sleep(1.0)  # anything late would have started by now
        deadline = time.monotonic() + 30
        probe = pipe.call("Runtime.evaluate", {
            "expression": "[document.title, document.getElementById('archived').naturalWidth,"
                          " document.getElementById('live').naturalWidth]",
            "returnByValue": True,
        }, session, deadline)
        pipe.call("Runtime.evaluate", {"expression": "document.getElementById('f').submit()"}, session, deadline)
        time.sleep(0.5)
    title, archived, live_width = probe["result"]["value"]
    assert _Live.seen == [], f"the archived page reached the live web: {_Live.seen}"
    assert title == "" and live_width == 0
    assert archived == 1  # what the archive itself holds still shows
