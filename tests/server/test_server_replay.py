"""Replay over HTTP: the replay origin's files, its headers, and that neither origin serves the other's pages."""

from __future__ import annotations

import html
import io
import re
import urllib.parse
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from server_helpers import (
    CAPTURE_TIMES,
    CAPTURED_PAGE,
    CAPTURED_STYLE,
    CAPTURED_URL,
    CAPTURES_URL,
    ELSEWHERE,
    Served,
    start_serve,
    stop,
    wait_answering,
    with_replay,
)

from pdi._ports import free_port
from pdi.archive import Archive, Content, Resolved
from pdi.identifier import PDI
from pdi.server.replay.origin import viewer_location


def _quoted(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def replayed(served: Served, name: str, file: str = "index.html") -> httpx.Response:
    return httpx.get(f"{served.replay_url}/replay/{_quoted(name)}/{file}", timeout=30)


def test_capture_root_has_its_references_rewritten_to_its_own_parts(served: Served) -> None:
    answer = replayed(served, served.capture)
    assert answer.status_code == 200
    assert answer.headers["content-type"].lower() == "text/html; charset=utf-8"
    # RFC 2557 §8.2: "style.css" and "/img/sun.png" resolved against the page's Content-Location
    # name the two other parts; the link to the live web names no part and leads nowhere
    expected = CAPTURED_PAGE.replace(b'src="/img/sun.png"', b'src="sun.png"').replace(
        b'href="https://www.example.com/more"', b'href="about:blank"'
    )
    assert b'href="style.css"' in expected
    assert answer.content == expected


def test_each_part_is_served_with_its_own_media_type(served: Served) -> None:
    style = replayed(served, served.capture, "style.css")
    assert style.status_code == 200
    assert style.headers["content-type"].startswith("text/css")
    assert style.content == CAPTURED_STYLE
    image = replayed(served, served.capture, "sun.png")
    assert image.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(image.content)).size == (40, 30)
    assert replayed(served, served.capture, "other.png").status_code == 404


def test_every_replay_answer_carries_the_restrictive_headers_and_no_cookie(served: Served) -> None:
    for answer in (
        replayed(served, served.capture),
        replayed(served, served.capture, "sun.png"),
        replayed(served, served.capture, "missing.css"),
        httpx.get(f"{served.replay_url}/", timeout=30),
    ):
        policy = answer.headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'none'"
        assert directives["script-src"] == "'none'"
        assert directives["connect-src"] == "'none'"
        assert directives["form-action"] == "'none'"
        assert directives["img-src"] == "'self' data: blob:"
        assert directives["frame-ancestors"] == f"'self' {served.url}"
        assert directives["sandbox"] == "allow-same-origin"  # no scripts, top navigation, pop-ups or forms
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert {"sec-fetch-dest", "sec-fetch-site"} <= {v.strip().lower() for v in answer.headers["vary"].split(",")}
        assert "set-cookie" not in answer.headers


#: Fetch metadata (W3C Fetch Metadata Request Headers §2) as Chromium sends it, with whether archived scripts may run:
#: the viewer's frame on the same host (same-site) or a replayed page's own frame (same-origin), the page as an <object> or
#: <embed>, a page framed by another site, and the page opened in a window (typed, followed, window.open) or by a client
#: that sends no fetch metadata.
FETCHES = [
    ({"sec-fetch-dest": "iframe", "sec-fetch-site": "same-site"}, True),
    ({"sec-fetch-dest": "iframe", "sec-fetch-site": "same-origin"}, True),
    ({"sec-fetch-dest": "object", "sec-fetch-site": "same-site"}, False),
    ({"sec-fetch-dest": "embed", "sec-fetch-site": "same-site"}, False),
    ({"sec-fetch-dest": "iframe", "sec-fetch-site": "cross-site"}, False),
    ({"sec-fetch-dest": "document", "sec-fetch-site": "none"}, False),
    ({"sec-fetch-dest": "document", "sec-fetch-site": "same-site"}, False),
    ({"sec-fetch-dest": "document", "sec-fetch-site": "cross-site"}, False),
    ({}, False),
]


