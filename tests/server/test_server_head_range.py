"""``HEAD`` ignores ``Range`` (RFC 9110 §14.2: range handling is defined for ``GET`` alone, and a server MUST ignore
``Range`` on any other method): ``200`` with the whole representation's ``Content-Length``, as ``HEAD`` without it.

Asked of ``pdi serve`` over a socket (its own protocol answers the plain case, the ASGI path the rest) twice, so
the second asking meets the answer cache too, and for a satisfiable and an unsatisfiable range.
"""

from __future__ import annotations

import urllib.parse

import pytest
from server_helpers import Served, exchange

from pdi.server.protocol.rfc2169 import rfc2169_query


def _fields(answer: bytes) -> dict[str, str]:
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])} | {"": head[0]}


@pytest.mark.parametrize("ranged", ["bytes=0-3", "bytes=999999-", "bytes=-5"])
@pytest.mark.parametrize("which", ["text", "long"])
def test_head_with_range_is_the_whole_200(served: Served, ranged: str, which: str) -> None:
    name = getattr(served, which)
    size = len(served.archive.get(name).data)
    port = urllib.parse.urlsplit(served.url).port
    assert port is not None
    target = f"/uri-res/N2R?{rfc2169_query(name)}"
    plain = f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    asked = f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {ranged}\r\n\r\n".encode()
    got = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: {ranged}\r\n\r\n".encode()
    answers = exchange(port, [asked, plain, asked, got])
    for answer in answers[:3]:
        fields = _fields(answer)
        assert fields[""] == "HTTP/1.1 200 OK", (ranged, answer[:300])
        assert fields["content-length"] == str(size) and "content-range" not in fields
    assert _fields(answers[0]) == _fields(answers[1]) == _fields(answers[2])
    # the GET still honours it: 206 or 416 (the test is of HEAD, not of Range)
    assert _fields(answers[3])[""].split(" ")[1] in ("206", "416")
