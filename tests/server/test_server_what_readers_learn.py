"""An anonymous reader learns nothing of private, hidden or embargoed documents, from any route (issue 22).

Two archives are built alike, on one pinned clock: the second holds, besides
everything the first holds, documents in a private series, in a hidden one,
under embargo (a whole document, a version of a public document, a capture
of a URL the first also holds captures of), a withdrawn hidden document, and
statements about them with words the public documents share. Every route
of the resolver's app and of the replay origin's app is asked, without a
token, what a stranger could ask — names of the public documents, of the
private and hidden ones, of names never minted, lists, counts, searches,
TimeMaps, every OAI-PMH verb — and the two archives must answer
byte for byte alike: status, every header (``ETag``, ``Link``, ``Vary``,
``Cache-Control`` …) and body (counts, resumption tokens). The routes are
read from the apps' own route tables: a route this test does not know how
to ask fails it, so a route added later cannot be forgotten here.

What the rule (:func:`pdi.archive.access.disclosure`) lets a reader learn
is the one exception, and it is asked for nothing here: a reader who names
an embargoed document exactly learns that it exists (``403``).
"""

from __future__ import annotations

import datetime
import itertools
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from server_helpers import Clock
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query
from pdi.server.replay.origin import create_replay_app, replay_path
from pdi.signing import SigningKey
from support.pgcluster import TemporaryCluster

OPEN = "open.example.us"
CLOSED = "closed.example.us"
SECRET = "secret.example.us"
NOW = datetime.datetime(2026, 11, 24, 12, 0, 0, tzinfo=datetime.UTC)
#: When the apps answer (their archive's clock): after every deposit.
ASKED = NOW + datetime.timedelta(hours=2)
URL = "http://www.example.com/ruling.html"
SHARED = "minutes"  # a word of public and secret texts alike
#: The key both archives sign their manifests with: a manifest made without the secrets is the same JWS
#: (Ed25519 is deterministic, RFC 8032 §5.1.6) as the one an anonymous reader gets with them.
KEY = SigningKey.generate()


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _generic(name: str) -> str:
    return name.rsplit(".", 2)[0]


def _note(target: str, words: str) -> dict[str, object]:
    """A W3C Web Annotation of ``target`` (Web Annotation Data Model §3.1), its body ``words``."""
    return {"@context": "http://www.w3.org/ns/anno.jsonld", "type": "Annotation",
            "body": {"type": "TextualBody", "value": words}, "target": target}


