"""Whether two MHTML files hold the same page: captures compared by their parts' content.

A page is its parts: what each one is labelled with, its type, and its bytes.
The file around them is not the page, and a browser writes it anew each time:
Chromium's ``Page.captureSnapshot`` of an unchanged page differs from the
last one in its ``Date`` header, its random boundary, and the Content-IDs it
gives frames and the style sheets it makes of ``<style>`` elements
(``frame-<32 hex digits>@mhtml.blink``, ``css-<UUID>@mhtml.blink``), which the
page's HTML refers to as ``cid:`` URLs (RFC 2557 §8.3, RFC 2392).

:func:`content_digest` hashes, for every part in file order, its resolved
Content-Location, its ``Content-Type`` and ``charset=``, and its bytes with
the transfer encoding removed, and which part is the root, after replacing
every Content-ID the file defines (by a part's ``Content-ID`` or a
``Content-Location: cid:…``) wherever it occurs with its ordinal, by the
order in which the parts define them: two files whose ids differ only in
their spelling give the same digest, and a page whose parts, labels or
structure changed gives another. Top-level headers, header order and
folding, the boundary and the transfer encodings are not part of it.

Pure: bytes in, a digest or a truth value out.
"""

from __future__ import annotations

import hashlib
import re

from pdi.errors import PDIError
from pdi.mhtml.model import Aggregate, parse

__all__ = ["content_digest", "same_content"]


def _ids(aggregate: Aggregate) -> list[str]:
    """The Content-IDs the parts define, in the order they define them (no ``<>``, no ``cid:``)."""
    ids: list[str] = []
    for part in aggregate.parts:
        location = part.content_location or ""
        for cid in (part.content_id, location[4:] if location[:4].lower() == "cid:" else None):
            if cid and cid not in ids:
                ids.append(cid)
    return ids


def content_digest(aggregate: Aggregate) -> str:
    """The SHA-256 (hex) of what the page's parts hold, whatever their Content-IDs are spelled."""
    ids = _ids(aggregate)
    ordinal = {cid.encode("utf-8"): f"\0cid {n}\0".encode("ascii") for n, cid in enumerate(ids)}
    # Longest first, so an id that begins another never replaces part of it.
    pattern = (
        re.compile(b"|".join(re.escape(i) for i in sorted(ordinal, key=len, reverse=True)))
        if ordinal
        else None
    )

    def unspelled(data: bytes) -> bytes:
        return data if pattern is None else pattern.sub(lambda m: ordinal[m.group(0)], data)

    digest = hashlib.sha256()

    def field(value: bytes) -> None:
        digest.update(len(value).to_bytes(8, "big"))
        digest.update(value)

    field(str(aggregate.parts.index(aggregate.root) if aggregate.root in aggregate.parts else -1).encode())
    for part in aggregate.parts:
        field(unspelled((part.location or "").encode("utf-8")))
        field(unspelled((part.content_id or "").encode("utf-8")))
        field(part.content_type.encode("utf-8"))
        field((part.charset or "").lower().encode("utf-8"))
        field(hashlib.sha256(unspelled(part.data)).digest())
    return digest.hexdigest()


def same_content(a: bytes, b: bytes) -> bool:
    """Whether two MHTML files hold the same page (:func:`content_digest`); equal bytes always do.

    A file that cannot be read (a :class:`~pdi.errors.PDIError`: it does not parse, or it is past a
    limit) holds no page to compare: it is the same as no other file. So an unreadable version kept
    before is no reason to refuse the next capture of the page; it is simply not that page.
    """
    if a == b:
        return True
    try:
        return content_digest(parse(a)) == content_digest(parse(b))
    except PDIError:
        return False
