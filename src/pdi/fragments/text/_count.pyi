"""Stub of the compiled one-pass counter (``_count.c``)."""

import mmap

def count(
    buffer: bytes | bytearray | memoryview | mmap.mmap,
    start: int,
    stop: int,
    utf8: bool,
    lf: int,
    cr: int,
    nel: bytes,
    /,
) -> tuple[int, int, int, int, int, int]: ...
