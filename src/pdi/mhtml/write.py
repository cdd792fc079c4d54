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
  refused. A ``Content-Location`` with characters a URI may not hold (spaces,
  non-ASCII) is written percent-encoded, those characters as UTF-8 (the URI
  form of an IRI, RFC 3987 §3.1, and what the browser's URL parser makes of
  them: so Chromium, which reads no RFC 2047 encoded-word in a Content-Location,
  finds the part); one that does not fit on a 76-column line is folded as
  [URLBODY] §3.1 says (§4.4.2: a line break and a space anywhere, both removed
  on unfolding; Chromium unfolds so). Only a label holding ``=?``, which a
  reader would take for the start of an encoded-word, is written as RFC 2047
  encoded-words (§4.4.1, §4.4.3).
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
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from pdi import charsets
from pdi.errors import ParseError
from pdi.mhtml.limits import Budget
from pdi.mhtml.locations import IGNORED_SCHEMES, clean_reference, location_key, resolve_uri
from pdi.mhtml.parse import THISMESSAGE
from pdi.mhtml.resolve import url_encoding
from pdi.uri import resolve

__all__ = [
    "THISMESSAGE",
    "Resource",
    "build",
    "encode_header_uri",
    "encode_quoted_printable",
    "is_textual",
    "part_media_type",
]


# A media type as RFC 2045 §5.1 writes it: token "/" token.
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_MEDIA_TYPE = re.compile(rf"{_TOKEN}/{_TOKEN}")  # each used with fullmatch: "$" would let a final LF through
_CHARSET = re.compile(rf"{_TOKEN}")
# Content-ID: the addr-spec inside <> (RFC 2045 §7, RFC 2392), printable ASCII, no <> or space.
_CONTENT_ID = re.compile(r"[!-;=?-~]+")
# What may stand in a header line unencoded: printable ASCII without space.
_PLAIN_HEADER_URI = re.compile(r"[!-~]*")
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


def part_media_type(media_type: str) -> bool:
    """Whether :func:`build` writes a part of this media type: ``type/subtype``, each an RFC 2045 §5.1
    token, and no ``multipart/*`` (a multipart's body is its parts between its boundaries, RFC 2046
    §5.1.1: one written as a body would have none, and no reader could split it)."""
    return bool(_MEDIA_TYPE.fullmatch(media_type)) and not media_type.lower().startswith("multipart/")


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


#: The octets :func:`binascii.b2a_qp` keeps as they are anywhere in a line (printable ASCII but "=").
_QP_PLAIN = bytes(range(0x20, 0x3D)) + bytes(range(0x3E, 0x7F))


def _plain_lines(data: bytes) -> bool:
    """Whether b2a_qp keeps every line of ``data`` as it is: only :data:`_QP_PLAIN` octets, no space ending
    a line, no lone ".", and no line too long to keep with its "=0A" (72 + 3 and a soft break's "=" make 76)."""
    return (
        not data.translate(None, _QP_PLAIN).replace(b"\n", b"")
        and b" \n" not in data and not data.endswith(b" ")
        and b"\n.\n" not in data and not data.startswith(b".\n") and not data.endswith(b"\n.") and data != b"."
        and max(map(len, data.split(b"\n"))) <= _LINE - 4
    )


