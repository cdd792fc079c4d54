"""References in HTML and CSS with their source offsets: ``pdi.mhtml.refs`` (html_references, css_references, html_base).

The input is the HTML or CSS text (UTF-8, other bytes as lone surrogates).
What must hold (``Reference``): each reference's ``[start, end)`` lies inside
the text; references of one document do not overlap.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.mhtml import Reference, css_references, html_base, html_references


def _check(text: str, refs: list[Reference]) -> None:
    end = 0
    for ref in sorted(refs, key=lambda r: (r.start, r.end)):
        assert end <= ref.start <= ref.end <= len(text)
        end = ref.end


def run(data: bytes) -> None:
    text = text_of(data)
    _check(text, html_references(text))
    _check(text, css_references(text))
    html_base(text)


TARGET = Target(
    "mhtml_refs",
    run,
    warmup=b'<base href="x/"><img src="a.png" srcset="b.png 2x"><style>p{background:url(c.png)}</style>',
    tokens=(
        b"<", b">", b"</", b"=", b'"', b"'", b" ", b"<img src=", b"<a href=", b"<base href=", b"<link href=",
        b"<script src=", b"<iframe src=", b"<object data=", b"<embed src=", b"<video poster=", b"srcset=",
        b" 2x,", b" 100w", b"<style>", b"</style>", b"<script>", b"</script>", b"style=", b"url(", b"url('",
        b'url("', b")", b"@import ", b"@import url(", b"\\", b"\\28", b"/*", b"*/", b"&amp;", b"&quot;",
        b"&#x22;", b"<!--", b"-->", b"<![CDATA[", b"<![x[", b"]]>", b"<!DOCTYPE", b"<?", b"<svg>", b"xlink:href=",
        b"<textarea>", b"<plaintext>", b"<noscript>", b"<template>", b"<meta http-equiv=refresh content=",
    ),
)
