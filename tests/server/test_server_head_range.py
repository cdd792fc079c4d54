"""``HEAD`` ignores ``Range`` (RFC 9110 §14.2: range handling is defined for ``GET`` alone, and a server MUST ignore
``Range`` on any other method): ``200`` with the whole representation's ``Content-Length``, as ``HEAD`` without it.

Asked over a socket of ``pdi serve``'s own protocol (whose connections answer the plain case from the answer cache,
and with ``public``, make it too), and of uvicorn's, twice each, so that the second asking meets a kept answer,
for a satisfiable and an unsatisfiable range, of a small text (kept whole) and a long one.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from pathlib import Path

import pytest
from server_helpers import Served, exchange, in_thread, on_own_protocol, served_port

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query


def _fields(answer: bytes) -> dict[str, str]:
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])} | {"": head[0]}


@pytest.mark.parametrize("how", ["uvicorn", "own", "own, public"])
@pytest.mark.parametrize("ranged", ["bytes=0-3", "bytes=999999-", "bytes=-5"])
@pytest.mark.parametrize("which", ["text", "long"])
def test_head_with_range_is_the_whole_200(served: Served, how: str, ranged: str, which: str) -> None:
    name = getattr(served, which)
    size = len(served.archive.get(name).data)
    target = f"/uri-res/N2R?{rfc2169_query(name)}"
    plain = f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    asked = f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {ranged}\r\n\r\n".encode()
    got = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    ranged_get = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {ranged}\r\n\r\n".encode()
    with served_port(served, how) as port:
        answers = exchange(port, [asked, got, plain, asked, ranged_get])
    for answer in (answers[0], answers[2], answers[3]):
        fields = _fields(answer)
        assert fields[""] == "HTTP/1.1 200 OK", (how, ranged, answer[:300])
        assert fields["content-length"] == str(size) and "content-range" not in fields
    assert _fields(answers[0]) == _fields(answers[2]) == _fields(answers[3])
    # the GET still honours it: 206 or 416 (the test is of HEAD, not of Range)
    assert _fields(answers[4])[""].split(" ")[1] in ("206", "416")


@pytest.mark.parametrize("how", ["uvicorn", "own", "own, public"])
def test_the_last_octets_of_an_empty_text_are_the_whole_empty_200(tmp_path: Path, how: str) -> None:
    """RFC 9110 §14.1.1: "When a selected representation has zero length, the only satisfiable form of range-spec
    is a suffix-range with a non-zero suffix-length" — satisfiable, yet no ``Content-Range`` can spell a range of
    no octets, so the answer is the whole (empty) representation, ``200``, as nginx answers it; ``bytes=-0`` and
    ``bytes=0-`` select nothing (``416``). Asked twice each, so that the second meets a kept answer."""
    archive = Archive.init(tmp_path / "archive")
    archive.add_series("example.us")
    name = str(archive.add("example.us", b"", format="text"))
    target = f"/uri-res/N2R?{rfc2169_query(name)}"

    def ask(ranged: str) -> bytes:
        return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {ranged}\r\n\r\n".encode()

    app = create_app(archive.location)
    with contextlib.ExitStack() as stack:
        if how == "uvicorn":
            server = stack.enter_context(in_thread(app, host="127.0.0.1", port=0, log_level="critical"))
            port = server.servers[0].sockets[0].getsockname()[1]
        else:
            url = stack.enter_context(on_own_protocol(app, public=how == "own, public"))
            port = urllib.parse.urlsplit(url).port
            assert port is not None
        answers = exchange(port, [ask("bytes=-5"), ask("bytes=-5"), ask("bytes=-0"), ask("bytes=0-"), ask("bytes=0-")])
    for answer in answers[:2]:
        fields = _fields(answer)
        assert fields[""] == "HTTP/1.1 200 OK", (how, answer[:300])
        assert fields["content-length"] == "0" and "content-range" not in fields
    for answer in answers[2:]:
        fields = _fields(answer)
        assert fields[""].split(" ")[:2] == ["HTTP/1.1", "416"], (how, answer[:300])
        assert fields["content-range"] == "bytes */0"
