"""References in HTML and CSS with source offsets, and what they resolve to (§5, §8)."""

from __future__ import annotations

import html as htmllib

from pdi.mhtml import check, css_references, html_base, html_references, parse
from pdi.mhtml.refs import Reference


def spans(text: str, refs: list[Reference]) -> list[tuple[str, str, str]]:
    return [(r.kind, r.url, text[r.start : r.end]) for r in refs]


def test_html_attribute_references_with_offsets() -> None:
    text = (
        '<html><head><link rel="stylesheet" href="s.css"><LINK REL="Shortcut Icon" HREF=\'f.ico\'>'
        '<base href="http://b.example/d/"></head>\r\n<body background=bg.gif>'
        '<img src="a&amp;b.png" alt="x"><a href="/p?x=1&amp;y=2#t">p</a>'
        '<iframe src="cid:frame-1@mhtml.blink"></iframe><video poster="v.jpg"><source src="v.mp4"></video>'
        '<object data="o.swf"></object><script src="j.js"></script></body></html>'
    )
    assert spans(text, html_references(text)) == [
        ("stylesheet", "s.css", "s.css"),
        ("icon", "f.ico", "f.ico"),
        ("base", "http://b.example/d/", "http://b.example/d/"),
        ("background", "bg.gif", "bg.gif"),
        ("src", "a&b.png", "a&amp;b.png"),
        ("href", "/p?x=1&y=2#t", "/p?x=1&amp;y=2#t"),
        ("frame", "cid:frame-1@mhtml.blink", "cid:frame-1@mhtml.blink"),
        ("poster", "v.jpg", "v.jpg"),
        ("src", "v.mp4", "v.mp4"),
        ("data", "o.swf", "o.swf"),
        ("src", "j.js", "j.js"),
    ]
    assert html_base(text) == "http://b.example/d/"


def test_elements_are_named() -> None:
    refs = html_references('<img src=a><iframe src=b></iframe><div style="background:url(c)">')
    assert [(r.element, r.kind) for r in refs] == [("img", "src"), ("iframe", "frame"), ("div", "style-url")]


def test_srcset_candidates_each_a_reference() -> None:
    # HTML "parse a srcset attribute": a URL runs to white space; trailing commas end it
    text = '<img srcset="a.png 1x, b%20c.png 2x,d.png,, data:image/png;base64,AAA= 3x,e.png,f.png">'
    refs = [r for r in html_references(text) if r.kind == "srcset"]
    assert spans(text, refs) == [
        ("srcset", "a.png", "a.png"),
        ("srcset", "b%20c.png", "b%20c.png"),
        ("srcset", "d.png", "d.png"),
        ("srcset", "data:image/png;base64,AAA=", "data:image/png;base64,AAA="),
        ("srcset", "e.png,f.png", "e.png,f.png"),
    ]


def test_style_attribute_with_entities_maps_back_to_the_raw_text() -> None:
    # Chromium writes url("…") in style attributes as url(&quot;…&quot;)
    text = '<div style="background-image: url(&quot;https://x.example/a&amp;b.png&quot;)">'
    (r,) = html_references(text)
    assert (r.kind, r.url) == ("style-url", "https://x.example/a&b.png")
    assert text[r.start : r.end] == "https://x.example/a&amp;b.png"


def test_style_element_and_offsets_in_the_whole_document() -> None:
    text = "<p>é</p>\r\n<style>\r\n@import 'a.css';\r\nb { background: url( \"b c.png\" ) }</style><style>i{x:url(i.png)}</style>"
    refs = html_references(text)
    assert spans(text, refs) == [
        ("import", "a.css", "a.css"),
        ("style-url", "b c.png", "b c.png"),
        ("style-url", "i.png", "i.png"),
    ]
    assert all(r.element == "style" for r in refs)


def test_comments_scripts_and_duplicate_attributes() -> None:
    text = (
        '<!-- <img src="no1.png"> --><script>var s = \'<img src="no2.png">\';</script>'
        '<img src="yes.png" src="no3.png"><textarea><img src="yes2.png"></textarea>'
    )
    urls = [r.url for r in html_references(text)]
    assert "no1.png" not in urls and "no2.png" not in urls and "no3.png" not in urls
    assert urls[0] == "yes.png"


def test_unclosed_and_broken_markup_does_not_raise() -> None:
    for text in ['<img src="a', "<img src=", "<", "<a href=x", '<div style="url(', "<style>url(", "&#xffffffff;"]:
        for r in html_references(text):
            assert htmllib.unescape(text[r.start : r.end]) == r.url


