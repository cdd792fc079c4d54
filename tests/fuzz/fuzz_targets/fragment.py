"""Fragment specifiers on their own (the text after ``#``), checked against a format token.

The input is ``format NUL fragment`` (an empty format: none). What must hold
(PDI-GRAMMAR.md §2.2, §3): ``str(f)`` parses again to the same fragment, under
the same format; the canonical fragment is a fixed point; a fragment built
from the parsed values with :meth:`Fragment.of` is the same.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.errors import PDIError
from pdi.identifier import Fragment


def run(data: bytes) -> None:
    fmt_b, frag_b = fields(data, 2)
    fmt = text_of(fmt_b) or None
    fragment = Fragment.parse(text_of(frag_b), format=fmt)
    assert Fragment.parse(str(fragment), format=fmt) == fragment
    canonical = fragment.canonical(fmt)
    assert canonical.canonical(fmt) == canonical
    assert Fragment.parse(str(canonical), format=fmt) == canonical
    assert Fragment.of(fragment.scheme, *fragment.positions, format=fmt) == fragment
    try:
        fragment.effective_scheme(fmt)
    except PDIError:
        pass


TARGET = Target(
    "fragment",
    run,
    warmup=b"text\x00char=37,51",
    tokens=(
        b"\x00", b"text", b"html", b"gif", b"utf-8", b"audio+mpeg", b"*", b"char=", b"line=", b"byte=",
        b"rect=", b"crop=", b"elt=", b"name=", b"sec=", b"msec=", b"(", b")", b",", b"%", b"%2C", b"%28",
        b"(0,0),(1,1)", b",2", b"1.5", b".", b"-",
    ),
)
