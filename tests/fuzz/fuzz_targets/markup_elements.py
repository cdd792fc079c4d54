"""Element offsets of HTML (html5lib) and XML (expat): ``pdi.fragments.markup.html_elements``, ``xml_elements``.

Input: the document as UTF-8 text (other bytes as lone surrogates), made
CRLF-canonical as the evaluator does. What must hold (``Element``): start tags
numbered 0, 1, 2 … in source order, each element ``[start, end)`` inside the
text, starting at a ``<``.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.errors import PDIError
from pdi.fragments.markup import Element, html_elements, xml_elements
from pdi.fragments.text import to_crlf


def _check(text: str, elements: list[Element]) -> None:
    previous = -1
    for n, element in enumerate(elements):
        assert element.number == n
        assert previous < element.start < element.end <= len(text)
        assert text[element.start] == "<"
        previous = element.start


def run(data: bytes) -> None:
    text = to_crlf(text_of(data))
    failed: PDIError | None = None
    try:
        _check(text, html_elements(text))
    except PDIError as exc:
        failed = exc
    _check(text, xml_elements(text))
    if failed is not None:
        raise failed


TARGET = Target(
    "markup_elements",
    run,
    warmup=b"<html><body><p>one</p><p>two<br/></p></body></html>",
    tokens=(
        b"<", b">", b"</", b"/>", b"<p>", b"<br>", b"<table>", b"<tr>", b"<td>", b"<template>", b"<svg>",
        b"<math>", b"<select>", b"<option>", b"<script>", b"</script>", b"<style>", b"</style>", b"<!--",
        b"-->", b"<![CDATA[", b"]]>", b"<!DOCTYPE html>", b"<?xml version='1.0'?>", b"<!ENTITY a 'b'>",
        b"&a;", b"&amp;", b"&#0;", b"&#x110000;", b" a=b", b"=\"", b"'", b"\r\n", b"\r", b"<frameset>",
        b"<noscript>", b"<dialog>", b"<body>", b"</body>", b"</html>", b"<a>", b"<b>", b"</a>", b"<i>",
        b"<textarea>", b"<plaintext>", b"<xmp>", b"<iframe>", b"<foreignObject>", b"<desc>", b"<title>",
    ),
    examples=0.7,
)
