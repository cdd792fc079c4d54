"""The compiled MHTML encoder (``pdi.mhtml._encode``) writes the very octets of the pure-Python one.

An import packs every page of a WARC as MHTML, and importing the same WARC again must find its pages
unchanged: the base64 of a part is compared with the standard library's ``base64.encodebytes`` (RFC 2045's
lines of 76 characters, their LFs made CRLF and the last line end left out), a text part's quoted-printable with
the fallback's (each line by ``binascii.b2a_qp``) and read back by ``binascii.a2b_qp`` to the very octets, each
with the pure-Python fallback that a build without a C compiler uses, and whole files ``build`` writes with one
and with the other.
"""

from __future__ import annotations

import base64
import binascii
import email
import email.policy
import os
import threading
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.mhtml import write
from pdi.mhtml._encode import base64_lines, quoted_printable
from pdi.mhtml.write import Resource, build


def rfc2045_lines(data: bytes) -> bytes:
    """The standard library's MIME base64 (lines of 76 characters ending in LF), its line ends made CRLF and
    the last one left out, as ``build`` joins a part's lines."""
    return base64.encodebytes(data).replace(b"\n", b"\r\n").removesuffix(b"\r\n")


#: Lengths around whole lines (57 octets each) and around the GIL's threshold (16 KiB), where the
#: encoder's branches change.
edges = st.sampled_from([0, 1, 2, 3, 55, 56, 57, 58, 59, 113, 114, 115, 171, 16383, 16384, 16385, 16416,
                         57 * 288, 57 * 288 + 1, 57 * 288 - 1])


@st.composite
def octets(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=700))
    n = draw(edges)
    fill = draw(st.sampled_from([b"\x00", b"\xff", b"\xfb\xff", b"\x89PNG"]))
    head = draw(st.binary(max_size=min(n, 64)))
    return (head + fill * n)[:n]


def test_the_compiled_encoder_is_the_one_build_uses() -> None:
    assert write.COMPILED and write._encode_base64 is base64_lines
    assert write.encode_quoted_printable is quoted_printable


@settings(max_examples=400, deadline=None)
@given(octets())
def test_base64_lines_is_rfc2045s_base64_in_crlf_lines_as_the_fallback_writes_it(data: bytes) -> None:
    expected = rfc2045_lines(data)
    assert base64_lines(data) == expected == write._encode_base64_py(data)
    lines = expected.split(b"\r\n") if data else []
    assert all(len(line) == 76 for line in lines[:-1]) and all(0 < len(line) <= 76 for line in lines)
    assert base64.b64decode(b"".join(lines)) == data


@settings(max_examples=50, deadline=None)
@given(octets())
def test_any_contiguous_buffer_is_encoded_as_its_bytes(data: bytes) -> None:
    expected = rfc2045_lines(data)
    assert base64_lines(bytearray(data)) == expected
    assert base64_lines(memoryview(data)) == expected
    assert base64_lines(memoryview(b"<" + data + b">")[1:-1]) == expected


def test_what_is_not_a_contiguous_buffer_is_refused() -> None:
    with pytest.raises(TypeError):
        base64_lines("text")  # type: ignore[arg-type]
    with pytest.raises((BufferError, TypeError, ValueError)):
        base64_lines(memoryview(b"abcdef")[::2])


def test_large_bodies_encoded_on_threads_at_once_are_each_their_own() -> None:
    bodies = [os.urandom(1_000_000 + k) for k in range(4)]
    got: dict[int, bytes] = {}

    def encode(k: int) -> None:
        for _ in range(3):
            got[k] = base64_lines(bodies[k])

    threads = [threading.Thread(target=encode, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(4)] == [rfc2045_lines(b) for b in bodies]


#: What quoted-printable treats apart: "=", white space (a line's last octet or not), "." (alone, or before a CR or
#: NUL, at a line's start), CR, LF, NUL, octets past ASCII, and runs that fill a line of 76 characters.
qp_pieces = st.sampled_from([b"a", b"=", b" ", b"\t", b".", b"\r", b"\n", b"\x00", b"\x7f", b"\xe9", b"~", b"\r\n",
                             b"\n.", b".\r", b"x" * 70, b"x" * 72, b"x" * 73, b"x" * 75, b"=" * 24, b"<a href=x>"])


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=400))
    return b"".join(draw(st.lists(qp_pieces, max_size=40)))


