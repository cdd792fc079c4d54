"""Stub of the compiled MHTML encoder (``_encode.c``)."""

import mmap

def base64_lines(buffer: bytes | bytearray | memoryview | mmap.mmap, /) -> bytes: ...
