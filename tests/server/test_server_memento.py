"""Memento (RFC 7089) over ``pdi serve``: TimeGates, TimeMaps and mementos, checked with memento_client.

The captures are deposited at the datetimes of RFC 7089's own examples
(§4.1 and §4.2: a first memento of 15 Sep 2000 11:28:26 GMT, one of
Wed, 21 Mar 2001 20:36:10 GMT, a last of Wed, 20 Jan 2010 09:34:33 GMT), so
that the RFC's example request, ``Accept-Datetime: Tue, 11 Sep 2001
20:35:00 GMT``, must be answered with the memento of 21 Mar 2001, as there.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memento_client import MementoClient
from server_helpers import Clock, serving

from pdi.archive import Archive, Content
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "memento.example.us"
OTHER = "mirror.example.us"
#: A URL on the loopback address where nothing listens: no test reaches outside.
URL = "http://127.0.0.1:9/news/today.html?edition=1"
#: Captures of URL (series, time): the RFC's three, one a second version of the same document,
#: one in another series, and one withdrawn later (after 2001-03-21 on the same day).
FIRST = datetime.datetime(2000, 9, 15, 11, 28, 26, tzinfo=datetime.UTC)
MIDDLE = datetime.datetime(2001, 3, 21, 20, 36, 10, tzinfo=datetime.UTC)
WITHDRAWN = datetime.datetime(2001, 3, 21, 23, 0, 0, tzinfo=datetime.UTC)
OTHER_AT = datetime.datetime(2005, 5, 5, 12, 0, 0, tzinfo=datetime.UTC)
OTHER_HTTP = "Thu, 05 May 2005 12:00:00 GMT"
LAST = datetime.datetime(2010, 1, 20, 9, 34, 33, tzinfo=datetime.UTC)
#: The same times in RFC 1123 form, as GNU date(1) writes them. RFC 7089's example calls
#: 15 Sep 2000 a Tuesday; it was a Friday.
FIRST_HTTP, MIDDLE_HTTP, LAST_HTTP = (
    "Fri, 15 Sep 2000 11:28:26 GMT", "Wed, 21 Mar 2001 20:36:10 GMT", "Wed, 20 Jan 2010 09:34:33 GMT")
#: A URL every capture of which was withdrawn.
GONE_URL = "http://127.0.0.1:9/gone.html"
#: A URL captured once, larger than the resolver keeps whole: its N2R is streamed.
BIG_URL = "http://127.0.0.1:9/big.txt"
#: A document's versions (a serial document, not a capture).
DOC_TIMES = (datetime.datetime(2020, 2, 29, 12, 0, 0, tzinfo=datetime.UTC),
             datetime.datetime(2021, 7, 4, 6, 30, 0, tzinfo=datetime.UTC),
             datetime.datetime(2024, 12, 31, 23, 59, 59, tzinfo=datetime.UTC))


@dataclass(frozen=True)
class Site:
    base: str
    first: str  # versioned names of the captures
    middle: str
    withdrawn: str
    other: str  # the OTHER series' capture (OTHER_AT)
    last: str
    document: str  # generic name of the serial document
    versions: tuple[str, ...]
    big: str
    odd: str  # a document whose foreign id holds '#', '%' and '.'


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    location = tmp_path_factory.mktemp("memento") / "archive"
    clock = Clock(FIRST)
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        archive.add_series(OTHER)

        def capture(at: datetime.datetime, body: bytes, series: str = S, url: str = URL) -> str:
            clock.now = at
            return str(archive.deposit(series, [Content(body, "html")], foreign_id=url)[0])

        first = capture(FIRST, b"<p>2000</p>")
        middle = capture(MIDDLE, b"<p>2001</p>")
        clock.now = WITHDRAWN
        withdrawn = str(archive.add_version(middle.rsplit(".", 2)[0], [Content(b"<p>2001, later</p>", "html")])[0])
        archive.withdraw(withdrawn, "captured a page of someone else's by mistake")
        other = capture(OTHER_AT, b"<p>2005 mirror</p>", OTHER)
        last = capture(LAST, b"<p>2010</p>")
        gone = capture(LAST, b"<p>gone</p>", url=GONE_URL)
        clock.now = LAST
        big = str(archive.deposit(S, [Content(b"0123456789abcde\n" * (5 << 16), "text")], foreign_id=BIG_URL)[0])
        odd = str(archive.deposit(S, [Content(b"odd\n", "text")], foreign_id="a#b%23c.d")[0])
        archive.withdraw(gone.rsplit(".", 2)[0], "taken down on request")
        clock.now = DOC_TIMES[0]
        versions = [str(archive.deposit(S, [Content(b"one\n", "text")])[0])]
        document = versions[0].rsplit(".", 2)[0]
        for at, body in zip(DOC_TIMES[1:], (b"two\n", b"three\n"), strict=True):
            clock.now = at
            versions.append(str(archive.add_version(document, [Content(body, "text")])[0]))
    with serving(location) as (_, port):
        yield Site(f"http://127.0.0.1:{port}", first, middle, withdrawn, other, last, document, tuple(versions), big, odd)


def n2r(site: Site, name: str) -> str:
    """The N2R URL of a name as the Memento answers write it: ``%2E`` as ``%252E``, which clients keep."""
    return f"{site.base}/uri-res/N2R?{rfc2169_query(name).replace('%2E', '%252E')}"


def route(site: Site, path: str, name: str) -> str:
    """``/timegate/…`` or ``/timemap/link/…`` of a document, its name written as in an N2R URL."""
    return f"{site.base}/{path}/{rfc2169_query(name).replace('%2E', '%252E')}"


def links(field: str) -> dict[str, dict[str, str]]:
    """An RFC 8288 Link field by target, read with requests' own parser (not ours)."""
    return {each.pop("url"): each for each in requests.utils.parse_header_links(field)}


