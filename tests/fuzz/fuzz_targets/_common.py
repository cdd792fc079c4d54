"""Helpers the targets share: how an input's bytes become text and fields."""

from __future__ import annotations


def text_of(data: bytes) -> str:
    """The input as text: UTF-8, with each byte that is not UTF-8 as a lone surrogate (U+DC80-U+DCFF)."""
    return data.decode("utf-8", "surrogateescape")


def fields(data: bytes, n: int) -> list[bytes]:
    """The input cut at its first ``n - 1`` NUL bytes into ``n`` fields (missing ones empty); the last may hold NULs."""
    parts = data.split(b"\x00", n - 1)
    return parts + [b""] * (n - len(parts))
