"""The resolver under a path (``--base-url http://testserver/pdi/``, a proxy stripping ``/pdi``), through TestClient.

Every page's every URL attribute (read by the standard library's ``html.parser``, as a browser reads attributes)
that names a path names one under ``/pdi/``; the pages' scripts are told the path (``<html data-site>``); a
redirect's ``Location`` and a ``Link``'s targets of the app's own paths are under it too; absolute URLs made from
the base URL were already. With no base URL, or one at a host's root, the pages are as they were. Over a socket, on
``pdi serve``'s own connections: the answers the connection sends again from the cache (N2R's, N2L's ``302``, a
``304``) are the octets the app sent the first time, their paths under the path once.
"""

from __future__ import annotations

import io
import re
import subprocess
import time
import urllib.parse
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openapi_spec_validator import validate
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import exchange, in_thread, serving
from starlette.applications import Starlette
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.http.preconditions import Preconditions
from pdi.server.http.site import SITED, SitePath, site, site_path
from pdi.server.pages.layout import esc, page
from pdi.server.pages.replay_frame import ReplaySite
from pdi.server.process.connection import answering_protocol

S = "library.example.us"
BASE = "http://testserver/pdi/"
DATA = Path(__file__).resolve().parents[1] / "data"
PAGE_URL = "https://www.example.org/news"
#: Attributes that hold text a reader wrote or reads, never a URL: left as they are whatever they begin with.
TEXT_ATTRIBUTES = frozenset({"value", "title", "alt", "aria-label", "placeholder", "data-pdi", "data-label", "content"})


class _Attributes(HTMLParser):
    """Every (tag, attribute, value) of a document, values unescaped; and every inline script's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.extend((tag, k, v) for k, v in attrs if v is not None)
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _attributes(document: str) -> _Attributes:
    parser = _Attributes()
    parser.feed(document)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path_factory.mktemp("base-path")
    image = Image.new("RGB", (40, 30), (200, 40, 40))
    png = io.BytesIO()
    image.save(png, format="PNG")
    sound = io.BytesIO()
    with wave.open(sound, "wb") as w:
        w.setparams((1, 1, 100, 0, "NONE", "not compressed"))
        w.writeframes(bytes(range(250)))
    with Archive.init(root / "archive") as archive:
        archive.add_series(S)
        found = {
            "text": str(archive.add(S, b"The minutes of the meeting.\nA second line.\n", format="text")),
            "png": str(archive.add(S, png.getvalue(), format="png")),
            "wav": str(archive.add(S, sound.getvalue(), format="wav")),
            "pdf": str(archive.add(S, (DATA / "pdf" / "tracemonkey.pdf").read_bytes(), format="pdf")),
            "mail": str(archive.add(S, (DATA / "email" / "msg_07.txt").read_bytes(), format="rfc822")),
            # a body of 5,000 lines: three pages, linked to each other (pdi.server.pages.body_pages)
            "paged": str(archive.add(S, b"Subject: paged\r\n\r\n" + b"a line\r\n" * 5_000, format="rfc822")),
            "page": str(archive.deposit(S, [Content(b"<h1>News</h1><p>the minutes</p>", "html")],
                                        foreign_id=PAGE_URL)[0]),
        }
        withdrawn = str(archive.add(S, b"a draft\n", format="text"))
        archive.withdraw(withdrawn.rsplit(".", 2)[0], "deposited by mistake")
        found["withdrawn"] = withdrawn
    yield root / "archive", found


def _client(location: Path, base_url: str | None) -> TestClient:
    app = create_app(str(location), base_url=base_url, replay=ReplaySite(origin="http://replay.example"))
    return TestClient(app, base_url="http://testserver", follow_redirects=False)


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def _pages(names: dict[str, str]) -> list[str]:
    """The paths of the pages: home, the catalogue at each depth, each viewer, search, sign-in, the API
    reference, captures, a thread, a tombstone, an unknown path's page and a name that is none."""
    pages = ["/", "/series", f"/series/{S}", "/search?q=minutes", "/search", "/signin", "/api",
             f"/captures?url={_q(PAGE_URL)}", "/no/such/page", "/view?pdi=nonsense",
             f"/view?pdi={_q(names['withdrawn'])}", f"/view?pdi={_q(names['text'].rsplit('.', 2)[0])}"]
    pages += [f"/view?pdi={_q(v)}" for k, v in names.items() if k != "withdrawn"]
    pages += [f"/thread?pdi={_q(names['mail'])}", f"/view?pdi={_q(names['page'])}&select=1", f"/view?pdi={_q(names['page'])}&view=source",
              f"/view?pdi={_q(names['text'])}%23line=1", f"/view?pdi={_q(names['paged'])}&page=2"]
    return pages


