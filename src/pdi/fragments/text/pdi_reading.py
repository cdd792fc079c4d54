"""The PDI reading of ``char`` and ``line`` on text (``PDI-GRAMMAR.md`` §3).

* ``char=a,b`` — half-open ``[a, b)`` over the code points of the
  **CRLF-canonical** text: CR and LF count one character each, as octets do
  in an 8-bit charset (draft-mallery-urn-pdi-00 lines 551–588). ``char=a`` is
  the zero-length position ``a``. ``b < a`` is an error; a position past the
  end is the end, and the result says it was clamped (and ``past_end`` when
  the whole fragment lies past the end: see
  :class:`~pdi.fragments.FragmentResult`).
* ``line=a,b`` — the extension scheme: RFC 5147 line positions over the
  CRLF-canonical text, line endings included.

An archived text is kept as deposited (a text deposited before schema 4 was
kept CRLF-canonical). Where every line ending up to the end of the
selection is CR+LF, the selected octets are cut straight from it; the result
still says ``canonicalized`` when a later ending is not (the flag is of the
whole entity, the same whichever blocks an index was cut in). Where one
before is not (a bare CR, LF, NEL or CR+NEL), the positions are still counted over its
CRLF-canonical form, from the index's counts, without rewriting the whole
text: only the selection is decoded and written with CRLF
(:func:`~pdi.fragments.text.lines.to_crlf`); the result says
``canonicalized``, its octets are the canonical selection and its octet
offsets are into the entity as given.

RFC 5147 counts every line ending as one character, the PDI draft counts CR
and LF apart: :func:`rfc5147_to_pdi_char` and :func:`pdi_to_rfc5147_char`
convert between the two counts. Line positions are the same in both.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence

from pdi.errors import ParseError
from pdi.fragments.results import FragmentResult, Range
from pdi.fragments.text.index import Buffer, TextIndex
from pdi.fragments.text.lines import to_crlf
from pdi.fragments.text.table import TextTable


def canonical_index(index: TextIndex) -> tuple[TextIndex, bool]:
    """An index over the CRLF-canonical form of ``index``'s text, and whether it had to be rewritten."""
    if index.is_crlf_canonical():
        return index, False
    return _canonicalized(index), True


def _canonicalized(index: TextIndex) -> TextIndex:
    text = to_crlf(index.whole_text())
    enc = index.encoding
    try:
        octets = enc.bom + codecs.encode(text, enc.body, "strict")
    except UnicodeEncodeError as exc:  # a charset without CR or LF cannot hold CRLF text
        raise ParseError(
            f"the text cannot be written CRLF-canonical in {enc.name}: {exc.reason}", rule="charset"
        ) from None
    return TextIndex(octets, enc.name)


def canonical_octets(data: Buffer, charset: str | None = None) -> bytes:
    """The octets of ``data`` with every line ending written CR+LF (the BOM, if any, kept)."""
    index, _ = canonical_index(TextIndex(data, charset))
    return index.octets(0, index.size)


def _positions(scheme: str, positions: Sequence[object]) -> tuple[int, int, bool]:
    if not 1 <= len(positions) <= 2:
        raise ParseError(
            f"{scheme}= takes one position or two (a range), not {len(positions)}",
            rule="fragment-specifier",
        )
    values: list[int] = []
    for i, value in enumerate(positions):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ParseError(
                f"{scheme}= position {i + 1} must be a non-negative integer, not {value!r}",
                rule="position",
            )
        values.append(value)
    start = values[0]
    end = values[-1]
    if end < start:
        raise ParseError(
            f"{scheme}= range ends ({end}) before it starts ({start})", rule="fragment-specifier"
        )
    return start, end, len(values) == 2


