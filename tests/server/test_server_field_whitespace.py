"""A header field's whitespace is spaces and tabs only (RFC 9110 §5.6.3: ``OWS = *( SP / HTAB )``).

Starlette reads a field's octets as Latin-1, and Python's ``str.strip()`` removes far more than OWS: a
NO-BREAK SPACE (octet ``A0``), NEL (``85``). So ``Range: bytes=0-4`` followed by
``A0`` was read as a good range and answered ``206``, where RFC 9110 §14.1.1 makes the field invalid (ignored: the
whole body, ``200``). A field with such an octet is malformed, and handled as that field's rules say: a
conditional field that is not well formed is ignored (If-Modified-Since §13.1.3, If-Unmodified-Since §13.1.4,
If-Range §13.1.5), an If-Match or If-None-Match that is neither ``*`` nor a list of tags holds no tag of the
answer's, a content coding or a token with it is not the one without it. Each request is raw octets on ``pdi
serve``'s own protocol (with and without its shared cache in front, which answers conditional requests too); what
each should get is worked out from the RFC, the field read without the stray octet and then with it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from server_helpers import on_own_protocol, until_closed

from pdi.archive import Archive
from pdi.federation import authorities
from pdi.interop.accept import parse_accept
from pdi.network import peers
from pdi.server import create_app

S = "library.example.us"
BODY = b"hello world\n"
#: Octets a field may hold (obs-text, RFC 9110 §5.5) that Latin-1 reads as characters str.strip() removes, neither
#: of them OWS: NO-BREAK SPACE and NEL (the control characters it removes too, FS to US, pdi serve refuses: 400)
STRAYS = [b"\xa0", b"\x85"]


@pytest.fixture(scope="module", params=[False, True], ids=["app", "cache"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, str]]:
    """An archive of one text served on pdi serve's own protocol: its port, the text's name and a deposit token."""
    root = tmp_path_factory.mktemp("ows") / "a"
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, BODY, format="text"))
        _, token = archive.add_token("depositor", role="deposit", series=[S])
    with on_own_protocol(create_app(str(root)), public=request.param) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port, name, token


def _get(served: tuple[int, str, str], *fields: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
    port, name, _ = served
    head = b"GET /uri-res/N2R?" + name.encode() + b" HTTP/1.1\r\nHost: a\r\n" + b"".join(f + b"\r\n" for f in fields)
    answer = until_closed(port, head + b"Connection: close\r\n\r\n")
    top, _, body = answer.partition(b"\r\n\r\n")
    lines = top.split(b"\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    return int(lines[0].split(b" ")[1]), headers, body


def _validators(served: tuple[int, str, str]) -> tuple[bytes, bytes]:
    status, headers, body = _get(served)
    assert status == 200 and body == BODY
    return headers[b"etag"], headers[b"last-modified"]


@pytest.mark.parametrize("stray", STRAYS)
def test_a_range_with_other_whitespace_is_invalid_and_the_whole_body_is_answered(
        served: tuple[int, str, str], stray: bytes) -> None:
    assert _get(served, b"Range: bytes=0-4 \t")[::2] == (206, b"hello")  # OWS: the range
    assert _get(served, b"Range: bytes=0-4, \t6-10")[0] == 206  # OWS around a list's comma (§5.6.1)
    for field in (b"Range: bytes=0-4" + stray, b"Range: " + stray + b"bytes=0-4", b"Range: bytes" + stray + b"=0-4",
                  b"Range: bytes=0-4," + stray + b"6-10"):
        assert _get(served, field)[::2] == (200, BODY), field  # an invalid range-spec: the field ignored (§14.1.1)


@pytest.mark.parametrize("stray", STRAYS)
def test_a_date_with_other_whitespace_is_no_date_and_its_condition_is_ignored(
        served: tuple[int, str, str], stray: bytes) -> None:
    _, modified = _validators(served)
    assert _get(served, b"If-Modified-Since: " + modified)[0] == 304
    assert _get(served, b"If-Modified-Since: " + modified + stray)[::2] == (200, BODY)  # §13.1.3: ignored
    before = b"Sun, 06 Nov 1994 08:49:37 GMT"
    assert _get(served, b"If-Unmodified-Since: " + before)[0] == 412
    assert _get(served, b"If-Unmodified-Since: " + stray + before)[::2] == (200, BODY)  # §13.1.4: ignored


@pytest.mark.parametrize("stray", STRAYS)
def test_a_star_with_other_whitespace_is_no_star(served: tuple[int, str, str], stray: bytes) -> None:
    assert _get(served, b"If-None-Match: *")[0] == 304
    assert _get(served, b"If-None-Match: *" + stray)[::2] == (200, BODY)  # neither * nor a tag: none matches
    assert _get(served, b"If-Match: *")[::2] == (200, BODY)
    assert _get(served, b"If-Match: " + stray + b"*")[0] == 412  # neither * nor a tag: none holds


@pytest.mark.parametrize("stray", STRAYS)
def test_an_if_range_with_other_whitespace_matches_nothing(served: tuple[int, str, str], stray: bytes) -> None:
    tag, modified = _validators(served)
    assert _get(served, b"Range: bytes=0-4", b"If-Range: " + tag)[::2] == (206, b"hello")
    assert _get(served, b"Range: bytes=0-4", b"If-Range: " + tag + stray)[::2] == (200, BODY)  # §13.1.5
    assert _get(served, b"Range: bytes=0-4", b"If-Range: " + modified + stray)[::2] == (200, BODY)


def _deposit(served: tuple[int, str, str], *fields: bytes) -> int:
    head = (b"POST /api/deposit?series=" + S.encode() + b" HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n"
            + b"Content-Length: %d\r\n" % len(BODY) + b"".join(f + b"\r\n" for f in fields))
    answer = until_closed(served[0], head + b"Connection: close\r\n\r\n" + BODY)
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize("stray", STRAYS)
def test_a_token_or_a_coding_with_other_whitespace_is_not_the_one_without_it(
        served: tuple[int, str, str], stray: bytes) -> None:
    token = served[2].encode()
    assert _deposit(served, b"Authorization: Bearer " + token, b"Content-Encoding: identity \t") == 201
    assert _deposit(served, b"Authorization: Bearer " + token + stray) == 400  # no b64token (RFC 6750 §2.1)
    assert _deposit(served, b"Authorization: Bearer " + token, b"Content-Encoding: identity" + stray) == 415


_OTHER_SPACE = st.characters(categories=("Zs", "Zl", "Zp", "Cc")).filter(lambda c: c.isspace() and c not in " \t")


@given(space=_OTHER_SPACE, where=st.sampled_from(["before", "after", "before q"]))
def test_an_accept_range_with_other_whitespace_is_not_read(space: str, where: str) -> None:
    """RFC 9110 §12.5.1: a range that is not well formed is left out (:mod:`pdi.interop.accept`); one with OWS is
    read."""
    field = {"before": "{s}text/html", "after": "text/html{s}", "before q": "text/html{s};q=0.5"}[where]
    assert [(r.type, r.subtype) for r in parse_accept(field.format(s=" \t"))] == [("text", "html")]
    assert parse_accept(field.format(s=space)) == []


@given(space=_OTHER_SPACE)
def test_answers_a_client_reads_with_other_whitespace_are_not_read(space: str) -> None:
    """A peer's ``Retry-After`` (RFC 9110 §10.2.3, delay-seconds) and a registry's ``Cache-Control: max-age``
    (RFC 9111 §5.2.2.1) with a stray character are not numbers: the defaults stand."""
    assert peers._retry_after(" 7\t") == 7.0
    assert peers._retry_after(f"7{space}") == peers.ANNOUNCE_WAIT
    assert authorities._max_age("no-cache, \tmax-age=600 ") == 600.0
    assert authorities._max_age(f"max-age=600{space}") == authorities.DEFAULT_RELOAD
    assert authorities._max_age(f"{space}max-age=600") == authorities.DEFAULT_RELOAD


@given(st.integers(0, 10**8), st.integers(0, 30))
@example(5, 6)  # "0000005": read as its first six digits, 0, the announcement was sent again at once
@example(30, 5)  # "0000030": 3 seconds, not the 10 the bound allows
def test_a_retry_after_with_leading_zeros_is_its_number(seconds: int, zeros: int) -> None:
    """RFC 9110 §10.2.3: delay-seconds is 1*DIGIT, so ``0000030`` is 30 seconds (waited at most
    MAX_ANNOUNCE_WAIT), whatever number of zeros lead it."""
    assert peers._retry_after("0" * zeros + str(seconds)) == min(float(seconds), peers.MAX_ANNOUNCE_WAIT)