def _paths_named(document: str) -> list[tuple[str, str, str]]:
    """The (tag, attribute, value) of ``document`` whose value is a path of this host (one ``/``, not two)."""
    return [(t, k, v) for t, k, v in _attributes(document).found
            if k not in TEXT_ATTRIBUTES and k != "data-site" and v.startswith("/") and not v.startswith("//")]


def test_every_pages_urls_are_under_the_base_urls_path(names: tuple[Path, dict[str, str]]) -> None:
    location, named = names
    outside = []
    with _client(location, BASE) as client:
        for path in _pages(named):
            answer = client.get(path, headers={"Accept": "text/html"})
            assert answer.headers["content-type"].startswith("text/html"), (path, answer.status_code)
            paths = _paths_named(answer.text)
            assert paths, path  # every page links the favicon, the series, the API reference at least
            outside += [(path, *p) for p in paths if not p[2].startswith("/pdi/")]
            assert '<html data-site="/pdi" lang="en">' in answer.text, path
    assert not outside, outside


def test_a_message_bodys_pages_link_each_other_under_the_path(names: tuple[Path, dict[str, str]]) -> None:
    # 5,000 lines: pages of 2,000 lines, three of them; page 2 links the first, previous (1), next and last (3)
    location, named = names
    with _client(location, BASE) as client:
        answer = client.get(f"/view?pdi={_q(named['paged'])}&page=2", headers={"Accept": "text/html"})
    links = [v for t, k, v in _paths_named(answer.text) if t == "a" and "&page=" in v]
    view = f"/pdi/view?pdi={_q(named['paged'])}&page="
    assert links == [view + n for n in "1133" * 2], links  # the bar above the text, and again under it


def test_the_catalogue_reached_at_several_depths_links_the_same_absolute_paths(
    names: tuple[Path, dict[str, str]],
) -> None:
    location, _ = names
    with _client(location, BASE) as client:
        listed = client.get(f"/series/{S}").text
        deeper = [v for _, k, v in _attributes(listed).found if k == "href" and v.startswith(f"/pdi/series/{S}/")]
        assert deeper, "the series page links its years"
        inner = client.get(deeper[0].removeprefix("/pdi"))
        assert inner.status_code == 200
        links = {v for _, k, v in _attributes(inner.text).found if k == "href"}
        assert {"/pdi/", "/pdi/series", "/pdi/api"} <= links, links


def test_the_viewers_script_is_told_the_path_and_fetches_under_it(names: tuple[Path, dict[str, str]]) -> None:
    location, named = names
    with _client(location, BASE) as client:
        shown = _attributes(client.get(f"/view?pdi={_q(named['text'])}").text)
    script = "".join(shown.scripts)
    assert 'const site = document.documentElement.dataset.site || "";' in script
    # no fetch or link the script makes names a path of the host's root
    assert not re.search(r'(?<!site \+ )"/(api|uri-res|view)\b', script), re.findall(r'.{30}"/(?:api|uri-res|view)', script)


def test_the_pdf_viewers_policy_lets_pdfjs_load_from_under_the_path(names: tuple[Path, dict[str, str]]) -> None:
    location, named = names
    with _client(location, BASE) as client:  # the Host a proxy hands on is its way to pdi, not the reader's
        answer = client.get(f"/view?pdi={_q(named['pdf'])}", headers={"Host": "127.0.0.1:8000"})
    module = next(v for t, k, v in _attributes(answer.text).found if k == "data-pdfjs")
    assert module.startswith("/pdi/static/pdfjs/"), module
    policy = answer.headers["content-security-policy"]
    assert "script-src http://testserver/pdi/static/pdfjs/ " in policy, policy
    with _client(location, BASE) as client:  # what the proxy passes on: the path without /pdi
        assert client.get(module.removeprefix("/pdi")).status_code == 200
    with _client(location, None) as client:  # without a base URL: the request's own origin, as before
        policy = client.get(f"/view?pdi={_q(named['pdf'])}", headers={"Host": "127.0.0.1:8000"}).headers
    assert "script-src http://127.0.0.1:8000/static/pdfjs/ " in policy["content-security-policy"]


