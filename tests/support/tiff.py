"""TIFFs written by hand for the tests (TIFF 6.0 §2): chains of image file directories of one pixel each."""

from __future__ import annotations

import struct


def tiff_chain(pages: int, *, loop: bool = False, order: str = "<", magic: bytes | None = None,
               compressions: tuple[int, ...] = ()) -> bytes:
    """``pages`` directories of one 1×1 grey pixel, each naming the next (the last naming the first when
    ``loop``), in byte ``order``, under ``magic`` (default: the valid header of that order); with
    ``compressions``, page n's Compression tag (259) is ``compressions[n]``."""
    tags = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, 8), (279, 4, 1, 1)]
    if compressions:
        tags.insert(3, (259, 3, 1, 1))
    size = 2 + 12 * len(tags) + 4
    head = magic or (b"II*\0" if order == "<" else b"MM\0*")
    out = bytearray(head + struct.pack(order + "I", 9) + b"\x7f")
    for number in range(pages):  # the one pixel at 8; the first directory at 9
        out += struct.pack(order + "H", len(tags))
        for tag, kind, count, value in tags:
            value = compressions[number] if tag == 259 else value
            field = struct.pack(order + "H", value) + b"\0\0" if kind == 3 else struct.pack(order + "I", value)
            out += struct.pack(order + "HHI", tag, kind, count) + field
        last = number == pages - 1
        out += struct.pack(order + "I", 9 if loop and last else 0 if last else 9 + (number + 1) * size)
    return bytes(out)