@pytest.mark.parametrize(("fetched", "runs"), FETCHES)
def test_archived_scripts_run_only_where_the_fetch_metadata_says_the_page_is_framed(
    tmp_path: Path, fetched: dict[str, str], runs: bool
) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
        page = str(archive.add("served.example.us", b"<p>kept</p>", format="html"))
    with with_replay(str(tmp_path / "archive"), scripts=True) as (_, replay):
        answer = httpx.get(f"{replay}/replay/{_quoted(page)}/index.html", headers=fetched, timeout=30)
        selected = httpx.get(f"{replay}/replay/{_quoted(page)}/select/index.html", headers=fetched, timeout=30)
    directives = dict(d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";"))
    assert answer.status_code == 200
    assert directives["script-src"] == ("'self' 'unsafe-inline'" if runs else "'none'")
    # scripts run in an opaque origin of their own: never with allow-same-origin, allow-top-navigation, -popups, -forms
    assert directives["sandbox"] == ("allow-scripts" if runs else "allow-same-origin")
    assert directives["connect-src"] == "'none'" and directives["default-src"] == "'none'"
    chosen = dict(d.strip().split(" ", 1) for d in selected.headers["content-security-policy"].split(";"))
    assert chosen["script-src"].startswith("'sha256-") if runs else chosen["script-src"] == "'none'"


#: A tab's or a window's navigation, as Chromium asks for a document typed, followed or opened by window.open.
NAVIGATION = {"sec-fetch-dest": "document", "sec-fetch-mode": "navigate", "sec-fetch-site": "none", "accept": "text/html"}

#: What is answered the file: the viewer's frame, an <object> or <embed>, a sub-resource, a client without fetch metadata.
ANSWERED = [
    {"sec-fetch-dest": "iframe", "sec-fetch-mode": "navigate", "sec-fetch-site": "same-site"},
    {"sec-fetch-dest": "frame", "sec-fetch-mode": "navigate", "sec-fetch-site": "same-origin"},
    {"sec-fetch-dest": "object", "sec-fetch-mode": "navigate", "sec-fetch-site": "same-origin"},
    {"sec-fetch-dest": "embed", "sec-fetch-mode": "no-cors", "sec-fetch-site": "same-origin"},
    {"sec-fetch-dest": "image", "sec-fetch-mode": "no-cors", "sec-fetch-site": "same-origin"},
    {"sec-fetch-dest": "style", "sec-fetch-mode": "no-cors", "sec-fetch-site": "same-origin"},
    {},
]


@pytest.mark.parametrize(("file", "select"), [("index.html", False), ("select/index.html", True), ("sun.png", False)])
def test_a_tab_opened_at_a_replayed_file_is_sent_to_the_viewers_page_of_it(
    served: Served, file: str, select: bool,
) -> None:
    name = served.capture
    url = f"{served.replay_url}/replay/{_quoted(name)}/{file}"
    sent = httpx.get(url, headers=NAVIGATION, timeout=30)
    assert sent.status_code == 303
    where = urllib.parse.urlsplit(sent.headers["location"])
    assert (where.scheme, where.netloc, where.path) == ("http", urllib.parse.urlsplit(served.url).netloc, "/view")
    assert urllib.parse.parse_qs(where.query) == {"pdi": [name], **({"select": ["1"]} if select else {})}
    assert "sec-fetch-mode" in {v.strip().lower() for v in sent.headers["vary"].split(",")}
    assert sent.headers["content-security-policy"].startswith("default-src 'none'")  # the replay origin's, still
    shown = httpx.get(sent.headers["location"], timeout=30)
    assert shown.status_code == 200 and 'class="replay-banner"' in shown.text
    for fetched in ANSWERED:
        answer = httpx.get(url, headers=fetched, timeout=30)
        assert answer.status_code == 200, fetched


