"""A ``Content-Length`` a site's server sends that is no number Python's ``int()`` reads: ``²`` (``str.isdigit`` is
true of it, ``int`` refuses it) or more than 4,300 ASCII digits (``int`` refuses those with a ValueError, Python's
guard against quadratic conversion). Found by an attack (2026-11-27): capture checked ``isdigit()``, then ``int()``.
RFC 9110 §8.6: ``Content-Length = 1*DIGIT``, ASCII digits; an answer the proxy recorded with any other is not read
back (Chromium's own copy of it is used, as for one cut short), and leading zeros are read as zeros.

Whether each was reachable: the rendered capture's proxy passes a site's answer on as it came and reads it back
after (:func:`pdi.capture.rendered.recorded_body`): reached by a page in Chromium here. The plain fetcher's answers
come through httpx, whose HTTP/1.1 parser (h11) refuses such a length before pdi sees it: not reachable, shown
here too."""

from __future__ import annotations

import http.server

import pytest

from pdi.capture import capture
from pdi.capture.browser import capture_with_browser
from pdi.capture.rendered import recorded_body
from pdi.errors import PDIError
from pdi.mhtml import parse
from support.handler_server import handler_server

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain"
LENGTHS = [b"\xc2\xb2", b"\xb2", "١".encode(), b"9" * 5000, b"3a"]


@pytest.mark.parametrize("length", LENGTHS)
def test_a_recorded_answer_whose_length_is_no_ascii_number_is_not_read_back(length: bytes) -> None:
    head = HEAD + b"\r\nContent-Length: " + length + b"\r\n\r\n"
    assert recorded_body(head, b"abc", 100) is None


def test_a_recorded_answer_s_ascii_length_still_frames_it() -> None:
    assert recorded_body(HEAD + b"\r\nContent-Length: 0003\r\n\r\n", b"abcdef", 100) == b"abc"
    assert recorded_body(HEAD + b"\r\nContent-Length: " + b"0" * 4999 + b"3\r\n\r\n", b"abcdef", 100) == b"abc"
    assert recorded_body(HEAD + b"\r\nContent-Length: 10\r\n\r\n", b"short", 100) is None


class Page(http.server.BaseHTTPRequestHandler):
    """``/page.html`` shows ``/note.txt``, whose ``Content-Length`` is the test's (written as octets)."""

    length = b""

    def do_GET(self) -> None:
        self.close_connection = True
        if self.path == "/page.html":
            body = b'<!doctype html><title>p</title><p>page</p><iframe src="/note.txt"></iframe>'
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n%s" % (len(body), body))
        else:
            self.wfile.write(HEAD + b"\r\nContent-Length: " + self.length + b"\r\nConnection: close\r\n\r\nabc")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("length", [b"\xb2", b"9" * 5000])
def test_a_rendered_capture_of_a_part_whose_length_is_no_ascii_number_is_made(length: bytes) -> None:
    """Reachable: Chromium asks for the part through pdi's proxy, which records the answer as it came; the capture
    ended in the ValueError (a traceback) before."""
    Page.length = length
    with handler_server(Page) as base:
        got = capture_with_browser(base + "page.html", allow_private=True, settle=0.3)
    assert any(part.content_location == base + "page.html" for part in parse(got.mhtml).parts)


@pytest.mark.parametrize("length", [b"\xb2", b"9" * 5000])
def test_the_plain_fetcher_never_sees_such_a_length(length: bytes) -> None:
    """Not reachable: httpx (h11) refuses the answer first, a failed part or page, never pdi's ``int()``."""
    Page.length = length
    with handler_server(Page) as base, pytest.raises(PDIError) as refused:
        capture(base + "note.txt", allow_private=True)
    assert not isinstance(refused.value.__cause__, ValueError)