def test_css_references() -> None:
    css = (
        '/* url(no.png) */ @import url("a.css") screen; @IMPORT \'b.css\';\n'
        'p { background: url(c.png), url( d.png ); content: "url(no2.png)" }\n'
        '@font-face { src: url(f.woff2) format("woff2"), url(\'g\\).woff\') }\n'
        "q { background: URL(h\\ i.png) } x-url(no3.png)"
    )
    assert spans(css, css_references(css)) == [
        ("import", "a.css", "a.css"),
        ("import", "b.css", "b.css"),
        ("style-url", "c.png", "c.png"),
        ("style-url", "d.png", "d.png"),
        ("style-url", "f.woff2", "f.woff2"),
        ("style-url", "g).woff", "g\\).woff"),
        ("style-url", "h i.png", "h\\ i.png"),
    ]


def test_inline_kinds() -> None:
    refs = html_references('<a href=x><img src=y><link rel=stylesheet href=z>')
    assert [r.inline for r in refs] == [False, True, True]


def page(html: str, *parts: str, top_location: str | None = None) -> bytes:
    head = 'Content-Type: multipart/related; boundary="b"; type="text/html"'
    if top_location:
        head = f"Content-Location: {top_location}\r\n" + head
    out = [head, "", "--b", "Content-Type: text/html", "Content-Location: http://a.example/dir/page.html", "", html]
    for p in parts:
        out += ["--b", *p.split("\n")]
    out.append("--b--")
    return ("\r\n".join(out) + "\r\n").encode()


def outcome(data: bytes) -> list[tuple[str, str, str | None, int | None, str | None]]:
    agg = parse(data)
    return [
        (r.reference.url, r.status, r.uri, r.target.index if r.target else None, r.rule)
        for r in agg.references
        if r.source is agg.root
    ]


def test_relative_references_resolve_against_the_part_location() -> None:
    data = page(
        '<img src="../img/a.png"><img src="b.png#frag"><img src="//c.example/c.png">',
        "Content-Location: http://a.example/img/a.png\n\nA",
        "Content-Location: b.png\n\nB",
        "Content-Location: http://c.example/c.png\n\nC",
    )
    assert outcome(data) == [
        ("../img/a.png", "satisfied", "http://a.example/img/a.png", 1, "content-location"),
        # part 2's relative label resolves against the enclosing base, thismessage:/
        ("b.png#frag", "unsatisfied", "http://a.example/dir/b.png#frag", None, None),
        ("//c.example/c.png", "satisfied", "http://c.example/c.png", 3, "content-location"),
    ]


def test_fragment_is_not_part_of_the_comparison() -> None:
    data = page('<img src="i.svg#icon">', "Content-Location: http://a.example/dir/i.svg\n\nI")
    assert outcome(data) == [("i.svg#icon", "satisfied", "http://a.example/dir/i.svg#icon", 1, "content-location")]


def test_html_base_element_comes_first() -> None:
    # §5 (a): the <base> wins over the part's Content-Location; a relative one is
    # resolved against the Content-Location.
    data = page(
        '<base href="../other/"><img src="x.png">',
        "Content-Location: http://a.example/other/x.png\n\nX",
    )
    agg = parse(data)
    assert agg.root.base == "http://a.example/other/"
    assert outcome(data)[1][:4] == ("x.png", "satisfied", "http://a.example/other/x.png", 1)


def test_base_of_enclosing_multipart_when_the_part_has_none() -> None:
    data = (
        b"Content-Location: http://t.example/top/\r\n"
        b'Content-Type: multipart/related; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/html\r\n\r\n<img src=i.png>\r\n"
        b"--b\r\nContent-Location: i.png\r\n\r\nI\r\n--b--\r\n"
    )
    agg = parse(data)
    assert agg.root.base == "http://t.example/top/"
    assert agg.parts[1].location == "http://t.example/top/i.png"
    assert agg.references[0].target is agg.parts[1]


def test_cid_matches_content_id_percent_decoded() -> None:
    data = page('<img src="cid:logo%40x.example">', "Content-ID: <logo@x.example>\n\nL")
    assert outcome(data) == [("cid:logo%40x.example", "satisfied", "cid:logo%40x.example", 1, "content-id")]


def test_cid_content_id_before_the_chromium_rule() -> None:
    # §8.3 first: the Content-ID of part 2 wins over part 1's Content-Location: cid:…
    data = page(
        '<link rel="stylesheet" href="cid:css-1@mhtml.blink">',
        "Content-Type: text/css\nContent-Location: cid:css-1@mhtml.blink\n\na{}",
        "Content-Type: text/css\nContent-ID: <css-1@mhtml.blink>\n\nb{}",
    )
    assert outcome(data)[0][3:] == (2, "content-id")


def test_chromium_rule_cid_content_location_without_content_id() -> None:
    data = page(
        '<link rel="stylesheet" href="cid:css-1@mhtml.blink">',
        "Content-Type: text/css\nContent-Location: cid:css-1@mhtml.blink\n\na{}",
    )
    assert outcome(data)[0][3:] == (1, "cid-content-location")


