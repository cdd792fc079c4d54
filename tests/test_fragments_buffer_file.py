""":class:`pdi.fragments.results.BufferFile`: a mapped file read as a file without a copy, as ``io.BytesIO`` reads
the same octets (the reference: every operation a library makes of a file gives what ``BytesIO`` gives)."""

from __future__ import annotations

import io
import mmap
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.fragments.results import BufferFile

_OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("read"), st.one_of(st.none(), st.integers(-2, 40))),
    st.tuples(st.just("readinto"), st.integers(0, 40)),
    st.tuples(st.just("readline"), st.integers(-1, 40)),
    st.tuples(st.just("seek"), st.tuples(st.integers(-50, 50), st.sampled_from([io.SEEK_SET, io.SEEK_CUR, io.SEEK_END]))),
    st.tuples(st.just("tell"), st.none()),
    st.tuples(st.just("readall"), st.none()),
), max_size=20)


def _do(f: io.IOBase, op: str, arg: object) -> object:
    try:
        if op == "readinto":
            buffer = bytearray(arg)  # type: ignore[arg-type]
            count = f.readinto(buffer)  # type: ignore[attr-defined]
            return (count, bytes(buffer[:count]))
        if op == "seek":
            return f.seek(*arg)  # type: ignore[misc]
        if op == "readall":  # a raw file's reading of all that is left; BytesIO's is read()
            return f.readall() if isinstance(f, BufferFile) else f.read()
        if op == "tell":
            return f.tell()
        return getattr(f, op)(arg)
    except ValueError:
        return ValueError


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60), _OPERATIONS, st.sampled_from(["bytes", "memoryview", "mmap"]))
def test_property_a_buffer_file_reads_as_bytesio_reads(data: bytes, operations: list[tuple[str, object]], kind: str) -> None:
    if kind == "mmap" and not data:
        return  # an empty file cannot be mapped
    with tempfile.TemporaryFile() as backing:
        backing.write(data)
        backing.flush()
        mapped = mmap.mmap(backing.fileno(), 0, access=mmap.ACCESS_READ) if kind == "mmap" else None
        buffer = mapped if mapped is not None else memoryview(data) if kind == "memoryview" else data
        ours, reference = BufferFile(buffer), io.BytesIO(data)
        for op, arg in operations:
            assert _do(ours, op, arg) == _do(reference, op, arg), (op, arg)
        ours.close()
        if mapped is not None:
            mapped.close()


def test_a_read_of_more_than_is_there_makes_no_room_for_it() -> None:
    # RawIOBase.read(n) makes n octets ready before it reads: a header's claim of a terabyte was a MemoryError
    assert BufferFile(b"x").read(1 << 40) == b"x"


def test_a_negative_position_from_the_start_is_refused() -> None:
    with pytest.raises(ValueError):
        BufferFile(b"abc").seek(-1)
