"""N2R of a name the cache does not hold, answered by the HTTP/1.1 protocol itself when it is the plain case.

:meth:`pdi.server.protocol.resolver.Resolver.public_entity` makes the whole
answer in the event loop's thread from one catalog statement
(:meth:`pdi.archive.Archive.read_public`), and
:class:`~pdi.server.process.connection.CachedAnswerProtocol` writes it and
keeps it. These tests speak HTTP/1.1 over a socket and check: that its
answers are byte for byte those the ASGI resolver gives (the Date aside),
with no ASGI request cycle; that whatever is not the plain case (a private
or hidden series, one under a private series, an embargo in force, a
withdrawal, a fragment, a capture of a URL, a damaged or missing blob, a
token) goes on to the resolver, which answers as before, and that nothing
of it is kept for others.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from server_helpers import exchange, in_thread, read_response
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from pdi.archive import Archive
from pdi.archive.content import Content
from pdi.server import create_app
from pdi.server.process.cache import cache_key
from pdi.server.process.connection import answering_protocol
from support.stored_blobs import blob_file, blob_row, delete_blob, flip_octet

S = "open.example.us"
CLOSED = "closed.example.us"
HIDDEN = "hidden.example.us"
UNDER = "under.closed.example.us"


@pytest.fixture
def names(tmp_path: Path) -> dict[str, str]:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        for series in (S, CLOSED, HIDDEN):
            archive.add_series(series)
        archive.add_series(UNDER, parent=CLOSED)
        found = {
            "text": str(archive.add(S, b"Hello, world.\nSecond line.\n", format="text")),
            # larger than a small blob (a catalog row): a blob file, read with preadv
            "large": str(archive.add(S, b"A line of a longer text.\n" * 4000, format="text")),
            "damaged file": str(archive.add(S, b"A longer text to be damaged.\n" * 4000, format="text")),
            "utf8": str(archive.add(S, "Grüße, naïve café.\n".encode(), format="text", charset="utf-8")),
            "html": str(archive.add(S, b"<!doctype html><title>t</title><p>Hi</p>\n", format="html")),
            "foreign": str(archive.add(S, b"a foreign id\n", format="text", foreign_id="report-7")),
            "capture": str(archive.add(S, b"<p>captured</p>\n", format="html",
                                       foreign_id="https://example.org/page")),
            "withdrawn": str(archive.add(S, b"to be withdrawn\n", format="text")),
            "later": str(archive.add(S, b"withdrawn while the server runs\n", format="text")),
            "damaged": str(archive.add(S, b"these octets will be damaged\n", format="text")),
            "missing": str(archive.add(S, b"these octets will be removed\n", format="text")),
            "embargoed": str(archive.add(S, b"not yet\n", format="text", embargo_until="2999-01-01")),
            "private": str(archive.add(CLOSED, b"private words\n", format="text")),
            "hidden": str(archive.add(HIDDEN, b"hidden words\n", format="text")),
            "under": str(archive.add(UNDER, b"under a private series\n", format="text")),
        }
        two = archive.deposit(S, [Content(b"two formats\n", "text"), Content(b"<p>two formats</p>\n", "html")])
        found["first"], found["second"] = (str(n) for n in two.names)
        v2 = archive.add_version(found["text"], [Content(b"Hello again.\n", "text")])
        found["v2"] = str(v2.names[0])
        archive.set_series_access(CLOSED, "private")
        archive.set_series_access(HIDDEN, "hidden")
        archive.withdraw(found["withdrawn"], "a test")
        blobs = {key: archive.get(found[key]).sha256 for key in ("damaged", "missing", "damaged file")}
        found["token"] = archive.add_token("reader", role="read", series=[CLOSED])[1]
    assert blob_file(location, blobs["damaged file"]).exists() and blob_row(location, blobs["damaged"]) is not None
    for key, sha256 in blobs.items():  # small blobs: their catalog rows; the larger one its file
        if key.startswith("damaged"):
            flip_octet(location, sha256, 3)  # the same size, another octet
        else:
            delete_blob(location, sha256)
    found["location"] = str(location)
    return found


class Calls:
    """ASGI middleware counting the requests that reach the app."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.targets: list[bytes] = []
        self.state = app.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.targets.append(scope["query_string"])
        await self.app(scope, receive, send)


