"""A first-asking N2L or ``304`` told by the name's digest alone (``Resolver.public_told``), over a socket: who
may be told it, what it teaches the worker, and when what it taught is forgotten.

The answers expected are the ASGI resolver's (no cache, no protocol of its own), and the statuses are those RFC
2169 (``302`` to the N2R), RFC 9110 (``304`` for a tag ``If-None-Match`` holds, by weak comparison; ``*``) and the
archive's access rules (``403`` private or embargoed, ``410`` withdrawn) say. A request with a token (``Authorization``
or the sign-in cookie) is the resolver's and teaches nothing; a fact learnt is forgotten with the catalog's next
generation (a series made private, an embargo, a withdrawal); other spellings, fragments and a mirrored series'
names are answered as the resolver answers them.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from server_helpers import exchange
from test_server_mirrors import S as MIRRORED
from test_server_mirrors import mirror, origin, pdi
from test_server_mirrors import serving as serve_origin
from test_server_public_answers import (
    S,
    _query,
    _request,
    _resolvers,
    _serving,
    _tag,
    _warm,
    _without_date,
    names,
)

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.http.readers import COOKIE

__all__ = ["names"]  # the archive of test_server_public_answers, used here too


def _status(answer: bytes) -> bytes:
    return answer.split(b" ")[1]


@pytest.mark.parametrize("how", ["authorization", "cookie"])
def test_a_private_names_location_and_tag_are_told_to_its_reader_alone_and_never_learnt(
    names: dict[str, str], how: str
) -> None:
    private = names["private"]
    token = names["token"]
    field = {"Authorization": f"Bearer {token}"} if how == "authorization" else {"Cookie": f"{COOKIE}={token}"}
    tag = _tag(_resolvers(names, [_request(private, **field)])[0])
    asked = [_request(private, service="N2L", **field), _request(private, If_None_Match=tag, **field),
             _request(private, "HEAD", "N2L", **field),
             _request(private, service="N2L"), _request(private, If_None_Match=tag), _request(private, "HEAD", "N2L"),
             _request(private, service="N2L", **field)]
    expected = _resolvers(names, asked)
    assert [_status(e) for e in expected] == [b"302", b"304", b"302", b"403", b"403", b"403", b"302"]
    app = create_app(names["location"])
    with _serving(app, public=True) as (port, calls):
        got = exchange(port, [_warm(names), *asked])[1:]
        assert [_without_date(g) for g in got] == [_without_date(e) for e in expected]
        assert calls.targets[1:] == [_query(private).encode()] * len(asked)  # every one the resolver's
        assert not app.state.cache.knows(_query(private).encode())  # nothing learnt for others
        assert len(app.state.cache) == 0


@pytest.mark.parametrize("change", ["private", "embargo", "withdraw"])
def test_what_a_first_asking_taught_is_forgotten_once_the_name_is_no_longer_public(
    names: dict[str, str], change: str
) -> None:
    later = names["later"]
    tag = _tag(_resolvers(names, [_request(later)])[0])
    app = create_app(names["location"])
    app.state.cache.revalidate_seconds = 0.2
    with _serving(app, public=True) as (port, calls):
        first = exchange(port, [_warm(names), _request(later, service="N2L"), _request(later, If_None_Match=tag)])
        assert [_status(a) for a in first[1:]] == [b"302", b"304"]
        assert calls.targets[1:] == []  # told by the protocol
        assert app.state.cache.knows(_query(later).encode())
        with Archive.open(names["location"]) as archive:
            if change == "private":
                archive.set_series_access(S, "private")
            elif change == "embargo":
                archive.embargo(later, "2999-01-01")
            else:
                archive.withdraw(later, "withdrawn after its fact was learnt")
        time.sleep(0.3)  # past the time the cache answers without asking the catalog again
        after = exchange(port, [_request(later, service="N2L"), _request(later, If_None_Match=tag),
                                _request(later, "HEAD", "N2L")])
        want = {"private": b"403", "embargo": b"403", "withdraw": b"410"}[change]
        assert [_status(a) for a in after] == [want] * 3
        assert not app.state.cache.knows(_query(later).encode())


def test_if_none_match_of_a_first_asking_is_answered_as_the_resolver_answers_it(names: dict[str, str]) -> None:
    text, html = names["text"], names["html"]
    tag = _tag(_resolvers(names, [_request(text)])[0])
    asked = []
    for field in [tag, f"W/{tag}", "*", f'"x", {tag}', '"x", "y"', f"W/{tag}, \"x\"", '"x"']:
        for method in ("GET", "HEAD"):
            asked.append(_request(text, method, If_None_Match=field))
            asked.append(_request(text, method, "I2R", If_None_Match=field))
    asked.append(_request(html, If_None_Match=tag))  # another name's tag
    asked.append(_request(text, If_None_Match=tag, Range="bytes=0-3"))  # If-None-Match before Range: 304
    asked.append(_request(text, If_None_Match='"x"', Range="bytes=0-3"))  # 206
    asked.append(_request(text, If_None_Match=tag, If_Modified_Since="Sat, 01 Jan 2000 00:00:00 GMT"))
    asked.append(_request(text, If_None_Match=""))
    asked.append(_request(text, If_None_Match=tag, Accept="application/json"))
    for field in [tag, "*", f"W/{tag}", '"x"']:  # N2L with If-None-Match: its 302 (or what the resolver says)
        for method in ("GET", "HEAD"):
            asked.append(_request(text, method, "N2L", If_None_Match=field))
    asked.append(_request(text, "GET", "N2L", Range="bytes=0-3"))
    asked.append(_request(text, "GET", "N2L", Accept="application/json"))
    expected = _resolvers(names, asked)
    for request, want in zip(asked, expected, strict=True):  # each a first asking: a worker just started
        with _serving(create_app(names["location"]), public=True) as (port, _):
            got = exchange(port, [_warm(names), request])[1]
        assert _without_date(got) == _without_date(want), request


def test_a_first_asking_n2l_of_another_spelling_or_a_fragment_is_the_resolvers(names: dict[str, str]) -> None:
    text = names["text"]
    spellings = [text + "#line=1", text.replace(S, S.upper()), text.replace("urn:pdi:", "URN:PDI:"),
                 text.replace(":", "%3A", 1), text.rsplit(".", 1)[0], text + "?inflection",
                 text.replace("/", "%2F")]
    asked = [_request(s, method, "N2L") for s in spellings for method in ("GET", "HEAD")]
    asked += [_request(text + "%23line=1", service="N2L")]
    expected = _resolvers(names, asked)
    for request, want in zip(asked, expected, strict=True):
        app = create_app(names["location"])
        with _serving(app, public=True) as (port, _):
            got = exchange(port, [_warm(names), request])[1]
        assert _without_date(got) == _without_date(want), request
        # a fragment's location is not the name's: never learnt as the fact of the whole name
        for query in list(app.state.cache._facts):
            assert b"%23" not in query and b"#" not in query, query


def test_a_first_asking_n2l_or_304_of_a_mirrored_name_is_the_resolvers(tmp_path: Path) -> None:
    a, copied = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serve_origin(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", MIRRORED, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
    here = {"location": str(b), "text": copied["text"]}
    tag = _tag(_resolvers(here, [_request(copied["text"])])[0])
    for key in ("text", "page"):
        asked = [_request(copied[key], service="N2L"), _request(copied[key], "HEAD", "N2L"),
                 _request(copied[key], If_None_Match=tag if key == "text" else "*")]
        expected = _resolvers(here, asked)
        for request, want in zip(asked, expected, strict=True):
            app = create_app(str(b))
            with _serving(app, public=True) as (port, _):
                got = exchange(port, [_warm(here), request])[1]
            assert _without_date(got) == _without_date(want), request
