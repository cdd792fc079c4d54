"""OAI-PMH 2.0 at ``/oai`` of ``pdi serve``: harvested with sickle, every answer validated against the protocol's schemas.

The schemas are the OAI's own ``OAI-PMH.xsd`` and ``oai_dc.xsd`` with DCMI's
``simpledc20021212.xsd`` (tests/data/oaipmh, sources in tests/data/README.md),
read by xmlschema with no network (``allow="sandbox"``).
"""

from __future__ import annotations

import base64
import datetime
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import xmlschema
from server_helpers import Clock, serving
from sickle import Sickle, oaiexceptions
from sickle.iterator import OAIResponseIterator

from pdi.archive import Archive, Content
from pdi.interop import oaipmh
from pdi.server.protocol.rfc2169 import rfc2169_query

A = "oai-a.example.us"
B = "oai-b.example.us"


def forged_token(after: str | None, spec: str | None) -> str:
    """A token of the form this repository issues (URL-safe base64 of compact JSON, unpadded; the tokens of
    tests/data/oaipmh/), written by a stranger: where the list goes on, and the set it lists."""
    fields = [2, after, 0, "oai_dc", spec, None, None]
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode().rstrip("=")
DATA = Path(__file__).resolve().parents[1] / "data" / "oaipmh"
#: 150 documents in A, 100 in B; a page is 100 records (pdi.server.protocol.memento_oaipmh.OAI_PAGE).
IN_A, IN_B = 150, 100
START = datetime.datetime(2024, 1, 10, 8, 0, 0, tzinfo=datetime.UTC)
#: When the title of A's first document is restated (its datestamp moves there).
RESTATED = datetime.datetime(2026, 6, 1, 12, 0, 0, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Site:
    base: str
    a: tuple[str, ...]  # generic names, in deposit order
    b: tuple[str, ...]
    withdrawn: str  # a document of B withdrawn whole
    partly: str  # a document of A whose version 2 was withdrawn
    capture: str  # a document of A whose id is a URL
    order: tuple[str, ...]  # the first IN_A + IN_B documents in deposit order, document i deposited on START + i days


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(DATA / "OAI-PMH.xsd"), allow="sandbox",
                               locations={"http://www.openarchives.org/OAI/2.0/oai_dc/": str(DATA / "oai_dc.xsd")})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    location = tmp_path_factory.mktemp("oai") / "archive"
    clock = Clock(START)
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(A)
        archive.add_series(B)
        a: list[str] = []
        b: list[str] = []
        order: list[str] = []
        for i in range(IN_A + IN_B):  # interleaved, one a day, so series and dates cross
            clock.now = START + datetime.timedelta(days=i)
            series, names = (A, a) if (i % 5 < 3 and len(a) < IN_A) or len(b) >= IN_B else (B, b)
            name = str(archive.deposit(series, [Content(f"document {i}\n".encode(), "text")])[0])
            names.append(name.rsplit(".", 2)[0])
            order.append(names[-1])
        clock.now = START + datetime.timedelta(days=IN_A + IN_B)
        archive.annotate(a[0], "title", "The first")
        archive.annotate(a[0], "dc:creator", "A. Writer")
        archive.annotate(a[0], "subject", "tests\x01 and <harvests> & such")
        archive.annotate(a[0], "shelfmark", "not Dublin Core")
        archive.annotate(a[0] + ".text.1", "language", "en")
        clock.now = RESTATED
        archive.annotate(a[0], "title", "The first, retitled")
        archive.withdraw(b[3], "deposited twice")
        partly = a[4]
        archive.add_version(partly, [Content(b"second\n", "text")])
        archive.annotate(partly + ".text.2", "title", "The wrong file")  # withdrawn with its version
        archive.withdraw(partly + ".text.2", "wrong file")
        capture = str(archive.deposit(A, [Content(b"<p>page</p>", "html")], foreign_id="http://127.0.0.1:9/p")[0])
        a.append(capture.rsplit(".", 2)[0])
    with serving(location, "--oai-admin-email", "archivist@library.example.org") as (_, port):
        yield Site(f"http://127.0.0.1:{port}", tuple(a), tuple(b), b[3], partly, a[-1], tuple(order))


def oai(site: Site, method: str = "GET", **args: str) -> httpx.Response:
    if method == "POST":
        return httpx.post(f"{site.base}/oai", data=args)
    return httpx.get(f"{site.base}/oai", params=args)


def valid(schema: xmlschema.XMLSchema, answer: httpx.Response) -> Any:
    """The answer's XML, after checking it is an OAI-PMH response its schemas accept."""
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/xml; charset=utf-8"
    # the answer's own xsi:schemaLocation names remote schemas: nothing outside is read
    document = xmlschema.XMLResource(answer.content, allow="none")
    schema.validate(document)
    return schema.to_dict(document)


