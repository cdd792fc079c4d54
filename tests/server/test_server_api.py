"""The resolver's JSON API (``/api/…``) and its viewer pages, against a live resolver."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import httpx
from server_helpers import ELSEWHERE, VERSION_TIMES, S, Served, serving, start_serve, stop

from pdi._ports import free_port
from pdi.archive import Archive


def api(served: Served, path: str, **params: str) -> httpx.Response:
    return httpx.get(f"{served.url}/api/{path}", params=params, timeout=30)


def test_resolve_says_what_a_fragment_selects(served: Served) -> None:
    text = api(served, "resolve", pdi=f"{served.text}#line=1,2").json()
    # "Second 𝕚 line.\r\n" counted CRLF-canonical: 16 characters (CR and LF one each), 19
    # octets (the 𝕚 is four); the text is kept as deposited, with LF, so in the stored
    # octets the line is bytes 14 to 32 ("Hello, world.\n" is 14, the line with its LF 18)
    assert text["fragment"]["ranges"] == [{"start": 15, "end": 31, "byte_start": 14, "byte_end": 32}]
    assert text["bytes"] == 19
    crop = api(served, "resolve", pdi=f"{served.picture}#crop=(5,10),(50,20)").json()
    assert crop["media_type"] == "image/png" and crop["fragment"]["clamped"]
    assert crop["fragment"]["region"] == {
        "x1": 5, "y1": 10, "x2": 40, "y2": 20, "frame": 0, "width": 40, "height": 30, "frames": 1
    }
    sound = api(served, "resolve", pdi=f"{served.sound}#msec=500,1500").json()
    assert sound["fragment"]["interval"] == {"start": 50, "end": 150, "rate": 100, "channels": 1, "length": 250}
    # a form parameter: the PDI's own escapes travel percent-encoded like everything else
    assert api(served, "resolve", pdi=served.foreign).json()["pdi"] == served.foreign


def test_resolve_says_when_a_fragment_lies_wholly_past_the_end(served: Served) -> None:
    # the text is 58 characters stored: char=58,58 is the empty place at its end, char=58,59 past it
    for fragment, clamped, past_end in [
        ("char=58,59", True, True), ("char=100,200", True, True), ("char=58,58", False, False),
        ("char=50,70", True, False), ("line=3,4", True, True), ("line=2,4", True, False),
    ]:
        described = api(served, "resolve", pdi=f"{served.text}#{fragment}").json()["fragment"]
        assert (described["clamped"], described["past_end"]) == (clamped, past_end), fragment
    sound = api(served, "resolve", pdi=f"{served.sound}#sec=3,4").json()  # 2.5 s
    assert sound["fragment"]["past_end"] and sound["fragment"]["interval"]["start"] == 250


def test_resolve_of_a_generic_name_lists_every_version(served: Served) -> None:
    generic = served.versioned
    assert api(served, "resolve", pdi=generic).json() == {
        "pdi": generic,
        "versions": [
            {"version": 1, "created_at": VERSION_TIMES[0], "formats": [f"{generic}.html.1", f"{generic}.text.1"]},
            {"version": 2, "created_at": VERSION_TIMES[1], "formats": [f"{generic}.text.2"]},
        ],
    }


def test_ls_pages_follow_the_next_link(tmp_path: Path) -> None:
    # an archive of its own: seven documents deposited one after another in one series, so the
    # listing's order (day, then serial) is the order they were deposited in, and nothing else is listed
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        everything = [str(archive.add(S, f"document {i}\n".encode(), format="text")) for i in range(7)]
    with serving(tmp_path / "archive") as (_, port):
        url = f"http://127.0.0.1:{port}"
        listed: list[str] = []
        page = httpx.get(f"{url}/api/ls", params={"series": S, "limit": "2"}, timeout=30).json()
        while True:
            listed += page["names"]
            if page["next"] is None:
                break
            assert len(page["names"]) == 2
            # a relative URL with the same filters, after the page's last name, and no offset
            assert page["next"].startswith("/api/ls?") and "offset=" not in page["next"]
            response = httpx.get(url + page["next"], timeout=30)
            assert response.status_code == 200
            page = response.json()
        assert listed == everything
        first = httpx.get(f"{url}/api/ls", params={"series": S, "limit": "3", "offset": "1"}, timeout=30)
        assert first.json()["names"] == everything[1:4]
        assert first.headers["link"] == f'<{first.json()["next"]}>; rel="next"'
        after = httpx.get(url + first.json()["next"], timeout=30).json()
        assert after["names"] == everything[4:7]  # the offset counted once, on the first page
        last = httpx.get(f"{url}/api/ls", params={"series": S, "after": everything[-1]}, timeout=30).json()
        assert last == {"names": [], "next": None}
        wild = httpx.get(f"{url}/api/ls", params={"series": S, "after": f"urn:pdi://{S}/2026/*/*/*"}, timeout=30)
        assert (wild.status_code, wild.json()["title"]) == (400, "unsupported")  # a GET sends no content


def test_ls_meta_cite_and_series(served: Served) -> None:
    names = api(served, "ls", series=S).json()["names"]
    # deposited in this order on one day (serials 1, 2, 3, 4); a foreign id sorts after the day's serials
    deposited = [served.text, served.page, served.picture, served.sound, served.foreign]
    assert [n for n in names if n in deposited] == deposited
    assert api(served, "ls", series=S, limit="2", offset="1").json()["names"] == names[1:3]
    assert api(served, "ls", pattern=served.text.rsplit("/", 1)[0] + "/*.png").json()["names"] == [served.picture]
    bad = api(served, "ls", series=S, limit="-1")
    assert bad.status_code == 400 and "limit='-1' is not a number" in bad.json()["detail"]
    too_many = api(served, "ls", series=S, limit="10001")  # a value the client chose, not a body: 400, not 413
    assert too_many.status_code == 400 and "limit=10001 is out of range: give 1 to 10000" in too_many.json()["detail"]
    assert api(served, "ls", series="nobody.us").status_code == 404
    meta = api(served, "meta", pdi=served.text).json()
    assert meta["meta"] == {"title": "A letter"} and meta["history"][0]["key"] == "title"
    # the page is "<p id=a>one<p>two</p>": "one" stands at its character 8
    cite = api(served, "cite", citation=f"{served.page}@8={served.page}#char=8,11").json()
    assert (cite["check"], cite["quote"], cite["found"]) == ("ok", "one", "one")
    other = api(served, "cite", citation=f"{served.page}@3={served.text}#char=0,3").json()
    assert (other["check"], other["quote"], other["found"]) == ("mismatch", "Hel", "id=")
    assert api(served, "series").json() == {"series": [  # the two the fixture registers, in name order
        {"name": ELSEWHERE, "parent": None, "authority": ""}, {"name": S, "parent": None, "authority": ""}]}
    missing = api(served, "resolve")
    assert missing.status_code == 400 and "pdi= is missing" in missing.json()["detail"]


def test_the_viewer_marks_the_passage_and_escapes_the_text(served: Served) -> None:
    page = httpx.get(f"{served.url}/view", params={"pdi": f"{served.text}#char=7,12"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Hello, <mark id=\"passage\">world</mark>.\nSecond" in page.text  # LF in the page: a line break
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
    assert f'data-pdi="{served.text}"' in page.text and "<dd><bdi>A letter</bdi></dd>" in page.text
    generic = httpx.get(f"{served.url}/view", params={"pdi": served.text.rsplit(".", 2)[0]})
    # a name is written to wrap between its parts (<wbr>, its fragment's span: pdi.server.pages.layout.breakable)
    assert served.text in re.sub("<wbr>", "", generic.text) and "1 version of this document" in generic.text
    versions = httpx.get(f"{served.url}/view", params={"pdi": served.versioned}).text
    for number, when, tails in [(1, VERSION_TIMES[0], ("html.1", "text.1")), (2, VERSION_TIMES[1], ("text.2",))]:
        # (each cell labelled with its column's heading, which a phone shows beside it: a table of cards)
        row = versions.split(f'<td class="number" data-label="Version">{number}</td>', 1)[1].split("</tr>", 1)[0]
        day, clock = when.split(".")[0].split("T")  # machine-readable, and written as every other table writes it
        assert f'<time datetime="{when}"><span>{day}</span> <span>{clock} UTC</span></time>' in row
        assert [re.sub("<[^>]*>", "", name.split("</code>", 1)[0]) for name in row.split('<code class="name">')[1:]] == [
            f"{served.versioned}.{tail}" for tail in tails
        ]
    past = httpx.get(f"{served.url}/view", params={"pdi": f"{served.text}#char=100,200"}).text
    assert "lies wholly past the end" in past
    image = httpx.get(f"{served.url}/view", params={"pdi": f"{served.picture}#(5,10),(25,20)"})
    assert 'class="box" id="cited" style="left:12.5000%;top:33.3333%;width:50.0000%;height:33.3333%"' in image.text
    wrong = httpx.get(f"{served.url}/view", params={"pdi": "urn:pdi://nobody.us/2026/11/22/1.text.1"})
    assert wrong.status_code == 404 and "Not in this archive" in wrong.text  # the 404 page in the app's layout
    home = httpx.get(f"{served.url}/")
    assert home.status_code == 200 and S in home.text


def test_the_viewer_reads_the_text_as_the_evaluators_do(served: Served) -> None:
    # a BOM is not a character, and a NUL (which a browser drops from a page) is shown as U+2400
    bom = str(served.archive.add(S, b"\xef\xbb\xbfabcd", format="text"))
    page = httpx.get(f"{served.url}/view", params={"pdi": f"{bom}#char=0,3"}).text
    assert "<mark id=\"passage\">abc</mark>d" in page
    nul = str(served.archive.add(S, b"a\x00b\ncd", format="text"))
    assert "a\u2400b\ncd" in httpx.get(f"{served.url}/view", params={"pdi": nul}).text


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_pdi_serve_runs_the_resolver(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("served.example.us")
    port = free_port()  # below the ephemeral range, so that no client connection takes it (nor port + 1) meanwhile
    while not _bindable(port + 1):
        port = free_port()
    process, bound, line = start_serve(tmp_path / "archive", "--workers", "2", port=port)
    try:
        assert (bound, line) == (port, f"pdi: serving {tmp_path / 'archive'} at http://127.0.0.1:{port}/ (replay at http://127.0.0.1:{port + 1}/) with 2 workers (Ctrl-C stops)\n")
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/series", timeout=5)
                break
            # refused before it listens; a read timeout while its two workers start (the socket already
            # listens): the kernel holds the connection, and on a loaded machine a worker can take 5 s to come
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, "pdi serve did not start"
                time.sleep(0.05)
        assert answer.json()["series"][0]["name"] == "served.example.us"
    finally:
        stop(process, timeout=10)
