"""``pdi.archive.blobs.checked``: octets in hand served only when every chunk matches its SHA-256 (issue 24's cold
``N2R`` checks a small blob's octets, one chunk, with each answer)."""

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.blobs import BlobInfo, checked


def digests(data: bytes, chunk_size: int) -> bytes:
    """Each chunk's SHA-256, worked out here chunk by chunk (the layout of ``BlobInfo.chunks``)."""
    return b"".join(hashlib.sha256(data[i : i + chunk_size]).digest() for i in range(0, len(data), chunk_size))


@given(st.binary(max_size=300), st.integers(1, 400))
def test_whole_octets_served_when_every_chunk_matches(data: bytes, chunk_size: int) -> None:
    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data), chunk_size, digests(data, chunk_size))
    assert checked(info, data) == data


@given(st.binary(min_size=1, max_size=300), st.integers(1, 400), st.data())
def test_one_octet_changed_anywhere_is_refused(data: bytes, chunk_size: int, draw: st.DataObject) -> None:
    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data), chunk_size, digests(data, chunk_size))
    at = draw.draw(st.integers(0, len(data) - 1))
    damaged = data[:at] + bytes([data[at] ^ draw.draw(st.integers(1, 255))]) + data[at + 1 :]
    assert checked(info, damaged) is None


@given(st.binary(min_size=1, max_size=300), st.integers(1, 400), st.data())
def test_a_damaged_digest_is_refused(data: bytes, chunk_size: int, draw: st.DataObject) -> None:
    chunks = bytearray(digests(data, chunk_size))
    at = draw.draw(st.integers(0, len(chunks) - 1))
    chunks[at] ^= draw.draw(st.integers(1, 255))
    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data), chunk_size, bytes(chunks))
    assert checked(info, data) is None


@given(st.binary(max_size=300), st.integers(1, 400), st.integers(-3, 3))
def test_octets_of_another_size_or_digests_of_another_count_are_refused(
        data: bytes, chunk_size: int, by: int) -> None:
    whole = digests(data, chunk_size)
    if by:
        assert checked(BlobInfo("0" * 64, len(data) + by, chunk_size, whole), data) is None
    if data:
        assert checked(BlobInfo("0" * 64, len(data), chunk_size, whole + whole[:32]), data) is None
        assert checked(BlobInfo("0" * 64, len(data), chunk_size, whole[:-32]), data) is None
        assert checked(BlobInfo("0" * 64, len(data), chunk_size, b""), data) is None  # no digests known


def test_a_single_chunk_of_exactly_chunk_size_and_one_octet_over() -> None:
    data = bytes(range(256)) * 4
    one = BlobInfo("0" * 64, 1024, 1024, hashlib.sha256(data).digest())
    assert checked(one, data) == data
    two = BlobInfo("0" * 64, 1025, 1024, digests(data + b"x", 1024))
    assert checked(two, data + b"x") == data + b"x"
    assert checked(two, data + b"y") is None
