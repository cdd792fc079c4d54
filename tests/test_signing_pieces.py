"""A manifest's JSON and base64url made in pieces (:func:`pdi.signing.canonical_json`, :func:`pdi.signing.b64url`,
so that the resolver's event loop takes its turn between them) are the very octets one call of the standard
library's ``json.dumps`` and ``base64.urlsafe_b64encode`` gives, whatever the value and wherever a piece ends."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi import signing
from pdi.signing import B64_PIECE, JSON_PIECE, b64url, canonical_json

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=40,
)


def _reference(value: object) -> bytes:
    """RFC 7515's JSON as one call writes it: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@given(value=_values, piece=st.integers(1, 4))
def test_canonical_json_in_pieces_is_one_calls_json(value: object, piece: int) -> None:
    # small pieces, so that hypothesis's small lists are cut in many places
    saved = signing.JSON_PIECE
    signing.JSON_PIECE = piece
    try:
        assert canonical_json(value) == _reference(value)
        assert canonical_json({"names": value, "series": "s", "after": None}) == _reference(
            {"names": value, "series": "s", "after": None})
    finally:
        signing.JSON_PIECE = saved


@pytest.mark.parametrize("count", [0, 1, JSON_PIECE - 1, JSON_PIECE, JSON_PIECE + 1, 3 * JSON_PIECE + 7])
def test_a_manifest_like_payload_of_any_length_is_one_calls_json(count: int) -> None:
    value = {"type": "pdi-manifest+jws", "series": "s.example.us", "day": None, "after": "b", "next": None,
             "names": [{"name": f"urn:pdi://s.example.us/2026/11/29/{i}", "sha256": "ab" * 32, "size": i,
                        "format": "text", "version": 1, "é": ["ü", {"z": 1, "a": [i]}]} for i in range(count)]}
    assert canonical_json(value) == _reference(value)


@given(data=st.binary(max_size=64), piece=st.sampled_from([3, 6, 9, 30]))
def test_b64url_in_pieces_is_one_calls_base64url(data: bytes, piece: int) -> None:
    saved = signing.B64_PIECE
    signing.B64_PIECE = piece
    try:
        assert b64url(data) == base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
    finally:
        signing.B64_PIECE = saved


@pytest.mark.parametrize("extra", [-1, 0, 1, 2, 3, B64_PIECE + 2])
def test_b64url_of_more_than_a_piece_is_one_calls_base64url(extra: int) -> None:
    data = bytes(range(256)) * ((3 * B64_PIECE + extra) // 256) + bytes(range((3 * B64_PIECE + extra) % 256))
    assert b64url(data) == base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
