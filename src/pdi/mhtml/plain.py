"""Reading an MHTML file of the shape :func:`pdi.mhtml.write.build` writes, in a few calls a part.

A WACZ export reads every page it writes back out of the archive, and most of
them were written by :func:`~pdi.mhtml.write.build` (a WARC import packs each
page so). :func:`read_plain` reads a file of exactly that shape, and nothing
else, to what :func:`pdi.mhtml.parse.read_message` reads of it (each part's
resolved ``Content-Location``, the label as written, media type, ``charset=``
and decoded octets; the root first), without the general reader's line-by-line
header reading, delimiter scanning and part objects, which were two fifths of
an export's reading of its pages (issue 24). The shape:

* the top header block ``MIME-Version: 1.0`` and ``Content-Type: multipart/related;``
  folded before ``type="…"`` and ``boundary="=_pdi_…"`` (no ``Content-Location``,
  ``Subject`` or ``Date``, no preamble, no epilogue);
* body parts whose headers are ``Content-Type``, ``Content-Transfer-Encoding``
  (``base64`` or ``quoted-printable``) and ``Content-Location`` (folded or not),
  in that order, each line printable ASCII and ended by CRLF;
* every occurrence of the delimiter a line of its own, the last the closing one
  ending the file; the first part of the ``type`` parameter's media type, or a page.

For any other file, and for one the general reader would read with a warning
that changes its octets (base64 with data after padding, or bad padding), or
refuse (a limit of :class:`~pdi.mhtml.limits.Limits`), it answers ``None``, and
the caller reads the file with :func:`~pdi.mhtml.parse.read_message`.
``tests/test_mhtml_plain.py`` draws files :func:`~pdi.mhtml.write.build` writes and
damaged ones, and finds :func:`read_plain` either ``None`` or equal to the general reading.
Pure: no I/O.
"""

from __future__ import annotations

import binascii
import re
from typing import NamedTuple

from pdi.mhtml.headers import decode_words
from pdi.mhtml.limits import Limits
from pdi.mhtml.locations import resolve_uri
from pdi.mhtml.parse import (
    _B64_AFTER_PAD,
    _COMMENT_END,
    _COMMENT_START,
    _HTML_TYPES,
    THISMESSAGE,
    _content_type,
)

__all__ = ["PlainPart", "page_parts", "read_plain", "reads_plain"]


class PlainPart(NamedTuple):
    """What :func:`pdi.mhtml.parse.read_message` reads of a part: the same values as its :class:`~pdi.mhtml.parts.Part`'s."""

    location: str | None
    content_location: str | None
    content_type: str
    charset: str | None
    data: bytes


_TOP = re.compile(
    rb'MIME-Version: 1\.0\r\nContent-Type: multipart/related;\r\n type="([!#$%&\'*+\-.^_`|~0-9A-Za-z/]+)";\r\n'
    rb' boundary="(=_pdi_[0-9a-f]{40})"\r\n\r\n'
)
_PART = re.compile(
    rb"Content-Type: ([ -~]+)\r\nContent-Transfer-Encoding: (base64|quoted-printable)\r\n"
    rb"Content-Location: ([!-~]*(?:\r\n [!-~]+)*)\r\n\r\n"
)
#: Longer header blocks are left to the general reader (which bounds them: ``Limits.max_header_bytes``).
_HEAD_MAX = 16 * 1024
_LIMITS = Limits()


def read_plain(data: bytes) -> tuple[PlainPart, ...] | None:
    """The parts of ``data``, the root first, as :func:`~pdi.mhtml.parse.read_message` reads them, if ``data``
    is of the shape of the module's docstring; else ``None``."""
    return _walk(data, decode=True)


def page_parts(data: bytes) -> tuple[PlainPart, ...]:
    """The parts of the MHTML file ``data``, the root first: by :func:`read_plain` (every file pdi's own writer
    made), else as :func:`~pdi.mhtml.parse.read_message` reads them (the same parts either way: read_plain answers
    ``None`` for a file it would read otherwise, tests/test_mhtml_plain.py)."""
    plain = read_plain(data)
    if plain is not None:
        return plain
    from pdi.mhtml.parse import read_message

    aggregate = read_message(data)  # what pdi.mhtml.parse reads, without the lookups a reader of parts does not use
    root = aggregate.root
    return tuple(
        PlainPart(p.location, p.content_location, p.content_type, p.charset, p.data)
        for p in (root, *(p for p in aggregate.parts if p is not root))
    )