def _encode_quoted_printable_py(data: bytes) -> bytes:
    """Quoted-printable (RFC 2045 §6.7) that keeps every byte, CR and LF included.

    Each LF-terminated line of the input is encoded by :func:`binascii.b2a_qp`
    in binary mode (printable ASCII but ``=`` stands for itself, white space too
    except at the end of a line, CR and everything else becomes ``=XX``, lines
    are at most 76 characters with ``=`` soft breaks, a lone ``.`` at a line
    start is encoded), then its LF is written ``=0A`` followed by a soft break,
    so the text keeps its shape and a reader gets back the very bytes.
    """
    if _plain_lines(data):
        # Short lines of printable ASCII (no "=", no white space ending a line, no lone "."): b2a_qp
        # keeps each as it is, so the whole is each LF written "=0A" and a soft break (a fifth of the
        # time a page's MHTML took, line by line; the same bytes: tests/test_mhtml_write_build.py).
        whole = data.replace(b"\n", b"=0A=\r\n")
        return whole[:-3] if data.endswith(b"\n") else whole
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
        if tail >= _LINE:
            # b2a_qp filled the line (76 is its last segment's limit): its last octet, or "=XX", goes
            # after the soft break, whose "=" would make 77
            unit = 3 if encoded[-3:-2] == b"=" else 1
            out[len(out) - unit : len(out) - unit] = b"=\r\n"
        elif tail + 3 > _LINE - 1:
            out += b"=\r\n"
        out += b"=0A"
        if i + 1 < last or lines[last]:
            out += b"=\r\n"
    return bytes(out)


#: A line of base64 (RFC 2045 §6.8: at most 76 characters), cut by one ``findall`` (the lines sliced one by
#: one were most of packing a page of images: issue 24)
_BASE64_LINE = re.compile(rb".{1,%d}" % _LINE, re.DOTALL)


def _encode_base64_py(data: bytes) -> bytes:
    """The base64 of ``data`` in lines of 76 characters joined by CRLF (none after the last): binascii's
    base64, its lines cut by one ``findall``."""
    return b"\r\n".join(_BASE64_LINE.findall(base64.b64encode(data)))


_encode_base64: Callable[[bytes], bytes]
try:
    # the same octets in one pass, the GIL released for a large body (issue 24: the images' base64 was the
    # largest part of packing a WARC import's pages); built by pip install where a C compiler is found
    from pdi.mhtml._encode import base64_lines as _encode_base64
except ImportError:  # pragma: no cover - a build without a C compiler (tests/test_package.py)
    _encode_base64 = _encode_base64_py

encode_quoted_printable: Callable[[bytes], bytes]
try:
    # the same octets in one pass (issue 24: a page's HTML in long lines, as most are, was encoded line by line)
    from pdi.mhtml._encode import quoted_printable as encode_quoted_printable
except ImportError:  # pragma: no cover - a build without a C compiler (tests/test_package.py)
    encode_quoted_printable = _encode_quoted_printable_py

#: Whether the compiled encoder (``pdi.mhtml._encode``) is the one :func:`build` uses.
COMPILED = _encode_base64 is not _encode_base64_py and encode_quoted_printable is not _encode_quoted_printable_py


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


_NOT_IN_URI = re.compile(r"[^\x21-\x7e]")


def header_uri(uri: str) -> str:
    """``uri`` as it is written in a header: characters outside printable ASCII
    percent-encoded as UTF-8 (RFC 3987 §3.1), everything else as it is."""
    return _NOT_IN_URI.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), uri)