# --- harvesting with a client library ------------------------------------------------------------
def test_sickle_harvests_every_record_across_pages(site: Site, schema: xmlschema.XMLSchema) -> None:
    harvester = Sickle(f"{site.base}/oai")
    records = list(harvester.ListRecords(metadataPrefix="oai_dc"))
    # every document once, in the order of their first deposits (the capture last)
    assert [r.header.identifier for r in records] == [*site.order, site.capture]
    deleted = [r.header.identifier for r in records if r.deleted]
    assert deleted == [site.withdrawn]
    # the same list by hand: three pages, each valid, the last with an empty token
    pages, token, cursors = [], None, []
    while True:
        answer = oai(site, verb="ListRecords", **({"resumptionToken": token} if token else {"metadataPrefix": "oai_dc"}))
        body = valid(schema, answer)["ListRecords"]
        pages.append(len(body["record"]))
        resumption = body.get("resumptionToken")
        if resumption is not None:
            cursors.append(resumption["@cursor"])
        token = resumption.get("$") if resumption else None
        if not token:
            break
    assert pages == [100, 100, 51] and cursors == [0, 100, 200]


def test_sickle_harvests_a_set_and_identifiers(site: Site) -> None:
    harvester = Sickle(f"{site.base}/oai")
    sets = {s.setSpec: s.setName for s in harvester.ListSets()}
    assert sets == {A: A, B: B}  # a setName (§4.6) of a series with no authority recorded: its name, no "()"
    in_a = [h.identifier for h in harvester.ListIdentifiers(metadataPrefix="oai_dc", set=A)]
    assert in_a == list(site.a)  # catalog order is deposit order
    in_b = [h for h in harvester.ListIdentifiers(metadataPrefix="oai_dc", set=B)]
    assert [h.identifier for h in in_b] == list(site.b)
    assert all(h.setSpecs == [B] for h in in_b)
    assert [h.identifier for h in in_b if h.deleted] == [site.withdrawn]
    # POST is the same protocol (§3.1.1.2)
    posted = Sickle(f"{site.base}/oai", http_method="POST")
    assert [h.identifier for h in posted.ListIdentifiers(metadataPrefix="oai_dc", set=B)] == list(site.b)


def test_dublin_core_from_statements(site: Site, schema: xmlschema.XMLSchema) -> None:
    record = Sickle(f"{site.base}/oai").GetRecord(identifier=site.a[0], metadataPrefix="oai_dc")
    assert record.header.datestamp == "2026-06-01T12:00:00Z"  # when it was retitled
    assert record.header.setSpecs == [A]
    metadata = record.metadata
    assert metadata["title"] == ["The first, retitled"]  # the later statement supersedes
    assert metadata["creator"] == ["A. Writer"]
    assert metadata["subject"] == ["tests\ufffd and <harvests> & such"]  # U+0001 cannot be XML
    assert metadata["language"] == ["en"]  # stated about its version, filed under the document
    assert metadata["identifier"] == [site.a[0], f"{site.base}/uri-res/N2R?{rfc2169_query(site.a[0])}"]
    assert metadata["date"] == ["2024-01-10"] and metadata["format"] == ["text/plain"]
    assert "shelfmark" not in metadata and "source" not in metadata
    capture = Sickle(f"{site.base}/oai").GetRecord(identifier=site.capture, metadataPrefix="oai_dc")
    assert capture.metadata["source"] == ["http://127.0.0.1:9/p"] and capture.metadata["format"] == ["text/html"]
    valid(schema, oai(site, verb="GetRecord", identifier=site.capture, metadataPrefix="oai_dc"))


def test_a_withdrawn_version_is_left_out_and_a_withdrawn_document_is_deleted(site: Site,
                                                                            schema: xmlschema.XMLSchema) -> None:
    harvester = Sickle(f"{site.base}/oai")
    partly = harvester.GetRecord(identifier=site.partly, metadataPrefix="oai_dc")
    assert not partly.deleted and partly.metadata["format"] == ["text/plain"]
    gone = harvester.GetRecord(identifier=site.withdrawn, metadataPrefix="oai_dc")
    assert gone.deleted and gone.header.datestamp == "2026-06-01T12:00:00Z"
    body = valid(schema, oai(site, verb="GetRecord", identifier=site.withdrawn, metadataPrefix="oai_dc"))
    assert body["GetRecord"]["record"]["header"]["@status"] == "deleted"
    assert "metadata" not in body["GetRecord"]["record"]


def test_what_was_said_of_a_withdrawn_version_is_left_out(site: Site, schema: xmlschema.XMLSchema) -> None:
    # version 2 of "partly" was titled, then withdrawn: its record (and its N2C) says nothing of it
    body = valid(schema, oai(site, verb="GetRecord", identifier=site.partly, metadataPrefix="oai_dc"))
    assert "The wrong file" not in str(body)
    harvested = Sickle(f"{site.base}/oai").GetRecord(identifier=site.partly, metadataPrefix="oai_dc")
    assert "title" not in harvested.metadata
    tombstone = httpx.get(f"{site.base}/uri-res/N2C?{rfc2169_query(site.partly + '.text.2')}").json()
    assert "The wrong file" not in str(tombstone) and tombstone["withdrawn"]["reason"] == "wrong file"