def reads_plain(data: bytes) -> bool:
    """Whether ``data`` is of the shape of the module's docstring, its parts within :class:`Limits`' defaults:
    then :func:`~pdi.mhtml.parse.check_reads` of it (the default limits) raises nothing.

    The walk of :func:`read_plain` with each part's body left encoded: undoing a transfer encoding never
    fails (bad base64 is repaired) and never makes a body larger, so it cannot change whether the file reads,
    and the walk bounds a body by its encoded octets, as the general reader does. Nor is a part's label read
    (its encoded words decoded, its comments dropped, resolved): a label never fails a reading (a bad encoded
    word is kept as written, a reference that does not resolve has no location), and reading them was two
    fifths of the walk (issue 24). What it answers ``False``
    for (another shape, a repair :func:`read_plain` leaves to the general reader) is for
    :func:`~pdi.mhtml.parse.check_reads` to judge. A deposit's MHTML check (:class:`pdi.archive.readable.MhtmlCheck`)
    asks this first: a page a WARC import packed is read back in a few calls a part, not line by line (issue 24).
    It reads no clock (the general reader stops at ``Limits.max_parse_seconds``): its work is a search for the
    next delimiter and a match of a bounded header block a part, linear in the file.
    """
    return _walk(data, decode=False) is not None


def _walk(data: bytes, *, decode: bool) -> tuple[PlainPart, ...] | None:
    """:func:`read_plain` (``decode``), or its walk with each part's data left empty and its label unread."""
    if type(data) is not bytes:
        return None
    top = _TOP.match(data)
    if top is None:
        return None
    root_type = top.group(1).decode("ascii")
    delimiter = b"--" + top.group(2)
    # The top Content-Type field's value unfolded, as the general reader hands it to ``email``.
    media_type, params = _content_type(f'multipart/related; type="{root_type}"; boundary="{top.group(2).decode()}"')
    if media_type != "multipart/related" or params != (("type", root_type), ("boundary", top.group(2).decode())):
        return None  # pragma: no cover - email reads these values so (a guard, not a path)
    size = len(delimiter)
    at = top.end()
    end = len(data)
    if not data.startswith(delimiter + b"\r\n", at):
        return None
    parts: list[PlainPart] = []
    while True:
        start = at + size + 2  # the part's headers, after its delimiter line
        following = data.find(delimiter, start)
        if following < 0 or data[following - 2 : following] != b"\r\n":
            return None
        head = _PART.match(data, start, min(end, start + _HEAD_MAX))
        body_end = following - 2
        if head is None or head.end() > body_end:
            return None
        if body_end - head.end() > _LIMITS.max_part_bytes or len(parts) >= _LIMITS.max_parts:
            return None
        part = _part(data, head, body_end, decode)
        if part is None:
            return None
        parts.append(part)
        after = following + size
        if data.startswith(b"\r\n", after):
            at = following
            continue
        if after + 4 == end and data.endswith(b"--\r\n"):
            break
        return None
    first = parts[0]
    if first.content_type not in _HTML_TYPES and first.content_type != root_type.lower():
        return None  # the general reader looks further for the root
    return tuple(parts)


def _part(data: bytes, head: re.Match[bytes], body_end: int, decode: bool) -> PlainPart | None:
    content_type, params = _content_type(head.group(1).decode("ascii").strip())
    if content_type.startswith("multipart/"):
        return None  # read as a nested structure by the general reader
    charset = next((v for k, v in params if k == "charset"), None)
    if not decode:  # a check's walk: the label is not read, as a label never fails a reading (reads_plain)
        return PlainPart(None, None, content_type, charset, b"")
    label, _warnings = decode_words(head.group(3).replace(b"\r\n ", b"").decode("ascii"))
    label = _COMMENT_START.sub("", _COMMENT_END.sub("", label)).strip()
    content_location = label or None
    location = resolve_uri(THISMESSAGE, content_location) if content_location else None
    start = head.end()
    if head.group(2) == b"quoted-printable":
        with memoryview(data) as whole, whole[start:body_end] as body:
            return PlainPart(location, content_location, content_type, charset, binascii.a2b_qp(body))
    eq = data.find(b"=", start, body_end)
    if eq >= 0 and _B64_AFTER_PAD.search(data, eq, body_end):
        return None  # each padded run decoded, with a warning
    with memoryview(data) as whole, whole[start:body_end] as body:
        try:
            decoded = binascii.a2b_base64(body)
        except binascii.Error:
            return None  # repaired, with a warning
    return PlainPart(location, content_location, content_type, charset, decoded)
