"""Signing keys and signed manifests: Ed25519 (RFC 8032) in JOSE — JWK (RFC 7517, RFC 8037 §2), JWK thumbprints
(RFC 7638), JWS compact serialization (RFC 7515 §7.1) with ``alg`` ``EdDSA`` (RFC 8037 §3.1; read under its
RFC 9864 name ``Ed25519`` too).

A pure core: bytes and strings in, values out, no I/O (where a key file is
kept is :mod:`pdi.archive.signing_key`). The arithmetic is ``cryptography``'s;
written here is only the JOSE framing, a few lines of base64url and JSON, so
that what is signed is exactly what the archive means (a JOSE library would
save little and add a second parser of the same bytes). ``tests/test_signing.py``
checks it against RFC 8037 Appendix A's vectors and against ``jwcrypto``.

A manifest (:func:`manifest_payload`) is one JSON object: a series, a day
(or the whole series), and a page of its names with their SHA-256 and
size; it is the payload of a JWS whose protected header is
``{"alg":"EdDSA","kid":<thumbprint>,"typ":"pdi-manifest+jws"}``. The JSON is
written canonically (sorted keys, no spaces, UTF-8), so the same names
give the same octets and, Ed25519 being deterministic (RFC 8032 §5.1.6), the
same JWS.

A resolver signs its manifest pages in a thread beside its event loop
(:mod:`pdi.server.protocol.manifests`): a C call holds Python's GIL until it
returns, so a page's JSON and its base64url are each made in pieces
(:data:`JSON_PIECE` names, :data:`B64_PIECE` octets) whose joining gives the
very octets one call would, and the event loop takes its turn between them.
The Ed25519 signature is one call into OpenSSL, which holds the GIL
throughout (about 2.5 ms a MB of page).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pdi import untrusted_json
from pdi.errors import IntegrityError, ParseError, UnsupportedError

__all__ = [
    "MANIFEST_TYPE",
    "VERIFIED_ALGS",
    "Manifest",
    "NotAKey",
    "PublicKey",
    "SigningKey",
    "UnknownSigner",
    "Verified",
    "b64url",
    "b64url_decode",
    "canonical_json",
    "jwk_set",
    "jwk_set_text",
    "manifest_payload",
    "parse_jwks",
    "sign_compact",
    "sign_manifest",
    "verify_compact",
    "verify_manifest",
]

#: The ``typ`` of a manifest's JWS header (RFC 7515 §4.1.9: ``application/`` left out) and its payload's ``type``.
MANIFEST_TYPE = "pdi-manifest+jws"
#: The JWS ``alg`` names a signature is checked under, each an Ed25519 signature of pdi's keys: ``EdDSA`` (RFC 8037
#: §3.1, what pdi writes: every JOSE reader knows it) and ``Ed25519``, the fully-specified name RFC 9864 §2.2
#: registers for it and prefers (deprecating ``EdDSA``). Not ``Ed448``: another curve, of which pdi has no key.
VERIFIED_ALGS = frozenset({"EdDSA", "Ed25519"})
#: The longest compact JWS pdi reads, in characters: far more than a page of manifest entries.
MAX_JWS = 64 << 20
#: The longest JWS protected header pdi reads, in base64url characters (pdi's own are under 200): it is read before
#: the signature is checked, and a stranger's 64 MiB header of empty objects took 1.5 GB as Python's values.
MAX_JWS_HEADER = 8 << 10
#: The longest JWK set pdi reads, in characters: some 10,000 Ed25519 keys (a stranger's 64 MiB set took 1.7 GB).
MAX_JWKS = 1 << 20


#: The octets of ``data`` :func:`b64url` encodes in one call (a multiple of 3: each piece's base64 is whole
#: quadruples, so the pieces joined are the whole's): about half a millisecond of CPU holding the GIL.
B64_PIECE = 3 << 16
#: The items of a long JSON array :func:`canonical_json` writes in one call: some 0.5 ms of a manifest page's.
JSON_PIECE = 256


def b64url(data: bytes) -> str:
    """base64url without padding (RFC 7515 §2, Appendix C), written :data:`B64_PIECE` octets at a time."""
    if len(data) <= B64_PIECE:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
    view = memoryview(data)
    return b"".join(base64.urlsafe_b64encode(view[start:start + B64_PIECE])
                    for start in range(0, len(view), B64_PIECE)).rstrip(b"=").decode("ascii")


def b64url_decode(text: str, what: str) -> bytes:
    """The octets of unpadded base64url ``text``; :class:`ParseError` naming ``what`` if it is not that."""
    if _B64URL_TEXT.fullmatch(text) is None or len(text) % 4 == 1:
        bad = next((i for i, c in enumerate(text) if c not in _B64URL), None)
        raise ParseError(f"{what} is not unpadded base64url", text=text[:80], offset=bad, rule="base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ParseError(f"{what} is not base64url: {exc}", text=text[:80], rule="base64url") from exc


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_B64URL_TEXT = re.compile("[A-Za-z0-9_-]*")


def canonical_json(value: object) -> bytes:
    """``value`` as JSON with sorted keys and no spaces, in UTF-8 (what a manifest's payload is); an array of more
    than :data:`JSON_PIECE` items, in an object or alone, written that many items at a time (the same octets)."""
    return _canonical_text(value).encode("utf-8")


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical_text(value: object) -> str:
    if isinstance(value, list) and len(value) > JSON_PIECE:
        # each piece's array without its brackets: the items and the commas between them, as one call writes them
        return "[" + ",".join(_dumps(value[start:start + JSON_PIECE])[1:-1]
                              for start in range(0, len(value), JSON_PIECE)) + "]"
    if (isinstance(value, dict) and all(isinstance(key, str) for key in value)
            and any(isinstance(item, list) and len(item) > JSON_PIECE for item in value.values())):
        # json's sort_keys sorts the members by their keys as strings, as sorted() does here
        return "{" + ",".join(_dumps(key) + ":" + _canonical_text(value[key]) for key in sorted(value)) + "}"
    return _dumps(value)


#: The y coordinates (little-endian, x's sign bit cleared) of the eight Ed25519 points of small order, and of the
#: non-canonical encodings of two of them (y = p, p + 1): libsodium's list (``ge25519_has_small_order``). No private
#: key has such a public key (RFC 8032 §5.1.5: A = [s]B, of prime order L), and a signature of anything verifies
#: with one, forged without any key: a JWK of one is refused.
_SMALL_ORDER = frozenset(bytes.fromhex(y) for y in (
    "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
    "0100000000000000000000000000000000000000000000000000000000000000",  # the identity, order 1
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # p - 1: order 2
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # p: 0 again
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # p + 1: 1 again
))


@dataclass(frozen=True)
class PublicKey:
    """An Ed25519 public key, as JOSE names it."""

    raw: bytes  # the 32 octets (RFC 8032 §5.1.5)
    #: The ``kid`` of the JWK it was read from, when it has one (RFC 7517 §4.5: its issuer's to choose; pdi's are
    #: thumbprints): a JWS naming it is checked with this key too. Not part of the key's identity.
    kid: str | None = dataclasses.field(default=None, compare=False)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> PublicKey:
        """The key of an OKP JWK with ``crv`` Ed25519 (RFC 8037 §2); a private JWK's ``d`` is ignored."""
        if jwk.get("kty") != "OKP":
            raise UnsupportedError(f"a signing key is an OKP JWK (RFC 8037), not kty {jwk.get('kty')!r}")
        if jwk.get("crv") != "Ed25519":
            raise UnsupportedError(f"a signing key is on the curve Ed25519, not {jwk.get('crv')!r}")
        x = jwk.get("x")
        if not isinstance(x, str):
            raise ParseError("the JWK has no \"x\" (the public key)", rule="jwk")
        raw = b64url_decode(x, "the JWK's \"x\"")
        if len(raw) != 32:
            raise ParseError(f"an Ed25519 public key is 32 octets, the JWK's \"x\" is {len(raw)}", rule="jwk")
        if raw[:31] + bytes([raw[31] & 0x7F]) in _SMALL_ORDER:
            raise ParseError(f"the JWK's \"x\" {x!r} is a point of small order: no private key has it, and anyone"
                             " can sign for it (a signature of anything verifies with it)", rule="jwk")
        kid = jwk.get("kid")
        return cls(raw, kid if isinstance(kid, str) else None)

    @property
    def x(self) -> str:
        """The key in base64url (the JWK's ``x``)."""
        return b64url(self.raw)

    @property
    def thumbprint(self) -> str:
        """The JWK thumbprint (RFC 7638 §3, SHA-256): of ``{"crv","kty","x"}`` in that order, no spaces."""
        members = f'{{"crv":"Ed25519","kty":"OKP","x":"{self.x}"}}'
        return b64url(hashlib.sha256(members.encode("ascii")).digest())

    def jwk(self) -> dict[str, str]:
        """The public JWK (RFC 8037 §2), with ``use`` sig, ``alg`` EdDSA and ``kid`` the one it was read with
        (:attr:`kid`: a pinned key's issuer's, which its JWS name) or else its thumbprint (pdi's own)."""
        return {"kty": "OKP", "crv": "Ed25519", "x": self.x, "kid": self.kid if self.kid is not None else self.thumbprint,
                "use": "sig", "alg": "EdDSA"}

    def verify(self, signature: bytes, data: bytes) -> bool:
        """Whether ``signature`` is this key's Ed25519 signature of ``data``."""
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, data)
        except InvalidSignature:
            return False
        return True


