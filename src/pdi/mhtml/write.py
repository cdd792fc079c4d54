"""Writing RFC 2557 MHTML aggregates (pure: bytes in, bytes out, no I/O).

:func:`build` turns a root resource and the resources it needs into one
``multipart/related`` file (RFC 2557 §7, RFC 2387):

- The root is the first body part, so no ``start`` parameter is needed; the
  ``type`` parameter names the root's media type (RFC 2387 §3.1, RFC 2557 §7).
- Every part keeps the URI it was found under in ``Content-Location`` (§7:
  "it SHOULD maintain their WWW URIs"). Labels must be unique after
  resolution (§7); :func:`build` refuses duplicates instead of silently
  writing a file whose references are ambiguous.
- Text (``text/*`` and the textual ``application/*`` types) is written
  quoted-printable, everything else base64. Our quoted-printable encodes
  every CR and LF as ``=0D``/``=0A`` (then breaks the line softly after an
  LF, so the file stays readable): a reader gets back the very bytes, whatever
  it does with line ends, which is what "same bytes back" needs for text
  with LF-only or mixed line ends.
- Header values never contain CR or LF: labels with control characters are
  refused. A ``Content-Location`` that does not fit on one 78-column line or
  that contains characters not allowed in a header (spaces, non-ASCII) is
  written as RFC 2047 encoded-words, one per folded line (§4.4.1 and §4.4.3:
  unfold, then remove the MIME encoding, to get the original URI back; the
  white space between adjacent encoded-words is not part of the value,
  RFC 2047 §6.2).
- Output is deterministic: no date unless one is given, and the boundary is
  derived from a hash of the content. The boundary starts with ``=_``, which
  can occur in neither quoted-printable nor base64 output, and is checked not
  to occur in any part anyway.
- All line ends are CRLF (the canonical form of RFC 2045/2046).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import email.utils
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pdi.errors import ParseError
from pdi.mhtml.parse import THISMESSAGE
from pdi.mhtml.resolve import IGNORED_SCHEMES, clean_reference, comparable, resolve_uri
from pdi.uri import resolve

__all__ = [
    "THISMESSAGE",
    "Resource",
    "build",
    "encode_header_uri",
    "encode_quoted_printable",
    "is_textual",
]


# A media type as RFC 2045 §5.1 writes it: token "/" token.
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_MEDIA_TYPE = re.compile(rf"^{_TOKEN}/{_TOKEN}$")
_CHARSET = re.compile(rf"^{_TOKEN}$")
# Content-ID: the addr-spec inside <> (RFC 2045 §7, RFC 2392), printable ASCII, no <> or space.
_CONTENT_ID = re.compile(r"^[!-;=?-~]+$")
# What may stand in a header line unencoded: printable ASCII without space.
_PLAIN_HEADER_URI = re.compile(r"^[!-~]*$")
# Control characters (CR and LF above all) and lone surrogates (not characters at all).
_CONTROL = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")

_TEXTUAL_APPLICATION = frozenset(
    {
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/json",
        "application/ld+json",
        "application/manifest+json",
        "application/xml",
        "application/xhtml+xml",
        "application/rss+xml",
        "application/atom+xml",
        "image/svg+xml",
    }
)

_LINE = 76  # RFC 2045 §6.7 (5) and §6.8: encoded lines are at most 76 characters.


def is_textual(media_type: str) -> bool:
    """Whether a part of this media type is written quoted-printable (else base64)."""
    media_type = media_type.lower()
    return media_type.startswith("text/") or media_type in _TEXTUAL_APPLICATION


@dataclass(frozen=True)
class Resource:
    """One body part to write.

    ``content_location`` is the URI as the referring document will resolve it
    (absolute, or relative to the aggregate's base); ``media_type`` is
    ``type/subtype`` without parameters; ``charset`` is written as a parameter
    only when given (a page's bytes are kept as they are, so a charset is only
    stated when it is known for sure).
    """

    content_location: str | None
    media_type: str
    data: bytes = field(repr=False)
    charset: str | None = None
    content_id: str | None = None


def encode_quoted_printable(data: bytes) -> bytes:
    """Quoted-printable (RFC 2045 §6.7) that keeps every byte, CR and LF included.

    Each LF-terminated line of the input is encoded by :func:`binascii.b2a_qp`
    in binary mode (printable ASCII but ``=`` stands for itself, white space too
    except at the end of a line, CR and everything else becomes ``=XX``, lines
    are at most 76 characters with ``=`` soft breaks, a lone ``.`` at a line
    start is encoded), then its LF is written ``=0A`` followed by a soft break,
    so the text keeps its shape and a reader gets back the very bytes.
    """
    out = bytearray()
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        # In binary mode b2a_qp writes no raw line ends: every "\n" in its output is a soft break.
        encoded = binascii.b2a_qp(line, quotetabs=False, istext=False, header=False).replace(b"=\n", b"=\r\n")
        out += encoded
        if i == last:
            break
        tail = len(encoded) - (encoded.rfind(b"\n") + 1)
        if tail + 3 > _LINE - 1:
            out += b"=\r\n"
        out += b"=0A"
        if i + 1 < last or lines[last]:
            out += b"=\r\n"
    return bytes(out)


def _encode_base64(data: bytes) -> bytes:
    raw = base64.b64encode(data)
    return b"\r\n".join(raw[i : i + _LINE] for i in range(0, len(raw), _LINE))


def _q_word_chunks(value: str, charset: str, first_room: int, room: int = 75) -> list[str]:
    """Split ``value`` into RFC 2047 Q encoded-words of at most ``room`` characters (the first ``first_room``)."""
    prefix = f"=?{charset}?Q?"
    words: list[str] = []
    current = ""
    for ch in value:
        piece = "".join(
            chr(b) if (33 <= b <= 126 and b not in (0x3D, 0x3F, 0x5F)) else f"={b:02X}"
            for b in ch.encode("utf-8")
        )
        limit = first_room if not words else room
        if current and len(prefix) + len(current) + len(piece) + 2 > limit:
            words.append(f"{prefix}{current}?=")
            current = ""
        current += piece
    words.append(f"{prefix}{current}?=")
    return words


def encode_header_uri(name: str, uri: str) -> str:
    """One header line (without the final CRLF) carrying ``uri`` exactly (RFC 2557 §4.4).

    Short printable-ASCII URIs are written as they are. Others become RFC 2047
    Q encoded-words in ``US-ASCII`` (or ``UTF-8`` when the URI has non-ASCII
    characters, §4.4.1), one per folded line, none longer than 76 characters.
    """
    _check_label(uri, f"{name} value")
    if _PLAIN_HEADER_URI.match(uri) and len(name) + 2 + len(uri) <= 78 and "=?" not in uri:
        return f"{name}: {uri}"
    charset = "us-ascii" if uri.isascii() else "utf-8"
    words = _q_word_chunks(uri, charset, 76 - len(name) - 2)
    return f"{name}: " + "\r\n ".join(words)


def _check_label(value: str, what: str) -> None:
    m = _CONTROL.search(value)
    if m:
        raise ParseError(
            f"{what} contains a control character or a lone surrogate",
            text=value,
            offset=m.start(),
            rule="RFC 2557 §4.4.1",
        )


def _part_headers(res: Resource) -> list[str]:
    if not _MEDIA_TYPE.match(res.media_type):
        raise ParseError(
            f"not a media type: {res.media_type!r}", text=res.media_type, offset=0, rule="RFC 2045 §5.1 type/subtype"
        )
    ctype = res.media_type.lower()
    if res.charset is not None:
        if not _CHARSET.match(res.charset):
            raise ParseError(f"not a charset name: {res.charset!r}", text=res.charset, offset=0, rule="RFC 2045 §5.1 token")
        ctype += f"; charset={res.charset}"
    lines = [f"Content-Type: {ctype}"]
    if res.content_id is not None:
        if not _CONTENT_ID.match(res.content_id):
            raise ParseError(
                f"Content-ID must be printable ASCII without <, > or space: {res.content_id!r}",
                text=res.content_id,
                offset=0,
                rule="RFC 2392 addr-spec",
            )
        lines.append(f"Content-ID: <{res.content_id}>")
    lines.append(
        "Content-Transfer-Encoding: " + ("quoted-printable" if is_textual(res.media_type) else "base64")
    )
    if res.content_location is not None:
        _check_label(res.content_location, "Content-Location")
        lines.append(encode_header_uri("Content-Location", res.content_location))
    return lines


def _encode_body(res: Resource) -> bytes:
    if is_textual(res.media_type):
        return encode_quoted_printable(res.data)
    return _encode_base64(res.data)


def _check_unique(resources: Sequence[Resource], base: str) -> None:
    """RFC 2557 §7: Content-IDs differ, Content-Locations resolve to different URIs."""
    seen_loc: dict[str, int] = {}
    seen_cid: dict[str, int] = {}
    for i, res in enumerate(resources):
        if res.content_location is not None:
            # compared as the reader compares them (§8.2): no fragment, unsafe characters %-encoded
            uri = comparable(resolve(base, res.content_location, strict=False))
            if uri in seen_loc:
                raise ParseError(
                    f"parts {seen_loc[uri]} and {i} have Content-Locations that resolve to the same URI {uri}",
                    text=res.content_location,
                    rule="RFC 2557 §7 distinct Content-Location",
                )
            seen_loc[uri] = i
        if res.content_id is not None:
            if res.content_id in seen_cid:
                raise ParseError(
                    f"parts {seen_cid[res.content_id]} and {i} share the Content-ID <{res.content_id}>",
                    text=res.content_id,
                    rule="RFC 2557 §7 distinct Content-ID",
                )
            seen_cid[res.content_id] = i


def _boundary(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for p in parts:
        digest.update(hashlib.sha256(p).digest())
    return "=_pdi_" + digest.hexdigest()[:40]


def build(
    root: Resource,
    resources: Sequence[Resource] = (),
    *,
    location: str | None = None,
    subject: str | None = None,
    date: datetime.datetime | None = None,
) -> bytes:
    """Write ``root`` and ``resources`` as one ``multipart/related`` MHTML file.

    ``location`` is an absolute URI for the whole aggregate (§4.3), written as
    the top-level ``Content-Location`` and used as the base for relative
    labels; ``subject`` and ``date`` are written only when given, so that
    without them the same input gives the same bytes.
    Raises :class:`ParseError` for a malformed media type, charset, label or
    Content-ID, or for labels that collide after resolution (§7).
    """
    everything = [root, *resources]
    base = THISMESSAGE
    if location is not None:
        _check_label(location, "aggregate Content-Location")
        base = resolve(THISMESSAGE, location, strict=False)
    _check_unique(everything, base)

    rendered: list[bytes] = []
    for res in everything:
        head = "\r\n".join(_part_headers(res)).encode("ascii")
        rendered.append(head + b"\r\n\r\n" + _encode_body(res))

    boundary = _boundary(rendered)
    counter = 0
    while any(boundary.encode("ascii") in part for part in rendered):
        counter += 1  # pragma: no cover - "=_" never appears in our encodings
        boundary = _boundary([*rendered, str(counter).encode()])

    top: list[str] = ["MIME-Version: 1.0"]
    if subject is not None:
        top.append(_encode_subject(subject))
    if date is not None:
        top.append("Date: " + email.utils.format_datetime(date))
    if location is not None:
        top.append(encode_header_uri("Content-Location", location))
    top.append("Content-Type: multipart/related;")
    top.append(f' type="{root.media_type.lower()}";')
    top.append(f' boundary="{boundary}"')

    delimiter = b"--" + boundary.encode("ascii")
    pieces: list[bytes] = ["\r\n".join(top).encode("ascii"), b"\r\n\r\n"]
    for part in rendered:
        pieces += (delimiter, b"\r\n", part, b"\r\n")
    pieces += (delimiter, b"--\r\n")
    return b"".join(pieces)


def _encode_subject(subject: str) -> str:
    _check_label(subject, "Subject")
    if (
        subject.isascii()
        and len(subject) + 9 <= 78
        and "=?" not in subject
        and _PLAIN_HEADER_URI.match(subject.replace(" ", "!"))
    ):
        return f"Subject: {subject}"
    charset = "us-ascii" if subject.isascii() else "utf-8"
    return "Subject: " + "\r\n ".join(_q_word_chunks(subject, charset, 76 - 9))


# --- What a page needs (the crawl is done by the edges: pdi.capture) --------------------------

@dataclass(frozen=True)
class Need:
    """A resource a part needs: its absolute URI (no fragment) and how it is used.

    ``as_document`` is ``"html"`` for frames, ``"css"`` for style sheets and
    ``@import``, ``None`` otherwise (the fetched media type decides).
    """

    url: str
    as_document: str | None


def decode_text(data: bytes, declared: str | None, media_type: str) -> str:
    """The text of an HTML or CSS resource, decoded as :mod:`pdi.mhtml.charset` decides
    (BOM, then ``declared``, then ``<meta>`` or ``@charset``, then UTF-8, else windows-1252)."""
    from pdi.mhtml import charset

    encoding, _source, _warning = charset.sniff(data, declared=declared, media_type=media_type)
    return charset.decode(data, encoding)


# What the reader ignores (pdi.mhtml.resolve), and cid: (a part of the file, not a resource to fetch).
_SKIP_SCHEMES = (*sorted(f"{s}:" for s in IGNORED_SCHEMES), "cid:")


def needed_references(url: str, media_type: str, data: bytes, charset: str | None = None) -> list[Need]:
    """What an HTML or CSS resource at ``url`` pulls in to render (not navigation links),
    as absolute URIs without fragment, in document order, each once."""
    from pdi.mhtml.refs import css_references, html_base, html_references

    kind = media_type.lower()
    if kind in ("text/html", "application/xhtml+xml"):
        text = decode_text(data, charset, kind)
        refs = html_references(text)
        base_href = html_base(text)
        base = url
        if base_href is not None and base_href.strip():
            base = resolve_uri(url, base_href) or url  # as the reader does (Part.base)
    elif kind == "text/css":
        refs = css_references(decode_text(data, charset, kind))
        base = url
    else:
        return []
    needs: dict[str, Need] = {}
    for ref in refs:
        if not ref.inline:
            continue
        raw = clean_reference(ref.url)
        if not raw or raw.startswith("#") or raw.lower().startswith(_SKIP_SCHEMES):
            continue
        absolute = resolve_uri(base, raw)
        if absolute is None:
            continue
        absolute = absolute.split("#", 1)[0]
        doc = "html" if ref.kind == "frame" else "css" if ref.kind in ("stylesheet", "import") else None
        needs.setdefault(comparable(absolute), Need(absolute, doc))  # one per URI as the reader compares
    return list(needs.values())
