"""What a worker keeps besides whole N2R answers: N2L's ``302`` of a versioned name, and a ``304``'s entity tag.

A versioned name's location (the N2R of its canonical spelling) and entity
tag (the SHA-256 of its stored bytes) never change, so the resolver keeps
them after one catalog read (:class:`pdi.server.process.cache.Fixed` and
:class:`~pdi.server.process.cache.Validator`). These tests speak HTTP/1.1
over a socket to uvicorn with pdi serve's protocol: that what comes from
the cache is byte for byte the resolver's answer (the Date aside) and is
given without the catalog; that a withdrawn name stops redirecting at once;
that an answer read with a token is never kept for others; and that
``If-None-Match`` is read as RFC 9110 §13.1.2 says, against entity tags
worked out here from the stored bytes (hashlib), not from pdi's answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from server_helpers import exchange
from test_server_cache_protocol import _serving

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "kept.example.us"
TEXT = b"A ruling of the court.\n"


@pytest.fixture
def names(tmp_path: Path) -> dict[str, str]:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        text = str(archive.add(S, TEXT, format="text"))
        other = str(archive.add(S, b"another ruling\n", format="text"))
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        _, reader = archive.add_token("reader", role="read", series=[S])
    return {"text": text, "other": other, "curator": curator, "reader": reader,
            "location": str(tmp_path / "archive")}


def _request(service: str, name: str, method: str = "GET", **fields: str) -> bytes:
    lines = [f"{method} /uri-res/{service}?{rfc2169_query(name)} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _field(answer: bytes, name: bytes) -> bytes | None:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.lower() == name:
            return value.strip()
    return None


class Locates:
    """Counts the catalog look-ups (``Archive.locate``) of an app's archive."""

    def __init__(self, archive: Any) -> None:
        self.count = 0
        own: Callable[..., Any] = archive.locate

        def locate(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return own(*args, **kwargs)

        archive.locate = locate


def test_n2l_of_a_versioned_name_is_kept_and_is_the_resolvers_answer(names: dict[str, str]) -> None:
    text = names["text"]
    requests = [_request("N2L", text), _request("N2L", text, "HEAD"),
                _request("N2L", text, If_None_Match="*"), _request("N2L", text, Accept="application/json")]
    with _serving(create_app(names["location"], cache_bytes=0), cached=False) as (port, _):
        expected = exchange(port, requests)
    assert [_status(e) for e in expected] == [302] * 4
    assert _field(expected[0], b"location") == f"/uri-res/N2R?{rfc2169_query(text)}".encode()

    app = create_app(names["location"])
    looked = Locates(app.state.archive)
    with _serving(app) as (port, calls):
        assert exchange(port, [_request("N2L", text)]) == expected[:1]  # kept now
        assert looked.count == 1
        calls.paths.clear()
        assert exchange(port, requests) == expected
        assert calls.paths == [] and looked.count == 1, "the catalog was asked again for a location that never changes"


def test_a_withdrawn_name_stops_redirecting_at_once(names: dict[str, str]) -> None:
    text, other = names["text"], names["other"]
    app = create_app(names["location"])
    with _serving(app) as (port, calls):
        assert [_status(a) for a in exchange(port, [_request("N2L", text)] * 2)] == [302, 302]
        assert len(calls.paths) == 1  # the second from the cache
        # withdrawn through this resolver: its cache forgets the name as the withdrawal is made
        withdraw = (f"POST /api/withdraw?pdi={rfc2169_query(text)}&reason=recalled HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {names['curator']}\r\nContent-Length: 0\r\n\r\n").encode()
        assert _status(exchange(port, [withdraw])[0]) == 201
        assert _status(exchange(port, [_request("N2L", text)])[0]) == 410
    # withdrawn by another process on the catalog: forgotten at the next request through the resolver
    # (which asks the catalog whether anything was withdrawn at most every revalidate_seconds)
    app = create_app(names["location"])
    app.state.cache.revalidate_seconds = 0
    with _serving(app) as (port, calls):
        tag = '"' + hashlib.sha256(b"another ruling\n").hexdigest() + '"'
        kept = exchange(port, [_request("N2L", other), _request("N2R", other, If_None_Match=tag)] * 2)
        assert [_status(a) for a in kept] == [302, 304] * 2 and len(app.state.cache) == 2
        with Archive.open(names["location"]) as elsewhere:
            elsewhere.withdraw(other, "recalled elsewhere")
        gone = exchange(port, [_request("N2L", other), _request("N2R", other, If_None_Match=tag)])
        assert [_status(a) for a in gone] == [410, 410]


def test_a_304_or_a_location_read_with_a_token_is_never_given_to_another_reader(names: dict[str, str]) -> None:
    text = names["text"]
    tag = '"' + hashlib.sha256(TEXT).hexdigest() + '"'
    with Archive.open(names["location"]) as archive:
        archive.set_series_access(S, "private")
    app = create_app(names["location"])
    token = {"Authorization": f"Bearer {names['reader']}"}
    with _serving(app) as (port, _):
        read = exchange(port, [_request("N2L", text, **token), _request("N2R", text, If_None_Match=tag, **token)])
        assert [_status(a) for a in read] == [302, 304]
        assert _field(read[1], b"cache-control") == b"private, no-store"
        assert len(app.state.cache) == 0
        anonymous = exchange(port, [_request("N2L", text), _request("N2R", text, If_None_Match=tag)])
        assert [_status(a) for a in anonymous] == [403, 403]


def test_if_none_match_is_read_as_rfc_9110_says(names: dict[str, str]) -> None:
    text = names["text"]
    tag = '"' + hashlib.sha256(TEXT).hexdigest() + '"'  # the stored bytes' SHA-256: no fragment, no transformation
    other = '"' + hashlib.sha256(b"other bytes").hexdigest() + '"'
    fields = [
        # RFC 9110 §13.1.2: "*" matches any current representation; a list matches if any member
        # matches by the weak comparison (§8.8.3.2): W/"x" matches "x"
        (tag, 304), ("*", 304), (f"W/{tag}", 304), (f"{other}, {tag}", 304), (f"{other},{tag}", 304),
        (f"W/{other}, W/{tag}", 304),
        (other, 200), (tag.upper().replace("W/", ""), 200), (tag.strip('"'), 200), (f"{tag[:-2]}\"", 200),
    ]
    requests = [_request("N2R", text, If_None_Match=value) for value, _ in fields]
    requests.append(_request("N2R", text, "HEAD", If_None_Match=tag))
    with _serving(create_app(names["location"], cache_bytes=0), cached=False) as (port, _):
        expected = exchange(port, requests)
    assert [_status(e) for e in expected] == [status for _, status in fields] + [304]
    for answer in expected:
        assert _field(answer, b"etag") == tag.encode()
        if _status(answer) == 304:  # §15.4.5: the fields a 200 would have sent that describe it, and no body
            assert _field(answer, b"cache-control") == b"public, max-age=31536000, immutable"
            assert _field(answer, b"vary") == b"Accept"
            assert answer.endswith(b"\r\n\r\n")
        else:
            assert answer.endswith(b"\r\n\r\n" + TEXT)

    # kept after a first 304 asked of the catalog alone, then after a 200 with the bytes: the same answers
    app = create_app(names["location"])
    looked = Locates(app.state.archive)
    with _serving(app) as (port, calls):
        assert exchange(port, requests[:1]) == expected[:1]
        assert looked.count == 1 and calls.paths == ["/uri-res/N2R"]
        assert exchange(port, requests[:6]) == expected[:6]
        assert looked.count == 1 and len(calls.paths) == 1, "a 304 the cache could answer went to the catalog"
        # a tag that does not match: the bytes, from the resolver, which then keeps the whole answer
        assert exchange(port, requests) == expected
        assert exchange(port, requests) == expected
        assert len(calls.paths) == 2
