"""``/search`` and ``/api/search`` against a live resolver: hits link to the passage, the page needs no script."""

from __future__ import annotations

import html
import re
import time
import urllib.parse
from pathlib import Path

import httpx
from server_helpers import TEXT, Served


def get(served: Served, path: str, **params: str) -> httpx.Response:
    return httpx.get(f"{served.url}{path}", params=params, timeout=30)


def test_api_search_names_the_passage_and_the_viewer_marks_it(served: Served) -> None:
    answer = get(served, "/api/search", q="world").json()
    (hit,) = [h for h in answer["hits"] if h["document"] == served.text]
    # "Hello, world." : the word is characters 7 to 12 of the CRLF-canonical text
    assert hit["char"] == [7, 12] and hit["name"] == f"{served.text}#char=7,12"
    assert hit["snippet"][slice(*hit["marks"][0])] == "world"
    assert TEXT.decode().replace("\n", "\r\n")[7:12] == "world"
    view = get(served, hit["view"].split("?")[0], pdi=urllib.parse.unquote(hit["view"].split("pdi=")[1]))
    assert view.status_code == 200 and "<mark" in view.text and ">world</mark>" in view.text
    assert answer["next"] is None


def test_api_search_pages_and_errors(served: Served) -> None:
    first = get(served, "/api/search", q="line", limit="1").json()
    assert len(first["hits"]) == 1
    bad = get(served, "/api/search", q='"open')
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/problem+json")
    assert "not closed" in bad.json()["detail"]
    too_few = get(served, "/api/search", q="x", limit="0")
    assert too_few.status_code == 400 and "limit=0 is out of range: give 1 to" in too_few.json()["detail"]
    assert get(served, "/api/search").status_code == 400
    # a query past its bound: the request's own parameter, not content (RFC 9110 §15.5.14 keeps 413 for content)
    for route in ("/api/search", "/search"):
        long = get(served, route, q="a" * 5000)
        assert long.status_code == 400, (route, long.text)
        assert "search query may have at most 2000 characters, not 5000" in long.text  # a page's line: "A search …"
    assert get(served, "/api/search", q="a" * 5000).json()["title"] == "limit exceeded"


def test_search_refuses_a_limit_in_digits_other_than_ascii(served: Served) -> None:
    # str.isdigit() holds for "²" and "١", which int() refuses: a 400 on both routes, not a 500
    for route in ("/api/search", "/search"):
        for limit in ("²", "١"):
            bad = get(served, route, q="line", limit=limit)
            assert bad.status_code == 400, (route, limit, bad.text)
            assert "is not a number: give 1 to" in bad.text


def test_the_search_page_lists_hits_with_marks_and_escapes_them(served: Served) -> None:
    page = get(served, "/search", q="alert")
    assert page.status_code == 200
    links = re.findall(r'<ol class="hits"[^>]*>.*?</ol>', page.text, re.S)
    assert links, page.text
    # the text's own "<script>" is shown as text, never as markup
    assert "<script>alert" not in page.text and "&lt;script&gt;<mark>alert</mark>" in page.text
    href = html.unescape(re.search(r'<a href="([^"]+)"', links[0]).group(1))  # type: ignore[union-attr]
    assert href.startswith("/view?pdi=") and "%23char=" in href
    assert 'label for="search-q"' in page.text and 'action="/search"' in page.text
    # each hit says its document's title when it has one, and which version it is of
    assert '<p class="hit-title"><cite><bdi>A letter</bdi></cite></p>' in links[0] and " · version 1 · " in links[0]


def test_the_search_page_says_what_is_wrong(served: Served) -> None:
    page = get(served, "/search", q='"open')
    assert page.status_code == 400 and 'role="alert"' in page.text and "not closed" in page.text
    empty = get(served, "/search")
    assert empty.status_code == 200 and "<ol" not in empty.text
    none = get(served, "/search", q="zzzqqq")
    assert none.status_code == 200 and "No passage" in none.text


def test_pdi_serve_indexer_drains_the_queue_and_the_page_says_pending_until_then(tmp_path: Path) -> None:
    """A text too large to index in its deposit's pass: /search says its index is pending, and
    ``pdi serve --indexer`` makes its passages, after which it is found where it stands."""
    from server_helpers import S, serving

    import pdi.archive.search as search
    from pdi.archive import Archive

    filler = "".join(f"Line {i} of plain words, here and there.\n" for i in range(30000))
    text = filler + "A narwhal surfaced.\n"
    assert len(text) > search.QUEUE_PAST
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, text.encode(), format="text"))
        assert archive.search("narwhal").pending == 1
    with serving(location) as (_, port):
        page = httpx.get(f"http://127.0.0.1:{port}/search", params={"q": "narwhal"}, timeout=30)
        assert page.status_code == 200
        assert "Index pending: the text of 1 document deposited lately is not searched yet" in page.text
        # the narwhal is in the text not searched yet: the page never says that no passage holds it
        assert "No passage holds" not in page.text
        assert "No passage searched so far holds all these words; the text not searched yet may." in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "narwhal"}, timeout=30).json()["pending"] == 1
    with serving(location, "--indexer") as (_, port):
        deadline = time.monotonic() + 90
        while True:
            answer = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "narwhal"}, timeout=30).json()
            if answer["pending"] == 0:
                break
            assert time.monotonic() < deadline, "the indexer did not drain the queue"
            time.sleep(0.5)
        (hit,) = answer["hits"]
        at = text.replace("\n", "\r\n").find("narwhal")
        assert hit["name"] == f"{name}#char={at},{at + 7}"
        page = httpx.get(f"http://127.0.0.1:{port}/search", params={"q": "narwhal"}, timeout=30)
        assert "Index pending" not in page.text
