"""RFC 5147 fragments (``char=``, ``line=``, ``length=``, ``md5=``) on text/plain: ``pdi.fragments.text.rfc5147``.

Input: ``fragment NUL charset NUL text`` (an empty charset: none, US-ASCII).
What must hold (RFC 5147 §3, §4; the module docstring): ``str`` of a parsed
fragment parses to the same fragment; a selection is one range inside the
entity whose octets are the data and whose decoding is the text; the
fragment generated for that selection, with ``length`` and ``md5`` checks of
the entity, passes its checks and selects the same again; with
``on_error="ignore"`` a bad fragment is not an error.
"""

from __future__ import annotations

import codecs

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.errors import PDIError
from pdi.fragments.text import TextFragment, evaluate_rfc5147, make_rfc5147


def run(data: bytes) -> None:
    frag_b, charset_b, body = fields(data, 3)
    charset = text_of(charset_b) or None
    try:
        fragment = TextFragment.parse(text_of(frag_b))
    except PDIError:
        evaluate_rfc5147(text_of(frag_b), body, charset=charset, on_error="ignore")
        raise
    assert TextFragment.parse(str(fragment)) == fragment
    selection = evaluate_rfc5147(fragment, body, charset=charset)
    (r,) = selection.ranges
    assert 0 <= r.byte_start <= r.byte_end <= len(body)
    assert selection.data == body[r.byte_start : r.byte_end]
    assert selection.text == codecs.decode(selection.data, selection.charset)
    made = make_rfc5147(body, "char", r.start, r.end, charset=charset, length=True, md5=True)
    again = evaluate_rfc5147(str(made), body, charset=charset)
    assert again.integrity == "ok"
    assert again.data == selection.data


TARGET = Target(
    "text_rfc5147",
    run,
    warmup=b"line=1,2;length=14,UTF-8\x00utf-8\x00one\r\ntwo\r\nthree\n",
    tokens=(
        b"\x00", b"char=", b"line=", b",", b";", b"length=", b"md5=", b"d41d8cd98f00b204e9800998ecf8427e",
        b",UTF-8", b",us-ascii", b",csUTF8", b",iso-8859-1", b"utf-8", b"utf-16", b"utf-16be", b"utf-32le",
        b"windows-1252", b"shift_jis", b"iso-2022-jp", b"x-unknown", b"\r\n", b"\n", b"\r", b"\xc2\x85",
        b"\r\xc2\x85", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"\x80",
    ),
)
