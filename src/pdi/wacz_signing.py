"""WACZ signatures (webrecorder "WACZ Signing and Verification" 0.1.0): a pure core, bytes in, values out.

A signed WACZ holds ``datapackage-digest.json``: ``{"path": "datapackage.json",
"hash": "sha256:<hex>", "signedData": {…}}``, the hash that of the
``datapackage.json`` octets. pdi writes the specification's *anonymous
signature* form of ``signedData``, exactly its six properties::

    {"hash", "created", "software", "version", "signature", "publicKey"}

``signature`` is ECDSA with SHA-256 of the ``hash`` string's octets (``sha256:…``,
UTF-8), ``publicKey`` the key's SubjectPublicKeyInfo (DER), both base64. The
key is on the curve P-384 and the signature the IEEE P1363 pair r‖s (96 octets),
what Web Crypto makes and reads: that is how ArchiveWeb.page (the form's
reference implementation) signs and how ReplayWeb.page checks it (it imports
``publicKey`` as ECDSA P-384). ``created`` is the ``datapackage.json``'s own
``created`` (py-wacz refuses a signature whose ``created`` differs).

With a certificate for the key and a time-stamping authority
(:class:`Identity`), pdi writes the other form, *domain-ownership identity +
signed timestamp*: ``signature`` is then DER (what authsign, its reference
verifier and ``wacz validate --verify-auth``'s, reads), ``domain`` the
certificate's subject, ``domainCert`` its PEM chain, ``timeSignature`` the
RFC 3161 ``TimeStampResp`` (base64) of the ``signature`` string, and
``timestampCert`` the TSA's PEM chain. authsign trusts only the roots it lists
(Let's Encrypt's, FreeTSA's) and a certificate issued at most 7 days before
``created``.

:func:`check_digest` reads both forms; of the domain form it checks the
signature with the certificate's key and that ``timeSignature`` stamps the
signature, and leaves the chains' trust to authsign.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.x509.oid import NameOID

from pdi import untrusted_json
from pdi._wording import printable
from pdi.errors import IntegrityError, ParseError, UnsupportedError
from pdi.rfc3161 import epoch_of, iso_8601, read_response

__all__ = ["ANONYMOUS", "DIGEST_FILE", "DOMAIN", "MAX_DIGEST_FILE", "SIGNING_VERSION", "Checked", "Identity", "WaczKey", "check_digest",
           "digest_file", "public_key_id"]

#: The name of the digest file in the WACZ.
DIGEST_FILE = "datapackage-digest.json"
#: The version of the signing specification written (authsign's ``SignedHash.version``).
SIGNING_VERSION = "0.1.0"
#: The properties of each form of ``signedData`` (the specification: "MUST not contain any property that is not
#: listed in either signature format").
ANONYMOUS = frozenset({"hash", "created", "software", "version", "signature", "publicKey"})
DOMAIN = frozenset({"hash", "created", "software", "version", "signature", "domain", "domainCert",
                    "timeSignature", "timestampCert", "crossSignedCert"})
#: The largest digest file read (a signed one is a few KiB with its certificate chains).
MAX_DIGEST_FILE = 1 << 20
_CURVE = ec.SECP384R1()


def public_key_id(spki_b64: str) -> str:
    """A short name for a WACZ public key: ``sha256:`` and the first 16 hex digits of its SPKI's SHA-256."""
    return "sha256:" + hashlib.sha256(base64.b64decode(spki_b64)).hexdigest()[:16]


class WaczKey:
    """An ECDSA P-384 private key that signs WACZ packages. Never printed (``repr`` shows the public key's id)."""

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self._key = key
        spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        #: The public key as ``signedData.publicKey`` carries it: base64 of the DER SubjectPublicKeyInfo.
        self.public = base64.b64encode(spki).decode("ascii")

    def __repr__(self) -> str:
        return f"WaczKey({public_key_id(self.public)!r})"

    @classmethod
    def generate(cls) -> WaczKey:
        return cls(ec.generate_private_key(_CURVE))

    @classmethod
    def from_pem(cls, data: bytes, where: str) -> WaczKey:
        """The key of an unencrypted PKCS#8 PEM; ``where`` names the file. Only P-384 (what ReplayWeb.page reads)."""
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise ParseError(f"{where} is not an unencrypted PKCS#8 PEM private key: {exc}", rule="pkcs8") from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != _CURVE.name:
            raise UnsupportedError(f"{where} holds a {type(key).__name__}, not an ECDSA P-384 key (a WACZ key)")
        return cls(key)

    def pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def sign(self, text: str, *, der: bool = False) -> str:
        """The base64 signature of ``text``'s UTF-8 octets, ECDSA with SHA-256: P1363 (r‖s, 48 octets each),
        or with ``der`` DER (RFC 3279 §2.2.3)."""
        signature = self._key.sign(text.encode("utf-8"), ec.ECDSA(hashes.SHA256()))
        if not der:
            r, s = decode_dss_signature(signature)
            size = (self._key.curve.key_size + 7) // 8
            signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
        return base64.b64encode(signature).decode("ascii")