def test_non_ascii_reference_matches_its_percent_encoded_location() -> None:
    data = page('<img src="café.png">', "Content-Location: http://a.example/dir/caf%C3%A9.png\n\nC")
    assert outcome(data)[0][1] == "satisfied"


def test_percent_escapes_are_not_decoded_for_comparison() -> None:
    # §8.2 (a): "a%2eb" is not "a.b"
    data = page('<img src="a%2eb">', "Content-Location: http://a.example/dir/a.b\n\nC")
    assert outcome(data)[0][1] == "unsatisfied"


def test_references_that_cannot_name_a_part_are_ignored() -> None:
    data = page('<img src=""><a href="#top">t</a><img src="data:image/png;base64,AA=="><a href="javascript:void(0)">j</a><a href="mailto:x@y">m</a>')
    assert [s for _, s, *_ in outcome(data)] == ["ignored"] * 5


def test_css_part_references_resolve_against_the_css_location() -> None:
    data = page(
        '<link rel="stylesheet" href="/css/s.css">',
        "Content-Type: text/css\nContent-Location: http://a.example/css/s.css\n\nbody { background: url(../img/bg.png) }",
        "Content-Type: image/png\nContent-Location: http://a.example/img/bg.png\n\nP",
    )
    agg = parse(data)
    css_refs = [r for r in agg.references if r.source is agg.parts[1]]
    assert [(r.uri, r.target) for r in css_refs] == [("http://a.example/img/bg.png", agg.parts[2])]
    assert check(agg).findings == ()


def test_check_duplicates_unreferenced_and_unsatisfied() -> None:
    data = page(
        '<img src="a.png"><img src="missing.png"><a href="elsewhere.html">x</a>',
        "Content-ID: <same@x>\nContent-Location: http://a.example/dir/a.png\n\nA1",
        "Content-ID: <same@x>\nContent-Location: http://a.example/dir/./a.png\n\nA2",
        "Content-Location: http://a.example/lonely.png\n\nL",
    )
    agg = parse(data)
    assert agg.by_location("http://a.example/dir/a.png") is agg.parts[1]  # the first wins
    assert agg.by_content_id("same@x") is agg.parts[1]
    report = check(agg)
    assert sorted((f.severity, f.code, f.part) for f in report.findings) == [
        ("error", "duplicate-content-id", 2),
        ("error", "duplicate-location", 2),
        ("warning", "unreferenced-part", 2),
        ("warning", "unreferenced-part", 3),
        ("warning", "unsatisfied-reference", 0),
    ]
    assert report.unsatisfied_links == 1
    assert not report.ok


def test_chromium_style_element_part_resolves_against_its_page() -> None:
    # Chromium saves a <style> element as a part labelled cid:…; its relative url()
    # is relative to the page that holds it, as in the browser.
    data = page(
        '<link rel="stylesheet" href="cid:css-9@mhtml.blink">',
        "Content-Type: text/css\nContent-Location: cid:css-9@mhtml.blink\n\np { background: url(img/p.png) }",
        "Content-Type: image/png\nContent-Location: http://a.example/dir/img/p.png\n\nP",
    )
    agg = parse(data)
    sheet_refs = [r for r in agg.references if r.source is agg.parts[1]]
    assert [(r.uri, r.target) for r in sheet_refs] == [("http://a.example/dir/img/p.png", agg.parts[2])]
    assert agg.parts[1].base == "thismessage:/"  # §5 alone gives it no base of its own


def test_css_image_set_strings_are_urls() -> None:
    css = 'a { background-image: -webkit-image-set("a1.png" 1x, url(a2.png) 2x, "a\\"3.png" type("image/png")) }'
    assert spans(css, css_references(css)) == [
        ("style-url", "a1.png", "a1.png"),
        ("style-url", "a2.png", "a2.png"),
        ("style-url", 'a"3.png', 'a\\"3.png'),
    ]
    assert [r.url for r in css_references("b { x: image-set('b.png' 1x); y: 'not-a-url.png' }")] == ["b.png"]


def test_inline_svg_image_references() -> None:
    text = '<svg><image href="i.png"/><use xlink:href="s.svg#a"></use><a href="l.html">x</a></svg>'
    assert [(r.kind, r.url, r.element) for r in html_references(text)] == [
        ("src", "i.png", "image"),
        ("src", "s.svg#a", "use"),
        ("href", "l.html", "a"),
    ]