def test_a_tab_opened_with_two_host_fields_or_none_is_400_not_sent_to_the_viewer(served: Served) -> None:
    """RFC 9112 §3.2: a server MUST answer ``400`` to an HTTP/1.1 request without ``Host`` or with two. The replay
    origin answered such a tab ``303`` to the viewer, before its check of the field (found in review, 2026-12-01)."""
    from server_helpers import until_closed

    port = urllib.parse.urlsplit(served.replay_url).port
    assert port is not None
    target = f"/replay/{_quoted(served.capture)}/index.html".encode()
    fields = b"".join(f"{k}: {v}\r\n".encode() for k, v in NAVIGATION.items())
    sent = until_closed(port, b"GET %s HTTP/1.1\r\nHost: a\r\n%sConnection: close\r\n\r\n" % (target, fields))
    assert sent.startswith(b"HTTP/1.1 303 "), sent[:300]  # one Host: the tab is sent to the viewer
    for hosts in (b"", b"Host: a\r\nHost: b\r\n"):
        answer = until_closed(port, b"GET %s HTTP/1.1\r\n%s%s\r\n" % (target, hosts, fields))
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), answer[:300]
        assert b"\r\nlocation:" not in head.lower() and b"RFC 9112" in body


def test_a_tab_opened_at_a_file_of_no_page_is_told_so_by_the_replay_origin(served: Served) -> None:
    # a path whose name is no PDI is not sent anywhere: the replay origin's own refusal says what is wrong
    answer = httpx.get(f"{served.replay_url}/replay/{_quoted('//evil.example/x')}/index.html", headers=NAVIGATION,
                       timeout=30)
    assert answer.status_code == 400 and "location" not in answer.headers


def test_a_tab_is_sent_to_the_resolver_on_its_own_host_and_never_by_a_malformed_host(tmp_path: Path) -> None:
    # without --base-url, the resolver is the request's host at its port; a Host no browser sends makes no Location
    from starlette.testclient import TestClient

    from pdi.server.replay.origin import create_replay_app

    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
        page = str(archive.add("served.example.us", b"<p>kept</p>", format="html"))
        client = TestClient(create_replay_app(str(tmp_path / "archive"), archive=archive, resolver_port=8000))
        path = f"/replay/{_quoted(page)}/index.html"
        sent = client.get(path, headers={**NAVIGATION, "host": "replay.example:8001"}, follow_redirects=False)
        assert sent.status_code == 303
        assert sent.headers["location"] == f"http://replay.example:8000/view?pdi={_quoted(page)}"
        for host in ("evil.example/x", "a@evil.example", "evil.example\\x"):
            refused = client.get(path, headers={**NAVIGATION, "host": host}, follow_redirects=False)
            assert refused.status_code == 400 and "location" not in refused.headers, host


def test_a_tab_is_sent_to_the_viewer_under_the_resolvers_base_url_path_and_all(tmp_path: Path) -> None:
    # a resolver behind a proxy at https://pdi.example.org/archive/ (pdi serve --base-url): its viewer is there, not
    # at the host's root, where the 303 sent a reader before (found in review, 2026-12-02)
    from starlette.testclient import TestClient

    from pdi.server.replay.origin import create_replay_app

    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
        page = str(archive.add("served.example.us", b"<p>kept</p>", format="html"))
        client = TestClient(create_replay_app(str(tmp_path / "archive"), archive=archive, resolver_port=8000,
                                              resolver_origin="https://pdi.example.org",
                                              resolver_base="https://pdi.example.org/archive/"))
        path = f"/replay/{_quoted(page)}/index.html"
        for host in ("replay.example:8001", "evil.example"):  # the request's Host says nothing of where it goes
            sent = client.get(path, headers={**NAVIGATION, "host": host}, follow_redirects=False)
            assert sent.status_code == 303
            assert sent.headers["location"] == f"https://pdi.example.org/archive/view?pdi={_quoted(page)}"
        framed = client.get(path, headers={**NAVIGATION, "sec-fetch-dest": "iframe"}, follow_redirects=False)
        assert framed.status_code == 200  # what the viewer's frame asks for is answered
        assert framed.headers["content-security-policy"].endswith("frame-ancestors 'self' https://pdi.example.org")


