"""``elt`` and ``name`` on HTML (html5lib) and XML (expat) through :func:`pdi.fragments.evaluate`.

Input: ``fragment NUL media-type NUL document`` (``text/html``, an XML type
or XHTML). What must hold (``pdi.fragments.markup``): the result is the
``char`` range of the CRLF-canonical source that starts at the ``<`` of a
start tag, inside the document.
"""

from __future__ import annotations

import codecs

from fuzz_harness import Target

from fuzz_targets._evaluate import evaluated
from pdi.fragments.text import to_crlf


def _markup(mtype: str) -> bool:
    minor = mtype.partition("/")[2]
    return mtype == "text/html" or minor in ("xml", "xhtml+xml", "sgml") or minor.endswith("+xml")


def run(data: bytes) -> None:
    scheme, _, body, _, result = evaluated(data, default_scheme="elt", default_type="text/html", family=_markup)
    if scheme not in ("elt", "name"):
        return
    assert result.scheme == scheme
    (r,) = result.ranges
    assert 0 <= r.byte_start < r.byte_end <= len(body)
    text = codecs.decode(result.data, result.charset or "us-ascii", "strict")
    assert text.lstrip("\ufeff").startswith("<")
    assert to_crlf(text) == text


TARGET = Target(
    "fragment_markup",
    run,
    warmup=b"elt=1,2\x00text/html\x00<html><body><p>one<p>two</body></html>",
    tokens=(
        b"\x00", b"elt=", b"name=", b",", b"text/html", b"application/xhtml+xml", b"text/xml", b"image/svg+xml",
        b"; charset=", b"utf-16", b"<", b">", b"</", b"/>", b"<p>", b"<br>", b"<table>", b"<tr>", b"<td>",
        b"<template>", b"<svg>", b"<math>", b"<select>", b"<option>", b"<script>", b"</script>", b"<!--",
        b"-->", b"<![CDATA[", b"]]>", b"<!DOCTYPE html>", b"<?xml version='1.0' encoding='utf-8'?>",
        b"<!ENTITY", b"&amp;", b"&#0;", b" name=a", b" id=a", b"=\"", b"<meta charset=utf-16>", b"\r\n",
        b"\xef\xbb\xbf", b"<frameset>", b"<noscript>", b"<dialog>", b"<body>", b"</body>", b"</html>",
    ),
    examples=0.7,
)
