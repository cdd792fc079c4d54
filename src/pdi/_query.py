"""The ``key=value`` pairs of a query string or an ``application/x-www-form-urlencoded`` body, read strictly.

``+`` is a space and each ``%XX`` an octet; each key and value must be UTF-8 once its escapes are read, where
Starlette's and the standard library's default reading put U+FFFD in place of octets that are not (an
identifier the client never sent). Each caller says what is wrong in its own protocol's words (:class:`NotUTF8`).
"""

from __future__ import annotations

from urllib.parse import unquote_plus


class NotUTF8(ValueError):
    """A pair whose key or value is not UTF-8 once its %-escapes are read: its key (as far as it reads, U+FFFD for
    the rest) and the pair as sent."""

    def __init__(self, name: str, part: str) -> None:
        super().__init__(name)
        self.name, self.part = name, part


def query_pairs(text: str) -> list[tuple[str, str]]:
    """The pairs of ``text`` (empty pieces between ``&`` passed over), in order; :class:`NotUTF8` for the first
    that is not UTF-8."""
    pairs: list[tuple[str, str]] = []
    for part in text.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        try:
            pairs.append((unquote_plus(key, errors="strict"), unquote_plus(value, errors="strict")))
        except UnicodeDecodeError:
            raise NotUTF8(unquote_plus(key, errors="replace"), part) from None
    return pairs
