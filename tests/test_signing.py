"""pdi.signing against RFC 8037 Appendix A and an independent JOSE library (jwcrypto).

RFC 8037 A.1-A.4: the Ed25519 private and public JWK, the public key's
RFC 7638 thumbprint, and the JWS of "Example of Ed25519 signing", reproduced
octet for octet. Then jwcrypto verifies JWS pdi makes (a manifest's header,
a manifest's payload) and pdi verifies JWS jwcrypto makes; a changed payload,
another key, ``alg`` ``none`` and a stray ``kid`` are refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jwcrypto import jwk, jws

from pdi.errors import IntegrityError, ParseError, PDIError, UnsupportedError
from pdi.signing import (
    PublicKey,
    SigningKey,
    b64url,
    b64url_decode,
    jwk_set,
    manifest_payload,
    parse_jwks,
    sign_compact,
    sign_manifest,
    verify_compact,
    verify_manifest,
)

# RFC 8037 Appendix A.1 (the private key), A.2 (its public key), A.3 (the thumbprint), A.4 (a JWS)
RFC8037_D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
RFC8037_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
RFC8037_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
RFC8037_PAYLOAD = b"Example of Ed25519 signing"
RFC8037_JWS = ("eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6d"
               "WbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg")
RFC8037_PRIVATE = {"kty": "OKP", "crv": "Ed25519", "d": RFC8037_D, "x": RFC8037_X}


def test_rfc8037_a_1_a_2_the_public_key_of_the_private_key() -> None:
    key = SigningKey.from_jwk(RFC8037_PRIVATE)
    assert key.public.x == RFC8037_X
    assert PublicKey.from_jwk({"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X}) == key.public


def test_rfc8037_a_3_jwk_thumbprint() -> None:
    assert PublicKey.from_jwk({"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X}).thumbprint == RFC8037_THUMBPRINT
    # and jwcrypto's (RFC 7638) of pdi's public JWK, kid and all
    assert jwk.JWK(**SigningKey.from_jwk(RFC8037_PRIVATE).public.jwk()).thumbprint() == RFC8037_THUMBPRINT


def test_rfc8037_a_4_ed25519_signing_reproduced_exactly() -> None:
    assert sign_compact(SigningKey.from_jwk(RFC8037_PRIVATE), RFC8037_PAYLOAD) == RFC8037_JWS


def test_rfc8037_a_5_ed25519_validation() -> None:
    verified = verify_compact(RFC8037_JWS, [PublicKey.from_jwk({"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X})])
    assert verified.payload == RFC8037_PAYLOAD
    assert verified.header == {"alg": "EdDSA"}


def test_pem_round_trip_is_pkcs8() -> None:
    key = SigningKey.generate()
    pem = key.pem()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert SigningKey.from_pem(pem, "k.pem").public == key.public
    assert "d" not in key.public.jwk()
    assert repr(key) == f"SigningKey(kid={key.public.thumbprint!r})"  # never the private key
    with pytest.raises(ParseError, match=r"k\.pem is not an unencrypted PKCS#8 PEM"):
        SigningKey.from_pem(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "k.pem")


def test_jwcrypto_verifies_a_manifest_pdi_signed() -> None:
    key = SigningKey.generate()
    payload = manifest_payload("ex.example.us", "2026-11-25", [
        {"name": "urn:pdi://ex.example.us/2026/11/25/1.text.1", "format": "text", "version": 1,
         "sha256": "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03", "size": 6}],
        after=None, next_after=None)
    token = sign_manifest(key, payload)
    checked = jws.JWS()
    checked.deserialize(token)
    checked.verify(jwk.JWK(**key.public.jwk()), alg="EdDSA")
    assert checked.payload == payload
    assert json.loads(checked.payload)["names"][0]["size"] == 6
    header = json.loads(b64url_decode(token.split(".")[0], "header"))
    assert header == {"alg": "EdDSA", "kid": key.public.thumbprint, "typ": "pdi-manifest+jws"}
    # pdi's JWK set is one jwcrypto reads, and finds the key in by its kid
    keyset = jwk.JWKSet.from_json(json.dumps(jwk_set([key.public])))
    assert keyset.get_key(key.public.thumbprint) is not None


def test_pdi_verifies_a_jws_jwcrypto_signed() -> None:
    theirs = jwk.JWK.generate(kty="OKP", crv="Ed25519")
    payload = manifest_payload("ex.example.us", None, [], after=None, next_after=None)
    signer = jws.JWS(payload)
    signer.add_signature(theirs, alg="EdDSA", protected=json.dumps(
        {"alg": "EdDSA", "kid": theirs.thumbprint(), "typ": "pdi-manifest+jws"}))
    token = signer.serialize(compact=True)
    keys = parse_jwks(theirs.export_public(), "their key")
    manifest = verify_manifest(token, keys)
    assert manifest.series == "ex.example.us" and manifest.names == ()
    assert keys[0].thumbprint == theirs.thumbprint()


def test_a_jws_naming_its_jwks_own_kid_is_checked_with_that_key() -> None:
    """RFC 7515 §4.1.4, RFC 7517 §4.5: a JWS's ``kid`` is matched against the ``kid`` of the JWKs it is checked with,
    whatever the key's issuer chose it to be (jwcrypto writes the one it is given), not only against RFC 7638
    thumbprints (pdi's own). Another key signing under that ``kid`` is refused all the same."""
    theirs = jwk.JWK.generate(kty="OKP", crv="Ed25519", kid="archive-2026")
    payload = manifest_payload("ex.example.us", None, [], after=None, next_after=None)

    def signed(key: jwk.JWK) -> str:
        signer = jws.JWS(payload)
        signer.add_signature(key, alg="EdDSA", protected=json.dumps(
            {"alg": "EdDSA", "kid": "archive-2026", "typ": "pdi-manifest+jws"}))
        return str(signer.serialize(compact=True))

    keys = parse_jwks(theirs.export_public(), "their key")
    assert json.loads(theirs.export_public())["kid"] == "archive-2026"
    assert verify_manifest(signed(theirs), keys).series == "ex.example.us"
    impostor = jwk.JWK.generate(kty="OKP", crv="Ed25519", kid="archive-2026")
    with pytest.raises(IntegrityError, match="does not verify with the key archive-2026"):
        verify_manifest(signed(impostor), keys)


def test_a_changed_payload_is_refused() -> None:
    key = SigningKey.generate()
    token = sign_manifest(key, manifest_payload("ex.example.us", None, [
        {"name": "urn:pdi://ex.example.us/2026/11/25/1.text.1", "sha256": "00" * 32, "size": 1}],
        after=None, next_after=None))
    head, payload, signature = token.split(".")
    changed = b64url_decode(payload, "payload").replace(b"00" * 32, b"01" + b"00" * 31)
    with pytest.raises(IntegrityError, match="does not verify"):
        verify_manifest(f"{head}.{b64url(changed)}.{signature}", [key.public])
    # jwcrypto refuses it too
    checked = jws.JWS()
    checked.deserialize(f"{head}.{b64url(changed)}.{signature}")
    with pytest.raises(jws.InvalidJWSSignature):
        checked.verify(jwk.JWK(**key.public.jwk()), alg="EdDSA")


def test_another_key_is_refused() -> None:
    mine, theirs = SigningKey.generate(), SigningKey.generate()
    token = sign_manifest(theirs, manifest_payload("ex.example.us", None, [], after=None, next_after=None))
    with pytest.raises(IntegrityError, match="not one of the keys it is checked with"):
        verify_manifest(token, [mine.public])
    # without a kid, each key is tried, and none verifies
    bare = sign_compact(theirs, b"{}")
    with pytest.raises(IntegrityError, match="does not verify with any of the keys it is checked with"):
        verify_compact(bare, [mine.public])


def test_alg_none_and_other_algs_are_refused() -> None:
    key = SigningKey.generate()
    none = b64url(b'{"alg":"none"}') + "." + b64url(b"{}") + "."
    with pytest.raises(IntegrityError, match="EdDSA only"):
        verify_compact(none, [key.public])
    with pytest.raises(UnsupportedError):
        sign_compact(key, b"{}", {"alg": "HS256"})
    crit = b64url(b'{"alg":"EdDSA","crit":["exp"],"exp":1}') + "." + b64url(b"{}") + ".AA"
    with pytest.raises(UnsupportedError, match="critical"):
        verify_compact(crit, [key.public])


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=6)