# --- header-level checks, worked out from RFC 7089's examples ------------------------------------
def test_rfc7089_4_2_1_timegate_redirects_to_the_memento_nearest_accept_datetime(site: Site) -> None:
    answer = httpx.get(f"{site.base}/timegate/{URL}", headers={"Accept-Datetime": "Tue, 11 Sep 2001 20:35:00 GMT"})
    assert answer.status_code == 302
    assert answer.headers["location"] == n2r(site, site.middle)
    # RFC 7089 §4.1.1: the TimeGate varies by Accept-Datetime; and by who reads (a token may see more mementos)
    assert [v.strip().lower() for v in answer.headers["vary"].split(",")] == ["accept-datetime", "authorization", "cookie"]
    found = links(answer.headers["link"])
    assert found[URL] == {"rel": "original"}
    assert found[f"{site.base}/timemap/link/{URL}"] == {
        "rel": "timemap", "type": "application/link-format", "from": FIRST_HTTP, "until": LAST_HTTP}
    assert found[n2r(site, site.first)] == {"rel": "first prev memento", "datetime": FIRST_HTTP}
    assert found[n2r(site, site.middle)] == {"rel": "memento", "datetime": MIDDLE_HTTP}
    # the next is the other series' capture a day later; the withdrawn version is never one
    assert found[n2r(site, site.other)] == {"rel": "next memento", "datetime": OTHER_HTTP}
    assert found[n2r(site, site.last)] == {"rel": "last memento", "datetime": LAST_HTTP}
    assert n2r(site, site.withdrawn) not in found


def test_rfc7089_4_1_1_without_accept_datetime_the_latest_and_out_of_range_the_nearest(site: Site) -> None:
    assert httpx.get(f"{site.base}/timegate/{URL}").headers["location"] == n2r(site, site.last)
    before = httpx.get(f"{site.base}/timegate/{URL}", headers={"Accept-Datetime": "Sat, 01 Jan 1994 00:00:00 GMT"})
    assert before.headers["location"] == n2r(site, site.first)
    after = httpx.get(f"{site.base}/timegate/{URL}", headers={"Accept-Datetime": "Fri, 01 Jan 2100 00:00:00 GMT"})
    assert after.headers["location"] == n2r(site, site.last)
    # 23:00 on the day of the withdrawn version: the nearest memento still held is the 20:36 one
    late = httpx.get(f"{site.base}/timegate/{URL}", headers={"Accept-Datetime": "Wed, 21 Mar 2001 23:00:00 GMT"})
    assert late.headers["location"] == n2r(site, site.middle)


@pytest.mark.parametrize("value", [
    "2001-09-11T20:35:00Z",  # ISO 8601 is not the RFC 1123 form
    "Tue, 11 Sep 2001 20:35:00 UTC",
    "Tuesday, 11-Sep-01 20:35:00 GMT",  # RFC 850
    "Tue Sep 11 20:35:00 2001",  # asctime
    "Wed, 11 Sep 2001 20:35:00 GMT",  # 11 Sep 2001 was a Tuesday
    "Tue, 31 Sep 2001 20:35:00 GMT",
    "Tue, 11 Sep 2001 24:00:00 GMT",
    "",
    "x" * 10_000,
])
def test_rfc7089_a_bad_accept_datetime_is_400(site: Site, value: str) -> None:
    answer = httpx.get(f"{site.base}/timegate/{URL}", headers={"Accept-Datetime": value})
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    assert "Accept-Datetime" in answer.json()["detail"]


def test_rfc7089_the_n2r_of_a_capture_is_a_memento(site: Site) -> None:
    answer = httpx.get(n2r(site, site.middle))
    assert answer.status_code == 200 and answer.content == b"<p>2001</p>"
    assert answer.headers["memento-datetime"] == MIDDLE_HTTP
    found = links(answer.headers["link"])
    assert found[URL] == {"rel": "original"}
    assert found[f"{site.base}/timegate/{URL}"] == {"rel": "timegate"}
    assert found[f"{site.base}/timemap/link/{URL}"] == {"rel": "timemap", "type": "application/link-format"}
    assert found[n2r(site, site.middle)] == {"rel": "memento", "datetime": MIDDLE_HTTP}
    # kept for a year as immutable, it names no other memento: first/prev/next/last can change
    # (a capture imported dated before it, one made after it, a withdrawal), the TimeGate's can
    assert not [e for e in found.values() if {"first", "prev", "next", "last"} & set(e["rel"].split())]
    assert [url for url, e in found.items() if "memento" in e["rel"].split()] == [n2r(site, site.middle)]
    # a fragment of a memento is of the same memento, and the cache answers the same headers
    again = httpx.get(n2r(site, site.middle))
    assert again.headers["memento-datetime"] == MIDDLE_HTTP and again.headers["link"] == answer.headers["link"]
    assert httpx.get(n2r(site, site.first)).headers["memento-datetime"] == FIRST_HTTP


