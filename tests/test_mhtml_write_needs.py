"""What pack and capture fetch for a page, and how they label it (pdi.mhtml.write).

The URL fetched is the one the browser asks for (WHATWG URL: the query in the encoding of
the text that names it; bytes worked out by hand from the WHATWG indexes: windows-1251
я = FF, ц = F6; UTF-8 я = D1 8F, ф = D1 84, о = D0 BE, н = D0 BD); the label keeps the
reference's fragment, as Chromium's own files do and as it looks parts up; a relative
``<base href>`` is written absolute, because Chromium resolves it against the MHTML
file's own URL.
"""

from __future__ import annotations

from pdi.capture.crawl import Crawl, pack_crawl
from pdi.capture.fetch import Fetched
from pdi.mhtml import check, parse
from pdi.mhtml.write import Need, absolute_base, needed_references


def needs(html: str, encoding: str = "windows-1251", url: str = "http://h/d/p.html") -> list[Need]:
    return list(needed_references(url, "text/html", html.encode(encoding), None))


def test_query_in_the_pages_encoding_path_in_utf8() -> None:
    got = needs('<meta charset="windows-1251"><img src="фон.png?ц=я#top">')
    assert got == [Need("http://h/d/%D1%84%D0%BE%D0%BD.png?%F6=%FF", None, "http://h/d/%D1%84%D0%BE%D0%BD.png?%F6=%FF#top")]


def test_style_sheets_carry_the_encoding_to_decode_them_with() -> None:
    (sheet,) = needs('<meta charset="windows-1251"><link rel=stylesheet href="s.css?я">')
    assert (sheet.url, sheet.as_document, sheet.environment) == ("http://h/d/s.css?%FF", "css", "windows-1251")
    css = "@import 'i.css?я'; p{background:url(фон.png?я)}".encode("cp1251")
    # decoded with its referrer's encoding: @import in UTF-8 (as Chromium), url() in the sheet's
    got = list(needed_references(sheet.url, "text/css", css, None, sheet.environment))
    assert [n.url for n in got] == ["http://h/d/i.css?%D1%8F", "http://h/d/%D1%84%D0%BE%D0%BD.png?%FF"]
    assert got[0].environment == "windows-1251"
    # declared otherwise: the declaration wins
    got = list(needed_references(sheet.url, "text/css", b"p{background:url(a.png?\xd1\x8f)}", "utf-8", "windows-1251"))
    assert [n.url for n in got] == ["http://h/d/a.png?%D1%8F"]


def test_srcdoc_and_style_attribute_are_utf8() -> None:
    got = needs('<meta charset="windows-1251"><iframe srcdoc="<img src=a.png?я>"></iframe><p style="background:url(b.png?я)">')
    assert [n.url for n in got] == ["http://h/d/a.png?%D1%8F", "http://h/d/b.png?%D1%8F"]


def test_one_need_for_each_fragment() -> None:
    got = needs('<img src="a.png#x"><img src="a.png"><img src="a.png#x">', "utf-8")
    assert [(n.url, n.label) for n in got] == [("http://h/d/a.png", "http://h/d/a.png#x"), ("http://h/d/a.png", "http://h/d/a.png")]


def test_relative_base_made_absolute() -> None:
    html = '<head><base href="assets/"><base href="other/"></head><img src="a.png">'
    assert absolute_base("http://h/d/p.html", html.encode()) == html.replace('"assets/"', '"http://h/d/assets/"').encode()
    # the page's encoding for the query, the value escaped for its quotes
    cp = "<base href='x/?я&amp;b=&quot;'>".encode("cp1251")
    assert absolute_base("http://h/d/p.html", cp, "windows-1251") == b"<base href='http://h/d/x/?%FF&#38;b=%22'>"
    unquoted = b"<base href=x/>"
    assert absolute_base("http://h/d/p.html", unquoted) == b"<base href=http://h/d/x/>"


def test_absolute_or_absent_base_and_srcdoc_base_left_alone() -> None:
    for html in (b'<base href="http://e.org/">', b"<p>no base</p>", b"<iframe srcdoc=\"<base href='x/'>\"></iframe>", b"<base target=_top>"):
        assert absolute_base("http://h/d/p.html", html) == html


def test_pack_crawl_labels_every_fragment_and_writes_the_base_absolute() -> None:
    html = b'<base href="a/"><img src="i.png#x"><img src="i.png">'
    root = Fetched("http://h/p.html", "http://h/p.html", 200, "text/html", None, html)
    image = Fetched("http://h/a/i.png", "http://h/a/i.png", 200, "image/png", None, b"PNG")
    labels = (("http://h/a/i.png#x", "http://h/a/i.png"), ("http://h/a/i.png", "http://h/a/i.png"))
    agg = parse(pack_crawl(Crawl(root, (image,), (), labels)))
    assert [p.content_location for p in agg.parts] == ["http://h/p.html", "http://h/a/i.png#x", "http://h/a/i.png"]
    assert agg.root.data == b'<base href="http://h/a/"><img src="i.png#x"><img src="i.png">'
    assert [r.target.content_location for r in agg.references if r.target] == ["http://h/a/i.png#x", "http://h/a/i.png"]
    assert check(agg).findings == ()