class SigningKey:
    """An Ed25519 private key: signs; its :attr:`public` half is what is shown. Never printed (``repr`` hides it)."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public = PublicKey(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.public.thumbprint!r})"

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, data: bytes, where: str) -> SigningKey:
        """The key of an unencrypted PKCS#8 PEM (``-----BEGIN PRIVATE KEY-----``); ``where`` names the file."""
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise ParseError(f"{where} is not an unencrypted PKCS#8 PEM private key: {exc}", rule="pkcs8") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise UnsupportedError(f"{where} holds a {type(key).__name__}, not an Ed25519 key")
        return cls(key)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> SigningKey:
        """The key of a private OKP JWK (``d``, RFC 8037 §2); its ``x`` must be the public half of ``d``."""
        public = PublicKey.from_jwk(jwk)
        d = jwk.get("d")
        if not isinstance(d, str):
            raise ParseError("the JWK has no \"d\" (it is a public key)", rule="jwk")
        seed = b64url_decode(d, "the JWK's \"d\"")
        if len(seed) != 32:
            raise ParseError(f"an Ed25519 private key is 32 octets, the JWK's \"d\" is {len(seed)}", rule="jwk")
        key = cls(Ed25519PrivateKey.from_private_bytes(seed))
        if key.public != public:
            raise IntegrityError("the JWK's \"x\" is not the public key of its \"d\"")
        return key

    def pem(self) -> bytes:
        """The key as an unencrypted PKCS#8 PEM (what ``pdi keys init`` writes, mode 0600)."""
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def sign(self, data: bytes) -> bytes:
        return self._key.sign(data)