def test_rfc7089_a_document_whose_id_holds_escapes(site: Site) -> None:
    assert "/a%23b%2523c%2Ed.text.1" in site.odd
    memento = requests.get(n2r(site, site.odd))  # requests rewrites %2E; the resolver's URLs survive it
    assert memento.status_code == 200 and memento.content == b"odd\n"
    found = links(memento.headers["link"])
    timegate = next(url for url, e in found.items() if e == {"rel": "timegate"})
    gate = requests.get(timegate, headers={"Accept-Datetime": LAST_HTTP}, allow_redirects=False)
    assert gate.status_code == 302 and gate.headers["location"] == n2r(site, site.odd)
    assert requests.get(gate.headers["location"]).headers["memento-datetime"] == memento.headers["memento-datetime"]


def test_rfc7089_a_streamed_memento_has_the_same_headers(site: Site) -> None:
    with httpx.stream("GET", n2r(site, site.big)) as answer:
        assert answer.status_code == 200 and int(answer.headers["content-length"]) == 5 << 20
        assert answer.headers["memento-datetime"] == LAST_HTTP
        assert links(answer.headers["link"])[BIG_URL] == {"rel": "original"}
    part = httpx.get(n2r(site, site.big), headers={"Range": "bytes=0-3"})
    assert part.status_code == 206 and part.content == b"0123" and part.headers["memento-datetime"] == LAST_HTTP