def test_pdi_serve_sends_a_tab_to_the_viewer_under_its_base_url_path_and_all(tmp_path: Path) -> None:
    import re

    from server_helpers import start_serve, stop, wait_answering

    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
        page = str(archive.add("served.example.us", b"<p>kept</p>", format="html"))
    process, port, line = start_serve(tmp_path / "archive", "--replay-port", "0", "--base-url",
                                      "https://pdi.example.org/archive/", drain=True, start_new_session=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        replay = re.search(r"replay at (http://[^/]+)/", line)
        assert replay is not None, line
        sent = httpx.get(f"{replay[1]}/replay/{_quoted(page)}/index.html", headers=NAVIGATION, timeout=30)
    finally:
        stop(process)
    assert sent.status_code == 303
    assert sent.headers["location"] == f"https://pdi.example.org/archive/view?pdi={_quoted(page)}"


#: A versioned name, and a name of it with any fragment: what the path of a replayed file holds.
NAMES = st.one_of(st.text(min_size=1), st.builds("urn:pdi://served.example.us/2026/12/02/1.html.1#{}".format, st.text()),
                  st.just("urn:pdi://served.example.us/2026/12/02/1.html.1"))


@given(segment=NAMES, file=st.text(min_size=1), select=st.booleans(),
       quoted=st.booleans(), origin=st.sampled_from(["http://127.0.0.1:8000", "https://pdi.example.org"]))
def test_a_tab_is_sent_only_to_the_resolvers_viewer_whatever_the_path_holds(
    segment: str, file: str, select: bool, quoted: bool, origin: str,
) -> None:
    held = urllib.parse.quote(segment, safe="") if quoted else segment
    path = f"/replay/{held}/{'select/' if select else ''}{urllib.parse.quote(file, safe='')}"
    location = viewer_location("document", "navigate", path, origin)
    assert viewer_location("iframe", "navigate", path, origin) is None
    assert viewer_location("document", None, path, origin) is None
    if location is None:
        return
    where = urllib.parse.urlsplit(location)
    assert f"{where.scheme}://{where.netloc}" == origin and where.path == "/view" and not where.fragment
    query = urllib.parse.parse_qs(where.query, strict_parsing=True)
    assert set(query) == ({"pdi", "select"} if select else {"pdi"}) and len(query["pdi"]) == 1
    # the name the path holds (its canonical form: a series is lower-cased, PDI-GRAMMAR decision 2)
    assert str(PDI.parse(query["pdi"][0])) == str(PDI.parse(urllib.parse.unquote(held)))


def test_the_replay_origin_serves_no_resolver_page(served: Served) -> None:
    for path in ("/", f"/view?pdi={_quoted(served.capture)}", f"/uri-res/N2R?{served.text}", "/api/series"):
        answer = httpx.get(served.replay_url + path, timeout=30)
        assert answer.status_code == 404, path
        assert served.text not in answer.text


def test_the_resolver_origin_serves_no_replayed_page(served: Served) -> None:
    answer = httpx.get(f"{served.url}/replay/{_quoted(served.capture)}/index.html", timeout=30)
    assert answer.status_code == 404
    assert b"News of the day" not in answer.content


@pytest.mark.parametrize("query", ["", "%23char%3D0%2C10", "&select=1", "%23char%3D0%2C10&select=1"])
def test_the_frame_src_of_a_replayed_page_is_its_own_frames_folder(served: Served, query: str) -> None:
    # the frame's src lies under frame-src (a CSP 3 source whose path ends in "/" matches as a prefix), and frame-src
    # is that one name's folder on the replay origin, its fragment kept: a page replayed for selection marks it too
    answer = httpx.get(f"{served.url}/view?pdi={_quoted(served.capture)}{query}", timeout=30)
    directives = dict(d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";"))
    frame = re.search(r'<iframe class="replay" src="([^"]+)"', answer.text)
    assert answer.status_code == 200 and frame is not None
    name = served.capture + ("#char=0,10" if "char" in query else "")
    assert directives["frame-src"] == f"{served.replay_url}/replay/{_quoted(name)}/"
    assert html.unescape(frame.group(1)).startswith(directives["frame-src"])


