"""RFC 3161 responses read as DER (X.690 §10.1, §8.3.2): each length in the fewest octets, each INTEGER in the
fewest octets and at least one, nothing after the response or after the TSTInfo in its OCTET STRING.

The responses are written here by a small DER writer of the test's own, which can write any length in more octets
than needed (the long form of a length below 128, or leading zero octets); the rules are X.690's, not pdi's.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import IntegrityError, ParseError, PDIError
from pdi.rfc3161 import read_response

DIGEST = hashlib.sha256(b"a manifest\n").digest()
#: The elements of a response, in the order the writer below writes them (each one's length may be padded).
ELEMENTS = 25


def _length(n: int, extra: int) -> bytes:
    """A DER length (X.690 §8.1.3): the short form below 128, else the long form in the fewest octets; written in
    ``extra`` octets more when ``extra`` is positive (below 128 the long form, ``81 05``; then leading zero
    octets), which DER does not allow (X.690 §10.1)."""
    if n < 0x80 and extra == 0:
        return bytes([n])
    octets = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
    octets = b"\x00" * (extra - 1 if n < 0x80 else extra) + octets
    return bytes([0x80 | len(octets)]) + octets


def _response(padded: dict[int, int], *, status: bytes = b"\x00", nonce: bytes = b"\x05",
              after_tst: bytes = b"", more: str = "", written: dict[str, bytes] | None = None) -> bytes:
    """A granted TimeStampResp (RFC 3161 §2.4.2, its SignedData unsigned); ``padded``: the index of an element (in
    the order written, 0 to ``ELEMENTS - 1``) to the octets its length is written in more than DER's fewest."""
    counter = iter(range(ELEMENTS))

    def tlv(tag: int, content: bytes) -> bytes:
        return bytes([tag]) + _length(len(content), padded.get(next(counter), 0)) + content

    algorithm = tlv(0x30, tlv(0x06, bytes.fromhex("608648016503040201")) + tlv(0x05, b""))
    imprint = tlv(0x30, algorithm + tlv(0x04, DIGEST))
    given = written or {}  # a TSTInfo field written as it is given (its whole DER element)
    fields = (given.get("version", tlv(0x02, b"\x01")) + given.get("policy", tlv(0x06, b"\x2a\x03")) + imprint
              + given.get("serialNumber", tlv(0x02, b"\x05")) + tlv(0x18, b"20261127050000Z") + tlv(0x02, nonce))
    tst = tlv(0x30, fields) + after_tst
    null = {level: b"\x05\x00" if level == more else b"" for level in MORE}  # an element more where ``more`` says
    content = tlv(0x30, tlv(0x06, bytes.fromhex("2a864886f70d0109100104"))
                  + tlv(0xA0, tlv(0x04, tst) + null["eContent"]) + null["EncapsulatedContentInfo"])
    signed = tlv(0x30, tlv(0x02, b"\x03") + tlv(0x31, b"") + content + tlv(0x31, b""))
    token = tlv(0x30, tlv(0x06, bytes.fromhex("2a864886f70d010702")) + tlv(0xA0, signed + null["[0]"])
                + null["ContentInfo"])
    return tlv(0x30, tlv(0x30, tlv(0x02, status)) + token + null["TimeStampResp"])


#: The SEQUENCEs (and explicit tags) of a response :func:`_response` can write an element more in.
MORE = ("TimeStampResp", "ContentInfo", "[0]", "EncapsulatedContentInfo", "eContent")


def test_the_response_written_here_in_der_is_read() -> None:
    stamp = read_response(_response({}))
    assert (stamp.imprint, stamp.time, stamp.nonce) == (DIGEST, "20261127050000Z", 5)


@given(st.dictionaries(st.integers(0, ELEMENTS - 1), st.integers(0, 3), max_size=3))
def test_x690_10_1_a_length_in_more_octets_than_needed_is_refused(padded: dict[int, int]) -> None:
    """Found by a property (2026-12-01): a length in the long form below 128 (``81 05``) or with a leading zero
    octet (``82 00 85``) was read, though the reader says it is strict DER."""
    data = _response(padded)
    if any(padded.values()):
        with pytest.raises(ParseError, match="more octets than DER allows"):
            read_response(data)
    else:
        assert read_response(data).imprint == DIGEST


@given(st.binary(min_size=1, max_size=40))
def test_octets_after_the_response_or_the_tst_info_are_refused(extra: bytes) -> None:
    """Found by a property (2026-12-01): octets after the TimeStampResp, or after the TSTInfo in its eContent's
    OCTET STRING, were ignored: DER is one encoding of one value, nothing else."""
    with pytest.raises(ParseError, match="followed by"):
        read_response(_response({}) + extra)
    with pytest.raises(ParseError, match="followed by"):
        read_response(_response({}, after_tst=extra))


