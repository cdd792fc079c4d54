"""The annotation server against the W3C Web Annotation Protocol (Recommendation, 23 February 2017), on SQLite and
PostgreSQL catalogs, driven over real HTTP by a client nobody here wrote.

Each test is named after the section of the Recommendation whose MUST and
SHOULD statements it checks (§3 Annotation Retrieval, §4 Annotation
Containers, §4.1 Container Retrieval, §4.2 Container Representations, §4.2.1
Container Representation Preferences, §4.3 Annotation Pages, §5.1 Create,
§5.2 Slug, §5.3 Update, §5.4 Delete); where the W3C's own test of the
protocol (web-platform-tests ``annotation-protocol/server/server-musts-manual.html``)
checks the same thing, the assertion is worded as it is there.

The client is ``requests`` (its ``parse_header_links`` reads ``Link``),
JSON-LD responses are expanded by ``pyld`` against the published anno.jsonld
context (``tests/data/annotation/anno.jsonld``, read through a local loader:
no network), and every annotation, collection and page is validated by
``jsonschema`` against the W3C's own JSON schemas of the Web Annotation Data
Model's MUSTs (the ``w3c/web-annotation-tests`` repository, copied into
``tests/data/annotation/web-annotation-tests``: the assertions that
``annotationMusts.test``, ``collectionMusts.test`` and ``pageMusts.test``
list).
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from jsonschema import Draft4Validator
from pyld import jsonld  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4
from requests.utils import parse_header_links
from server_helpers import in_thread, start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.server import create_app

DATA = Path(__file__).parent.parent / "data" / "annotation"
W3C_TESTS = DATA / "web-annotation-tests"
ANNO = "http://www.w3.org/ns/anno.jsonld"
OA = "http://www.w3.org/ns/oa#"
AS = "http://www.w3.org/ns/activitystreams#"
LDP = "http://www.w3.org/ns/ldp#"
PROFILE = 'application/ld+json; profile="http://www.w3.org/ns/anno.jsonld"'
PUBLIC = "library.example.us"
PRIVATE = "court.example.us"
HIDDEN = "sealed.example.us"
PAGE = 2  # annotations a page: small, so a few make several pages


@dataclass
class Server:
    """A live annotation server over a fresh archive, and the names and tokens the tests use."""

    url: str
    location: str
    text: str  # a text of the public series
    private: str  # a text of the private series
    hidden: str  # a text of the hidden series
    curator: str  # a token with the role curate over every series
    depositor: str  # a token with the role deposit: may not annotate
    court_reader: str  # a token with the role read over the private series
    court_curator: str  # a token with the role curate over the private series only

    @property
    def container(self) -> str:
        return self.url + "/api/annotations/"

    def post(self, annotation: dict[str, Any], *, token: str | None = None, **headers: str) -> requests.Response:
        return requests.post(self.container, data=json.dumps(annotation).encode(), timeout=30, headers={
            "Authorization": f"Bearer {token or self.curator}", "Content-Type": PROFILE, "Accept": PROFILE, **headers})

    def write(self, method: str, iri: str, *, token: str | None = None, body: Any = None,
              **headers: str) -> requests.Response:
        sent = {"Authorization": f"Bearer {token or self.curator}", **headers}
        if body is not None:
            sent["Content-Type"] = PROFILE
        return requests.request(method, iri, timeout=30, headers=sent,
                                data=None if body is None else json.dumps(body).encode())


@pytest.fixture
def server(location: str) -> Iterator[Server]:
    archive = Archive.init(location)
    try:
        archive.add_series(PUBLIC)
        archive.add_series(PRIVATE)
        archive.add_series(HIDDEN)
        archive.set_series_access(PRIVATE, "private")
        archive.set_series_access(HIDDEN, "hidden")
        text = str(archive.add(PUBLIC, b"Hello, world.\nThe quick brown fox.\n", format="text"))
        private = str(archive.add(PRIVATE, b"A sealed order.\n", format="text"))
        hidden = str(archive.add(HIDDEN, b"A hidden order.\n", format="text"))
        tokens = [archive.add_token("curator", role="curate")[1], archive.add_token("depositor", role="deposit")[1],
                  archive.add_token("court-reader", role="read", series=[PRIVATE])[1],
                  archive.add_token("court-curator", role="curate", series=[PRIVATE])[1]]
        app = create_app(location, annotation_page_size=PAGE)
        with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as running:
            port = running.servers[0].sockets[0].getsockname()[1]
            yield Server(f"http://127.0.0.1:{port}", location, text, private, hidden, *tokens)
        app.state.archive.close()
    finally:
        archive.close()


def archive_token(server: Server, name: str, *, series: list[str]) -> str:
    """A curate token over ``series`` made now, in the archive the server reads (its catalog holds the tokens)."""
    with Archive.open(server.location) as archive:
        return archive.add_token(f"{name}-{uuid.uuid4().hex[:8]}", role="curate", series=series)[1]


def note(target: Any, value: str = "I like this page!", **more: Any) -> dict[str, Any]:
    """An annotation as a client writes it (the Recommendation's §5.1 example)."""
    return {"@context": ANNO, "type": "Annotation", "body": {"type": "TextualBody", "value": value},
            "target": target, **more}


def links(response: requests.Response) -> list[tuple[str, str]]:
    """``(target, rel)`` of each link of the ``Link`` field, read by requests."""
    return [(link["url"], link.get("rel", "")) for link in parse_header_links(response.headers.get("Link", ""))]


def methods(response: requests.Response) -> set[str]:
    return {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}


def local_loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    if url.rstrip("/") != ANNO:
        raise AssertionError(f"the test reads no context but the Web Annotation one, not {url}")
    return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url,
            "document": json.loads((DATA / "anno.jsonld").read_text(encoding="utf-8"))}


def expand(document: dict[str, Any]) -> dict[str, Any]:
    expanded = jsonld.expand(document, {"documentLoader": local_loader})
    assert len(expanded) == 1
    return expanded[0]  # type: ignore[no-any-return]