def test_view_of_a_capture_frames_it_from_the_replay_origin_under_a_banner(served: Served) -> None:
    answer = httpx.get(f"{served.url}/view?pdi={_quoted(served.capture)}", timeout=30)
    # its frame may show that page's files on the replay origin alone (a CSP 3 source whose path ends in "/" is a
    # prefix): an archived page cannot navigate it elsewhere, nor to another name's page on the replay origin
    directives = dict(d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";"))
    assert directives["frame-src"] == f"{served.replay_url}/replay/{_quoted(served.capture)}/"
    page = answer.text
    frame = re.search(r'<iframe class="replay" src="([^"]+)" sandbox="([^"]*)"', page)
    assert frame is not None
    assert html.unescape(frame.group(1)) == f"{served.replay_url}/replay/{_quoted(served.capture)}/index.html"
    assert frame.group(2) == "allow-same-origin"  # no allow-scripts: nothing the page holds runs
    created = served.archive.resolve(served.capture)
    assert isinstance(created, Resolved)
    assert f'<time datetime="{created.record.created_at}">' in page
    # the URL heads the banner (a line may break after its slashes and before its dots), the name (which
    # encapsulates it) one click away
    assert f'<h1><span class="capture-title"><span class="url clamped" dir="ltr" title="{CAPTURED_URL}">{CAPTURED_URL}</span>' in page.replace("<wbr>", "")
    assert f'<details class="pdi-name"><summary>show</summary><code>{html.escape(served.capture)}</code></details>' in page
    assert f'href="/captures?url={_quoted(CAPTURED_URL)}"' in page
    assert f'href="/view?pdi={_quoted(served.capture)}&amp;view=source"' in page



def test_the_banner_places_a_capture_among_the_captures_of_its_url(served: Served) -> None:
    # CAPTURES_URL was captured at the four CAPTURE_TIMES (the second day twice: one document's versions 1 and 2).
    # The captures by time, each found by its deposit time; the second of them is opened.
    by_time = {v.created_at: str(v.formats[0]) for doc in served.archive.captures(CAPTURES_URL).documents for v in doc.versions}
    names = [by_time[at] for at in CAPTURE_TIMES]
    banner = httpx.get(f"{served.url}/view?pdi={_quoted(names[1])}", timeout=30).text.split("</section>")[0]
    place = re.search(r"<dt>capture</dt><dd>(.*?)</dd>", banner)
    assert place is not None, banner
    assert place.group(1).startswith("2 of 4")
    links = dict(re.findall(r'<a rel="(prev|next)" href="([^"]+)"', place.group(1)))
    assert links == {"prev": f"/view?pdi={_quoted(names[0])}", "next": f"/view?pdi={_quoted(names[2])}"}
    assert f'<time datetime="{CAPTURE_TIMES[0]}">2025-06-01</time>' in place.group(1)
    # the last has no later one; a page deposited alone (no URL for its id) is placed nowhere
    last = httpx.get(f"{served.url}/view?pdi={_quoted(names[3])}", timeout=30).text
    assert "4 of 4" in last and 'rel="next"' not in last.split("</section>")[0]
    alone = httpx.get(f"{served.url}/view?pdi={_quoted(served.page)}", timeout=30).text
    assert "<dt>capture</dt>" not in alone