def evaluate_pdi(
    scheme: str,
    positions: Sequence[object],
    data: Buffer | TextIndex,
    *,
    charset: str | None = None,
    media_type: str = "text/plain",
    table: TextTable | bytes | None = None,
) -> FragmentResult:
    """Evaluate PDI ``char`` or ``line`` positions on a text entity (see the module docstring).

    ``data`` is the entity's octets (or a :class:`TextIndex` over them, to
    reuse its counts); ``charset`` its charset (default US-ASCII); ``table``
    the block table made beforehand from these octets
    (:class:`~pdi.fragments.text.TextTable` or its octets), which spares the
    counting and gives the same result.
    """
    scheme = scheme.lower()
    if scheme not in ("char", "line"):
        raise ParseError(f"not a text scheme: {scheme!r}", rule="fragment-scheme")
    start, end, _ = _positions(scheme, positions)
    index = data if isinstance(data, TextIndex) else TextIndex(data, charset, table=table)
    if scheme == "char":
        through = end
    else:
        through, _ = index.line_to_cp(end)
    if not index.is_crlf_canonical(through):
        return _evaluate_rewritten(scheme, start, end, index, media_type)
    if scheme == "char":
        cp0, clamped0 = index.clamp_cp(start)
        cp1, clamped1 = index.clamp_cp(end)
    else:
        cp0, clamped0 = index.line_to_cp(start)
        cp1, clamped1 = index.line_to_cp(end)
    b0 = index.cp_to_octet(cp0)
    b1 = index.cp_to_octet(cp1)
    text = index.text(cp0, cp1)  # the selection must be text in its charset
    octets = index.octets(b0, b1)
    if index.encoding.kind == "general" and codecs.decode(octets, index.encoding.body, "replace") != text:
        # a stateful charset's octets (ISO-2022-JP, UTF-7) say their character set before the selection:
        # the selection's own octets then, as the rewritten path gives them
        octets = codecs.encode(text, index.encoding.body, "strict")
    return FragmentResult(
        data=octets,
        media_type=media_type,
        clamped=clamped0 or clamped1,
        ranges=(Range(cp0, cp1, b0, b1),),
        charset=index.encoding.body,
        scheme=scheme,
        # of the entity, not of the part read so far: the same whichever blocks an index was cut in
        # (free with a table made at deposit; a lazily counted index counts the rest)
        canonicalized=not index.is_crlf_canonical(),
        past_end=clamped1 and _at_or_past_end(scheme, start, index),
    )


def _at_or_past_end(scheme: str, start: int, index: TextIndex) -> bool:
    """Whether position ``start`` is at or after the end of the text, in the scheme's own unit.

    ``char`` counts code points, so ``index`` must be CRLF-canonical (the
    rewritten path compares with the canonical count itself); ``line``
    counts lines, and an empty text still has one (empty) line, so
    ``line=0,2`` on it starts inside the text and is only clamped.
    """
    if scheme == "char":
        return start >= index.cp_count
    return start >= index.line_count


