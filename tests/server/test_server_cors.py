"""CORS on the resolver's public answers, judged by the Fetch standard's rules as a browser applies them
(``fetch_cors``, written from the standard): a script of another origin reads N2R, N2L, N2Ls, N2C, Memento,
OAI-PMH, the JSON read API, manifests and the ``.well-known`` documents, preflighted or not, redirects followed;
not the write API; not with cookies; and as ``--cors-origin`` says (any origin, some, none). The answers ``pdi
serve``'s connections write from the cache themselves (the compiled path, the first asking, the told path) carry
the same fields as the app's.
"""

from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fetch_cors import (
    Answer,
    Ask,
    Fields,
    browser_fetch,
    cors_check,
    exposed,
    get,
    needs_preflight,
    unsafe_request_header_names,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from server_helpers import S, on_own_protocol, sealed_archive
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.server import create_app
from pdi.server.http.cors import CrossOrigin, serialized_origin
from pdi.server.process.limits import MAX_HEAD_FIELDS, MAX_PIPELINED
from pdi.signing import SigningKey

READER = "https://reader.example.org"
KEY = SigningKey.generate()
OTHER = "https://elsewhere.example.net"


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Archive, dict[str, str]]]:
    location = tmp_path_factory.mktemp("cors") / "archive"
    archive, public, sealed, reader = sealed_archive(str(location))
    version = archive.add(S, b"first words\n", format="text")
    generic = str(version).rsplit(".", 2)[0]
    try:
        yield archive, {"text": public, "sealed": sealed, "token": reader, "generic": generic}
    finally:
        archive.close()


def asking(client: TestClient | httpx.Client, content: bytes | None = None) -> Ask:
    """What ``client`` (an app's test client, or a live server's) answers, as :mod:`fetch_cors` asks it (``content``:
    the body of every request but a preflight)."""

    def ask(method: str, url: str, fields: Fields) -> Answer:
        answer = client.request(method, url, headers=list(fields), follow_redirects=False,
                                content=None if method == "OPTIONS" else content)
        return Answer(answer.status_code, answer.headers.multi_items(), answer.content)

    return ask


def app_client(names: tuple[Archive, dict[str, str]], cors: CrossOrigin | None = None) -> TestClient:
    archive, _ = names
    return TestClient(create_app(archive.location, archive=archive, cors=cors, signing_key=KEY),
                      base_url="http://resolver.test")