@settings(max_examples=1000, deadline=None)
@given(texts())
def test_quoted_printable_is_the_fallbacks_and_reads_back_whole(data: bytes) -> None:
    encoded = quoted_printable(data)
    assert encoded == write._encode_quoted_printable_py(data)
    assert binascii.a2b_qp(encoded) == data
    lines = encoded.split(b"\r\n")
    # RFC 2045 §6.7: lines of at most 76 characters, every line break a soft one (the data's LFs are "=0A"),
    # nothing but printable ASCII, no white space ending a line
    assert all(len(line) <= 76 for line in lines), lines
    assert all(line.endswith(b"=") for line in lines[:-1])
    assert all(0x21 <= c <= 0x7E or c in b" \t" for line in lines for c in line)
    assert not any(line.endswith((b" ", b"\t")) for line in lines)


def test_quoted_printable_of_lines_at_their_edges() -> None:
    # worked out by hand from RFC 2045 §6.7 and binascii.b2a_qp's line of 76: an LF is "=0A", after a soft break
    # when "=0A" and its own soft break's "=" would not fit
    assert quoted_printable(b"x" * 72 + b"\ny") == b"x" * 72 + b"=0A=\r\ny"
    assert quoted_printable(b"x" * 73 + b"\n") == b"x" * 73 + b"=\r\n=0A"
    assert quoted_printable(b"x" * 76 + b"\n") == b"x" * 75 + b"=\r\nx=0A"
    assert quoted_printable(b"x" * 74 + b"=\n") == b"x" * 74 + b"=\r\n=3D=0A"  # "=3D" would make 77
    assert quoted_printable(b".") == b"=2E" and quoted_printable(b".\r\n") == b"=2E=0D=0A"
    assert quoted_printable(b"a.\n.b") == b"a.=0A=\r\n.b"
    assert quoted_printable(b"") == b""


@settings(max_examples=50, deadline=None)
@given(texts())
def test_quoted_printable_of_any_contiguous_buffer_is_of_its_bytes(data: bytes) -> None:
    expected = write._encode_quoted_printable_py(data)
    assert quoted_printable(bytearray(data)) == expected
    assert quoted_printable(memoryview(b"<" + data + b">")[1:-1]) == expected
    with pytest.raises(TypeError):
        quoted_printable("text")  # type: ignore[arg-type]


def test_large_texts_encoded_on_threads_at_once_are_each_their_own() -> None:
    # past 16 KiB the encoder runs without the interpreter's lock
    texts = [(b"<p class=a>caf\xc3\xa9 = tea. </p>\n" * 30_000)[: 1_000_000 + k] for k in range(4)]
    got: dict[int, bytes] = {}

    def encode(k: int) -> None:
        for _ in range(3):
            got[k] = quoted_printable(texts[k])

    threads = [threading.Thread(target=encode, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(4)] == [write._encode_quoted_printable_py(t) for t in texts]
    assert [binascii.a2b_qp(got[k]) for k in range(4)] == texts


resources = st.lists(
    st.tuples(st.sampled_from(["image/png", "font/woff2", "application/octet-stream", "text/css"]),
              st.binary(max_size=3000)),
    max_size=4,
)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400), resources)
def test_build_writes_the_same_file_with_either_encoder(
        page: bytes, parts: list[tuple[str, bytes]]) -> None:
    root = Resource("http://example.org/p/", "text/html", b"<html>" + page, charset="utf-8")
    others = [Resource(f"http://example.org/p/r{k}", media, data) for k, (media, data) in enumerate(parts)]
    compiled = build(root, others)
    before = write._encode_base64, write.encode_quoted_printable
    try:
        write._encode_base64, write.encode_quoted_printable = write._encode_base64_py, write._encode_quoted_printable_py
        fallback = build(root, others)
    finally:
        write._encode_base64, write.encode_quoted_printable = before
    assert compiled == fallback
    read = email.message_from_bytes(compiled, policy=email.policy.default)
    assert isinstance(read, EmailMessage)
    got = [p.get_payload(decode=True) for p in read.iter_parts()]
    assert got == [root.data] + [data for _, data in parts]
