"""One page served over HTTP whose content a test changes between captures, and a capture of it in another
wrapper: the tests of captures over withdrawn versions (``test_capture_withdrawn*.py``)."""

from __future__ import annotations

import re
from http.server import BaseHTTPRequestHandler


class Handler(BaseHTTPRequestHandler):
    """``/page.html``: whatever :attr:`body` holds when it is asked (the ``server`` fixture serves a module's
    ``Handler``)."""

    body = b"<p>first edition</p>"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = Handler.body if self.path == "/page.html" else b"not here"
        self.send_response(200 if self.path == "/page.html" else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def rewrapped(mhtml: bytes, date: bytes = b"Tue, 01 Oct 2024 10:00:00 +0000") -> bytes:
    """``mhtml`` in another wrapper, as another writer writes an unchanged page again: another boundary (RFC 2046
    §5.1.1: any string the parts do not hold) and a ``Date`` header field (RFC 5322 §3.6.1); its parts as they
    were."""
    found = re.search(rb'boundary="?([^";\r\n]+)"?', mhtml)
    assert found is not None
    other = b"----MultipartBoundary--rewrapped0123456789"
    assert other not in mhtml
    head, crlf, rest = mhtml.partition(b"\r\n")
    return head + crlf + b"Date: " + date + b"\r\n" + rest.replace(found.group(1), other)
