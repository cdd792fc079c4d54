"""The MHTML writer (pdi.mhtml.write.build), read back by an independent reader.

The reader here is the standard library's ``email`` package (and ``quopri`` for
quoted-printable), not our own parser, so a bug shared by writer and reader
cannot hide. Expected values come from RFC 2045/2047/2557, worked by hand.
"""

from __future__ import annotations

import binascii
import email
import email.policy
import quopri
import re
import urllib.parse
from email.message import EmailMessage

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.errors import ParseError, PDIError
from pdi.mhtml import parse
from pdi.mhtml.write import Resource, build, encode_header_uri, encode_quoted_printable

GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


def read(data: bytes) -> EmailMessage:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def parts(data: bytes) -> list[EmailMessage]:
    return list(read(data).iter_parts())  # type: ignore[arg-type]


def test_rfc2557_9_3_relative_uris_to_embedded_gifs() -> None:
    html = b'<IMG SRC="images/ietflogo1.gif" ALT="IETF logo1">\r\n<IMG SRC="images/ietflogo2.gif">\r\n'
    out = build(
        Resource(None, "text/html", html, charset="ISO-8859-1"),
        [
            Resource("http://www.ietf.cnri.reston.va.us/images/ietflogo1.gif", "image/gif", GIF),
            Resource("images/ietflogo2.gif", "image/gif", GIF + b"2"),
        ],
        location="http://www.ietf.cnri.reston.va.us/",
    )
    msg = read(out)
    assert msg.get_content_type() == "multipart/related"
    assert msg.get_param("type") == "text/html"
    assert msg["Content-Location"] == "http://www.ietf.cnri.reston.va.us/"
    p = parts(out)
    assert [x.get_content_type() for x in p] == ["text/html", "image/gif", "image/gif"]
    assert p[0].get_param("charset") == "ISO-8859-1"
    assert p[0]["Content-Transfer-Encoding"] == "quoted-printable"
    assert p[1]["Content-Transfer-Encoding"] == "base64"
    assert p[0].get_payload(decode=True) == html
    assert p[1]["Content-Location"] == "http://www.ietf.cnri.reston.va.us/images/ietflogo1.gif"
    assert p[2]["Content-Location"] == "images/ietflogo2.gif"
    assert p[2].get_payload(decode=True) == GIF + b"2"


def test_rfc2557_9_4_relative_uri_and_no_base() -> None:
    html = b'<IMG SRC="ietflogo.gif" ALT="IETF logo">\r\nExample of a copyright sign encoded with Quoted-Printable: \xa9\r\n'
    out = build(Resource(None, "text/html", html, charset="iso-8859-1"), [Resource("ietflogo.gif", "image/gif", GIF)])
    # The copyright sign is written =A9 as in the RFC's own example.
    assert b"Quoted-Printable: =A9" in out
    p = parts(out)
    assert p[0].get_payload(decode=True) == html
    assert p[1]["Content-Location"] == "ietflogo.gif"
    assert "Content-Location" not in read(out)


def test_rfc2557_9_5_cid_url_and_content_id() -> None:
    html = b'<IMG SRC="cid:foo4@foo1@bar.net" ALT="IETF logo">'
    out = build(Resource(None, "text/html", html, charset="US-ASCII"), [Resource(None, "image/gif", GIF, content_id="foo4@foo1@bar.net")])
    p = parts(out)
    assert p[1]["Content-ID"] == "<foo4@foo1@bar.net>"
    assert p[1].get_payload(decode=True) == GIF


def test_rfc2557_7_root_first_and_type_parameter() -> None:
    out = build(Resource("a.css", "text/css", b"p{}"), [Resource("b.png", "image/png", b"\x89PNG")])
    msg = read(out)
    assert msg.get_param("type") == "text/css"
    assert msg.get_param("start") is None  # the root is the first part
    assert parts(out)[0]["Content-Location"] == "a.css"