def test_a_tombstones_citation_names_the_base_url(names: tuple[Path, dict[str, str]]) -> None:
    location, named = names
    with _client(location, BASE) as client:
        gone = client.get(f"/view?pdi={_q(named['withdrawn'])}", headers={"Host": "127.0.0.1:8000"})
    assert gone.status_code == 410, gone.status_code
    cited = re.search(r'<blockquote class="citation">.*?<span>(.*?)</span></blockquote>', gone.text)
    assert cited is not None, gone.text[:600]
    assert cited.group(1).replace("<wbr>", "") == f"http://testserver/pdi/view?pdi={_q(named['withdrawn'])}"
    assert "127.0.0.1:8000" not in gone.text


def test_redirects_and_links_of_the_apps_own_paths_are_under_the_path(names: tuple[Path, dict[str, str]]) -> None:
    location, named = names
    with _client(location, BASE) as client:
        n2l = client.get(f"/uri-res/N2L?{named['text']}")
        assert n2l.status_code == 302 and n2l.headers["location"].startswith("/pdi/uri-res/N2R?"), n2l.headers
        again = client.get(f"/uri-res/N2L?{named['text']}")  # the second, answered from the cache
        assert again.headers["location"] == n2l.headers["location"]
        signed_out = client.post("/signout", data={"next": "/series"}, headers={"Origin": "http://testserver"})
        assert signed_out.headers["location"] == "/pdi/series", signed_out.headers
        listed = client.get(f"/api/ls?series={S}&limit=2")  # its next page, in its Link and its body
        assert listed.headers["link"].startswith(f"</pdi/api/ls?series={S}&limit=2&after="), listed.headers
        assert listed.json()["next"] == listed.headers["link"][1:].split(">")[0]
        # N2R's Memento links (RFC 7089 §2.2) are made from the base URL, its path kept
        part = client.get(f"/uri-res/N2R?{named['text']}%23line=1")
        targets = re.findall(r"<([^>]*)>", part.headers["link"])
        assert [t for t in targets if not t.startswith("urn:")] == [
            t for t in targets if t.startswith(("http://testserver/pdi/uri-res/", "http://testserver/pdi/time"))]
        # Memento and OAI-PMH name absolute URLs made from the base URL
        timegate = client.get(f"/timegate/{PAGE_URL}")
        assert timegate.headers["location"].startswith("http://testserver/pdi/"), timegate.headers
        assert all(t.startswith("http://testserver/pdi/") for t in re.findall(r"<([^>]*)>", timegate.headers["link"])
                   if not t.startswith(PAGE_URL)), timegate.headers["link"]
        oai = client.get("/oai?verb=Identify")
        assert "<baseURL>http://testserver/pdi/oai</baseURL>" in oai.text, oai.text[:600]


@pytest.mark.parametrize(("base_url", "servers"), [(BASE, [{"url": "/pdi"}]), (None, None)])
def test_the_openapi_documents_server_is_the_path(
    names: tuple[Path, dict[str, str]], base_url: str | None, servers: list[dict[str, str]] | None,
) -> None:
    location, _ = names
    with _client(location, base_url) as client:
        document = client.get("/openapi.json").json()
    validate(document)  # a valid OpenAPI 3.1 document, servers and all (openapi-spec-validator)
    # OpenAPI 3.1 §4.8.1: no servers is the server "/", relative to where the document is: the host's root
    assert document.get("servers") == servers
    if servers:  # the same URL a client resolves a path against (§4.8.5): under /pdi/
        server = urllib.parse.urljoin("http://testserver/pdi/openapi.json", servers[0]["url"])
        assert server + "/api/ls" == "http://testserver/pdi/api/ls"
        assert "/api/ls" in document["paths"]