def test_rfc7089_5_1_1_timemap_lists_every_memento_still_held(site: Site) -> None:
    answer = httpx.get(f"{site.base}/timemap/link/{URL}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/link-format"
    entries = requests.utils.parse_header_links(answer.text.replace("\n", ""))
    assert entries[0] == {"url": URL, "rel": "original"}
    assert entries[1] == {"url": f"{site.base}/timemap/link/{URL}", "rel": "self",
                          "type": "application/link-format", "from": FIRST_HTTP, "until": LAST_HTTP}
    assert entries[2] == {"url": f"{site.base}/timegate/{URL}", "rel": "timegate"}
    assert [(e["url"], e["rel"], e["datetime"]) for e in entries[3:]] == [
        (n2r(site, site.first), "first memento", FIRST_HTTP),
        (n2r(site, site.middle), "memento", MIDDLE_HTTP),
        (n2r(site, site.other), "memento", OTHER_HTTP),
        (n2r(site, site.last), "last memento", LAST_HTTP),
    ]


def test_rfc7089_unknown_and_withdrawn_resources(site: Site) -> None:
    unknown = httpx.get(f"{site.base}/timegate/http://127.0.0.1:9/never-captured")
    assert unknown.status_code == 404 and "no capture" in unknown.json()["detail"]
    assert httpx.get(f"{site.base}/timemap/link/http://127.0.0.1:9/never-captured").status_code == 404
    # every capture withdrawn: gone, and never served as a memento
    for route in ("timegate", "timemap/link"):
        gone = httpx.get(f"{site.base}/{route}/{GONE_URL}")
        assert gone.status_code == 410 and "withdrawn" in gone.json()["detail"]
    assert httpx.get(n2r(site, site.withdrawn)).status_code == 410
    assert httpx.get(f"{site.base}/timegate/").status_code in (400, 404)


def test_rfc9457_every_memento_withdrawn_is_a_problem_of_a_documented_type(site: Site) -> None:
    # RFC 9457 §4.2.1: about:blank says no more than the status; a 410 that says every memento of a resource was
    # withdrawn is pdi's own problem, of a type described on the /api page, as every other problem of pdi's is
    api_page = httpx.get(f"{site.base}/api").text
    for route in ("timegate", "timemap/link"):
        gone = httpx.get(f"{site.base}/{route}/{GONE_URL}")
        assert gone.status_code == 410 and gone.headers["content-type"] == "application/problem+json"
        problem = gone.json()
        assert problem["type"] == "/api#problem-mementos-withdrawn" and problem["status"] == 410, problem
        assert problem["withdrawn"] == 1 and GONE_URL in problem["detail"], problem  # the one capture of GONE_URL
        fragment = problem["type"].partition("#")[2]
        assert f'<section id="{fragment}">' in api_page
        assert f"“{problem['title']}”, 410" in api_page  # the page gives the title the answer has


def test_rfc7089_a_documents_versions_are_its_mementos(site: Site) -> None:
    original = n2r(site, site.document)
    gate = httpx.get(f"{site.base}/timegate/{site.document}", headers={"Accept-Datetime": "Mon, 01 Jan 2024 00:00:00 GMT"})
    assert gate.status_code == 302 and gate.headers["location"] == n2r(site, site.versions[2])
    found = links(gate.headers["link"])
    assert found[original] == {"rel": "original"}
    assert found[n2r(site, site.versions[1])]["rel"] == "prev memento"
    # the N2R URL of the generic name is the same original resource
    same = httpx.get(f"{site.base}/timegate/{original}", headers={"Accept-Datetime": "Mon, 01 Jan 2024 00:00:00 GMT"})
    assert same.headers["location"] == gate.headers["location"]
    timemap = requests.utils.parse_header_links(httpx.get(f"{site.base}/timemap/link/{site.document}").text.replace("\n", ""))
    assert [e["datetime"] for e in timemap[3:]] == [
        "Sat, 29 Feb 2020 12:00:00 GMT", "Sun, 04 Jul 2021 06:30:00 GMT", "Tue, 31 Dec 2024 23:59:59 GMT"]
    # a capture's document by its generic name: its own versions only (the withdrawn one left out)
    capture_document = site.middle.rsplit(".", 2)[0]
    answer = requests.get(route(site, "timemap/link", capture_document))  # requests rewrites %2E, not %252E
    assert answer.status_code == 200, answer.text
    entries = requests.utils.parse_header_links(answer.text.replace("\n", ""))
    assert entries[0] == {"url": n2r(site, capture_document), "rel": "original"}
    assert [(e["url"], e["rel"]) for e in entries[3:]] == [(n2r(site, site.middle), "first last memento")]
    version = httpx.get(n2r(site, site.versions[1]))
    assert version.headers["memento-datetime"] == "Sun, 04 Jul 2021 06:30:00 GMT"
    assert links(version.headers["link"])[original] == {"rel": "original"}


def test_rfc7089_a_name_of_a_memento_is_no_original_resource(site: Site) -> None:
    # §4: a TimeGate and a TimeMap are of an original resource (URI-R); a name with a version, a format or a
    # fragment names a memento or a part of one: refused, saying which name to give, not read as the document
    asked = {"Accept-Datetime": "Mon, 01 Jan 2024 00:00:00 GMT"}
    versioned = site.versions[1]
    for target in (versioned, versioned + "%23line=0,1", versioned.rsplit(".", 1)[0] + ".99",
                   versioned.rsplit(".", 2)[0] + ".pdf.7", n2r(site, versioned)):
        for route_ in ("timegate", "timemap/link"):
            answer = httpx.get(f"{site.base}/{route_}/{target}", headers=asked)
            assert answer.status_code == 400, (route_, target, answer.status_code)
            assert answer.headers["content-type"] == "application/problem+json"
            assert site.document in answer.json()["detail"] and "generic name" in answer.json()["detail"]
    assert httpx.get(f"{site.base}/timegate/{site.document}", headers=asked).status_code == 302


# --- a Memento client library -------------------------------------------------------------------
def test_memento_client_finds_the_rfc_example_memento_from_a_memento(site: Site) -> None:
    client = MementoClient(timegate_uri=f"{site.base}/timegate/", check_native_timegate=False)
    # starting from a memento, the client reads its original (rel="original") and asks the TimeGate
    info = client.get_memento_info(n2r(site, site.last), datetime.datetime(2001, 9, 11, 20, 35))
    assert info["original_uri"] == URL
    assert info["timegate_uri"] == f"{site.base}/timegate/{URL}"
    mementos = info["mementos"]
    assert mementos["closest"]["uri"] == [n2r(site, site.middle)]
    assert mementos["closest"]["datetime"] == datetime.datetime(2001, 3, 21, 20, 36, 10)
    assert mementos["closest"]["http_status_code"] == 200
    assert mementos["first"] == {"uri": [n2r(site, site.first)], "datetime": datetime.datetime(2000, 9, 15, 11, 28, 26)}
    assert mementos["prev"]["uri"] == [n2r(site, site.first)]
    assert mementos["next"]["uri"] == [n2r(site, site.other)]
    assert mementos["last"] == {"uri": [n2r(site, site.last)], "datetime": datetime.datetime(2010, 1, 20, 9, 34, 33)}
    assert MementoClient.is_memento(n2r(site, site.middle))
    assert not MementoClient.is_memento(f"{site.base}/timegate/{URL}")


def test_memento_client_finds_a_documents_mementos_by_its_n2r_url(site: Site) -> None:
    # the original resource of a document is its generic name's N2R URL, which the TimeGate takes as it is
    client = MementoClient(timegate_uri=f"{site.base}/timegate/", check_native_timegate=False)
    info = client.get_memento_info(n2r(site, site.document), datetime.datetime(2021, 1, 1))
    assert info["original_uri"] == n2r(site, site.document)
    assert info["mementos"]["closest"]["uri"] == [n2r(site, site.versions[1])]
    assert info["mementos"]["closest"]["datetime"] == datetime.datetime(2021, 7, 4, 6, 30)
    assert info["mementos"]["first"]["uri"] == [n2r(site, site.versions[0])]
    assert info["mementos"]["last"]["uri"] == [n2r(site, site.versions[2])]
    assert MementoClient.is_timegate(f"{site.base}/timegate/{site.document}")
    # the generic name's N2R names its TimeGate and TimeMap (RFC 7089 §5, rel="timegate")
    advertised = links(httpx.get(n2r(site, site.document)).headers["link"])
    assert advertised[f"{site.base}/timegate/{site.document}"] == {"rel": "timegate"}


def test_the_cache_keeps_a_memento_per_host(site: Site, tmp_path: Path) -> None:
    # the memento's links are absolute: an answer kept for one Host is not given for another
    name = n2r(site, site.first)
    by_ip = httpx.get(name)
    by_name = httpx.get(name, headers={"Host": "resolver.example.org"})
    by_ip_again = httpx.get(name)
    assert f"<{site.base}/timegate/" in by_ip.headers["link"] and by_ip_again.headers["link"] == by_ip.headers["link"]
    assert "<http://resolver.example.org/timegate/" in by_name.headers["link"]


#: A page captured on 2019-06-01 by another archive (its WARC-Date), imported into this one in 2026.
WARC_URL = "http://127.0.0.1:9/imported.html"
WARC_DATE = "2019-06-01T08:15:30Z"
WARC_HTTP = "Sat, 01 Jun 2019 08:15:30 GMT"  # as GNU date(1) writes it


def test_an_imported_capture_is_a_memento_of_when_it_was_captured(tmp_path: Path) -> None:
    import io

    from starlette.testclient import TestClient
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from pdi.interop.warc import import_warc
    from pdi.server import create_app

    body = b"<html><body><p>captured in 2019</p></body></html>"
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False, warc_version="WARC/1.1")
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                            protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(WARC_URL, "response", payload=io.BytesIO(body), length=len(body),
                                                  http_headers=http, warc_headers_dict={"WARC-Date": WARC_DATE}))
    warc = tmp_path / "a.warc"
    warc.write_bytes(out.getvalue())
    clock = Clock(datetime.datetime(2026, 11, 23, 10, 0, 0, tzinfo=datetime.UTC))
    with Archive.init(tmp_path / "archive", clock=clock) as archive:
        archive.add_series(S)
        import_warc(archive, warc, S)
        client = TestClient(create_app(str(tmp_path / "archive"), archive=archive, base_url="http://r.example"))
        timemap = client.get(f"/timemap/link/{WARC_URL}")
        assert timemap.status_code == 200, timemap.text
        mementos = [(url, attrs) for url, attrs in links(timemap.text.replace("\n", "")).items()
                    if "memento" in attrs["rel"].split()]
        # when the page was captured, not when the WARC was imported (Mon, 23 Nov 2026)
        assert [attrs["datetime"] for _, attrs in mementos] == [WARC_HTTP]
        gate = client.get(f"/timegate/{WARC_URL}", headers={"Accept-Datetime": WARC_HTTP}, follow_redirects=False)
        assert gate.status_code == 302 and gate.headers["location"] == mementos[0][0]
        memento = client.get(mementos[0][0].removeprefix("http://r.example"))
        assert memento.status_code == 200 and memento.headers["memento-datetime"] == WARC_HTTP
        # the replay banner says the same: captured on 2019-06-01 at 08:15:30 (UTC)
        from pdi.server import ReplaySite

        [(_, [name])] = [(d, [str(v.formats[0]) for v in d.versions]) for d in archive.captures(WARC_URL).documents]
        reader = TestClient(create_app(str(tmp_path / "archive"), archive=archive,
                                       replay=ReplaySite(origin="http://replay.example")))
        banner = reader.get("/view", params={"pdi": name}).text.split("</section>")[0]
        assert 'captured <time datetime="2019-06-01T08:15:30.000000Z">' in banner, banner