def test_rfc2557_7_duplicate_locations_refused() -> None:
    with pytest.raises(ParseError, match="same URI"):
        build(Resource("http://x/a", "text/html", b""), [Resource("a", "image/png", b"")], location="http://x/")
    with pytest.raises(ParseError, match="same URI"):
        build(Resource("./a", "text/html", b""), [Resource("a", "image/png", b"")])
    # Different after resolution: allowed (§7, last paragraph).
    build(Resource("a", "text/html", b""), [Resource("b/../c", "image/png", b"")])


def test_rfc2557_7_duplicate_content_ids_refused() -> None:
    with pytest.raises(ParseError, match="Content-ID"):
        build(Resource(None, "text/html", b"", content_id="x@y"), [Resource(None, "image/png", b"", content_id="x@y")])


def test_deterministic_same_input_same_bytes() -> None:
    def make() -> bytes:
        return build(Resource("index.html", "text/html", b"<p>\xe9</p>\n"), [Resource("a.gif", "image/gif", GIF)])

    assert make() == make()
    other = build(Resource("index.html", "text/html", b"<p>\xe8</p>\n"), [Resource("a.gif", "image/gif", GIF)])
    assert make() != other
    assert b"Date:" not in make()


def test_all_line_ends_are_crlf_and_lines_short() -> None:
    out = build(Resource("index.html", "text/html", b"x" * 500 + b"\n" + b"y\r" * 40), [Resource("a.bin", "application/octet-stream", bytes(range(256)) * 20)])
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert b"\r" not in out.replace(b"\r\n", b"")
    assert max(len(line) for line in out.split(b"\r\n")) <= 78


def test_quoted_printable_keeps_lf_only_and_mixed_line_ends() -> None:
    data = b"a\nb\r\nc\rd \t\nFrom here\n.\n"
    encoded = encode_quoted_printable(data)
    assert quopri.decodestring(encoded) == data
    # Worked by hand: LF and CR are encoded, a soft break follows each LF, white
    # space ending a source line is encoded, and so is a lone "." at a line start.
    assert encoded == b"a=0A=\r\nb=0D=0A=\r\nc=0Dd =09=0A=\r\nFrom here=0A=\r\n=2E=0A"


def test_quoted_printable_line_length_around_an_encoded_lf() -> None:
    # 74 characters, then "=0A" would make 77: a soft break comes first.
    assert encode_quoted_printable(b"x" * 74 + b"\ny") == b"x" * 74 + b"=\r\n=0A=\r\ny"
    # 72 characters and "=0A" make 75, and the soft break's "=" 76: no extra break.
    assert encode_quoted_printable(b"x" * 72 + b"\ny") == b"x" * 72 + b"=0A=\r\ny"


def test_quoted_printable_trailing_white_space_encoded() -> None:
    assert encode_quoted_printable(b"ab ") == b"ab=20"
    assert encode_quoted_printable(b"ab\t") == b"ab=09"
    assert encode_quoted_printable(b"=") == b"=3D"
    assert encode_quoted_printable(b"") == b""


def test_rfc2557_4_4_2_long_content_location_folded_as_urlbody_and_read_back() -> None:
    uri = "http://example.com/" + "seg/" * 40 + "page.html?q=1&lang=fr#top"
    line = encode_header_uri("Content-Location", uri)
    assert all(len(x) <= 76 for x in line.split("\r\n"))
    # [URLBODY] §3.1: unfolding removes the line break and the white space after it
    assert line.replace("\r\n ", "") == "Content-Location: " + uri
    out = build(Resource(uri, "text/html", b"<p>"))
    assert parse(out).root.content_location == uri


def test_content_location_with_space_and_non_ascii_percent_encoded() -> None:
    uri = "images/caf\u00e9 cr\u00e8me.png"
    line = encode_header_uri("Content-Location", uri)
    # RFC 3987 §3.1 by hand: é is C3 A9 and è C3 A8 in UTF-8, the space %20; no
    # encoded-word, which Chromium does not read in a Content-Location.
    assert line == "Content-Location: images/caf%C3%A9%20cr%C3%A8me.png"
    out = build(Resource("index.html", "text/html", b""), [Resource(uri, "image/png", b"x")])
    assert parts(out)[1]["Content-Location"] == "images/caf%C3%A9%20cr%C3%A8me.png"


