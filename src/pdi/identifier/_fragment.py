"""Fragment syntax (draft §1.2.3 and §3; PDI-GRAMMAR.md §3), checked against the format.

Syntax only: evaluating a fragment against bytes is :mod:`pdi.fragments`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from pdi import formats
from pdi._wording import clipped
from pdi.errors import ParseError, UnsupportedError
from pdi.identifier._syntax import (
    _NAME_RE,
    _NAME_SAFE,
    _RESERVED,
    _SCHEME_RE,
    _SPEC_ITEM_RE,
    FRAGMENT_SCHEMES,
    Position,
    _escape_name,
    _fail,
    _first_bad,
    _number,
    _percent_decode,
    _unescaped,
    _Warning,
)

# Fragment is made at its first instance (pdi._later): a name without a fragment makes none
if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass


def token_lookup(lookup: Callable[[str], str], token: str) -> str | None:
    """``lookup(token)`` (a format token's media type, its default fragment scheme), or ``None`` for the
    wildcard ``*`` and for a token that cannot be resolved (a well-formed token pdi does not know)."""
    if token == "*":
        return None
    try:
        return lookup(token)
    except UnsupportedError:
        return None


def _position_text(pos: Position, scheme: str | None) -> str:
    if isinstance(pos, bool):  # pragma: no cover - bool is not a position; guarded by callers
        raise ParseError(f"not a fragment position: '{clipped(str(pos))}'", rule="position")
    if isinstance(pos, int):
        return str(pos)
    if isinstance(pos, str):
        return _escape_name(pos, digits_ok=scheme in _WORDS)
    return "(" + ",".join(str(item) for item in pos) + ")"


def _check_position_value(pos: object) -> Position:
    """Validate a position handed in by a caller (not parsed from text)."""
    if isinstance(pos, bool):
        raise ParseError(f"not a fragment position: '{clipped(str(pos))}'", rule="position")
    if isinstance(pos, int):
        if pos < 0:
            raise ParseError(f"a position is never negative: {pos}", rule="position")
        return pos
    if isinstance(pos, str):
        if not pos:
            raise ParseError("an element name is never empty", rule="element-name")
        return pos
    if isinstance(pos, tuple) and pos:
        if len(pos) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in pos):
            if pos[0] < 0 or pos[1] < 0:
                raise ParseError(f"a coordinate is never negative: {pos}", rule="2-dim-coordinate")
            return (int(pos[0]), int(pos[1]))
        if all(isinstance(v, str) and _SPEC_ITEM_RE.fullmatch(v) for v in pos):
            return tuple(str(v) for v in pos)
    raise ParseError(f"not a fragment position: '{clipped(str(pos))}'", rule="position")


# ---------------------------------------------------------------------------
# Fragments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Fragment:
    """A fragment specifier (draft §1.2.3 line 174, §3; PDI-GRAMMAR.md §3).

    ``scheme`` is lower-cased, ``None`` when the text omits it (the format's
    default scheme applies, see :meth:`effective_scheme`). ``positions`` are
    typed as :data:`Position` says; element names are %-decoded.
    """

    scheme: str | None
    positions: tuple[Position, ...]

    @classmethod
    def parse(cls, text: str, *, format: str | None = None) -> Fragment:
        """Parse the text after ``#``; with ``format`` (a token), check it against the format."""
        if not isinstance(text, str):
            raise ParseError(f"not a fragment: '{clipped(str(text))}'", rule="fragment-specifier")
        frag, at = _parse_fragment(text, text, 0)
        if format is not None:
            if format != "*":
                formats.check_token(format)
            _check_fragment(frag, format, text, 0, [], at)
        return frag

    def __str__(self) -> str:
        body = ",".join(_position_text(p, self.scheme) for p in self.positions)
        return f"{self.scheme}={body}" if self.scheme is not None else body

    def effective_scheme(self, format: str | None) -> str:
        """The scheme in force: the written one, else the format's default.

        Raises :class:`UnsupportedError` when the scheme is omitted and the format
        has none (or is unknown, or absent).
        """
        if self.scheme is not None:
            return self.scheme
        if format is None or format == "*":
            raise UnsupportedError("a fragment without a scheme needs a format to name its default")
        return formats.default_fragment_scheme(format)

    def canonical(self, format: str | None = None) -> Fragment:
        """The canonical fragment (§2.2): explicit default scheme, image frame 0 dropped.

        Where the format is unknown, the omitted scheme stays omitted.
        """
        scheme = self.scheme
        if scheme is None and format is not None:
            scheme = token_lookup(formats.default_fragment_scheme, format)
        positions = self.positions
        if (
            scheme in ("rect", "crop")
            and len(positions) == 3
            and isinstance(positions[2], int)
            and positions[2] == 0
        ):
            positions = positions[:2]
        if scheme == self.scheme and positions is self.positions:
            return self
        return Fragment(scheme, positions)

    @classmethod
    def of(cls, scheme: str | None, *positions: object, format: str | None = None) -> Fragment:
        """Build a fragment from values (``Fragment.of("char", 37, 51)``), checked like parse."""
        if scheme is not None and (
            not isinstance(scheme, str) or _SCHEME_RE.fullmatch(scheme + "=") is None
        ):
            raise ParseError(f"invalid fragment scheme '{clipped(str(scheme))}'", rule="fragment-scheme")
        checked = tuple(_check_position_value(p) for p in positions)
        if not checked:
            raise ParseError("a fragment has at least one position", rule="fragment-specifier")
        frag = Fragment(scheme.lower() if scheme is not None else None, checked)
        # Round-trip through the text, so a value is exactly what parsing would give.
        return Fragment.parse(str(frag), format=format)


def _split_top(body: str) -> list[tuple[str, int]]:
    """Split at commas outside parentheses; each piece with its offset in ``body``."""
    if "(" not in body and ")" not in body:
        out: list[tuple[str, int]] = []
        at = 0
        for piece in body.split(","):
            out.append((piece, at))
            at += len(piece) + 1
        return out
    pieces: list[tuple[str, int]] = []
    depth = 0
    start = 0
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth <= 0:
            pieces.append((body[start:i], start))
            start = i + 1
            depth = 0
    pieces.append((body[start:], start))
    return pieces


#: The schemes whose positions are numbers written in digits (a count of characters, lines, octets, start tags or
#: time units).
_COUNTED = frozenset({"char", "line", "byte", "elt", "sec", "msec"})
#: The schemes whose positions are names or words, digits too: HTML's ``name``, RFC 8118's ``nameddest`` and
#: ``search`` (found by a property test: ``#nameddest=12`` was the number 12, refused as no destination name, and
#: ``#search=007`` looked for ``7``).
_WORDS = frozenset({"name", "nameddest", "search"})


#: What a name-like position is, in a refusal's words, by its scheme (else an element name, the grammar's rule).
_NAMED = {"nameddest": "a named destination (nameddest=)", "search": "a word of search=",
          "name": "an element name (name=)"}


def _unwritten(ch: str, what: str) -> str:
    """Why ``ch``, not a urn-char, is refused in ``what``: a PDI is ASCII, and any other character is written as its
    UTF-8 octets %-escaped (PDI-GRAMMAR.md §1: ``element-name``, urn-chars %-decoded as UTF-8), said with that
    spelling (found by a probe, 2026-12-01: ``nameddest=Café`` was "character 'é' is not allowed in an element
    name", which named neither the destination nor the way to write it)."""
    try:
        spelt = "".join(f"%{octet:02X}" for octet in ch.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate (a command line's octets not UTF-8): no character to spell
        return (f"U+{ord(ch):04X} in {what} is no character (a lone surrogate, as of octets that are not UTF-8):"
                " write its UTF-8 octets %-escaped")
    if ch.isascii():
        return f"character {ch!r} in {what} must be %-escaped, {spelt}"
    return f"character {ch!r} in {what} must be %-escaped as its UTF-8 octets, {spelt}: a PDI is written in ASCII"


def _parse_position(raw: str, scheme: str | None, text: str, offset: int) -> Position:
    if not raw:
        raise _fail("empty fragment position", text, offset, "position")
    first = raw[0]
    if first == "(":
        if not raw.endswith(")") or raw.count("(") != 1 or raw.count(")") != 1:
            # at the second '(', else just after the first ')', else at the end, where a ')' is missing
            close = raw.find(")")
            bad = raw.find("(", 1)
            if bad < 0 or 0 <= close < bad:
                bad = close + 1 if close >= 0 else len(raw)
            raise _fail(f"unbalanced parentheses in position '{clipped(str(raw))}'", text, offset + bad, "ext-position")
        items = raw[1:-1].split(",")
        item_offset = offset + 1
        for item in items:
            if not _SPEC_ITEM_RE.fullmatch(item):
                bad = next((i for i, c in enumerate(item) if not (c.isascii() and c.isalnum())), 0)
                raise _fail(
                    f"invalid item '{clipped(str(item))}' in a parenthesised position: expected letters or digits",
                    text,
                    item_offset + bad,
                    "position-specifier",
                )
            item_offset += len(item) + 1
        if len(items) == 2 and items[0].isdigit() and items[1].isdigit():
            x = _number(items[0], text=text, offset=offset + 1, rule="x-coordinate")
            y = _number(items[1], text=text, offset=offset + 2 + len(items[0]), rule="y-coordinate")
            return (x, y)
        return tuple(items)
    if "=" in raw and raw[_first_bad(raw, _NAME_SAFE)] == "=":
        eq = offset + raw.index("=")
        if scheme in ("sec", "msec"):
            raise _fail(
                "a fragment has one scheme: time units (sec, msec) are never mixed (PDI draft, line 734)",
                text,
                eq,
                "fragment-specifier",
            )
        raise _fail(
            "a fragment has one scheme; '=' inside a position must be %-escaped (%3D)",
            text,
            eq,
            "fragment-specifier",
        )
    if scheme not in _WORDS and raw.isdigit() and raw.isascii():
        return _number(raw, text=text, offset=offset, rule="position")
    if scheme in _COUNTED:  # "#char=7,12." is no element name gone wrong: its positions are numbers
        bad = next(i for i, c in enumerate(raw) if not "0" <= c <= "9")
        raise _fail(f"{scheme} positions are digits, not {raw[bad]!r}", text, offset + bad, "position")
    if not _NAME_RE.fullmatch(raw):
        bad = _first_bad(raw, _NAME_SAFE)
        ch = raw[bad]
        what = _NAMED.get(scheme or "", "an element name")
        if scheme == "part":  # a part's name: its cid:, else its Content-Location or file name (PDI-GRAMMAR.md §3)
            what = "a part's cid: (part=)" if raw.startswith("cid:") else "a part's file name (part=)"
        if ch in _RESERVED or ch in "()":
            why = _unescaped(raw, bad, what)
        else:
            why = _unwritten(ch, what)
        raise _fail(why, text, offset + bad, "element-name")
    return _percent_decode(raw, text=text, offset=offset, rule="element-name")


def _parse_fragment(body: str, text: str, offset: int) -> tuple[Fragment, tuple[int, ...]]:
    """Parse the text after ``#`` (``offset`` is its place in ``text``).

    Returns the fragment and the offset of each position in ``text``.
    """
    scheme: str | None = None
    pos_start = 0
    m = _SCHEME_RE.match(body)
    if m is not None:
        scheme = m.group(1).lower()
        pos_start = m.end()
    elif "=" in body:
        cut = body.index("=")
        # at its first character that is not a letter or '-' ('=' itself when the scheme is empty)
        bad = next((i for i, c in enumerate(body[:cut]) if not (c == "-" or (c.isascii() and c.isalpha()))), 0)
        raise _fail(
            f"invalid fragment scheme '{clipped(str(body[:cut]))}': expected letters and '-' (PDI draft, line 179)",
            text,
            offset + bad,
            "fragment-scheme",
        )
    rest = body[pos_start:]
    if not rest:
        raise _fail("a fragment needs at least one position", text, offset + pos_start, "position")
    pieces = _split_top(rest)
    at = tuple(offset + pos_start + piece_at for _, piece_at in pieces)
    positions = tuple(
        _parse_position(piece, scheme, text, where)
        for (piece, _), where in zip(pieces, at, strict=True)
    )
    return Fragment(scheme, positions), at


_FAMILY_SCHEMES = {
    "text": frozenset({"char", "line", "byte"}),
    "html": frozenset({"char", "line", "elt", "name", "byte"}),
    "xml": frozenset({"char", "line", "elt", "byte"}),
    "image": frozenset({"rect", "crop", "byte"}),
    "timed": frozenset({"sec", "msec", "byte"}),
    "other": frozenset({"byte"}),
}


@functools.lru_cache(maxsize=1024)
def allowed_schemes(media_type: str) -> frozenset[str]:
    """The defined schemes that apply to a media type (an SVG image is an image and XML)."""
    allowed = _FAMILY_SCHEMES[formats.media_family(media_type)]
    major, _, minor = media_type.partition("/")
    if major == "image":
        allowed = allowed | _FAMILY_SCHEMES["image"]
    if minor.endswith("+xml"):
        allowed = allowed | _FAMILY_SCHEMES["xml"]
    if major == "multipart":  # an aggregate's root part (pdi.fragments.aggregate)
        allowed = allowed | _FAMILY_SCHEMES["html"]
    if media_type == "application/pdf":  # counted on its text layer; a region of a page (docs/pdf-text-layer.md)
        allowed = allowed | _FAMILY_SCHEMES["text"] | {"rect"}
    if major == "video":  # a region of the frame at a time (pdi.archive.video.frame_region)
        allowed = allowed | {"rect", "crop"}
    return allowed


def _check_fragment(
    frag: Fragment,
    format: str,
    text: str,
    offset: int,
    warnings: list[_Warning],
    at: tuple[int, ...] = (),
) -> str | None:
    """Check a fragment against its PDI's format; return the effective scheme (None if unknown).

    ``offset`` is where the fragment starts in ``text``, ``at`` where each position does.
    """
    media_type = token_lookup(formats.media_type_for, format)
    scheme = frag.scheme
    if scheme is None:
        if format == "*":
            raise _fail(
                "a fragment on a wildcard format must name its scheme",
                text,
                offset,
                "fragment-scheme",
            )
        if media_type is None:
            warnings.append(
                (
                    f"format '{clipped(str(format))}' is not in the registry: the default scheme of the "
                    "fragment is unknown (name the scheme)",
                    offset,
                    "fragment-scheme",
                )
            )
            return None
        try:
            scheme = formats.default_fragment_scheme(media_type)
        except UnsupportedError as exc:
            raise _fail(
                f"format '{clipped(str(format))}' ({media_type}) has no default fragment scheme: name one "
                "(PDI draft, lines 538-542)",
                text,
                offset,
                "fragment-scheme",
            ) from exc
    if media_type is not None and scheme in FRAGMENT_SCHEMES:
        allowed = allowed_schemes(media_type)
        if scheme not in allowed:
            raise _fail(
                f"fragment scheme '{clipped(str(scheme))}' is not defined for {media_type} "
                f"(allowed: {', '.join(sorted(allowed))}, or an extension scheme)",
                text,
                offset,
                "fragment-scheme",
            )
    _check_positions(frag, scheme, text, offset, at, "" if frag.scheme else f"{format}'s default")
    return scheme


def _check_positions(
    frag: Fragment, scheme: str, text: str, offset: int, at: tuple[int, ...], default: str = ""
) -> None:
    """``default``: how the scheme was chosen when the fragment names none (``"rfc822's default"``), said beside a
    position that is no number, which such a fragment's often is: ``#part%3D2``, its ``=`` escaped by a link
    maker, was told "char positions are digits", naming neither what it found nor why char (found by a new
    user's trial, 2026-12-02)."""
    pos = frag.positions
    n = len(pos)

    def digits(bad: int | None) -> None:
        if bad is not None:
            escaped = "; a scheme is named scheme=…, its '=' not %-escaped" if "=" in str(pos[bad]) else ""
            chosen = f" (the fragment names no scheme: {scheme} is {default}{escaped})" if default else ""
            need(False, f"{scheme} positions are digits, not {clipped(str(pos[bad]))!r}{chosen}", index=bad)

    def need(cond: bool, message: str, rule: str = "position", index: int | None = None) -> None:
        if not cond:
            where = at[index] if index is not None and index < len(at) else offset
            raise _fail(message, text, where, rule)

    def first_not(kind: type) -> int | None:
        return next((i for i, p in enumerate(pos) if not isinstance(p, kind)), None)

    def ordered(a: int, b: int, what: str) -> None:
        need(b >= a, f"{scheme} fragment ends before it starts: {what} (end < start)", index=1)

    if scheme in ("char", "line"):
        need(
            n in (1, 2),
            f"{scheme}= is one position or two (start,end), not {n}",
            index=2,
        )
        digits(first_not(int))
        if n == 2:
            assert isinstance(pos[0], int) and isinstance(pos[1], int)
            ordered(pos[0], pos[1], f"{pos[0]},{pos[1]}")
    elif scheme in ("byte", "sec", "msec", "elt"):
        need(
            n == 2,
            f"{scheme}= is two positions (start,end), not {n}",
            index=2 if n > 2 else None,
        )
        digits(first_not(int))
        assert isinstance(pos[0], int) and isinstance(pos[1], int)
        ordered(pos[0], pos[1], f"{pos[0]},{pos[1]}")
    elif scheme == "name":
        need(
            n == 2,
            f"a name fragment is two element names (start,end), not {n}",
            index=2 if n > 2 else None,
        )
        bad = first_not(str)
        need(bad is None, "name positions are element names", index=bad)
    elif scheme in ("rect", "crop"):
        need(
            n in (2, 3)
            and all(_is_coordinate(p) for p in pos[:2])
            and (n == 2 or isinstance(pos[2], int)),
            f"a {scheme} fragment needs two coordinates (x1,y1),(x2,y2) and an optional frame "
            "(PDI draft, lines 692-701)",
            "2-dim-coordinate",
        )
        a, b = pos[0], pos[1]
        assert isinstance(a, tuple) and isinstance(b, tuple)
        need(
            b[0] >= a[0] and b[1] >= a[1],  # type: ignore[operator]  # need() above made both int pairs
            f"{scheme} fragment ends before it starts: ({a[0]},{a[1]}),({b[0]},{b[1]}) "
            "(end < start)",
            index=1,
        )


def _is_coordinate(p: Position) -> bool:
    return isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], int)
