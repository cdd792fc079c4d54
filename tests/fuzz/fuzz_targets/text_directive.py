"""WICG text directives, ``#:~:text=``, parsed and found in text and HTML: :mod:`pdi.fragments.textdirective`.

Input: ``fragment NUL media-type NUL document``. The fragment is what
follows ``#`` (its fragment directive, after ``:~:``, or the whole when it
has none); the media type is ``text/plain``, ``text/html``,
``application/xhtml+xml`` or ``text/xml`` (another is replaced by
``text/html``), its ``charset=`` read. What must hold: each parsed
directive, written again (``str``), parses back to itself, and so does the
whole directive; each one found is a stretch of the page text that, folded
as terms are compared (§3.6.1, primary level; a plain text's CRLF a line feed), starts with its start term
and ends with its end term (or start term), and maps to a ``char`` range
inside the document (:meth:`PageText.document_range`).
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.fragments.pagetext import document_page_text
from pdi.fragments.textdirective import (
    find_all,
    fold,
    parse_fragment_directive,
    parse_text_directive,
    split_fragment_directive,
)

_TYPES = ("text/plain", "text/html", "application/xhtml+xml", "text/xml", "text/css")


def _charset(media_type: str) -> str | None:
    for param in media_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"') or None
    return None


def run(data: bytes) -> None:
    frag_b, media_b, body = fields(data, 3)
    fragment = text_of(frag_b)
    _, directive = split_fragment_directive(fragment)
    directives = parse_fragment_directive(fragment if directive is None else directive)
    for d in directives:
        written = str(d)
        assert written.startswith("text=")
        assert parse_text_directive(written[5:]) == d
    assert parse_fragment_directive("&".join(map(str, directives))) == directives
    media_type = text_of(media_b)
    if media_type.split(";", 1)[0].strip().lower() not in _TYPES:
        media_type = "text/html"
    page = document_page_text(body, media_type, _charset(media_type))
    for d, found in zip(directives, find_all(directives, page), strict=True):
        if found is None:
            continue
        start, end = found
        assert 0 <= start < end <= len(page.text)
        selected = fold(page.text[start:end])
        if page.kind == "text":  # a browser's text of a plain text holds a line feed for each CRLF, as terms are matched
            selected = selected.replace("\r\n", "\n")
        assert selected.startswith(fold(d.start)), (selected, d)
        assert selected.endswith(fold(d.end if d.end is not None else d.start)), (selected, d)
        a, b = page.document_range(start, end)
        assert 0 <= a < b <= page.length


TARGET = Target(
    "text_directive",
    run,
    warmup=b":~:text=quick-,brown,fox,-jumped\x00text/html\x00<p>The quick brown fox jumped</p>",
    tokens=(
        b"\x00", b":~:", b"text=", b"&text=", b"-,", b",-", b",", b"-", b"%20", b"%2D", b"%2C", b"%26", b"%C3%A9",
        b"%FF", b"%", b"&", b"unknown=x&", b"text/plain", b"text/html", b"application/xhtml+xml", b"text/xml",
        b"; charset=", b"utf-8", b"utf-16", b"iso-8859-1", b"<p>", b"</p>", b"<br>", b"<pre>", b"<script>",
        b"<p hidden>", b"<title>", b"&amp;", b"&#x41;", b"\r\n", b" ", b"\xc3\xa9", b"\xc3\x9f", b"ss",
        "\u3042".encode(), b"\xef\xbb\xbf", b"<![CDATA[", b"<?xml version='1.0'?>",
    ),
)