# --- a capture imported the day it was made; a memento served as multipart/related ------------------
#: The page of the same-day import, with a stylesheet so that the capture is an aggregate of two parts.
SAME_DAY_URL = "http://127.0.0.1:9/today.html"
SAME_DAY_PAGE = b'<html><head><link rel="stylesheet" href="s.css"></head><body><p>made this morning</p></body></html>'
SAME_DAY_CSS = b"p { color: green }\n"


def _same_day_warc(path: Path, when: datetime.datetime) -> Path:
    """A WARC of SAME_DAY_URL and its stylesheet, written by warcio, every record dated ``when``."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False, warc_version="WARC/1.1")
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    for url, body, kind in ((SAME_DAY_URL, SAME_DAY_PAGE, "text/html"),
                            (SAME_DAY_URL.replace("today.html", "s.css"), SAME_DAY_CSS, "text/css")):
        http = StatusAndHeaders("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))],
                                protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                                      http_headers=http, warc_headers_dict={"WARC-Date": stamp}))
    path.write_bytes(out.getvalue())
    return path


def _read_multipart(content_type: str, body: bytes) -> list[tuple[str, bytes]]:
    """The served body read by the standard library's MIME parser with the served Content-Type: (type, bytes) a part."""
    import email
    import email.policy

    message = email.message_from_bytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body,
                                       policy=email.policy.default)
    assert not message.defects, message.defects
    assert message.is_multipart(), content_type
    return [(part.get_content_type(), part.get_payload(decode=True)) for part in message.iter_parts()]


def test_a_capture_imported_the_day_it_was_made_is_a_memento_of_its_warc_date(
    one_gmt_day: datetime.datetime, tmp_path: Path,
) -> None:
    from starlette.testclient import TestClient

    from pdi.interop.warc import import_warc
    from pdi.server import ReplaySite, create_app

    # captured at 08:15:30 GMT today by another archive, imported here at noon GMT today (the clock)
    made = one_gmt_day.replace(hour=8, minute=15, second=30)
    made_http = made.strftime("%a, %d %b %Y %H:%M:%S GMT")
    warc = _same_day_warc(tmp_path / "a.warc", made)
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        import_warc(archive, warc, S)
        assert archive.now().date() == made.date() and archive.now() > made
        client = TestClient(create_app(str(tmp_path / "archive"), archive=archive, base_url="http://r.example"))
        timemap = client.get(f"/timemap/link/{SAME_DAY_URL}")
        assert timemap.status_code == 200, timemap.text
        mementos = [(url, attrs) for url, attrs in links(timemap.text.replace("\n", "")).items()
                    if "memento" in attrs["rel"].split()]
        assert [attrs["datetime"] for _, attrs in mementos] == [made_http]  # not noon, when it was imported
        memento = client.get(mementos[0][0].removeprefix("http://r.example"))
        assert memento.status_code == 200 and memento.headers["memento-datetime"] == made_http
        gate = client.get(f"/timegate/{SAME_DAY_URL}", follow_redirects=False)
        assert gate.status_code == 302 and links(gate.headers["link"])[mementos[0][0]]["datetime"] == made_http
        [(_, [name])] = [(d, [str(v.formats[0]) for v in d.versions]) for d in archive.captures(SAME_DAY_URL).documents]
        reader = TestClient(create_app(str(tmp_path / "archive"), archive=archive,
                                       replay=ReplaySite(origin="http://replay.example")))
        banner = reader.get("/view", params={"pdi": name}).text.split("</section>")[0]
        assert f'captured <time datetime="{made.strftime("%Y-%m-%dT%H:%M:%S")}.000000Z">' in banner, banner