def test_the_middleware_moves_root_relative_fields_alone() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http" and site.get() == "/pdi"
        await send({"type": "http.response.start", "status": 302, "headers": [
            (b"location", b"/uri-res/N2R?urn:pdi://a.example.us/2026/01/01/1"),
            (b"content-location", b"//elsewhere.example/x"),  # a network-path reference: another host's
            (b"link", b'</api/ls?after=x>; rel="next", <https://a.example/pdi/timegate/x>; rel="timegate",'
                      b' <//b.example/y>; rel="other"'),
            (b"x-other", b"/as/it/was")]})
        await send({"type": "http.response.body", "body": b""})

    answer = TestClient(SitePath(app, "/pdi"), follow_redirects=False).get("/anything")
    assert answer.headers["location"] == "/pdi/uri-res/N2R?urn:pdi://a.example.us/2026/01/01/1"
    assert answer.headers["content-location"] == "//elsewhere.example/x"
    assert answer.headers["link"] == ('</pdi/api/ls?after=x>; rel="next", <https://a.example/pdi/timegate/x>;'
                                      ' rel="timegate", <//b.example/y>; rel="other"')
    assert answer.headers["x-other"] == "/as/it/was"
    assert site.get() == ""


def test_the_middleware_leaves_an_answer_whose_paths_are_under_the_path_already() -> None:
    # an answer the cache keeps, made under /pdi where it was made (SITED), and its 304 made by Preconditions
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, SITED: True, "headers": [
            (b"etag", b'"t"'), (b"content-location", b"/pdi/uri-res/N2R?x"),
            (b"link", b'</pdi/uri-res/N2R?x#t=npt:1.000,2.000>; rel="alternate"')]})
        await send({"type": "http.response.body", "body": b"x"})

    client = TestClient(SitePath(Preconditions(app), "http://testserver/pdi/"))
    whole, unchanged = client.get("/uri-res/N2R?x"), client.get("/uri-res/N2R?x", headers={"If-None-Match": '"t"'})
    assert whole.status_code == 200 and whole.headers["content-location"] == "/pdi/uri-res/N2R?x"
    assert whole.headers["link"] == '</pdi/uri-res/N2R?x#t=npt:1.000,2.000>; rel="alternate"'
    # RFC 9110 §15.4.5: the 304 repeats the 200's Content-Location, as it was
    assert unchanged.status_code == 304 and unchanged.headers["content-location"] == "/pdi/uri-res/N2R?x"


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    root = tmp_path_factory.mktemp("base-path-clips")
    video = root / "clip.webm"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
                    "-c:v", "libvpx-vp9", str(video)], check=True, timeout=120)
    with Archive.init(root / "archive") as archive:
        archive.add_series(S)
        found = {"text": str(archive.add(S, b"The minutes of the meeting.\nA second line.\n", format="text")),
                 "video": str(archive.add(S, video.read_bytes(), format="webm"))}
    return str(root / "archive"), found


@contextmanager
def _on_connections(app: Starlette, *, public: bool = False) -> Iterator[tuple[int, list[str]]]:
    """``app`` on pdi serve's own connections, in a thread, answering from its cache (and, ``public``, making the
    plain N2R and N2L it does not hold yet, as pdi serve's do): its port, and the paths of the requests that
    reached the app (those the connection answered itself do not)."""
    heard: list[str] = []

    async def counted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            heard.append(scope["path"])
        await app(scope, receive, send)

    protocol = answering_protocol(10, app.state.cache, None, app.state.public if public else None)
    with in_thread(counted, host="127.0.0.1", port=0, log_level="warning", http=protocol) as server:
        yield server.servers[0].sockets[0].getsockname()[1], heard


def _asked(service: str, name: str, **fields: str) -> bytes:
    lines = [f"GET /uri-res/{service}?{name.replace('#', '%23')} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _field(answer: bytes, name: str) -> str | None:
    for line in answer.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b": ")
        if key.lower() == name.encode():
            return value.decode("latin-1")
    return None


