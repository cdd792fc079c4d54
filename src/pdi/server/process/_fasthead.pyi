"""Stub of the compiled answer of N2L's 302, a 304 from a worker's facts and a kept N2R's 200 (``_fasthead.c``)."""

from collections import OrderedDict
from typing import Any, overload

MAX_READ: int
MAX_TARGET: int
MAX_FIELDS: int

def configure(after_location: bytes, validator_lines: bytes, n2r_prefix: bytes, /) -> None: ...
@overload
def answer(
    data: bytes, facts: OrderedDict[bytes, bytes], entries: OrderedDict[bytes, Any], origin: bytes, defaults: bytes, /
) -> tuple[bytes, bytes, int, int] | None: ...
@overload
def answer(
    data: bytes, facts: OrderedDict[bytes, bytes], entries: OrderedDict[bytes, Any], origin: bytes, defaults: bytes,
    first: bool, /,
) -> tuple[bytes, bytes, int, int] | tuple[None, bytes, bytes, bytes, bytes] | tuple[bytes, bytes, str | None] | None: ...