def sign_compact(key: SigningKey, payload: bytes, header: Mapping[str, Any] | None = None) -> str:
    """The compact JWS (RFC 7515 §7.1) of ``payload`` signed with EdDSA (RFC 8037 §3.1).

    ``header`` is the protected header (default ``{"alg":"EdDSA"}``); its
    ``alg`` must be ``EdDSA``. It is written as JSON with no spaces, in the
    order given (RFC 8037 A.4's header is ``{"alg":"EdDSA"}``).
    """
    protected = dict(header) if header is not None else {"alg": "EdDSA"}
    if protected.get("alg") != "EdDSA":
        raise UnsupportedError(f"pdi signs with alg EdDSA, not {protected.get('alg')!r}")
    signing_input = b64url(json.dumps(protected, separators=(",", ":")).encode("utf-8")) + "." + b64url(payload)
    return signing_input + "." + b64url(key.sign(signing_input.encode("ascii")))


@dataclass(frozen=True)
class Verified:
    """A compact JWS whose signature held: its protected header and payload octets, and the key that signed it."""

    header: dict[str, Any]
    payload: bytes
    key: PublicKey


def verify_compact(jws: str, keys: Iterable[PublicKey]) -> Verified:
    """Check a compact JWS against ``keys``: :class:`Verified`, or :class:`IntegrityError` saying what is wrong.

    The header must say ``alg`` ``EdDSA``, or ``Ed25519``, its fully-specified
    name (RFC 9864 §2.2: the same signature; nothing else is accepted: no
    ``none``, RFC 8725 §3.1) and have no ``crit`` pdi does not understand
    (RFC 7515 §4.1.11). With a ``kid``, only the key of that thumbprint, or
    whose JWK had that ``kid``, is tried; without one, each key given.
    """
    if len(jws) > MAX_JWS:
        raise IntegrityError(f"the JWS is {len(jws)} characters, more than the {MAX_JWS} pdi reads")
    # split no further than a fourth part: 64 MiB of "ab." split at every '.' was 22 million strings (1.5 GB)
    parts = jws.strip().split(".", 3)
    if len(parts) != 3:
        raise ParseError(f"a compact JWS has 3 parts separated by '.', this one {jws.strip().count('.') + 1}",
                         rule="jws")
    header_b64, payload_b64, signature_b64 = parts
    if len(header_b64) > MAX_JWS_HEADER:
        raise ParseError(f"the JWS header is {len(header_b64)} characters, more than the {MAX_JWS_HEADER} pdi reads",
                         rule="jws")
    # RFC 7515 §4: a header parameter named twice is refused (or the last taken): refused, as what another reader
    # of the same JWS takes it to say is not known
    header = untrusted_json.loads(b64url_decode(header_b64, "the JWS header"), "the JWS header", rule="jws",
                                  unique_keys=True)
    if not isinstance(header, dict):
        raise ParseError("the JWS header is not a JSON object", rule="jws")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in VERIFIED_ALGS:  # a stranger's [] or {} is no name (nor hashable)
        raise IntegrityError(f"the JWS is signed with alg {alg!r}; pdi accepts EdDSA only (or its"
                             " fully-specified name, Ed25519: RFC 9864)")
    if "crit" in header:
        raise UnsupportedError(f"the JWS header names critical extensions pdi does not know: {header['crit']!r}")
    payload = b64url_decode(payload_b64, "the JWS payload")
    signature = b64url_decode(signature_b64, "the JWS signature")
    candidates = list(keys)
    kid = header.get("kid")
    if kid is not None:
        # RFC 7515 §4.1.4: the key whose JWK has that kid (RFC 7517 §4.5), or whose thumbprint it is (pdi's kids)
        candidates = [k for k in candidates if kid in (k.thumbprint, k.kid)]
        if not candidates:
            raise UnknownSigner(kid)
    data = f"{header_b64}.{payload_b64}".encode("ascii")
    for key in candidates:
        if len(signature) == 64 and key.verify(signature, data):
            return Verified(header, payload, key)
    who = f"the key {kid}" if kid is not None else "any of the keys it is checked with"
    raise IntegrityError(f"the JWS signature does not verify with {who}: the payload was changed or another key signed it")