@pytest.mark.parametrize(("args", "days"), [
    ({"from": "2026-06-01"}, None),  # restated, withdrawn, new version, capture: all at RESTATED
    ({"from": "2026-06-01T12:00:00Z"}, None),
    ({"from": "2026-06-01T12:00:01Z"}, ()),
    ({"until": "2024-01-10"}, ()),  # the first document's day, but it changed later
    ({"until": "2024-01-11"}, (1,)),
    ({"from": "2024-01-11T00:00:00Z", "until": "2024-01-13T07:59:59Z"}, (1, 2)),
    ({"from": "2024-01-11T08:00:01Z", "until": "2024-01-13T08:00:00Z"}, (2, 3)),
    ({"from": "2024-01-11", "until": "2024-01-11"}, (1,)),  # §2.7.1: from equal to until is a range (inclusive)
])
def test_selective_harvesting_by_datestamp(site: Site, args: dict[str, str], days: tuple[int, ...] | None) -> None:
    harvester = Sickle(f"{site.base}/oai")
    changed = [site.order[0], site.order[site.order.index(site.partly)], site.order[site.order.index(site.withdrawn)]]
    if days == ():
        with pytest.raises(oaiexceptions.NoRecordsMatch):
            list(harvester.ListIdentifiers(metadataPrefix="oai_dc", **args))
        return
    found = [h.identifier for h in harvester.ListIdentifiers(metadataPrefix="oai_dc", **args)]
    if days is None:
        assert found == [*sorted(changed, key=site.order.index), site.capture]
    else:  # document i was deposited at START + i days (08:00) and has not changed since
        assert found == [site.order[i] for i in days]


@pytest.mark.parametrize("bound", ["0999-12-31", "0999-12-31T23:59:59Z", "0001-01-01"])
def test_section_3_3_1_a_datestamp_of_a_year_before_1000_is_compared_as_a_date(site: Site, bound: str) -> None:
    # every record here changed in 2024 or later: all of them are from a year before 1000, none until it
    harvester = Sickle(f"{site.base}/oai")
    found = [h.identifier for h in harvester.ListIdentifiers(metadataPrefix="oai_dc", **{"from": bound})]
    assert found == [*site.order, site.capture]
    with pytest.raises(oaiexceptions.NoRecordsMatch):
        list(harvester.ListIdentifiers(metadataPrefix="oai_dc", until=bound))


def test_identify_and_metadata_formats(site: Site, schema: xmlschema.XMLSchema) -> None:
    harvester = Sickle(f"{site.base}/oai")
    identity = harvester.Identify()
    assert identity.baseURL == f"{site.base}/oai" and identity.protocolVersion == "2.0"
    assert identity.adminEmail == "archivist@library.example.org"
    assert identity.earliestDatestamp == "2024-01-10T00:00:00Z"
    assert identity.deletedRecord == "persistent" and identity.granularity == "YYYY-MM-DDThh:mm:ssZ"
    formats = list(harvester.ListMetadataFormats())
    assert [(f.metadataPrefix, f.metadataNamespace) for f in formats] == [
        ("oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc/")]
    for args in ({"verb": "Identify"}, {"verb": "ListMetadataFormats"}, {"verb": "ListSets"},
                 {"verb": "ListMetadataFormats", "identifier": site.b[0]}):
        valid(schema, oai(site, **args))


# --- the protocol's errors ---------------------------------------------------------------------
@pytest.mark.parametrize(("args", "code"), [
    ({}, "badVerb"),
    ({"verb": "ListEverything"}, "badVerb"),
    ({"verb": "ListRecords"}, "badArgument"),  # no metadataPrefix
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "shelf": "3"}, "badArgument"),
    ({"verb": "Identify", "metadataPrefix": "oai_dc"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2024-13-01"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "yesterday"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2024-01-01", "until": "2025-01-01T00:00:00Z"},
     "badArgument"),
    ({"verb": "ListRecords", "resumptionToken": "eyJ4IjoxfQ", "metadataPrefix": "oai_dc"}, "badArgument"),
    ({"verb": "ListRecords", "resumptionToken": "bm90IGEgdG9rZW4"}, "badResumptionToken"),
    ({"verb": "ListRecords", "resumptionToken": "!!"}, "badResumptionToken"),
    ({"verb": "ListSets", "resumptionToken": "x"}, "badResumptionToken"),
    # §3.6: a token longer than any issued here is "invalid" (badResumptionToken), the request echoed with it (§3.2)
    ({"verb": "ListIdentifiers", "resumptionToken": "A" * 6000}, "badResumptionToken"),
    ({"verb": "ListRecords", "resumptionToken": "eyJ4IjoxfQ" * 1000}, "badResumptionToken"),
    # a token of this repository's form listing a set there is not (no list of it was begun here)
    ({"verb": "ListRecords", "resumptionToken": forged_token(None, "no-such-series.example.us")}, "badResumptionToken"),
    ({"verb": "ListIdentifiers", "resumptionToken": forged_token("urn:pdi://x.example.us/2024/01/10/1", "x:y")},
     "badResumptionToken"),
    ({"verb": "ListRecords", "metadataPrefix": "marc21"}, "cannotDisseminateFormat"),
    ({"verb": "GetRecord", "identifier": "urn:pdi://oai-a.example.us/2024/01/10/999", "metadataPrefix": "oai_dc"},
     "idDoesNotExist"),
    ({"verb": "GetRecord", "identifier": "oai:elsewhere:1", "metadataPrefix": "oai_dc"}, "idDoesNotExist"),
    ({"verb": "ListMetadataFormats", "identifier": "urn:pdi://oai-a.example.us/2024/01/10/1.text.1"},
     "idDoesNotExist"),  # an item is a document: its generic name
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": "no-such-series.example.us"}, "noRecordsMatch"),
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2100-01-01"}, "noRecordsMatch"),
])
def test_bad_requests_answer_the_protocols_errors(site: Site, schema: xmlschema.XMLSchema,
                                                  args: dict[str, str], code: str) -> None:
    for method in ("GET", "POST"):
        body = valid(schema, oai(site, method, **args))
        assert body["error"][0]["@code"] == code and body["error"][0]["$"]
        if code not in ("badVerb", "badArgument"):  # §3.2: the request echoed with its arguments
            assert {k.removeprefix("@"): v for k, v in body["request"].items() if k != "$"} == args
        if code in ("badVerb", "badArgument"):  # §3.2: the request echoed without its arguments
            assert body["request"] == f"{site.base}/oai"  # text alone: no attribute


