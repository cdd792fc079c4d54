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