def build(location: str, *, secrets: bool) -> dict[str, str]:
    """An archive at ``location``: the public documents, and with ``secrets`` the others; the names made."""
    clock = Clock(NOW)
    names: dict[str, str] = {}
    with Archive.init(location, clock=clock) as archive:
        for series in (OPEN, CLOSED, SECRET):
            archive.add_series(series)
        archive.set_series_access(CLOSED, "private")
        archive.set_series_access(SECRET, "hidden")
        if secrets:  # first in the catalog's order too (their own series: the public names are the same)
            early = str(archive.add(CLOSED, f"early closed {SHARED}\n".encode(), format="text"))
            archive.add(SECRET, f"early secret {SHARED}\n".encode(), format="text")
            archive.create_annotation(_note(early, f"early closed note {SHARED}"), slug="early-closed-note")
        names["text"] = str(archive.add(OPEN, f"open {SHARED} of the board\n".encode(), format="text"))
        names["versioned"] = str(archive.add(OPEN, b"first draft\n", format="text"))
        archive.add_version(_generic(names["versioned"]), [Content(f"second draft, {SHARED}\n".encode(), "text")])
        names["capture"] = str(archive.deposit(OPEN, [Content(b"<p>public ruling</p>", "html")], foreign_id=URL)[0])
        archive.annotate(_generic(names["text"]), "title", "Open minutes")
        archive.create_annotation(_note(names["text"], f"open note {SHARED}"), slug="open-note")
        if secrets:  # deposited after the public ones (a daily serial counts every deposit of a day), later
            clock.now = NOW + datetime.timedelta(hours=1)
            names["embargoed"] = str(archive.add(OPEN, f"embargoed {SHARED}\n".encode(), format="text",
                                                 embargo_until="2099-01-01"))
            archive.add_version(_generic(names["versioned"]), [Content(f"third, {SHARED}\n".encode(), "text")],
                                embargo_until="2099-01-01")
            archive.embargo(_generic(names["versioned"]) + ".text.3", "2099-01-01")
            archive.annotate(_generic(names["versioned"]) + ".text.3", "title", f"The embargoed third {SHARED}")
            names["private"] = str(archive.add(CLOSED, f"closed {SHARED}\n".encode(), format="text"))
            names["hidden"] = str(archive.add(SECRET, f"secret {SHARED}\n".encode(), format="text"))
            gone = str(archive.add(SECRET, f"secret {SHARED}, withdrawn\n".encode(), format="text"))
            archive.withdraw(_generic(gone), "never to be known")
            for series in (CLOSED, SECRET):
                archive.deposit(series, [Content(f"<p>{series} ruling</p>".encode(), "html")], foreign_id=URL)
            archive.deposit(OPEN, [Content(b"<p>sealed ruling</p>", "html")], foreign_id=URL + "?sealed",
                            embargo_until="2099-01-01")
            for key in ("embargoed", "private", "hidden"):
                archive.annotate(_generic(names[key]), "title", f"The {key} {SHARED}")
                archive.create_annotation(_note(names[key], f"{key} note {SHARED}"), slug=f"{key}-note")
        archive.add_token("clerk", role="read", series=[CLOSED, SECRET])
    return names


Request = tuple[str, str, dict[str, object]]


def _gets(*urls: str) -> list[Request]:
    return [("GET", url, {}) for url in urls]


def _posts(path: str, *forms: dict[str, str]) -> list[Request]:
    return [("POST", path, {"data": form}) for form in forms]