#: The key the header property signs with (one for all its examples: a key made each time is slow).
SIGNER = SigningKey.generate()


def _signed_with_header(key: SigningKey, header: dict[str, object], payload: bytes) -> str:
    """A compact JWS (RFC 7515 §7.1) of ``header`` as it is, signed with ``key`` (as a stranger's writer may)."""
    head = b64url(json.dumps(header).encode())
    body = b64url(payload)
    return f"{head}.{body}." + b64url(key.sign(f"{head}.{body}".encode()))


@pytest.mark.parametrize("alg", [[], {}, ["EdDSA"], {"EdDSA": 1}])
def test_an_alg_that_is_a_list_or_an_object_is_refused_not_a_traceback(alg: object) -> None:
    """Found by a property (2026-12-01): the header's ``alg`` was looked up in a set, which Python cannot do with a
    list or an object (``TypeError``, before any signature was checked): a registry or manifest page of
    ``{"alg":[]}`` made the reader fail with a traceback (a 500 from a resolver loading it)."""
    key = SigningKey.generate()
    with pytest.raises(IntegrityError, match="EdDSA only"):
        verify_compact(_signed_with_header(key, {"alg": alg}, b"{}"), [key.public])


@given(st.dictionaries(st.sampled_from(["alg", "kid", "typ", "crit", "cty", "jku"]),
                       _JSON | st.sampled_from(["EdDSA", "Ed25519"]), max_size=4),
       st.binary(max_size=20), st.booleans())
