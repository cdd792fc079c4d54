"""ASCII case, as the protocols and markup pdi reads define it (HTML's tokenizer, URI schemes and hosts, reserved
names): only A to Z. ``str.lower`` also makes U+212A KELVIN SIGN a ``k`` and U+0130 ``İ`` two characters, which
no browser or parser of these formats does, and which shifts offsets."""

from __future__ import annotations

from typing import Final

__all__ = ["ascii_lower"]

_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """``text`` with A to Z in lower case and every other character as it is (one character for one)."""
    return text.translate(_ASCII_LOWER)
