"""Conditional requests and one byte range, as N2R answers them (RFC 9110 §13, §14).

An N2R answer for a name with a format never changes, so its entity tag is
known from the catalog alone (:func:`entity_tag`); ``If-None-Match``
(:func:`tag_matches`), ``If-Match`` (:func:`if_match_holds`, for the
annotation server's changes), ``If-Range`` (:func:`if_range_holds`) and a single
``Range`` (:func:`byte_range`) are read here, for the resolver's handlers and
for the cache of whole answers (:mod:`pdi.server.process.cache`) alike.
"""

from __future__ import annotations

import re

from pdi.server.http.problems import problem_body

#: What :func:`byte_range` answers for a range that selects no byte of the body.
UNSATISFIABLE = (-1, -1)

_ENTITY_TAG = re.compile(r'(?:W/)?"([\x21\x23-\x7e\x80-\xff]*)"')


def unsatisfiable(range_field: str, length: int) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The header fields and body of the ``416`` of a ``Range`` that selects nothing of ``length`` octets (RFC 9110
    §15.5.17): ``Content-Range: bytes */LENGTH``, an RFC 9457 problem saying so, and ``Cache-Control: no-store``,
    since a cache does not key its answers on ``Range`` (RFC 9111 §4) and must not give this one to another request."""
    said = " ".join(range_field.split())[:200]
    body = problem_body(416, f"the Range {said} selects none of the {length} octets (RFC 9110 §14.1.2)")
    return [(b"content-range", b"bytes */%d" % length), (b"cache-control", b"no-store"),
            (b"content-type", b"application/problem+json"), (b"content-length", b"%d" % len(body))], body


#: Fields of a whole answer a ``416`` leaves out: it is no memento, and it is not kept (:func:`unsatisfiable`).
NOT_OF_416 = frozenset({b"cache-control", b"memento-datetime", b"link", b"content-length", b"content-type"})


def entity_tag(sha256: str, name: str) -> str:
    """A strong entity tag for what a name resolves to: the SHA-256 of the stored bytes, and the fragment.

    The stored bytes never change under a name, and a fragment always selects
    the same bytes from them, so the tag is known from the catalog alone.
    """
    fragment = name.split("#", 1)[1] if "#" in name else ""
    return f'"{sha256}{"#" + fragment if fragment else ""}"'


def tag_matches(field: str, tag: str) -> bool:
    """``If-None-Match``: ``*`` or a list holding ``tag`` (weak comparison, RFC 9110 §13.1.2)."""
    if field == tag:  # the usual field: the one tag a cache kept
        return True
    if field.strip() == "*":
        return True
    # entity tags are quoted and may hold commas (a fragment's), so the list is read tag by tag
    return tag in (f'"{quoted}"' for quoted in _ENTITY_TAG.findall(field))


def if_match_holds(field: str, tag: str) -> bool:
    """``If-Match`` (RFC 9110 §13.1.1): ``*``, or a list holding ``tag`` by strong comparison (a weak tag never
    matches: §8.8.3.2)."""
    if field.strip() == "*":
        return True
    return any(not found[0].startswith("W/") and f'"{found[1]}"' == tag for found in _ENTITY_TAG.finditer(field))


def if_range_holds(field: str | None, tag: str) -> bool:
    """``If-Range`` (RFC 9110 §13.1.5): absent, or the current entity tag (strong comparison)."""
    return field is None or field.strip() == tag


def byte_range(field: str | None, length: int) -> tuple[int, int] | None:
    """The one byte range ``Range: bytes=…`` asks for, inclusive, within ``length`` bytes (RFC 9110 §14.1.2).

    ``None`` means: answer the whole body (no ``Range``, another unit, a
    malformed one, or several ranges, which a server may ignore; or the
    last N bytes of an empty body, which §14.1.1 calls satisfiable but no
    ``206`` can say, as nginx answers it);
    :data:`UNSATISFIABLE` means ``416``.
    """
    if field is None:
        return None
    unit, _, spec = field.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first_text, dash, last_text = spec.strip().partition("-")
    if not dash or not _digits_or_empty(first_text) or not _digits_or_empty(last_text):
        return None
    # A position of any number of digits is a position (RFC 9110 §14.1.1 bounds none); one past 19 significant
    # digits lies beyond every body, so it is read as HUGE, not as an int (a 64 KB field would exceed Python's
    # bound on converting digits, and no body is that long).
    first_digits, last_digits = first_text.lstrip("0") or "0", last_text.lstrip("0") or "0"
    if first_text == "":  # a suffix: the last N bytes
        if last_text == "":
            return None
        if last_digits == "0":
            return UNSATISFIABLE
        if length == 0:  # satisfiable (RFC 9110 §14.1.1), but no Content-Range spells it: the whole, empty body
            return None
        return max(0, length - _position(last_digits)), length - 1
    if last_text != "" and (len(last_digits), last_digits) < (len(first_digits), first_digits):
        return None  # invalid: ignore it
    first = _position(first_digits)
    if first >= length:
        return UNSATISFIABLE
    last = length - 1 if last_text == "" else min(_position(last_digits), length - 1)
    return first, last


#: What a position of more than 19 significant digits is read as: past the end of any body.
_HUGE = 10**19


def _digits_or_empty(text: str) -> bool:
    return text == "" or (text.isascii() and text.isdigit())


def _position(digits: str) -> int:
    """A position's digits, leading zeros dropped, as a number; :data:`_HUGE` for one longer than any body."""
    return int(digits) if len(digits) <= 19 else _HUGE
