"""Replay of a deposited MHTML file as a stranger writes it: what an attack on the replay origin's answers found."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server.replay.origin import create_replay_app, replay_path

#: RFC 9110 §8.3.1 and §5.6.2: media-type = type "/" subtype parameters; type and subtype are tokens of tchar
_TCHAR = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
_FIELD = re.compile(rf"{_TCHAR}+/{_TCHAR}+(?:[ \t]*;[ \t]*{_TCHAR}+=(?:{_TCHAR}+|\"[^\"\\\x00-\x08\x0a-\x1f\x7f]*\"))*")

#: Content-Types that are no media type (RFC 2045 §5.1), as a stranger writes them in a part of an MHTML file
NO_MEDIA_TYPES = [b"text/h\x7ftml", b"text/html\xc3\xa9", b"text/html\xe9", b"a/b\x01c", b'application/x"y"',
                  b"text/x\\y", b"t\xc2\x85/p", b"x/\xff\xfe"]


def test_a_part_whose_content_type_is_no_media_type_is_served_as_plain_text(tmp_path: Path) -> None:
    """Found by an attack: the replay origin served each part with the Content-Type its file wrote, whatever it
    held: ``text/htmlé`` was a 500 (a field value beyond Latin-1), ``a/b<U+0001>c`` a field no HTTP parser takes
    (h11 refuses a control character: the connection dropped), ``application/x"y"`` one no browser reads. RFC 2045
    §5.2: a syntactically invalid Content-Type is taken as the default, plain text."""
    refs = b"".join(b'<img src="http://e.org/%d">' % n for n in range(len(NO_MEDIA_TYPES)))
    parts = b"".join(b"--b\r\nContent-Type: " + c + b"\r\nContent-Location: http://e.org/%d\r\n\r\npart %d\r\n" % (n, n)
                     for n, c in enumerate(NO_MEDIA_TYPES))
    data = (b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=b; type=text/html\r\n\r\n"
            b"--b\r\nContent-Type: text/html\r\nContent-Location: http://e.org/\r\n\r\n<p>" + refs + b"\r\n"
            + parts + b"--b--\r\n")
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("library.example.us")
        name = str(archive.add("library.example.us", data, format="related"))
    client = TestClient(create_replay_app(str(tmp_path / "a"), resolver_origin="http://127.0.0.1:8000"))
    page = client.get(replay_path(name))
    files = re.findall(r'<img src="([^"]+)">', page.text)
    assert len(files) == len(NO_MEDIA_TYPES), page.text
    for number, file in enumerate(files):
        answer = client.get(replay_path(name, file))
        assert answer.status_code == 200, (NO_MEDIA_TYPES[number], answer.status_code)
        kind = answer.headers["content-type"]
        assert _FIELD.fullmatch(kind), (NO_MEDIA_TYPES[number], kind)
        assert kind.split(";")[0] == "text/plain"
        assert answer.content == b"part %d" % number
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "script-src 'none'" in answer.headers["content-security-policy"]
