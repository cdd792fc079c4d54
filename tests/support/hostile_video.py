"""Hostile video files, written here byte by byte: a WebM (Matroska, its EBML elements) and an MP4 whose sample
tables claim what its octets are not.

From the attack of 2026-11-27 on pdi's video reading (its helpers ``mkv.py`` and ``mp4bomb.py``, rewritten):
the element IDs and layouts are Matroska's (RFC 9559: EBML header ``1A45DFA3``, Segment ``18538067``, Info
``1549A966``, TimecodeScale ``2AD7B1``, Tracks ``1654AE6B``, TrackEntry ``AE``, Cluster ``1F43B675``, Timecode
``E7``, SimpleBlock ``A3``) and ISO/IEC 14496-12's (``stts``, ``stsc``, ``stsz``, ``stco`` boxes).
"""

from __future__ import annotations

import struct


def _element(ident: int, payload: bytes = b"") -> bytes:
    """An EBML element: its ID as written, an 8-octet size, its payload."""
    return ident.to_bytes((ident.bit_length() + 7) // 8, "big") + (len(payload) | (1 << 56)).to_bytes(8, "big") + payload


def _uint(ident: int, value: int) -> bytes:
    return _element(ident, value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def _string(ident: int, text: str) -> bytes:
    return _element(ident, text.encode())


def simple_block(timecode: int, frame: bytes) -> bytes:
    """The payload of a SimpleBlock of track 1 at ``timecode`` (relative to its cluster), a key frame."""
    return b"\x81" + struct.pack(">h", timecode) + b"\x80" + frame


def webm(frames: list[bytes], *, codec: str = "V_MJPEG", width: int = 64, height: int = 48,
         timecode_scale: int = 1_000_000, duration: float | None = None,
         cluster_timecodes: tuple[int, ...] = (0,)) -> bytes:
    """A WebM of one video track of ``codec`` whose clusters (one at each of ``cluster_timecodes``) each hold the
    SimpleBlocks ``frames`` (payloads as :func:`simple_block` makes them)."""
    info = _uint(0x2AD7B1, timecode_scale) + _string(0x4D80, "x") + _string(0x5741, "x")
    if duration is not None:
        info += _element(0x4489, struct.pack(">d", duration))
    video = _uint(0xB0, width) + _uint(0xBA, height)
    track = _element(0xAE, _uint(0xD7, 1) + _uint(0x73C5, 1) + _uint(0x83, 1) + _string(0x86, codec)
                     + _element(0xE0, video))
    blocks = b"".join(_element(0xA3, frame) for frame in frames)
    clusters = b"".join(_element(0x1F43B675, _uint(0xE7, at) + blocks) for at in cluster_timecodes)
    header = _element(0x1A45DFA3, _uint(0x4286, 1) + _uint(0x42F7, 1) + _uint(0x42F2, 4) + _uint(0x42F3, 8)
                      + _string(0x4282, "webm") + _uint(0x4287, 2) + _uint(0x4285, 2))
    return header + _element(0x18538067, _element(0x1549A966, info) + _element(0x1654AE6B, track) + clusters)


def mp4_claiming(samples: int, mp4: bytes) -> bytes:
    """``mp4`` (one video track) with its sample tables rewritten to claim ``samples`` one-octet samples in one
    chunk: a few kilobytes that a demuxer indexes as ``samples`` entries."""

    def box(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I4s", 8 + len(payload), kind) + payload

    def full(kind: bytes, payload: bytes) -> bytes:
        return box(kind, b"\0\0\0\0" + payload)

    def children(start: int, end: int) -> list[tuple[bytes, int, int]]:
        found = []
        while start < end:
            size, kind = struct.unpack(">I4s", mp4[start:start + 8])
            found.append((kind, start, size))
            start += size
        return found

    def rebuilt(start: int, size: int, kind: bytes) -> bytes:
        if kind in (b"moov", b"trak", b"mdia", b"minf"):
            return box(kind, b"".join(rebuilt(s, n, k) for k, s, n in children(start + 8, start + size)))
        if kind == b"stbl":
            stsd = next(mp4[s:s + n] for k, s, n in children(start + 8, start + size) if k == b"stsd")
            return box(b"stbl", stsd + full(b"stts", struct.pack(">III", 1, samples, 1))
                       + full(b"stsc", struct.pack(">IIII", 1, 1, samples, 1))
                       + full(b"stsz", struct.pack(">II", 1, samples)) + full(b"stco", struct.pack(">II", 1, 48)))
        return mp4[start:start + size]

    return b"".join(rebuilt(s, n, k) for k, s, n in children(0, len(mp4)))


def mp4_cover_first(mp4: bytes) -> bytes:
    """``mp4`` (written by ffmpeg with a cover picture: ``udta``'s ``covr`` after the ``trak`` boxes) with ``moov``'s
    ``udta`` moved before its tracks, so that a demuxer meets the cover first and makes it stream 0 (an
    attached picture). ``moov``'s size and every offset into ``mdat`` are unchanged."""
    boxes, at = [], 0
    while at < len(mp4):
        size, kind = struct.unpack(">I4s", mp4[at:at + 8])
        boxes.append((kind, mp4[at:at + size]))
        at += size
    out = []
    for kind, whole in boxes:
        if kind == b"moov":
            inner, at = [], 8
            while at < len(whole):
                size, child = struct.unpack(">I4s", whole[at:at + 8])
                inner.append((child, whole[at:at + size]))
                at += size
            whole = whole[:8] + b"".join(b for k, b in inner if k == b"udta") + b"".join(
                b for k, b in inner if k != b"udta")
        out.append(whole)
    return b"".join(out)
