"""The input format of the fragment-evaluator targets: ``fragment NUL media-type NUL entity``.

The fragment is the text after ``#`` (parsed by :meth:`pdi.identifier.Fragment.parse`,
so positions are what an identifier gives the evaluator); its scheme, when
omitted, is the family's default. A media type outside the target's family
is replaced by the target's own, so each target stays on its evaluator while
the fuzzer varies the parameters (``charset=…``).
"""

from __future__ import annotations

from collections.abc import Callable

from fuzz_targets._common import fields, text_of
from pdi.fragments import FragmentResult, evaluate
from pdi.identifier import Fragment


def evaluated(
    data: bytes, *, default_scheme: str, default_type: str, family: Callable[[str], bool]
) -> tuple[str, tuple[object, ...], bytes, str, FragmentResult]:
    """Parse the input and evaluate it; return the scheme, positions, entity, media type and result."""
    frag_b, media_b, body = fields(data, 3)
    media_type = text_of(media_b)
    if not family(media_type.split(";", 1)[0].strip().lower()):
        media_type = default_type
    fragment = Fragment.parse(text_of(frag_b))
    scheme = fragment.scheme or default_scheme
    result = evaluate(scheme, fragment.positions, body, media_type=media_type)
    return scheme, fragment.positions, body, media_type, result
