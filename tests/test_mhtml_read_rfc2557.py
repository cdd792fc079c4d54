"""Every example of RFC 2557 §9, assembled from the RFC text in tests/data/specs/rfc2557.txt, read back.

The stored RFC text lost its layout: leading indentation (so folded header lines look
like new lines) and blank lines (so the blank line between a heading and its body is
gone). :func:`rfc_example` puts them back the only way that makes the examples MIME:
a header line that is not ``Name: …`` continues the previous field; the first line
that neither starts nor continues a field starts the body, after a blank line. The
examples' annotations (``; Note - …``, ``; this header is disregarded``) are removed,
characters of a quoted-printable body outside ASCII are written as ``=XX`` (Latin-1,
the parts' declared charset) and every line ends in CRLF. The ``etc...`` lines that
stand for the rest of each GIF are kept: they make the base64 dirty, as real files are.

The expected values come from the RFC's explanatory text (normative, §9 Warning).
"""

from __future__ import annotations

import re
from pathlib import Path

from pdi.mhtml import Aggregate, Part, parse
from pdi.mhtml.resolve import resolve_reference

DATA = Path(__file__).resolve().parent / "data"
RFC2557 = DATA / "specs" / "rfc2557.txt"

_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:( |$)")
_PAGE_BREAK = re.compile(r"^(Palme, et al\. .*\[Page \d+\]|RFC 2557 .* March 1999)$")

# The IETF logo GIF of the examples starts with these bytes (the first base64 line,
# decoded by hand: "R0lGODlh" is "GIF89a", then a GIF comment the RFC authors left).
GIF_START = b"GIF89a"
GIF_COMMENT = b"Copyright (C) 1995 IETF. Unauthorized duplication prohibited."


def rfc_example(section: str, heading: str = "Example", first: str = "From: ") -> bytes:
    """The message of RFC 2557 example ``section`` (e.g. ``"9.2"``) as bytes.

    The example runs from the section's first line starting with ``first`` to the
    next section heading.
    """
    lines = RFC2557.read_text(encoding="utf-8").splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith(f"{section} {heading}")]
    start = heads[-1]  # the first is the table of contents
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^\d+\.(\d+)? [A-Z]", lines[i]))
    body = [line for line in lines[start:end] if not _PAGE_BREAK.match(line)]
    body = body[next(i for i, line in enumerate(body) if line.startswith(first)) :]
    out: list[str] = []
    in_headers = True
    open_field = False  # the previous header line asks for a continuation
    qp = False
    cte = None
    for line in body:
        if line.startswith("--boundary-example"):
            if in_headers and out and out[-1] != "":
                out.append("")
            out.append(line)
            in_headers = not line.endswith("--")
            open_field = False
            cte = None
            continue
        if in_headers:
            if line.startswith(";"):
                continue  # the RFC's annotation of the previous field
            line = line.replace(" ; this header is disregarded", "")
            if _HEADER.match(line):
                out.append(line)
                value = line.split(":", 1)[1].strip()
                open_field = value == "" or value.endswith(";")
                if line.lower().startswith("content-transfer-encoding:"):
                    cte = value.lower()
                continue
            if open_field or re.match(r"^[a-z]+=", line):
                out.append(" " + line)
                open_field = line.rstrip().endswith(";")
                continue
            out.append("")
            in_headers = False
            qp = cte == "quoted-printable"
        if qp:
            line = "".join(c if ord(c) < 128 else f"={ord(c):02X}" for c in line)
        out.append(line)
    return ("\r\n".join(out) + "\r\n").encode("latin-1")


def refs_of(agg: Aggregate, part: Part) -> list[tuple[str, str, int | None, str | None]]:
    return [
        (r.reference.url, r.status, r.target.index if r.target else None, r.rule)
        for r in agg.references
        if r.source is part
    ]


def test_rfc2557_4_2_content_location_and_content_id_labels() -> None:
    # §4.2's example: parts with both labels; a relative Content-Location is resolved
    # against thismessage:/ (no base), a cid: URI reaches the Content-ID.
    agg = parse(rfc_example("4.2", "The Content-Location Header", "Content-Type: multipart/related"))
    html, gif1, gif2 = agg.parts
    assert (gif1.content_id, gif1.location) == ("97116092511xyz@foo.bar.net", "thismessage:/fiction1/fiction2")
    assert (gif2.content_id, gif2.location) == ("97116092811xyz@foo.bar.net", "thismessage:/fiction1/fiction3")
    assert gif1.data == b"" and gif2.data == b""
    assert html.charset == "US-ASCII" and html.encoding == "windows-1252"
    assert refs_of(agg, html) == [
        ("fiction1/fiction2", "satisfied", 1, "content-location"),
        ("cid:97116092811xyz@foo.bar.net", "satisfied", 2, "content-id"),
    ]