def test_content_location_holding_an_encoded_word_start_is_an_encoded_word() -> None:
    uri = "http://a/b?x=?utf-8?q?y?="
    line = encode_header_uri("Content-Location", uri)
    assert line.startswith("Content-Location: =?us-ascii?Q?")
    assert parse(build(Resource(uri, "text/html", b""))).root.content_location == uri


def test_short_ascii_content_location_written_as_is() -> None:
    assert encode_header_uri("Content-Location", "http://a/b.png") == "Content-Location: http://a/b.png"


@pytest.mark.parametrize("bad", ["a\r\nX-Evil: 1", "a\nb", "a\rb", "a\x00b", "tab\there", "lone\udcffsurrogate"])
def test_no_cr_or_lf_ever_inside_a_header_value(bad: str) -> None:
    with pytest.raises(ParseError):
        build(Resource(bad, "text/html", b""))
    with pytest.raises(ParseError):
        build(Resource("ok", "text/html", b""), location=bad)


@pytest.mark.parametrize(
    "resource",
    [
        Resource("a", "text html", b""),
        Resource("a", "text/html\r\nX: y", b""),
        Resource("a", "text/html", b"", charset="utf-8\r\nX: y"),
        Resource("a", "text/html", b"", content_id="a>b"),
        Resource("a", "text/html", b"", content_id="a b"),
    ],
)
def test_malformed_header_material_refused(resource: Resource) -> None:
    with pytest.raises(ParseError):
        build(resource)


@pytest.mark.parametrize("media_type", ["multipart/related", "Multipart/Mixed", "multipart/alternative"])
def test_a_multipart_type_is_no_body_part_type(media_type: str) -> None:
    # RFC 2046 §5.1.1: a multipart's body is its parts between boundaries; one written as a body, without
    # a boundary parameter, is a file no reader can split (pdi's own parse refuses it)
    with pytest.raises(ParseError, match=r"multipart is its parts between boundaries \(rule RFC 2046 §5\.1\.1"):
        build(Resource("http://a/", "text/html", b""), [Resource("http://a/b", media_type, b"--b--")])
    with pytest.raises(ParseError, match="RFC 2046"):
        build(Resource("http://a/", media_type, b""))


def test_boundary_does_not_occur_in_any_part() -> None:
    # A part that contains what looks like a boundary line in its raw bytes.
    tricky = b"--=_pdi_0000\r\n--" + b"=_pdi_" * 50
    out = build(Resource("index.html", "text/html", tricky), [Resource("x", "text/plain", b"--")])
    boundary = read(out).get_boundary()
    assert boundary is not None
    body_parts = out.split(b"--" + boundary.encode())
    assert len(body_parts) == 4  # preamble, two parts, epilogue after the closing delimiter
    assert parts(out)[0].get_payload(decode=True) == tricky


_PRINTABLE = "".join(chr(c) for c in range(0x21, 0x7F))
_media = st.sampled_from(["text/html", "text/css", "text/plain", "image/png", "application/octet-stream", "image/svg+xml", "font/woff2"])
_label = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=120)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_label, _media, st.binary(max_size=600)), min_size=1, max_size=6, unique_by=lambda t: t[0]))
def test_property_random_parts_read_back_byte_for_byte(items: list[tuple[str, str, bytes]]) -> None:
    resources = [Resource("L/" + str(i) + "/" + label, media, data) for i, (label, media, data) in enumerate(items)]
    out = build(resources[0], resources[1:])
    assert out.isascii()
    assert max(len(line) for line in out.split(b"\r\n")) <= 78
    got = parts(out)
    assert len(got) == len(resources)
    for res, part in zip(resources, got, strict=True):
        assert part.get_content_type() == res.media_type
        assert part.get_payload(decode=True) == res.data
        # unfolded as [URLBODY] §3.1 says (white space removed): the label with what a URI
        # may not hold percent-encoded as UTF-8 (RFC 3987 §3.1), the rest as written
        assert res.content_location is not None
        assert "".join(str(part["Content-Location"]).split()) == urllib.parse.quote(res.content_location, safe=_PRINTABLE)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_property_quoted_printable_round_trip(data: bytes) -> None:
    encoded = encode_quoted_printable(data)
    assert quopri.decodestring(encoded) == data
    for line in encoded.split(b"\r\n"):
        assert len(line) <= 76
        assert re.fullmatch(rb"[\t -~]*", line)
        assert not line.endswith((b" ", b"\t"))


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=80), st.text(max_size=30))
def test_property_build_raises_only_pdi_errors(label: str, media: str) -> None:
    try:
        build(Resource(label, media or "x", label.encode("utf-8", "surrogatepass")))
    except PDIError:
        pass


