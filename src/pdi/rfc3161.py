"""Trusted timestamps (RFC 3161): the request for a SHA-256 digest, and what a response says (a stamp of a
SHA-256, SHA-384 or SHA-512 digest).

A pure core: DER octets in and out, no I/O (asking a time-stamping authority
over HTTP and checking its signature are the command line's, with
``openssl ts -verify``). Written by hand because only a few fixed
structures are needed and no locked dependency speaks ASN.1: the
``TimeStampReq`` (§2.4.1) is written whole, and of a ``TimeStampResp``
(§2.4.2) only the path to the ``TSTInfo`` is read — status, the CMS
``SignedData`` (RFC 5652 §5.1) around it, and its message imprint, time and
nonce. The reader is strict DER (definite lengths only, every length
within its parent), so a stranger's response can make it fail only with a
:class:`~pdi.errors.ParseError` naming where.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import NoReturn

from pdi.errors import IntegrityError, ParseError

__all__ = ["MAX_RESPONSE", "TimeStamp", "read_response", "timestamp_request"]

#: id-sha256 (RFC 5754 §2.2, NIST), DER of its OID's content.
SHA256_OID = bytes.fromhex("608648016503040201")
#: The message imprints a response may stamp (RFC 3161 §2.4.2: a TSA answers with the hash algorithm it was asked
#: for, and a stamp made by another tool, ``openssl ts -query -sha512``, may be of any): the DER content of each
#: OID (RFC 5754 §2.2: id-sha256, id-sha384, id-sha512), its :mod:`hashlib` name and its digest's size. Not SHA-1
#: nor MD5: a collision of either is within reach, and a stamp of one then stamps another's octets too.
IMPRINTS = {SHA256_OID: ("sha256", 32), bytes.fromhex("608648016503040202"): ("sha384", 48),
            bytes.fromhex("608648016503040203"): ("sha512", 64)}
#: id-signedData (RFC 5652 §5.1) and id-ct-TSTInfo (RFC 3161 §2.4.2).
SIGNED_DATA_OID = bytes.fromhex("2a864886f70d010702")
TST_INFO_OID = bytes.fromhex("2a864886f70d0109100104")
#: The largest response read (a token with the TSA's certificate chain is a few KiB).
MAX_RESPONSE = 1 << 20

_SEQUENCE, _SET, _INTEGER, _BOOLEAN, _OCTETS, _OID, _NULL, _TIME = 0x30, 0x31, 0x02, 0x01, 0x04, 0x06, 0x05, 0x18
_EXPLICIT_0 = 0xA0
#: PKIStatus granted (0) and grantedWithMods (1) carry a token (§2.4.2); the rest say why not.
_STATUS = {0: "granted", 1: "grantedWithMods", 2: "rejection", 3: "waiting", 4: "revocationWarning",
           5: "revocationNotification"}


def _tlv(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        octets = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(octets)]) + octets
    return bytes([tag]) + length + content


def _integer(value: int) -> bytes:
    if value < 0:
        raise ValueError("only non-negative integers")
    return _tlv(_INTEGER, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def timestamp_request(digest: bytes, nonce: int) -> bytes:
    """The DER ``TimeStampReq`` (RFC 3161 §2.4.1) for a SHA-256 ``digest``: version 1, the nonce, and
    ``certReq`` true (the TSA's certificate comes in the token, so it can be checked against a CA alone)."""
    if len(digest) != 32:
        raise ValueError("a SHA-256 digest is 32 octets")
    imprint = _tlv(_SEQUENCE, _tlv(_SEQUENCE, _tlv(_OID, SHA256_OID) + _tlv(_NULL, b"")) + _tlv(_OCTETS, digest))
    return _tlv(_SEQUENCE, _integer(1) + imprint + _integer(nonce) + _tlv(_BOOLEAN, b"\xff"))


@dataclass(frozen=True)
class _Element:
    tag: int
    start: int  # of the content
    end: int


def _element(data: bytes, offset: int, end: int, what: str) -> _Element:
    """The DER element at ``offset`` (which must end by ``end``)."""
    if offset + 2 > end:
        raise ParseError(f"the timestamp response ends inside {what}", offset=offset, rule="der")
    tag, first = data[offset], data[offset + 1]
    if tag & 0x1F == 0x1F:  # X.690 §8.1.2.4: a tag number past 30, in more octets; no field read here has one
        raise ParseError(f"{what} has a tag number in several octets, which no field of RFC 3161 has",
                         offset=offset, rule="der")
    start = offset + 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or start + count > end:
            raise ParseError(f"{what} has a length DER does not allow", offset=offset + 1, rule="der")
        length = int.from_bytes(data[start:start + count], "big")
        # X.690 §10.1: the length in the fewest octets (the short form below 128, no leading zero octet)
        if length < 0x80 or data[start] == 0:
            raise ParseError(f"{what} has a length in more octets than DER allows", offset=offset + 1, rule="der")
        start += count
    if start + length > end:
        raise ParseError(f"{what} is longer than what holds it", offset=offset, rule="der")
    return _Element(tag, start, start + length)


def _children(data: bytes, parent: _Element, what: str) -> list[_Element]:
    found = []
    offset = parent.start
    while offset < parent.end:
        child = _element(data, offset, parent.end, what)
        found.append(child)
        offset = child.end
    return found


def _expect(element: _Element, tag: int, what: str) -> _Element:
    if element.tag != tag:
        raise ParseError(f"{what} has DER tag 0x{element.tag:02x}, not 0x{tag:02x}", offset=element.start,
                         rule="rfc3161")
    return element


def _int(data: bytes, element: _Element, what: str, most: int) -> int:
    """The INTEGER ``element``, of at most ``most`` octets (a stranger's 2,000-octet one could not be printed)."""
    if element.end - element.start > most:
        raise ParseError(f"{what} is an INTEGER of {element.end - element.start} octets, more than {most}",
                         offset=element.start, rule="rfc3161")
    content = data[element.start:element.end]
    # X.690 §8.3.2: one octet at least, and not nine leading bits all zeros or all ones (DER's fewest octets)
    if not content or (len(content) > 1 and (content[0], content[1] >> 7) in ((0, 0), (0xFF, 1))):
        raise ParseError(f"{what} is an INTEGER DER does not write ({len(content)} octets: {content[:8].hex() or 'none'})",
                         offset=element.start, rule="der")
    return int.from_bytes(content, "big", signed=True)


def _more(what: str, element: _Element) -> NoReturn:
    """Refuse the element found after the last that ``what`` holds."""
    raise ParseError(f"{what} holds an element more (DER tag 0x{element.tag:02x})", offset=element.start, rule="der")


def _oid(data: bytes, element: _Element) -> bytes | None:
    """The content of the OBJECT IDENTIFIER ``element``; ``None`` when it is another type (an OCTET STRING of the
    same octets names no algorithm nor content type)."""
    return data[element.start:element.end] if element.tag == _OID else None


#: A ``GeneralizedTime`` as RFC 3161 §2.4.2 has genTime written: ``YYYYMMDDhhmmss[.s...]Z``, the fraction without
#: trailing zeros.
_GENERALIZED_TIME = re.compile(rb"[0-9]{14}(?:\.[0-9]{0,8}[1-9])?Z")


def epoch_of(generalized: str) -> int:
    """The POSIX time of a ``GeneralizedTime`` as RFC 3161 writes genTime (``YYYYMMDDhhmmss[.s]Z``), to the second;
    :class:`ValueError` for digits that are no day and time (month 13, 30 February)."""
    import calendar
    import time

    return calendar.timegm(time.strptime(generalized[:14], "%Y%m%d%H%M%S"))


def iso_8601(generalized: str) -> str:
    """A ``GeneralizedTime`` as RFC 3161 §2.4.2 writes genTime (``20261128222724.25Z``, always UTC) written as
    ISO 8601 in UTC, as people read a time (``2026-11-28T22:27:24.25Z``): the same digits, the fraction of a second
    kept as the TSA gave it."""
    g = generalized
    return f"{g[0:4]}-{g[4:6]}-{g[6:8]}T{g[8:10]}:{g[10:12]}:{g[12:14]}{g[14:].removesuffix('Z')}Z"


@dataclass(frozen=True)
class TimeStamp:
    """What a granted response says: the digest it stamps (of ``algorithm``, a :mod:`hashlib` name: sha256, sha384
    or sha512), when (``GeneralizedTime``, as written), its nonce."""

    imprint: bytes
    time: str
    nonce: int | None
    algorithm: str = "sha256"

    def check(self, data: bytes, nonce: int | None = None) -> None:
        """:class:`IntegrityError` unless this stamps the digest of ``data`` (and carries ``nonce``, if given)."""
        if self.imprint != hashlib.new(self.algorithm, data).digest():
            named = self.algorithm.upper().replace("SHA", "SHA-")
            raise IntegrityError(f"the timestamp is of {named} {self.imprint.hex()}, not of these octets")
        if nonce is not None and self.nonce != nonce:
            raise IntegrityError(f"the timestamp's nonce is {self.nonce}, not the request's {nonce}")

    @property
    def iso(self) -> str:
        """When the TSA stamped it, as ISO 8601 in UTC (:func:`iso_8601`), for people to read."""
        return iso_8601(self.time)


def read_response(data: bytes) -> TimeStamp:
    """Read a DER ``TimeStampResp`` (RFC 3161 §2.4.2): :class:`IntegrityError` if the TSA did not grant it,
    :class:`ParseError` if it is not one; else the stamp's imprint, time and nonce (its signature unchecked)."""
    if len(data) > MAX_RESPONSE:
        raise ParseError(f"a timestamp response of {len(data)} octets is larger than {MAX_RESPONSE}", rule="rfc3161")
    whole = _expect(_element(data, 0, len(data), "TimeStampResp"), _SEQUENCE, "TimeStampResp")
    if whole.end != len(data):
        raise ParseError(f"the TimeStampResp is followed by {len(data) - whole.end} octets more", offset=whole.end,
                         rule="der")
    parts = _children(data, whole, "TimeStampResp")
    if not parts:
        raise ParseError("the TimeStampResp is empty", rule="rfc3161")
    # each SEQUENCE read holds what its ASN.1 type does and no more (RFC 3161 §2.4.2, RFC 5652 §3 and §5.2): an
    # element more is not the DER of that type, and would be read by another reader as something pdi never saw
    if len(parts) > 2:
        _more("the TimeStampResp (status, timeStampToken)", parts[2])
    status_info = _children(data, _expect(parts[0], _SEQUENCE, "PKIStatusInfo"), "PKIStatusInfo")
    if not status_info:
        raise ParseError("the PKIStatusInfo is empty", rule="rfc3161")
    status = _int(data, _expect(status_info[0], _INTEGER, "PKIStatus"), "the PKIStatus", 4)
    if status not in (0, 1) or len(parts) < 2:
        raise IntegrityError(f"the time-stamping authority answered {_STATUS.get(status, status)}: no timestamp")
    content_info = _children(data, _expect(parts[1], _SEQUENCE, "the TimeStampToken"), "the TimeStampToken")
    if len(content_info) < 2 or _oid(data, content_info[0]) != SIGNED_DATA_OID:
        raise ParseError("the TimeStampToken is not a CMS SignedData", rule="rfc3161")
    if len(content_info) > 2:
        _more("the TimeStampToken's ContentInfo (contentType, content)", content_info[2])
    signed = _children(data, _expect(content_info[1], _EXPLICIT_0, "the SignedData's [0]"), "SignedData")
    if len(signed) > 1:
        _more("the SignedData's [0] (one SignedData)", signed[1])
    signed_data = _children(data, _expect(signed[0], _SEQUENCE, "SignedData"), "SignedData") if signed else []
    if len(signed_data) < 3:
        raise ParseError("the SignedData has no encapsulated content", rule="rfc3161")
    encapsulated = _children(data, _expect(signed_data[2], _SEQUENCE, "EncapsulatedContentInfo"), "the content")
    if len(encapsulated) < 2 or _oid(data, encapsulated[0]) != TST_INFO_OID:
        raise ParseError("the SignedData does not hold a TSTInfo", rule="rfc3161")
    if len(encapsulated) > 2:
        _more("the EncapsulatedContentInfo (eContentType, eContent)", encapsulated[2])
    octets = _children(data, _expect(encapsulated[1], _EXPLICIT_0, "eContent"), "eContent")
    if not octets:
        raise ParseError("the TSTInfo is empty", rule="rfc3161")
    if len(octets) > 1:
        _more("the eContent's [0] (one OCTET STRING)", octets[1])
    _expect(octets[0], _OCTETS, "eContent")
    tst_info = _expect(_element(data, octets[0].start, octets[0].end, "TSTInfo"), _SEQUENCE, "TSTInfo")
    if tst_info.end != octets[0].end:  # the OCTET STRING is the TSTInfo's DER, nothing after it
        raise ParseError(f"the TSTInfo is followed by {octets[0].end - tst_info.end} octets more in its eContent",
                         offset=tst_info.end, rule="der")
    tst = _children(data, tst_info, "TSTInfo")
    if len(tst) < 5:
        raise ParseError("the TSTInfo lacks fields RFC 3161 §2.4.2 requires", rule="rfc3161")
    # version v1(1), the only one RFC 3161 §2.4.2 defines (another is another structure, not read as this one),
    # the policy an OBJECT IDENTIFIER, the serialNumber an INTEGER (up to 160 bits, §2.4.2: 21 octets in DER)
    if _int(data, _expect(tst[0], _INTEGER, "the TSTInfo's version"), "the TSTInfo's version", 4) != 1:
        raise ParseError("the TSTInfo is not version 1, the one RFC 3161 §2.4.2 defines", offset=tst[0].start,
                         rule="rfc3161")
    _expect(tst[1], _OID, "the TSTInfo's policy")
    _int(data, _expect(tst[3], _INTEGER, "the TSTInfo's serialNumber"), "the TSTInfo's serialNumber", 21)
    imprint = _children(data, _expect(tst[2], _SEQUENCE, "MessageImprint"), "MessageImprint")
    if len(imprint) != 2:
        raise ParseError("the MessageImprint is not an algorithm and a digest", rule="rfc3161")
    algorithm = _children(data, _expect(imprint[0], _SEQUENCE, "AlgorithmIdentifier"), "AlgorithmIdentifier")
    known = IMPRINTS.get(_oid(data, algorithm[0]) or b"") if algorithm else None
    if known is None:
        raise IntegrityError("the timestamp is not of a SHA-256, SHA-384 or SHA-512 digest")
    name, size = known
    digest = data[_expect(imprint[1], _OCTETS, "the hashedMessage").start:imprint[1].end]
    if len(digest) != size:
        raise ParseError(f"the timestamp's {name} digest is {len(digest)} octets, not {size}", offset=imprint[1].start,
                         rule="rfc3161")
    time = _expect(tst[4], _TIME, "genTime")
    written = data[time.start:time.end].decode("ascii", errors="replace")
    try:
        if not _GENERALIZED_TIME.fullmatch(data, time.start, time.end):
            raise ValueError(written)
        epoch_of(written)
    except ValueError:
        raise ParseError("the genTime is not a time as RFC 3161 §2.4.2 writes it (YYYYMMDDhhmmss[.s]Z)",
                         offset=time.start, rule="rfc3161") from None
    nonce = next((_int(data, e, "the nonce", 32) for e in tst[5:] if e.tag == _INTEGER), None)
    return TimeStamp(digest, written, nonce, name)
