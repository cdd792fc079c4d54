"""draft-wilde-text-fragment-00 (``char(n)``, ``line(a,b)``, ``match(re)``, unions): ``pdi.fragments.text.wilde``.

Input: ``fragment NUL charset NUL text``. What must hold (the module
docstring): ``str`` of a parsed fragment parses to the same fragment; the
ranges are sorted, neither overlapping nor touching, inside the entity; the
data is their octets in order.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.fragments.text import WildeFragment, evaluate_wilde


def run(data: bytes) -> None:
    frag_b, charset_b, body = fields(data, 3)
    charset = text_of(charset_b) or None
    fragment = WildeFragment.parse(text_of(frag_b))
    assert WildeFragment.parse(str(fragment)) == fragment
    selection = evaluate_wilde(fragment, body, charset=charset)
    end = -1
    for r in selection.ranges:
        assert end < r.start <= r.end
        assert 0 <= r.byte_start <= r.byte_end <= len(body)
        end = r.end
    assert selection.data == b"".join(body[r.byte_start : r.byte_end] for r in selection.ranges)


TARGET = Target(
    "text_wilde",
    run,
    warmup=b"line(1,2)match(t.o)char(3)\x00utf-8\x00one\r\ntwo\r\nthree\r\n",
    tokens=(
        b"\x00", b"char(", b"line(", b"match(", b")", b",", b"^(", b"^)", b"^^", b"%28", b"%29", b"%5E",
        b"\\(", b"\\)", b"\\{", b"\\}", b"\\{1,2\\}", b"*", b".", b"[", b"]", b"[^a]", b"[[:alpha:]]",
        b"[[.a.]]", b"[[=a=]]", b"\\1", b"$", b"\\", b"a*", b"\r\n", b"\n", b"utf-8", b"utf-16",
        b"iso-8859-1", b"\xc3\xa9", b"\xef\xbb\xbf",
    ),
)
