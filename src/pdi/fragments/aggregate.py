"""Fragments of an aggregate (``multipart/related``, RFC 2557 MHTML): those of its root part.

**Decision** (PDI-GRAMMAR.md is silent on aggregates): ``char``, ``line``,
``elt`` and ``name`` on an aggregate select in its root part (RFC 2557 §5:
the start part, :attr:`pdi.mhtml.Aggregate.root`) exactly what they select
in that part alone: its body with the transfer encoding removed, read in the
charset a browser reads it in (:attr:`pdi.mhtml.Part.encoding`: BOM,
``charset=``, ``<meta>``, WHATWG), positions over its CRLF-canonical text.
So a capture's page can be cited by a passage of its text, as the page
deposited alone would be, and the full-text index (:mod:`pdi.archive.search`)
names its matches so. ``data`` is the selected octets of the root part (in
that charset); the ranges' octet offsets are into the root part's body, not
into the aggregate (a reader of the stored octets checks the whole
aggregate). ``byte`` stays the octets of the aggregate as stored.

Pure: no I/O beyond reading the stream handed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import BinaryIO

from pdi.errors import UnsupportedError
from pdi.fragments.results import Buffer, FragmentResult

#: The schemes evaluated on an aggregate's root part.
SCHEMES = ("char", "line", "elt", "name")


def _root(data: Buffer | BinaryIO) -> tuple[bytes, str, str]:
    """The root part's body, media type and encoding."""
    from pdi.mhtml import parse

    source: object = data
    if not isinstance(source, (bytes, bytearray, memoryview)) and not hasattr(source, "read"):
        source = bytes(data)  # type: ignore[arg-type]  # a buffer of another type than these, untyped
    aggregate = parse(source)  # type: ignore[arg-type]  # a memory map has read(): parse reads it as a stream
    root = aggregate.root
    return root.data, root.content_type, root.encoding


def evaluate_aggregate(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None
) -> FragmentResult:
    """``scheme=positions`` on the root part of the aggregate ``data`` (see the module docstring)."""
    from pdi import fragments
    from pdi.fragments.markup import markup_kind

    if scheme not in SCHEMES:
        raise UnsupportedError(f"no fragment scheme {scheme!r} on an aggregate: {', '.join(SCHEMES)} or byte")
    body, part_type, encoding = _root(data)
    if not (part_type.startswith("text/") or markup_kind(part_type) is not None):
        raise UnsupportedError(
            f"the aggregate's root part is {part_type}: {scheme} fragments select text, and it has none"
        )
    result = fragments.evaluate(scheme, positions, body, media_type=part_type, charset=encoding)
    return dataclasses.replace(result, scheme=scheme)


def root_text(data: Buffer | BinaryIO) -> tuple[str | None, str]:
    """What the full-text index reads of an aggregate: the kind of its root part's text and that text, CRLF-canonical.

    The kind is ``"html"``, ``"xml"`` or ``"text"`` (:func:`pdi.archive.search.search_kind`'s),
    or ``None`` (and no text) for a root part without text. The text is what
    :func:`evaluate_aggregate` counts ``char`` positions in.
    """
    from pdi.fragments.markup import document_charset, markup_kind
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import to_crlf

    body, part_type, encoding = _root(data)
    kind = markup_kind(part_type)
    if kind == "html":
        found = "html"
    elif kind in ("xml", "xhtml"):
        found = "xml"
    elif part_type.startswith("text/"):
        found = "text"
    else:
        return None, ""
    return found, to_crlf(TextIndex(body, document_charset(body, part_type, encoding)).whole_text())
