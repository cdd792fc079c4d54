"""A blob stored before chunk digests were kept (``BlobInfo.chunks`` empty: only its whole SHA-256 is known) is
read once where its octets are wanted whole before any is used: a read into memory, the temporary copy a fragment
evaluator maps or a child process (ffmpeg, ffprobe) reads, and ``verify``. Every octet is hashed as it is read
and kept or copied, and the whole SHA-256 is compared after the last one, before anything read is given: a blob
that does not match is refused and nothing of it is used. It was read twice (once to check the whole SHA-256,
then again to copy or keep the octets).

The octets of these readers come from bytes in hand through a function that counts what it is asked for (the
``read_raw`` a store gives: PostgreSQL's legacy rows, an S3 object); the SHA-256 the reader is given is worked
out here with ``hashlib``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pdi.archive.blobs as blobs
from pdi.archive.blobs import (
    BlobInfo,
    ChunkedReader,
    FileReader,
    checked_as_given,
    checked_file,
    file_reader,
    mapped,
)
from pdi.errors import DamagedError
from support.hashed import CountingHashlib

DATA = bytes(range(256)) * 4099  # 1,049,344 octets: a little over one READ_SIZE, so read in two pieces


def _old(data: bytes, stored: bytes | None = None) -> tuple[ChunkedReader, list[int]]:
    """A reader of a blob with no chunk digests whose SHA-256 is ``data``'s and whose store holds ``stored``
    (``data`` unless given), and the lengths of the reads it makes of the store, in order."""
    held = data if stored is None else stored
    reads: list[int] = []

    def read_raw(offset: int, length: int) -> bytes:
        piece = held[offset : offset + length]
        reads.append(len(piece))
        return piece

    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data))
    assert not info.chunked
    return ChunkedReader(info, read_raw, name="an old blob"), reads


def _damaged(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]


@given(st.binary(min_size=1, max_size=200), st.integers(1, 50), st.data())
def test_a_range_of_an_old_blob_is_read_from_one_pass(data: bytes, read_size: int, draw: st.DataObject) -> None:
    start = draw.draw(st.integers(0, len(data) - 1))
    end = draw.draw(st.integers(start + 1, len(data) + 5))
    reader, reads = _old(data)
    with mock.patch.object(blobs, "READ_SIZE", read_size):
        assert reader.read(start, end) == data[start:end]
        assert sum(reads) == len(data), "every octet read once: the whole SHA-256 and the range from the same read"
        assert reader.read(start, end) == data[start:end]  # checked once a reader: then only the range
        assert sum(reads) == len(data) + min(end, len(data)) - start


@given(st.binary(min_size=1, max_size=200), st.integers(1, 50), st.data())
def test_a_range_of_a_damaged_old_blob_is_refused(data: bytes, read_size: int, draw: st.DataObject) -> None:
    at = draw.draw(st.integers(0, len(data) - 1))
    start = draw.draw(st.integers(0, len(data) - 1))
    reader, _ = _old(data, _damaged(data, at))
    with mock.patch.object(blobs, "READ_SIZE", read_size), pytest.raises(DamagedError, match="do not match their SHA-256"):
        reader.read(start, start + 1)


@given(st.binary(min_size=1, max_size=200), st.integers(1, 50))
def test_an_old_blob_cut_short_is_refused(data: bytes, read_size: int) -> None:
    reader, _ = _old(data, data[:-1])
    with mock.patch.object(blobs, "READ_SIZE", read_size), pytest.raises(DamagedError, match="cut short"):
        reader.read()


def test_verifying_an_old_blob_reads_it_once() -> None:
    reader, reads = _old(DATA)
    reader.verify()
    assert sum(reads) == len(DATA) and len(reads) == 2
    reader, _ = _old(DATA, _damaged(DATA, len(DATA) - 1))
    with pytest.raises(DamagedError, match="do not match their SHA-256"):
        reader.verify()


@pytest.mark.parametrize("copied", [True, False], ids=["copied-to-a-file", "in-memory"])
def test_an_old_blob_mapped_for_an_evaluator_is_read_once(monkeypatch: pytest.MonkeyPatch, copied: bool) -> None:
    if copied:
        monkeypatch.setattr(blobs, "IN_MEMORY", 1 << 10)
    reader, reads = _old(DATA)
    assert checked_as_given(reader)
    with mapped(reader) as octets:
        assert len(octets) == len(DATA) and octets[:] == DATA
    assert sum(reads) == len(DATA)


@pytest.mark.parametrize("copied", [True, False], ids=["copied-to-a-file", "in-memory"])
def test_a_damaged_old_blob_is_refused_before_an_evaluator_is_given_it(
    monkeypatch: pytest.MonkeyPatch, copied: bool,
) -> None:
    if copied:
        monkeypatch.setattr(blobs, "IN_MEMORY", 1 << 10)
    reader, reads = _old(DATA, _damaged(DATA, 5))
    given: list[object] = []
    with pytest.raises(DamagedError, match="do not match their SHA-256"), mapped(reader) as octets:
        given.append(octets)
    assert given == [] and sum(reads) == len(DATA)


def test_an_old_blob_copied_for_a_child_is_read_once() -> None:
    reader, reads = _old(DATA)
    with checked_file(reader) as (path, descriptors):
        assert descriptors == () and Path(path).read_bytes() == DATA
    assert sum(reads) == len(DATA)
    assert not Path(path).exists()


def test_a_damaged_old_blob_is_refused_before_a_child_is_given_its_copy() -> None:
    reader, reads = _old(DATA, _damaged(DATA, len(DATA) // 2))
    given: list[str] = []
    with pytest.raises(DamagedError, match="do not match their SHA-256"), checked_file(reader) as (path, _):
        given.append(path)
    assert given == [] and sum(reads) == len(DATA)


def _file(tmp_path: Path, stored: bytes) -> FileReader:
    """A reader of a local file holding ``stored``, for a blob with no chunk digests whose octets are ``DATA``."""
    path = tmp_path / "blob"
    path.write_bytes(stored)
    return file_reader(BlobInfo(hashlib.sha256(DATA).hexdigest(), len(DATA)), str(path), name="an old blob file")


def test_an_old_blob_file_given_to_a_child_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    with _file(tmp_path, DATA) as reader, checked_file(reader) as (path, descriptors):
        assert path.startswith("/proc/self/fd/") and len(descriptors) == 1
        assert Path(path).read_bytes() == DATA
    assert counter.octets == len(DATA)
    reader = _file(tmp_path, _damaged(DATA, 3))
    with reader, pytest.raises(DamagedError, match="do not match"), checked_file(reader):
        pytest.fail("a damaged file was given to a child")
