"""RFC 2557 MHTML: ``pdi.mhtml.parse`` and everything read from an aggregate (references, check, unpack, write).

The input is the file. What must hold: reading it as a stream in small
chunks gives the same parts as reading it whole; every reference's offsets
lie inside its part's text; the references resolve and the file checks
without an error outside pdi.errors; a plan unpacks into a new folder as
exactly its files, all inside it; and, where the parts can be written again
(``pdi.mhtml.write.build``), the written file reads back as the same parts:
types, labels, Content-IDs and bytes.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

from fuzz_harness import Target
from hypothesis import strategies as st

from pdi.capture import unpack_to
from pdi.errors import PDIError
from pdi.mhtml import Aggregate, Limits, check, parse
from pdi.mhtml.compare import content_digest
from pdi.mhtml.unpack import plan
from pdi.mhtml.write import Resource, build, header_uri


def _shape(agg: Aggregate) -> list[tuple[object, ...]]:
    return [
        (p.content_type, p.charset, p.content_location, p.location, p.content_id, p.data, p.headers)
        for p in agg.parts
    ]


def run(data: bytes) -> None:
    agg = parse(data)
    streamed = parse(io.BytesIO(data), limits=Limits(chunk_size=61))
    assert _shape(streamed) == _shape(agg)
    assert streamed.root.index == agg.root.index
    for name in ("Subject", "Content-Location", "Date"):
        agg.header(name, decode=True)
    for part in agg.parts:
        text = part.text()
        part.base  # noqa: B018 - reading it resolves the <base> against the outer base
        for name, _ in part.headers:
            part.header(name, decode=True)
        for ref in part.references:
            assert 0 <= ref.start <= ref.end <= len(text)
    agg.references  # noqa: B018 - resolves every reference
    check(agg)
    content_digest(agg)
    try:
        files = plan(agg)
    except PDIError:
        files = None
    if files is not None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            written = unpack_to(files, out)
            assert sorted(os.listdir(out)) == sorted(f.name for f in files.files)
            assert all(p.parent == out for p in written)
            assert os.listdir(tmp) == ["out"]
    resources = [
        Resource(p.content_location, p.content_type, p.data, charset=p.charset, content_id=p.content_id)
        for p in agg.parts
    ]
    order = [agg.root.index, *(i for i in range(len(resources)) if i != agg.root.index)]
    try:
        written_file = build(resources[order[0]], [resources[i] for i in order[1:]])
    except PDIError:
        return
    again = parse(written_file)
    assert [
        (p.content_type, p.charset, p.content_location, p.content_id, p.data) for p in again.parts
    ] == [
        # the writer labels a part with its URI percent-encoded, as Chromium reads labels
        (r.media_type, r.charset, None if r.content_location is None else header_uri(r.content_location), r.content_id, r.data)
        for r in (resources[i] for i in order)
    ]


_BODIES = st.one_of(
    st.binary(max_size=200),
    st.lists(
        st.sampled_from([
            b'<img src="', b'">', b"<base href=", b"url(", b")", b"@import '", b"cid:", b"../", b"a.png", b"#x",
            b"<iframe src=", b" ", b"&amp;", b"\xc3\xa9", b"=\r\n", b"=3D", b"\r\n", b"--b", b"<![", b"<meta charset=",
        ]),
        max_size=30,
    ).map(b"".join),
)
_HEADERS = st.lists(
    st.sampled_from([
        b"Content-Type: text/html", b"Content-Type: text/css; charset=utf-16", b"Content-Type: image/png",
        b'Content-Type: multipart/alternative; boundary="c"', b"Content-Type: message/rfc822",
        b"Content-Transfer-Encoding: base64", b"Content-Transfer-Encoding: quoted-printable",
        b"Content-Transfer-Encoding: x-uuencode", b"Content-Location: http://a/b/c.png",
        b"Content-Location: =?utf-8?q?http://a/=C3=A9?=", b"Content-Location: ../x", b"Content-ID: <c@x>",
        b"Content-Base: http://b/", b"Content-Location: cid:c@x", b"Content-Disposition: attachment",
        b"Content-Type: text/html;\r\n charset=iso-8859-1", b"X-Folded: a\r\n\tb",
    ]),
    max_size=5,
)


@st.composite
def _messages(draw: st.DrawFn) -> bytes:
    """A multipart/related file of drawn parts, boundaries nested, line ends CRLF or LF."""
    nl = draw(st.sampled_from([b"\r\n", b"\n"]))
    out = [b'MIME-Version: 1.0', b'Content-Type: multipart/related; boundary="b"; type="text/html"', b""]
    for _ in range(draw(st.integers(1, 5))):
        out.append(b"--b")
        out.extend(draw(_HEADERS))
        out.append(b"")
        out.append(draw(_BODIES))
    if draw(st.booleans()):
        out.append(b"--b--")
    return nl.join(out) + nl


TARGET = Target(
    "mhtml",
    run,
    warmup=(
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        b"--b\r\nContent-Type: text/html\r\nContent-Location: http://a/\r\n\r\n"
        b'<img src="i.png"><style>p{background:url(i.png)}</style>\r\n'
        b"--b\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
        b"Content-Location: http://a/i.png\r\n\r\niVBORw0KGgo=\r\n--b--\r\n"
    ),
    tokens=(
        b"\r\n", b"\n", b"\r\n\r\n", b"--", b"--b", b"--b--", b"boundary=", b'boundary="', b"type=", b"start=",
        b"Content-Type: ", b"multipart/related", b"multipart/alternative", b"multipart/mixed", b"text/html",
        b"text/css", b"image/png", b"message/rfc822", b"Content-Location: ", b"Content-ID: <", b"@x>",
        b"Content-Base: ", b"Content-Transfer-Encoding: ", b"base64", b"quoted-printable", b"7bit", b"binary",
        b"x-uuencode", b"; charset=", b"utf-16", b"=?utf-8?q?", b"=?utf-8?b?", b"?=", b"=?idna?q?", b"=",
        b"=\r\n", b"=3D", b"cid:", b"thismessage:/", b"http://a/", b"../", b"file:///", b"<base href=",
        b"<img src=", b"<iframe src=", b"<link rel=stylesheet href=", b"url(", b"@import ", b"srcset=",
        b"<meta http-equiv=refresh content=\"0; url=", b"<![", b"<!--", b"\t", b" ",
    ),
    generate=_messages(),
    examples=0.6,
)
