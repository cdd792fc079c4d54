"""A character reference of thousands of digits in the attributes MHTML reads (a page's ``<base>``, ``rel``,
``http-equiv``, a script's ``type``) is read as HTML reads any number (WHATWG HTML §13.2.5.80: leading zeros say
nothing), never a ``ValueError`` of Python's 4,300-digit conversion limit (html.unescape raised it).

The expected values are worked out by hand from the standard: ``&#0…0104;`` is ``h`` however many zeros lead.
"""

from __future__ import annotations

from pdi.mhtml.refs import html_references
from pdi.mhtml.write import absolute_base


def _number(code: int, zeros: int = 5000) -> str:
    return "&#" + "0" * zeros + f"{code};"


def test_a_base_rel_and_refresh_of_long_numbers_are_read() -> None:
    page = (
        f'<html><head><base href="{_number(104)}ttp://e.example/d/">'
        f'<link rel="{_number(105)}con" href="i.png">'
        f'<meta http-equiv="{_number(114)}efresh" content="0;url=x.html">'
        "</head><body><img src=a.png></body></html>"
    )
    found = {(r.kind, r.url) for r in html_references(page)}
    assert ("base", "http://e.example/d/") in found
    assert ("icon", "i.png") in found
    assert ("refresh", "x.html") in found
    assert ("src", "a.png") in found


def test_a_relative_base_of_long_numbers_is_made_absolute() -> None:
    page = f'<html><head><base href="{_number(47)}sub/"></head><body></body></html>'.encode()
    written = absolute_base("http://e.example/a/page.html", page)
    assert b'<base href="http://e.example/sub/">' in written
