"""Proactive content negotiation: the ``Accept`` field of RFC 9110 §12.5.1 (pure).

:func:`parse_accept` reads the media ranges and their weights; a range that
is not well formed is left out (RFC 9110 §12.5.1 lets a server ignore a
field it cannot read, and a client's typo must not turn a resource away);
:func:`preference` is how much a client wants one media type: the weight of
the most specific range that matches it (``text/plain`` over ``text/*``
over ``*/*``, parameters of the range ignored), and that range's
specificity. :func:`choose` picks among offered types.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: token of RFC 9110 §5.6.2
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
#: OWS of RFC 9110 §5.6.3: spaces and tabs, and nothing else (not a NO-BREAK SPACE, which Latin-1 reads of 0xA0)
_OWS = r"[ \t]*"
#: quoted-string of RFC 9110 §5.6.4: a backslash quotes the character after it (quoted-pair)
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_RANGE = re.compile(rf"{_OWS}({_TOKEN})/({_TOKEN}){_OWS}((?:;{_OWS}{_TOKEN}{_OWS}={_OWS}(?:{_TOKEN}|{_QUOTED}){_OWS})*)",
                    re.DOTALL)
_PARAM = re.compile(rf";{_OWS}({_TOKEN}){_OWS}={_OWS}(?:({_QUOTED})|({_TOKEN}))", re.DOTALL)
_QUOTED_PAIR = re.compile(r"\\(.)", re.DOTALL)
_WEIGHT = re.compile(rf"q{_OWS}={_OWS}(0(?:\.[0-9]{{0,3}})?|1(?:\.0{{0,3}})?){_OWS}$", re.IGNORECASE)
#: More media ranges than any client sends: the rest are not read.
MAX_RANGES = 64


@dataclass(frozen=True)
class MediaRange:
    """One media range of an ``Accept`` field, lower-cased, with its weight (``q``, 0 to 1)."""

    type: str
    subtype: str
    q: float
    #: its ``profile`` parameter, unquoted (a space-separated list of IRIs: the JSON-LD profiles of RFC 6906,
    #: which the Web Annotation Protocol §3 negotiates on), if it has one
    profile: str | None = None

    def matches(self, media_type: str) -> int:
        """How specifically this range matches ``media_type`` (0: not at all; 1 ``*/*``, 2 ``type/*``, 3 exactly)."""
        major, _, minor = media_type.split(";", 1)[0].strip(" \t").lower().partition("/")
        if self.type == "*" and self.subtype == "*":
            return 1
        if self.type == major and self.subtype == "*":
            return 2
        if self.type == major and self.subtype == minor:
            return 3
        return 0


def parse_accept(value: str | None) -> list[MediaRange]:
    """The media ranges of an ``Accept`` field (``None`` or empty: none, which means anything)."""
    if not value:
        return []
    ranges: list[MediaRange] = []
    for piece in _elements(value):
        found = _RANGE.fullmatch(piece)
        if found is None:
            continue
        q = 1.0
        weighted = False
        profile = None
        for name, quoted, bare in _PARAM.findall(found[3]):
            if name.lower() == "q":
                weight = _WEIGHT.fullmatch(f"q={bare}")
                if weight is None:
                    break  # a weight that is not one (a quoted one neither): the range is not read
                q, weighted = float(weight[1]), True
            elif name.lower() == "profile" and not weighted and profile is None:
                # the media type's own parameters come before its weight (RFC 9110 §12.5.1)
                profile = _QUOTED_PAIR.sub(r"\1", quoted[1:-1]) if quoted else bare
        else:
            major, minor = found[1].lower(), found[2].lower()
            if major == "*" and minor != "*":
                continue  # "*/plain" is no media range
            ranges.append(MediaRange(major, minor, q, profile))
    return ranges


def _elements(value: str) -> list[str]:
    """The first :data:`MAX_RANGES` elements of a list field (:func:`list_elements`)."""
    return list_elements(value, MAX_RANGES)


def list_elements(value: str, most: int | None = None) -> list[str]:
    """The elements of a list field (RFC 9110 §5.6.1), the first ``most`` of them: cut at each comma outside a quoted
    string (a profile's IRIs may hold one: ``profile="https://a.example/x,y"``), where a backslash quotes the
    character after it. A quote never closed quotes nothing: the commas after it still cut (a typo in one element
    leaves the others read). Read in one pass (:func:`_closing_quotes`): reading on after each quote never closed
    as if it were none was quadratic, a minute of a worker's CPU for an ``Accept`` of 30,000 octets of ``"\\``."""
    if '"' not in value:
        return value.split(",") if most is None else value.split(",", most)[:most]
    closing = _closing_quotes(value)
    pieces: list[str] = []
    start = at = 0
    while at < len(value) and (most is None or len(pieces) < most):
        c = value[at]
        if c == '"' and closing[at + 1] >= 0:
            at = closing[at + 1] + 1  # a quoted string: its commas cut nothing
            continue
        if c == ",":
            pieces.append(value[start:at])
            start = at + 1
        at += 1
    if most is None or len(pieces) < most:
        pieces.append(value[start:])
    return pieces


def _closing_quotes(value: str) -> list[int]:
    """For each position of ``value`` (and the two past its end), where a quoted string read from there on (its
    opening quote before it) closes: the position of its closing quote, a backslash quoting the character after
    it; ``-1`` when it never closes. Worked out from the end, each position from those after it."""
    closing = [-1] * (len(value) + 2)
    for at in range(len(value) - 1, -1, -1):
        c = value[at]
        closing[at] = at if c == '"' else closing[at + 2] if c == "\\" else closing[at + 1]
    return closing


def preference(ranges: Sequence[MediaRange], media_type: str) -> tuple[float, int]:
    """``(q, specificity)`` of ``media_type`` under ``ranges``: the most specific matching range decides.

    No ranges (no ``Accept``): ``(1.0, 1)``, as ``*/*``. No match: ``(0.0, 0)``.
    """
    if not ranges:
        return 1.0, 1
    best: tuple[int, float] = (0, 0.0)
    for each in ranges:
        how = each.matches(media_type)
        if how > best[0] or (how == best[0] and how and each.q > best[1]):
            best = (how, each.q)
    return (best[1], best[0]) if best[0] else (0.0, 0)


def choose(ranges: Sequence[MediaRange], offered: Sequence[str]) -> int | None:
    """The index of the offered media type the client prefers, or ``None`` when none is acceptable.

    Highest weight first, then the more specific match; of equals, the first offered.
    """
    best: int | None = None
    best_key = (0.0, 0)
    for i, media_type in enumerate(offered):
        key = preference(ranges, media_type)
        if key[0] > 0 and key > best_key:
            best, best_key = i, key
    return best
