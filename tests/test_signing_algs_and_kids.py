"""JWS algorithm names and key ids that other JOSE writers use, read as their RFCs say.

RFC 9864 §2.2 registers the fully-specified JOSE algorithm ``Ed25519`` ("EdDSA using the Ed25519 parameter set",
RFC 8032 §5.1) and deprecates the polymorphic ``EdDSA`` of RFC 8037; the signing input and signature are the same
octets, only the header's name differs. So a JWS whose header says ``Ed25519`` is an Ed25519 signature, checked as
one; ``Ed448`` (RFC 9864 §2.2 too) is a curve pdi has no key of, and stays refused. pdi keeps writing ``EdDSA``:
what every JOSE reader written before RFC 9864 accepts (pdi 0.2.0's own peers among them). jwcrypto, which knows
both names, is the independent writer.

RFC 7517 §4.5: a JWK's ``kid`` is its issuer's to choose; a JWS names the key it was signed with by that ``kid``
(RFC 7515 §4.1.4). A key a mirror pins (``pdi mirror add --key``) is written into the catalog and read back for
each sync: the ``kid`` its JWK was given must come back with it, or a manifest naming it is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jwcrypto import jwk, jws

from pdi.archive import Archive
from pdi.errors import IntegrityError
from pdi.network.peers import key_text, pinned_keys
from pdi.signing import (
    SigningKey,
    b64url,
    jwk_set_text,
    manifest_payload,
    parse_jwks,
    sign_manifest,
    verify_compact,
    verify_manifest,
)

# RFC 8037 Appendix A.1 (the private key) and A.4's payload
RFC8037_PRIVATE = {"kty": "OKP", "crv": "Ed25519", "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
                   "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
PAYLOAD = b"Example of Ed25519 signing"


def _signed_by_jwcrypto(key: jwk.JWK, payload: bytes, header: dict[str, str]) -> str:
    signer = jws.JWS(payload)
    signer.add_signature(key, alg=header["alg"], protected=json.dumps(header))
    return str(signer.serialize(compact=True))


def test_rfc9864_2_2_a_jws_of_alg_ed25519_is_an_ed25519_signature() -> None:
    theirs = jwk.JWK(**RFC8037_PRIVATE)
    token = _signed_by_jwcrypto(theirs, PAYLOAD, {"alg": "Ed25519"})
    key = SigningKey.from_jwk(RFC8037_PRIVATE).public
    verified = verify_compact(token, [key])
    assert verified.payload == PAYLOAD and verified.header == {"alg": "Ed25519"}
    # the same signature under EdDSA's header is the RFC 8037 A.4 JWS's: only the name differs
    head, body, signature = token.split(".")
    assert head == b64url(b'{"alg": "Ed25519"}') and body == b64url(PAYLOAD)
    # a changed payload, or another key, is refused as under EdDSA
    with pytest.raises(IntegrityError, match="does not verify"):
        verify_compact(f"{head}.{b64url(b'another')}.{signature}", [key])
    with pytest.raises(IntegrityError, match="does not verify"):
        verify_compact(token, [SigningKey.generate().public])


def test_rfc9864_a_manifest_signed_as_ed25519_with_a_kid_verifies() -> None:
    theirs = jwk.JWK.generate(kty="OKP", crv="Ed25519")
    payload = manifest_payload("ex.example.us", None, [], after=None, next_after=None)
    token = _signed_by_jwcrypto(theirs, payload, {"alg": "Ed25519", "kid": theirs.thumbprint(),
                                                  "typ": "pdi-manifest+jws"})
    assert verify_manifest(token, parse_jwks(theirs.export_public(), "their key")).series == "ex.example.us"


@pytest.mark.parametrize("alg", ["Ed448", "ed25519", "ES256", "none"])
def test_rfc9864_other_names_stay_refused(alg: str) -> None:
    """Ed448 (RFC 9864 §2.2) is another curve; JOSE's names are case-sensitive (RFC 7515 §4.1.1)."""
    key = SigningKey.from_jwk(RFC8037_PRIVATE)
    header = b64url(json.dumps({"alg": alg}).encode())
    data = f"{header}.{b64url(PAYLOAD)}"
    token = f"{data}.{b64url(key.sign(data.encode()))}"
    with pytest.raises(IntegrityError, match="accepts EdDSA only"):
        verify_compact(token, [key.public])


def test_pdi_still_writes_eddsa() -> None:
    """RFC 9864 deprecates ``EdDSA``, but a reader of before it (pdi 0.2.0's peers) knows no other name."""
    key = SigningKey.generate()
    checked = jws.JWS()
    checked.deserialize(sign_manifest(key, b"{}"))
    assert checked.jose_header["alg"] == "EdDSA"
    assert key.public.jwk()["alg"] == "EdDSA"


def test_rfc7517_4_5_a_pinned_jwks_own_kid_is_kept(tmp_path: Path) -> None:
    """A key given as a JWK with its own ``kid`` is pinned (written into the catalog as a JWK set) and read back
    for a sync with that ``kid``: the origin's manifests, which name it, verify; its RFC 7638 thumbprint still
    names it too. Before, the pinned JWK's ``kid`` was rewritten to the thumbprint, and every manifest refused."""
    theirs = jwk.JWK.generate(kty="OKP", crv="Ed25519", kid="archive-2026")
    given = parse_jwks(theirs.export_public(), "their key")
    payload = manifest_payload("ex.example.us", None, [], after=None, next_after=None)
    token = _signed_by_jwcrypto(theirs, payload, {"alg": "EdDSA", "kid": "archive-2026", "typ": "pdi-manifest+jws"})
    with Archive.init(tmp_path / "a") as archive:
        archive.add_mirror("ex.example.us", "https://origin.example.org/", "origin", key_text(given))
        record = next(m for m in archive.mirrors("ex.example.us") if m.base_url == "https://origin.example.org/")
    pinned = pinned_keys(record)
    assert [(k.kid, k.thumbprint) for k in pinned] == [("archive-2026", theirs.thumbprint())]
    assert json.loads(record.jwk)["keys"][0]["kid"] == "archive-2026"
    assert verify_manifest(token, pinned).series == "ex.example.us"
    by_thumbprint = _signed_by_jwcrypto(theirs, payload, {"alg": "EdDSA", "kid": theirs.thumbprint()})
    assert verify_compact(by_thumbprint, pinned).key == pinned[0]
    # a key with no kid of its own is written with its thumbprint, as pdi's /api/keys writes it
    mine = SigningKey.generate().public
    assert json.loads(jwk_set_text([mine]))["keys"][0]["kid"] == mine.thumbprint