def _evaluate_rewritten(
    scheme: str, start: int, end: int, index: TextIndex, media_type: str
) -> FragmentResult:
    """PDI positions on a text that is not CRLF-canonical, without rewriting the whole text.

    Positions are counted over the CRLF-canonical form (from the index's
    counts); only the selection is decoded and written with CRLF line
    endings. The octet offsets are into the entity as given (a line ending
    cut between its CR and LF is covered whole).
    """
    if scheme == "char":
        char0, inside0, clamped0 = index.canonical_to_char(start)
        char1, inside1, clamped1 = index.canonical_to_char(end)
        total = index.canonical_count() if clamped0 or clamped1 else end
        pos0, pos1 = min(start, total), min(end, total)
        past_end = clamped1 and start >= total
        if inside1:
            char1 += 1
    else:
        cp_a, clamped0 = index.line_to_cp(start)
        cp_b, clamped1 = index.line_to_cp(end)
        char0, char1 = index.cp_to_char(cp_a), index.cp_to_char(cp_b)
        inside0 = inside1 = False
        pos0 = char0 + index.line_of_cp(cp_a)
        pos1 = char1 + index.line_of_cp(cp_b)
        past_end = clamped1 and _at_or_past_end(scheme, start, index)
    cp0, _ = index.char_to_cp(char0)
    cp1, _ = index.char_to_cp(char1)
    b0 = index.cp_to_octet(cp0)
    b1 = index.cp_to_octet(cp1)
    text = to_crlf(index.text(cp0, cp1))  # the octets alone lose a stateful charset's state (ISO-2022-JP)
    if inside0:
        text = text[1:]  # the selection starts with the LF of a CRLF
    if inside1:
        text = text[:-1]  # ... or ends with its CR
    enc = index.encoding
    try:
        octets = codecs.encode(text, enc.body, "strict")
    except UnicodeEncodeError as exc:  # a charset without CR or LF cannot hold CRLF text
        raise ParseError(
            f"the text cannot be written CRLF-canonical in {enc.name}: {exc.reason}", rule="charset"
        ) from None
    return FragmentResult(
        data=octets,
        media_type=media_type,
        clamped=clamped0 or clamped1,
        ranges=(Range(pos0, pos1, b0, b1),),
        charset=enc.body,
        scheme=scheme,
        canonicalized=True,
        past_end=past_end,
    )


def rfc5147_to_pdi_char(position: int, index: TextIndex) -> int:
    """The PDI ``char`` position (CR and LF apart) of RFC 5147 character position ``position``.

    Positions past the end are the end.
    """
    return index.char_to_canonical(position)


def pdi_to_rfc5147_char(position: int, index: TextIndex, *, round_up: bool = False) -> int:
    """The RFC 5147 character position of PDI ``char`` position ``position``.

    A PDI position between the CR and the LF of a line ending has no RFC 5147
    counterpart: it becomes the position before that line ending (after it
    with ``round_up``). Positions past the end are the end.
    """
    char, inside, _ = index.canonical_to_char(position)
    return char + 1 if inside and round_up else char


def parse_pdi_text_fragment(text: str) -> tuple[str, tuple[int, ...]]:
    """Parse a PDI text fragment ``[scheme "="] position *("," position)`` (``PDI-GRAMMAR.md`` §1).

    The scheme is case-insensitive and defaults to ``char``; only ``char`` and
    ``line`` apply to text. Returns the lower-cased scheme and the positions.
    """
    scheme, sep, rest = text.partition("=")
    if not sep:
        scheme, rest = "char", text
        offset = 0
    else:
        offset = len(scheme) + 1
        if not scheme or not all(c.isascii() and (c.isalpha() or c == "-") for c in scheme):
            raise ParseError("a fragment scheme is letters and '-'", text=text, offset=0, rule="fragment-scheme")
        scheme = scheme.lower()
        if scheme not in ("char", "line"):
            raise ParseError(
                f"scheme {scheme!r} does not apply to text (char or line)", text=text, offset=0, rule="fragment-scheme"
            )
    positions: list[int] = []
    for piece in rest.split(","):
        if not piece or not (piece.isascii() and piece.isdigit()):
            raise ParseError("a text position is 1*digit", text=text, offset=offset, rule="position")
        significant = piece.lstrip("0")  # int() would count the leading zeros against its 4,300 digits
        if len(significant) > 4000:
            raise ParseError("a position of more than 4000 digits", text=text, offset=offset, rule="position")
        positions.append(int(significant) if significant else 0)
        offset += len(piece) + 1
    if len(positions) > 2:
        raise ParseError(
            f"{scheme}= takes one position or two, not {len(positions)}", text=text, offset=0, rule="fragment-specifier"
        )
    if len(positions) == 2 and positions[1] < positions[0]:
        raise ParseError(
            f"{scheme}= range ends ({positions[1]}) before it starts ({positions[0]})",
            text=text,
            offset=len(text) - len(rest.split(",")[-1]),
            rule="fragment-specifier",
        )
    return scheme, tuple(positions)