def test_rfc2557_9_1_html_body_without_linked_objects() -> None:
    agg = parse(rfc_example("9.1"))
    assert agg.tree is None and len(agg.parts) == 1
    root = agg.root
    assert root.content_type == "text/html"
    assert root.charset == "iso-8859-1"
    assert root.encoding == "windows-1252"  # WHATWG: iso-8859-1 is windows-1252
    assert root.transfer_encoding == "8bit"
    text = root.text()
    assert "E with acute accent becomes Ã.<br>" in text
    assert "E with acute accent becomes É.<p>" in text
    assert root.base == "thismessage:/"
    # the one URI is not in the message: the reader would fetch it (§8.2 (e))
    assert refs_of(agg, root) == [("http://www.ietf.cnri.reston.va.us/", "unsatisfied", None, None)]
    assert agg.warnings == ()


def test_rfc2557_9_2_absolute_uri_to_embedded_gif() -> None:
    agg = parse(rfc_example("9.2"))
    assert agg.boundary == "boundary-example"
    assert agg.tree is not None and agg.tree.type == "text/html"
    assert agg.tree.start == "foo3@foo1@bar.net"
    html, gif = agg.parts
    assert agg.root is html and html.content_id == "foo3@foo1@bar.net"
    # the folded Content-Location is unfolded to the URI
    assert gif.content_location == "http://www.ietf.cnri.reston.va.us/images/ietflogo.gif"
    assert gif.location == gif.content_location
    assert gif.content_type == "image/gif"
    assert gif.data.startswith(GIF_START) and GIF_COMMENT in gif.data
    assert refs_of(agg, html) == [
        ("http://www.ietf.cnri.reston.va.us/images/ietflogo.gif", "satisfied", 1, "content-location")
    ]
    assert agg.by_location("http://www.ietf.cnri.reston.va.us/images/ietflogo.gif") is gif
    assert agg.by_content_id("<foo3@foo1@bar.net>") is html


def test_rfc2557_9_3_relative_uris_resolved_by_multipart_content_location() -> None:
    agg = parse(rfc_example("9.3"))
    assert agg.tree is not None
    assert agg.tree.location == "http://www.ietf.cnri.reston.va.us/"
    html, logo1, logo2, logo3 = agg.parts
    assert html.base == "http://www.ietf.cnri.reston.va.us/"
    assert html.text().count("IETF logo") == 3
    assert "Quoted-Printable: ©" in html.text()  # =A9 in ISO-8859-1
    assert "HTML markup: ¨" in html.text()
    # "etc..." after each GIF's two base64 lines: dirty base64, repaired with a warning
    assert len(agg.warnings) == 3 and all("base64" in w for w in agg.warnings)
    assert logo1.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo1.gif"
    assert logo2.content_location == "images/ietflogo2.gif"
    assert logo2.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo2.gif"
    assert logo3.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo3.gif"
    # parts 2 and 3 have no Content-Type: MIME's default, bytes untouched
    assert logo2.content_type == "text/plain" and logo2.data.startswith(GIF_START)
    assert refs_of(agg, html) == [
        ("images/ietflogo1.gif", "satisfied", 1, "content-location"),
        ("images/ietflogo2.gif", "satisfied", 2, "content-location"),
        ("images/ietflogo3.gif", "satisfied", 3, "content-location"),
    ]


def test_rfc2557_9_4_relative_uri_and_no_base_uses_thismessage() -> None:
    agg = parse(rfc_example("9.4"))
    html, gif = agg.parts
    assert html.base == "thismessage:/"
    assert gif.content_location == "ietflogo.gif"
    assert gif.location == "thismessage:/ietflogo.gif"
    assert refs_of(agg, html) == [("ietflogo.gif", "satisfied", 1, "content-location")]
    assert [r.uri for r in agg.references] == ["thismessage:/ietflogo.gif"]


def test_rfc2557_9_5_cid_url_matches_content_id_only() -> None:
    agg = parse(rfc_example("9.5"))
    html, gif = agg.parts
    assert gif.content_id == "foo4@foo1@bar.net"
    assert gif.content_location == "CID:something@else"  # a label, disregarded for cid: URIs
    assert refs_of(agg, html) == [("cid:foo4@foo1@bar.net", "satisfied", 1, "content-id")]
    assert gif.data.startswith(GIF_START)
    # "this header is disregarded": the cid: Content-Location of a part with a
    # Content-ID satisfies nothing
    assert resolve_reference(agg, html, "cid:something@else").status == "unsatisfied"


