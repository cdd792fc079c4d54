"""A part's Content-Type, charset and body as the standard library's ``email`` package reads them (RFC 2045 §5.1,
RFC 2231, RFC 5322 §2.2.3 folding), for header fields hypothesis writes: any case, any parameters, quoted strings
with escapes and white space, RFC 2231 values, folded lines, repeated fields.

The oracle is ``email.message_from_string`` with ``compat32`` over the whole file: its leaves' ``get_content_type``,
``get_param("charset")`` (collapsed as RFC 2231 says) and ``get_payload(decode=True)``. A ``multipart`` part
without a boundary is left out: ``email`` reads it as a leaf (with a defect), pdi refuses it (RFC 2046 §5.1.1: the
boundary parameter is required), which ``tests/test_mhtml_read_cli.py`` tests.
"""

from __future__ import annotations

import base64
import email
import email.utils
from email.policy import compat32

from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.mhtml import parse

_TOKEN = st.text(alphabet="!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                 min_size=1, max_size=10)
#: quoted strings (RFC 2045 §5.1), with escaped quotes; never an escaped backslash, which Python's ``_parseparam``
#: misreads (``"\\"`` counts as an escaped quote: the rest of the field is taken into the value, folds and all)
_QUOTED = st.lists(st.sampled_from([*' abcXYZ019-_;,=/()<>@:?.é\t', '\\"']), max_size=12).map(
    lambda t: '"' + "".join(t) + '"')
_MEDIA = st.sampled_from(["text/html", "Text/CSS", "image/PNG", "application/x-foo", "text", "", "text/ plain",
                          "TEXT/HTML "])


@st.composite
def _content_type(draw: st.DrawFn) -> str:
    params = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.one_of(st.just("charset"), st.just("CharSet"), _TOKEN.filter(lambda n: n.lower() != "boundary")))
        if draw(st.booleans()):
            params.append(f"{name}*=utf-8''{draw(st.sampled_from(['%C3%A9t%C3%A9', 'utf-8', 'x%20y', '%E9']))}")
        else:
            params.append(f"{name}={draw(st.one_of(_TOKEN, _QUOTED))}")
    separators = draw(st.lists(st.sampled_from(["; ", ";", " ;\r\n ", ";\r\n\t", "; \r\n  "]),
                               min_size=len(params), max_size=len(params)))
    return draw(_MEDIA) + "".join(sep + param for sep, param in zip(separators, params, strict=True))


@st.composite
def _files(draw: st.DrawFn) -> bytes:
    out = [b'Content-Type: multipart/related; boundary="=_b"\r\n\r\n']
    for _ in range(draw(st.integers(1, 4))):
        fields = [f"Content-Type: {ct}" for ct in draw(st.lists(_content_type(), min_size=0, max_size=2))]
        name = draw(st.sampled_from(["Content-Type", "content-type", "CONTENT-TYPE"]))
        fields = [field.replace("Content-Type", name, 1) for field in fields]
        body = draw(st.binary(max_size=60))
        fields.append("Content-Transfer-Encoding: base64")
        out.append(b"--=_b\r\n" + "\r\n".join(fields).encode("utf-8") + b"\r\n\r\n" + base64.encodebytes(body)
                   .replace(b"\n", b"\r\n"))
    out.append(b"--=_b--\r\n")
    return b"".join(out)


@settings(max_examples=300, deadline=None)
@given(_files())
def test_part_fields_are_the_email_packages(data: bytes) -> None:
    # read as text (the file is UTF-8, its bodies base64): from bytes, compat32 gives a field's 8-bit octets back as
    # U+FFFD, where RFC 6532 (and pdi) read them as UTF-8
    leaves = [m for m in email.message_from_string(data.decode("utf-8"), policy=compat32).walk()
              if not m.is_multipart()]
    parts = parse(data).parts
    assert len(parts) == len(leaves)
    for part, leaf in zip(parts, leaves, strict=True):
        assert part.content_type == leaf.get_content_type()
        charset = leaf.get_param("charset")
        assert part.charset == (None if charset is None else email.utils.collapse_rfc2231_value(charset))
        assert part.data == leaf.get_payload(decode=True)