def test_any_protected_header_is_read_or_refused_as_a_pdi_error_and_what_is_read_jwcrypto_reads(
        header: dict[str, object], payload: bytes, eddsa: bool) -> None:
    key = SIGNER
    if eddsa:
        header["alg"] = "EdDSA"
    token = _signed_with_header(key, header, payload)
    try:
        verified = verify_compact(token, [key.public])
    except PDIError:
        return
    assert header["alg"] in ("EdDSA", "Ed25519") and "crit" not in header  # RFC 8725 §3.1, RFC 7515 §4.1.11
    assert verified.payload == payload
    if header["alg"] == "EdDSA":  # jwcrypto, the independent reader, of the name RFC 8037 gives
        oracle = jws.JWS()
        oracle.deserialize(token)
        oracle.verify(jwk.JWK(**key.public.jwk()))
        assert oracle.payload == payload


@pytest.mark.parametrize("bad", ["", "a.b", "a.b.c.d", "e30.e30.!!!!", "e30=.e30.AA"])
def test_malformed_jws_names_what_is_wrong(bad: str) -> None:
    with pytest.raises((ParseError, IntegrityError)):
        verify_compact(bad, [SigningKey.generate().public])


def test_a_jwk_of_another_kind_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="OKP"):
        parse_jwks('{"kty": "RSA", "n": "AQAB", "e": "AQAB"}', "k")
    with pytest.raises(UnsupportedError, match="Ed25519"):
        parse_jwks('{"kty": "OKP", "crv": "X25519", "x": "AA"}', "k")
    with pytest.raises(ParseError, match="32 octets"):
        parse_jwks('{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}', "k")
    with pytest.raises(UnsupportedError, match="no Ed25519 key"):
        parse_jwks('{"keys": []}', "k")


@given(st.binary(max_size=300))
def test_b64url_round_trip(data: bytes) -> None:
    text = b64url(data)
    assert "=" not in text and "+" not in text and "/" not in text
    assert b64url_decode(text, "x") == data


@given(st.binary(max_size=200))
def test_any_payload_signed_verifies_with_jwcrypto(payload: bytes) -> None:
    key = SigningKey.from_jwk(RFC8037_PRIVATE)
    checked = jws.JWS()
    checked.deserialize(sign_compact(key, payload))
    checked.verify(jwk.JWK(**RFC8037_PRIVATE), alg="EdDSA")
    assert checked.payload == payload


def test_a_header_parameter_named_twice_is_refused_naming_it() -> None:
    # RFC 7515 §4: "The Header Parameter names within the JOSE Header MUST be unique; JWS parsers MUST either reject
    # JWSs with duplicate Header Parameter names or use a JSON parser that returns only the lexically last": pdi
    # rejects them (a reader that took the first "kid" would check another key than one that took the last)
    key, other = SigningKey.generate(), SigningKey.generate()
    first, last = other.public.thumbprint, key.public.thumbprint
    header = f'{{"alg":"EdDSA","kid":"{first}","kid":"{last}"}}'.encode()
    signing_input = b64url(header) + "." + b64url(b"payload")
    signed = signing_input + "." + b64url(key.sign(signing_input.encode("ascii")))
    with pytest.raises(ParseError, match="kid") as refused:
        verify_compact(signed, [key.public, other.public])
    assert refused.value.details.get("pointer") == "/kid"


def test_a_manifest_member_named_twice_is_refused_though_its_signature_holds() -> None:
    key = SigningKey.generate()
    payload = json.loads(manifest_payload("a.example.us", None, [], after=None, next_after=None))
    text = json.dumps(payload, separators=(",", ":"))
    doubled = text[:-1] + ',"series":"b.example.us"}'  # the same signed octets read two ways by two readers
    signed = sign_manifest(key, doubled.encode())
    assert verify_compact(signed, [key.public]).payload == doubled.encode()  # the signature itself holds
    with pytest.raises(ParseError, match="series") as refused:
        verify_manifest(signed, [key.public])
    assert refused.value.details.get("pointer") == "/series"


