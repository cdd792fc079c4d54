"""A list field sent as several lines is one list (RFC 9110 §5.3: a recipient MAY combine field lines of one name
"without changing the semantics of the message", their values joined by commas, when the field is a list).

``If-Match`` and ``If-None-Match`` are lists of entity tags (§13.1.1, §13.1.2). Found by a review (2026-11-27):
only the first line was read, so ``If-Match: "nope"`` then ``If-Match: <the tag>`` was a ``412`` and
``If-None-Match: "abc"`` then ``If-None-Match: <the tag>`` a whole ``200``. Asked over a socket of uvicorn's
protocol and of ``pdi serve``'s own (with and without ``public``), twice each, so that the second asking meets a
kept answer.
"""

from __future__ import annotations

import pytest
from server_helpers import Served, exchange, served_port

from pdi.server.protocol.rfc2169 import rfc2169_query


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize("how", ["uvicorn", "own", "own, public"])
@pytest.mark.parametrize("which", ["text", "long"])
def test_if_match_and_if_none_match_on_several_lines_are_one_list(served: Served, how: str, which: str) -> None:
    name = getattr(served, which)
    target = f"/uri-res/N2R?{rfc2169_query(name)}"
    with served_port(served, how) as port:
        tag = next(line.split(b":", 1)[1].strip() for line in exchange(port, [
            f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()])[0].split(b"\r\n")
            if line.lower().startswith(b"etag:"))

        def asked(*lines: bytes) -> bytes:
            return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + b"".join(
                line + b"\r\n" for line in lines) + b"\r\n"

        cases = [
            (asked(b'If-None-Match: "abc"', b"If-None-Match: " + tag), 304),
            (asked(b"If-None-Match: " + tag, b'If-None-Match: "abc"'), 304),
            (asked(b'If-None-Match: "abc"', b'If-None-Match: "def"'), 200),
            (asked(b'If-Match: "nope"', b"If-Match: " + tag), 200),
            (asked(b'If-Match: "nope"', b'If-Match: "nope2"'), 412),
            (asked(b'If-Match: "nope", ' + tag), 200),  # the same list on one line
        ]
        answers = exchange(port, [request for request, _ in cases for _ in range(2)])
    assert [_status(a) for a in answers] == [status for _, status in cases for _ in range(2)], (how, which)


@pytest.mark.parametrize("how", ["uvicorn", "own", "own, public"])
@pytest.mark.parametrize("which", ["text", "long"])
def test_accept_on_several_lines_is_one_list(served: Served, how: str, which: str) -> None:
    """``Accept`` is a list (RFC 9110 §12.5.1: ``#( media-range [ weight ] )``): ``Accept: text/html`` then
    ``Accept: application/json`` asks what ``Accept: text/html, application/json`` asks, under which a text/plain
    resource is not acceptable and its description (JSON) is. Found by probing (2026-12-01): only the first line
    was read, so the two lines were answered the text's octets and the one line its description; and
    ``application/json`` then ``text/plain`` the description, where the one line is answered the text."""
    name = getattr(served, which)
    target = f"/uri-res/N2R?{rfc2169_query(name)}"

    def asked(*lines: bytes) -> bytes:
        return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + b"".join(
            line + b"\r\n" for line in lines) + b"\r\n"

    def content_type(answer: bytes) -> bytes:
        return next(line.split(b":", 1)[1].strip().split(b";")[0] for line in answer.split(b"\r\n\r\n")[0].split(b"\r\n")
                    if line.lower().startswith(b"content-type:"))

    pairs = [(b"text/html", b"application/json"), (b"application/json", b"text/plain")]
    with served_port(served, how) as port:
        for first, second in pairs:
            one_line = exchange(port, [asked(b"Accept: " + first + b", " + second)])[0]
            two_lines = exchange(port, [asked(b"Accept: " + first, b"Accept: " + second)] * 2)
            assert [(_status(a), content_type(a)) for a in two_lines] == [(200, content_type(one_line))] * 2, (
                how, which, first, second)
        assert content_type(one_line) == b"text/plain"  # application/json, text/plain: the text as it is
        assert content_type(exchange(port, [asked(b"Accept: text/html", b"Accept: application/json")])[0]) == (
            b"application/json")
