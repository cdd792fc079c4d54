"""``char`` and ``line`` on text (the PDI reading, PDI-GRAMMAR.md §3) through :func:`pdi.fragments.evaluate`.

Input: ``fragment NUL media-type NUL text`` (``text/*`` or an XML type; the
charset from ``charset=``). What must hold (``pdi.fragments.text.pdi_reading``):
one range, inside the entity; its text is the stretch ``[start, end)`` of
the entity's CRLF-canonical text; on CRLF-canonical text the data is exactly
the entity's octets in that range, otherwise the selection written with CRLF
line endings.
"""

from __future__ import annotations

import codecs

from fuzz_harness import Target

from fuzz_targets._evaluate import evaluated
from pdi.fragments.text import TextIndex, to_crlf


def _texty(mtype: str) -> bool:
    major, _, minor = mtype.partition("/")
    return major == "text" or minor in ("xml", "xhtml+xml", "sgml") or minor.endswith("+xml")


def run(data: bytes) -> None:
    scheme, _, body, _, result = evaluated(data, default_scheme="char", default_type="text/plain", family=_texty)
    if scheme not in ("char", "line"):
        return
    assert result.scheme == scheme
    (r,) = result.ranges
    assert 0 <= r.byte_start <= r.byte_end <= len(body)
    assert 0 <= r.start <= r.end
    text = codecs.decode(result.data, result.charset or "us-ascii", "strict")
    whole = to_crlf(TextIndex(body, result.charset).whole_text())
    assert text == whole[r.start : r.end]
    if not result.canonicalized:
        assert result.data == body[r.byte_start : r.byte_end]
    if result.past_end:
        assert result.clamped and result.data == b""


TARGET = Target(
    "fragment_text",
    run,
    warmup=b"line=1,2\x00text/plain; charset=utf-8\x00one\r\ntwo\r\nthree\r\n",
    tokens=(
        b"\x00", b"char=", b"line=", b",", b"\r\n", b"\n", b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xef\xbb\xbf",
        b"\xff\xfe", b"\xfe\xff", b"text/plain", b"; charset=", b"utf-8", b"utf-16", b"utf-16le", b"utf-32",
        b"shift_jis", b"iso-2022-jp", b"gb18030", b"ebcdic-us", b"cp037", b"us-ascii", b"iso-8859-1",
        b"text/xml", b"text/html", b"\xe6\x97\xa5", b"\xf0\x9f\x98\x80", b"\x80",
    ),
)
