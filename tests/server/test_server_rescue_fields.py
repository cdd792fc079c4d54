"""A capture answered for a version never kept says which URL it is of in fields a depositor's id cannot break.

The rescue's ``Link`` (``rel="original"``), ``Warning`` and ``PDI-Capture`` name the captured URL, which is a
depositor's foreign id: one holding ``>`` and ``"`` made a second link of its own choosing (a ``canonical``
elsewhere) in an answer kept as immutable, and one holding a line break cut the connection (uvicorn refuses the
field). Read here by RFC 8288's grammar (a link-value is ``<`` URI-Reference ``>`` and its parameters; a
URI-Reference, RFC 3986, holds no ``<``, ``>``, ``"``, space or control), over a real uvicorn.
"""

from __future__ import annotations

import datetime
import re
from email.parser import BytesHeaderParser
from pathlib import Path
from urllib.parse import unquote

from server_helpers import exchange, in_thread

from pdi.archive import Archive
from pdi.server import create_app

S = "oma.eop.gov.us"
KEPT = datetime.datetime(2026, 3, 4, 12, tzinfo=datetime.UTC)


def test_a_captured_url_is_one_link_and_no_field_of_its_own(tmp_path: Path) -> None:
    ids = ['http://evil.example/x>; rel="canonical", <https://attacker.example/',
           "http://evil.example/a\r\nSet-Cookie: pwn=1"]
    with Archive.init(tmp_path / "archive", clock=lambda: KEPT) as archive:
        archive.add_series(S)
        names = [str(archive.add(S, b"<p>kept</p>", format="html", foreign_id=i)) for i in ids]
    app = create_app(str(tmp_path / "archive"))
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as running:
        port = running.servers[0].sockets[0].getsockname()[1]
        for name, url in zip(names, ids, strict=True):
            never_kept = name.replace("/2026/03/04/", "/2026/03/09/")  # a later day's version of the same URL
            # sent as spelled (a client library would write %2E as "." and so name another format)
            raw = exchange(port, [f"GET /uri-res/N2R?{never_kept} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()])[0]
            head, _, body = raw.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 ") and body == b"<p>kept</p>"
            fields = BytesHeaderParser().parsebytes(head.split(b"\r\n", 1)[1] + b"\r\n\r\n")
            link = re.fullmatch(r'<([^<>"\x00-\x20\x7f]*)>; rel="original"', fields["Link"])
            assert link is not None, fields["Link"]  # one link, whose target is a URI
            assert unquote(link[1]) == url  # the URL itself, %-escaped where a URI must be
            assert fields.get_all("Set-Cookie") is None
            assert fields["PDI-Capture"].startswith("earlier; asked=2026-03-09; captured=urn:pdi://")
            assert fields["Warning"].count('"') == 2 and "\r" not in fields["Warning"]
    app.state.archive.close()
