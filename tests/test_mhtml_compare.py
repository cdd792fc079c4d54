"""Whether two MHTML files hold the same page: parts compared, Chromium's spellings ignored.

The files are written here in the shape Chromium's ``Page.captureSnapshot``
gives (``From: <Saved by Blink>``, ``----MultipartBoundary--…----``, frames
with ``Content-ID: <frame-…@mhtml.blink>``, a ``<style>`` element as a part
with ``Content-Location: cid:css-…@mhtml.blink``, the page referring to both
by ``cid:`` URLs, RFC 2557 §8.3), with the date, boundary and ids drawn at
random as Chromium draws them.
"""

from __future__ import annotations

import base64
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.mhtml import parse
from pdi.mhtml.compare import content_digest, same_content

IMAGE = bytes(range(256)) * 3


def page(
    *,
    ids: tuple[str, str, str, str] = ("frame-A@mhtml.blink", "css-B@mhtml.blink", "frame-C@mhtml.blink",
                                      "frame-D@mhtml.blink"),
    boundary: str = "----MultipartBoundary--abc----",
    date: str = "Mon, 23 Nov 2026 03:23:51 GMT",
    text: str = "edition 1",
    frames: tuple[int, int] = (2, 3),
    image: bytes = IMAGE,
    image_location: str = "http://example.org/a.png",
    wrap: int = 76,
) -> bytes:
    root, css, *frame_ids = ids
    first, second = (ids[i] for i in frames)
    encoded = base64.b64encode(image).decode()
    lines = "\r\n".join(encoded[i : i + wrap] for i in range(0, len(encoded), wrap))
    html = (
        f'<html><head><link rel=3D"stylesheet" type=3D"text/css" href=3D"cid:{css}" /></head>'
        f'<body><iframe src=3D"cid:{first}"></iframe><iframe src=3D"cid:{second}"></iframe>'
        f"<p>{text}</p></body></html>"
    )
    parts = [
        ("text/html", f"Content-ID: <{root}>", "quoted-printable", "http://example.org/page.html", html),
        ("text/css", None, "quoted-printable", f"cid:{css}", "p { color: red; }"),
        ("text/html", f"Content-ID: <{frame_ids[0]}>", "quoted-printable", "http://example.org/f1.html", "<p>one</p>"),
        ("text/html", f"Content-ID: <{frame_ids[1]}>", "quoted-printable", "http://example.org/f2.html", "<p>two</p>"),
        ("image/png", None, "base64", image_location, lines),
    ]
    out = [
        "From: <Saved by Blink>",
        "Snapshot-Content-Location: http://example.org/page.html",
        "Subject: A page",
        f"Date: {date}",
        "MIME-Version: 1.0",
        "Content-Type: multipart/related;",
        '\ttype="text/html";',
        f'\tboundary="{boundary}"',
        "",
        "",
    ]
    for content_type, cid, encoding, location, body in parts:
        out.append(f"--{boundary}")
        out.append(f"Content-Type: {content_type}")
        if cid:
            out.append(cid)
        out.append(f"Content-Transfer-Encoding: {encoding}")
        out.append(f"Content-Location: {location}")
        out.append("")
        out.append(body)
        out.append("")
    out.append(f"--{boundary}--")
    return "\r\n".join(out).encode("ascii") + b"\r\n"


hex_ids = st.text(alphabet="0123456789ABCDEF", min_size=32, max_size=32)
uuids = st.uuids().map(str)
chromium_ids = st.tuples(hex_ids, uuids, hex_ids, hex_ids).map(
    lambda t: (f"frame-{t[0]}@mhtml.blink", f"css-{t[1]}@mhtml.blink", f"frame-{t[2]}@mhtml.blink",
               f"frame-{t[3]}@mhtml.blink")
).filter(lambda ids: len(set(ids)) == 4)
boundaries = st.text(alphabet=string.ascii_letters + string.digits, min_size=40, max_size=42).map(
    lambda s: f"----MultipartBoundary--{s}----"
)
dates = st.sampled_from(["Mon, 23 Nov 2026 03:23:51 GMT", "Tue, 24 Nov 2026 11:00:02 GMT"])


def test_the_page_as_written_parses_as_chromium_writes_it() -> None:
    agg = parse(page())
    assert [p.location for p in agg.parts] == [
        "http://example.org/page.html", "cid:css-B@mhtml.blink", "http://example.org/f1.html",
        "http://example.org/f2.html", "http://example.org/a.png",
    ]
    assert all(r.satisfied for r in agg.references)
    assert agg.parts[4].data == IMAGE


@given(ids=chromium_ids, boundary=boundaries, date=dates, wrap=st.sampled_from([60, 64, 76]))
def test_a_new_date_boundary_ids_and_line_wrapping_are_the_same_page(
    ids: tuple[str, str, str, str], boundary: str, date: str, wrap: int
) -> None:
    again = page(ids=ids, boundary=boundary, date=date, wrap=wrap)
    assert again != page()
    assert same_content(page(), again)
    assert content_digest(parse(page())) == content_digest(parse(again))


@given(ids=chromium_ids, boundary=boundaries)
def test_any_change_of_what_a_part_holds_is_another_page(ids: tuple[str, str, str, str], boundary: str) -> None:
    for changed in (
        page(ids=ids, boundary=boundary, text="edition 2"),
        page(ids=ids, boundary=boundary, image=IMAGE[:-1] + b"\0"),
        page(ids=ids, boundary=boundary, image_location="http://example.org/b.png"),
        # the same ids, but the page now shows the frames the other way round: the
        # references are mapped by the part they name, not merely removed
        page(ids=ids, boundary=boundary, frames=(3, 2)),
    ):
        assert not same_content(page(), changed)


def test_equal_bytes_are_the_same_page_without_parsing() -> None:
    assert same_content(b"not MHTML at all", b"not MHTML at all")


def test_a_file_that_cannot_be_read_is_no_page_and_the_same_as_no_other() -> None:
    # a multipart/related part without a boundary: no reader can split it (RFC 2046 §5.1.1)
    unreadable = page().replace(b"Content-Type: image/png", b"Content-Type: multipart/related", 1)
    assert unreadable != page()
    with pytest.raises(ParseError):
        parse(unreadable)
    assert not same_content(unreadable, page())
    assert not same_content(page(), unreadable)
    assert same_content(unreadable, unreadable)  # equal bytes