#: Each argument rule of OAI-PMH 2.0, by the section that states it: (section, request, error code, sickle's exception).
#: §3.6 names the codes; §4.x lists each verb's arguments (required, optional, exclusive) and errors.
_RULES = [
    # §2.7.1: "the from argument must be less than or equal to the until argument. Otherwise, a
    # repository must issue a badArgument error."
    ("2_7_1-from-later-than-until-days", {"verb": "ListRecords", "metadataPrefix": "oai_dc",
                                          "from": "2024-01-12", "until": "2024-01-11"}, "badArgument"),
    ("2_7_1-from-later-than-until-seconds", {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc",
                                             "from": "2024-01-11T08:00:01Z", "until": "2024-01-11T08:00:00Z"},
     "badArgument"),
    # §3.3.1: "Both arguments must have the same granularity"; the two legitimate formats only
    ("3_3_1-granularities-differ", {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc",
                                    "from": "2024-01-01T00:00:00Z", "until": "2025-01-01"}, "badArgument"),
    ("3_3_1-not-a-utc-datestamp", {"verb": "ListRecords", "metadataPrefix": "oai_dc",
                                   "from": "2024-01-01T00:00:00+01:00"}, "badArgument"),
    ("3_3_1-finer-than-seconds", {"verb": "ListRecords", "metadataPrefix": "oai_dc",
                                  "until": "2024-01-01T00:00:00.5Z"}, "badArgument"),
    ("3_3_1-no-such-day", {"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2024-02-30"}, "badArgument"),
    # §3.1.2.1 and §3.6: badVerb — the verb missing, not a legal verb (verbs are case sensitive) or empty
    ("3_6-badVerb-missing", {"metadataPrefix": "oai_dc"}, "badVerb"),
    ("3_6-badVerb-unknown", {"verb": "identify"}, "badVerb"),
    ("3_6-badVerb-empty", {"verb": ""}, "badVerb"),
    # §3.6: badArgument — an illegal argument, a required one missing, a value of illegal syntax
    ("4_2-Identify-takes-no-argument", {"verb": "Identify", "set": A}, "badArgument"),
    ("4_1-GetRecord-needs-metadataPrefix", {"verb": "GetRecord", "identifier": "urn:pdi://x.example.us/2024/01/10/1"},
     "badArgument"),
    ("4_1-GetRecord-needs-identifier", {"verb": "GetRecord", "metadataPrefix": "oai_dc"}, "badArgument"),
    ("4_3-ListIdentifiers-needs-metadataPrefix", {"verb": "ListIdentifiers", "set": A}, "badArgument"),
    ("4_4-ListMetadataFormats-takes-no-set", {"verb": "ListMetadataFormats", "set": A}, "badArgument"),
    ("4_6-ListSets-takes-no-set", {"verb": "ListSets", "set": A}, "badArgument"),
    ("4_5-argument-names-are-case-sensitive", {"verb": "ListRecords", "MetadataPrefix": "oai_dc"}, "badArgument"),
    ("4_5-empty-set", {"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": ""}, "badArgument"),
    # §3.5 and §4.3/§4.5/§4.6: resumptionToken is an exclusive argument
    ("4_5-resumptionToken-is-exclusive", {"verb": "ListRecords", "resumptionToken": "x", "from": "2024-01-01"},
     "badArgument"),
    ("4_3-resumptionToken-is-exclusive", {"verb": "ListIdentifiers", "resumptionToken": "x", "set": A},
     "badArgument"),
    # §3.6 badResumptionToken: "The value of the resumptionToken argument is invalid or expired."
    ("3_6-badResumptionToken-not-issued-here", {"verb": "ListIdentifiers", "resumptionToken": "eyJ4IjoxfQ"},
     "badResumptionToken"),
    ("3_6-badResumptionToken-empty", {"verb": "ListRecords", "resumptionToken": ""}, "badResumptionToken"),
    # §3.6 cannotDisseminateFormat, for each verb that takes a metadataPrefix (§4.1, §4.3, §4.5)
    ("4_1-cannotDisseminateFormat", {"verb": "GetRecord", "metadataPrefix": "marc21",
                                     "identifier": "urn:pdi://x.example.us/2024/01/10/1"}, "cannotDisseminateFormat"),
    ("4_3-cannotDisseminateFormat", {"verb": "ListIdentifiers", "metadataPrefix": "marc21"}, "cannotDisseminateFormat"),
    # §3.6 idDoesNotExist: "unknown or illegal in this repository" (§4.1, §4.4)
    ("4_4-idDoesNotExist", {"verb": "ListMetadataFormats", "identifier": "oai:elsewhere:1"}, "idDoesNotExist"),
    # §3.6 noRecordsMatch: a legal combination that selects nothing
    ("3_6-noRecordsMatch", {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "until": "2000-01-01"},
     "noRecordsMatch"),
]
_SICKLE = {"badArgument": oaiexceptions.BadArgument, "badVerb": oaiexceptions.BadVerb,
           "badResumptionToken": oaiexceptions.BadResumptionToken,
           "cannotDisseminateFormat": oaiexceptions.CannotDisseminateFormat,
           "idDoesNotExist": oaiexceptions.IdDoesNotExist, "noRecordsMatch": oaiexceptions.NoRecordsMatch}