def test_relative_content_location_of_a_nested_multipart_is_resolved_then_a_base() -> None:
    data = (
        b"Content-Location: http://t.example/top/\r\n"
        b'Content-Type: multipart/related; boundary="o"\r\n\r\n'
        b"--o\r\nContent-Location: sub/\r\n"
        b'Content-Type: multipart/related; boundary="i"\r\n\r\n'
        b"--i\r\nContent-Type: text/html\r\n\r\n<img src=i.png>\r\n"
        b"--i\r\nContent-Location: i.png\r\n\r\nI\r\n--i--\r\n--o--\r\n"
    )
    agg = parse(data)
    inner = agg.multiparts[1]
    assert inner.location == "http://t.example/top/sub/"
    html, image = agg.parts
    assert html.base == "http://t.example/top/sub/"
    assert image.location == "http://t.example/top/sub/i.png"
    assert agg.references[0].target is image


def test_html_attributes_split_at_ascii_white_space_only() -> None:
    # HTML §13.2.5.36-38: an unquoted value ends at ASCII white space (tab, LF, FF, space)
    # or ">"; U+00A0 NO-BREAK SPACE is part of the value, as any other character.
    text = "<img src=x\u00a0y.png alt=1><img alt=\u00a0 src=a.png>"
    assert spans(text, html_references(text)) == [
        ("src", "x\u00a0y.png", "x\u00a0y.png"),
        ("src", "a.png", "a.png"),
    ]


def test_css_url_after_a_name_character_is_part_of_a_longer_name() -> None:
    # CSS Syntax 3 §4.2: ident code points are letters, digits, "-", "_" and every non-ASCII
    # code point, so "日本url(" and "\xacurl(" (a UTF-8 byte read as Latin-1) are function
    # names, not url(); after white space or ":" it is a URL.
    css = "a{b:日本url(x)} c{d:\xacurl(y)} e{f:-url(z)} g{h: url(u1)} i{j:url(u2)}"
    assert [r.url for r in css_references(css)] == ["u1", "u2"]
    assert [r.url for r in css_references('@importé "n"; @import "m";')] == ["m"]


def test_html_marked_sections_html_parser_does_not_know_are_bogus_comments() -> None:
    # HTML §13.2.5.42: "<![" outside foreign content opens a bogus comment that ends at
    # the next ">"; html.parser raised AssertionError on "<![x[" (tests/data/fuzz/mhtml_refs/).
    text = "<![x[ <img src=hidden.png> ]]><img src=a.png><![ if x]><img src=b.png><![if !IE]><img src=c.png><![endif]>"
    assert [r.url for r in html_references(text)] == ["a.png", "b.png", "c.png"]


def test_an_import_and_a_url_written_with_escapes_are_references() -> None:
    # CSS Syntax 3 §4.3.4 and §4.3.7: a name's value is read with its escapes undone, so `@\69mport` is the
    # at-keyword `import` and `\75 rl(` the `url(` of a URL token; a name that only looks so once its escapes
    # are undone (`x\75rl(`, a longer name) or one that is no URL function (`\66oo(`) is not
    css = ('@\\69mport "a.css"; @\\49MPORT url(b.css); p{background:\\75 rl(c.png)}'
           ' q{background:x\\75rl(d.png) \\66oo(e.png) u\\72l (f.png)}')
    assert [(r.url, r.kind) for r in css_references(css)] == [
        ("a.css", "import"), ("b.css", "import"), ("c.png", "style-url")]


def test_names_are_compared_in_ascii_only() -> None:
    """CSS Syntax 3 §2.1: names are compared ASCII case-insensitively, so ``@IMPORT`` is ``@import``, and
    ``@ımport`` (U+0131 dotless i) and ``image-ſet(`` (U+017F long s) are other names, which load nothing. Found by
    a hunt: Python's ``re.I`` matched them, and their URLs were taken for the style sheet's references."""
    css = ('@\u0131mport "a.css"; @IMPORT "b.css"; p{background:image-\u017fet("c.png" 1x)}'
           ' q{background:IMAGE-SET("d.png" 1x)}')
    assert [(r.url, r.kind) for r in css_references(css)] == [("b.css", "import"), ("d.png", "style-url")]


def test_long_runs_of_letters_and_escapes_are_read_once() -> None:
    # the escaped names are looked for a bounded length at each place: a megabyte of letters, or of escapes,
    # is read in one pass (unbounded, each place's look ran to the run's end: a million times a million steps)
    assert css_references("p{x:" + "u" * 1_000_000 + "}") == []
    assert css_references("p{x:" + "\\75" * 300_000 + "(g.png)}") == []


def test_a_reference_of_thousands_of_digits_maps_back_to_the_source() -> None:
    # found 2026-12-01: html.unescape raised a ValueError past 4,300 digits when a decoded character was mapped back
    from pdi.mhtml.refs.reference import unescape_with_map

    raw = "a&#" + "0" * 5000 + "66;c"
    text, offsets = unescape_with_map(raw)
    assert text == "aBc"
    assert offsets is not None
    assert [offsets[i] for i in range(len(text))] == [0, 1, len(raw) - 1]
