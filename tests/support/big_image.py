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