@pytest.mark.parametrize(("args", "code"), [(args, code) for _, args, code in _RULES],
                         ids=[section for section, _, _ in _RULES])
def test_oaipmh_argument_rule_of_section(site: Site, schema: xmlschema.XMLSchema, args: dict[str, str],
                                        code: str) -> None:
    for method in ("GET", "POST"):  # §3.1.1: the same protocol either way
        body = valid(schema, oai(site, method, **args))
        assert [e["@code"] for e in body["error"]] == [code]
    # the independent harvester reads the same error: sickle raises the exception of its code
    if args.get("verb") in ("Identify", "GetRecord", "ListIdentifiers", "ListRecords", "ListSets",
                            "ListMetadataFormats") and code in _SICKLE:
        with pytest.raises(_SICKLE[code]):  # its iterator raises the error of the first response
            OAIResponseIterator(Sickle(f"{site.base}/oai"), dict(args))


def test_oaipmh_3_1_2_1_a_repeated_verb_is_bad_verb_and_a_repeated_argument_bad_argument(
        site: Site, schema: xmlschema.XMLSchema) -> None:
    # §3.6: badVerb "the verb argument is repeated"; badArgument "includes a repeated argument"
    assert valid(schema, httpx.get(f"{site.base}/oai?verb=Identify&verb=ListSets"))["error"][0]["@code"] == "badVerb"
    for body in ("verb=Identify&verb=Identify", "verb=ListSets&verb=ListSets"):
        posted = httpx.post(f"{site.base}/oai", content=body.encode(),
                            headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert valid(schema, posted)["error"][0]["@code"] == "badVerb"
    twice = httpx.get(f"{site.base}/oai?verb=GetRecord&identifier={site.a[0]}&identifier={site.a[1]}"
                      "&metadataPrefix=oai_dc")
    assert valid(schema, twice)["error"][0]["@code"] == "badArgument"


def test_repeated_arguments_are_bad(site: Site, schema: xmlschema.XMLSchema) -> None:
    answer = httpx.get(f"{site.base}/oai?verb=ListSets&verb=ListSets")
    assert valid(schema, answer)["error"][0]["@code"] == "badVerb"
    answer = httpx.get(f"{site.base}/oai?verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc")
    assert valid(schema, answer)["error"][0]["@code"] == "badArgument"
    with pytest.raises(oaiexceptions.BadArgument):
        list(Sickle(f"{site.base}/oai").ListRecords(metadataPrefix="oai_dc", until="2024-01-01", **{"from": "x"}))


def test_a_post_that_is_not_a_form_is_refused(site: Site) -> None:
    answer = httpx.post(f"{site.base}/oai", content=b"verb=Identify", headers={"Content-Type": "text/plain"})
    assert answer.status_code == 415 and answer.headers["content-type"] == "application/problem+json"
    huge = httpx.post(f"{site.base}/oai", data={"verb": "Identify", "x": "y" * (70 << 10)})
    assert huge.status_code == 413


def test_a_post_whose_form_is_not_utf_8_is_a_bad_argument_saying_so(site: Site, schema: xmlschema.XMLSchema) -> None:
    # §3.1.1.2: a POST's arguments are a form (application/x-www-form-urlencoded, UTF-8); its verb is there, so the
    # error is in its arguments, not a missing verb
    posted = httpx.post(f"{site.base}/oai", content=b"verb=Identify&x=caf\xe9",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    error = valid(schema, posted)["error"][0]
    assert error["@code"] == "badArgument" and "UTF-8" in error["$"] and "octet 19" in error["$"], error


def test_an_admin_address_the_schema_refuses_is_refused_at_start(tmp_path: Path) -> None:
    import subprocess
    import sys

    Archive.init(tmp_path / "archive").close()
    started = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--archive", str(tmp_path / "archive"),
         "--oai-admin-email", "root@localhost"], capture_output=True, text=True, timeout=60)
    assert started.returncode != 0
    assert started.stderr.startswith("pdi: ") and "root@localhost" in started.stderr and "Traceback" not in started.stderr


# --- who reads (issue 22): OAI-PMH shows a reader only what it may read ------------------------------
OPEN, CLOSED, SECRET = "oai-open.example.us", "oai-closed.example.us", "oai-secret.example.us"