def test_a_deposited_html_file_is_labelled_deposited_not_captured(served: Served) -> None:
    # served.page was deposited from a file (pdi add): no URL, no capture; its banner gives its deposit time
    banner = httpx.get(f"{served.url}/view?pdi={_quoted(served.page)}", timeout=30).text.split("</section>")[0]
    created = served.archive.resolve(served.page)
    assert isinstance(created, Resolved)
    assert f'<dt>deposited</dt><dd><time datetime="{created.record.created_at}">' in banner, banner
    assert "captured" not in banner and "no URL" not in banner and "<dt>from</dt>" not in banner

def test_a_saved_page_deposited_from_a_file_is_deposited_with_its_own_date_not_a_capture(served: Served) -> None:
    """A page a browser saved (Chromium's MHTML, its URL and the time it was saved in its header) and deposited by
    pdi add: named by a serial, not by its URL, it is not among the captures of that URL, so the banner says when
    it was deposited and what date the file says, and offers no "other captures" of a URL none of which it is."""
    saved = (Path(__file__).parents[1] / "data" / "corpus" / "mhtml" / "fastmhtml_example.com.mhtml").read_bytes()
    name = str(served.archive.add(ELSEWHERE, saved, format="related"))
    banner = httpx.get(f"{served.url}/view?pdi={_quoted(name)}", timeout=30).text.split("</section>")[0]
    assert "http://example.com/" in banner.replace("<wbr>", "")  # its heading: the page's URL, which the file names
    assert "<dt>deposited</dt>" in banner and "captured" not in banner, banner
    assert "<dt>the file's own date</dt><dd><bdi>Mon, 17 Dec 2018 11:28:18 -0000</bdi></dd>" in banner, banner
    assert "other captures" not in banner


def test_the_banner_leaves_a_withdrawn_capture_out(served: Served) -> None:
    # three captures of a URL (versions 1 to 3 of one document), the second withdrawn: as among its mementos,
    # the third is the second of two, and its earlier capture is the first
    url = "http://127.0.0.1:9/withdrawn-between.html"
    first = str(served.archive.deposit(ELSEWHERE, [Content(b"<p>one</p>", "html")], foreign_id=url)[0])
    generic = first.rsplit(".", 2)[0]
    second = str(served.archive.add_version(generic, [Content(b"<p>two</p>", "html")])[0])
    third = str(served.archive.add_version(generic, [Content(b"<p>three</p>", "html")])[0])
    served.archive.withdraw(second, "captured by mistake")
    banner = httpx.get(f"{served.url}/view?pdi={_quoted(third)}", timeout=30).text.split("</section>")[0]
    place = re.search(r"<dt>capture</dt><dd>(.*?)</dd>", banner)
    assert place is not None, banner
    assert place.group(1).startswith("2 of 2")
    assert dict(re.findall(r'<a rel="(prev|next)" href="([^"]+)"', place.group(1))) == {
        "prev": f"/view?pdi={_quoted(first)}"}
    opening = httpx.get(f"{served.url}/view?pdi={_quoted(first)}", timeout=30).text.split("</section>")[0]
    assert "1 of 2" in opening and f'href="/view?pdi={_quoted(third)}"' in opening
    assert _quoted(second) not in opening


def test_view_source_of_an_html_document_still_shows_its_source(served: Served) -> None:
    page = httpx.get(f"{served.url}/view?pdi={_quoted(served.page + '#elt=1,1')}&view=source", timeout=30).text
    assert "<iframe" not in page
    assert '<mark id="passage">&lt;p&gt;two&lt;/p&gt;</mark>' in page


def test_an_elt_fragment_is_marked_in_the_replayed_page(served: Served) -> None:
    # the page is <p id=a>one<p>two</p>: start tag 1 is the second <p>, its text "two"
    answer = replayed(served, served.page + "#elt=1,1")
    style = re.search(r"<style>[^<]*</style>", answer.text)
    assert style is not None
    assert answer.text == (
        f'<p id=a>one{style.group(0)}<pdi-mark id="pdi-passage"></pdi-mark>'
        "<p data-pdi-passage><pdi-mark>two</pdi-mark></p>"
    )
    page = httpx.get(f"{served.url}/view?pdi={_quoted(served.page + '#elt=1,1')}", timeout=30).text
    assert "/index.html#pdi-passage" in page


