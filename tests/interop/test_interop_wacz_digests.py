"""The digests and record ids an export writes are what the standard library writes, octet for octet.

:func:`pdi.interop.wacz._base32` spells a SHA-1 digest in base32 for the
``WARC-Block-Digest`` and ``WARC-Payload-Digest`` fields (and the CDXJ
``digest``), as warcio does with ``base64.b32encode`` (RFC 4648 §6);
:func:`pdi.interop.wacz._uuid4_urn` makes a ``WARC-Record-ID`` from 16 random
octets as ``uuid.UUID(bytes=…, version=4)`` does (RFC 9562 §5.4: version 4,
variant bits ``10``).
"""

from __future__ import annotations

import base64
import hashlib
import uuid

from hypothesis import given
from hypothesis import strategies as st

from pdi.interop.wacz import _base32, _sha1_digest, _uuid4_urn


@given(st.binary(min_size=20, max_size=20))
def test_base32_of_any_20_octets_is_b32encodes(digest: bytes) -> None:
    assert _base32(digest) == base64.b32encode(digest).decode("ascii")


@given(st.binary(max_size=200))
def test_a_payload_digest_is_warcios(data: bytes) -> None:
    assert _sha1_digest(data) == "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def test_base32_known_values() -> None:
    """RFC 4648 §10's alphabet at both ends, and the SHA-1 of nothing as WARC files carry it."""
    assert _base32(bytes(20)) == "A" * 32
    assert _base32(b"\xff" * 20) == "7" * 32
    assert _sha1_digest(b"") == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


@given(st.binary(min_size=16, max_size=16))
def test_a_record_id_is_a_version_4_uuids_urn(raw: bytes) -> None:
    made = _uuid4_urn(raw)
    assert made == f"<{uuid.UUID(bytes=raw, version=4).urn}>"
    parsed = uuid.UUID(made[1:-1])
    assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
