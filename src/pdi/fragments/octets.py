"""The ``byte`` fragment scheme: a half-open octet range of the stored representation.

PDI-GRAMMAR.md §3: ``#byte=a,b`` selects octets ``a ≤ i < b`` of the bytes the
archive keeps for a format of a version, whatever the media type (draft line
495 says byte offsets are for short-term use only: they are exact, but they
mean nothing to a reader of another representation). A position past the end
is the end, and the result says it was clamped; a range that starts at or past
the end and reaches past it also says ``past_end`` (``byte=4,4`` on four octets
is the empty range at the end, not past it). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from pdi.errors import ParseError
from pdi.fragments.results import FragmentResult, Range, check_order


def evaluate_bytes(
    scheme: str, positions: Sequence[object], data: bytes, media_type: str, charset: str | None
) -> FragmentResult:
    """Select ``data[start:end]`` for ``positions == (start, end)``, clamping both to ``len(data)``."""
    if len(positions) != 2:
        raise ParseError(
            f"byte takes two octet offsets, start and end; got {len(positions)}", rule="position"
        )
    start, end = positions
    if not (_is_offset(start) and _is_offset(end)):
        raise ParseError(
            f"byte positions are octet offsets, not {start!r}, {end!r}", rule="position"
        )
    assert isinstance(start, int) and isinstance(end, int)
    check_order("byte range", start, end, "fragment-specifier")
    size = len(data)
    clamped = end > size
    past_end = clamped and start >= size
    start, end = min(start, size), min(end, size)
    return FragmentResult(
        data=data[start:end],
        media_type=media_type,
        clamped=clamped,
        ranges=(Range(start, end, start, end),),
        charset=charset,
        scheme=scheme,
        past_end=past_end,
    )


def _is_offset(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
