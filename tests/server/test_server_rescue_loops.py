"""The legacy rescue never sends a reader round a loop (issue 27 §4, §5), over a real ``pdi serve``.

A 1990s name (``I2R?urn:pdi://oma.eop.gov.us/…/http%3a%2f%2f…``, PDI-GRAMMAR §2.4, §2.11) that no authority answers
is answered from a capture of its URL that another resolver's Memento TimeGate (RFC 7089 §4.1) points to within
that resolver's own ``uri-res/N2R``. Found by a review (2026-11-28): that N2R was never asked whether it answers
itself. B's TimeGate names its own N2R of the very name asked, and B's N2R sends every name back to A: a reader
bounced A → B → A until the client gave up. Now the capture's N2R is asked first (``HEAD`` with
``PDI-Route-Probe``, redirects not followed): one that sends the reader on to a resolver is skipped for the next
resolver's capture (C's, which answers itself), and with none left the name is the ``404`` of a name not here.

B and C are a few lines of ``http.server``; A, the resolver asked, a fresh SQLite archive whose own registry names
B and C (for series of theirs, so that both are asked for captures), B first.
"""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive
from pdi.federation.registry import Registry, write_registry_file
from support.handler_server import handler_server

LEGACY = "urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1"
#: the capture C's TimeGate names (C answers its N2R itself)
CAPTURE = "urn:pdi://c.example.us/2026/11/21/1.html.1"


class _SendsBack(http.server.BaseHTTPRequestHandler):
    """B: up; its TimeGate names its own N2R of the name asked; its N2R sends every name on to A."""

    a: ClassVar[str] = ""
    own: ClassVar[str] = ""

    def _answer(self) -> None:
        if self.path.startswith("/timegate/"):
            self.send_response(302)
            self.send_header("Location", f"{self.own}uri-res/N2R?{LEGACY}")
        elif self.path.startswith("/uri-res/"):
            self.send_response(302)
            self.send_header("Location", f"{self.a}{self.path.lstrip('/')}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Holds(http.server.BaseHTTPRequestHandler):
    """C: up; its TimeGate names its N2R of a capture it holds, which it answers itself."""

    own: ClassVar[str] = ""

    def _answer(self) -> None:
        body = b"<h1>The White House, 2026</h1>"
        if self.path.startswith("/timegate/"):
            self.send_response(302)
            self.send_header("Location", f"{self.own}uri-res/N2R?{CAPTURE}")
            body = b""
        else:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    do_GET = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Net:
    a: str
    b: str
    c: str


def _network(tmp_path: Path, series: dict[str, tuple[str, ...]]) -> Iterator[str]:
    location = tmp_path / "a"
    with Archive.init(str(location)) as archive:
        archive.add_series("a.example.us")
    write_registry_file(location / "registry.json", Registry(series))
    with serving(location) as (_, port):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture()
def b_url() -> Iterator[str]:
    with handler_server(_SendsBack) as url:
        _SendsBack.own = url
        yield url


@pytest.fixture()
def c_url() -> Iterator[str]:
    with handler_server(_Holds) as url:
        _Holds.own = url
        yield url


def test_a_capture_whose_resolver_sends_the_reader_back_is_skipped_for_the_next(tmp_path: Path, b_url: str,
                                                                               c_url: str) -> None:
    for a in _network(tmp_path, {"b.example.us": (b_url,), "c.example.us": (c_url,)}):
        _SendsBack.a = a
        answer = httpx.get(f"{a}uri-res/I2R?{LEGACY}", timeout=60, follow_redirects=False)
        assert answer.status_code == 302, answer.text
        assert answer.headers["location"] == f"{c_url}uri-res/N2R?{CAPTURE}"
        assert answer.headers["pdi-capture"].startswith("later; asked=1994-10-20; captured=")
        followed = httpx.get(f"{a}uri-res/I2R?{LEGACY}", timeout=60, follow_redirects=True)
        assert followed.content == b"<h1>The White House, 2026</h1>" and len(followed.history) == 1


@pytest.mark.parametrize("service", ["I2R", "N2R", "N2L"])
def test_with_no_other_capture_the_name_is_not_found_never_a_loop(tmp_path: Path, b_url: str, service: str) -> None:
    for a in _network(tmp_path, {"b.example.us": (b_url,)}):
        _SendsBack.a = a
        answer = httpx.get(f"{a}uri-res/{service}?{LEGACY}", timeout=60, follow_redirects=False)
        assert answer.status_code == 404 and "location" not in answer.headers, answer.headers
        # a reader following every redirect stops at once
        with httpx.Client(timeout=60, follow_redirects=True, max_redirects=5) as client:
            followed = client.get(f"{a}uri-res/{service}?{LEGACY}")
        assert followed.status_code == 404 and followed.history == []