def jwk_set(keys: Iterable[PublicKey]) -> dict[str, list[dict[str, str]]]:
    """A JWK set (RFC 7517 §5) of public keys."""
    return {"keys": [k.jwk() for k in keys]}


def jwk_set_text(keys: Iterable[PublicKey]) -> str:
    """Keys as a JWK set in one canonical JSON text (what a mirror pins in the catalog)."""
    return json.dumps(jwk_set(keys), sort_keys=True, separators=(",", ":"))


def parse_jwks(text: str | bytes, where: str) -> list[PublicKey]:
    """The Ed25519 keys of a JWK (an object with ``kty``) or a JWK set (``{"keys": […]}``); others are skipped."""
    if len(text) > MAX_JWKS:
        raise ParseError(f"{where} is larger than a JWK set may be ({MAX_JWKS} characters)", rule="jwk")
    value = untrusted_json.loads(text, where, rule="jwk", unique_keys=True)
    if isinstance(value, dict) and "kty" in value:
        return [PublicKey.from_jwk(value)]
    if not isinstance(value, dict) or not isinstance(value.get("keys"), list):
        raise ParseError(f"{where} is neither a JWK nor a JWK set ({{\"keys\": […]}})", rule="jwk")
    found = [PublicKey.from_jwk(k) for k in value["keys"]
             if isinstance(k, dict) and k.get("kty") == "OKP" and k.get("crv") == "Ed25519"]
    if not found:
        raise NotAKey(f"{where} holds no Ed25519 key")
    return found


