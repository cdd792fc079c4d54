"""Reading what browsers and mailers really write, one quirk at a time (issue 6)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli
from pdi.errors import LimitError, ParseError
from pdi.mhtml import Aggregate, Limits, Part, check, parse
from pdi.mhtml.unpack import plan

CHROME_BOUNDARY = "----MultipartBoundary--aBcD1234eFgH5678iJkL----"


def mhtml(*parts: str, boundary: str = "b1", head: str | None = None, nl: str = "\r\n", close: bool = True) -> bytes:
    """A multipart/related message; each part is 'headers\\n\\nbody' with \\n as the line end."""
    top = head if head is not None else f'Content-Type: multipart/related; type="text/html"; boundary="{boundary}"'
    lines = [*top.split("\n"), ""]
    for p in parts:
        lines.append(f"--{boundary}")
        lines.extend(p.split("\n"))
    if close:
        lines.append(f"--{boundary}--")
    return (nl.join(lines) + nl).encode("utf-8")


PLAIN_HEAD = 'Content-Type: multipart/related; boundary="b1"'
PAGE = 'Content-Type: text/html\nContent-Location: http://a.example/\n\n<img src="i.png">'
IMAGE_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x01\x02").decode()
IMAGE = f"Content-Type: image/png\nContent-Transfer-Encoding: base64\nContent-Location: http://a.example/i.png\n\n{IMAGE_B64}"


@pytest.mark.parametrize("nl", ["\r\n", "\n"])
def test_line_ends_crlf_and_lf_only_give_the_same_parts(nl: str) -> None:
    agg = parse(mhtml(PAGE, IMAGE, nl=nl))
    page, image = agg.parts
    assert page.data == b'<img src="i.png">'
    assert image.data == b"\x89PNG\r\n\x1a\n\x00\x01\x02"
    assert agg.references[0].target is image
    assert agg.warnings == ()


def test_mixed_line_ends_in_one_file() -> None:
    data = (
        b'Content-Type: multipart/related; boundary="b1"\r\n\n'
        b"--b1\nContent-Type: text/plain\r\n\r\nline one\nline two\r\n--b1\r\n"
        b"Content-Type: text/plain\n\nthree\r\n--b1--\n"
    )
    agg = parse(data)
    assert [p.data for p in agg.parts] == [b"line one\nline two", b"three"]


def test_chromium_boundary_containing_dashes() -> None:
    agg = parse(mhtml(PAGE, IMAGE, boundary=CHROME_BOUNDARY))
    assert agg.boundary == CHROME_BOUNDARY
    assert len(agg.parts) == 2 and agg.warnings == ()


def test_unquoted_boundary_with_equals_and_not_last_parameter() -> None:
    head = "Content-Type: multipart/related; boundary=abc=def; type=text/html; start=<p1@x>"
    agg = parse(mhtml("Content-ID: <p1@x>\nContent-Type: text/html\n\nhi", boundary="abc=def", head=head))
    assert agg.boundary == "abc=def"
    assert agg.root.content_id == "p1@x" and agg.root.data == b"hi"


def test_boundary_string_inside_a_line_is_not_a_delimiter() -> None:
    body = "Content-Type: text/plain\n\nsee --b1 here\n--b1x is not one\n --b1 neither"
    agg = parse(mhtml(body))
    assert agg.parts[0].data == b"see --b1 here\r\n--b1x is not one\r\n --b1 neither"


def test_delimiter_with_transport_padding() -> None:
    data = b'Content-Type: multipart/related; boundary="b1"\r\n\r\n--b1  \t\r\nContent-Type: text/plain\r\n\r\nx\r\n--b1-- \r\n'
    agg = parse(data)
    assert agg.parts[0].data == b"x" and agg.warnings == ()


def test_missing_closing_delimiter_is_a_warning() -> None:
    agg = parse(mhtml(PAGE, IMAGE, close=False))
    assert len(agg.parts) == 2
    assert agg.parts[1].data == b"\x89PNG\r\n\x1a\n\x00\x01\x02"
    assert len(agg.warnings) == 1 and "missing closing delimiter" in agg.warnings[0]


def test_preamble_and_epilogue_are_ignored() -> None:
    data = mhtml(PAGE).replace(b"\r\n\r\n--b1", b"\r\n\r\nThis is a MIME message.\r\n--b1", 1) + b"epilogue\r\n"
    agg = parse(data)
    assert [p.data for p in agg.parts] == [b'<img src="i.png">']


def test_header_line_without_colon_continues_the_previous_field() -> None:
    head = 'Subject: two\nwords\nContent-Type: multipart/related; boundary="b1"'
    agg = parse(mhtml(PAGE, head=head))
    assert agg.header("subject") == "two words"
    assert len(agg.parts) == 1
    assert agg.warnings == ("offset 0: header line without a colon read as a continuation: 'words'",)


def test_lower_case_header_names() -> None:
    part = "content-type: text/css\ncontent-location: http://a.example/s.css\ncontent-id: <s@x>\ncontent-transfer-encoding: QUOTED-PRINTABLE\n\nb{}"
    head = 'content-type: MULTIPART/RELATED; BOUNDARY="b1"'
    p = parse(mhtml(part, head=head)).parts[0]
    assert (p.content_type, p.location, p.content_id, p.transfer_encoding) == (
        "text/css",
        "http://a.example/s.css",
        "s@x",
        "quoted-printable",
    )


def test_quoted_printable_soft_breaks_lower_case_hex_and_bad_escapes() -> None:
    body = "caf=c3=a9 a=\nb =ZZ 100=\r\n% end=3D"
    part = f"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n{body}"
    data = mhtml(part).replace(b"=\r\nb", b"=\nb")  # one soft break as LF only
    p = parse(data).parts[0]
    assert p.data == "café ab =ZZ 100% end=".encode()
    assert p.text() == "café ab =ZZ 100% end="


def test_dirty_base64_is_repaired_with_a_warning() -> None:
    raw = bytes(range(256))
    enc = base64.b64encode(raw).decode()
    dirty = enc[:40] + "!*" + enc[40:100] + "\n" + enc[100:].rstrip("=")  # stray chars, no padding
    part = f"Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n{dirty}"
    agg = parse(mhtml(part, head=PLAIN_HEAD))
    assert agg.parts[0].data == raw
    assert len(agg.warnings) == 1 and "base64" in agg.warnings[0]


def test_stray_characters_in_base64_are_dropped() -> None:
    enc = base64.b64encode(b"hello world").decode()
    part = f"Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n{enc[:4]} ...{enc[4:]}"
    assert parse(mhtml(part)).parts[0].data == b"hello world"


@pytest.mark.parametrize("cte", ["7bit", "8bit", "binary", None])
def test_identity_bodies_keep_their_line_breaks(cte: str | None) -> None:
    header = f"Content-Transfer-Encoding: {cte}\n" if cte else ""
    data = (
        b'Content-Type: multipart/related; boundary="b1"\r\n\r\n--b1\r\n'
        + f"Content-Type: text/plain\r\n{header}\r\n".replace("\n", "\r\n").replace("\r\r", "\r").encode()
        + b"one\r\ntwo\nthree\rfour\r\n\r\n\xff\r\n--b1--\r\n"
    )
    p = parse(data).parts[0]
    assert p.data == b"one\r\ntwo\nthree\rfour\r\n\r\n\xff"
    assert p.transfer_encoding == cte


def test_unknown_transfer_encoding_keeps_the_body_with_a_warning() -> None:
    part = "Content-Type: text/plain\nContent-Transfer-Encoding: x-uuencode\n\nbegin 644"
    agg = parse(mhtml(part))
    assert agg.parts[0].data == b"begin 644"
    assert "x-uuencode" in agg.warnings[0]


def test_folded_and_rfc2047_encoded_content_location() -> None:
    part = (
        "Content-Type: image/png\nContent-Location:\n http://a.example/very/long/\n path/caf=?iso-8859-1?q?=E9?=.png"
    )
    p = parse(mhtml(PAGE, part)).parts[1]
    # §4.4: unfold (the folding white space goes: a URI has none), then decode
    assert p.content_location == "http://a.example/very/long/path/café.png"
    assert p.location == p.content_location


def test_content_location_with_comments() -> None:
    part = "Content-Type: image/png\nContent-Location: (the logo) http://a.example/l.png (end)"
    assert parse(mhtml(PAGE, part)).parts[1].content_location == "http://a.example/l.png"


def test_start_part_is_found_by_content_id_not_position() -> None:
    head = 'Content-Type: multipart/related; boundary="b1"; type="text/html"; start="<root@x>"'
    agg = parse(mhtml(IMAGE, "Content-ID: <root@x>\nContent-Type: text/html\n\n<p>", head=head))
    assert agg.root is agg.parts[1]
    assert agg.tree is not None and agg.tree.start_found


def test_missing_start_part_is_a_warning_and_a_check_error() -> None:
    head = 'Content-Type: multipart/related; boundary="b1"; start="<nope@x>"'
    agg = parse(mhtml(PAGE, head=head))
    assert agg.root is agg.parts[0]
    assert "start part <nope@x> not found" in agg.warnings[0]
    assert [f.code for f in check(agg).errors] == ["missing-start"]


def test_multipart_alternative_start_part_roots_at_its_html_alternative() -> None:
    alt = (
        'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\nContent-Type: text/plain\n\nplain'
        '\n--alt\nContent-Type: text/html\nContent-Location: http://a.example/\n\n<img src="i.png">\n--alt--'
    )
    head = 'Content-Type: multipart/related; boundary="b1"; type="multipart/alternative"'
    agg = parse(mhtml(alt, IMAGE, head=head))
    plain, html, image = agg.parts
    assert agg.root is html
    assert plain.data == b"plain"
    (ref,) = agg.references
    assert ref.source is html and ref.target is image
    assert agg.warnings == ()
    assert check(agg).findings == ()  # the plain alternative is not "unreferenced"


def test_rfc2557_7_an_image_before_the_alternative_the_type_parameter_names() -> None:
    # Internet Explorer's framed-page files: an image comes first, then the
    # multipart/alternative that type= names; the root is that alternative's page
    # (RFC 2387 §3.1: type is the root's type; RFC 2557 §7: its text/html alternative).
    alt = (
        'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\nContent-Type: text/plain\n\nplain'
        '\n--alt\nContent-Type: text/html\nContent-Location: http://a.example/\n\n<img src="i.png">\n--alt--'
    )
    head = 'Content-Type: multipart/related; boundary="b1"; type="multipart/alternative"'
    agg = parse(mhtml(IMAGE, alt, head=head))
    image, _plain, html = agg.parts
    assert agg.root is html
    assert [r.target for r in agg.references] == [image]
    assert any("the first body part is image/png" in w for w in agg.warnings)
    assert [f.code for f in check(agg).findings if f.severity == "error"] == []
    names = [f.name for f in plan(agg).files]
    assert names[0] == "index.html"  # unpack writes the page, not index.png


def test_rfc2557_7_type_text_html_finds_the_alternative_holding_the_page() -> None:
    # type="text/html" with the page inside a multipart/alternative after an image: the
    # alternative's root is of that type; a later frame page is not the root
    alt = (
        'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\nContent-Type: text/plain\n\nplain'
        '\n--alt\nContent-Type: text/html\nContent-Location: http://a.example/\n\n<frame src="f.html">\n--alt--'
    )
    frame = "Content-Type: text/html\nContent-Location: http://a.example/f.html\n\n<p>frame"
    head = 'Content-Type: multipart/related; boundary="b1"; type="text/html"'
    agg = parse(mhtml(IMAGE, alt, frame, head=head))
    assert agg.root is agg.parts[2]


def test_rfc2046_5_1_4_the_last_page_alternative_is_the_best() -> None:
    alt = (
        'Content-Type: multipart/alternative; boundary="b1"\n\n--b1\nContent-Type: text/html\n\n<p>simple'
        "\n--b1\nContent-Type: text/html\n\n<p>rich\n--b1\nContent-Type: image/png\n\nnot a page\n--b1--"
    )
    agg = parse(alt.replace("\n", "\r\n").encode())
    assert agg.root.data == b"<p>rich"


IE_FRAMED = Path(__file__).parent / "data" / "ie" / "framed.mht"


def test_rfc2557_5_internet_explorers_frameset_first_stays_the_root() -> None:
    # Internet Explorer's framed page: the frameset first, under type="multipart/alternative",
    # each frame an alternative (text/plain, text/html) of its own after it. RFC 2557 §5 and
    # RFC 2387 §3.1: no start parameter, so the first part is the root; IE and Chromium open
    # the frameset (tests/test_mhtml_ie_frames_chromium.py). A frame is not the root.
    agg = parse(IE_FRAMED.read_bytes())
    assert agg.root.location == "http://frames.example/index.htm"
    assert b"<FRAMESET" in agg.root.data
    assert {r.target.location for r in agg.references if r.source is agg.root} == {
        "http://frames.example/nav.htm", "http://frames.example/main.htm"
    }
    assert [f.code for f in check(agg).findings if f.severity == "error"] == []
    first = plan(agg).files[0]
    assert first.name == "index.html" and first.label == "http://frames.example/index.htm"
    assert b"<FRAMESET" in first.data


def test_a_page_first_under_another_type_stays_the_root() -> None:
    # The type parameter only passes over a first part that is no page (an image).
    alt = (
        'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\nContent-Type: text/plain\n\nplain'
        '\n--alt\nContent-Type: text/html\nContent-Location: http://a.example/f.html\n\n<p>frame\n--alt--'
    )
    head = 'Content-Type: multipart/related; boundary="b1"; type="multipart/alternative"'
    agg = parse(mhtml(PAGE, alt, IMAGE, head=head))
    assert agg.root.location == "http://a.example/"


def test_a_first_part_of_the_type_stays_the_root() -> None:
    head = 'Content-Type: multipart/related; boundary="b1"; type="image/png"'
    agg = parse(mhtml(IMAGE, PAGE, head=head))
    assert agg.root is agg.parts[0] and agg.warnings == ()


def test_nested_multipart_missing_its_closing_delimiter() -> None:
    inner = 'Content-Type: multipart/related; boundary="in"\n\n--in\nContent-Type: text/plain\n\ninner'
    agg = parse(mhtml(inner, "Content-Type: text/plain\n\nouter", head=PLAIN_HEAD))
    assert [p.data for p in agg.parts] == [b"inner", b"outer"]
    assert len(agg.warnings) == 1 and "'in'" in agg.warnings[0]


def test_retrieval_uri_is_the_base_when_no_content_location() -> None:
    agg = parse(mhtml("Content-Type: text/html\n\n<img src=a.png>", "Content-Location: a.png\n\nA"), base="http://h.example/d/p")
    page, image = agg.parts
    assert page.base == "http://h.example/d/p"
    assert image.location == "http://h.example/d/a.png"
    assert agg.references[0].target is image


def test_base_must_be_absolute() -> None:
    with pytest.raises(ParseError) as exc:
        parse(mhtml(PAGE), base="relative/path")
    assert exc.value.rule == "absolute-URI"


@pytest.mark.parametrize("base", ["http://x.example/\n", "http://x.example/\r\n", "http://x.example/ "])
def test_a_base_ending_in_white_space_is_no_absolute_uri(base: str) -> None:
    # RFC 3986 §4.3: absolute-URI holds no white space, a final line feed no more than a space
    with pytest.raises(ParseError) as exc:
        parse(mhtml(PAGE), base=base)
    assert exc.value.rule == "absolute-URI"


def test_single_part_message_is_an_aggregate_of_one() -> None:
    agg = parse(b"Content-Type: text/html\r\n\r\n<p>hi</p>\r\n")
    assert agg.tree is None and agg.root.data == b"<p>hi</p>\r\n"


def test_empty_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse(b"")


def test_multipart_without_boundary_parameter() -> None:
    with pytest.raises(ParseError) as exc:
        parse(b"Content-Type: multipart/related\r\n\r\n--x\r\n\r\na\r\n--x--\r\n")
    assert exc.value.rule == "boundary"


def test_multipart_with_no_body_parts() -> None:
    with pytest.raises(ParseError) as exc:
        parse(b'Content-Type: multipart/related; boundary="b"\r\n\r\n--b--\r\n')
    assert exc.value.rule == "multipart-body"


def test_limit_on_nesting_depth() -> None:
    depth = 5
    text = "Content-Type: text/plain\n\nleaf"
    for i in range(depth):
        text = f'Content-Type: multipart/mixed; boundary="d{i}"\n\n--d{i}\n{text}\n--d{i}--'
    data = text.replace("\n", "\r\n").encode()
    assert parse(data, limits=Limits(max_depth=5)).root.data == b"leaf"
    with pytest.raises(LimitError):
        parse(data, limits=Limits(max_depth=4))


def test_limit_on_part_count_and_header_size() -> None:
    data = mhtml(*(["Content-Type: text/plain\n\nx"] * 10))
    assert len(parse(data).parts) == 10
    with pytest.raises(LimitError):
        parse(data, limits=Limits(max_parts=9))
    long_header = mhtml("X-Long: " + "a" * 5000 + "\n\nbody")
    with pytest.raises(LimitError):
        parse(long_header, limits=Limits(max_header_bytes=4096))


def test_long_folded_headers_and_many_parameters() -> None:
    # email.policy.default needs seconds for a Content-Type with thousands of parameters
    # (its parser grows quadratically); compat32 values and our unfolding do not.
    folded = "Content-Location: http://a.example/" + "\n ".join(f"seg{i}/" for i in range(10000)) + "x"
    params = "Content-Type: image/png; " + "; ".join(f'p{i}="v{i}"' for i in range(4000))
    p = parse(mhtml(PAGE, folded + "\n" + params + "\n\nX")).parts[1]
    assert p.location is not None and p.location.endswith("seg9999/x")
    assert len(p.params) == 4000 and p.params[-1] == ("p3999", "v3999")


def test_stream_input_in_tiny_chunks_equals_bytes_input() -> None:
    data = mhtml(PAGE, IMAGE, "Content-Type: text/plain\n\n" + "line\n" * 500, boundary=CHROME_BOUNDARY)
    a = parse(data)
    b = parse(io.BytesIO(data + b"epilogue\r\n" * 100), limits=Limits(chunk_size=7))
    assert [p.data for p in a.parts] == [p.data for p in b.parts]
    assert [p.offset for p in a.parts] == [p.offset for p in b.parts]
    assert b.size == len(data) + 1000 and a.size == len(data)


def test_stream_that_gives_text_is_refused() -> None:
    with pytest.raises(ParseError):
        parse(io.StringIO("Content-Type: text/plain\n\nx"))  # type: ignore[arg-type]


def test_parts_are_values_with_their_headers() -> None:
    p: Part = parse(mhtml(PAGE)).parts[0]
    assert p.header("CONTENT-LOCATION") == "http://a.example/"
    assert p.headers == (("Content-Type", "text/html"), ("Content-Location", "http://a.example/"))
    with pytest.raises(AttributeError):
        p.data = b""  # type: ignore[misc]


def test_endless_header_line_in_a_stream_hits_the_limit() -> None:
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: bytearray) -> int:  # type: ignore[override]
            b[:] = b"x" * len(b)
            return len(b)

    with pytest.raises(LimitError):
        parse(Endless(), limits=Limits(max_header_bytes=10_000, chunk_size=1000))  # type: ignore[arg-type]


def test_base_with_dot_segments_is_absolute() -> None:
    agg = parse(b"Content-Type: text/html\r\n\r\n<img src=a.png>", base="http://h.example/a/../b/")
    assert agg.root.base == "http://h.example/a/../b/"
    assert agg.references[0].uri == "http://h.example/b/a.png"


def test_rfc2047_header_values_decoded_on_request() -> None:
    head = (
        "Subject: =?utf-8?Q?Caf=C3=A9_?=\n =?iso-8859-1?B?cOJ0ZQ==?= du jour\n"
        'Content-Type: multipart/related; boundary="b1"'
    )
    agg = parse(mhtml("Content-Type: text/plain\nContent-Description: =?x-nope?q?a=E9?=\n\nx", head=head))
    assert agg.header("subject") == "=?utf-8?Q?Caf=C3=A9_?= =?iso-8859-1?B?cOJ0ZQ==?= du jour"
    assert agg.header("subject", decode=True) == "Café pâte du jour"
    assert agg.parts[0].header("content-description", decode=True) == "aé"  # unknown charset: Latin-1


def test_long_line_starting_like_a_delimiter_is_read_once() -> None:
    # Only a bounded window after "--boundary" is examined, so a stream delivering a
    # 300 kB line in 16-byte chunks is not re-scanned for each chunk.
    trap = "--b1" + "x" * 300_000
    data = mhtml(PAGE, f"Content-Type: text/plain\n\n{trap}\n--b1   {' ' * 5000}")
    agg = parse(io.BytesIO(data), limits=Limits(chunk_size=16))
    assert agg.parts[1].data.startswith(trap.encode())
    assert agg.parts[1].data.endswith(b"\r\n--b1   " + b" " * 5000)


def test_base64_padded_line_by_line_loses_nothing() -> None:
    # some writers pad every line; binascii alone would stop at the first "="
    lines = "\n".join(base64.b64encode(w).decode() for w in (b"one ", b"two  ", b"three"))
    part = f"Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n{lines}"
    agg = parse(mhtml(part, head=PLAIN_HEAD))
    assert agg.parts[0].data == b"one two  three"
    assert "data after padding" in agg.warnings[0]


def test_byte_order_mark_before_the_headers() -> None:
    agg = parse(b"\xef\xbb\xbf" + mhtml(PAGE))
    assert len(agg.parts) == 1 and agg.root.location == "http://a.example/"
    assert agg.warnings == ("offset 0: byte order mark before the headers passed over",)


def test_aggregate_parse_is_parse() -> None:
    agg = Aggregate.parse(mhtml(PAGE), base="http://x.example/")
    assert agg.base == "http://x.example/" and agg.root.data == b'<img src="i.png">'


@pytest.mark.parametrize(
    "inner_body",
    ["no delimiter at all", "--in--", ""],
)
def test_nested_multipart_with_nothing_in_it_is_read_as_empty(inner_body: str) -> None:
    inner = f'Content-Type: multipart/related; boundary="in"\n\n{inner_body}'
    agg = parse(mhtml(PAGE, inner, IMAGE))
    assert [p.content_type for p in agg.parts] == ["text/html", "image/png"]
    assert agg.tree is not None and agg.tree.children[1].root is None
    assert any("read as empty" in w for w in agg.warnings)
    assert agg.references[0].target is agg.parts[1]


@pytest.mark.parametrize(
    ("data", "rule", "message"),
    [
        (b"MIME-Version: 2.0", "version", "MIME-Version '2.0' is not 1.0"),  # the crasher: accepted silently
        (b"MIME-Version: 2.0\r\n\r\nbody", "version", "is not 1.0"),
        (b"MIME-Version: 1.1\r\nContent-Type: text/html\r\n\r\n<p>", "version", "'1.1' is not 1.0"),
        (b"MIME-Version: one\r\n\r\nx", "version", "'one' is not 1.0"),
        (b"MIME-Version: 1.0", "entity", "ends inside its header fields"),
        (b"Content-Type: text/html\r\nContent-Location: http://e.org/", "entity", "ends inside its header fields"),
        (b"<html><body>a page, not a message</body></html>\r\n\r\n", "entity", "no header field"),
        (b"\r\n<html>no headers at all</html>", "entity", "no header field"),
        (b"just text", "entity", "no header field"),
    ],
)
def test_what_is_not_a_mime_entity_is_refused(data: bytes, rule: str, message: str) -> None:
    # RFC 2045 §4 (MIME-Version: 1.0 is the only version), RFC 5322 §2.1 (header fields,
    # then a blank line before the body)
    with pytest.raises(ParseError, match=message) as exc:
        parse(data)
    assert exc.value.rule == rule and exc.value.offset == 0


@pytest.mark.parametrize(
    "version", ["1.0", " 1.0 ", "1.0 (produced by MetaSend Vx.x)", "(produced by MetaSend Vx.x) 1.0", "1.(produced by MetaSend Vx.x)0", "1.00"]
)
def test_mime_version_1_0_with_comments_is_accepted(version: str) -> None:
    # RFC 2045 §4 gives the three forms with comments as examples of "1.0"
    agg = parse(f"MIME-Version: {version}\r\nContent-Type: text/plain\r\n\r\nx".encode())
    assert agg.root.data == b"x"


def test_cli_refuses_a_file_that_is_only_a_mime_version(tmp_path: Path) -> None:
    path = tmp_path / "v2.mht"
    path.write_bytes(b"MIME-Version: 2.0")
    for command in (["mhtml", "ls"], ["mhtml", "check"], ["mhtml", "unpack"]):
        args = [*command, str(path)] + ([str(tmp_path / "out")] if command[1] == "unpack" else [])
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert result.output == (
            "pdi: syntax error: MIME-Version '2.0' is not 1.0, the only version of MIME (RFC 2045 §4)"
            " (rule version, offset 0)\n"
        )


def _svg_twice(second: bytes) -> Aggregate:
    svg = "<svg xmlns='http://www.w3.org/2000/svg'/>"
    return parse(
        mhtml(
            'Content-Type: text/html\nContent-Location: http://e.org/\n\n<object data="cid:f1@x"></object><object data="cid:f2@x"></object>',
            f"Content-Type: image/svg+xml\nContent-ID: <f1@x>\nContent-Location: http://e.org/a.svg\n\n{svg}",
            f"Content-Type: image/svg+xml\nContent-ID: <f2@x>\nContent-Location: http://e.org/a.svg\n\n{second.decode()}",
        )
    )


def test_the_same_svg_twice_under_one_location_is_not_an_error() -> None:
    # What Chromium writes for two <object>s showing one SVG: two parts, same bytes, own cid: each.
    report = check(_svg_twice(b"<svg xmlns='http://www.w3.org/2000/svg'/>"))
    assert report.ok and [f.code for f in report.findings] == []


def test_two_different_parts_under_one_location_stay_an_error() -> None:
    report = check(_svg_twice(b"<svg xmlns='http://www.w3.org/2000/svg'><g/></svg>"))
    assert [(f.severity, f.code, f.part) for f in report.findings] == [("error", "duplicate-location", 2)]