def _der_integer(value: int) -> bytes:
    """The content of the DER INTEGER ``value`` (X.690 §8.3: two's complement in the fewest octets)."""
    return value.to_bytes((value + (value < 0)).bit_length() // 8 + 1, "big", signed=True)


@given(st.integers(-(1 << 40), 1 << 40), st.sampled_from([b"", b"\x00", b"\xff"]), st.integers(0, 2))
def test_x690_8_3_2_an_integer_in_more_octets_than_needed_or_none_is_refused(value: int, pad: bytes,
                                                                            times: int) -> None:
    """Found by a property (2026-12-01): an INTEGER of no octets was read as 0, so an empty PKIStatus was
    "granted"; and leading 00 or FF octets DER does not write were read."""
    content = pad * times + _der_integer(value)
    minimal = content == _der_integer(value) and int.from_bytes(content, "big", signed=True) == value
    if minimal:
        assert read_response(_response({}, nonce=content)).nonce == value
    else:
        try:
            stamp = read_response(_response({}, nonce=content))
        except ParseError as exc:
            assert "INTEGER DER does not write" in str(exc)
        else:  # a leading octet that changes the value is DER of another value
            assert stamp.nonce == int.from_bytes(content, "big", signed=True)
            assert content == _der_integer(stamp.nonce)
    with pytest.raises(ParseError, match="INTEGER DER does not write"):
        read_response(_response({}, status=b""))
    with pytest.raises(ParseError, match="INTEGER DER does not write"):
        read_response(_response({}, status=b"\x00\x00"))


@given(st.binary(max_size=300), st.integers(0, 200))
def test_any_octets_spliced_into_a_response_fail_only_as_pdi_errors(noise: bytes, at: int) -> None:
    data = _response({})
    spliced = data[:at] + noise + data[at + len(noise) // 2:]
    try:
        read_response(spliced)
    except (ParseError, IntegrityError):
        pass
    except PDIError as exc:  # pragma: no cover - the assertion says which
        raise AssertionError(f"{type(exc).__name__}: {exc}") from exc


@pytest.mark.parametrize("oid", ["608648016503040201", "2a864886f70d010702", "2a864886f70d0109100104"])
def test_an_oid_is_read_only_as_an_object_identifier(oid: str) -> None:
    """Found by a hunt (2026-12-01): the content type of the token and of its content, and the imprint's
    algorithm, were compared as octets whatever the element's tag, so an OCTET STRING (``04``) holding the octets
    of id-sha256 or id-signedData was read as that OBJECT IDENTIFIER (``06``)."""
    data = _response({})
    where = data.index(bytes([0x06, len(bytes.fromhex(oid))]) + bytes.fromhex(oid))
    retagged = data[:where] + b"\x04" + data[where + 1:]
    with pytest.raises((ParseError, IntegrityError)):
        read_response(retagged)


@pytest.mark.parametrize("more", MORE)
def test_an_element_more_than_its_asn1_type_holds_is_refused(more: str) -> None:
    """Found by a hunt (2026-12-01): a TimeStampResp, its token's ContentInfo, the SignedData's explicit [0], the
    EncapsulatedContentInfo and the eContent's [0] were read for their first elements and any after those ignored;
    their ASN.1 types (RFC 3161 §2.4.2, RFC 5652 §3 and §5.2) hold no more, so that is not their DER."""
    with pytest.raises(ParseError, match="holds an element more"):
        read_response(_response({}, more=more))



@pytest.mark.parametrize(("field", "element", "says"), [
    ("version", b"\x02\x01\x02", "not version 1"),
    ("version", b"\x04\x01\x01", "version has DER tag 0x04"),
    ("policy", b"\x04\x02\x2a\x03", "policy has DER tag 0x04"),
    ("serialNumber", b"\x04\x01\x05", "serialNumber has DER tag 0x04"),
    ("serialNumber", b"\x02\x16\x01" + bytes(21), "serialNumber is an INTEGER of 22 octets"),
])
def test_rfc3161_2_4_2_the_tst_info_is_version_1_with_a_policy_and_a_serial_number(field: str, element: bytes,
                                                                                  says: str) -> None:
    """Found by a hunt (2026-12-01): the TSTInfo's version, policy and serialNumber were not read at all, so a
    TSTInfo of version 2 (no structure RFC 3161 defines) or of fields of other types was read as version 1's. A
    serialNumber of 160 bits (RFC 3161 §2.4.2: what users must accommodate) is read."""
    with pytest.raises(ParseError, match=says):
        read_response(_response({}, written={field: element}))
    assert read_response(_response({}, written={"serialNumber": b"\x02\x15\x00" + b"\xff" * 20})).imprint == DIGEST