class UnknownSigner(IntegrityError):
    """A JWS whose ``kid`` (RFC 7515 §4.1.4) names none of the keys it is checked with: ``kid`` says which."""

    def __init__(self, kid: object) -> None:
        super().__init__(f"the JWS is signed by the key {kid!r}, which is not one of the keys it is checked with")
        self.kid = kid


class NotAKey(UnsupportedError):
    """A JWK set with no Ed25519 key in it."""


def manifest_payload(series: str, day: str | None, entries: list[dict[str, Any]], *,
                     after: str | None, next_after: str | None, access: str | None = None,
                     rules: int | None = None) -> bytes:
    """A manifest's payload: ``series``, ``day`` (``None``: the whole series), this page's ``entries`` (``name``,
    ``format``, ``version``, ``sha256``, ``size``; or ``name`` and ``withdrawn``), the cursor it starts ``after``
    and the one the next page starts after (``next``: ``None`` on the last page); and the series' ``access``,
    when given (an archive's access rules, which a mirror applies too), with ``rules``, how many times those
    rules have changed (a mirror refuses a page that says fewer than one it followed)."""
    value: dict[str, Any] = {"type": MANIFEST_TYPE, "series": series, "day": day, "after": after,
                             "next": next_after, "names": entries}
    if access is not None:
        value["access"] = access
    if rules is not None:
        value["rules"] = rules
    return canonical_json(value)


def sign_manifest(key: SigningKey, payload: bytes) -> str:
    """A manifest payload signed: a compact JWS whose header names the key (``kid``) and the type."""
    return sign_compact(key, payload, {"alg": "EdDSA", "kid": key.public.thumbprint, "typ": MANIFEST_TYPE})


@dataclass(frozen=True)
class Manifest:
    """A manifest whose signature held (:func:`verify_manifest`)."""

    series: str
    day: str | None
    after: str | None
    next: str | None
    names: tuple[dict[str, Any], ...]
    key: PublicKey
    #: The series' access where it was signed (``public``, ``private``, ``hidden``); ``None``: not said.
    access: str | None = None
    #: How many times the series' access rules had changed there when it was signed; ``None``: not said.
    rules: int | None = None


def verify_manifest(jws: str, keys: Iterable[PublicKey]) -> Manifest:
    """A manifest's JWS checked (:func:`verify_compact`) and its payload read; :class:`ParseError` if it is not
    a manifest."""
    verified = verify_compact(jws, keys)
    # a member named twice: another reader of the signed octets may take the other one (RFC 8259 §4)
    value = untrusted_json.loads(verified.payload, "the manifest's payload", rule="manifest", unique_keys=True)
    if not isinstance(value, dict) or value.get("type") != MANIFEST_TYPE:
        raise ParseError(f"the JWS payload is not a pdi manifest (type {MANIFEST_TYPE})", rule="manifest")
    names = value.get("names")
    if not isinstance(names, list) or not all(isinstance(n, dict) and isinstance(n.get("name"), str) for n in names):
        raise ParseError("the manifest's \"names\" is not a list of objects with a \"name\"", rule="manifest")
    series = value.get("series")
    if not isinstance(series, str):
        raise ParseError("the manifest names no series", rule="manifest")
    access = value.get("access")
    if access is not None and not isinstance(access, str):
        raise ParseError("the manifest's \"access\" is not text", rule="manifest")
    for field in ("day", "after", "next"):
        if value.get(field) is not None and not isinstance(value.get(field), str):
            raise ParseError(f"the manifest's \"{field}\" is not text", rule="manifest")
    rules = value.get("rules")
    if rules is not None and (type(rules) is not int or not 0 <= rules < 1 << 63):
        raise ParseError(f"the manifest's \"rules\" {str(rules)[:40]!r} is not a count (0 to 2^63-1)", rule="manifest")
    return Manifest(series, value.get("day"), value.get("after"), value.get("next"), tuple(names), verified.key,
                    access, rules)