def test_a_memento_of_a_page_carries_its_boundary_and_type(one_gmt_day: datetime.datetime, tmp_path: Path) -> None:
    # RFC 2046 §5.1.1 (boundary required), RFC 2387 §3.1 (type required): read by memento_client, then by
    # the standard library's MIME parser with the Content-Type served, as a client reads it
    made = one_gmt_day.replace(hour=8, minute=15, second=30)
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        from pdi.interop.warc import import_warc

        [page] = [d for d in import_warc(archive, _same_day_warc(tmp_path / "a.warc", made), S)[0] if d.page]
    with serving(tmp_path / "archive") as (_, port):
        base = f"http://127.0.0.1:{port}"
        client = MementoClient(timegate_uri=f"{base}/timegate/", check_native_timegate=False)
        # from the memento (nothing listens at the original URL), as the client goes: original, TimeGate, memento
        start = f"{base}/uri-res/N2R?{rfc2169_query(str(page.name)).replace('%2E', '%252E')}"
        info = client.get_memento_info(start, made.replace(tzinfo=None))
        assert info["original_uri"] == SAME_DAY_URL
        [uri] = info["mementos"]["closest"]["uri"]
        assert uri == start
        assert info["mementos"]["closest"]["datetime"] == made.replace(tzinfo=None)
        answer = requests.get(uri)
        content_type = answer.headers["content-type"]
        assert content_type.startswith("multipart/related;")
        parts = _read_multipart(content_type, answer.content)
        assert parts[0] == ("text/html", SAME_DAY_PAGE)  # the root, as the type parameter says
        assert ("text/css", SAME_DAY_CSS) in parts[1:]
        header = requests.head(uri)
        assert header.headers["content-type"] == content_type


#: An MHTML file written by hand whose Content-Type names no root type (RFC 2387 §3.1 requires one) and
#: larger than the resolver keeps whole (it is streamed, and HEAD answers without the catalog's size alone).
BIG_HTML = b"<p>" + b"big page " * (600 << 10) + b"</p>"
BIG_MHTML = (b"From: <Saved by hand>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/related;\r\n"
             b"\tboundary=\"=_big part\"\r\n\r\n--=_big part\r\nContent-Type: text/html; charset=us-ascii\r\n"
             b"Content-Location: http://127.0.0.1:9/big.html\r\n\r\n" + BIG_HTML + b"\r\n"
             b"--=_big part--\r\n")


def test_a_streamed_memento_of_a_page_carries_its_boundary_and_type(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(BIG_MHTML, "related")], foreign_id="http://127.0.0.1:9/big.html")[0])
    assert len(BIG_MHTML) > 5 << 20
    with serving(tmp_path / "archive") as (_, port):
        url = f"http://127.0.0.1:{port}/uri-res/N2R?{rfc2169_query(name)}"
        with httpx.stream("GET", url) as answer:
            body = answer.read()
        content_type = answer.headers["content-type"]
        assert _read_multipart(content_type, body) == [("text/html", BIG_HTML)]
        assert 'type="text/html"' in content_type  # the first part's: the root when start names none (RFC 2387 §3.2)
        assert httpx.head(url).headers["content-type"] == content_type


def test_a_uri_r_sent_as_one_encoded_segment_is_the_same_original_resource(site: Site) -> None:
    # encodeURIComponent's form of the URI-R (an OpenAPI client sends a path parameter so): one segment with
    # no literal ':' or '/', which no absolute URI is as it stands; urllib.parse.quote with safe="" writes it
    for target in (URL, site.document):
        encoded = quote(target, safe="")
        assert ":" not in encoded and "/" not in encoded
        plain = httpx.get(f"{site.base}/timegate/{target}", headers={"Accept-Datetime": LAST_HTTP})
        gate = httpx.get(f"{site.base}/timegate/{encoded}", headers={"Accept-Datetime": LAST_HTTP})
        assert plain.status_code == gate.status_code == 302
        assert gate.headers["location"] == plain.headers["location"]
        timemap = httpx.get(f"{site.base}/timemap/link/{encoded}")
        assert timemap.status_code == 200
        assert timemap.text == httpx.get(f"{site.base}/timemap/link/{target}").text
    # an encoded URL that was never captured is still unknown, not read some other way
    assert httpx.get(f"{site.base}/timemap/link/{quote('http://127.0.0.1:9/never-captured', safe='')}").status_code == 404