def encode_header_uri(name: str, uri: str) -> str:
    """One header line (without the final CRLF) carrying ``uri`` (RFC 2557 §4.4).

    Spaces and non-ASCII characters are percent-encoded (:func:`header_uri`); a line
    longer than 76 characters is folded, a CRLF and a space before each further piece of
    at most 75 characters ([URLBODY] §3.1: a reader removes both). A URI holding ``=?``
    is written as RFC 2047 Q encoded-words in ``US-ASCII``, one per folded line, none
    longer than 76 characters, so it cannot be misread as one.
    """
    _check_label(uri, f"{name} value")
    value = header_uri(uri)
    if "=?" in value:
        return f"{name}: " + "\r\n ".join(_q_word_chunks(value, "us-ascii", 76 - len(name) - 2))
    line = f"{name}: {value}"
    if len(line) <= 76:
        return line
    first = 76 - len(name) - 2
    pieces = [value[:first]] + [value[i : i + 75] for i in range(first, len(value), 75)]
    return f"{name}: " + "\r\n ".join(pieces)


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
    if not _MEDIA_TYPE.fullmatch(res.media_type):
        raise ParseError(
            f"not a media type: {res.media_type!r}", text=res.media_type, offset=0, rule="RFC 2045 §5.1 type/subtype"
        )
    if not part_media_type(res.media_type):
        raise ParseError(
            f"a body part cannot be written as {res.media_type}: a multipart is its parts between boundaries",
            text=res.media_type, offset=0, rule="RFC 2046 §5.1.1",
        )
    ctype = res.media_type.lower()
    if res.charset is not None:
        if not _CHARSET.fullmatch(res.charset):
            raise ParseError(f"not a charset name: {res.charset!r}", text=res.charset, offset=0, rule="RFC 2045 §5.1 token")
        ctype += f"; charset={res.charset}"
    lines = [f"Content-Type: {ctype}"]
    if res.content_id is not None:
        if not _CONTENT_ID.fullmatch(res.content_id):
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
            _check_label(res.content_location, "Content-Location")
            # compared as the reader compares them (§8.2): percent-encoded as a browser writes them
            uri = location_key(resolve(base, header_uri(res.content_location), strict=False))
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
    """A boundary the parts decide (the same parts, the same bytes), checked against them by :func:`build`.

    From each part's CRC-32 and length, not its SHA-256: the boundary need not be secret or unforgeable
    (a part holding it is caught, and another is made), and hashing every part was a tenth of a WARC
    import's time (issue 24).
    """
    digest = hashlib.sha256()
    for p in parts:
        digest.update(b"%d:%d;" % (zlib.crc32(p), len(p)))
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
    Raises :class:`ParseError` for a malformed media type (or a ``multipart/*`` one,
    :func:`part_media_type`), charset, label or Content-ID, or for labels that collide
    after resolution (§7).
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
        and _PLAIN_HEADER_URI.fullmatch(subject.replace(" ", "!"))
    ):
        return f"Subject: {subject}"
    charset = "us-ascii" if subject.isascii() else "utf-8"
    return "Subject: " + "\r\n ".join(_q_word_chunks(subject, charset, 76 - 9))


# --- What a page needs (the crawl is done by the edges: pdi.capture) --------------------------

@dataclass(frozen=True)
class Need:
    """A resource a part needs, as the browser asks for it.

    ``url`` is the absolute URL to fetch, percent-encoded as the browser's URL parser
    writes it (its query in the encoding of the text that names it,
    :func:`pdi.mhtml.urlencoding.browser_url`), without fragment; ``label`` the same with
    the reference's fragment, the Content-Location under which Chromium looks the part up
    (it finds ``a.png#x`` only under ``a.png#x``, and labels it so in the files it
    writes). ``as_document`` is ``"html"`` for frames, ``"css"`` for style sheets and
    ``@import``, ``None`` otherwise (the fetched media type decides); ``environment`` is,
    for a style sheet, the encoding of the text that names it (CSS Syntax §3.2: the
    sheet's own if it declares none).
    """

    url: str
    as_document: str | None
    label: str = ""
    environment: str | None = None

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.url)


def text_encoding(data: bytes, declared: str | None, media_type: str, environment: str | None = None) -> str:
    """The encoding of an HTML or CSS resource, as :mod:`pdi.charsets.sniff` decides (BOM,
    then ``declared``, then ``<meta>`` or ``@charset``, then, for a style sheet, the
    ``environment`` encoding of what refers to it, then UTF-8, else windows-1252)."""
    encoding, source, _warning = charsets.sniff_encoding(data, declared=declared, media_type=media_type)
    if environment is not None and media_type == "text/css" and source in ("utf-8", "default"):
        return environment
    return encoding


#: The media types (lower case) whose resources :func:`needed_references` reads: any other needs nothing.
REFERRING = frozenset({"text/html", "application/xhtml+xml", "text/css"})

# What the reader ignores (pdi.mhtml.resolve), and cid: (a part of the file, not a resource to fetch).
_SKIP_SCHEMES = (*sorted(f"{s}:" for s in IGNORED_SCHEMES), "cid:")


def needed_references(
    url: str,
    media_type: str,
    data: bytes,
    charset: str | None = None,
    environment: str | None = None,
    budget: Budget | None = None,
) -> Iterator[Need]:
    """What an HTML or CSS resource at ``url`` pulls in to render (not navigation links),
    in document order, one :class:`Need` for each label (URL and fragment) it names.

    ``charset`` is the one the resource was served with; ``environment`` the encoding of
    what refers to a style sheet (CSS Syntax §3.2). Each URL is encoded as
    :func:`pdi.mhtml.resolve.reference_encoding` says (the page's or sheet's encoding,
    UTF-8 for ``@import``, a ``style`` attribute and an ``<iframe srcdoc>`` document).
    ``budget`` bounds the time and the references read (:func:`pdi.mhtml.refs.scan_html`).
    Each is made as it is asked for, so a caller may stop before a page's references resolve to more
    URLs than it will hold (a long ``<base href>`` makes each short reference a long URL).
    """
    from pdi.mhtml.refs import css_references, scan_html

    kind = media_type.lower()
    if kind not in REFERRING:
        return
    encoding = text_encoding(data, charset, "text/css" if kind == "text/css" else "text/html", environment)
    text = charsets.whatwg_decode(data, encoding)
    base = url
    if kind == "text/css":
        refs = css_references(text, budget)
    else:
        refs, base_href = scan_html(text, budget)
        if base_href is not None and base_href.strip():
            base = resolve_uri(url, base_href) or url  # as the reader does (Part.base)
    labels: set[str] = set()
    for ref in refs:
        if not ref.inline:
            continue
        raw = clean_reference(ref.url)
        if not raw or raw.startswith("#") or raw.lower().startswith(_SKIP_SCHEMES):
            continue
        absolute = resolve_uri(base, raw)
        if absolute is None:
            continue
        written_in = "UTF-8" if ref.quoting else encoding  # a srcdoc document is UTF-8
        label = location_key(absolute, url_encoding(ref, kind != "text/css", written_in))
        doc = "html" if ref.kind == "frame" else "css" if ref.kind in ("stylesheet", "import") else None
        env = written_in if doc == "css" else None
        if label not in labels:  # one per label
            labels.add(label)
            yield Need(label.split("#", 1)[0], doc, label, env)


def absolute_base(url: str, data: bytes, charset: str | None = None, budget: Budget | None = None) -> bytes:
    """The HTML ``data`` at ``url`` with a relative ``<base href>`` made absolute.

    The first ``<base href>`` is the document's base (HTML §4.2.3); relative, it is
    resolved against ``url`` and written back percent-encoded (its query in the page's
    encoding) and escaped for its attribute value; every other byte stays. Chromium,
    opening an MHTML file, resolves a relative base against the file's own URL, so a
    page whose base is relative would find none of its parts. A page without one, or
    with an absolute one, comes back as it was. ``budget`` bounds reading the page
    (:func:`pdi.mhtml.refs.scan_html`).
    """
    from pdi.mhtml.refs import html_references
    from pdi.mhtml.refs.collector import BASE_TAG
    from pdi.mhtml.unpack import escape_for_value, text_view

    encoding = text_encoding(data, charset, "text/html")
    view = text_view(data, encoding)
    if view is None or BASE_TAG.search(view.text) is None:  # no <base>: not scanned for one (a third of packing)
        return data
    first = next((r for r in html_references(view.text, budget) if r.kind == "base" and not r.quoting), None)
    if first is None:
        return data
    start, end = view.byte(first.start), view.byte(first.end)
    href = charsets.whatwg_decode(data[start:end], encoding) if not view.decoded else view.text[first.start : first.end]
    from pdi.passages.scan import unescape

    href = clean_reference(unescape(href))
    if _SCHEME_START.match(href):
        return data
    absolute = resolve_uri(url, href)
    if absolute is None:
        return data
    quote = view.text[first.start - 1 : first.start]
    written = escape_for_value(location_key(absolute, encoding), quote if quote in ("'", '"') else "")
    return data[:start] + written.encode(view.codec) + data[end:]


_SCHEME_START = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
