"""An HTTP/1.1 request without a ``Host`` field, or any request with two, is ``400`` (RFC 9112 §3.2: "A server MUST
respond with a 400 (Bad Request) status code to any HTTP/1.1 request message that lacks a Host header field and to
any request message that contains more than one Host header field line"), on ``pdi serve``'s own protocol (the
answer cache leaves it to the app, which refuses it); an HTTP/1.0 request needs none. A request before it on the
connection is answered first, and none after it is read.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from server_helpers import on_own_protocol, until_closed

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "library.example.us"


_ask = until_closed


@contextmanager
def _served(tmp_path: Path, public: bool) -> Iterator[tuple[int, bytes]]:
    """An archive holding one text ("a text\\n"), served on pdi serve's own protocol: its port, and the text's N2R."""
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a text\n", format="text"))
    with on_own_protocol(create_app(str(tmp_path / "a")), public=public) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port, f"/uri-res/N2R?{rfc2169_query(name)}".encode()


@pytest.mark.parametrize("public", [False, True])
def test_host_missing_or_twice_is_400_and_the_connection_closes(tmp_path: Path, public: bool) -> None:
    with _served(tmp_path, public) as (port, target):
        kept = _ask(port, b"GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" % target)
        assert kept.startswith(b"HTTP/1.1 200 ") and kept.endswith(b"a text\n")  # the same name, answered
        for version, fields in ((b"1.1", b""), (b"1.1", b"Host: a\r\nHost: b\r\n"), (b"1.0", b"Host: a\r\nHost: b\r\n")):
            # a second request behind it on the connection is not answered: the connection is closed
            answer = _ask(port, b"GET %s HTTP/%s\r\n%s\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" % (target, version, fields))
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400 "), answer[:200]
            assert b"\r\ndate: " in head.lower()  # RFC 9110 §6.6.1
            assert b"content-type: application/problem+json" in head.lower()
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))
            assert len(body) == length  # nothing after it: the request behind it was not answered
            problem = json.loads(body)
            assert (problem["type"], problem["title"], problem["status"]) == ("about:blank", "Bad Request", 400)
            assert "RFC 9112" in problem["detail"]
        older = _ask(port, b"GET %s HTTP/1.0\r\n\r\n" % target)
        assert older.startswith(b"HTTP/1.1 200 ")
        # a good request, then one without Host, on one connection: the first is answered, then the refusal
        both = _ask(port, b"GET %s HTTP/1.1\r\nHost: a\r\n\r\nGET %s HTTP/1.1\r\n\r\n" % (target, target))
        assert both.startswith(b"HTTP/1.1 200 ") and b"a text\n" in both and b"HTTP/1.1 400 " in both


#: RFC 9112 §3.2: "Host = uri-host [ ":" port ]" of RFC 3986 §3.2.2-3.2.3 (reg-name: unreserved, sub-delims and
#: pct-encoded; IP-literal: an IPv6 address or IPvFuture in brackets; port: any digits, or none after the colon).
_VALID_HOSTS = [b"", b"a", b"a:8080", b"a:", b"127.0.0.1:80", b"[::1]:8000", b"[2001:db8::7]", b"[v1.fe:x]",
                b"xn--caf-dma.example", b"caf%C3%A9.example", b"a!$&'()*+,;=b~_.-", b"a.", b"A.EXAMPLE",
                b"a ", b"a\t", b"a:8000  ", b"[::ffff:1.2.3.4]"]  # the last three: the field's trailing OWS
_INVALID_HOSTS = [b"a b", b"a/b", b'a"b', b"<s>", b"user@a", b"[::1", b"[::g]", b"::1", b"a:8a", b"a%2", b"a\\b",
                  b"a:1:2", b"a?b", b"a#b"]


@pytest.mark.parametrize("public", [False, True])
def test_a_host_value_not_host_and_port_is_400(tmp_path: Path, public: bool) -> None:
    """RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message
    that ... contains ... a Host header field with an invalid field value"; every value of the grammar is served."""
    with _served(tmp_path, public) as (port, target):
        for host in _VALID_HOSTS:
            answer = _ask(port, b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (target, host))
            assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"a text\n"), (host, answer[:200])
        for host in _INVALID_HOSTS:
            for version in (b"1.1", b"1.0"):
                answer = _ask(port, b"GET %s HTTP/%s\r\nHost: %s\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"
                              % (target, version, host))
                head, _, body = answer.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 400 "), (host, answer[:200])
                problem = json.loads(body)  # one answer, the connection closed after it
                assert problem["status"] == 400 and "the Host field is" in problem["detail"]


@pytest.mark.parametrize("public", [False, True])
def test_a_request_line_of_another_version_of_http_is_505(tmp_path: Path, public: bool) -> None:
    """RFC 9110 §15.6.6: 505 "indicates that the server does not support, or refuses to support, the major version
    of HTTP that was used in the request message"; HTTP/2 is not spoken in an HTTP/1 request line."""
    with _served(tmp_path, public) as (port, target):
        answer = _ask(port, b"GET %s HTTP/2.0\r\nHost: a\r\n\r\n" % target)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 505 "), answer[:200]
        problem = json.loads(body)
        assert (problem["title"], problem["status"]) == ("HTTP Version Not Supported", 505)
        assert "HTTP/2.0" in problem["detail"]


@pytest.mark.parametrize("public", [False, True])
def test_a_request_line_of_a_later_http_1_minor_version_is_answered_as_http_1_1(tmp_path: Path, public: bool) -> None:
    """RFC 9110 §2.5: "A recipient that receives a message with a major version number that it implements and a minor
    version number higher than what it implements SHOULD process the message as if it were in the highest minor
    version within that major version to which the recipient is conformant", and a server "SHOULD send a response
    version equal to the highest version to which the server is conformant that has a major version less than or
    equal to the one received in the request": HTTP/1.2 and HTTP/1.9 are read as HTTP/1.1 (kept alive, a Host field
    required) and answered in HTTP/1.1, as h11 reads the answers."""
    from server_helpers import h11_answers

    with _served(tmp_path, public) as (port, target):
        for version in (b"1.2", b"1.9"):
            asked = b"GET %s HTTP/%s\r\nHost: a\r\n\r\n" % (target, version)
            raw = _ask(port, asked + asked + b"GET %s HTTP/%s\r\nHost: a\r\nConnection: close\r\n\r\n" % (target, version))
            assert raw.startswith(b"HTTP/1.1 200 "), raw[:200]
            answers, left = h11_answers(raw, ["GET", "GET", "GET"])
            assert [(status, body) for status, _, body in answers] == [(200, b"a text\n")] * 3 and not left
            unhosted = _ask(port, b"GET %s HTTP/%s\r\n\r\n" % (target, version))  # as of HTTP/1.1: RFC 9112 §3.2
            assert unhosted.startswith(b"HTTP/1.1 400 "), unhosted[:200]
            assert json.loads(unhosted.partition(b"\r\n\r\n")[2])["status"] == 400
        for version in (b"2.1", b"3.0", b"9.9"):  # another major version: RFC 9110 §15.6.6
            answer = _ask(port, b"GET %s HTTP/%s\r\nHost: a\r\n\r\n" % (target, version))
            assert answer.startswith(b"HTTP/1.1 505 "), (version, answer[:200])
            assert b"HTTP/%s" % version in answer.partition(b"\r\n\r\n")[2]
