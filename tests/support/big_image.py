"""Images larger than Pillow opens, made cheaply for the tests (PNG §11.2.2: IHDR, IDAT, IEND, each chunk's CRC-32).

A PNG of one grey level is written row by row through zlib (each row its filter octet 0, then ``width`` equal
samples): 250 million pixels compress to a few hundred kilobytes in about a second, and no image of them is ever
held, by Pillow or here.
"""

from __future__ import annotations

import struct
import zlib


def chunk(kind: bytes, data: bytes) -> bytes:
    """A PNG chunk: its length, type, data and the CRC-32 of its type and data (PNG §5.3)."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def grey_png(width: int, height: int, level: int = 0x80) -> bytes:
    """A real ``width`` × ``height`` 8-bit grey PNG, every pixel ``level``: its rows compressed one by one."""
    packer = zlib.compressobj(9)
    row = b"\0" + bytes([level]) * width
    compressed = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", compressed) + chunk(b"IEND", b""))


#: The side of the squares of :func:`pattern_png`'s checkerboard (pixels).
SQUARE = 5000


def pattern_value(x: object, y: object) -> object:
    """The grey level :func:`pattern_png` gives pixel (``x``, ``y``) (numbers or numpy arrays of them): 40 or 200 by
    a checkerboard of :data:`SQUARE`-pixel squares (the lower right of the first is 200), plus ``(x + 2y) mod 16``,
    so that every pixel of a region says where it came from. The oracle of a crop: worked out, not decoded."""
    import numpy as np

    return np.where(((np.asarray(x) // SQUARE) + (np.asarray(y) // SQUARE)) % 2 == 1, 200, 40) + (
        np.asarray(x) + 2 * np.asarray(y)) % 16


def pattern_png(width: int, height: int) -> bytes:
    """A real ``width`` × ``height`` 8-bit grey PNG of :func:`pattern_value`'s levels, rows filtered by none (0).
    A row depends on ``y`` only through ``y // SQUARE`` and ``y mod 8``: the few distinct rows are made once, and
    250 million pixels are written in a few seconds (zlib, level 1)."""
    import numpy as np

    xs = np.arange(width)
    rows: dict[tuple[int, int], bytes] = {}
    packer = zlib.compressobj(1)
    parts = []
    for y in range(height):
        key = ((y // SQUARE) % 2, y % 8)
        row = rows.get(key)
        if row is None:
            row = rows[key] = b"\0" + np.asarray(pattern_value(xs, y), dtype=np.uint8).tobytes()
        parts.append(packer.compress(row))
    parts.append(packer.flush())
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b""))


def write_grey_tiff(path: str, width: int, height: int, rows_per_strip: int = 64) -> int:
    """Write a real ``width`` × ``height`` 8-bit grey TIFF, uncompressed (TIFF 6.0 §2, §8), to ``path``: row ``y``
    all of level ``y mod 251``, in strips of ``rows_per_strip`` rows, and its one image file directory *after* the
    pixels, at the end of the file (as many scanners write it, so a reader must seek to it). Written a strip at a
    time: the file is as large as its pixels (``width × height`` octets and a few hundred more), never held.
    Returns its size in octets."""
    strips = -(-height // rows_per_strip)
    offsets, counts = [], []
    with open(path, "wb") as out:
        out.write(b"II*\0" + struct.pack("<I", 0))  # the directory's offset, written once it is known
        at = 8
        for s in range(strips):
            rows = range(s * rows_per_strip, min(height, (s + 1) * rows_per_strip))
            strip = b"".join(bytes([y % 251]) * width for y in rows)
            out.write(strip)
            offsets.append(at)
            counts.append(len(strip))
            at += len(strip)
        at += at & 1  # a directory begins on a word boundary (§2)
        out.write(b"\0" * (at - out.tell()))
        offsets_at = at
        counts_at = offsets_at + 4 * strips
        directory = counts_at + 4 * strips
        out.write(struct.pack(f"<{strips}I", *offsets) + struct.pack(f"<{strips}I", *counts))
        tags = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
                (273, 4, strips, offsets_at), (277, 3, 1, 1), (278, 4, 1, rows_per_strip),
                (279, 4, strips, counts_at)]
        out.write(struct.pack("<H", len(tags)))
        for tag, kind, count, value in tags:
            field = struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)
            out.write(struct.pack("<HHI", tag, kind, count) + field)
        out.write(struct.pack("<I", 0))
        size = out.tell()
        out.seek(4)
        out.write(struct.pack("<I", directory))
    return size