def test_an_anonymous_harvest_learns_nothing_of_private_hidden_or_embargoed_documents(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    clock = Clock(START)
    with Archive.init(location, clock=clock) as archive:
        for series in (OPEN, CLOSED, SECRET):
            archive.add_series(series)
        # private and hidden before anything is deposited: nothing of them was ever shown (what was shown and is
        # withheld later is a deleted record: test_section_2_5_1_…)
        archive.set_series_access(CLOSED, "private")
        archive.set_series_access(SECRET, "hidden")
        public = str(archive.add(OPEN, b"open\n", format="text")).rsplit(".", 2)[0]
        embargoed = str(archive.deposit(OPEN, [Content(b"<p>sealed ruling</p>", "html")],
                                        foreign_id="http://127.0.0.1:9/sealed", embargo_until="2099-01-01")[0])
        embargoed = embargoed.rsplit(".", 2)[0]
        private = str(archive.add(CLOSED, b"closed\n", format="text")).rsplit(".", 2)[0]
        hidden = str(archive.add(SECRET, b"secret\n", format="text")).rsplit(".", 2)[0]
        gone = str(archive.add(SECRET, b"secret, withdrawn\n", format="text")).rsplit(".", 2)[0]
        for name, title in ((embargoed, "Sealed ruling"), (private, "Closed file"), (hidden, "Secret file")):
            archive.annotate(name, "title", title)
        archive.withdraw(gone, "never to be known")
        clock.now = RESTATED  # a second version of the public document, embargoed, and a title of it
        archive.add_version(public, [Content(b"open, revised\n", "text")], embargo_until="2099-01-01")
        archive.annotate(public + ".text.2", "title", "Sealed revision")
        _, everything = archive.add_token("harvester", role="read", series=[OPEN, CLOSED, SECRET])
    secrets = (embargoed, private, hidden, gone)
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}/oai"
        for method in ("GET", "POST"):
            anonymous = Sickle(base, http_method=method)
            assert [r.header.identifier for r in anonymous.ListRecords(metadataPrefix="oai_dc")] == [public]
            assert [h.identifier for h in anonymous.ListIdentifiers(metadataPrefix="oai_dc")] == [public]
            assert [s.setSpec for s in anonymous.ListSets()] == [OPEN]
            for name in secrets:
                with pytest.raises(oaiexceptions.IdDoesNotExist):
                    anonymous.GetRecord(identifier=name, metadataPrefix="oai_dc")
                with pytest.raises(oaiexceptions.IdDoesNotExist):
                    list(anonymous.ListMetadataFormats(identifier=name))
            for series in (CLOSED, SECRET):  # a set the reader may not read is no set: as one never made
                with pytest.raises(oaiexceptions.NoRecordsMatch):
                    list(anonymous.ListIdentifiers(metadataPrefix="oai_dc", set=series))
            for args in ({"verb": "ListRecords", "metadataPrefix": "oai_dc"}, {"verb": "ListSets"}):
                text = (httpx.post(base, data=args) if method == "POST" else httpx.get(base, params=args)).text
                for word in ("Sealed", "Closed", "Secret", "127.0.0.1:9", "2026-06-01", CLOSED, SECRET, *secrets):
                    assert word not in text, word
            # the public document is dated by what the reader may learn of: not by its embargoed version
            record = anonymous.GetRecord(identifier=public, metadataPrefix="oai_dc")
            assert record.header.datestamp == "2024-01-10T08:00:00Z" and "title" not in record.metadata
            with pytest.raises(oaiexceptions.NoRecordsMatch):
                list(anonymous.ListIdentifiers(metadataPrefix="oai_dc", **{"from": "2026-06-01"}))
            assert [h.identifier for h in anonymous.ListIdentifiers(metadataPrefix="oai_dc", until="2024-01-10")] \
                == [public]
        # a token whose scope covers them harvests them all, the withdrawn one a deleted record
        reader = Sickle(base, headers={"Authorization": f"Bearer {everything}"})
        records = {r.header.identifier: r for r in reader.ListRecords(metadataPrefix="oai_dc")}
        assert set(records) == {public, *secrets} and records[gone].deleted
        assert records[embargoed].metadata["title"] == ["Sealed ruling"]
        assert records[public].header.datestamp == "2026-06-01T12:00:00Z"
        assert records[public].metadata["title"] == ["Sealed revision"]
        assert {s.setSpec for s in reader.ListSets()} == {OPEN, CLOSED, SECRET}


