"""``Digests``: the whole SHA-256 and one SHA-256 per chunk, however the octets are cut into pieces.

Checked against ``hashlib`` over the octets joined and cut by slicing, for
pieces of any size: shorter than a chunk, exactly a chunk (kept without a
copy), longer, and a chunk's worth after a partial one.
"""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.blobs import Digests

CHUNK = 16


@given(st.lists(st.one_of(st.binary(max_size=40), st.binary(min_size=CHUNK, max_size=CHUNK)), max_size=40))
def test_digests_agree_with_hashlib_for_any_pieces(pieces: list[bytes]) -> None:
    digests = Digests(chunk_size=CHUNK)
    for piece in pieces:
        digests.update(piece)
    info = digests.finish()
    whole = b"".join(pieces)
    assert info.sha256 == hashlib.sha256(whole).hexdigest()
    assert info.size == len(whole)
    expected = b"".join(hashlib.sha256(whole[at : at + CHUNK]).digest() for at in range(0, len(whole), CHUNK))
    assert info.chunks == expected


def test_many_whole_chunks_go_through_the_hashing_thread() -> None:
    pieces = [bytes([n]) * CHUNK for n in range(100)] + [b"tail"]
    digests = Digests(chunk_size=CHUNK)
    for piece in pieces:
        digests.update(piece)
    info = digests.finish()
    whole = b"".join(pieces)
    assert info.chunks == b"".join(hashlib.sha256(whole[at : at + CHUNK]).digest() for at in range(0, len(whole), CHUNK))


def _expected(whole: bytes, chunk: int) -> bytes:
    return b"".join(hashlib.sha256(whole[at : at + chunk]).digest() for at in range(0, len(whole), chunk))


@given(st.binary(max_size=200), st.lists(st.integers(min_value=1, max_value=50), max_size=30),
       st.sampled_from(["bytes", "view of bytes", "reused buffer"]))
def test_digests_of_pieces_cut_anywhere_given_as_views_agree_with_hashlib(
        whole: bytes, cuts: list[int], given_as: str) -> None:
    # pieces of random sizes, across chunk ends; a reused buffer is written over as soon as update returns,
    # as a socket's is (pdi.network.peers._Parts): nothing may be kept of it
    digests = Digests(chunk_size=CHUNK)
    buffer = bytearray(64)
    at = 0
    for cut in [*cuts, len(whole)]:
        piece = whole[at : at + cut]
        at += len(piece)
        if given_as == "bytes":
            digests.update(piece)
        elif given_as == "view of bytes":
            digests.update(memoryview(piece))
        else:
            for start in range(0, len(piece), len(buffer)):
                part = piece[start : start + len(buffer)]
                buffer[: len(part)] = part
                digests.update(memoryview(buffer)[: len(part)])
                buffer[:] = b"\xff" * len(buffer)
    info = digests.finish()
    assert info.size == len(whole)
    assert info.sha256 == hashlib.sha256(whole).hexdigest()
    assert info.chunks == _expected(whole, CHUNK)


@given(st.integers(min_value=0, max_value=40 * CHUNK), st.integers(min_value=1, max_value=3 * CHUNK))
def test_digests_of_a_reused_buffer_through_the_hashing_thread(size: int, read: int) -> None:
    # enough chunks to go through the hashing thread (8 or more after the first), read as views of one buffer
    whole = bytes((n * 7 + n // 13) % 256 for n in range(size))
    digests = Digests(chunk_size=CHUNK)
    buffer = bytearray(read)
    for at in range(0, size, read):
        part = whole[at : at + read]
        buffer[: len(part)] = part
        digests.update(memoryview(buffer)[: len(part)])
        buffer[:] = bytes(len(buffer))
    info = digests.finish()
    assert (info.size, info.sha256) == (size, hashlib.sha256(whole).hexdigest())
    assert info.chunks == _expected(whole, CHUNK)


@given(st.binary(max_size=100), st.integers(min_value=1, max_value=40))
def test_views_give_the_octets_of_any_source_in_order(data: bytes, read: int) -> None:
    import io

    from pdi.archive.blobs import views

    for source in (data, bytearray(data), memoryview(data), io.BytesIO(data), [data[:read], data[read:]]):
        assert b"".join(bytes(v) for v in views(source, read)) == data  # type: ignore[arg-type]
