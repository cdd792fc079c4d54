"""``byte`` on any media type (``pdi.fragments.octets``) through :func:`pdi.fragments.evaluate`.

Input: ``fragment NUL media-type NUL entity``. What must hold (PDI-GRAMMAR.md
§3): the data is ``entity[a:b]`` with both ends clamped to its length.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._evaluate import evaluated


def run(data: bytes) -> None:
    scheme, positions, body, _, result = evaluated(
        data, default_scheme="byte", default_type="application/octet-stream", family=lambda m: True
    )
    if scheme != "byte":
        return
    a, b = positions
    assert isinstance(a, int) and isinstance(b, int)
    assert result.data == body[min(a, len(body)) : min(b, len(body))]
    assert result.clamped == (b > len(body))


TARGET = Target(
    "fragment_bytes",
    run,
    warmup=b"byte=2,5\x00application/octet-stream\x000123456789",
    tokens=(b"\x00", b"byte=", b",", b"text/plain", b"image/png", b"audio/wav", b"x/y"),
    examples=0.5,
)