def test_a_jws_of_dot_after_dot_is_refused_without_splitting_it_all() -> None:
    """Found by an attack (2026-11-27): a compact JWS was split at every '.' before its three parts were counted,
    so 64 MiB of ``ab.`` (as long as pdi reads one, ``MAX_JWS``) became 22 million strings, 1.5 GB more at its
    peak, to be refused for not having three parts (RFC 7515 §7.1); a mirror's 8 MiB page, 190 MB more."""
    import subprocess
    import sys

    from peak_memory import run_with_peak

    code = ("from pdi.errors import ParseError\n"
            "from pdi.signing import MAX_JWS, SigningKey, verify_compact\n"
            "jws = 'ab.' * ((MAX_JWS - 1) // 3)\n"
            "try:\n    verify_compact(jws, [SigningKey.generate().public])\n"
            "except ParseError as exc:\n    print(exc)\n")
    status, peak, out = run_with_peak([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert status == 0
    assert out.decode().strip() == (f"a compact JWS has 3 parts separated by '.', this one {(64 << 20) // 3 + 1}"
                                    " (rule jws)")
    assert peak < 300 * 1024, f"peak {peak // 1024} MiB"  # the 64 MiB text, and Python's own


#: Encodings of the eight Ed25519 points of small order (RFC 8032 §5.1.3 decoding; y little-endian, the top bit x's
#: sign), and non-canonical ones of the same points (y = p, p + 1, or the sign bit set on x = 0): libsodium's list of
#: them (``ge25519_has_small_order``, ed25519_ref10.c), each with and without the sign bit.
SMALL_ORDER = [
    "0100000000000000000000000000000000000000000000000000000000000000",  # the identity, order 1
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p - 1, order 2
    "0000000000000000000000000000000000000000000000000000000000000000",  # y = 0, order 4
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p: 0, not canonical
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p + 1: 1, not canonical
]


@pytest.mark.parametrize("x", [h for k in SMALL_ORDER for h in (k, k[:-2] + f"{int(k[-2:], 16) | 0x80:02x}")])
def test_a_public_key_of_small_order_anyone_can_sign_for_is_refused(x: str) -> None:
    """Found by an attack (2026-11-27): a JWK whose ``x`` is a point of small order was pinned as a key, though no
    private key has it (RFC 8032 §5.1.5: A = [s]B, of prime order) and signatures of anything verify with it,
    forged without one: ``cryptography`` (OpenSSL) verifies (R, S) = (identity or the key itself, 0) for some of 64
    messages with each, so a manifest or registry checked with such a key proves nothing."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw = bytes.fromhex(x)
    forged = 0
    for r in (bytes.fromhex(SMALL_ORDER[0]), raw):
        for message in range(64):
            try:
                Ed25519PublicKey.from_public_bytes(raw).verify(r + bytes(32), bytes([message]))
                forged += 1
            except InvalidSignature:
                pass
    assert forged > 0  # anyone can sign for it
    jwk_text = json.dumps({"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)})
    with pytest.raises(ParseError, match="of small order: no private key has it, and anyone can sign for it"):
        parse_jwks(jwk_text, "k")
    with pytest.raises(ParseError, match="of small order"):
        parse_jwks(json.dumps({"keys": [json.loads(jwk_text)]}), "k")


@given(st.binary(min_size=32, max_size=32))
def test_every_key_of_a_private_key_is_taken(seed: bytes) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = SigningKey(Ed25519PrivateKey.from_private_bytes(seed))
    assert parse_jwks(json.dumps(key.public.jwk()), "k") == [key.public]


def test_pdi_keys_show_prints_what_its_help_says_of_rfc8037s_key(tmp_path: Path) -> None:
    """``pdi keys show`` of RFC 8037 A.1's key (its PEM written by jwcrypto): the public JWK, then ``x`` and ``kid``
    as RFC 8037 A.2 and A.3 give them, which its help names in that order (found by a tester, 2026-11-30: the
    help said "the raw key in base64url" only, and ``pdi keys --help`` named the Ed25519 key alone, not the WACZ
    key ``--wacz`` makes and shows)."""
    from click.testing import CliRunner

    from pdi.cli import cli

    pem = tmp_path / "rfc8037.pem"
    pem.write_bytes(jwk.JWK(**RFC8037_PRIVATE).export_to_pem(private_key=True, password=None))
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path / "a")]).exit_code == 0
    shown = runner.invoke(cli, ["keys", "show", "--key-file", str(pem), "--archive", str(tmp_path / "a")])
    assert shown.exit_code == 0, shown.output
    first, x, kid = shown.stdout.splitlines()
    assert json.loads(first) == {"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X, "kid": RFC8037_THUMBPRINT,
                                 "use": "sig", "alg": "EdDSA"}
    assert (x, kid) == (f"x\t{RFC8037_X}", f"kid\t{RFC8037_THUMBPRINT}")
    said = " ".join(runner.invoke(cli, ["keys", "show", "--help"]).stdout.split())
    assert "its JWK (RFC 8037), then x (the raw key, base64url) and kid (RFC 7638 thumbprint)" in said
    said = " ".join(runner.invoke(cli, ["keys", "--help"]).stdout.split())
    assert "Ed25519 for manifests and ECDSA P-384 for WACZ exports" in said