def _reads(names: dict[str, str]) -> list[tuple[str, str, list[tuple[str, str]], int]]:
    """A read of each public endpoint: its method, path, fields (most not CORS-safelisted: preflighted) and the
    status it answers."""
    text, generic = names["text"], names["generic"]
    quoted = urllib.parse.quote(text, safe="")
    return [
        ("GET", f"/uri-res/N2R?{text}", [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")], 200),
        ("GET", f"/uri-res/N2R?{text}", [("Range", "bytes=0-3")], 206),  # safelisted: no preflight
        ("GET", f"/uri-res/N2R?{text}", [("Prefer", "return=minimal")], 200),
        ("HEAD", f"/uri-res/I2R?{text}", [], 200),
        ("GET", f"/uri-res/N2L?{text}", [("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")], 200),  # followed
        ("GET", f"/uri-res/N2Ls?{generic}", [], 200),
        ("GET", f"/uri-res/N2C?{text}", [("Accept", "application/json")], 200),
        ("GET", f"/uri-res/N2Ns?{text}", [], 200),
        ("GET", f"/uri-res/N2R?{text}.bogus", [], 400),  # a refusal is read too
        ("GET", f"/timegate/{generic}", [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")], 200),  # followed
        ("GET", f"/timemap/link/{generic}", [], 200),
        ("GET", "/oai?verb=Identify", [], 200),
        ("POST", "/oai", [("Content-Type", "application/x-www-form-urlencoded")], 200),
        ("GET", f"/api/resolve?pdi={quoted}", [("Authorization", "Bearer nothing-at-all")], 401),
        ("GET", f"/api/resolve?pdi={quoted}", [("If-None-Match", '"x"')], 200),
        ("GET", f"/api/ls?pattern={urllib.parse.quote(generic, safe='')}", [], 200),
        ("GET", "/api/series", [], 200),
        ("GET", "/api/search?q=minutes", [], 200),
        ("GET", f"/api/manifest?series={S}", [], 200),
        ("GET", "/.well-known/pdi-keys", [], 200),
        ("GET", "/openapi.json", [], 200),
    ]


def test_a_script_of_another_origin_reads_every_public_endpoint(names: tuple[Archive, dict[str, str]]) -> None:
    client = app_client(names)
    ask = asking(client)
    for method, path, fields, status in _reads(names[1]):
        each = asking(client, b"verb=Identify") if method == "POST" else ask
        got = browser_fetch(each, READER, method, "http://resolver.test" + path, fields)
        assert got is not None, (method, path, fields)
        assert got.status == status, (method, path, got)
        assert (got.sent[0][0] == "OPTIONS") == needs_preflight(method, fields), got.sent
        if status == 200 and path.startswith("/uri-res/N2R?"):
            # what a reader of a memento needs (RFC 7089): its Link and Memento-Datetime, and its validator
            assert {"link", "etag", "memento-datetime", "x-pdi-sha256"} <= set(got.fields), got.fields
    # N2L's 302 and the TimeGate's were followed: each answer on the way passed the CORS check
    n2l = browser_fetch(ask, READER, "GET", f"http://resolver.test/uri-res/N2L?{names[1]['text']}")
    assert n2l is not None and [m for m, _ in n2l.sent] == ["GET", "GET"] and n2l.body == b"open minutes of the board\n"


def test_a_range_is_read_with_its_content_range(names: tuple[Archive, dict[str, str]]) -> None:
    got = browser_fetch(asking(app_client(names)), READER, "GET",
                        f"http://resolver.test/uri-res/N2R?{names[1]['text']}", [("Range", "bytes=5-11")])
    assert got is not None and got.status == 206 and got.body == b"minutes"
    assert got.fields["content-range"] == "bytes 5-11/26" and got.fields["accept-ranges"] == "bytes"


def test_the_write_api_is_not_open_to_other_origins(names: tuple[Archive, dict[str, str]]) -> None:
    client = app_client(names)
    ask = asking(client, b"{}")
    token = [("Authorization", f"Bearer {names[1]['token']}")]
    for method, path in (("POST", "/api/deposit"), ("GET", "/api/audit"), ("POST", "/api/withdraw")):
        assert browser_fetch(ask, READER, method, "http://resolver.test" + path, token) is None, path
    # a preflight of a method no read route takes: answered as any OPTIONS (not a 500), and refused by the browser
    text = names[1]["text"]
    pre = client.options(f"/uri-res/N2R?{text}", headers={"Origin": READER, "Access-Control-Request-Method": "DELETE"})
    assert pre.status_code == 204 and pre.headers["allow"] == "GET, HEAD, OPTIONS"
    assert not [k for k in pre.headers if k.startswith("access-control-")], pre.headers
    assert browser_fetch(ask, READER, "DELETE", f"http://resolver.test/uri-res/N2R?{text}") is None
    # a PUT of a read path is never sent either
    assert browser_fetch(ask, READER, "PUT", "http://resolver.test/oai") is None


def test_nothing_is_given_a_script_that_reads_with_cookies(names: tuple[Archive, dict[str, str]]) -> None:
    ask = asking(app_client(names))
    url = f"http://resolver.test/uri-res/N2R?{names[1]['text']}"
    assert browser_fetch(ask, READER, "GET", url, credentials="omit") is not None
    assert browser_fetch(ask, READER, "GET", url, credentials="include") is None  # no Allow-Credentials, ever


def test_the_annotation_server_says_its_own_cors_once(names: tuple[Archive, dict[str, str]]) -> None:
    ask = asking(app_client(names))
    got = browser_fetch(ask, READER, "GET", "http://resolver.test/api/annotations/", [("Accept", "application/ld+json")])
    assert got is not None and got.status == 200 and "etag" in got.fields
    answer = ask("GET", "http://resolver.test/api/annotations/", [("Origin", READER)])
    assert [v for k, v in answer.fields if k.lower() == "access-control-allow-origin"] == ["*"]


def test_listed_origins_are_named_and_others_refused(names: tuple[Archive, dict[str, str]]) -> None:
    client = app_client(names, CrossOrigin.parse([READER + "/", "http://localhost:8080"]))
    ask = asking(client)
    text = names[1]["text"]
    url = f"http://resolver.test/uri-res/N2R?{text}"
    got = browser_fetch(ask, READER, "GET", url, [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")])
    assert got is not None and got.status == 200 and "link" in got.fields
    answer = ask("GET", url, [("Origin", READER)])
    assert get(answer.fields, "Access-Control-Allow-Origin") == READER
    assert browser_fetch(ask, "http://localhost:8080", "GET", url) is not None
    assert browser_fetch(ask, OTHER, "GET", url) is None
    assert browser_fetch(ask, "http://localhost:8081", "GET", url) is None
    for origin in (None, READER, OTHER):  # every answer says it varies by Origin (Fetch §3.2.5), a preflight's too
        fields = [] if origin is None else [("Origin", origin)]
        vary = get(ask("GET", url, fields).fields, "Vary") or ""
        assert "origin" in [v.strip().lower() for v in vary.split(",")], (origin, vary)
        pre = ask("OPTIONS", url, [*fields, ("Access-Control-Request-Method", "GET")])
        assert "origin" in (get(pre.fields, "Vary") or "").lower(), pre


def test_none_turns_it_off(names: tuple[Archive, dict[str, str]]) -> None:
    client = app_client(names, CrossOrigin.parse(["none"]))
    ask = asking(client)
    for method, path, fields, _ in _reads(names[1]):
        each = asking(client, b"verb=Identify") if method == "POST" else ask
        assert browser_fetch(each, READER, method, "http://resolver.test" + path, fields) is None, path
        answer = each(method, "http://resolver.test" + path, [("Origin", READER), *fields])
        assert not [k for k, _ in answer.fields if k.lower().startswith("access-control-")], path


def test_a_private_answer_read_with_a_token_is_never_given_to_others(names: tuple[Archive, dict[str, str]]) -> None:
    archive, named = names
    app = create_app(archive.location, archive=archive)
    with on_own_protocol(app, public=True) as url, httpx.Client(base_url=url) as client:
        ask = asking(client)
        sealed = f"{url}/uri-res/N2R?{named['sealed']}"
        token = [("Authorization", f"Bearer {named['token']}")]
        for _ in range(2):
            got = browser_fetch(ask, READER, "GET", sealed, token)
            assert got is not None and got.status == 200 and got.body == b"sealed minutes of the board\n"
            assert "private" in got.fields["cache-control"] and len(app.state.cache) == 0
            for who in ([], [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")]):
                other = browser_fetch(ask, READER, "GET", sealed, who)
                assert other is not None and other.status in (403, 404) and b"sealed minutes" not in other.body
            raw = client.get(sealed)  # the connection's own path: not kept, not given
            assert raw.status_code in (403, 404) and raw.headers["access-control-allow-origin"] == "*"


def _raw(port: int, head: str) -> tuple[int, list[tuple[str, str]]]:
    """The status and header fields of the answer to one request ``head`` sent on a new connection, as sent (no
    Date)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1"))
        got = b""
        while b"\r\n\r\n" not in got:
            more = sock.recv(65536)
            assert more, got
            got += more
    status, *lines = got.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return int(status.split()[1]), [(k.lower(), v) for k, v in (line.split(": ", 1) for line in lines)
                                    if k.lower() != "date"]


@pytest.mark.parametrize("cors", ["*", "listed", "none"])
def test_answers_the_connections_write_carry_the_apps_fields(names: tuple[Archive, dict[str, str]], cors: str) -> None:
    """An N2R's first asking (the public path), its second (the compiled path, or the parser's with an Origin), a
    304 and N2L's 302 from the name's fact, each asked as a browser's navigation (no Origin) and as its fetch
    (an Origin listed, or not): the CORS fields the configuration says, whichever path answers (a Host the cache
    has not seen for each origin: every path)."""
    archive, named = names
    policy = CrossOrigin.parse({"*": ["*"], "listed": [READER], "none": ["none"]}[cors])
    app = create_app(archive.location, archive=archive, cors=policy)
    text = named["text"]
    tag = '"' + archive.resolve(text).sha256 + '"'
    with on_own_protocol(app, public=True) as url:
        port = int(url.rsplit(":", 1)[1])
        for n, origin in enumerate(("", READER, OTHER)):
            fields = f"Host: cors{n}.test\r\n" + (f"Origin: {origin}\r\n" if origin else "")
            for request, status in ((f"GET /uri-res/N2R?{text} HTTP/1.1\r\n{fields}\r\n", 200),
                                    (f"GET /uri-res/N2R?{text} HTTP/1.1\r\n{fields}\r\n", 200),
                                    (f"GET /uri-res/N2R?{text} HTTP/1.1\r\n{fields}If-None-Match: {tag}\r\n\r\n", 304),
                                    (f"GET /uri-res/N2L?{text} HTTP/1.1\r\n{fields}\r\n", 302)):
                got, answer = _raw(port, request)
                assert got == status, (request, answer)
                said = [(k, v) for k, v in answer if k.startswith("access-control-")]
                varied = [m.strip() for k, v in answer if k == "vary" for m in v.split(",")]
                said = [*([("vary", "Origin")] if "Origin" in varied else []), *said]  # Vary's member, in its one field
                assert said == _expected(cors, origin), (request, answer)
                if origin:  # what a browser makes of it
                    allowed = cors == "*" or (cors == "listed" and origin == READER)
                    assert cors_check(origin, "same-origin", answer) == allowed
                    if allowed and status == 200:
                        assert {"etag", "link", "memento-datetime"} <= set(exposed(answer, "same-origin"))


def _expected(cors: str, origin: str) -> list[tuple[str, str]]:
    """The CORS fields an answer to a request from ``origin`` (empty: none) carries, configured ``cors``: as
    docs/reference/resolver.md says them."""
    expose = ("Accept-Ranges, Allow, Content-Location, Content-Range, ETag, Link, Location, Memento-Datetime,"
              " PDI-Capture, Retry-After, Vary, Warning, WWW-Authenticate, X-PDI-SHA256, X-Request-Id")
    if cors == "*":
        return [("access-control-allow-origin", "*"), ("access-control-expose-headers", expose)]
    if cors == "listed":
        named = [("access-control-allow-origin", origin), ("access-control-expose-headers", expose)]
        return [("vary", "Origin"), *(named if origin == READER else [])]
    return []


#: The request fields the resolver's readers send (docs/reference/resolver.md, "Scripts of other origins").
READER_FIELDS = {"accept", "accept-datetime", "accept-language", "authorization", "content-type", "if-match",
                 "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "prefer", "range",
                 "x-request-id"}
_FIELD_NAMES = st.sampled_from(sorted(READER_FIELDS | {"x-requested-with", "cookie2", "dnt", "x-pdi-anything",
                                                      "content-language", "accept-encoding", "slug"}))
_VALUES = st.sampled_from(["bytes=0-9", "bytes=-5", "bytes=9-0", "text/plain", "application/json", "en-GB", "*/*",
                           "(x)", "W/\"a\"", "Thu, 01 Jan 2099 00:00:00 GMT", "x" * 200])


@pytest.fixture(scope="module")
def shared(names: tuple[Archive, dict[str, str]]) -> TestClient:
    """One test client of the resolver answering as configured by default, for every example of a property."""
    return app_client(names)


@settings(max_examples=150)
@given(method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "get"]),
       fields=st.lists(st.tuples(_FIELD_NAMES, _VALUES), max_size=4, unique_by=lambda f: f[0]),
       path=st.sampled_from(["/uri-res/N2R?{text}", "/oai", "/api/deposit", "/view?pdi={text}", "/timegate/{generic}"]))
def test_a_browser_sends_exactly_what_a_reader_may(names: tuple[Archive, dict[str, str]], shared: TestClient,
                                                   method: str, fields: list[tuple[str, str]], path: str) -> None:
    """Whatever a script asks, the browser lets it through exactly when it is a read of a read path (GET or HEAD;
    POST where OAI-PMH takes it) whose fields that are not safelisted are among those readers send."""
    url = "http://resolver.test" + path.format(**names[1])
    got = browser_fetch(asking(shared), READER, method, url, fields)
    fetch_unsafe = set(unsafe_request_header_names(fields))
    read_path = not path.startswith(("/api/deposit", "/view"))
    methods = {"GET", "HEAD", "POST"} if path == "/oai" else {"GET", "HEAD"}
    method = method.upper()  # fetch() normalizes the methods it knows (Fetch §2.2.1)
    if not read_path:  # no answer there says who may read it
        expected = False
    elif not needs_preflight(method, fields):  # sent at once: whatever it answers (a 405 too) says who may read it
        expected = True
    else:
        expected = method in methods and fetch_unsafe <= READER_FIELDS
    assert (got is not None) == expected, (method, fields, path, got)


_HOSTS = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?){0,3}",
                       fullmatch=True)


@given(scheme=st.sampled_from(["http", "https", "HTTP", "Https"]), host=_HOSTS,
       port=st.one_of(st.none(), st.integers(1, 65535), st.sampled_from([80, 443])), slash=st.booleans())
def test_a_configured_origin_is_spelled_as_a_browser_sends_it(scheme: str, host: str, port: int | None,
                                                              slash: bool) -> None:
    given_text = f"{scheme}://{host}" + ("" if port is None else f":{port}") + ("/" if slash else "")
    split = urllib.parse.urlsplit(given_text)  # the standard library's reading: scheme and host in lower case
    default = {"http": 80, "https": 443}[split.scheme]
    shown = f"{split.scheme}://{split.hostname}" + ("" if split.port in (None, default) else f":{split.port}")
    assert serialized_origin(given_text) == shown


@pytest.mark.parametrize("text", ["null", "ftp://a.example", "https://a.example/path", "https://user@a.example",
                                  "https://a.example:0", "https://a.example:65536", "a.example", "https://a.example?x",
                                  "https://-a.example", "*.example.org"])
def test_what_is_not_an_origin_is_refused(text: str) -> None:
    with pytest.raises(ParseError):
        CrossOrigin.parse([text])


def test_star_or_none_with_origins_is_refused() -> None:
    assert CrossOrigin.parse([]) == CrossOrigin.parse(["*"]) == CrossOrigin(None)
    for mixed in (["*", READER], ["none", READER], ["*", "none"]):
        with pytest.raises(ParseError):
            CrossOrigin.parse(mixed)


def test_pdi_serve_refuses_an_origin_it_cannot_read(tmp_path: Path) -> None:
    from pdi.cli import cli

    Archive.init(tmp_path / "archive").close()
    result = CliRunner().invoke(cli, ["serve", "--archive", str(tmp_path / "archive"), "--port", "0",
                                      "--cors-origin", "https://a.example/path"])
    assert result.exit_code == 2 and "--cors-origin" in result.output and "scheme://host[:port]" in result.output


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_a_read_path_with_a_trailing_slash_is_followed(names: tuple[Archive, dict[str, str]], cors: str) -> None:
    """``/api/search/`` (and ``/oai/``, ``/openapi.json/`` …) is redirected to the path without the slash: a script's
    ``fetch`` follows that redirect only if it passes the CORS check (Fetch §4.4), preflighted or not."""
    client = app_client(names, CrossOrigin.parse([READER]) if cors == "listed" else None)
    ask = asking(client)
    for path, fields in (("/api/search/?q=minutes", []), ("/oai/?verb=Identify", []),
                         ("/openapi.json/", [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")]),
                         ("/.well-known/pdi-keys/", [("X-Request-Id", "abc")])):
        got = browser_fetch(ask, READER, "GET", "http://resolver.test" + path, fields)
        assert got is not None and got.status == 200, path
        assert [m for m, _ in got.sent if m == "GET"] == ["GET", "GET"], got.sent  # the redirect, then the read
        if cors == "listed":
            assert browser_fetch(ask, OTHER, "GET", "http://resolver.test" + path, fields) is None
    # a path no read route is redirected to is left as it was: a page's, or the write API's
    for path in ("/search/", "/api/deposit/"):
        answer = client.get(path, headers={"Origin": READER}, follow_redirects=False)
        assert "access-control-allow-origin" not in answer.headers, (path, answer.status_code, answer.headers)


def _refused(port: int, sent: bytes, count: int) -> list[tuple[int, list[tuple[str, str]]]]:
    """The status and fields of the answers (read by h11, an HTTP/1.1 parser independent of the server's) to
    ``count`` requests sent at once as ``sent`` on a new connection, read until the server closes it."""
    import h11

    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(sent)
        raw = b""
        while piece := sock.recv(65536):
            raw += piece
    reader = h11.Connection(h11.CLIENT)
    reader.receive_data(raw)
    reader.receive_data(b"")
    answers = []
    for _ in range(count):
        reader.send(h11.Request(method="GET", target="/", headers=[("Host", "a")]))
        reader.send(h11.EndOfMessage())
        while True:
            event = reader.next_event()
            if isinstance(event, h11.Response):
                answers.append((event.status_code, [(k.decode(), v.decode("latin-1")) for k, v in event.headers]))
            elif isinstance(event, h11.EndOfMessage) or event in (h11.NEED_DATA, h11.PAUSED):
                break
            elif isinstance(event, h11.ConnectionClosed):
                return answers
        if reader.our_state is h11.MUST_CLOSE or reader.their_state is not h11.DONE:
            break
        reader.start_next_cycle()
    return answers


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_the_connections_own_refusals_of_a_read_path_are_read_by_a_script(names: tuple[Archive, dict[str, str]],
                                                                         cors: str) -> None:
    """A refusal ``pdi serve``'s connection writes before the app (a ``431`` head, a ``503`` past the requests one
    connection may pipeline) of a read path whose request line was read carries the CORS fields the app's answers
    of it do: a script of an origin allowed reads it (``fetch_cors``' CORS check), the ``503``'s ``Retry-After``
    too; of another path, none."""
    archive, _ = names
    policy = CrossOrigin.parse([READER] if cors == "listed" else ["*"])
    app = create_app(archive.location, archive=archive, cors=policy)
    many = "".join(f"X-F{i}: {i}\r\n" for i in range(MAX_HEAD_FIELDS + 1))
    with on_own_protocol(app) as url:
        port = int(url.rsplit(":", 1)[1])
        for origin in (READER, OTHER):
            allowed = cors == "*" or origin == READER
            for target, read in (("/api/search?q=minutes", True), ("http://a/api/search?q=minutes", True),
                                 ("/oai?verb=Identify", True), ("/api/deposit", False), ("/search?q=minutes", False)):
                head = f"GET {target} HTTP/1.1\r\nHost: a\r\nOrigin: {origin}\r\n{many}\r\n".encode()
                [(status, fields)] = _refused(port, head, 1)
                assert status == 431, (target, status)
                assert cors_check(origin, "same-origin", fields) == (read and allowed), (target, fields)
                if not read:
                    assert not [k for k, _ in fields if k.startswith("access-control-")], (target, fields)
            asked = f"GET /api/series HTTP/1.1\r\nHost: a\r\nOrigin: {origin}\r\n\r\n".encode()
            answers = _refused(port, asked * 40, 40)
            assert [s for s, _ in answers] == [200] * (MAX_PIPELINED + 1) + [503]
            busy = answers[-1][1]
            assert cors_check(origin, "same-origin", busy) == allowed, busy
            if allowed:
                assert exposed(busy, "same-origin")["retry-after"] == "1"
    # with none, nothing of CORS, as the app's own answers
    app = create_app(archive.location, archive=archive, cors=CrossOrigin.parse(["none"]))
    with on_own_protocol(app) as url:
        head = f"GET /api/search HTTP/1.1\r\nHost: a\r\nOrigin: {READER}\r\n{many}\r\n".encode()
        [(status, fields)] = _refused(int(url.rsplit(":", 1)[1]), head, 1)
        assert status == 431 and not [k for k, _ in fields if k.startswith("access-control-")], fields


async def _nothing(request: Request) -> Response:
    return Response()


_READ_ROUTES = [Route("/api/search", _nothing), Route("/uri-res/{service}", _nothing),
                Route("/timegate/{target:path}", _nothing), Route("/oai", _nothing, methods=["GET", "POST"])]
_SEGMENT = st.sampled_from(["api", "search", "uri-res", "N2R", "timegate", "oai", "x", "%2F", "a%20b", "", "é"])


@settings(max_examples=300)
@given(segments=st.lists(_SEGMENT, min_size=1, max_size=4), query=st.sampled_from(["", "?q=a", "?a/b?c"]),
       absolute=st.booleans(), origins=st.sampled_from([[], [READER], [OTHER], [READER, READER]]))
def test_a_refusal_says_cors_exactly_for_a_read_routes_path(segments: list[str], query: str, absolute: bool,
                                                            origins: list[str]) -> None:
    """A refusal's CORS lines are given for a target whose path one of the read routes takes, as Starlette's own
    routing matches it (the oracle: the target's path by RFC 9112 §3.2, read by ``urllib.parse`` in absolute form,
    percent-decoded), in origin or absolute form; and name the one ``Origin`` sent when it is listed, as the app's answers do."""
    from pdi.server.http.cors import ReadPaths

    path = "/" + "/".join(segments)
    target = ("http://resolver.test" if absolute else "") + path + query
    # RFC 9112 §3.2: origin form is absolute-path [ "?" query ] (``//a`` a path, no authority); absolute form a URI
    found = urllib.parse.unquote(urllib.parse.urlsplit(target).path if absolute else target.partition("?")[0])
    scope = {"type": "http", "path": found, "method": "GET", "root_path": ""}
    matched = any(route.matches(scope)[0] != Match.NONE for route in _READ_ROUTES)
    headers = [(b"host", b"a"), *((b"origin", o.encode()) for o in origins)]
    wire = target.encode("utf-8")
    for policy in (CrossOrigin.parse(["*"]), CrossOrigin.parse([READER])):
        lines = ReadPaths(_READ_ROUTES).refusal_lines(policy, wire, headers)
        if not matched:
            assert lines == b"", (target, lines)
            continue
        said = [tuple(line.split(": ", 1)) for line in lines.decode("latin-1").split("\r\n") if line]
        allowed = policy.origins is None or origins == [READER]
        assert cors_check(READER, "same-origin", said) == allowed, (target, said)
    assert ReadPaths(_READ_ROUTES).refusal_lines(CrossOrigin.parse(["none"]), wire, headers) == b""


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_a_target_too_long_is_a_414_a_script_reads(names: tuple[Archive, dict[str, str]], cors: str) -> None:
    """A script's ``fetch`` of a read path with a query past the longest target taken (a name with a long URL
    in it): the ``414`` passes the CORS check for an origin allowed (``fetch_cors``), so the script reads the status,
    not a network error (found in review, 2026-12-01: refused before the request's fields were read, it carried no
    CORS field); of the write API or a page, none. Cut by TCP anywhere, the same."""
    from pdi.server.process.limits import MAX_TARGET_OCTETS

    archive, _ = names
    policy = CrossOrigin.parse([READER] if cors == "listed" else ["*"])
    app = create_app(archive.location, archive=archive, cors=policy)
    long_query = "a" * (MAX_TARGET_OCTETS + 10)
    with on_own_protocol(app) as url:
        port = int(url.rsplit(":", 1)[1])
        for origin in (READER, OTHER):
            allowed = cors == "*" or origin == READER
            for target, read in (("/api/search?q=", True), ("/oai?verb=GetRecord&identifier=", True),
                                 ("/api/deposit?x=", False), ("/search?q=", False)):
                head = f"GET {target}{long_query} HTTP/1.1\r\nHost: a\r\nOrigin: {origin}\r\n\r\n".encode()
                for sent in (head, *(head[:cut] for cut in (20, len(target) + 4, MAX_TARGET_OCTETS))):
                    if sent is head:
                        [(status, fields)] = _refused(port, head, 1)
                    else:  # the same head in two writes (TCP may cut it anywhere)
                        [(status, fields)] = _refused_in_two(port, sent, head[len(sent):])
                    assert status == 414, (target, status)
                    assert cors_check(origin, "same-origin", fields) == (read and allowed), (target, fields)
                    if not read:
                        assert not [k for k, _ in fields if k.startswith("access-control-")], (target, fields)


def _refused_in_two(port: int, first: bytes, rest: bytes) -> list[tuple[int, list[tuple[str, str]]]]:
    """:func:`_refused` of one request sent in two writes, a moment apart."""
    import time

    import h11

    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(first)
        time.sleep(0.05)
        sock.sendall(rest)
        raw = b""
        while piece := sock.recv(65536):
            raw += piece
    reader = h11.Connection(h11.CLIENT)
    reader.send(h11.Request(method="GET", target="/", headers=[("Host", "a")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(raw)
    event = reader.next_event()
    assert isinstance(event, h11.Response), raw[:300]
    return [(event.status_code, [(k.decode(), v.decode("latin-1")) for k, v in event.headers])]


def _one_vary(fields: list[tuple[str, str]]) -> bool:
    """RFC 9110 §12.5.5: ``Vary`` is a list of field names; one field naming each once (compared without case, as
    field names are, §5.1), or none."""
    varies = [v for k, v in fields if k.lower() == "vary"]
    if not varies:
        return True
    members = [m.strip().lower() for m in varies[0].split(",")]
    return len(varies) == 1 and len(members) == len(set(members)) and all(members)


@pytest.mark.parametrize("cors", ["*", "listed", "none"])
def test_every_answer_says_one_vary(names: tuple[Archive, dict[str, str]], cors: str) -> None:
    """Every answer of the resolver's routes (N2R, N2L, N2Ls, N2C, the read API, TimeGate and TimeMap, OAI-PMH,
    the annotation container, the pages, the write API), asked with an ``Origin`` (listed, or not) and
    ``Accept-Encoding``, or without, whichever path answers it (the app's, the connection's first asking, the
    compiled path's, a ``304``): at most one ``Vary`` field, each member once (found in review, 2026-12-01: with
    ``--cors-origin`` listing origins, ``Vary: Origin`` came as a field of its own before the answer's ``Vary``)."""
    archive, named = names
    text, generic = named["text"], named["generic"]
    quoted = urllib.parse.quote(text, safe="")
    tag = '"' + archive.resolve(text).sha256 + '"'
    policy = CrossOrigin.parse({"*": ["*"], "listed": [READER], "none": ["none"]}[cors])
    app = create_app(archive.location, archive=archive, cors=policy)
    targets = [f"/uri-res/N2R?{text}", f"/uri-res/N2L?{text}", f"/uri-res/N2Ls?{generic}", f"/uri-res/N2C?{text}",
               f"/uri-res/N2R?{text}.bogus", f"/timegate/{generic}", f"/timemap/link/{generic}", "/oai?verb=Identify",
               f"/api/resolve?pdi={quoted}", "/api/series", "/api/search?q=minutes", f"/api/manifest?series={S}",
               "/.well-known/pdi-keys", "/openapi.json", "/api", "/", f"/view?pdi={quoted}", "/search?q=minutes",
               "/api/annotations/", "/api/deposit", "/robots.txt"]
    with on_own_protocol(app, public=True) as url:
        port = int(url.rsplit(":", 1)[1])
        for n, origin in enumerate(("", READER, OTHER)):
            fields = f"Host: vary{n}.test\r\nAccept-Encoding: gzip, br\r\n" + (f"Origin: {origin}\r\n" if origin else "")
            for target in targets:
                for method, more in (("GET", ""), ("GET", ""), ("HEAD", ""), ("GET", f"If-None-Match: {tag}\r\n")):
                    status, answer = _raw(port, f"{method} {target} HTTP/1.1\r\n{fields}{more}\r\n")
                    assert _one_vary(answer), (method, target, origin, status, answer)
            preflight = (f"OPTIONS /api/series HTTP/1.1\r\n{fields}Access-Control-Request-Method: GET\r\n"
                         "Access-Control-Request-Headers: accept-datetime\r\n\r\n")
            status, answer = _raw(port, preflight)
            assert _one_vary(answer), (status, answer)


_MEMBER = st.sampled_from(["Accept", "accept", "Origin", "ORIGIN", "Accept-Datetime", "Authorization", "Cookie", "*"])
_FIELD = st.one_of(
    st.tuples(st.sampled_from(["vary", "Vary", "VARY"]), st.lists(_MEMBER, min_size=1, max_size=3)),
    st.tuples(st.sampled_from(["etag", "cache-control", "x-a"]), st.just(["v"])))


@settings(max_examples=300)
@given(fields=st.lists(_FIELD, max_size=6), spaced=st.booleans())
def test_one_vary_names_every_member_once(fields: list[tuple[str, list[str]]], spaced: bool) -> None:
    """The head's ``Vary`` fields made one (:func:`~pdi.server.http.cors.one_vary_head`), read back by h11 (an
    HTTP/1.1 parser of its own): one ``Vary`` when there were any, naming every member sent, each once without
    regard to case (RFC 9110 §5.1, §12.5.5; ``*`` alone if sent), and the other fields as they were, in order."""
    import h11

    from pdi.server.http.cors import one_vary_head

    sep = ", " if spaced else ","
    lines = "".join(f"{k}: {sep.join(v)}\r\n" for k, v in fields)
    made = one_vary_head(f"HTTP/1.1 200 OK\r\n{lines}content-length: 2\r\n\r\nok".encode())
    reader = h11.Connection(h11.CLIENT)
    reader.send(h11.Request(method="GET", target="/", headers=[("Host", "a")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(made)
    event = reader.next_event()
    assert isinstance(event, h11.Response)
    got = [(k.decode(), v.decode()) for k, v in event.headers]
    sent = {m.lower() for k, v in fields if k.lower() == "vary" for m in v}
    varies = [v for k, v in got if k == "vary"]
    if not sent:
        assert not varies
    else:
        assert len(varies) == 1
        members = [m.strip().lower() for m in varies[0].split(",")]
        assert members == ["*"] if "*" in sent else sorted(members) == sorted(sent), (fields, varies)
    assert [(k, v) for k, v in got if k != "vary"] == [
        *((k.lower(), v[0]) for k, v in fields if k.lower() != "vary"), ("content-length", "2")]
    assert bytes(reader.next_event().data) == b"ok"  # type: ignore[union-attr]


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_a_503_past_the_servers_connections_is_read_by_a_script(names: tuple[Archive, dict[str, str]],
                                                               cors: str) -> None:
    """A request whose head came while the server holds ``--max-connections`` (uvicorn's ``limit_concurrency``) is
    answered ``503`` without the app: of a read path, with the CORS fields the app gives it, so that a script of an
    origin allowed reads it (``fetch_cors``' CORS check), its ``Retry-After`` too; of the write API, none (found in
    review, 2026-12-01: none at all, a network error to the script)."""
    from server_helpers import in_thread

    from pdi.server.process.connection import answering_protocol
    from pdi.server.process.run import listening_socket

    archive, _ = names
    policy = CrossOrigin.parse([READER] if cors == "listed" else ["*"])
    app = create_app(archive.location, archive=archive, cors=policy)
    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(app, [sock], join=30, log_level="critical", loop="uvloop", limit_concurrency=2,
                   http=answering_protocol(10, app.state.cache, None, None)):
        port = sock.getsockname()[1]
        held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(2)]
        try:
            for conn in held:
                conn.sendall(b"GET /api/series HTTP/1.1\r\n")  # a request begun, and never ended
            for origin in (READER, OTHER):
                allowed = cors == "*" or origin == READER
                for target, read in (("/api/series", True), ("/api/deposit", False)):
                    [(status, fields)] = _refused(port, f"GET {target} HTTP/1.1\r\nHost: a\r\nOrigin: {origin}\r\n"
                                                        "\r\n".encode(), 1)
                    assert status == 503, (target, fields)
                    assert cors_check(origin, "same-origin", fields) == (read and allowed), (target, fields)
                    if read and allowed:
                        assert exposed(fields, "same-origin")["retry-after"] == "1"
                    if not read:
                        assert not [k for k, _ in fields if k.startswith("access-control-")], (target, fields)
        finally:
            for conn in held:
                conn.close()


def _asked_of_app(app: Starlette, target: str, origin: str) -> list[tuple[str, str]]:
    """The header fields of the app's own answer to a GET of ``target`` (its fragment left off, as a client does)
    from ``origin``, asked of it as an ASGI server would (no bound on the target: httpx has one)."""
    import asyncio

    path, _, query = target.partition("#")[0].partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": urllib.parse.unquote(path), "raw_path": path.encode(), "query_string": query.encode(),
             "root_path": "", "headers": [(b"host", b"a"), (b"origin", origin.encode())],
             "client": ("127.0.0.1", 1), "server": ("a", 80)}
    started: list[tuple[str, str]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.start":
            started.extend((k.decode(), v.decode("latin-1")) for k, v in message["headers"])  # type: ignore[attr-defined]

    asyncio.run(app(scope, receive, send))
    return [(k.lower(), v) for k, v in started]


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_a_path_too_long_is_a_414_read_as_the_apps_answer_of_that_path_is(names: tuple[Archive, dict[str, str]],
                                                                           cors: str) -> None:
    """A target past the longest taken with no ``?`` (a path too long, kept only in part): its ``414`` carries the
    CORS fields exactly when the app's own answer of the whole path does (the oracle: that answer, asked of the app
    itself, which has no bound on a target), and a script of an origin allowed reads it (``fetch_cors``); where the
    path goes on past the part kept with a ``/`` (or ``%2F``), no RFC 2169 service's (found in review, 2026-12-01:
    such a 414 carried no CORS field, a network error to the script)."""
    from pdi.server.process.limits import MAX_TARGET_OCTETS

    archive, _ = names
    policy = CrossOrigin.parse([READER] if cors == "listed" else ["*"])
    app = create_app(archive.location, archive=archive, cors=policy)
    long = "a" * MAX_TARGET_OCTETS
    at_cut = "a" * (MAX_TARGET_OCTETS - len("/uri-res/") - 1)  # the cut falls inside the %2F after it
    targets = [f"/timegate/{long}", f"/timegate/{long}/b", f"/uri-res/N2R{long}", f"/uri-res/{long}/x",
               f"/uri-res/{long}%2Fx", f"/uri-res/{at_cut}%2Fx", f"/uri-res/{at_cut}%2", f"/uri-res/{long}?x/y",
               f"/uri-res/{long}#x/y", f"/timemap/link/page/{long}/x", f"/api/deposit/{long}", f"/search{long}",
               f"/api/search{long}"]
    with on_own_protocol(app) as url:
        port = int(url.rsplit(":", 1)[1])
        for target in targets:
            for origin in (READER, OTHER):
                allowed = cors == "*" or origin == READER
                own = _asked_of_app(app, target, origin)
                read = any(k == "access-control-allow-origin" or (k == "vary" and "origin" in v.lower())
                           for k, v in own)
                head = f"GET {target} HTTP/1.1\r\nHost: a\r\nOrigin: {origin}\r\n\r\n".encode()
                cuts = (MAX_TARGET_OCTETS + 4, MAX_TARGET_OCTETS + 5, MAX_TARGET_OCTETS + 6) if "%2" in target else ()
                for cut in (None, *cuts):  # in one write, or in two (TCP may cut it anywhere): the same
                    if cut is None:
                        [(status, fields)] = _refused(port, head, 1)
                    else:
                        [(status, fields)] = _refused_in_two(port, head[:cut], head[cut:])
                    assert status == 414, (target[:40], status)
                    said = [(k, v) for k, v in fields if k.startswith("access-control-") or k == "vary"]
                    assert bool(said) == read, (target[:30], target[-10:], cut, said, own)
                    assert cors_check(origin, "same-origin", fields) == (read and allowed), (target[:30], fields)
                    assert _one_vary(fields), fields


#: Request heads the parser refuses (400) before the app, each of ``target`` (``{line}``: the field lines, where
#: ``{origin}`` is the Origin's): a field value holding a control character a browser's fetch sends (Fetch's header
#: value forbids only NUL, CR and LF; Chromium sends it, before Origin), a line that is no field, a target with a
#: '#' or a control character.
_REFUSED_HEADS = [
    "GET {target} HTTP/1.1\r\nHost: a\r\nX-Request-Id: a\x01b\r\n{origin}Accept: */*\r\n\r\n",
    "GET {target} HTTP/1.1\r\nHost: a\r\nPrefer: a\x7fb\r\n{origin}\r\n",
    "GET {target} HTTP/1.1\r\nX Bad: 1\r\nHost: a\r\n{origin}\r\n",
    "GET {target} HTTP/1.1\r\nHost: a\r\n{origin}X-Request-Id: a\x01b\r\n\r\n",
    "GET {target}#x HTTP/1.1\r\nHost: a\r\n{origin}\r\n",
    "GET {target}\x01 HTTP/1.1\r\nHost: a\r\n{origin}\r\n",
]


@pytest.mark.parametrize("cors", ["*", "listed"])
def test_a_head_the_parser_refuses_is_a_400_read_as_the_apps_answer_of_its_path_is(
        names: tuple[Archive, dict[str, str]], cors: str) -> None:
    """A request head ``pdi serve``'s parser refuses before the app (``400``) carries the CORS fields the app's own
    answer of its target's path does (the oracle: that answer, asked of the app), naming its ``Origin`` wherever the
    field is, before or after the line refused; so a script of an origin allowed reads the ``400`` (``fetch_cors``),
    and of the write API or a page, nothing of CORS. Sent in one write or cut by TCP anywhere, the same (found in
    review, 2026-12-01: refused before its Origin was read, it carried no Access-Control-Allow-Origin, and a script's
    fetch with a control character in a field's value failed as a network error)."""
    archive, _ = names
    policy = CrossOrigin.parse([READER] if cors == "listed" else ["*"])
    app = create_app(archive.location, archive=archive, cors=policy)
    with on_own_protocol(app) as url:
        port = int(url.rsplit(":", 1)[1])
        for target in ("/api/search?q=a", "/uri-res/N2R?urn:pdi:x", "/api/deposit", "/search?q=a"):
            for origin in (READER, OTHER):
                allowed = cors == "*" or origin == READER
                own = _asked_of_app(app, target, origin)
                read = any(k == "access-control-allow-origin" or (k == "vary" and "origin" in v.lower())
                           for k, v in own)
                for shape in _REFUSED_HEADS:
                    head = shape.format(target=target, origin=f"Origin: {origin}\r\n").encode("latin-1")
                    for cut in (None, 4, head.index(b"\r\n") + 1, head.index(b"Origin") + 10, len(head) - 2):
                        if cut is None:
                            [(status, fields)] = _refused(port, head, 1)
                        else:
                            [(status, fields)] = _refused_in_two(port, head[:cut], head[cut:])
                        assert status == 400, (shape, target, cut, status)
                        said = [(k, v) for k, v in fields if k.startswith("access-control-") or k == "vary"]
                        assert bool(said) == read, (shape, target, cut, said, own)
                        assert cors_check(origin, "same-origin", fields) == (read and allowed), (shape, cut, fields)
                        assert _one_vary(fields), fields


def test_a_refused_head_whose_end_never_comes_is_answered_at_the_head_deadline(
        names: tuple[Archive, dict[str, str]]) -> None:
    """With origins listed, the ``400`` of a head the parser refuses waits for the head's empty line, which its
    ``Origin`` may come before; a head that never ends is answered at the request-head deadline, with the fields of
    what came: its ``Origin`` named where its line came whole, else ``Vary: Origin`` alone."""
    import time

    import h11
    from server_helpers import in_thread

    from pdi.server.process.connection import answering_protocol
    from pdi.server.process.run import listening_socket

    archive, _ = names
    app = create_app(archive.location, archive=archive, cors=CrossOrigin.parse([READER]))
    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(app, [sock], join=30, log_level="critical", loop="uvloop",
                   http=answering_protocol(0.6, app.state.cache, None, None)):
        port = sock.getsockname()[1]
        for rest, named in ((f"Origin: {READER}\r\n", True), ("Origin: https://rea", False)):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                began = time.monotonic()
                conn.sendall(f"GET /api/search?q=a HTTP/1.1\r\nHost: a\r\nPrefer: a\x7fb\r\n{rest}".encode())
                raw = b""
                while piece := conn.recv(65536):
                    raw += piece
                waited = time.monotonic() - began
            reader = h11.Connection(h11.CLIENT)
            reader.send(h11.Request(method="GET", target="/", headers=[("Host", "a")]))
            reader.receive_data(raw)
            event = reader.next_event()
            assert isinstance(event, h11.Response) and event.status_code == 400, raw[:200]
            fields = [(k.decode(), v.decode("latin-1")) for k, v in event.headers]
            assert waited >= 0.5, waited
            assert cors_check(READER, "same-origin", fields) == named, fields
            assert ("vary", "Origin") in fields and _one_vary(fields), fields