@dataclass(frozen=True)
class Identity:
    """What the domain form needs beside the key: the key's certificate chain (PEM, the key's certificate
    first), the TSA's (PEM), and ``timestamp``, which asks the TSA to stamp octets (the DER ``TimeStampResp``)."""

    domain_cert: str
    timestamp_cert: str
    timestamp: Callable[[bytes], bytes]

    def domain(self, key: WaczKey) -> str:
        """The certificate's domain (its subject's CN, else its first DNS name); :class:`IntegrityError` when it
        does not certify ``key``."""
        cert = _first_cert(self.domain_cert, "the domain certificate")
        spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)
        if base64.b64encode(spki).decode("ascii") != key.public:
            raise IntegrityError(f"the domain certificate ({cert.subject.rfc4514_string()}) certifies another key,"
                                 f" not the WACZ key {public_key_id(key.public)}")
        names = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        if names:
            return str(names[0].value)
        try:
            dns = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            dns = None
        found = dns.get_values_for_type(x509.DNSName) if dns is not None else []
        if not found:
            raise ParseError("the domain certificate names no domain (no CN, no DNS name)", rule="WACZ signing")
        return str(found[0])


def _first_cert(chain: str, what: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(chain.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise ParseError(f"{what} is not a PEM certificate chain: {exc}", rule="WACZ signing") from None


def digest_file(package: bytes, created: str, software: str, key: WaczKey | None,
                identity: Identity | None = None) -> bytes:
    """The ``datapackage-digest.json`` of the ``datapackage.json`` octets ``package`` (whose ``created`` is
    ``created``): its hash and, with ``key``, the anonymous ``signedData`` (with ``identity``, the domain form)."""
    hash_ = "sha256:" + hashlib.sha256(package).hexdigest()
    digest: dict[str, Any] = {"path": "datapackage.json", "hash": hash_}
    if key is not None and identity is None:
        digest["signedData"] = {"hash": hash_, "created": created, "software": software, "version": SIGNING_VERSION,
                                "signature": key.sign(hash_), "publicKey": key.public}
    elif key is not None and identity is not None:
        domain = identity.domain(key)
        signature = key.sign(hash_, der=True)
        stamped = identity.timestamp(signature.encode("ascii"))
        digest["signedData"] = {"hash": hash_, "created": created, "software": software, "version": SIGNING_VERSION,
                                "signature": signature, "domain": domain, "domainCert": identity.domain_cert,
                                "timeSignature": base64.b64encode(stamped).decode("ascii"),
                                "timestampCert": identity.timestamp_cert}
    return json.dumps(digest, indent=2).encode("utf-8")


@dataclass(frozen=True)
class Checked:
    """A WACZ's digest file that held: the hash, and when signed, by what (a public key, or a domain)."""

    hash: str
    signed: bool
    form: str | None = None  # "anonymous" or "domain"
    public_key: str | None = None  # anonymous: the base64 SPKI
    domain: str | None = None  # domain: the domain named (its certificate's trust not checked here)
    stamped: str | None = None  # domain: the time its RFC 3161 timestamp says (GeneralizedTime)

    def describe(self) -> str:
        if not self.signed:
            return "unsigned (datapackage.json's hash matches datapackage-digest.json)"
        if self.form == "anonymous":
            assert self.public_key is not None
            return (f"signed (anonymous form) by the ECDSA key {public_key_id(self.public_key)}: signature verified;"
                    " whose key it is is for you to know")
        when = iso_8601(self.stamped) if self.stamped else "(no time)"
        return (f"signed (domain form) for {printable(self.domain or '')}, timestamped {when}: signature verified with its"
                " certificate's key (a certificate for that domain) and the timestamp with its TSA's certificate;"
                " the trust of the two chains is authsign's to check (wacz validate --verify-auth)")


def check_digest(where: str, package: bytes, digest_text: bytes) -> Checked:
    """Check ``datapackage-digest.json`` (``digest_text``) against the ``datapackage.json`` octets ``package``.

    :class:`IntegrityError` naming ``where`` and what is wrong when the hash
    differs or a signature does not verify; :class:`ParseError` when a file is
    not what the specification says.
    """
    if len(digest_text) > MAX_DIGEST_FILE:
        raise ParseError(f"{where}: {DIGEST_FILE} is larger than {MAX_DIGEST_FILE} octets", rule="WACZ signing")
    digest = untrusted_json.loads(digest_text, f"{where}: {DIGEST_FILE}", rule="WACZ")
    meta = untrusted_json.loads(package, f"{where}: datapackage.json", rule="WACZ")
    if not isinstance(digest, dict) or not isinstance(meta, dict):
        raise ParseError(f"{where}: datapackage.json and {DIGEST_FILE} are JSON objects", rule="WACZ")
    actual = "sha256:" + hashlib.sha256(package).hexdigest()
    stated = digest.get("hash")
    if digest.get("path", "datapackage.json") != "datapackage.json" or not isinstance(stated, str):
        raise ParseError(f"{where}: {DIGEST_FILE} names no \"hash\" of datapackage.json", rule="WACZ signing")
    if stated.lower() != actual:
        raise IntegrityError(f"{where}: datapackage.json was changed: its SHA-256 is {actual}, {DIGEST_FILE}"
                             f" says {stated}")
    signed = digest.get("signedData")
    if signed is None:
        return Checked(actual, signed=False)
    if not isinstance(signed, dict):
        raise ParseError(f"{where}: {DIGEST_FILE}'s \"signedData\" is not an object", rule="WACZ signing")
    if signed.get("hash") != stated:
        raise IntegrityError(f"{where}: the signed hash {signed.get('hash')!r} is not datapackage.json's ({stated})")
    if signed.get("created") != meta.get("created"):
        raise IntegrityError(f"{where}: the signature's \"created\" {signed.get('created')!r} is not"
                             f" datapackage.json's ({meta.get('created')!r})")
    signature = _b64(where, signed.get("signature"), "signature")
    if "publicKey" in signed:
        extra = sorted(set(signed) - ANONYMOUS)
        if extra:
            raise ParseError(f"{where}: an anonymous signedData has no property {', '.join(extra)}",
                             rule="WACZ signing")
        try:
            key = serialization.load_der_public_key(_b64(where, signed["publicKey"], "publicKey"))
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise ParseError(f"{where}: signedData's publicKey is not a DER SubjectPublicKeyInfo: {exc}",
                             rule="WACZ signing") from None
        _verify(where, key, signature, stated, "its publicKey")
        return Checked(actual, signed=True, form="anonymous", public_key=signed["publicKey"])
    extra = sorted(set(signed) - DOMAIN)
    if extra or not isinstance(signed.get("domainCert"), str):
        raise ParseError(f"{where}: signedData has neither a publicKey nor a domainCert"
                         + (f" (and properties {', '.join(extra)} of neither form)" if extra else ""),
                         rule="WACZ signing")
    cert = _first_cert(signed["domainCert"], f"{where}: signedData's domainCert")
    try:
        certified = cert.public_key()
    except (ValueError, UnsupportedAlgorithm) as exc:  # a key type cryptography does not know, or a broken key
        raise UnsupportedError(f"{where}: signedData's domainCert holds a key pdi cannot read: {exc}") from None
    _verify(where, certified, signature, stated, "its domainCert's key")
    domain = signed.get("domain")
    names = _domains_of(cert)
    if not isinstance(domain, str) or not _named(domain, names):
        shown = ", ".join(sorted(printable(n) for n in names)[:5]) or "no domain"
        raise IntegrityError(f"{where}: signedData names the domain {printable(str(domain))[:200]!r}, but its"
                             f" domainCert is for {shown}")
    token = _b64(where, signed.get("timeSignature"), "timeSignature")
    stamp = read_response(token)
    try:
        stamp.check(signed["signature"].encode("ascii"))
    except IntegrityError as exc:
        raise IntegrityError(f"{where}: signedData's timeSignature is not of its signature: {exc}") from None
    _check_stamp_signed(where, token, signed["signature"].encode("ascii"), signed.get("timestampCert"), stamp.time)
    _check_stamped_near(where, signed.get("created"), stamp.time)
    return Checked(actual, signed=True, form="domain", domain=domain.lower(), stamped=stamp.time)


def _domains_of(cert: x509.Certificate) -> set[str]:
    """The DNS names a TLS certificate is for: its subject's CN and its subjectAltName's dNSNames, lower-cased."""
    try:
        names = {str(a.value).lower() for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)}
    except Exception as exc:  # read when first asked for: a stranger's name of a wrong type is a KeyError or TypeError
        raise ParseError(f"the domainCert's subject cannot be read: {exc!r}", rule="WACZ signing") from None
    try:
        alternative = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return names
    except Exception as exc:
        raise ParseError(f"the domainCert's extensions cannot be read: {exc}", rule="WACZ signing") from None
    return names | {n.lower() for n in alternative.get_values_for_type(x509.DNSName)}


def _named(domain: str, names: set[str]) -> bool:
    """Whether ``domain`` is one of ``names``, or matched by a wildcard among them (``*.example.org`` names one
    label more, RFC 6125 §6.4.3)."""
    lowered = domain.lower()
    if lowered in names:
        return True
    head, dot, parent = lowered.partition(".")
    return bool(head and dot and f"*.{parent}" in names)


def _check_stamp_signed(where: str, token: bytes, stamped: bytes, chain: object, at: str) -> None:
    """:class:`IntegrityError` unless the timestamp ``token`` (of ``stamped``, made ``at``, its genTime) is signed
    by a certificate of the ``timestampCert`` chain valid then (``openssl ts -verify -partial_chain -attime``): its
    trust is left to authsign, and a certificate expired since does not undo it."""
    import tempfile
    from pathlib import Path

    from pdi.timestamping import verify_with_ca

    if not isinstance(chain, str):
        raise ParseError(f"{where}: signedData has no timestampCert", rule="WACZ signing")
    with tempfile.TemporaryDirectory(prefix="pdi-wacz-tsr-") as work:
        (Path(work) / "token.tsr").write_bytes(token)
        (Path(work) / "signature").write_bytes(stamped)
        (Path(work) / "tsa.pem").write_text(chain, encoding="utf-8", errors="replace")
        try:
            verify_with_ca(Path(work) / "token.tsr", Path(work) / "signature", Path(work) / "tsa.pem", partial=True,
                           at=at)
        except IntegrityError:
            raise IntegrityError(f"{where}: signedData's timeSignature is not signed by its timestampCert") from None


#: How long before its timestamp's genTime a domain form's ``created`` may be (the signing specification's Validation
#: step 7: "within 10 minutes"; authsign's ``STAMP_DURATION``); never after it.
STAMP_WITHIN = 600


def _check_stamped_near(where: str, created: object, gen_time: str) -> None:
    """:class:`IntegrityError` unless ``created`` (ISO 8601; UTC when it names no offset) is at most
    :data:`STAMP_WITHIN` seconds before the timestamp's ``gen_time``, and not after it (authsign's
    ``no_older_then``: a package is made, then signed, then its signature stamped): a package dated other than
    when its signature was stamped says a time the TSA does not vouch for."""
    import datetime

    if not isinstance(created, str):  # a JSON number such as 20261128 would read as a date if made a string
        raise ParseError(f"{where}: signedData has no created (an ISO 8601 date, as a string)", rule="WACZ signing")
    try:
        when = datetime.datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        raise ParseError(f"{where}: signedData's created {printable(created)[:80]!r} is not an ISO 8601 date",
                         rule="WACZ signing") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    fraction = gen_time[14:].rstrip("Z")  # genTime's fraction of a second (RFC 3161 §2.4.2: ".s…", may be absent)
    stamped = epoch_of(gen_time) + (float(fraction) if fraction[1:].isdigit() and fraction[:1] == "." else 0.0)
    ahead = when.timestamp() - stamped
    if ahead > 0:
        raise IntegrityError(f"{where}: signedData's created {printable(created)[:80]!r} is after its timestamp"
                             f" ({gen_time}, {ahead:.0f} s later): the TSA does not vouch for that date")
    if -ahead > STAMP_WITHIN:
        raise IntegrityError(f"{where}: signedData's created {printable(created)[:80]!r} is not within {STAMP_WITHIN // 60} minutes of"
                             f" its timestamp ({gen_time}, {-ahead:.0f} s apart): the TSA does not vouch for that date")


def _b64(where: str, value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise ParseError(f"{where}: signedData has no {what}", rule="WACZ signing")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ParseError(f"{where}: signedData's {what} is not base64", rule="WACZ signing") from None


def _verify(where: str, key: object, signature: bytes, text: str, whose: str) -> None:
    """ECDSA with SHA-256 of ``text``; ``signature`` as P1363 (r‖s, Web Crypto's) or DER (authsign's)."""
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise UnsupportedError(f"{where}: the WACZ is signed with a {type(key).__name__}; the WACZ signing"
                               " specification's signatures are ECDSA")
    size = (key.curve.key_size + 7) // 8
    readings = [signature]  # DER; and, of the length of r‖s, P1363 (a DER signature that long is tried too)
    if len(signature) == 2 * size:
        readings.insert(0, encode_dss_signature(int.from_bytes(signature[:size], "big"),
                                                int.from_bytes(signature[size:], "big")))
    for der in readings:
        try:
            key.verify(der, text.encode("utf-8"), ec.ECDSA(hashes.SHA256()))
            return
        except (InvalidSignature, ValueError):
            continue
    raise IntegrityError(f"{where}: the WACZ signature does not verify with {whose}: datapackage-digest.json"
                         " was changed or another key signed it")