def test_rfc2557_7_locations_equal_as_the_reader_compares_them_refused() -> None:
    # §8.2 compares resolved URIs octet by octet, after the reader %-encodes what a URI
    # may not hold (a space is %20): "a b.png" and "a%20b.png" name one resource.
    root = Resource("http://e.org/i.html", "text/html", b"<p>")
    with pytest.raises(ParseError, match="same URI"):
        build(root, [Resource("http://e.org/a b.png", "image/png", b"1"), Resource("http://e.org/a%20b.png", "image/png", b"2")])


@given(st.lists(st.sampled_from([b"a", b" ", b"\n", b".", b"=", b"\t", b"\r", b"x" * 70, b"x" * 71, b"\xc3\xa9", b"~"]),
                max_size=30).map(b"".join))
def test_quoted_printable_round_trips_in_short_lines_whichever_way_it_is_encoded(data: bytes) -> None:
    # a text of short plain lines is encoded whole, any other line by line: both give back the very bytes
    encoded = encode_quoted_printable(data)
    assert quopri.decodestring(encoded) == data
    assert binascii.a2b_qp(encoded) == data
    assert max(len(line) for line in encoded.split(b"\r\n")) <= 76
    assert b"\n" not in encoded.replace(b"\r\n", b"")
    lines = data.split(b"\n")
    if all(len(line) <= 72 and not line.endswith(b" ") and line != b"." and b"=" not in line
           and all(0x20 <= c <= 0x7E for c in line) for line in lines):
        # the text keeps its shape: one encoded line a line, its LF written "=0A" before a soft break
        shape = [line.removesuffix(b"=").removesuffix(b"=0A") for line in encoded.split(b"\r\n")]
        assert shape == (lines[:-1] if data.endswith(b"\n") else lines)


# RFC 2045 §5.1: type "/" subtype, each a token (no space, control or tspecial); RFC 2392: a Content-ID's addr-spec.
_TSPECIALS = '()<>@,;:\\"/[]?='
_FIELD_TEXT = st.lists(st.sampled_from(["text", "html", "/", "x-a", "+xml", "\n", "\r\n", " ", "\t", "@", "utf-8",
                                        "é", "<", ">", ";", "a.b"]), min_size=1, max_size=5).map("".join)


def _token(text: str) -> bool:
    return text != "" and all("!" <= c <= "~" and c not in _TSPECIALS for c in text)


@given(_FIELD_TEXT, st.none() | _FIELD_TEXT, st.none() | _FIELD_TEXT)
@example("text/html\n", None, None)
@example("text/html", "utf-8\n", None)
@example("text/html", None, "a@b\n")
@settings(deadline=None)
def test_a_part_is_written_exactly_when_its_fields_are_well_formed(media: str, charset: str | None,
                                                                   content_id: str | None) -> None:
    """Each of a part's fields is checked whole: one ending in a line feed is refused, not written as a line that
    ends the part's header block early (its Content-Transfer-Encoding then read as body)."""
    major, slash, minor = media.partition("/")
    well_formed = (bool(slash) and _token(major) and _token(minor) and major.lower() != "multipart"
                   and (charset is None or _token(charset))
                   and (content_id is None or (content_id.isascii() and all("!" <= c <= "~" and c not in "<>"
                                                                             for c in content_id))))
    try:
        out = build(Resource("http://a.example/", media, b"x", charset=charset, content_id=content_id))
    except ParseError:
        assert not well_formed
        return
    assert well_formed
    (part,) = parts(out)
    assert part.get_content_type() == media.lower() and part.get_param("charset") == charset
    assert part["Content-Transfer-Encoding"] is not None and part.get_payload(decode=True) == b"x"
