"""A header field an answer quotes back is quoted as its client wrote it (:func:`pdi._wording.shown_field`), bounded.

A field's octets beyond ASCII (RFC 9110 §5.5: ``obs-text``) are read by Starlette as Latin-1, so a client that
sent ``Accept-Datetime: é`` in UTF-8 (``C3 A9``) was told ``Accept-Datetime 'Ã©' is not an RFC 1123 date``. Each
answer below is a real request on ``pdi serve``'s own protocol (raw octets on a socket), or through Starlette's
test client where the route needs a proxy in front of it; what it should say is worked out from the octets sent:
UTF-8 read as UTF-8, an octet UTF-8 does not read shown ``\\xNN``.
"""

from __future__ import annotations

import html
import json
import urllib.parse
from collections.abc import Iterator

import pytest
from server_helpers import in_thread, on_own_protocol, until_closed
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.http.forwarded import TrustedForwarding, TrustedProxies

S = "library.example.us"
#: "café" in UTF-8, and an octet no UTF-8 holds alone
CAFE, FF = "café".encode(), b"\xff"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """An archive served on pdi serve's own protocol: its port, and a token that may deposit."""
    root = tmp_path_factory.mktemp("fields") / "a"
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
    with on_own_protocol(create_app(str(root))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port, token


def _answer(port: int, head: bytes, body: bytes = b"") -> tuple[int, bytes, bytes]:
    """The status, head and body of the answer to ``head`` (a request line and fields, no blank line) and ``body``."""
    answer = until_closed(port, head + b"\r\nConnection: close\r\n\r\n" + body)
    top, _, content = answer.partition(b"\r\n\r\n")
    return int(top.split(b" ")[1]), top, content


def _detail(port: int, head: bytes, body: bytes = b"") -> tuple[int, str]:
    status, _, content = _answer(port, head, body)
    return status, json.loads(content)["detail"]


@pytest.mark.parametrize(("sent", "shown"), [(CAFE, "'café'"), (b"Thu, 31 May 2007 20:35:00 GMT" + FF,
                                                                  r"'Thu, 31 May 2007 20:35:00 GMT\xff'")])
def test_accept_datetime_is_quoted_as_sent(served: tuple[int, str], sent: bytes, shown: str) -> None:
    status, detail = _detail(served[0], b"GET /timegate/https://example.org/ HTTP/1.1\r\nHost: a\r\n"
                                        b"Accept-Datetime: " + sent)
    assert status == 400
    assert detail.startswith(f"Accept-Datetime {shown} is not an RFC 1123 date"), detail


def test_a_date_that_is_no_date_is_quoted_as_sent(served: tuple[int, str]) -> None:
    # a weekday not the date's own (ASCII: a weekday of another script is no match at all): quoted alike
    status, detail = _detail(served[0], b"GET /timegate/https://example.org/ HTTP/1.1\r\nHost: a\r\n"
                                        b"Accept-Datetime: Fri, 31 May 2007 20:35:00 GMT")
    assert status == 400 and detail.startswith("Accept-Datetime 'Fri, 31 May 2007 20:35:00 GMT': 31 May 2007 was a")


@pytest.mark.parametrize(("sent", "shown"), [(CAFE + b".example/x", "'café.example/x'"), (b"a/" + FF, r"'a/\xff'")])
def test_host_is_quoted_as_sent(served: tuple[int, str], sent: bytes, shown: str) -> None:
    status, detail = _detail(served[0], b"GET / HTTP/1.1\r\nHost: " + sent)
    assert status == 400 and detail.startswith(f"the Host field is {shown}, not a host and port"), detail


def test_if_match_is_quoted_as_sent(served: tuple[int, str]) -> None:
    # /oai has no representation of its own: a POST to it with If-Match is 412, the field named (RFC 9110 §13.1.1)
    status, detail = _detail(served[0], b'POST /oai HTTP/1.1\r\nHost: a\r\nIf-Match: "' + CAFE + b'"\r\n'
                                        b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0")
    assert status == 412 and detail.startswith("If-Match '\"café\"': /oai has no representation"), detail


def test_two_content_types_are_quoted_as_sent(served: tuple[int, str]) -> None:
    port, token = served
    body = b"sent once\n"
    status, detail = _detail(port, b"POST /api/deposit?series=%s HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer %s\r\n"
                                   b"Content-Type: text/plain\r\nContent-Type: text/" % (S.encode(), token.encode())
                             + CAFE + b"\r\nContent-Length: %d" % len(body), body)
    assert status == 400 and detail.startswith("the request gives Content-Type 2 times ('text/plain', 'text/café')")


def test_an_annotations_content_type_is_quoted_as_sent(served: tuple[int, str]) -> None:
    port, token = served
    body = b"{}"
    status, detail = _detail(port, b"POST /api/annotations/ HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer %s\r\n"
                                   b"Content-Type: application/" % token.encode() + CAFE + FF
                             + b"\r\nContent-Length: %d" % len(body), body)
    assert status == 415 and detail.endswith(r"(or application/json), not 'application/café\xff'"), detail


def test_a_content_coding_is_quoted_as_sent(served: tuple[int, str]) -> None:
    port, token = served
    body = b"x"
    status, detail = _detail(port, b"POST /api/deposit?series=%s&format=text HTTP/1.1\r\nHost: a\r\n"
                                   b"Authorization: Bearer %s\r\nContent-Type: text/plain\r\nContent-Encoding: GZIP, "
                                   % (S.encode(), token.encode()) + b"BR\xc3\x96TLI\r\nContent-Length: 1", body)
    # lower case of ASCII alone: the "Ö" (C3 96) is not made another octet
    assert status == 415 and "the content coding 'gzip', 'brÖtli': send it" in detail, detail


def test_a_sign_in_forms_content_type_and_origin_are_quoted_as_sent(served: tuple[int, str]) -> None:
    port, _ = served
    status, _, page = _answer(port, b"POST /signin HTTP/1.1\r\nHost: a\r\nOrigin: http://a\r\n"
                                    b"Content-Type: text/" + CAFE + b"\r\nContent-Length: 0")
    assert status == 415
    assert "application/x-www-form-urlencoded, not 'text/café'" in html.unescape(page.decode()), page[:2000]
    status, _, page = _answer(port, b"POST /signin HTTP/1.1\r\nHost: a\r\nOrigin: http://" + CAFE + b".example\r\n"
                                    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0")
    assert status == 403
    assert "This form was sent from 'http://café.example' (Origin)" in html.unescape(page.decode()), page[:2000]
    status, _, page = _answer(port, b"POST /signin HTTP/1.1\r\nHost: a\r\nReferer: HTTP://" + CAFE + b".Example/p"
                                    b"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 0")
    assert status == 403
    assert "This form was sent from 'http://café.example' (Referer)" in html.unescape(page.decode()), page[:2000]


async def _seen(request: Request) -> JSONResponse:
    return JSONResponse({"base": str(request.base_url)})


def test_a_trusted_proxys_field_is_quoted_as_sent() -> None:
    # served by uvicorn as pdi serve --trusted-proxy wraps its app (Starlette's test client sends a field's octets
    # as its own UTF-8 reading of them, so not as sent)
    app = TrustedForwarding(Starlette(routes=[Route("/", _seen)]), TrustedProxies.parse(["127.0.0.0/8"]))
    with in_thread(app, host="127.0.0.1", port=0, log_level="critical") as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        status, detail = _detail(port, b"GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-Host: " + CAFE + b"/" + FF)
    assert status == 400
    assert detail.startswith(r"X-Forwarded-Host from the proxy at 127.0.0.1 is 'café/\xff', not a host[:port]")


#: A document of 20 octets, deposited before the archive is served: its N2R answers the conditions below.
HELD = b"twenty octets here.\n"


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """An archive holding :data:`HELD`, served on pdi serve's own protocol: its port and the document's N2R path."""
    root = tmp_path_factory.mktemp("conditions") / "a"
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, HELD, format="text"))
    with on_own_protocol(create_app(str(root))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port, "/uri-res/N2R?" + name


def _get(held: tuple[int, str], field: bytes) -> tuple[int, str]:
    port, path = held
    return _detail(port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: a\r\n" + field)


@pytest.mark.parametrize(("sent", "shown"), [(b'"' + CAFE + b'"', "'\"café\"'"), (b'"a' + FF + b'"', r"""'"a\xff"'""")])
def test_an_n2r_if_match_that_holds_no_tag_is_quoted_as_sent(held: tuple[int, str], sent: bytes, shown: str) -> None:
    status, detail = _get(held, b"If-Match: " + sent)
    assert status == 412 and detail.startswith(f"If-Match {shown} holds no tag of this answer's"), detail


def test_an_if_match_of_another_answer_is_quoted_as_sent(held: tuple[int, str]) -> None:
    # /api/meta is answered whole; the middleware (RFC 9110 §13.1.1) reads its If-Match against its ETag
    port, path = held
    status, detail = _detail(port, b"GET /api/meta?pdi=" + path.split("?", 1)[1].encode()
                             + b" HTTP/1.1\r\nHost: a\r\nIf-Match: \"" + CAFE + b'"')
    assert status == 412 and detail.startswith("If-Match '\"café\"' holds no entity tag of this answer's"), detail


@pytest.mark.parametrize(("sent", "shown"), [
    # (an octet beyond ASCII, A0 or NEL 85 where a blank may stand, makes the field invalid, ignored: no 416 quotes
    # one, tests/server/test_server_field_whitespace.py); a tab, which OWS is, stands where a blank may
    (b"bytes=900-,\t901-", r"'bytes=900-,\t901-'"),
    # 40 ranges past the end: 326 characters, the first 200 quoted and the rest left out (…)
    (b"bytes=" + b"900-901," * 40, "'" + ("bytes=" + "900-901," * 40)[:200] + "'…"),
])
def test_a_range_that_selects_nothing_is_quoted_as_sent(held: tuple[int, str], sent: bytes, shown: str) -> None:
    status, detail = _get(held, b"Range: " + sent)
    assert status == 416 and detail.startswith(f"the Range {shown} selects none of the {len(HELD)} octets"), detail


def test_an_if_unmodified_since_before_the_deposit_is_quoted_as_sent(held: tuple[int, str]) -> None:
    # (with an octet beyond ASCII it is no date, ignored: tests/server/test_server_field_whitespace.py)
    status, detail = _get(held, b"If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT")
    assert status == 412
    assert detail.startswith("If-Unmodified-Since 'Thu, 01 Jan 1970 00:00:00 GMT' is before"), detail


@pytest.mark.parametrize(("sent", "said"), [
    (b"text/Pla" + CAFE[-2:] + b"n", "the Content-Type 'text/Plaén' is not a media type of pdi's registry"),
    (b"text/plain; charset=" + CAFE, "the Content-Type 'text/plain; charset=café' names a charset pdi does not know"),
])
def test_a_deposits_content_type_is_quoted_as_sent(served: tuple[int, str], sent: bytes, said: str) -> None:
    port, token = served
    body = b"x"
    status, detail = _detail(port, b"POST /api/deposit?series=%s HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer %s\r\n"
                                   b"Content-Type: " % (S.encode(), token.encode()) + sent
                             + b"\r\nContent-Length: 1", body)
    assert status == 415 and detail.startswith(said), detail