def test_section_3_5_a_token_names_its_last_record_and_only_one_the_reader_may_see(
        tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from pdi.interop.oaipmh import Resumption, Selection
    from pdi.server import create_app

    location = str(tmp_path / "archive")
    clock = Clock(START)
    long_url = "http://127.0.0.1:9/" + "x" * 2100  # an identifier too long to carry whole in a token
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(OPEN)
        archive.add_series(SECRET)
        archive.set_series_access(SECRET, "hidden")  # before its document: never shown, so never a deleted record
        names = [str(archive.add(OPEN, b"one\n", format="text"))]
        names.append(str(archive.deposit(OPEN, [Content(b"<p>long</p>", "html")], foreign_id=long_url)[0]))
        hidden = str(archive.add(SECRET, b"secret\n", format="text")).rsplit(".", 2)[0]
        names.append(str(archive.add(OPEN, b"three\n", format="text")))
        app = create_app(location, archive=archive)
        for route in app.routes:
            if isinstance(route, Route) and route.path == "/oai":
                route.endpoint.__self__.page = 1  # type: ignore[attr-defined]
        client = TestClient(app)
        harvested, token = [], None
        while True:
            args = {"verb": "ListIdentifiers", **({"resumptionToken": token} if token else {"metadataPrefix": "oai_dc"})}
            answer = client.get("/oai", params=args)
            body = valid(schema, answer)["ListIdentifiers"]
            harvested += [h["identifier"] for h in body["header"]]
            token = (body.get("resumptionToken") or {}).get("$")
            if not token:
                break
        assert harvested == [n.rsplit(".", 2)[0] for n in names]
        # a token made to go on after the hidden document is refused as one never issued
        forged = Resumption(hidden, 1, Selection("oai_dc")).encode()
        refused = valid(schema, client.get("/oai", params={"verb": "ListIdentifiers", "resumptionToken": forged}))
        assert refused["error"][0]["@code"] == "badResumptionToken"
        made = Resumption(names[0].rsplit(".", 2)[0], 1, Selection("oai_dc")).encode()
        after_first = valid(schema, client.get("/oai", params={"verb": "ListIdentifiers", "resumptionToken": made}))
        assert [h["identifier"] for h in after_first["ListIdentifiers"]["header"]] == [names[1].rsplit(".", 2)[0]]


def test_oaipmh_4_5_a_repository_without_sets_answers_a_set_with_no_set_hierarchy(
        tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    # An archive with no series has no set: ListSets says noSetHierarchy ("The repository does not support
    # sets", §4.6; the schema's ListSets holds one set or more). §4.3 and §4.5 list the same error for
    # ListIdentifiers and ListRecords: a set asked of it is noSetHierarchy too, not noRecordsMatch, so a harvester
    # is told one thing about sets whichever verb it asks.
    Archive.init(tmp_path / "archive").close()
    with serving(tmp_path / "archive") as (_, port):
        site = Site(f"http://127.0.0.1:{port}", (), (), "", "", "", ())
        assert valid(schema, oai(site, verb="ListSets"))["error"][0]["@code"] == "noSetHierarchy"
        for verb in ("ListRecords", "ListIdentifiers"):
            for method in ("GET", "POST"):
                body = valid(schema, oai(site, method, verb=verb, metadataPrefix="oai_dc", set="any.example.us"))
                assert [e["@code"] for e in body["error"]] == ["noSetHierarchy"]
            # without a set, the list is empty: noRecordsMatch
            assert valid(schema, oai(site, verb=verb, metadataPrefix="oai_dc"))["error"][0]["@code"] == "noRecordsMatch"
            with pytest.raises(oaiexceptions.NoSetHierarchy):  # the independent harvester reads the same
                OAIResponseIterator(Sickle(f"{site.base}/oai"),
                                    {"verb": verb, "metadataPrefix": "oai_dc", "set": "any.example.us"})


def test_section_2_7_2_a_record_an_embargo_hid_is_harvested_from_the_end_of_the_embargo(tmp_path: Path) -> None:
    """When an embargo ends, an anonymous harvester sees what it hid: a document it could not see at all, and a
    version of a document it could. OAI-PMH §2.7.2: a harvest ``from`` the ``responseDate`` of the last one gets
    every record created, changed or deleted since (as the harvester sees it), so the record's datestamp is the end
    of the embargo, not its deposit before the last harvest, and the incremental harvest finds it."""
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(OPEN)
        public = str(archive.add(OPEN, b"open\n", format="text")).rsplit(".", 2)[0]
    with serving(location) as (_, port):
        # the embargoes made once the resolver answers, so that however long it took to start (a loaded machine),
        # the first harvest comes before they end
        ends = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=6)).replace(microsecond=0)
        until = ends.strftime("%Y-%m-%dT%H:%M:%SZ")
        with Archive.open(location) as archive:
            archive.add_version(public, [Content(b"open, revised\n", "text")], embargo_until=until)
            sealed = str(archive.deposit(OPEN, [Content(b"sealed\n", "text")], embargo_until=until)[0]).rsplit(".", 2)[0]
        base = f"http://127.0.0.1:{port}/oai"
        first = httpx.get(base, params={"verb": "ListIdentifiers", "metadataPrefix": "oai_dc"})
        assert sealed not in first.text and public in first.text
        last_harvest = ET.fromstring(first.content).findtext(f"{{{oaipmh.OAI}}}responseDate")
        assert last_harvest is not None and last_harvest < until
        while datetime.datetime.now(datetime.UTC) < ends + datetime.timedelta(seconds=1):
            time.sleep(0.2)
        harvester = Sickle(base)
        since = list(harvester.ListIdentifiers(metadataPrefix="oai_dc", **{"from": last_harvest}))
        assert sorted(h.identifier for h in since) == sorted([public, sealed])
        assert all(h.datestamp >= until for h in since)
        record = harvester.GetRecord(identifier=public, metadataPrefix="oai_dc")
        assert record.header.datestamp == until