@contextmanager
def _serving(app: Starlette, *, public: bool) -> Iterator[tuple[int, Calls]]:
    """uvicorn in a thread with pdi serve's protocol: the app's cache, and its public answers or none."""
    calls = Calls(app)
    protocol = answering_protocol(10, app.state.cache, None, app.state.public if public else None)
    with in_thread(calls, host="127.0.0.1", port=0, log_level="warning", http=protocol) as server:
        yield server.servers[0].sockets[0].getsockname()[1], calls


def _query(name: str) -> str:
    return name.replace("%", "%25").replace("#", "%23")


def _request(name: str, method: str = "GET", service: str = "N2R", **fields: str) -> bytes:
    lines = [f"{method} /uri-res/{service}?{_query(name)} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _tag(response: bytes) -> str:
    return response.split(b"etag: ")[1].split(b"\r\n")[0].decode()


#: A request that makes the cache fresh (it asks the catalog whether anything was withdrawn): N2R of a generic name.
def _warm(names: dict[str, str]) -> bytes:
    return _request(names["text"].rsplit(".", 2)[0], Accept="text/plain")


def _resolvers(names: dict[str, str], requests: list[bytes]) -> list[bytes]:
    """What the ASGI resolver answers (no cache, no public answers)."""
    with _serving(create_app(names["location"], cache_bytes=0), public=False) as (port, _):
        return exchange(port, requests)


def _ours(names: dict[str, str], requests: list[bytes]) -> tuple[list[bytes], list[bytes], Starlette]:
    """What pdi serve's protocol answers (after one request that makes the cache fresh), and which requests
    reached the app."""
    app = create_app(names["location"])
    with _serving(app, public=True) as (port, calls):
        answers = exchange(port, [_warm(names), *requests])[1:]
        return answers, calls.targets[1:], app


def test_public_answers_are_the_resolvers_byte_for_byte(names: dict[str, str]) -> None:
    text = names["text"]
    tag = _tag(_resolvers(names, [_request(text)])[0])
    plain = ("utf8", "html", "foreign", "first", "second", "v2", "large")
    firsts = [
        _request(text),  # made now, then kept: the requests after it are answered from the cache
        _request(text, "HEAD"),
        _request(text, Range="bytes=0-4"),
        *[_request(names[key]) for key in plain],
        _request(names["first"], "HEAD"),  # made by a HEAD
        _request(names["second"] + "#line=1", "GET"),  # a fragment: the resolver's
        _request(names["html"], Accept="text/html"),
        _request(names["foreign"].replace(S, S.upper())),  # another spelling: its own entry, made now too
        _request(names["utf8"], "GET", "I2R"),
    ]
    fresh = _request(names["v2"], Range="bytes=-3")  # already kept: from the cache
    asked = [*firsts, fresh, _request(text, If_None_Match=tag)]
    expected = _resolvers(names, asked)
    got, reached, _ = _ours(names, asked)
    assert [e.split(b" ")[1] for e in expected[:3]] == [b"200", b"200", b"206"]
    assert got == expected
    # only the fragment went to the app: every other answer was made by the protocol or came from the cache
    assert reached == [f"{_query(names['second'] + '#line=1')}".encode()]


def test_a_name_not_asked_before_revalidated_by_a_client_gets_the_resolvers_304(names: dict[str, str]) -> None:
    tag = _tag(_resolvers(names, [_request(names["html"])])[0])
    asked = [_request(names["html"], If_None_Match=tag), _request(names["html"], If_None_Match='"other"')]
    expected = _resolvers(names, asked)
    got, reached, _ = _ours(names, asked)
    assert [e.split(b" ")[1] for e in expected] == [b"304", b"200"]
    assert (got, reached) == (expected, [])


def test_public_locations_are_the_resolvers_byte_for_byte(names: dict[str, str]) -> None:
    plain = ("text", "utf8", "html", "foreign", "capture", "first", "second", "v2")
    asked = [*[_request(names[key], service="N2L") for key in plain],
             _request(names["text"], "HEAD", "N2L"),
             _request(names["text"].rsplit(".", 1)[0], service="N2L"),  # the version left out: version 1
             _request(names["second"] + "#line=1", service="N2L")]  # a fragment: the resolver's
    expected = _resolvers(names, asked)
    got, reached, _ = _ours(names, asked)
    assert {e.split(b" ")[1] for e in expected} == {b"302"}
    assert got == expected
    assert reached == [_query(names["second"] + "#line=1").encode()]


@pytest.mark.parametrize("key", ["private", "hidden", "under", "embargoed", "withdrawn"])
def test_a_location_not_for_anyone_goes_to_the_resolver_and_is_not_kept(names: dict[str, str], key: str) -> None:
    asked = [_request(names[key], service="N2L"), _request(names[key], service="N2L")]
    expected = _resolvers(names, asked)
    got, reached, app = _ours(names, asked)
    assert got == expected
    assert expected[0].split(b" ")[1] == {"private": b"403", "hidden": b"404", "under": b"403",
                                          "embargoed": b"403", "withdrawn": b"410"}[key]
    assert reached == [_query(names[key]).encode()] * 2
    assert app.state.cache.get(b"N2L " + cache_key("127.0.0.1", _query(names[key]).encode(), "http")) is None


@pytest.mark.parametrize("key", ["private", "hidden", "under", "embargoed", "withdrawn", "capture"])
def test_what_is_not_for_anyone_goes_to_the_resolver_and_is_not_kept(names: dict[str, str], key: str) -> None:
    asked = [_request(names[key]), _request(names[key])]
    expected = _resolvers(names, asked)
    got, reached, app = _ours(names, asked)
    assert got == expected
    status = expected[0].split(b" ")[1]
    assert status == {"private": b"403", "hidden": b"404", "under": b"403", "embargoed": b"403",
                      "withdrawn": b"410", "capture": b"200"}[key]
    if key == "capture":  # public, but a memento dated by a statement: the resolver makes it (then keeps it)
        assert reached == [_query(names[key]).encode()]
    else:
        assert reached == [_query(names[key]).encode()] * 2
        assert app.state.cache.get(cache_key("127.0.0.1", _query(names[key]).encode(), "http")) is None


def test_a_private_answer_read_with_a_token_is_never_kept_nor_given_to_others(names: dict[str, str]) -> None:
    private = names["private"]
    with_token = _request(private, Authorization=f"Bearer {names['token']}")
    asked = [with_token, _request(private), with_token]
    expected = _resolvers(names, asked)
    got, reached, app = _ours(names, asked)
    assert [e.split(b" ")[1] for e in expected] == [b"200", b"403", b"200"]
    assert b"cache-control: private, no-store" in expected[0]
    assert got == expected
    assert len(reached) == 3
    assert app.state.cache.get(cache_key("127.0.0.1", _query(private).encode(), "http")) is None


def test_a_damaged_or_missing_blob_is_refused_as_before(names: dict[str, str]) -> None:
    asked = [_request(names["damaged"]), _request(names["missing"]), _request(names["damaged"]),
             _request(names["damaged file"])]
    expected = _resolvers(names, asked)
    got, reached, app = _ours(names, asked)
    # the resolver's refusal of octets that are not those recorded (pdi.errors.DamagedError: the archive's fault, 500)
    assert [e.split(b" ")[1] for e in expected] == [b"500", b"500", b"500", b"500"]
    assert got == expected
    assert len(reached) == 4
    assert len(app.state.cache) == 0 or all(
        app.state.cache.get(cache_key("127.0.0.1", _query(names[k]).encode(), "http")) is None
        for k in ("damaged", "missing", "damaged file"))


def test_a_withdrawal_made_while_serving_is_honoured_at_once_for_a_name_not_kept(names: dict[str, str]) -> None:
    later, text = names["later"], names["text"]
    app = create_app(names["location"])
    with _serving(app, public=True) as (port, calls):
        before = exchange(port, [_warm(names), _request(text)])
        assert before[1].startswith(b"HTTP/1.1 200")
        with Archive.open(names["location"]) as archive:
            archive.withdraw(later, "withdrawn while serving")
        assert app.state.cache.fresh  # a name the cache holds may still be answered until it asks again …
        after = exchange(port, [_request(later)])
        # … but a name it does not hold is looked up now, withdrawal and all
        assert after[0].startswith(b"HTTP/1.1 410")
        assert calls.targets[-1] == _query(later).encode()


def test_a_series_made_private_while_serving_is_honoured_at_once_for_a_name_not_kept(names: dict[str, str]) -> None:
    # each connection of the event loop keeps which series anyone may read, read again once anything was committed
    # (SQLite's data_version): the next name not kept, of that series or one under it, goes to the resolver
    html, utf8, under = names["html"], names["utf8"], names["under"]
    app = create_app(names["location"])
    with _serving(app, public=True) as (port, calls):
        before = exchange(port, [_warm(names), _request(html)])
        assert before[1].startswith(b"HTTP/1.1 200") and calls.targets[1:] == []
        with Archive.open(names["location"]) as archive:
            archive.set_series_access(S, "private")
            archive.set_series_access(CLOSED, "public")  # UNDER's parent public again: UNDER itself still public
        after = exchange(port, [_request(utf8), _request(under)])
        assert after[0].startswith(b"HTTP/1.1 403")
        assert after[1].startswith(b"HTTP/1.1 200")
        # the first went to the resolver, the second was made by the protocol: its series and the one above public
        assert calls.targets[1:] == [_query(utf8).encode()]
        assert app.state.cache.get(cache_key("127.0.0.1", _query(utf8).encode(), "http")) is None


def test_nothing_is_made_by_the_protocol_while_the_cache_is_stale(names: dict[str, str]) -> None:
    app = create_app(names["location"])
    app.state.cache.at_once = None  # a catalog that cannot say its generation at once (PostgreSQL)
    with _serving(app, public=True) as (port, calls):
        # the first request finds the cache stale (it never asked the catalog): the resolver answers, and the
        # cache is fresh after it
        exchange(port, [_request(names["html"]), _request(names["utf8"])])
        assert calls.targets == [_query(names["html"]).encode()]


def test_a_stale_cache_asks_the_catalog_at_once_and_forgets_a_withdrawn_name(names: dict[str, str]) -> None:
    later = names["later"]
    app = create_app(names["location"])
    app.state.cache.revalidate_seconds = 0.2
    with _serving(app, public=True) as (port, calls):
        assert exchange(port, [_request(later), _request(later)])[1].startswith(b"HTTP/1.1 200")
        assert calls.targets == []  # the connection asked the catalog's generation itself, and made the answer
        with Archive.open(names["location"]) as archive:
            archive.withdraw(later, "withdrawn while serving")
        time.sleep(0.3)  # past the time the cache answers without asking again
        assert exchange(port, [_request(later)])[0].startswith(b"HTTP/1.1 410")
        assert calls.targets == [_query(later).encode()]


def test_a_name_deposited_while_serving_is_answered_by_the_protocol_at_its_first_asking(names: dict[str, str]) -> None:
    # a deposit acknowledged before a request is sent is seen by the catalog read that request makes, and the
    # protocol makes the answer (its N2R and its N2L) without the resolver
    app = create_app(names["location"])
    with _serving(app, public=True) as (port, calls):
        exchange(port, [_warm(names), _request(names["text"])])
        for n in range(3):
            with Archive.open(names["location"]) as archive:
                later = str(archive.add(S, f"deposited while serving, {n}\n".encode(), format="text"))
            got = exchange(port, [_request(later), _request(later, service="N2L")])
            assert got[0].startswith(b"HTTP/1.1 200") and got[0].endswith(f"deposited while serving, {n}\n".encode())
            assert got[1].startswith(b"HTTP/1.1 302")
        assert calls.targets[1:] == []  # none went to the resolver


def _other_host(request: bytes) -> bytes:
    """The same request with another ``Host``: not the key the whole answer was kept under."""
    return request.replace(b"Host: 127.0.0.1", b"Host: localhost")


def test_a_name_asked_once_needs_no_catalog_for_its_location_or_its_304(
    names: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text, html = names["text"], names["html"]
    tag = _tag(_resolvers(names, [_request(text)])[0])
    html_tag = _tag(_resolvers(names, [_request(html)])[0])
    later = [_other_host(_request(text, service="N2L")), _other_host(_request(text, If_None_Match=tag)),
             _other_host(_request(html, If_None_Match=html_tag)), _other_host(_request(html, "HEAD", "N2L"))]
    expected = _resolvers(names, later)
    assert [e.split(b" ")[1] for e in expected] == [b"302", b"304", b"304", b"302"]
    app = create_app(names["location"])
    archive = app.state.archive
    # public_serial_named and public_digest: a name spelled canonically (N2R; N2L and a 304)
    asked = _catalog_reads(archive, monkeypatch, ("locate_public", "read_public", "public_serial", "public_serial_named", "public_digest"))
    with _serving(app, public=True) as (port, calls):
        exchange(port, [_warm(names)])
        asked.clear()
        # the text's bytes, the html's location: the catalog once each
        exchange(port, [_request(text), _request(html, service="N2L")])
        assert len(asked) == 2
        got = exchange(port, later)
    assert got == expected
    assert len(asked) == 2  # each name's location, entity tag and 304 were known: no catalog asked again
    assert calls.targets[1:] == []


def test_a_locations_and_a_304s_second_asking_come_from_the_names_fact_alone(
    names: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # N2L's 302 and a 304 are told by the name's fact (ResponseCache.known_wire), not kept again as whole answers;
    # asked again, over pdi serve's protocol or through the ASGI middleware (HTTP/1.0), the same octets as the
    # resolver's, and no catalog
    text, html = names["text"], names["html"]
    tag = _tag(_resolvers(names, [_request(text)])[0])
    again = [_request(text, service="N2L"), _request(html, If_None_Match=_tag(_resolvers(names, [_request(html)])[0])),
             _request(text, If_None_Match=f'"other", {tag}')]
    asked = [*again, *again, *(r.replace(b"HTTP/1.1", b"HTTP/1.0") for r in again)]
    with _serving(create_app(names["location"], cache_bytes=0), public=False) as (port, _):
        expected = [exchange(port, [request])[0] for request in asked]  # HTTP/1.0's answer closes the connection
    assert [e.split(b" ")[1] for e in expected] == [b"302", b"304", b"304"] * 3
    app = create_app(names["location"])
    archive = app.state.archive
    reads = _catalog_reads(archive, monkeypatch,
                           ("locate_public", "read_public", "public_serial", "public_serial_named", "public_digest", "locate"))
    with _serving(app, public=True) as (port, calls):
        exchange(port, [_warm(names)])
        reads.clear()
        got = [exchange(port, [request])[0] for request in asked]
    assert [_without_date(g) for g in got] == [_without_date(e) for e in expected]
    assert reads == [text, html]  # once a name: the text's 304 was told by the fact its N2L left
    assert len(app.state.cache) == 0  # no whole answer kept: the facts tell them
    assert calls.targets[1:] == [_query(n).encode() for n in (text, html, text)]  # HTTP/1.0: the middleware's


def _catalog_reads(archive: Archive, monkeypatch: pytest.MonkeyPatch, methods: tuple[str, ...]) -> list[str]:
    """The names the archive's ``methods`` are asked for from now on (each call's first argument), in order."""
    asked: list[str] = []
    for method in methods:
        real = getattr(archive, method)
        monkeypatch.setattr(archive, method, lambda parsed, *a, _real=real, **k: asked.append(str(parsed)) or _real(
            parsed, *a, **k))
    return asked


def _without_date(response: bytes) -> bytes:
    """An answer without its ``Date`` and ``Connection`` fields (HTTP/1.0's answers close the connection)."""
    return b"\r\n".join(line for line in response.split(b"\r\n")
                         if not line.lower().startswith((b"date:", b"connection:")))


def test_what_a_cache_knows_of_a_name_is_forgotten_with_a_withdrawal(names: dict[str, str]) -> None:
    later = names["later"]
    app = create_app(names["location"])
    app.state.cache.revalidate_seconds = 0.2
    with _serving(app, public=True) as (port, calls):
        assert exchange(port, [_request(later)])[0].startswith(b"HTTP/1.1 200")
        assert app.state.cache.fact(_query(later).encode()) is not None
        with Archive.open(names["location"]) as archive:
            archive.withdraw(later, "withdrawn while serving")
        time.sleep(0.3)  # past the time the cache answers without asking again
        assert exchange(port, [_other_host(_request(later, service="N2L"))])[0].startswith(b"HTTP/1.1 410")
        assert calls.targets == [_query(later).encode()]


@pytest.mark.parametrize("name", [
    "urn:pdi://open.example.us/2026/11/25/1.text.1",
    "urn:pdi://open.example.us/2026/11/25/https:%2F%2Fexample.org%2Fa%20b%2Ec%3Fd.html.1",
    "urn:pdi://open.example.us/2026/11/25/r%C3%A9port-7.text.2",
])
def test_a_locations_fields_are_those_starlette_gives_a_redirect(name: str) -> None:
    # N2L's 302 is made without Starlette's RedirectResponse (one object fewer a cold N2L): the same fields, and
    # nosniff, which every answer says (the middleware adds it to Starlette's; the connection's own must say it)
    from starlette.responses import RedirectResponse

    from pdi.server.http.readers import BY_READER
    from pdi.server.protocol.resolver import _fixed
    from pdi.server.protocol.rfc2169 import n2r_path

    redirect = RedirectResponse(n2r_path(name), status_code=302)
    made = _fixed((name, name.rsplit(".", 2)[0]), True, None, b"")
    assert made.headers == (*redirect.raw_headers, (b"x-content-type-options", b"nosniff"),
                            (b"vary", BY_READER.encode("latin-1")))
    # under a base URL's path, its Location is that path and Starlette's Location (RFC 3986 §4.2: root-relative)
    (key, value), = [(k, v) for k, v in redirect.raw_headers if k == b"location"]
    assert _fixed((name, name.rsplit(".", 2)[0]), True, None, b"/pdi").headers[1] == (key, b"/pdi" + value)


def test_a_fact_packs_and_unpacks_to_itself() -> None:
    from pdi.server.process.cache import Fact

    names = ("urn:pdi://a.example.us/2026/11/25/1.text.1", "urn:pdi://a.example.us/2026/11/25/1")
    tag = '"' + "ab" * 32 + '"'
    plain = b"/uri-res/N2R?" + names[0].encode()  # N2L's Location: the N2R of the name as spelled, or another
    for fact in (Fact(names, tag), Fact(names, tag, plain), Fact(names, tag, b"/uri-res/N2R?urn:pdi://A%2Eb")):
        packed = fact.pack()
        assert packed is not None and Fact.unpack(packed) == fact
    assert len(Fact(names, tag, plain).pack() or b"") == 32 + len(names[0]) + 1  # the usual Location is not kept
    assert Fact(names, '"ab#line=1"').pack() is None  # not a whole version's tag: not kept
    assert Fact(names, tag, b"").pack() is None  # no Location is empty: it would unpack as the usual one
    assert Fact((names[0], "another"), tag).pack() is None


def _closed_after(conn: socket.socket, limit: float) -> float | None:
    """Seconds until the server closed ``conn`` (it sent nothing more), or ``None`` if still open after ``limit``."""
    start = time.monotonic()
    conn.settimeout(limit)
    try:
        got = conn.recv(1)
    except TimeoutError:
        return None
    assert got == b""
    return time.monotonic() - start


def test_a_connection_answered_by_the_protocol_keeps_its_idle_and_head_deadlines(names: dict[str, str]) -> None:
    app = create_app(names["location"])
    protocol = answering_protocol(4.0, app.state.cache, None, app.state.public)
    ask = _request(names["text"])
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning", http=protocol,
                   timeout_keep_alive=1.5) as server:  # deadlines far apart, and far from 0.3 s: a loaded machine
        port = server.servers[0].sockets[0].getsockname()[1]
        exchange(port, [_warm(names), ask])  # kept now: the requests below are answered by the protocol
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            buffered = bytearray()
            for _ in range(4):  # each answer sets the idle time again: asked every 0.3 s, it stays open
                conn.sendall(ask)
                assert read_response(conn, buffered).startswith(b"HTTP/1.1 200")
                time.sleep(0.3)
            closed = _closed_after(conn, 10)  # idle, then closed after the keep-alive timeout
            assert closed is not None and 1.0 < closed < 3.5
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(ask)
            assert read_response(conn, bytearray()).startswith(b"HTTP/1.1 200")
            conn.sendall(ask[:20])  # a head begun, never ended: not idle, but cut off at the head deadline
            closed = _closed_after(conn, 10)
            assert closed is not None and 3.5 < closed < 8.0