def _registry() -> Registry:  # type: ignore[type-arg]
    resources = []
    for path in W3C_TESTS.rglob("*.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["id"], Resource.from_contents(schema, default_specification=DRAFT4)))
    return Registry().with_resources(resources)  # type: ignore[no-any-return]


REGISTRY = _registry()


def w3c_musts(kind: str, instance: dict[str, Any]) -> None:
    """Validate ``instance`` against every assertion the W3C's ``annotationMusts``, ``collectionMusts`` or
    ``pageMusts`` test lists, as its ``expectedResult`` says."""
    listing = {"annotation": "annotations/annotationMusts.test", "collection": "collections/collectionMusts.test",
               "page": "collections/pages/pageMusts.test"}[kind]
    test = json.loads((W3C_TESTS / listing).read_text(encoding="utf-8"))
    for assertion in test["assertions"]:
        schema = json.loads((W3C_TESTS / assertion).read_text(encoding="utf-8"))
        validator = Draft4Validator(schema, registry=REGISTRY, format_checker=Draft4Validator.FORMAT_CHECKER)
        errors = [e.message for e in validator.iter_errors(instance)]
        assert (not errors) == (schema["expectedResult"] == "valid"), (assertion, schema["errorMessage"], errors)


def created(server: Server, annotation: dict[str, Any], **headers: str) -> requests.Response:
    answer = server.post(annotation, **headers)
    assert answer.status_code == 201, answer.text
    return answer


# --- §3 Annotation Retrieval ----------------------------------------------------------------------


def test_anno_protocol_3_get_head_options_of_an_annotation(server: Server) -> None:
    iri = created(server, note(f"{server.text}#char=15,24")).headers["Location"]
    got = requests.get(iri, headers={"Accept": PROFILE}, timeout=30)
    assert got.status_code == 200  # "Servers SHOULD use the 200 HTTP status code"
    # "Annotations MUST support GET, HEAD, OPTIONS (check Allow on GET)"
    assert {"GET", "HEAD", "OPTIONS"} <= methods(got)
    # "Annotations MUST have a Content-Type header with the application/ld+json media type", and the profile SHOULD
    assert got.headers["Content-Type"] == PROFILE
    # "Annotations MUST have a Link header entry where the target IRI is http://www.w3.org/ns/ldp#Resource and the
    # rel parameter value is type"
    assert (LDP + "Resource", "type") in links(got)
    assert got.headers["ETag"].startswith('"')  # "Annotations MUST have an ETag header"
    assert "Accept" in got.headers["Vary"]  # "Annotations MUST have a Vary header with Accept in the value"
    body = got.json()
    assert body["id"] == iri
    node = expand(body)
    assert node["@id"] == iri and node["@type"] == [OA + "Annotation"]
    assert node[OA + "hasTarget"] == [{"@id": f"{server.text}#char=15,24"}]
    w3c_musts("annotation", body)
    head = requests.head(iri, timeout=30)
    assert head.status_code == 200 and head.content == b"" and head.headers["ETag"] == got.headers["ETag"]
    options = requests.options(iri, timeout=30)
    assert options.status_code == 200 and {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"} <= methods(options)
    # OPTIONS enables a CORS pre-flight: a script of another origin may send what the protocol needs
    assert options.headers["Access-Control-Allow-Origin"] == "*"
    allowed = {h.strip().lower() for h in options.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type", "if-match", "prefer", "slug"} <= allowed
    assert requests.get(server.container + "no-such-annotation", timeout=30).status_code == 404


def test_anno_protocol_3_content_negotiation_on_the_anno_profile(server: Server) -> None:
    iri = created(server, note(server.text)).headers["Location"]
    plain = requests.get(iri, timeout=30)  # no Accept: the JSON-LD of the profile
    assert plain.headers["Content-Type"] == PROFILE
    assert requests.get(iri, headers={"Accept": "application/ld+json"}, timeout=30).headers["Content-Type"] == PROFILE
    as_json = requests.get(iri, headers={"Accept": "application/json"}, timeout=30)
    assert as_json.headers["Content-Type"].startswith("application/json") and as_json.json() == plain.json()
    several = 'application/ld+json; profile="http://www.w3.org/ns/anno.jsonld http://www.w3.org/ns/ldp.jsonld"'
    assert requests.get(iri, headers={"Accept": several}, timeout=30).headers["Content-Type"] == PROFILE
    for refused in ("text/turtle", 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
                    "application/ld+json; q=0, text/html"):
        answer = requests.get(iri, headers={"Accept": refused}, timeout=30)
        assert answer.status_code == 406 and answer.headers["Content-Type"] == "application/problem+json", refused
    again = requests.get(iri, headers={"If-None-Match": plain.headers["ETag"]}, timeout=30)
    assert again.status_code == 304 and again.content == b""


def test_a_304_keeps_the_links_the_protocol_asks_on_every_answer_and_no_representation_metadata(
    server: Server,
) -> None:
    """RFC 9110 §15.4.5: a ``304`` carries ETag, Vary, Cache-Control, Content-Location (and Date, Expires) as the
    ``200`` would, and SHOULD NOT carry other *representation* metadata (Content-Type, Content-Length of a body,
    Content-Language, Content-Encoding, Last-Modified with an ETag). ``Link``, ``Allow`` and ``Accept-Post`` describe
    the resource, not the representation (RFC 9110 §10.2: response context), and the protocol asks for them on its
    answers: "Annotation Containers MUST return a Link header on all responses" (§4.1), and LDP 1.0 §4.2.1.4 the
    ``ldp#Resource`` type link "in all responses to requests made to an LDPR's HTTP Request-URI" (§3's annotation).
    So the ``304`` keeps them."""
    iri = created(server, note(server.text)).headers["Location"]
    for target, link in ((iri, LDP + "Resource"), (server.container, LDP + "BasicContainer")):
        for method in ("GET", "HEAD"):
            whole = requests.request(method, target, timeout=30)
            again = requests.request(method, target, headers={"If-None-Match": whole.headers["ETag"]}, timeout=30)
            assert again.status_code == 304 and again.content == b"", (target, method)
            for name in ("ETag", "Vary", "Cache-Control"):
                assert again.headers[name] == whole.headers[name], (target, method, name)
            if "Content-Location" in whole.headers:
                assert again.headers["Content-Location"] == whole.headers["Content-Location"]
            for name in ("Content-Type", "Content-Language", "Content-Encoding", "Last-Modified"):
                assert name not in again.headers, (target, method, name)
            # §8.6: a 304 "MUST NOT" send a Content-Length other than the 200's
            assert again.headers.get("Content-Length", whole.headers["Content-Length"]) == whole.headers[
                "Content-Length"], (target, method)
            assert (link, "type") in links(again), (target, method)
            assert methods(again) == methods(whole)


# --- §4 Annotation Containers, §4.1 Container Retrieval ----------------------------------------------


def test_anno_protocol_4_1_container_get_head_options(server: Server) -> None:
    assert server.container.endswith("/")  # "Container MUST end in a "/" character"
    empty = requests.get(server.container, timeout=30)
    assert empty.status_code == 200 and empty.json()["total"] == 0 and "first" not in empty.json()
    created(server, note(server.text))
    got = requests.get(server.container, timeout=30)  # no Accept: "MUST respond with a JSON-LD representation"
    assert got.status_code == 200
    assert {"GET", "HEAD", "OPTIONS", "POST"} <= methods(got)
    assert got.headers["Content-Type"] == PROFILE
    body = got.json()
    # "Containers MUST return a description of the container with BasicContainer" and "with AnnotationCollection"
    assert "BasicContainer" in body["type"] and "AnnotationCollection" in body["type"]
    assert body["@context"] == [ANNO, "http://www.w3.org/ns/ldp.jsonld"]  # SHOULD use both contexts
    # "advertise its type by including a link where the rel parameter value is type and the target IRI is the
    # appropriate Container Type"; "advertise that it imposes Annotation protocol specific constraints"
    assert (LDP + "BasicContainer", "type") in links(got)
    assert ("http://www.w3.org/TR/annotation-protocol/", LDP + "constrainedBy") in links(got)
    assert got.headers["ETag"].startswith('"') and got.headers["ETag"] != empty.headers["ETag"]
    assert "Accept" in got.headers["Vary"]
    assert PROFILE in got.headers["Accept-Post"]
    # "Containers MUST include a Content-Location header with the IRI as its value"; it and id MUST match
    assert got.headers["Content-Location"] == body["id"] and body["id"].startswith(server.container)
    w3c_musts("collection", body)
    for method in ("HEAD", "OPTIONS"):
        answer = requests.request(method, server.container, timeout=30)
        assert answer.status_code == 200, method  # "Containers MUST support HEAD/OPTIONS method"
        assert (LDP + "BasicContainer", "type") in links(answer), method  # a Link "on all responses"
        assert {"GET", "HEAD", "OPTIONS", "POST"} <= methods(answer) and PROFILE in answer.headers["Accept-Post"]
    assert requests.head(server.container, timeout=30).headers["ETag"] == got.headers["ETag"]


# --- §4.2, §4.3 Container Representations and Annotation Pages -----------------------------------------


def test_anno_protocol_4_2_and_4_3_pages_hold_every_annotation_in_order(server: Server) -> None:
    made = [created(server, note(server.text, f"note {i}")).headers["Location"] for i in range(5)]
    prefer = f'return=representation; include="{OA}PreferContainedIRIs"'
    container = requests.get(server.container, headers={"Prefer": prefer}, timeout=30).json()
    assert container["total"] == 5  # SHOULD include total
    first = container["first"]
    assert first["type"] == "AnnotationPage" and first["items"] == made[:2] and first["startIndex"] == 0
    assert container["last"] == container["id"] + "&page=2"  # SHOULD link the last page
    w3c_musts("collection", container)
    seen: list[str] = []
    url: str | None = first["id"]
    pages = []
    while url is not None:
        got = requests.get(url, timeout=30)
        assert got.status_code == 200 and got.headers["Content-Type"] == PROFILE and got.headers["ETag"]
        page = got.json()
        w3c_musts("page", page)
        # "Each page MUST have a link to the container that it is part of, using the partOf property"
        assert page["partOf"]["id"] == container["id"] and page["partOf"]["total"] == 5
        assert page["startIndex"] == len(seen)
        node = expand(page)
        assert node["@type"] == [AS + "OrderedCollectionPage"]  # what anno.jsonld maps AnnotationPage to
        assert [item["@id"] for item in node[AS + "items"][0]["@list"]] == page["items"]
        seen += page["items"]
        pages.append(page)
        url = page.get("next")
    assert seen == made and len(pages) == 3
    # "If it is not the first page, it MUST have a link to the previous page"; "if it is not the last page … next"
    assert "prev" not in pages[0] and [p["prev"] for p in pages[1:]] == [p["id"] for p in pages[:-1]]
    assert "next" not in pages[-1] and pages[-1]["id"] == container["last"]
    assert requests.get(container["id"] + "&page=3", timeout=30).status_code == 404
    assert requests.get(container["id"] + "&page=-1", timeout=30).status_code == 400
    # no POST to a page: 405 (§6), saying what is allowed
    refused = requests.post(
        container["id"] + "&page=0", data=b"{}", timeout=30,
        headers={"Authorization": f"Bearer {server.curator}", "Content-Type": PROFILE})
    assert refused.status_code == 405 and "POST" not in methods(refused)


def test_anno_protocol_4_2_1_preferences_minimal_iris_and_descriptions(server: Server) -> None:
    made = [created(server, note(server.text, f"note {i}")).headers["Location"] for i in range(3)]

    def container(*include: str) -> requests.Response:
        return requests.get(server.container, timeout=30, headers={
            "Accept": PROFILE, "Prefer": f'return=representation;include="{" ".join(include)}"'})

    minimal = container(LDP + "PreferMinimalContainer", OA + "PreferContainedIRIs")
    assert minimal.headers["Preference-Applied"] == "return=representation"
    body = minimal.json()
    # "the response MUST NOT include either the ldp:contains predicate nor embed the first page"
    assert "contains" not in body and isinstance(body["first"], str) and body["total"] == 3
    assert body["id"].endswith("?iris=1") and body["first"] == body["id"] + "&page=0"
    # the linked pages SHOULD follow the PreferContainedIRIs preference
    assert requests.get(body["first"], timeout=30).json()["items"] == made[:2]
    iris = container(OA + "PreferContainedIRIs")
    assert iris.json()["first"]["items"] == made[:2] and "Prefer" in iris.headers["Vary"]
    assert iris.headers["Content-Location"] == iris.json()["id"]
    described = container(OA + "PreferContainedDescriptions").json()
    items = described["first"]["items"]
    assert [item["id"] for item in items] == made[:2] and items[0]["body"]["value"] == "note 0"
    # "If no preference is given by the client, the server SHOULD default to the PreferContainedDescriptions behavior"
    default = requests.get(server.container, timeout=30)
    assert default.json()["first"]["items"] == items and "Preference-Applied" not in default.headers
    assert default.headers["ETag"] != iris.headers["ETag"] != minimal.headers["ETag"]
    page = requests.get(described["first"]["id"], timeout=30).json()
    assert [expand({"@context": ANNO, **item})["@type"] for item in page["items"]] == [[OA + "Annotation"]] * 2
    both = container(OA + "PreferContainedIRIs", OA + "PreferContainedDescriptions")
    assert both.status_code == 400 and "PreferContainedIRIs" in both.json()["detail"]


# --- §5 Creation, Updating and Deletion of Annotations ----------------------------------------------------


def test_anno_protocol_5_1_post_201_location(server: Server) -> None:
    canonical = f"urn:uuid:{uuid.uuid4()}"
    sent = note("http://www.example.com/index.html", canonical=canonical, id="http://elsewhere.example/anno/7")
    answer = created(server, sent)
    body = answer.json()
    # "Created Annotation MUST have an id property … that starts with the Container IRI"
    assert body["id"].startswith(server.container) and body["id"] != server.container
    assert answer.headers["Location"] == body["id"]  # "Location header SHOULD match the id of the new Annotation"
    assert body["canonical"] == canonical  # "Created Annotation MUST preserve any canonical IRI"
    assert body["via"] == "http://elsewhere.example/anno/7"  # an id it had SHOULD be copied to via
    assert answer.headers["Content-Type"] == PROFILE and answer.headers["ETag"]
    moment = datetime.datetime.fromisoformat(body["created"].replace("Z", "+00:00"))
    assert abs((datetime.datetime.now(datetime.UTC) - moment).total_seconds()) < 600
    w3c_musts("annotation", body)
    fetched = requests.get(body["id"], timeout=30)
    assert fetched.json() == body and fetched.headers["ETag"] == answer.headers["ETag"]


def test_anno_protocol_5_1_refusals(server: Server) -> None:
    good = note(server.text)
    anonymous = requests.post(server.container, data=json.dumps(good).encode(), timeout=30,
                              headers={"Content-Type": PROFILE})
    assert anonymous.status_code == 401 and anonymous.headers["WWW-Authenticate"].startswith("Bearer")
    assert ("http://www.w3.org/TR/annotation-protocol/", LDP + "constrainedBy") in links(anonymous)
    assert server.post(good, token=server.depositor).status_code == 403  # the role deposit makes no statements
    # a token over the private series alone may not annotate a public document
    assert server.post(good, token=server.court_curator).status_code == 403
    for body, status in ((b"{", 400), (b"[1, 2]", 400), (json.dumps({**good, "@context": "http://schema.org/"}), 415),
                         (json.dumps({**good, "type": "Note"}), 400), (json.dumps({**good, "target": []}), 400),
                         (json.dumps(note(server.text.replace(".text.1", "x.text.1"))), 404),
                         (json.dumps({**good, "bodyValue": "and a body too"}), 400),
                         # JSON that a later page would fail to write (RFC 8259 §6, §8.2), or to read again so deep
                         (json.dumps(good)[:-1] + ', "rank": NaN}', 400),
                         (json.dumps(good)[:-1] + ', "rank": 1e400}', 400),
                         (json.dumps(good)[:-1] + ', "label": "\\ud800"}', 400),
                         (json.dumps({**good, "body": [[[[[]]]]]}).replace("[[[[[]]]]]", "[" * 900 + "]" * 900), 400)):
        answer = requests.post(server.container, data=body, timeout=30, headers={
            "Authorization": f"Bearer {server.curator}", "Content-Type": PROFILE})
        assert answer.status_code == status, (body, answer.text)
        assert answer.headers["Content-Type"] == "application/problem+json"
        # "Annotation Containers MUST return a Link header on all responses"
        assert (LDP + "BasicContainer", "type") in links(answer)
    wrong_type = requests.post(server.container, data=json.dumps(good), timeout=30, headers={
        "Authorization": f"Bearer {server.curator}", "Content-Type": "text/plain"})
    assert wrong_type.status_code == 415
    huge = note(server.text, "x" * (1 << 20))
    assert server.post(huge).status_code == 413
    assert requests.get(server.container, timeout=30).json()["total"] == 0  # nothing was kept


def test_anno_protocol_5_2_slug_is_honoured_where_safe(server: Server) -> None:
    mine = created(server, note(server.text), Slug='"my_first_annotation"').json()["id"]
    assert mine == server.container + "my_first_annotation"
    taken = created(server, note(server.text), Slug="my_first_annotation").json()["id"]
    assert taken != mine and taken.startswith(server.container)
    for unsafe in ("../x", "a/b", ".hidden", "x" * 65, "%2e%2e%2fadmin", "a b", "é"):
        given = created(server, note(server.text), Slug=unsafe).json()["id"]
        segment = given.removeprefix(server.container)
        assert str(uuid.UUID(segment)) == segment, unsafe  # a name of the server's choosing instead
        assert requests.get(given, timeout=30).status_code == 200
    # the Slug is a header: a ?slug= is refused, not left unread while the annotation gets another IRI for good
    asked = requests.post(server.container + "?slug=mine", data=json.dumps(note(server.text)).encode(), timeout=30,
                          headers={"Authorization": f"Bearer {server.curator}", "Content-Type": PROFILE})
    assert asked.status_code == 400 and "slug= is not one this route takes" in asked.json()["detail"]
    assert server.write("DELETE", mine + "?purge=1").status_code == 400


def test_anno_protocol_5_3_put_needs_the_current_etag(server: Server) -> None:
    first = created(server, note(server.text, canonical="urn:uuid:00000000-0000-4000-8000-000000000001"))
    iri, etag, state = first.headers["Location"], first.headers["ETag"], first.json()
    changed = {**state, "body": {"type": "TextualBody", "value": "I REALLY like this page!"}}
    assert server.write("PUT", iri, body=changed).status_code == 428  # no If-Match
    # RFC 9110 §13.2.1: without If-Match the answer would be 428, so If-None-Match alone is ignored; with If-Match
    # holding, If-None-Match is evaluated next (§13.2.2): holding the current ETag (or *), it is false: 412
    for held in ("*", etag):
        assert server.write("PUT", iri, body=changed, **{"If-None-Match": held}).status_code == 428
        assert server.write("PUT", iri, body=changed, **{"If-Match": etag, "If-None-Match": held}).status_code == 412
    # RFC 9110 §14.4: an origin server that allows PUT MUST answer 400 to one with Content-Range
    partial = server.write("PUT", iri, body=changed, **{"If-Match": etag, "Content-Range": "bytes 0-10/200"})
    assert partial.status_code == 400 and "Content-Range" in partial.json()["detail"]
    assert server.write("PUT", iri, body=changed, **{"If-Match": '"not-it"'}).status_code == 412
    assert server.write("PUT", iri, body=changed, **{"If-Match": "W/" + etag}).status_code == 412  # strong only
    updated = server.write("PUT", iri, body=changed, **{"If-Match": etag})
    assert updated.status_code == 200  # "the server MUST return a 200 OK status with the Annotation as the body"
    assert updated.json()["body"]["value"] == "I REALLY like this page!" and updated.json()["id"] == iri
    assert updated.json()["created"] == state["created"] and "modified" in updated.json()
    assert updated.headers["ETag"] != etag
    w3c_musts("annotation", updated.json())
    # a second writer with the old ETag would overwrite the first one's change: refused
    assert server.write("PUT", iri, body=state, **{"If-Match": etag}).status_code == 412
    assert requests.get(iri, timeout=30).json() == updated.json()
    now = updated.headers["ETag"]
    # "Servers SHOULD reject update requests that modify the values of the canonical or via properties"
    assert server.write("PUT", iri, body={**changed, "canonical": "urn:uuid:x"}, **{"If-Match": now}).status_code == 409
    assert server.write("PUT", iri, body={**changed, "id": server.container + "other"},
                        **{"If-Match": now}).status_code == 409
    assert server.write("PUT", iri, body=changed, token=server.depositor, **{"If-Match": now}).status_code == 403
    # the WPT's own update: the new state's target, with If-Match as the Recommendation asks
    retargeted = server.write("PUT", iri, body={**changed, "target": "http://other.example/"}, **{"If-Match": now})
    assert retargeted.status_code == 200 and retargeted.json()["target"] == "http://other.example/"


def test_anno_protocol_5_4_delete_needs_the_current_etag(server: Server) -> None:
    made = created(server, note(server.text), Slug="doomed")
    iri, etag = made.headers["Location"], made.headers["ETag"]
    other = created(server, note(server.text)).headers["Location"]
    refusals = [server.write("DELETE", iri), server.write("DELETE", iri, **{"If-Match": '"stale"'}),
                requests.get(server.container + "never-made", timeout=30)]
    assert [r.status_code for r in refusals] == [428, 412, 404]
    assert server.write("DELETE", iri, **{"If-None-Match": "*"}).status_code == 428  # ignored without If-Match
    assert server.write("DELETE", iri, **{"If-Match": etag, "If-None-Match": "*"}).status_code == 412
    # a script of another origin reads a refusal as it reads an answer (CORS): its change flow turns on them
    assert all(r.headers.get("Access-Control-Allow-Origin") == "*" for r in refusals), refusals
    deleted = server.write("DELETE", iri, **{"If-Match": etag})
    assert deleted.status_code == 204 and deleted.content == b""  # "MUST return a 204 status response"
    assert requests.get(iri, timeout=30).status_code == 410  # "known to have existed in the past and was deleted"
    assert server.write("DELETE", iri, **{"If-Match": "*"}).status_code == 410
    # "The IRI of the deleted Annotation MUST be removed from the Annotation Container it was created in"
    listed = requests.get(server.container + "?iris=1", timeout=30).json()
    assert listed["total"] == 1 and listed["first"]["items"] == [other]
    # "The IRIs of deleted Annotations SHOULD NOT be re-used"
    assert created(server, note(server.text), Slug="doomed").json()["id"] != iri


# --- who may read: private and hidden series, as their documents ----------------------------------------------


def test_annotations_of_private_documents_are_read_only_by_those_who_may_read_them(server: Server) -> None:
    public = created(server, note(server.text)).headers["Location"]
    sealed = created(server, note(f"{server.private}#char=2,8"), Slug="sealed").headers["Location"]
    hidden = created(server, note({"type": "SpecificResource", "source": server.hidden}), Slug="hid").headers["Location"]
    assert requests.get(sealed, timeout=30).status_code == 403
    assert requests.get(hidden, timeout=30).status_code == 404
    anonymous = requests.get(server.container + "?iris=1", timeout=30).json()
    assert anonymous["total"] == 1 and anonymous["first"]["items"] == [public]
    reader = {"Authorization": f"Bearer {server.court_reader}"}
    assert requests.get(sealed, headers=reader, timeout=30).status_code == 200
    assert requests.get(hidden, headers=reader, timeout=30).status_code == 404
    assert requests.get(server.container + "?iris=1", headers=reader, timeout=30).json()["first"]["items"] == [
        public, sealed]
    everything = requests.get(server.container + "?iris=1", timeout=30,
                              headers={"Authorization": f"Bearer {server.curator}"}).json()
    assert everything["total"] == 3
    # a reader who may not read the document may not annotate it either (a token of role read never writes)
    assert server.post(note(server.private), token=server.court_reader).status_code == 403
    assert server.post(note(server.private), token=server.court_curator).status_code == 201
    # nor learn, by deleting, that it was there
    assert requests.delete(sealed, timeout=30, headers={**reader, "If-Match": "*"}).status_code == 403


@pytest.mark.parametrize("spelled", [
    lambda name: {"@id": name},  # JSON-LD's own keyword, which "id" aliases
    lambda name: {"type": "SpecificResource", "source": {"@id": name}},
    lambda name: {"type": "SpecificResource", "source": [name]},
    lambda name: {"type": "SpecificResource", "source": {"id": name},
                  "selector": {"type": "TextQuoteSelector", "exact": "sealed"}},
    lambda name: [{"id": "http://example.com/a-page"}, {"@id": name}],
    lambda name: {"id": "http://127.0.0.1/uri-res/N2R?" + quote(name, safe="")},  # its N2R, escaped
    lambda name: "http://127.0.0.1/uri-res/N2R?" + name,
    lambda name: "http://127.0.0.1/uri-res/N2R?" + name + "&utm_source=x",
    lambda name: "http://127.0.0.1/uri-res/N2R?" + name.replace("urn:pdi:", "pdi:"),  # N2R reads pdi:// too
    lambda name: "http://127.0.0.1/view?pdi=" + quote(name.replace("urn:pdi:", "pdi:"), safe=""),
    lambda name: {"type": "Choice", "items": [name]},
    lambda name: {"@list": [name]},
    lambda name: {"@set": [{"@id": name}]},
    lambda name: {"oa:hasSource": {"id": name}},
    lambda name: {"http://www.w3.org/ns/oa#hasSource": [{"@id": name}]},
    lambda name: {"type": "SpecificResource", "source": json.loads('{"source":' * 12 + json.dumps(name) + "}" * 12)},
])
def test_a_private_document_is_a_target_however_the_annotation_names_it(
    server: Server, spelled: Callable[[str], Any]
) -> None:
    """Whatever JSON-LD spelling names the private document: a token of another series may not annotate it, and
    an annotation of it is read only by those who may read the document (not kept as a public page's)."""
    public_only = archive_token(server, "public-curator", series=[PUBLIC])
    assert server.post(note(spelled(server.private)), token=public_only).status_code == 403
    made = server.post(note(spelled(server.private)), token=server.court_curator)
    assert made.status_code == 201, made.text
    assert requests.get(made.headers["Location"], timeout=30).status_code == 403
    listed = requests.get(server.container + "?iris=1", timeout=30).json()
    assert listed["total"] == 0 and made.headers["Location"] not in listed.get("first", {}).get("items", [])


def test_the_target_term_itself_and_an_inline_context_name_no_target_past_the_check(server: Server) -> None:
    """``oa:hasTarget`` is what the context makes of ``target``; an inline context could make any member stand for
    it, so a context is named by URLs only."""
    public_only = archive_token(server, "public-curator", series=[PUBLIC])
    alone = {**{k: v for k, v in note("").items() if k != "target"}, "oa:hasTarget": server.private}
    assert server.post(alone, token=public_only).status_code == 400  # it needs a target (§3.1), by that name
    beside = {**note("http://example.com/a-page"), "oa:hasTarget": server.private}
    assert server.post(beside, token=public_only).status_code == 403
    aliased = {**note("http://example.com/a-page"), "@context": [ANNO, {"about": "oa:hasTarget"}],
               "about": server.private}
    assert server.post(aliased, token=public_only).status_code == 415
    # a context named by a URL pdi does not know (and never fetches) could say the same: refused alike (found by a
    # stranger's client, 2026-11-27: [anno, "http://…/ctx.jsonld"] was kept); the W3C's own LDP context is known
    for elsewhere in ("http://evil.example/ctx.jsonld", "https://www.w3.org/ns/anno.jsonld"):
        remote = {**note("http://example.com/a-page"), "@context": [ANNO, elsewhere], "about": server.private}
        refused = server.post(remote, token=public_only)
        assert refused.status_code == 415 and refused.json()["pointer"] == "/@context", refused.text
    both = server.post({**note(server.text), "@context": [ANNO, LDP.rstrip("#") + ".jsonld"]})
    assert both.status_code == 201, both.text


@pytest.mark.parametrize("target", [
    "https://www.google.com/search?q=urn:pdi:foo&hl=en",  # the words, not a name
    "https://other.example/uri-res/N2R?urn:pdi://elsewhere.example.org/2026/01/02/1.text.1",  # another archive's
    {"type": "SpecificResource", "source": "http://example.com/a-page",
     "selector": {"type": "TextQuoteSelector", "exact": "see urn:pdi: names"}},
])
def test_a_web_page_whose_url_or_quote_only_mentions_pdi_is_a_web_pages_annotation(server: Server, target: Any) -> None:
    made = server.post(note(target))
    assert made.status_code == 201, made.text
    assert requests.get(made.headers["Location"], timeout=30).status_code == 200  # anyone may read it


def test_annotations_on_an_embargoed_document_wait_for_its_end(server: Server) -> None:
    iri = created(server, note(server.text), Slug="early").headers["Location"]
    with Archive.open(server.location) as archive:
        archive.embargo(server.text, "2999-01-01")
    assert requests.get(iri, timeout=30).status_code == 403
    assert requests.get(server.container, timeout=30).json()["total"] == 0
    assert requests.get(iri, timeout=30, headers={"Authorization": f"Bearer {server.curator}"}).status_code == 200
    with Archive.open(server.location) as archive:
        archive.embargo(server.text, None)
    assert requests.get(iri, timeout=30).status_code == 200


def test_annotations_are_kept_in_the_catalog_and_audited(server: Server) -> None:
    iri = created(server, note(server.text), Slug="kept").headers["Location"]
    with Archive.open(server.location) as archive:  # another process's view of the catalog
        record = archive.annotation("kept")
        assert json.loads(record.data)["body"]["value"] == "I like this page!" and record.created_by == "token:curator"
        actions = [(e.action, e.subject, e.who) for e in archive.audit()]
        assert ("annotation-create", "annotation:kept", "token:curator") in actions
    assert requests.get(iri, timeout=30).status_code == 200


def test_anno_protocol_5_3_two_writers_at_once_one_wins(server: Server) -> None:
    """Two clients replace one annotation at the same moment with the ETag both read: one change is kept and the
    other refused (412), never both applied one over the other; two asking for one Slug get two names."""
    from concurrent.futures import ThreadPoolExecutor

    made = created(server, note(server.text), Slug="contested")
    iri, etag = made.headers["Location"], made.headers["ETag"]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(
            lambda k: server.write("PUT", iri, body=note(server.text, f"writer {k}"), **{"If-Match": etag}), range(8)))
        names = list(pool.map(lambda k: server.post(note(server.text), Slug="same").json()["id"], range(6)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [412] * 7, [a.text for a in answers]
    (won,) = (a for a in answers if a.status_code == 200)
    assert requests.get(iri, timeout=30).json()["body"]["value"] == won.json()["body"]["value"]
    assert len(set(names)) == 6 and names.count(server.container + "same") == 1


def test_anno_protocol_5_1_an_exported_annotation_is_kept_with_its_id_as_via(server: Server) -> None:
    """What GET /api/annotation exports (a fragment name's annotation, id a urn:uuid) posts back as it is."""
    exported = requests.get(server.url + "/api/annotation", params={"pdi": f"{server.text}#char=15,24"}, timeout=30)
    assert exported.status_code == 200
    kept = created(server, exported.json()).json()
    assert kept["via"] == exported.json()["id"] and kept["id"].startswith(server.container)
    assert kept["target"] == exported.json()["target"] and kept["motivation"] == "identifying"
    assert expand(kept)[OA + "hasTarget"] == expand(exported.json())[OA + "hasTarget"]
    w3c_musts("annotation", kept)


def test_anno_protocol_5_3_an_if_match_of_several_lines_is_one_list(server: Server) -> None:
    """RFC 9110 §5.3 and §13.1.1: ``If-Match`` is a list, and its lines are one list (found by a review,
    2026-11-27: a stale tag's line before the current one refused a valid update with ``412``)."""
    import http.client

    first = created(server, note(server.text))
    iri, etag, state = first.headers["Location"], first.headers["ETag"], first.json()
    changed = json.dumps({**state, "body": {"type": "TextualBody", "value": "changed"}}).encode()
    target = urllib.parse.urlsplit(iri)

    def put(*tags: str) -> int:
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        try:
            conn.putrequest("PUT", target.path)
            conn.putheader("Authorization", f"Bearer {server.curator}")
            conn.putheader("Content-Type", PROFILE)
            conn.putheader("Content-Length", str(len(changed)))
            for tag in tags:
                conn.putheader("If-Match", tag)
            conn.endheaders(changed)
            return conn.getresponse().status
        finally:
            conn.close()

    assert put('"stale"', '"older"') == 412
    assert put('"stale"', etag) == 200


def test_an_annotations_two_representations_have_two_etags_and_either_names_its_state(server: Server) -> None:
    """RFC 9110 §8.8.1: representations that differ only in their metadata, as negotiated media types of one data
    format do, need validators that tell them apart (found in review, 2026-11-27: JSON-LD and plain JSON had one
    tag, so a cache revalidating one was told 304 of the other). Either tag still names the state for If-Match."""
    first = created(server, note(server.text))
    iri = first.headers["Location"]
    ld = requests.get(iri, timeout=30)
    plain = requests.get(iri, headers={"Accept": "application/json"}, timeout=30)
    assert ld.headers["Content-Type"].startswith("application/ld+json")
    assert plain.headers["Content-Type"].startswith("application/json")
    assert ld.json() == plain.json() and ld.headers["ETag"] != plain.headers["ETag"]
    assert ld.headers["ETag"] == first.headers["ETag"]  # POST answered as JSON-LD, its default
    # each tag revalidates its own representation alone
    assert requests.get(iri, headers={"If-None-Match": ld.headers["ETag"]}, timeout=30).status_code == 304
    crossed = requests.get(iri, headers={"If-None-Match": ld.headers["ETag"], "Accept": "application/json"},
                           timeout=30)
    assert crossed.status_code == 200 and crossed.headers["ETag"] == plain.headers["ETag"]
    # a change with the plain JSON's tag holds, and then neither old tag does
    changed = {**ld.json(), "body": {"type": "TextualBody", "value": "changed"}}
    updated = server.write("PUT", iri, body=changed, **{"If-Match": plain.headers["ETag"], "Accept": "application/json"})
    assert updated.status_code == 200 and updated.headers["ETag"] not in (ld.headers["ETag"], plain.headers["ETag"])
    assert updated.headers["ETag"].endswith('-json"')
    for old in (ld.headers["ETag"], plain.headers["ETag"]):
        assert server.write("DELETE", iri, **{"If-Match": old}).status_code == 412
    assert server.write("DELETE", iri, **{"If-Match": updated.headers["ETag"]}).status_code == 204


def test_ldp_4_2_1_6_a_refused_update_names_the_constraints_it_broke(server: Server) -> None:
    # The protocol "is a use of the Linked Data Platform" (§4), an annotation an LDP Resource (§3, its Link
    # rel="type"); LDP 1.0 §4.2.1.6: "LDP servers MUST publish any constraints on LDP clients' ability to create
    # or update LDPRs, by adding a Link header with ... a link relation of http://www.w3.org/ns/ldp#constrainedBy,
    # and a target URI identifying a set of constraints ..., to all responses to requests that fail due to
    # violation of those constraints." The constraints are the protocol's own (§4.1's constrainedBy target).
    first = created(server, note(server.text, canonical="urn:uuid:00000000-0000-4000-8000-000000000002"))
    iri, etag, state = first.headers["Location"], first.headers["ETag"], first.json()
    constraints = ("http://www.w3.org/TR/annotation-protocol/", LDP + "constrainedBy")
    for body, status in (({**state, "canonical": "urn:uuid:x"}, 409),  # §5.3: canonical and via are kept
                         ({**state, "id": server.container + "other"}, 409),  # its IRI is the server's
                         ({key: value for key, value in state.items() if key != "target"}, 400),  # Model §3.1
                         ({**state, "@context": "http://schema.org/"}, 415)):  # not the anno context
        refused = server.write("PUT", iri, body=body, **{"If-Match": etag})
        assert refused.status_code == status, refused.text
        assert constraints in links(refused), (status, refused.headers.get("Link"))
    assert requests.get(iri, timeout=30).json() == state  # none of them changed it


def test_a_curator_of_one_series_learns_nothing_of_a_hidden_series_from_a_url_naming_it(server: Server) -> None:
    """A URL holding a PDI of a hidden series this archive holds was refused (403, "not series …") and one of a
    series it does not hold was kept as a web page's (201): so a curator of another series learned which hidden
    series are here. Both are refused alike now, as a bare PDI of either is; a token of every series still
    annotates another archive's URL (above)."""
    public_only = archive_token(server, "public-curator-2", series=[PUBLIC])
    hidden = server.hidden.replace("urn:pdi://", "")
    unheld = hidden.replace(HIDDEN, "nothere.example.us")
    answers = {}
    for name in (hidden, unheld):
        url = f"https://elsewhere.example/uri-res/N2R?urn:pdi://{name}"
        answer = server.post(note(url), token=public_only)
        answers[name.split("/")[0]] = (answer.status_code, answer.json()["title"])
    assert answers == {HIDDEN: (403, "forbidden"), "nothere.example.us": (403, "forbidden")}
    assert server.post(note(f"urn:pdi://{unheld}"), token=public_only).status_code == 403  # a bare PDI, as before


def test_a_curator_of_one_series_learns_no_slug_of_a_hidden_series_annotation(server: Server) -> None:
    """A name taken is given to no one else: a hidden series' annotation named by its Slug taught a curator of
    another series, who got a UUID for that Slug, that the name was taken (a known leak, 2026-11-27), though a GET
    of it is 404 as for a name never given. An annotation of a hidden series is named by a UUID, whatever its
    Slug; the name stays free, and the other curator gets it as it gets any free name."""
    hidden_curator = archive_token(server, "hidden-curator", series=[HIDDEN])
    public_only = archive_token(server, "public-curator-3", series=[PUBLIC])
    secret = server.post(note(server.hidden), token=hidden_curator, Slug="merger-plans")
    assert secret.status_code == 201 and secret.headers["Location"] != server.container + "merger-plans"
    segment = secret.headers["Location"].removeprefix(server.container)
    assert str(uuid.UUID(segment)) == segment
    mine = server.post(note(server.text), token=public_only, Slug="merger-plans")
    assert mine.status_code == 201 and mine.headers["Location"] == server.container + "merger-plans"
    assert requests.get(secret.headers["Location"], timeout=30).status_code == 404  # not found, as before


# --- §5.1 with RFC 9110 §13.1.1 and §13.1.2: a POST's preconditions on the container ----------------------


def _total(server: Server) -> int:
    return int(requests.get(server.container, timeout=30, headers={"Accept": PROFILE}).json().get("total", 0))


def test_anno_protocol_5_1_if_none_match_star_on_the_container_is_412(server: Server) -> None:
    """RFC 9110 §13.1.2: If-None-Match: * is false when the target has a current representation, and a
    container always has one (§4.1: GET of it is 200 even empty): the POST is refused 412, nothing is created."""
    assert requests.get(server.container, timeout=30).status_code == 200
    refused = server.post(note(server.text), **{"If-None-Match": "*"})
    assert refused.status_code == 412, refused.text
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert refused.headers["Link"] == CONTAINER_LINK_SENT
    assert _total(server) == 0
    created(server, note(server.text))  # without it, the same POST creates
    assert server.post(note(server.text), **{"If-None-Match": "*"}).status_code == 412
    assert _total(server) == 1


def test_a_post_no_annotation_could_be_is_refused_whatever_its_preconditions(server: Server) -> None:
    """RFC 9110 §13.2.1: preconditions are ignored where the answer without them, before the content is read, would
    not be 2xx: a POST without an annotation's Content-Type is refused as such (415 with content, 400 without: the
    problem type unsupported), whatever If-Match says. Schemathesis sent one with no body and an empty If-Match, and
    was answered 412."""
    sent = {"Authorization": f"Bearer {server.curator}"}
    for conditions in ({"If-Match": ""}, {"If-None-Match": "*"}, {"If-Match": '"stale"'}):
        bare = requests.post(server.container, timeout=30, headers={**sent, **conditions})
        assert bare.status_code == 400 and bare.json()["type"] == "/api#problem-unsupported", (conditions, bare.text)
        typed = requests.post(server.container, data=b"a note", timeout=30,
                              headers={**sent, "Content-Type": "text/plain", **conditions})
        assert typed.status_code == 415, (conditions, typed.status_code, typed.text)
    assert _total(server) == 0


def test_anno_protocol_5_1_if_match_is_compared_with_the_containers_current_etag(server: Server) -> None:
    """RFC 9110 §13.1.1: If-Match holds when it names the container's current ETag (strong comparison) or is
    ``*``; a stale tag is 412 and nothing is created. The tag of any representation of the container's description
    holds (IRIs or descriptions, minimal or not: one state, told alike); a page's tag is a page's, not the
    container's."""
    created(server, note(server.text, "first"))
    read = requests.get(server.container, timeout=30, headers={"Accept": PROFILE})
    tag = read.headers["ETag"]
    assert created(server, note(server.text, "second"), **{"If-Match": tag}).status_code == 201
    stale = server.post(note(server.text, "third"), **{"If-Match": tag})  # the container has changed since
    assert stale.status_code == 412, stale.text
    assert _total(server) == 2
    for asked in ({"params": {"iris": "1"}}, {"headers": {"Prefer": f'return=representation; include="{LDP}PreferMinimalContainer"'}},
                  {"headers": {"Accept": "application/json"}}):
        fresh = requests.get(server.container, timeout=30, **asked).headers["ETag"]  # type: ignore[arg-type]
        assert fresh != tag
        assert created(server, note(server.text), **{"If-Match": fresh}).status_code == 201
    page = requests.get(server.container, params={"iris": "0", "page": "0"}, timeout=30).headers["ETag"]
    assert server.post(note(server.text), **{"If-Match": page}).status_code == 412
    current = requests.get(server.container, timeout=30, headers={"Accept": PROFILE}).headers["ETag"]
    assert server.post(note(server.text), **{"If-Match": "W/" + current}).status_code == 412  # weak: never (§8.8.3.2)
    assert created(server, note(server.text), **{"If-Match": f'"x", {current}'}).status_code == 201  # one of a list
    assert created(server, note(server.text), **{"If-Match": "*"}).status_code == 201
    assert _total(server) == 7


def test_anno_protocol_5_1_if_none_match_with_the_current_etag_is_412(server: Server) -> None:
    created(server, note(server.text))
    tag = requests.get(server.container, timeout=30, headers={"Accept": PROFILE}).headers["ETag"]
    assert server.post(note(server.text), **{"If-None-Match": tag}).status_code == 412
    assert created(server, note(server.text), **{"If-None-Match": '"not-its-tag"'}).status_code == 201
    assert server.post(note(server.text), **{"If-None-Match": tag}).status_code == 201  # stale now: it holds
    assert _total(server) == 3


def test_anno_protocol_5_1_two_posts_on_one_etag_at_once_one_wins(server: Server) -> None:
    """Six clients POST at the same moment with the container's ETag all read: one is created, five refused."""
    from concurrent.futures import ThreadPoolExecutor

    tag = requests.get(server.container, timeout=30, headers={"Accept": PROFILE}).headers["ETag"]
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda k: server.post(note(server.text, f"writer {k}"), **{"If-Match": tag}), range(6)))
    assert sorted(a.status_code for a in answers) == [201] + [412] * 5, [a.text for a in answers]
    assert _total(server) == 1


def test_a_real_pdi_serve_refuses_if_none_match_star_on_the_container(tmp_path: Path) -> None:
    """The same through ``pdi serve`` itself: If-None-Match: * is 412; the container's ETag in If-Match creates."""
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(PUBLIC)
        text = str(archive.add(PUBLIC, b"Hello, world.\n", format="text"))
        token = archive.add_token("curator", role="curate")[1]
    process, port, _ = start_serve(tmp_path / "archive", "--replay-port", "0", drain=True)
    try:
        container = f"http://127.0.0.1:{port}/api/annotations/"
        wait_answering(process, container)
        sent = {"Authorization": f"Bearer {token}", "Content-Type": PROFILE, "Accept": PROFILE}
        body = json.dumps(note(text)).encode()
        refused = requests.post(container, data=body, timeout=30, headers={**sent, "If-None-Match": "*"})
        assert refused.status_code == 412, refused.text
        tag = requests.get(container, timeout=30, headers={"Accept": PROFILE}).headers["ETag"]
        assert requests.post(container, data=body, timeout=30, headers={**sent, "If-Match": tag}).status_code == 201
        assert requests.post(container, data=body, timeout=30, headers={**sent, "If-Match": tag}).status_code == 412
        assert requests.get(container, timeout=30, headers={"Accept": PROFILE}).json()["total"] == 1
    finally:
        stop(process)


#: The Link every answer of the container sends, a refusal too (§4.1).
CONTAINER_LINK_SENT = f'<{LDP}BasicContainer>; rel="type", <http://www.w3.org/TR/annotation-protocol/>; rel="{LDP}constrainedBy"'
