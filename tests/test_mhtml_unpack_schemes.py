"""An unpacked page keeps no live reference of a scheme but the web's (pdi.mhtml.unpack: an allow-list).

``smb:``, ``file:``, a drive letter, ``ms-word:``, ``search-ms:`` … lead from a page
opened out of a folder to a network share, the local disk or a local
application. Hypothesis draws scheme names from RFC 3986 §3.1's grammar
(``ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )``), in any case; each is written in
every place a page holds a URL, each place's reference with a marker of its own,
and no marker may be left in anything unpacked. The control: the same page
with ``https`` keeps every marker.
"""

from __future__ import annotations

import html5lib
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.mhtml import parse
from pdi.mhtml.unpack import plan

#: The schemes a reference keeps (and data:, about:, which the tests below take one by one).
KEPT = {"http", "https", "cid", "mid"}

#: Each place a page holds a URL, ``{u}`` the URL (written as it is: no quote, space or markup in it).
PLACES = (
    '<a href="{u}">a</a>',
    '<a href="#x" ping="{u}">p</a>',
    '<area href="{u}">',
    '<img src="{u}">',
    '<img srcset="{u} 1x, https://ok.example/b.png 2x">',
    '<link rel="stylesheet" href="{u}">',
    '<link rel="icon" href="{u}">',
    '<link rel="preload" as="image" imagesrcset="{u} 2x">',
    '<iframe src="{u}"></iframe>',
    '<frame src="{u}">',
    '<object data="{u}"></object>',
    '<embed src="{u}">',
    '<form action="{u}"><button formaction="{u}">go</button></form>',
    '<video poster="{u}"><source src="{u}"><track src="{u}"></video>',
    '<table background="{u}"></table>',
    '<div style="background:url({u})"></div>',
    "<style>@import \"{u}\"; p{{background:url('{u}')}} q{{background:image-set(\"{u}\" 1x)}}</style>",
    '<svg><image href="{u}"/><use xlink:href="{u}"/></svg>',
    '<iframe srcdoc="&lt;img src=&quot;{u}&quot;&gt;"></iframe>',
    '<meta http-equiv="refresh" content="0; url={u}">',
    '<input type="image" src="{u}">',
    '<a href="  {u}">spaces around</a>',
)


def _aggregate(scheme: str, *, base: str = "https://www.example.org/news/page.html") -> tuple[bytes, list[str]]:
    """An MHTML page (with a style sheet part) holding a reference of ``scheme`` in every place, and the markers."""
    markers: list[str] = []
    body = []
    for i, place in enumerate(PLACES):
        marker = f"pdi-marker-{i}.invalid"
        markers.append(marker)
        body.append(place.format(u=f"{scheme}://{marker}/share/x.png"))
    css_marker = "pdi-marker-css.invalid"
    markers.append(css_marker)
    page = "<!doctype html><html><head><title>t</title></head><body>" + "".join(body) + "</body></html>"
    css = f"body{{background:url({scheme}://{css_marker}/x.png)}}"
    data = (
        'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        f"--b\r\nContent-Type: text/html; charset=utf-8\r\nContent-Location: {base}\r\n\r\n{page}\r\n"
        f"--b\r\nContent-Type: text/css\r\nContent-Location: https://www.example.org/news/s.css\r\n\r\n{css}\r\n"
        "--b--\r\n"
    ).encode()
    return data, markers


def _unpacked(data: bytes, *, nowhere: bool = False) -> bytes:
    return b"\n".join(f.data for f in plan(parse(data), nowhere=nowhere).files)


schemes = st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,20}", fullmatch=True).filter(
    lambda s: s.lower() not in KEPT | {"data", "about"})


@settings(max_examples=200, deadline=None)
@given(schemes, st.booleans())
@example("smb", False)
@example("SMB", False)
@example("file", False)
@example("c", False)  # a Windows drive
@example("ms-word", False)
@example("search-ms", False)
@example("vbscript", False)
@example("jar", False)
@example("ftp", False)
@example("thismessage", False)
@example("webcal", True)
def test_no_reference_of_another_scheme_survives_anywhere(scheme: str, nowhere: bool) -> None:
    data, markers = _aggregate(scheme)
    out = _unpacked(data, nowhere=nowhere)
    left = [m for m in markers if m.encode() in out]
    assert left == [], (scheme, left)
    # what a browser parses of the page (html5lib, WHATWG's algorithm): no attribute names the scheme
    tree = html5lib.parse(plan(parse(data), nowhere=nowhere).files[0].data, namespaceHTMLElements=False)
    for element in tree.iter():
        for value in element.attrib.values():
            assert not value.strip().lower().startswith(scheme.lower() + ":"), (scheme, element.tag, value)


def test_the_same_page_with_web_references_keeps_every_one() -> None:
    data, markers = _aggregate("https")
    out = _unpacked(data)
    assert [m for m in markers if m.encode() not in out] == []


@settings(max_examples=100, deadline=None)
@given(schemes)
@example("smb")
def test_a_relative_reference_against_a_base_of_another_scheme_leads_nowhere(scheme: str) -> None:
    # the page's own Content-Location is smb://…: its relative references resolve to smb://…
    data, _ = _aggregate("https", base=f"{scheme}://pdi-share.invalid/page.html")
    page = data.replace(b'<img src="https://pdi-marker-3.invalid/share/x.png">', b'<img src="pic.png">')
    assert b'<img src="pic.png">' in page
    out = plan(parse(page)).files[0].data
    assert b"pdi-share.invalid" not in out and b'<img src="about:blank">' in out


def _page(markup: str) -> bytes:
    return (
        'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        f"--b\r\nContent-Type: text/html\r\nContent-Location: https://e.example/\r\n\r\n{markup}\r\n--b--\r\n"
    ).encode()


def test_data_stays_where_it_loads_an_image_or_a_style_and_nowhere_else() -> None:
    image = "data:image/gif;base64,R0lGODlhAQABAAAAACw="
    document = "data:text/html,pdi-marker-doc"
    out = plan(parse(_page(
        f'<img src="{image}"><div style="background:url({image})"></div>'
        f'<a href="{document}">a</a><iframe src="{document}"></iframe><object data="{document}"></object>'
        f'<embed src="{document}"><meta http-equiv="refresh" content="0; url={document}">'
    ))).files[0].data
    assert out.count(image.encode()) == 2
    assert b"pdi-marker-doc" not in out
    assert out.count(b"about:blank") == 5


def test_script_mail_blob_and_other_about_uris_become_about_blank_but_about_blank_and_places_stay() -> None:
    out = plan(parse(_page(
        '<a href="javascript:alert(1)">j</a><a href="  JavaScript:alert(2)">J</a><a href="mailto:a@b.example">m</a>'
        '<a href="tel:+1">t</a><img src="blob:https://e.example/1"><iframe src="about:srcdoc"></iframe>'
        '<iframe src="about:blank"></iframe><a href="#top">top</a><a href="">here</a>'
    ))).files[0].data
    for gone in (b"javascript", b"JavaScript", b"mailto", b"tel:", b"blob:", b"about:srcdoc"):
        assert gone not in out, gone
    assert out.count(b"about:blank") == 7
    assert b'<a href="#top">' in out and b'<a href="">' in out