def test_section_2_5_1_a_record_withheld_after_a_harvest_is_a_deleted_record_and_one_shown_is_harvested(
        tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    """The repository says ``deletedRecord`` ``persistent`` (§4.2): it keeps track of deletions with no time limit.
    A record a harvester was shown and may no longer be (an embargo set on it, its series made private) is a deleted
    record from then on (§2.5.1), dated when it was withheld, so that the incremental harvest (``from`` the last
    one's ``responseDate``, §2.7.2) tells the harvester to let its copy go; one shown by a change of access (an
    embargo lifted early, a series made public) is dated by it, so that the same harvest finds it (§2.7.1). Nothing
    here ends by the clock: every change is the owner's."""
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        for series in (OPEN, CLOSED, SECRET):
            archive.add_series(series)
        archive.set_series_access(SECRET, "hidden")

        def deposit(series: str, body: bytes, **kwargs: Any) -> str:
            return str(archive.deposit(series, [Content(body, "text")], **kwargs)[0]).rsplit(".", 2)[0]

        sealed, kept, waiting = deposit(OPEN, b"sealed later\n"), deposit(OPEN, b"kept\n"), deposit(
            OPEN, b"under embargo\n", embargo_until="2099-01-01")
        closed, secret = deposit(CLOSED, b"closed later\n"), deposit(SECRET, b"made public later\n")
        archive.annotate(sealed, "title", "Sealed later")
        _, everything = archive.add_token("harvester", role="read", series=[OPEN, CLOSED, SECRET])
        deposited = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    while datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") <= deposited:
        time.sleep(0.1)  # ``from`` is inclusive (§2.7.1): a harvest in the deposits' second would find them again
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}/oai"
        first = httpx.get(base, params={"verb": "ListRecords", "metadataPrefix": "oai_dc"})
        valid(schema, first)
        last_harvest = ET.fromstring(first.content).findtext(f"{{{oaipmh.OAI}}}responseDate")
        assert last_harvest is not None
        assert [h.identifier for h in Sickle(base).ListIdentifiers(metadataPrefix="oai_dc")] == [sealed, kept, closed]
        while datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") <= last_harvest:
            time.sleep(0.1)  # datestamps are to the second: every change below is dated after the harvest's
        with Archive.open(location) as archive:
            archive.embargo(sealed, "2099-01-01")
            archive.set_series_access(CLOSED, "private")
            archive.embargo(waiting + ".text.1", None)  # pdi embargo --lift
            archive.set_series_access(SECRET, "public")
        harvester = Sickle(base)
        assert harvester.Identify().deletedRecord == "persistent"
        since = {r.header.identifier: r for r in harvester.ListRecords(metadataPrefix="oai_dc",
                                                                       **{"from": last_harvest})}
        assert set(since) == {sealed, closed, waiting, secret}  # kept did not change
        assert {name for name, r in since.items() if r.deleted} == {sealed, closed}
        assert all(r.header.datestamp > last_harvest for r in since.values())
        # the same harvest as XML the OAI's schema accepts: a header status="deleted", no metadata, nothing of it said
        answer = httpx.get(base, params={"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": last_harvest})
        records = {r["header"]["identifier"]: r for r in valid(schema, answer)["ListRecords"]["record"]}
        assert {name for name, r in records.items() if r["header"].get("@status") == "deleted"} == {sealed, closed}
        assert "metadata" not in records[sealed] and "Sealed later" not in answer.text
        # a harvest up to the last one's moment does not show them deleted: they were not, then
        before = [h for h in harvester.ListIdentifiers(metadataPrefix="oai_dc", until=last_harvest)]
        assert [h.identifier for h in before] == [kept]
        # GetRecord and a harvest of its set say the same: the set is no set of ListSets to this reader any more
        gone = harvester.GetRecord(identifier=sealed, metadataPrefix="oai_dc")
        assert gone.deleted and gone.header.datestamp == since[sealed].header.datestamp
        assert [(h.identifier, h.deleted, h.setSpecs) for h in harvester.ListIdentifiers(
            metadataPrefix="oai_dc", set=CLOSED)] == [(closed, True, [CLOSED])]
        assert CLOSED not in {s.setSpec for s in harvester.ListSets()}
        # a reader whose token covers them is shown them as they are, none deleted
        reader = Sickle(base, headers={"Authorization": f"Bearer {everything}"})
        assert not [h.identifier for h in reader.ListIdentifiers(metadataPrefix="oai_dc") if h.deleted]


def test_section_4_2_the_earliest_datestamp_is_below_a_deleted_record_of_a_series_no_longer_seen(
        tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    """§4.2: ``earliestDatestamp`` is "the guaranteed lower limit of all datestamps recording changes, modifications,
    or deletions in the repository". A record withheld when its series was made private is a deleted record dated
    then (§2.5.1); when that was before the first day of every series the reader still sees, the first day of those
    was no lower limit of the harvest (found in review, 2026-11-30)."""
    location = tmp_path / "archive"
    clock = Clock(datetime.datetime(2020, 3, 2, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(OPEN)
        archive.add_series(CLOSED)
        archive.deposit(CLOSED, [Content(b"public in 2020\n", "text")])
        clock.now = datetime.datetime(2021, 6, 1, 12, 30, 15, 250000, tzinfo=datetime.UTC)
        archive.set_series_access(CLOSED, "private")
        clock.now = datetime.datetime(2026, 11, 2, 8, 0, tzinfo=datetime.UTC)
        archive.deposit(OPEN, [Content(b"public now\n", "text")])
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}/oai"
        identify = valid(schema, httpx.get(base, params={"verb": "Identify"}))
        earliest = identify["Identify"]["earliestDatestamp"]
        stamps = {(h.identifier.split("/")[2], h.deleted): h.datestamp
                  for h in Sickle(base).ListIdentifiers(metadataPrefix="oai_dc")}
        assert stamps == {(OPEN, False): "2026-11-02T08:00:00Z", (CLOSED, True): "2021-06-01T12:30:15Z"}
        assert earliest == "2021-06-01T12:30:15Z"  # the lowest of them: below it, nothing