# /uri-res: a path of the app's own, which a path made under it twice (/uri-res/uri-res/uri-res/N2R) or not at all
# would show, and which only an answer's mark, not its path's shape, tells from one under it once
@pytest.mark.parametrize("base_url", [BASE, "http://testserver/uri-res/"])
def test_the_connections_answers_from_the_cache_are_the_apps_under_the_path(
    clips: tuple[str, dict[str, str]], base_url: str,
) -> None:
    location, named = clips
    text, video = named["text"], named["video"]
    prefix = urllib.parse.urlsplit(base_url).path.rstrip("/")
    with TestClient(create_app(location)) as client:  # the name's tag, for the 304 asked first
        tag = client.get(f"/uri-res/N2R?{text}").headers["etag"]
    requests = [
        _asked("N2R", text, If_None_Match=tag),  # a 304 (its validator kept)
        _asked("N2R", text),  # the bytes (kept whole)
        _asked("N2L", text),  # the versioned name's 302 (its fact kept)
        _asked("N2L", text + "#line=1"),  # the 302 of a name with a fragment (kept under its key)
        _asked("N2R", video + "#msec=1250,2500"),  # a clip: the whole video, Content-Location and a Link
        _asked("N2Ls", text),  # never kept: the app answers it each time
    ]
    with _on_connections(create_app(location, base_url=base_url)) as (port, heard):
        first = exchange(port, requests)
        assert heard == ["/uri-res/N2R", "/uri-res/N2R", "/uri-res/N2L", "/uri-res/N2L", "/uri-res/N2R",
                         "/uri-res/N2Ls"]
        again = exchange(port, requests)
        assert heard[6:] == ["/uri-res/N2Ls"], "the connection did not answer from the cache what it holds"
    assert again == first  # the octets (the Date aside) of each answer: the app's, the connection's
    assert [a.split(b" ", 2)[1] for a in first] == [b"304", b"200", b"302", b"302", b"200", b"200"]
    assert _field(first[0], "location") is None and _field(first[0], "content-location") is None
    assert _field(first[2], "location") == f"{prefix}/uri-res/N2R?{text}"
    assert _field(first[3], "location") == f"{prefix}/uri-res/N2R?{text}%23line=1"
    assert _field(first[4], "content-location") == f"{prefix}/uri-res/N2R?{video}"
    clip = f'<{prefix}/uri-res/N2R?{video}#t=npt:1.250,2.500>; rel="alternate"; type="video/webm"'
    assert clip in (_field(first[4], "link") or ""), first[4][:600]
    # N2R's Memento links and N2Ls' locations are absolute URLs made from the base URL, its path kept
    targets = re.findall(r"<([^>]*)>", _field(first[1], "link") or "")
    under = tuple(base_url + path for path in ("uri-res/N2R?", "timegate/", "timemap/link/"))
    assert len(targets) == 5 and all(t.startswith(("urn:", *under)) for t in targets), targets
    assert first[5].split(b"\r\n\r\n", 1)[1].decode().split("\r\n")[1] == f"{base_url}uri-res/N2R?{text}"

    # the connection's own first answers (pdi serve's: the plain N2R, N2L and 304 made without the app) are the same
    with _on_connections(create_app(location, base_url=base_url), public=True) as (port, heard):
        made = exchange(port, requests)
        assert heard == ["/uri-res/N2L", "/uri-res/N2R", "/uri-res/N2Ls"]  # a fragment's and N2Ls' alone
        assert exchange(port, requests) == made and heard[3:] == ["/uri-res/N2Ls"]
    assert made == first


def test_pdi_serve_under_a_path_answers_names_from_its_connections(clips: tuple[str, dict[str, str]]) -> None:
    location, named = clips
    text = named["text"]
    with serving(location, "--workers", "1", "--base-url", BASE) as (_, port):

        def timed() -> float:  # answers whose latency was observed, /metrics' aside: the app's (not a connection's)
            exposed = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
            return sum(sample.value for family in text_string_to_metric_families(exposed) for sample in family.samples
                       if sample.name == "pdi_http_request_duration_seconds_count"
                       and sample.labels.get("route") != "/metrics")

        before = timed()
        answers = exchange(port, [_asked("N2L", text), _asked("N2R", text)] * 3)
        time.sleep(0.5)  # what the app observed is in the metrics by now
        after = timed()
    assert [_field(a, "location") for a in answers[::2]] == [f"/pdi/uri-res/N2R?{text}"] * 3
    assert [a.split(b"\r\n\r\n", 1)[1] for a in answers[1::2]] == [b"The minutes of the meeting.\nA second line.\n"] * 3
    assert after == before, "a request under the path went through the app, not the connection"