# RFC 2557 §9.6 as printed has typos the explanatory text contradicts (it is
# normative, §9 Warning): three attribute values miss a quote, and the image the
# text says the first nested page's "images/ietflogo2e.gif" resolves to is labelled
# "http:images/ietflogo2.gif".
_FIXES_9_6 = (
    (b'<IMG SRC=images/ietflogo2e.gif"', b'<IMG SRC="images/ietflogo2e.gif"'),
    (b'<IMG SRC=images/ietflogo2d.gif"', b'<IMG SRC="images/ietflogo2d.gif"'),
    (b'/more-info>', b'/more-info">'),
    (b'/even-more-info>', b'/even-more-info">'),
    (b"Content-Location: http:images/ietflogo2.gif", b"Content-Location: http:images/ietflogo2e.gif"),
)


def test_rfc2557_9_6_permitted_and_forbidden_references_between_nested_parts() -> None:
    data = rfc_example("9.6")
    for old, new in _FIXES_9_6:
        assert old in data
        data = data.replace(old, new)
    agg = parse(data)
    assert agg.tree is not None
    outer_html, logo, inner_html, logo2e, inner3_html, logo2d = agg.parts
    assert logo.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo.gif"
    more, even_more = (c for c in agg.tree.children if not isinstance(c, Part))
    assert more.location == "http://www.ietf.cnri.reston.va.us/more-info"
    assert more.root is inner_html and even_more.root is inner3_html
    assert agg.root is outer_html and outer_html.base == "thismessage:/"
    # "http:images/…" is relative to the enclosing http base (RFC 1808, RFC 3986 §5.2.2)
    assert logo2e.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo2e.gif"
    assert logo2d.location == "http://www.ietf.cnri.reston.va.us/images/ietflogo2d.gif"
    assert inner_html.base == "http://www.ietf.cnri.reston.va.us/more-info"

    assert refs_of(agg, outer_html) == [
        # resolved with the image in the next body part
        ("http://www.ietf.cnri.reston.va.us/images/ietflogo.gif", "satisfied", 1, "content-location"),
        # outside to inside: not supported
        ("images/ietflogo2e.gif", "unsatisfied", None, None),
        # resolved with the nested text/html body parts
        ("http://www.ietf.cnri.reston.va.us/more-info", "satisfied", 2, "content-location"),
        ("http://www.ietf.cnri.reston.va.us/even-more-info", "satisfied", 4, "content-location"),
    ]
    assert refs_of(agg, inner_html) == [
        # with the image in the surrounding multipart/related
        ("images/ietflogo.gif", "satisfied", 1, "content-location"),
        # with the image inside the current nested multipart/related
        ("images/ietflogo2e.gif", "satisfied", 3, "content-location"),
    ]
    assert refs_of(agg, inner3_html) == [
        ("images/ietflogo2d.gif", "satisfied", 5, "content-location"),
        # between parallel structures: not supported, although the URI is identical
        ("images/ietflogo2e.gif", "unsatisfied", None, None),
    ]
    assert [r.uri for r in agg.references if r.source is inner3_html][1] == logo2e.location


def test_rfc2557_8_3_cid_urls_match_content_id_headers() -> None:
    # §8.3's two headers, taken from the RFC text: only the Content-ID is matched.
    lines = RFC2557.read_text(encoding="utf-8").splitlines()
    cid_line = next(line for line in lines if line.startswith("Content-ID: <foo@bar.net>"))
    loc_line = next(line for line in lines if line.startswith("Content-Location: CID: foo@bar.net"))
    data = (
        'Content-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        '--b\r\nContent-Type: text/html\r\n\r\n<img src="cid:foo@bar.net"><img src="CID:%20foo@bar.net">\r\n'
        f"--b\r\nContent-Type: image/gif\r\n{cid_line}\r\n{loc_line}\r\n\r\nGIF89a\r\n--b--\r\n"
    ).encode()
    agg = parse(data)
    assert agg.parts[1].content_location == "CID: foo@bar.net"
    assert refs_of(agg, agg.root) == [
        ("cid:foo@bar.net", "satisfied", 1, "content-id"),
        # "CID: foo@bar.net" as a cid: URI names the Content-ID " foo@bar.net": no part
        ("CID:%20foo@bar.net", "unsatisfied", None, None),
    ]
