"""``pdi verify --signatures`` of a manifest as pdi wrote it, and of forgeries of it made with an independent JOSE
library (jwcrypto): RFC 7515 (JWS), RFC 8037 (EdDSA), RFC 8725 §3.1 (no ``alg`` ``none``), RFC 7797 (``b64``).

jwcrypto first checks the manifest ``pdi manifest`` wrote with the archive's public key (as ``pdi keys show
--jwks`` prints it); then each forgery is refused by ``pdi verify --signatures`` (exit 3, integrity check failed),
one line ``signature`` naming the file and why, and nothing it lists is trusted.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from jwcrypto import jwk, jws

from pdi.cli import cli

SERIES = "forged.example.us"
OTHER = jwk.JWK.generate(kty="OKP", crv="Ed25519")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _pdi(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(argv))
    return result.exit_code, result.output


def _signed(payload: bytes, key: jwk.JWK, header: dict[str, object]) -> str:
    made = jws.JWS(payload)
    made.add_signature(key, alg="EdDSA", protected=json.dumps(header))
    return str(made.serialize(compact=True))


def _none(jws_text: str, own: jwk.JWK) -> str:
    header, payload, _ = jws_text.split(".")
    return _b64(json.dumps({"alg": "none", "kid": json.loads(_unb64(header))["kid"]}).encode()) + f".{payload}."


def _header_changed(jws_text: str, own: jwk.JWK) -> str:
    header, payload, signature = jws_text.split(".")
    changed = {**json.loads(_unb64(header)), "typ": "JWT"}
    return f"{_b64(json.dumps(changed).encode())}.{payload}.{signature}"


def _other_key(jws_text: str, own: jwk.JWK) -> str:
    return _signed(_unb64(jws_text.split(".")[1]), OTHER, {"alg": "EdDSA", "typ": "pdi-manifest+jws"})


def _other_key_own_kid(jws_text: str, own: jwk.JWK) -> str:
    return _signed(_unb64(jws_text.split(".")[1]), OTHER,
                   {"alg": "EdDSA", "kid": own.thumbprint(), "typ": "pdi-manifest+jws"})


def _other_key_embedded(jws_text: str, own: jwk.JWK) -> str:
    # RFC 7515 §4.1.3: a "jwk" in the header is the signer's say-so, not a key the reader trusts
    return _signed(_unb64(jws_text.split(".")[1]), OTHER,
                   {"alg": "EdDSA", "jwk": json.loads(OTHER.export_public()), "typ": "pdi-manifest+jws"})


def _detached(jws_text: str, own: jwk.JWK) -> str:
    header, _, signature = jws_text.split(".")
    return f"{header}..{signature}"  # RFC 7515 Appendix F: the payload left out


def _unencoded(jws_text: str, own: jwk.JWK) -> str:
    # RFC 7797: the same key signing the payload unencoded, "b64" named critical as §6 requires
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_private_bytes(_unb64(json.loads(own.export_private())["d"]))
    payload = _unb64(jws_text.split(".")[1])
    header = _b64(json.dumps({"alg": "EdDSA", "b64": False, "crit": ["b64"], "kid": own.thumbprint()}).encode())
    return f"{header}.{_b64(payload)}.{_b64(private.sign(header.encode() + b'.' + payload))}"


@pytest.mark.parametrize(("forge", "said"), [
    (_none, "signed with alg 'none'; pdi accepts EdDSA only"),
    (_header_changed, "does not verify with the key"),
    (_other_key, "does not verify with any of the keys it is checked with"),
    (_other_key_own_kid, "does not verify with the key"),
    (_other_key_embedded, "does not verify with any of the keys it is checked with"),
    (_detached, "does not verify with the key"),
    (_unencoded, "critical extensions pdi does not know: ['b64']"),
])
def test_a_forged_manifest_is_refused(tmp_path: Path, forge: Callable[[str, jwk.JWK], str], said: str) -> None:
    archive = str(tmp_path / "a")
    assert _pdi("init", "--archive", archive)[0] == 0
    assert _pdi("keys", "init", "--archive", archive)[0] == 0
    assert _pdi("series", "add", SERIES, "--archive", archive)[0] == 0
    text = tmp_path / "minutes.txt"
    text.write_bytes(b"the minutes\r\n")
    assert _pdi("add", str(text), "--series", SERIES, "--archive", archive)[0] == 0
    written = tmp_path / "series.jws"
    assert _pdi("manifest", "--series", SERIES, "--all", "-o", str(written), "--archive", archive)[0] == 0
    code, shown = _pdi("keys", "show", "--jwks", "--archive", archive)
    assert code == 0, shown
    own_public = jwk.JWKSet.from_json(shown).get_key(json.loads(shown)["keys"][0]["kid"])
    # jwcrypto verifies what pdi wrote, with the key pdi shows
    checked = jws.JWS()
    checked.deserialize(written.read_text().strip())
    checked.verify(own_public, alg="EdDSA")
    assert json.loads(checked.payload)["series"] == SERIES
    assert _pdi("verify", "--signatures", str(written), "--archive", archive)[0] == 0

    own = jwk.JWK.from_pem((tmp_path / "a" / "signing-key.pem").read_bytes())
    forged = tmp_path / "forged.jws"
    forged.write_text(forge(written.read_text().strip(), own) + "\n")
    code, output = _pdi("verify", "--signatures", str(forged), "--archive", archive)
    assert code == 3, output
    assert f"signature\t{forged}:1\t" in output and said in output, output
    assert "listing 0 names" in output  # nothing a forgery lists is trusted


def test_checking_another_archives_manifest_without_its_key_says_to_give_it(tmp_path: Path) -> None:
    """Found by a tester following docs/how-to/signatures.md (2026-11-30): ``pdi verify --signatures FILE`` on an
    archive with no key of its own (the manifest another archive signed) said only "no signing key at …:
    `pdi keys init` makes one", a key that cannot check another archive's signature. It names --key too, and
    with it (the origin's key set, as ``pdi keys show --jwks`` prints it) the check goes on."""
    origin, other = str(tmp_path / "a"), str(tmp_path / "b")
    for argv in (("init", origin), ("keys", "init", "--archive", origin), ("series", "add", SERIES, "--archive", origin),
                 ("init", other)):
        assert _pdi(*argv)[0] == 0, argv
    text = tmp_path / "minutes.txt"
    text.write_bytes(b"the minutes\r\n")
    assert _pdi("add", str(text), "--series", SERIES, "--archive", origin)[0] == 0
    written = tmp_path / "series.jws"
    assert _pdi("manifest", "--series", SERIES, "--all", "-o", str(written), "--archive", origin)[0] == 0
    code, said = _pdi("verify", "--signatures", str(written), "--archive", other)
    assert code == 4, said
    assert said.startswith(f"pdi: not found: no signing key at {tmp_path / 'b' / 'signing-key.pem'} to check with:")
    assert "(--key JWK|FILE|URL, such as its BASE_URL/api/keys)" in said and "`pdi keys init`" in said, said
    keys = tmp_path / "a-keys.json"
    keys.write_text(_pdi("keys", "show", "--jwks", "--archive", origin)[1])
    code, said = _pdi("verify", "--signatures", str(written), "--key", str(keys), "--archive", other)
    assert code == 3 and "manifest-missing\t" in said and "no such name" in said, said  # signature good; b holds none
    assert "signature\t" not in said, said


def test_a_manifest_of_a_day_with_no_names_is_signed_and_said(tmp_path: Path) -> None:
    """Found by a tester typing docs/how-to/signatures.md's lines as shown (2026-11-30): ``pdi manifest --day
    2026-11-25`` of a series minted in on another day wrote and signed a manifest of no names, saying nothing, and
    its check said "listing 0 names: 0 problems". It is still written (that a day holds no names is a fact worth
    signing), and standard error says so, with where to look."""
    archive = str(tmp_path / "a")
    for argv in (("init", archive), ("keys", "init", "--archive", archive), ("series", "add", SERIES, "--archive", archive)):
        assert _pdi(*argv)[0] == 0, argv
    text = tmp_path / "minutes.txt"
    text.write_bytes(b"the minutes\r\n")
    assert _pdi("add", str(text), "--series", SERIES, "--archive", archive)[0] == 0
    written = tmp_path / "day.jws"
    made = CliRunner().invoke(cli, ["manifest", "--series", SERIES, "--day", "1999-09-16", "-o", str(written),
                                    "--archive", archive])
    assert made.exit_code == 0, made.output
    assert made.stderr == (f"pdi: the manifest lists no names: {SERIES} holds none minted on 1999-09-16 (pdi ls"
                           f" --series {SERIES} lists those it holds)\n")
    payload = json.loads(_unb64(written.read_text().strip().split(".")[1]))
    assert (payload["day"], payload["names"]) == ("1999-09-16", [])
    code, said = _pdi("verify", "--signatures", str(written), "--archive", archive)
    assert code == 0 and said == "checked 1 manifest listing 0 names: 0 problems\n", said
    every = CliRunner().invoke(cli, ["manifest", "--series", SERIES, "--all", "-o", str(written), "--archive", archive])
    assert every.exit_code == 0 and every.stderr == "", every.output  # a manifest that lists names says nothing


def test_a_key_file_written_by_pdi_keys_show_is_refused_saying_what_to_give(tmp_path: Path) -> None:
    """Found by a tester following docs/how-to/signatures.md and federation.md (2026-12-02): ``pdi keys show >
    FILE`` writes the JWK, then ``x`` and ``kid`` lines, and ``--key FILE`` (or ``pdi serve --registry-key FILE``)
    said only "FILE is not JSON: Extra data: line 2 column 1". The refusal now says what to give (a JWK or a JWK
    set, ``pdi keys show --jwks``); given so, the same check passes."""
    archive = str(tmp_path / "a")
    for argv in (("init", archive), ("keys", "init", "--archive", archive), ("series", "add", SERIES, "--archive", archive)):
        assert _pdi(*argv)[0] == 0, argv
    written = tmp_path / "series.jws"
    assert _pdi("manifest", "--series", SERIES, "--all", "-o", str(written), "--archive", archive)[0] == 0
    shown = tmp_path / "a-key"
    code, out = _pdi("keys", "show", "--archive", archive)
    assert code == 0 and len(out.splitlines()) == 3, out  # the JWK, then x and kid
    shown.write_text(out)
    registry = tmp_path / "registry.jws"
    code, out = _pdi("registry", "show", "--jws", "--archive", archive)
    assert code == 0, out
    registry.write_text(out)
    hint = ("give a JWK or a JWK set, inline or in a file (pdi keys show --jwks prints an archive's key set; its first"
            " line, without --jwks, is the JWK)")
    for argv in (("verify", "--signatures", str(written), "--key", str(shown), "--archive", archive),
                 ("serve", "--registry", str(registry), "--registry-key", str(shown), "--archive", archive)):
        code, said = _pdi(*argv)
        assert code == 1 and said.startswith(f"pdi: syntax error: {shown} is not JSON") and hint in said, (argv, said)
    keys = tmp_path / "a-keys.json"
    keys.write_text(_pdi("keys", "show", "--jwks", "--archive", archive)[1])
    code, said = _pdi("verify", "--signatures", str(written), "--key", str(keys), "--archive", archive)
    assert code == 0 and "checked 1 manifest listing 0 names: 0 problems" in said, said


def test_a_mirror_checking_its_origins_manifest_with_its_own_key_is_told_which_key_signed_it(tmp_path: Path) -> None:
    """Found by a tester mirroring a series as docs/how-to/mirrors.md says (2026-12-02): on the mirror, ``pdi verify
    --signatures FILE`` of the origin's manifest said only "signed by the key '…', which is not one of the keys it is
    checked with". The key is the one ``pdi mirror add`` pinned for the origin: the refusal says so (the key tried
    being the mirror's own), and names the --key that checks it; given so, the signature holds."""
    origin, mirror = str(tmp_path / "a"), str(tmp_path / "b")
    for argv in (("init", origin), ("keys", "init", "--archive", origin), ("series", "add", SERIES, "--archive", origin),
                 ("init", mirror), ("keys", "init", "--archive", mirror)):
        assert _pdi(*argv)[0] == 0, argv
    written = tmp_path / "series.jws"
    assert _pdi("manifest", "--series", SERIES, "--all", "-o", str(written), "--archive", origin)[0] == 0
    keys = tmp_path / "a-keys.json"
    keys.write_text(_pdi("keys", "show", "--jwks", "--archive", origin)[1])
    signer = jwk.JWK.from_pem((tmp_path / "a" / "signing-key.pem").read_bytes()).thumbprint()  # RFC 7638, by jwcrypto
    code, said = _pdi("verify", "--signatures", str(written), "--archive", mirror)
    assert code == 3, said
    bare = f"signature\t{written}:1\tthe JWS is signed by the key {signer!r}, which is not one of the keys it is checked with"
    assert f"{bare} (this archive's own): give the key of the archive that signed it (--key JWK|FILE|URL" in said, said
    origin_url = "http://a.example.org"
    code, said = _pdi("mirror", "add", origin_url, "--series", SERIES, "--key", str(keys), "--no-check",
                      "--archive", mirror)
    assert code == 0, said
    code, said = _pdi("verify", "--signatures", str(written), "--archive", mirror)
    assert code == 3, said
    assert (f"{bare} (this archive's own): it is the key pinned here for {origin_url}, the origin of {SERIES} (pdi"
            f" mirror ls); check with that archive's key: --key {origin_url}/api/keys\n") in said, said
    code, said = _pdi("verify", "--signatures", str(written), "--key", str(keys), "--archive", mirror)
    assert code == 0 and "checked 1 manifest listing 0 names: 0 problems" in said, said