# --- TimeMaps in pages (RFC 7089 §5: a page's size is the server's choice; Memento's paging practice) ----------
MANY_URL = "http://127.0.0.1:9/often.html"
#: Captures of MANY_URL: one a day, in two series by turns, the 7th's document withdrawn; and a document of
#: DOC_VERSIONS versions. A page holds PAGE captures (pdi serve --timemap-page).
MANY, DOC_VERSIONS, PAGE = 230, 120, 50
MANY_START = datetime.datetime(2019, 1, 1, 6, 0, 0, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Many:
    base: str
    times: tuple[datetime.datetime, ...]  # every capture still held, oldest first
    document: str
    document_times: tuple[datetime.datetime, ...]


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Many]:
    location = tmp_path_factory.mktemp("many") / "archive"
    clock = Clock(MANY_START)
    times: list[datetime.datetime] = []
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        archive.add_series(OTHER)
        for i in range(MANY):
            clock.now = MANY_START + datetime.timedelta(days=i, minutes=i)
            name = str(archive.deposit((S, OTHER)[i % 2], [Content(f"<p>{i}</p>".encode(), "html")],
                                       foreign_id=MANY_URL)[0])
            if i == 6:
                archive.withdraw(name.rsplit(".", 2)[0], "not this one")
            else:
                times.append(clock.now)
        doc_times = [MANY_START + datetime.timedelta(hours=1)]
        clock.now = doc_times[0]
        document = str(archive.deposit(S, [Content(b"v1\n", "text")])[0]).rsplit(".", 2)[0]
        for v in range(2, DOC_VERSIONS + 1):
            doc_times.append(MANY_START + datetime.timedelta(hours=1, seconds=v))
            clock.now = doc_times[-1]
            archive.add_version(document, [Content(f"v{v}\n".encode(), "text")])
    with serving(location, "--timemap-page", str(PAGE)) as (_, port):
        yield Many(f"http://127.0.0.1:{port}", tuple(times), document, tuple(doc_times))