def resolver_requests(names: dict[str, str]) -> dict[tuple[str, frozenset[str]], list[Request]]:
    """What a stranger asks each route of the resolver (keyed by the route's path and methods)."""
    text, capture, versioned = names["text"], names["capture"], names["versioned"]
    private, hidden = names["private"], names["hidden"]
    never = text.replace("/1.text.1", "/99.text.1")
    asked = [text, _generic(text), _generic(versioned), versioned.replace(".text.1", ".text.4"), capture,
             private, _generic(private), hidden, _generic(hidden), never]
    day = NOW.strftime("%Y/%m/%d")
    y, m, _ = day.split("/")
    oai = [
        {"verb": "Identify"}, {"verb": "ListSets"}, {"verb": "ListMetadataFormats"},
        {"verb": "ListRecords", "metadataPrefix": "oai_dc"}, {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc"},
        *({"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": s} for s in (OPEN, CLOSED, SECRET)),
        {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": "2026-11-24", "until": "2026-11-24"},
        *({"verb": "GetRecord", "identifier": _generic(n), "metadataPrefix": "oai_dc"} for n in asked),
        *({"verb": "ListMetadataFormats", "identifier": _generic(n)} for n in asked),
    ]
    urls = [URL, URL + "?sealed", f"http://127.0.0.1/uri-res/N2R?{rfc2169_query(_generic(text))}",
            _generic(text), _generic(versioned), _generic(private), _generic(hidden)]
    write = {"pdi": text, "key": "title", "value": "x", "series": OPEN, "until": "2099-01-01", "reason": "x"}
    return {
        ("/", frozenset({"GET", "HEAD"})): _gets("/"),
        ("/view", frozenset({"GET", "HEAD"})): _gets(*(f"/view?pdi={_q(n)}" for n in asked)),
        ("/thread", frozenset({"GET", "HEAD"})): _gets(*(f"/thread?pdi={_q(n)}" for n in asked)),
        ("/series", frozenset({"GET", "HEAD"})): _gets("/series"),
        ("/series/{name}", frozenset({"GET", "HEAD"})): _gets(*(f"/series/{s}" for s in (OPEN, CLOSED, SECRET))),
        ("/series/{name}/{year}", frozenset({"GET", "HEAD"})): _gets(f"/series/{OPEN}/{y}", f"/series/{SECRET}/{y}"),
        ("/series/{name}/{year}/{month}", frozenset({"GET", "HEAD"})): _gets(f"/series/{OPEN}/{y}/{m}"),
        ("/series/{name}/{year}/{month}/{day}", frozenset({"GET", "HEAD"})):
            _gets(f"/series/{OPEN}/{day}", f"/series/{OPEN}/{day}?limit=1", f"/series/{CLOSED}/{day}"),
        ("/captures", frozenset({"GET", "HEAD"})): _gets(*(f"/captures?url={_q(u)}" for u in (URL, URL + "?sealed"))),
        ("/signin", frozenset({"GET", "HEAD"})): _gets("/signin", f"/signin?next={_q('/view?pdi=' + private)}"),
        ("/signin", frozenset({"POST"})): _posts("/signin", {"token": "not-a-token", "next": "/"}),
        ("/signout", frozenset({"POST"})): _posts("/signout", {}),
        ("/search", frozenset({"GET", "HEAD"})): _gets(f"/search?q={SHARED}", "/search?q=secret", "/search?q=embargoed"),
        ("/api/search", frozenset({"GET", "HEAD"})):
            _gets(f"/api/search?q={SHARED}", f"/api/search?q={SHARED}&limit=1", "/api/search?q=closed",
                  f"/api/search?q={SHARED}&series={CLOSED}", f"/api/search?q={SHARED}&series={SECRET}"),
        ("/uri-res/{service}", frozenset({"GET", "HEAD"})):
            _gets(*(f"/uri-res/{s}?{rfc2169_query(n)}" for s in ("N2R", "N2C", "N2L", "N2Ls", "N2Ns", "I2R")
                    for n in asked)),
        ("/api/resolve", frozenset({"GET", "HEAD"})): _gets(*(f"/api/resolve?pdi={_q(n)}" for n in asked)),
        ("/api/ls", frozenset({"GET", "HEAD"})):
            _gets("/api/ls", "/api/ls?limit=1", "/api/ls?limit=2&offset=1", f"/api/ls?series={OPEN}",
                  f"/api/ls?series={CLOSED}", f"/api/ls?series={SECRET}", f"/api/ls?pattern={_q(_generic(versioned))}",
                  f"/api/ls?pattern={_q(f'urn:pdi://{OPEN}/{day}/*')}"),
        ("/api/meta", frozenset({"GET", "HEAD"})): _gets(*(f"/api/meta?pdi={_q(n)}" for n in asked)),
        ("/api/cite", frozenset({"GET", "HEAD"})):
            _gets(*(f"/api/cite?citation={_q(text + '@0=' + n.removeprefix('urn:'))}" for n in asked)),
        ("/api/series", frozenset({"GET", "HEAD"})): _gets("/api/series"),
        ("/api/manifest", frozenset({"GET", "HEAD"})):
            _gets(*(f"/api/manifest?series={s}" for s in (OPEN, CLOSED, SECRET)),
                  f"/api/manifest?series={OPEN}&day={NOW.date().isoformat()}", f"/api/manifest?series={OPEN}&limit=1",
                  f"/api/manifest?series={CLOSED}&day={NOW.date().isoformat()}"),
        ("/api/manifest.tsr", frozenset({"GET", "HEAD"})):
            _gets(*(f"/api/manifest.tsr?series={s}" for s in (OPEN, CLOSED, SECRET)),
                  f"/api/manifest.tsr?series={OPEN}&day={NOW.date().isoformat()}"),
        ("/api/keys", frozenset({"GET", "HEAD"})): _gets("/api/keys"),
        ("/api/element-index", frozenset({"GET", "HEAD"})): _gets(*(f"/api/element-index?pdi={_q(n)}" for n in asked)),
        ("/api/octets", frozenset({"POST"})): [
            *(("POST", "/api/octets", {"json": {"names": [n]}}) for n in asked),
            ("POST", "/api/octets", {"json": {"names": asked}}),
            ("POST", "/api/octets", {"json": {"names": [text, text + "#char=0,4"]}}),
            ("POST", "/api/octets", {"json": {"names": []}}), ("POST", "/api/octets", {"data": {"names": text}})],
        ("/.well-known/pdi-keys", frozenset({"GET", "HEAD"})): _gets("/.well-known/pdi-keys"),
        ("/.well-known/pdi-registry", frozenset({"GET", "HEAD"})): _gets("/.well-known/pdi-registry"),
        ("/healthz", frozenset({"GET", "HEAD"})): _gets("/healthz"),
        ("/favicon.ico", frozenset({"GET", "HEAD"})): _gets("/favicon.ico"),
        ("/favicon.svg", frozenset({"GET", "HEAD"})): _gets("/favicon.svg"),
        ("/robots.txt", frozenset({"GET", "HEAD"})): _gets("/robots.txt"),
        ("/readyz", frozenset({"GET", "HEAD"})): _gets("/readyz"),
        ("/metrics", frozenset({"GET", "HEAD"})): _gets("/metrics"),
        **{(path, frozenset({"POST"})): _posts(path, write) for path in
           ("/api/deposit", "/api/batch", "/api/version", "/api/format", "/api/statements", "/api/withdraw",
            "/api/embargo")},
        ("/api/audit", frozenset({"GET", "HEAD"})): _gets("/api/audit"),
        ("/api/mirrors", frozenset({"POST"})): [
            ("POST", "/api/mirrors", {"json": {"series": s, "base_url": "http://b.example.org", "keys": {"keys": []}}})
            for s in (OPEN, CLOSED, SECRET)],
        ("/api/mirrors", frozenset({"DELETE"})): [
            ("DELETE", f"/api/mirrors?series={s}&base_url=http://b.example.org", {}) for s in (OPEN, CLOSED, SECRET)],
        ("/api/rfc5147", frozenset({"GET", "HEAD"})):
            _gets(*(f"/api/rfc5147?pdi={_q(n)}&fragment={_q('char=0,4')}" for n in asked)),
        ("/api/anchor", frozenset({"GET", "HEAD"})):
            _gets(*(f"/api/anchor?pdi={_q(n + '#char=0,4')}&to={_q(_generic(versioned))}" for n in asked)),
        ("/api/pdf/page", frozenset({"GET", "HEAD"})): _gets(*(f"/api/pdf/page?pdi={_q(n)}&page=1" for n in asked)),
        ("/api/image/preview", frozenset({"GET", "HEAD"})): _gets(*(f"/api/image/preview?pdi={_q(n)}" for n in asked)),
        ("/static/pdfjs/{version}/{name:path}", frozenset({"GET", "HEAD"})):
            _gets("/static/pdfjs/6.5.438/pdf.min.mjs", "/static/pdfjs/6.5.438/secret.pdf",
                  "/static/pdfjs/6.5.438/cmaps/78-EUC-H.bcmap", "/static/pdfjs/6.5.438/cmaps/../MANIFEST.json"),
        ("/api/annotation", frozenset({"GET", "HEAD"})): _gets(*(f"/api/annotation?pdi={_q(n + '#char=0,4')}"
                                                                for n in asked)),
        ("/api/annotation", frozenset({"POST"})): [
            ("POST", "/api/annotation", {"json": {"type": "Annotation", "target": {"source": n}}}) for n in asked],
        ("/timegate/{target:path}", frozenset({"GET", "HEAD"})): _gets(*(f"/timegate/{u}" for u in urls)),
        ("/timemap/link/{target:path}", frozenset({"GET", "HEAD"})): _gets(*(f"/timemap/link/{u}" for u in urls)),
        ("/timemap/link/page/{cursor}/{target:path}", frozenset({"GET", "HEAD"})): _gets(
            *(f"/timemap/link/page/after~{NOW.date().isoformat()}~{s}/{URL}" for s in (CLOSED, OPEN, SECRET)),
            *(f"/timemap/link/page/after~{n}/{_generic(versioned)}" for n in (1, 2))),
        ("/oai", frozenset({"GET", "HEAD", "POST"})): [*_gets(*(f"/oai?{urllib.parse.urlencode(a)}" for a in oai)),
                                               *_posts("/oai", *oai)],
        ("/api/annotations/", frozenset({"GET", "HEAD", "OPTIONS", "POST"})): [
            *_gets("/api/annotations/", "/api/annotations/?page=0", "/api/annotations/?page=0&iris=1",
                   "/api/annotations/?page=1", "/api/annotations/?iris=1"),
            ("GET", "/api/annotations/", {"headers": {"Prefer": 'return=representation; include='
                                                               '"http://www.w3.org/ns/ldp#PreferMinimalContainer"'}}),
            ("OPTIONS", "/api/annotations/", {}),
            ("POST", "/api/annotations/", {"json": _note(text, "x")})],
        # the names of the secret annotations are not asked: like an embargoed document's, one named exactly
        # is known to exist (403)
        ("/api/annotations/{slug}", frozenset({"DELETE", "GET", "HEAD", "OPTIONS", "PUT"})): [
            *_gets("/api/annotations/open-note", "/api/annotations/never-made"),
            ("OPTIONS", "/api/annotations/open-note", {}),
            ("PUT", "/api/annotations/open-note", {"json": _note(text, "y"), "headers": {"If-Match": '"x"'}}),
            ("DELETE", "/api/annotations/open-note", {"headers": {"If-Match": '"x"'}})],
        ("/openapi.json", frozenset({"GET", "HEAD"})): _gets("/openapi.json"),
        ("/api", frozenset({"GET", "HEAD"})): _gets("/api"),
    }


def replay_requests(names: dict[str, str]) -> dict[tuple[str, frozenset[str]], list[Request]]:
    """What a stranger asks each route of the replay origin."""
    asked = [names["capture"], names["hidden"], names["private"], names["text"].replace("/1.text.1", "/99.html.1")]
    return {
        ("/replay/{rest:path}", frozenset({"GET", "HEAD"})): _gets(*(replay_path(n) for n in asked)),
        ("/{rest:path}", frozenset({"GET", "HEAD"})): _gets("/", "/series"),
    }


def _starlette(app: object) -> Starlette:
    """The Starlette app under the middleware a factory wraps it in."""
    while not isinstance(app, Starlette):
        app = app.app  # type: ignore[attr-defined]
    return app


def answers(app: object, table: dict[tuple[str, frozenset[str]], list[Request]]) -> dict[str, object]:
    """Every route's answers to the requests ``table`` names for it: a route it does not name fails the test."""
    routes = _starlette(app).routes
    known: set[tuple[str, frozenset[str]]] = set()
    found: dict[str, object] = {}
    client = TestClient(app, base_url="http://testserver")  # type: ignore[arg-type]
    for route in routes:
        assert isinstance(route, Route), f"{route!r}: a kind of route this test cannot ask: teach it"
        key = (route.path, frozenset(route.methods or ()))
        assert key in table, f"{key}: a route this test does not ask anything: add what a stranger would ask"
        known.add(key)
        asked = list(table[key])
        while asked:
            method, url, options = asked.pop(0)
            answer = client.request(method, url, follow_redirects=False, **options)  # type: ignore[arg-type]
            found[f"{method} {url} {options}"] = _seen(answer)
            asked += _onward(answer)
            assert len(found) < 5000
    assert known == set(table), f"asked of routes that are not there: {set(table) - known}"
    return found


_TOKEN = re.compile(r'<request verb="(\w+)"[^>]*>.*?<resumptionToken[^>]*>([^<]+)</resumptionToken>', re.S)


def _onward(answer: httpx.Response) -> list[Request]:
    """The pages an answer leads on to: an OAI-PMH list's resumption token, a TimeMap's rel="next" and "prev"."""
    onward: list[Request] = []
    if answer.headers.get("content-type", "").startswith("text/xml"):
        for verb, token in _TOKEN.findall(answer.text):
            onward.append(("GET", f"/oai?{urllib.parse.urlencode({'verb': verb, 'resumptionToken': token})}", {}))
    for each in httpx.Response(200, headers={"link": answer.headers.get("link", "")}).links.values():
        if each.get("rel") == "next" and answer.request.url.path.startswith(("/timemap/", "/api/manifest")):
            onward.append(("GET", each["url"].removeprefix("http://testserver"), {}))
    return onward


#: A search's cursor: its score (SQLite's bm25 weighs a word by how many passages of the whole index hold
#: it) and the catalog's row numbers of the passage and document (docs/reference/write-api.md: what the rule cannot hide).
_SCORE = re.compile(rb"after=[^\"&]*")


def _seen(answer: httpx.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    """All a client sees of an answer: status, every header, the body (a search cursor's score aside, and so
    the length of a body that has one)."""
    body = _SCORE.sub(rb"after=CURSOR", answer.content)
    headers = [(k, v) for k, v in answer.headers.multi_items() if not (k == "content-length" and body != answer.content)]
    return answer.status_code, sorted(headers), body


@pytest.fixture(params=["sqlite", "postgres"])
def locations(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Two empty archive locations of one kind: directories, or fresh PostgreSQL schemas."""
    if request.param == "sqlite":
        return str(tmp_path / "without"), str(tmp_path / "with")
    cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_schema(f"pdi_learn_{next(_schemas)}"), cluster.create_schema(f"pdi_learn_{next(_schemas)}")


_schemas = itertools.count(1)


def _compare(make: Callable[[str], object], table: Callable[[dict[str, str]], dict], locations: tuple[str, str]) -> None:
    without, with_ = locations
    build(without, secrets=False)
    names = build(with_, secrets=True)
    before = answers(make(without), table(names))
    after = answers(make(with_), table(names))
    assert before.keys() == after.keys()
    differ = {what: (before[what], after[what]) for what in before if before[what] != after[what]}
    assert not differ, "\n\n".join(f"{what}\nwithout: {b!r:.1500}\nwith:    {a!r:.1500}"
                                   for what, (b, a) in list(differ.items())[:6])


def test_an_anonymous_reader_learns_nothing_of_them_from_any_route_of_the_resolver(locations: tuple[str, str]) -> None:
    def make(location: str) -> object:
        archive = Archive.open(location, clock=Clock(ASKED))
        # a TimeMap page of one capture and an OAI-PMH list page of one record: every link and token is asked
        app = create_app(location, archive=archive, oai_admin_email="archivist@example.org", timemap_page=1,
                         signing_key=KEY)
        for route in app.routes:
            if isinstance(route, Route) and route.path == "/oai":
                route.endpoint.__self__.page = 1  # type: ignore[attr-defined]
        return app

    _compare(make, resolver_requests, locations)


def test_an_anonymous_reader_learns_nothing_of_them_from_any_route_of_the_replay_origin(
        locations: tuple[str, str]) -> None:
    def make(location: str) -> object:
        archive = Archive.open(location, clock=Clock(ASKED))
        return create_replay_app(location, archive=archive, resolver_origin="http://testserver")

    _compare(make, replay_requests, locations)
