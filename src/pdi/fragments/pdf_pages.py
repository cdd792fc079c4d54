"""How PDFium's child (:mod:`pdi.fragments.pdf_child`) answers pages' boxes for
:func:`pdi.fragments.pdf.pages_boxes`: the pages' facts as JSON, then each page's boxes as little-endian doubles
(no float is spelt out in decimal), checked as read."""

from __future__ import annotations

import struct
from array import array
from typing import Any

from pdi.errors import IntegrityError

_HEAD = struct.Struct("<Q")


def pages_to_bytes(pages: list[tuple[dict[str, Any], array[float]]]) -> bytes:
    """:func:`pdi.fragments.pdf.read_pages_now`'s pages as the child answers them: their facts as JSON, then each
    page's boxes as little-endian doubles (no float is spelt out in decimal)."""
    import json

    facts = json.dumps([page for page, _ in pages]).encode("utf-8", "surrogatepass")
    return _HEAD.pack(len(facts)) + facts + b"".join(_little_endian(boxes) for _, boxes in pages)


def _little_endian(boxes: array[float]) -> bytes:
    import sys

    if sys.byteorder == "little":
        return boxes.tobytes()
    copy = array("d", boxes)
    copy.byteswap()
    return copy.tobytes()


def pages_from_bytes(data: bytes) -> list[tuple[dict[str, Any], array[float]]]:
    """What :func:`pages_to_bytes` wrote, checked: four boxes' floats for each character of each page's text."""
    import json
    import sys

    (size,) = _HEAD.unpack_from(data)
    try:
        facts = json.loads(data[_HEAD.size:_HEAD.size + size].decode("utf-8", "surrogatepass"))
    except ValueError as error:
        raise IntegrityError(f"PDFium's child answered pages that are not JSON: {error}") from None
    at = _HEAD.size + size
    found: list[tuple[dict[str, Any], array[float]]] = []
    for page in facts:
        length = 32 * len(page["text"])
        boxes = array("d")
        boxes.frombytes(data[at:at + length])
        if len(boxes) != 4 * len(page["text"]):
            raise IntegrityError("PDFium's child answered fewer boxes than characters")
        if sys.byteorder == "big":
            boxes.byteswap()
        found.append((page, boxes))
        at += length
    if at != len(data):
        raise IntegrityError("PDFium's child answered more than its pages")
    return found