def _http(moment: datetime.datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S GMT")


def _walk(first: str) -> list[tuple[str, httpx.Response]]:
    """Every page of a TimeMap, from ``first`` by its rel="next" links (read by memento_client's parser)."""
    pages, url = [], first
    while url is not None:
        answer = httpx.get(url)
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/link-format"
        pages.append((url, answer))
        body = MementoClient.parse_link_header(answer.text)
        ahead = [uri for uri, params in body.items() if "next" in params["rel"] and "memento" not in params["rel"]]
        url = ahead[0] if ahead else None
        assert len(pages) <= 20
    return pages


def _check_pages(pages: list[tuple[str, httpx.Response]], times: tuple[datetime.datetime, ...], per_page: int) -> None:
    """The pages hold every memento of ``times`` once, in time order, and link each other both ways."""
    seen: list[str] = []
    for k, (url, answer) in enumerate(pages):
        body = MementoClient.parse_link_header(answer.text)
        mementos = [(params["datetime"][0], params["rel"]) for params in body.values() if "memento" in params["rel"]]
        assert len(mementos) <= per_page
        seen += [when for when, _ in mementos]
        this = body[url]  # rel="self" is the page's own URL, with its own from and until
        assert this["rel"] == ["self"] and this["type"] == ["application/link-format"]
        assert (this["from"], this["until"]) == ([mementos[0][0]], [mementos[-1][0]])
        # next and prev: the pages around it, in the body and in the Link field (requests' parser)
        header = {(e["rel"], e["url"]) for e in requests.utils.parse_header_links(answer.headers.get("link", ""))
                  if e.get("url")}
        expected = set()
        if k + 1 < len(pages):
            expected.add(("next", pages[k + 1][0]))
        if k > 0:
            expected.add(("prev", pages[k - 1][0]))
        assert header == expected
        in_body = {(rel, uri) for uri, params in body.items() for rel in params["rel"] if rel in ("next", "prev")
                   and "memento" not in params["rel"]}
        assert in_body == expected
        assert all(body[uri]["type"] == ["application/link-format"] for _, uri in expected)
        # the first memento of all is marked so on the first page only, the last on the last page only
        assert ("first" in mementos[0][1]) == (k == 0) and ("last" in mementos[-1][1]) == (k == len(pages) - 1)
        assert sum("first" in rels or "last" in rels for _, rels in mementos) == (k == 0) + (k == len(pages) - 1)
    assert seen == [_http(t) for t in times]


def test_rfc7089_a_timemap_of_many_captures_comes_in_linked_pages(many: Many) -> None:
    pages = _walk(f"{many.base}/timemap/link/{MANY_URL}")
    assert len(pages) == -(-MANY // PAGE)  # PAGE captures a page; the withdrawn one leaves a page one short
    _check_pages(pages, many.times, PAGE)
    # walking back by rel="prev" from the last page gives the same pages
    url: str | None = pages[-1][0]
    back = []
    while url is not None:
        answer = httpx.get(url)
        back.append((url, answer.text))
        url = next((e["url"] for e in requests.utils.parse_header_links(answer.headers.get("link", ""))
                    if e.get("rel") == "prev"), None)
    assert back[::-1] == [(u, a.text) for u, a in pages]
    # the TimeGate names the first page, with the from and until of every memento
    gate = httpx.get(f"{many.base}/timegate/{MANY_URL}", follow_redirects=False)
    timemap = links(gate.headers["link"])[f"{many.base}/timemap/link/{MANY_URL}"]
    assert (timemap["from"], timemap["until"]) == (_http(many.times[0]), _http(many.times[-1]))


def test_rfc7089_a_documents_many_versions_come_in_linked_pages(many: Many) -> None:
    pages = _walk(route(Site(many.base, "", "", "", "", "", "", (), "", ""), "timemap/link", many.document))
    assert len(pages) == -(-DOC_VERSIONS // PAGE)
    _check_pages(pages, many.document_times, PAGE)


def test_memento_client_finds_mementos_on_every_page(many: Many) -> None:
    # starting from a memento on the first page, the client finds those of every page through the TimeGate
    client = MementoClient(timegate_uri=f"{many.base}/timegate/", check_native_timegate=False)
    first_page = MementoClient.parse_link_header(httpx.get(f"{many.base}/timemap/link/{MANY_URL}").text)
    start = next(uri for uri, params in first_page.items() if "memento" in params["rel"])
    for wanted in (many.times[0], many.times[PAGE + 3], many.times[-1]):
        info = client.get_memento_info(start, wanted)
        assert info["original_uri"] == MANY_URL
        assert info["mementos"]["closest"]["datetime"] == wanted.replace(tzinfo=None)
        assert info["mementos"]["last"]["datetime"] == many.times[-1].replace(tzinfo=None)


def test_a_timemap_page_cursor_that_is_not_one_is_400(many: Many) -> None:
    for cursor in ("sideways~1", "after~", "after~2019-13-01~x.example.us", "after~2019-01-01~"):
        answer = httpx.get(f"{many.base}/timemap/link/page/{cursor}/{MANY_URL}")
        assert answer.status_code == 400 and answer.headers["content-type"] == "application/problem+json", cursor
    past = httpx.get(f"{many.base}/timemap/link/page/after~2100-01-01~{S}/{MANY_URL}")
    assert past.status_code == 404


def test_a_timemap_of_more_mementos_than_are_read_at_once_is_paged_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before paging, a TimeMap of more than MAX_MEMENTOS mementos was a 413; now each page reads its own
    from starlette.testclient import TestClient

    from pdi.server import create_app
    from pdi.server.protocol import memento_oaipmh as interop

    monkeypatch.setattr(interop, "MAX_MEMENTOS", 40)
    location = str(tmp_path / "archive")
    clock = Clock(MANY_START)
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        times = []
        for i in range(90):
            clock.now = MANY_START + datetime.timedelta(days=i)
            archive.deposit(S, [Content(f"<p>{i}</p>".encode(), "html")], foreign_id=MANY_URL)
            times.append(clock.now)
        client = TestClient(create_app(location, archive=archive, timemap_page=30))
        gate = client.get(f"/timegate/{MANY_URL}")  # a TimeGate still reads them all: past its bound, 400 (a GET)
        assert (gate.status_code, gate.json()["title"]) == (400, "limit exceeded")
        url: str | None = f"/timemap/link/{MANY_URL}"
        seen = []
        while url is not None:
            answer = client.get(url)
            assert answer.status_code == 200, answer.text
            body = MementoClient.parse_link_header(answer.text)
            seen += [params["datetime"][0] for params in body.values() if "memento" in params["rel"]]
            ahead = [e["url"] for e in requests.utils.parse_header_links(answer.headers.get("link", ""))
                     if e.get("rel") == "next"]
            url = ahead[0].removeprefix("http://testserver") if ahead else None
        assert seen == [_http(t) for t in times]


@pytest.fixture(scope="module")
def small_timemaps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An in-process resolver over three captures of MANY_URL and a document of three versions, a page each."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    location = str(tmp_path_factory.mktemp("small") / "archive")
    clock = Clock(MANY_START)
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        for i in range(3):
            clock.now = MANY_START + datetime.timedelta(days=i)
            archive.deposit(S, [Content(f"<p>{i}</p>".encode(), "html")], foreign_id=MANY_URL)
        document = str(archive.deposit(S, [Content(b"v1\n", "text")])[0]).rsplit(".", 2)[0]
        for v in (2, 3):
            archive.add_version(document, [Content(f"v{v}\n".encode(), "text")])
        yield TestClient(create_app(location, archive=archive, timemap_page=1)), document


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1, max_size=40),
       st.booleans())
def test_any_timemap_page_cursor_is_a_page_or_a_clear_refusal(small_timemaps: Any, cursor: str, of_document: bool) -> None:
    client, document = small_timemaps
    target = rfc2169_query(document) if of_document else MANY_URL
    answer = client.get(f"/timemap/link/page/{urllib.parse.quote(cursor, safe='')}/{target}")
    assert answer.status_code in (200, 400, 404), (cursor, answer.text)
    if answer.status_code != 200:
        assert answer.headers["content-type"] == "application/problem+json" and answer.json()["detail"]


@pytest.mark.parametrize("digits", ["\u00b2", "\u2460", "\u0663", "\uff11", "\U0001d7d9"])
def test_a_document_cursor_of_digits_that_are_not_ascii_is_refused(small_timemaps: Any, digits: str) -> None:
    # '²' and '①' are digits to str.isdigit and none to int() (a ValueError, answered 500); '٣' and '１' are
    # digits to int(), read as versions 3 and 1: no page's cursor is written so
    client, document = small_timemaps
    answer = client.get(f"/timemap/link/page/{urllib.parse.quote('after~' + digits, safe='')}/{rfc2169_query(document)}")
    assert answer.status_code == 400 and "cursor" in answer.json()["detail"]
