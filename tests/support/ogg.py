"""Ogg pages written over by tests: their checksum made again."""

from __future__ import annotations


def ogg_crc(page: bytes) -> int:
    """An Ogg page's checksum (RFC 3533 §6: CRC-32, generator 0x04C11DB7, initial value 0, not reflected), of the
    page with its checksum field zeroed."""
    crc = 0
    for octet in page:
        crc ^= octet << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return crc