@pytest.mark.parametrize(("base_url", "path"), [(BASE, "/pdi/"), (None, "/"), ("http://testserver/", "/")])
def test_the_sign_in_cookie_is_the_resolvers_path_alone(
    names: tuple[Path, dict[str, str]], base_url: str | None, path: str,
) -> None:
    location, _ = names
    with Archive.open(str(location)) as archive:
        _, token = archive.add_token(f"reader-{len(path)}-{base_url is None}", role="read")
    with _client(location, base_url) as client:
        sent = {"Origin": "http://testserver"}
        signed_in = client.post("/signin", data={"token": token, "next": "/series"}, headers=sent)
        assert signed_in.status_code == 303, signed_in.text[:300]
        assert signed_in.headers["location"] == path + "series"
        cookie = signed_in.headers["set-cookie"]
        signed_out = client.post("/signout", data={"next": "/"}, headers=sent)
        cleared = signed_out.headers["set-cookie"]
    # RFC 6265 §5.2.4: the Path attribute as sent; a browser sends the cookie to paths under it alone (§5.1.4)
    assert [p.strip() for p in cookie.split(";")][1] == f"Path={path}", cookie
    assert [p.strip() for p in cleared.split(";")][:3] == ["pdi-token=", f"Path={path}", "Max-Age=0"], cleared


@pytest.mark.parametrize("base_url", [None, "http://testserver/", "http://testserver"])
def test_at_a_hosts_root_the_pages_link_its_root_as_before(
    names: tuple[Path, dict[str, str]], base_url: str | None,
) -> None:
    location, named = names
    with _client(location, base_url) as client:
        for path in ["/", "/series", f"/view?pdi={_q(named['text'])}", f"/view?pdi={_q(named['pdf'])}"]:
            answer = client.get(path)
            assert "data-site" not in answer.text
            hrefs = {v for _, k, v in _attributes(answer.text).found if k == "href"}
            assert {"/", "/series", "/favicon.svg", "/api"} <= hrefs, (path, hrefs)
        n2l = client.get(f"/uri-res/N2L?{named['text']}")
        assert n2l.headers["location"].startswith("/uri-res/N2R?")


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20))
def test_a_base_urls_path_is_one_a_page_can_hold_in_an_attribute(segment: str) -> None:
    path = site_path("https://library.example/" + urllib.parse.quote(segment, safe="\"<> '&") + "/")
    assert not set(path) & set("\"<> \\\x00`"), path
    assert not path.endswith("/")
    assert urllib.parse.unquote(path) == ("/" + segment if segment else "")


def _text_and_attributes(document: str) -> tuple[str, list[tuple[str, str, str]]]:
    parser = _Attributes()
    texts: list[str] = []
    parser.handle_data = texts.append  # type: ignore[method-assign]
    parser.feed(document)
    parser.close()
    return "".join(texts), parser.found


@given(words=st.text(max_size=40), target=st.text(max_size=20), typed=st.text(max_size=20))
def test_a_pages_text_and_text_attributes_are_kept_under_a_path(words: str, target: str, typed: str) -> None:
    """What a depositor or a reader wrote (escaped, as every page escapes it: its text, a box's value, a link's
    title) is the same on a page under a path; each root-relative URL attribute is moved under it once."""
    body = (f'<p title="{esc(typed)}">{esc(words)}</p><input value="{esc("/" + typed)}">'
            f'<a href="/view?pdi={urllib.parse.quote(target, safe="")}">x</a>')
    plain = page("T", body)
    token = site.set("/pdi")
    try:
        moved = page("T", body)
    finally:
        site.reset(token)
    text, found = _text_and_attributes(plain)
    moved_text, moved_found = _text_and_attributes(moved)
    assert moved_text == text
    kept = [(t, k, v) for t, k, v in found if k in TEXT_ATTRIBUTES]
    assert [(t, k, v) for t, k, v in moved_found if k in TEXT_ATTRIBUTES] == kept
    assert ("input", "value", "/" + typed) in kept
    urls = [(t, k, v) for t, k, v in found if k in ("href", "action") and v.startswith("/")]
    assert [(t, k, v) for t, k, v in moved_found if k in ("href", "action") and v.startswith("/")] == [
        (t, k, "/pdi" + v) for t, k, v in urls]
    assert ("a", "href", f"/pdi/view?pdi={urllib.parse.quote(target, safe='')}") in moved_found