def test_a_fragment_that_selects_nothing_is_an_error_on_the_view_page(served: Served) -> None:
    view = httpx.get(f"{served.url}/view?pdi={_quoted(served.page + '#elt=9,9')}", timeout=30)
    assert view.status_code == 404
    assert 'class="error"' in view.text and "<iframe" not in view.text
    assert replayed(served, served.page + "#elt=9,9").status_code == 404


def test_what_is_not_a_page_is_not_replayed(served: Served) -> None:
    assert replayed(served, served.text).status_code == 400
    assert replayed(served, served.versioned).status_code == 400  # a generic name: no one page
    view = httpx.get(f"{served.url}/view?pdi={_quoted(served.text)}", timeout=30).text
    assert "<iframe" not in view and '<pre id="text"' in view


def test_pdi_serve_workers_serve_the_replay_port_and_never_answer_it_from_the_cache(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
        page = str(archive.deposit("served.example.us", [Content(b"<p>kept</p>", "html")])[0])
    replay_port = free_port()  # below the ephemeral range: no client connection takes it meanwhile
    process, port, line = start_serve(tmp_path / "archive", "--replay-port", str(replay_port), "--workers", "2")
    try:
        assert f"at http://127.0.0.1:{port}/ (replay at http://127.0.0.1:{replay_port}/) with 2 workers" in line
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        for _ in range(12):  # connections of their own, spread over the workers: each fills its cache
            with httpx.Client(timeout=10) as client:  # kept alive: the cache answers the second request
                for _ in range(2):
                    assert client.get(f"http://127.0.0.1:{port}/uri-res/N2R?{page}").content == b"<p>kept</p>"
        for _ in range(12):
            with httpx.Client(timeout=10) as client:
                for _ in range(2):
                    answer = client.get(f"http://127.0.0.1:{replay_port}/uri-res/N2R?{page}")
                    assert answer.status_code == 404
                    assert "content-security-policy" in answer.headers
        with httpx.Client(timeout=10) as client:
            shown = client.get(f"http://127.0.0.1:{replay_port}/replay/{_quoted(page)}/index.html")
        assert shown.status_code == 200 and shown.content == b"<p>kept</p>"
        assert shown.headers["content-security-policy"].endswith(f"frame-ancestors 'self' http://127.0.0.1:{port}")
        assert "sandbox allow-same-origin;" in shown.headers["content-security-policy"]
    finally:
        stop(process, timeout=20)


def test_a_page_replayed_for_selection_runs_only_the_replay_origins_own_script(served: Served) -> None:
    import base64
    import hashlib

    framed = {"sec-fetch-dest": "iframe", "sec-fetch-site": "same-site"}  # as the viewer's frame asks for it
    answer = httpx.get(f"{served.replay_url}/replay/{_quoted(served.page)}/select/index.html", headers=framed, timeout=30)
    assert answer.status_code == 200
    scripts = re.findall(r"<script>(.*?)</script>", answer.text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    directives = dict(d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";"))
    assert directives["script-src"] == f"'sha256-{digest}'"
    assert directives["connect-src"] == "'none'"
    # the page <p id=a>one<p>two</p>: its text in pieces at their source positions, its start tags numbered
    assert answer.text.startswith(
        '<p data-pdi-e="0" id=a><pdi-t data-at="8">one</pdi-t><p data-pdi-e="1"><pdi-t data-at="14">two</pdi-t></p>'
    )
    view = httpx.get(f"{served.url}/view?pdi={_quoted(served.page)}&select=1", timeout=30).text
    assert f'src="{served.replay_url}/replay/{_quoted(served.page)}/select/index.html" sandbox="allow-scripts"' in view
