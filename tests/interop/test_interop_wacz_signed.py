"""Signed WACZ exports (webrecorder "WACZ Signing and Verification" 0.1.0, the anonymous form): what is written is
checked against the specification's text and by independent tools (openssl, py-wacz); a changed byte is refused
by ``pdi import`` and ``pdi verify --signatures`` (exit 3). ReplayWeb.page's own check of the signature, in
Chromium, is in ``test_interop_wacz_replayweb.py``.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import re
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from warc_builder import DATA

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import IntegrityError, ParseError, UnsupportedError
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc
from pdi.wacz_signing import WaczKey, check_digest, digest_file
from test_rfc3161 import tsa  # noqa: F401 (a fixture: a local RFC 3161 TSA made with openssl ts)

S = "web.example.us"
BIN = Path(sys.executable).parent
#: The properties of an anonymous signedData, as the specification lists them ("MUST not contain any other").
ANONYMOUS = {"hash", "created", "software", "version", "signature", "publicKey"}


@pytest.fixture
def archive_dir(tmp_path: Path) -> Iterator[Path]:
    """An archive holding the recorded site (tests/data/warc/site.warc.gz)."""
    with Archive.init(tmp_path / "archive") as opened:
        opened.add_series(S)
        import_warc(opened, DATA / "site.warc.gz", S)
    yield tmp_path / "archive"


def _export(archive_dir: Path, out: Path, key: WaczKey | None) -> Path:
    with Archive.open(archive_dir) as opened:
        export_wacz(opened, out, series=S, key=key)
    return out


def _rewrite(path: Path, member: str, change: Callable[[bytes], bytes]) -> None:
    """The WACZ at ``path`` with ``member``'s octets changed (each entry kept as it was stored)."""
    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in members:
            zf.writestr(info, change(data) if info.filename == member else data)


def _flip_title(data: bytes) -> bytes:
    """One character of datapackage.json's title changed."""
    return data.replace(b'"title": "pdi', b'"title": "pdj', 1)


def _der_integer(value: bytes) -> bytes:
    body = value.lstrip(b"\0") or b"\0"
    if body[0] & 0x80:
        body = b"\0" + body
    return b"\x02" + bytes([len(body)]) + body


def test_the_digest_file_is_the_specs_anonymous_form(archive_dir: Path, tmp_path: Path) -> None:
    """datapackage-digest.json: the hash of datapackage.json, and signedData with exactly the anonymous form's
    properties; openssl finds the key on P-384 and the signature (ECDSA, SHA-256 of the hash string) good."""
    key = WaczKey.generate()
    out = _export(archive_dir, tmp_path / "signed.wacz", key)
    with zipfile.ZipFile(out) as zf:
        package = zf.read("datapackage.json")
        digest = json.loads(zf.read("datapackage-digest.json"))
    expected = "sha256:" + hashlib.sha256(package).hexdigest()
    assert set(digest) == {"path", "hash", "signedData"} and digest["path"] == "datapackage.json"
    assert digest["hash"] == expected
    signed = digest["signedData"]
    assert set(signed) == ANONYMOUS
    assert signed["hash"] == expected
    assert signed["created"] == json.loads(package)["created"]  # py-wacz refuses a different one
    assert signed["publicKey"] == key.public and signed["software"].startswith("pdi ")

    spki = tmp_path / "key.der"
    spki.write_bytes(base64.b64decode(signed["publicKey"]))
    shown = subprocess.run(["openssl", "pkey", "-pubin", "-inform", "DER", "-in", str(spki), "-text", "-noout"],
                           capture_output=True, text=True, timeout=60, check=True).stdout
    assert "secp384r1" in shown  # the curve ReplayWeb.page imports the key on
    raw = base64.b64decode(signed["signature"])
    assert len(raw) == 96  # IEEE P1363: r and s, 48 octets each (what Web Crypto makes and reads)
    body = _der_integer(raw[:48]) + _der_integer(raw[48:])
    (tmp_path / "sig.der").write_bytes(b"\x30" + bytes([len(body)]) + body)
    (tmp_path / "hash.txt").write_bytes(signed["hash"].encode("ascii"))
    checked = subprocess.run(
        ["openssl", "dgst", "-sha256", "-verify", str(spki), "-keyform", "DER", "-signature",
         str(tmp_path / "sig.der"), str(tmp_path / "hash.txt")], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "Verified OK" in checked.stdout, checked.stdout + checked.stderr
    other_digit = b"1" if signed["hash"].endswith("0") else b"0"
    (tmp_path / "hash.txt").write_bytes(signed["hash"].encode("ascii")[:-1] + other_digit)
    other = subprocess.run(
        ["openssl", "dgst", "-sha256", "-verify", str(spki), "-keyform", "DER", "-signature",
         str(tmp_path / "sig.der"), str(tmp_path / "hash.txt")], capture_output=True, text=True, timeout=60)
    assert other.returncode != 0


def _py_wacz(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "wacz"), "validate", "-f", str(path)], capture_output=True, text=True,
                          timeout=300)


def test_py_wacz_reports_the_signature_and_refuses_a_changed_datapackage(archive_dir: Path, tmp_path: Path) -> None:
    out = _export(archive_dir, tmp_path / "signed.wacz", WaczKey.generate())
    checked = _py_wacz(out)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Has signature" in checked.stdout and "Validation succeeded" in checked.stdout, checked.stdout
    _rewrite(out, "datapackage.json", _flip_title)
    tampered = _py_wacz(out)
    assert "datapackage.json hash mismatch to datapackage-digest.json" in tampered.stdout, tampered.stdout
    assert "Validation failed" in tampered.stdout


def _pdi(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(argv))
    return result.exit_code, result.output


def test_keys_init_wacz_then_export_signs_by_default(archive_dir: Path, tmp_path: Path) -> None:
    location = str(archive_dir)
    code, out = _pdi("keys", "init", "--wacz", "--archive", location)
    assert code == 0, out
    key_file = archive_dir / "wacz-key.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    public = out.splitlines()[0]
    code, shown = _pdi("keys", "show", "--wacz", "--archive", location)
    assert code == 0 and shown.splitlines()[0] == public
    code, again = _pdi("keys", "init", "--wacz", "--archive", location)
    assert code == 5 and "holds a signing key already" in again  # never over an existing key
    assert not (archive_dir / "signing-key.pem").exists()  # the Ed25519 key is another, made by pdi keys init

    code, out = _pdi("export", "--wacz", str(tmp_path / "signed.wacz"), "--series", S, "--archive", location)
    assert code == 0 and "signed with the WACZ key" in out, out
    with zipfile.ZipFile(tmp_path / "signed.wacz") as zf:
        assert json.loads(zf.read("datapackage-digest.json"))["signedData"]["publicKey"] == public
    code, out = _pdi("export", "--wacz", str(tmp_path / "plain.wacz"), "--no-sign", "--archive", location)
    assert code == 0, out
    with zipfile.ZipFile(tmp_path / "plain.wacz") as zf:
        assert "signedData" not in json.loads(zf.read("datapackage-digest.json"))

    code, out = _pdi("verify", "--signatures", str(tmp_path / "signed.wacz"), "--archive", location)
    assert code == 0 and "wacz-signed" in out and "signature verified" in out, out
    code, out = _pdi("verify", "--signatures", str(tmp_path / "plain.wacz"), "--archive", location)
    assert code == 3 and "wacz-unsigned" in out, out


def test_export_sign_without_a_key_is_refused(archive_dir: Path, tmp_path: Path) -> None:
    code, out = _pdi("export", "--wacz", str(tmp_path / "x.wacz"), "--sign", "--archive", str(archive_dir))
    assert code == 4 and "pdi keys init --wacz" in out, out
    assert not (tmp_path / "x.wacz").exists()
    code, out = _pdi("export", str(tmp_path / "bag"), "--sign", "--archive", str(archive_dir))
    assert code == 2 and "go with --wacz" in out


def test_the_key_file_from_the_environment(archive_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "secrets" / "wacz.pem"
    elsewhere.parent.mkdir()
    monkeypatch.setenv("PDI_WACZ_KEY", str(elsewhere))
    code, out = _pdi("keys", "init", "--wacz", "--archive", str(archive_dir))
    assert code == 0 and stat.S_IMODE(elsewhere.stat().st_mode) == 0o600, out
    assert not (archive_dir / "wacz-key.pem").exists()
    code, out = _pdi("export", "--wacz", str(tmp_path / "s.wacz"), "--archive", str(archive_dir))
    assert code == 0 and "signed with" in out, out


def _import(out: Path, tmp_path: Path, name: str) -> tuple[int, str, Path]:
    target = tmp_path / name
    with Archive.init(target) as fresh:
        fresh.add_series(S)
    code, output = _pdi("import", str(out), "--series", S, "--archive", str(target))
    return code, output, target


def _names(location: Path) -> list[str]:
    with Archive.open(location) as opened:
        return [r.unique_id for r in opened.iter_records(None)]


@pytest.mark.parametrize(("member", "change", "said"), [
    ("datapackage.json", _flip_title, "datapackage.json was changed"),
    ("indexes/index.cdx", lambda data: data[:-2] + b"X\n", "indexes/index.cdx was changed"),
    ("pages/pages.jsonl", lambda data: data.replace(b"pdi", b"pdj", 1), "pages/pages.jsonl was changed"),
    ("datapackage-digest.json", lambda data: json.dumps(
        {**json.loads(data), "signedData": {**json.loads(data)["signedData"], "publicKey": WaczKey.generate().public}}
    ).encode(), "does not verify with its publicKey"),
])
def test_import_refuses_a_changed_signed_wacz(archive_dir: Path, tmp_path: Path, member: str,
                                               change: Callable[[bytes], bytes], said: str) -> None:
    out = _export(archive_dir, tmp_path / "signed.wacz", WaczKey.generate())
    code, output, _ = _import(out, tmp_path, "whole")
    assert code == 0 and "signed (anonymous form)" in output and "signature verified" in output, output
    _rewrite(out, member, change)
    code, output, target = _import(out, tmp_path, "refused")
    assert code == 3 and said in output, output
    assert _names(target) == []  # nothing deposited
    code, output = _pdi("verify", "--signatures", str(out), "--archive", str(target))
    assert code == 3 and "wacz-signature" in output and said in output, output


def test_an_unsigned_wacz_still_imports(archive_dir: Path, tmp_path: Path) -> None:
    out = _export(archive_dir, tmp_path / "plain.wacz", None)
    code, output, target = _import(out, tmp_path, "plain")
    assert code == 0 and "unsigned" in output, output
    assert _names(target)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
                     max_leaves=12)
_PACKAGE = b'{"created": "2026-11-25T10:15:54Z", "resources": []}'
_SIGNED = json.loads(digest_file(_PACKAGE, "2026-11-25T10:15:54Z", "pdi", WaczKey.generate()))


@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from(sorted(ANONYMOUS | {"domain", "domainCert", "timeSignature", "x"})),
                       _JSON, max_size=8), st.binary(max_size=60))
def test_any_digest_file_fails_only_as_a_named_error(changed: dict[str, object], noise: bytes) -> None:
    """signedData with any properties changed to any JSON, or a digest file of any octets: a good signature, or
    ParseError / IntegrityError / UnsupportedError (never another exception)."""
    for text in (json.dumps({**_SIGNED, "signedData": {**_SIGNED["signedData"], **changed}}).encode(), noise):
        try:
            check_digest("x.wacz", _PACKAGE, text)
        except (ParseError, IntegrityError, UnsupportedError):
            pass


def _self_signed_der() -> tuple[Any, bytes]:
    """A new P-256 key and a self-signed certificate (DER) of it, its subject's common name ``a.example`` (a
    UTF8String)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example")])
    now = datetime.datetime.now(datetime.UTC)
    return key, (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                 .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                 .sign(key, hashes.SHA256())).public_bytes(serialization.Encoding.DER)


def _certificate_of_unknown_key_type() -> str:
    """A self-signed certificate (PEM) whose SubjectPublicKeyInfo names the algorithm 1.2.840.10045.2.9, which is no
    key type (id-ecPublicKey is 1.2.840.10045.2.1, RFC 5480 §2.1.1): as a stranger's WACZ may carry."""
    _key, made = _self_signed_der()
    assert made.count(bytes.fromhex("06072a8648ce3d0201")) == 1  # the SPKI's algorithm (the signature's is ecdsa-with-SHA256)
    der = made.replace(bytes.fromhex("06072a8648ce3d0201"), bytes.fromhex("06072a8648ce3d0209"))
    return "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode("ascii") + "-----END CERTIFICATE-----\n"


def test_a_domain_certificate_of_a_key_type_no_reader_knows_is_refused_by_name() -> None:
    """Found by a hunt (2026-12-01): the domain form's ``domainCert`` of a key type cryptography does not know
    ended ``check_digest`` in its ``UnsupportedAlgorithm`` (a traceback from ``pdi import`` of a stranger's WACZ)."""
    pem = _certificate_of_unknown_key_type()
    signed = {key: value for key, value in _SIGNED["signedData"].items() if key != "publicKey"}
    signed.update({"domain": "a.example", "domainCert": pem, "timeSignature": "AA==", "timestampCert": pem})
    with pytest.raises(UnsupportedError, match="domainCert holds a key pdi cannot read"):
        check_digest("x.wacz", _PACKAGE, json.dumps({**_SIGNED, "signedData": signed}).encode())


@pytest.mark.parametrize("tag", [0x02, 0x05, 0x30, 0x03])
def test_a_domain_certificate_whose_subject_no_reader_reads_is_refused_by_name(tag: int) -> None:
    """Found by a hunt (2026-12-01): cryptography reads a certificate's subject when first asked for, so a
    ``domainCert`` whose common name is an INTEGER, a NULL, a SEQUENCE or a BIT STRING (RFC 5280 §4.1.2.6: a
    DirectoryString) loaded, its key verified the signature (the stranger's own), and reading its names then
    ended ``check_digest`` in a ``KeyError`` or ``TypeError``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key, made = _self_signed_der()
    common_name = bytes.fromhex("0603550403") + b"\x0c\x09a.example"  # id-at-commonName, a UTF8String
    der = made.replace(common_name, bytes.fromhex("0603550403") + bytes([tag]) + b"\x09a.example")
    assert der != made
    pem = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode("ascii") + "-----END CERTIFICATE-----\n"
    hash_ = "sha256:" + hashlib.sha256(_PACKAGE).hexdigest()
    signature = base64.b64encode(key.sign(hash_.encode("ascii"), ec.ECDSA(hashes.SHA256()))).decode("ascii")
    signed = {"hash": hash_, "created": "2026-11-25T10:15:54Z", "software": "x", "version": "0.1.0",
              "signature": signature, "domain": "a.example", "domainCert": pem, "timeSignature": "AA==",
              "timestampCert": pem}
    with pytest.raises(ParseError, match="the domainCert's subject cannot be read"):
        check_digest("x.wacz", _PACKAGE, json.dumps({"path": "datapackage.json", "hash": hash_,
                                                     "signedData": signed}).encode())


def test_no_key_is_printed() -> None:
    key = WaczKey.generate()
    assert repr(key).startswith("WaczKey('sha256:") and "PRIVATE" not in repr(key)


# The domain-identity form: the WACZ key certified for a domain by a local CA (made with openssl), the signature
# timestamped by a local TSA (test_rfc3161's, made with openssl ts), checked by authsign through py-wacz.

DOMAIN = "archive.example.org"


def _openssl(*args: str, cwd: Path) -> str:
    return subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True).stdout


def _fingerprint(pem: Path) -> str:
    shown = _openssl("x509", "-in", str(pem), "-noout", "-fingerprint", "-sha256", cwd=pem.parent)
    return shown.strip().split("=", 1)[1].replace(":", "").lower()


@pytest.fixture
def domain_form(archive_dir: Path, tmp_path: Path, tsa: tuple[str, Path, Path]) -> dict[str, Path | str]:  # noqa: F811
    """The archive's WACZ key (pdi keys init --wacz), certified for DOMAIN by a local CA; the TSA; authsign's
    trusted roots (a YAML file, as authsign's own tests write it) naming that CA and the TSA's CA."""
    code, out = _pdi("keys", "init", "--wacz", "--archive", str(archive_dir))
    assert code == 0, out
    ca_dir = tmp_path / "domain-ca"
    ca_dir.mkdir()
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Domain CA",
             "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign", cwd=ca_dir)
    _openssl("req", "-new", "-key", str(archive_dir / "wacz-key.pem"), "-subj", f"/CN={DOMAIN}", "-out", "d.csr",
             cwd=ca_dir)
    _openssl("x509", "-req", "-in", "d.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-out", "d.pem", cwd=ca_dir)
    chain = ca_dir / "chain.pem"
    chain.write_text((ca_dir / "d.pem").read_text() + (ca_dir / "ca.pem").read_text())
    url, tsa_ca, _other = tsa
    tsa_chain = tmp_path / "tsa-chain.pem"
    tsa_chain.write_text((tsa_ca.parent / "tsa.pem").read_text() + tsa_ca.read_text())
    roots = tmp_path / "roots.yaml"
    roots.write_text(f"domain_cert_roots:\n  - {_fingerprint(ca_dir / 'ca.pem')}\n"
                     f"timestamp_cert_roots:\n  - {_fingerprint(tsa_ca)}\n")
    return {"chain": chain, "tsa": url, "tsa_chain": tsa_chain, "roots": roots}


#: ``wacz validate --verify-auth -f FILE`` (py-wacz's command), with authsign trusting the roots of a YAML file
#: (its Verifier reads ``DEFAULT_TRUSTED_ROOTS`` when py-wacz makes one; py-wacz gives no option for it).
_VERIFY_AUTH = """import sys
import authsign.verifier
authsign.verifier.DEFAULT_TRUSTED_ROOTS = sys.argv[1]
from wacz.main import main
sys.exit(main(["validate", "--verify-auth", "-f", sys.argv[2]]))
"""


def _verify_auth(path: Path, roots: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", _VERIFY_AUTH, str(roots), str(path)], capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def _domain_export(archive_dir: Path, out: Path, domain_form: dict[str, Path | str], *more: str) -> tuple[int, str]:
    """``pdi export --wacz OUT`` signed in the domain form (the archive's key, its certificate chain, the local TSA
    and its chain): the exit status and what it said."""
    return _pdi("export", "--wacz", str(out), *more, "--domain-cert", str(domain_form["chain"]),
                "--tsa", str(domain_form["tsa"]), "--tsa-chain", str(domain_form["tsa_chain"]),
                "--archive", str(archive_dir))


def test_py_wacz_and_authsign_verify_the_domain_form(archive_dir: Path, tmp_path: Path,
                                                     domain_form: dict[str, Path | str]) -> None:
    out = tmp_path / "domain.wacz"
    code, said = _domain_export(archive_dir, out, domain_form, "--series", S)
    assert code == 0, said
    with zipfile.ZipFile(out) as zf:
        signed = json.loads(zf.read("datapackage-digest.json"))["signedData"]
    assert set(signed) == {"hash", "created", "software", "version", "signature", "domain", "domainCert",
                           "timeSignature", "timestampCert"}
    assert signed["domain"] == DOMAIN
    code, said = _verify_auth(out, Path(domain_form["roots"]))
    assert code == 0, said
    assert "Successfully verified signature via: direct check" in said and "Validation succeeded" in said, said

    code, said = _pdi("verify", "--signatures", str(out), "--archive", str(archive_dir))
    assert code == 0 and f"signed (domain form) for {DOMAIN}" in said, said
    # when the TSA stamped it, in ISO 8601 UTC (not the token's GeneralizedTime), read here by datetime
    from pdi.rfc3161 import read_response

    gen_time = read_response(base64.b64decode(signed["timeSignature"])).time
    stamped = datetime.datetime.strptime(gen_time, "%Y%m%d%H%M%S.%fZ" if "." in gen_time else "%Y%m%d%H%M%SZ")
    printed = re.search(r", timestamped (\S+): signature verified", said)
    assert printed and datetime.datetime.fromisoformat(printed[1]) == stamped.replace(tzinfo=datetime.UTC), said

    _rewrite(out, "datapackage.json", _flip_title)
    code, said = _verify_auth(out, Path(domain_form["roots"]))
    assert code == 1 and "hash mismatch" in said, said
    code, said = _pdi("verify", "--signatures", str(out), "--archive", str(archive_dir))
    assert code == 3 and "datapackage.json was changed" in said, said


def test_authsign_refuses_a_domain_form_whose_root_it_does_not_trust(
        archive_dir: Path, tmp_path: Path, domain_form: dict[str, Path | str]) -> None:
    out = tmp_path / "domain.wacz"
    code, said = _domain_export(archive_dir, out, domain_form)
    assert code == 0, said
    untrusting = tmp_path / "other-roots.yaml"
    untrusting.write_text(f"domain_cert_roots:\n  - {'0' * 64}\ntimestamp_cert_roots:\n  - {'0' * 64}\n")
    code, said = _verify_auth(out, untrusting)
    assert code == 1 and "✗ Trusted Domain Root Cert" in said and "Validation failed" in said, said


def test_a_domain_certificate_of_another_key_is_refused(archive_dir: Path, tmp_path: Path,
                                                        domain_form: dict[str, Path | str]) -> None:
    (archive_dir / "wacz-key.pem").unlink()
    code, out = _pdi("keys", "init", "--wacz", "--archive", str(archive_dir))
    assert code == 0, out
    code, said = _domain_export(archive_dir, tmp_path / "x.wacz", domain_form)
    assert code == 3 and "certifies another key" in said, said
    assert not (tmp_path / "x.wacz").exists()


def test_a_listed_file_that_decompresses_too_far_is_refused_before_it_is_read(archive_dir: Path,
                                                                              tmp_path: Path) -> None:
    """A signed package may list a ZIP bomb: hashing it would read it whole; --max-expansion refuses it (exit 7)."""
    key = WaczKey.generate()
    out = _export(archive_dir, tmp_path / "signed.wacz", key)
    bomb = bytes(8 << 20)
    with zipfile.ZipFile(out) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    package = json.loads(dict((i.filename, d) for i, d in members)["datapackage.json"])
    package["resources"].append({"name": "big.cdx", "path": "indexes/big.cdx", "bytes": len(bomb),
                                 "hash": "sha256:" + hashlib.sha256(bomb).hexdigest()})
    package_bytes = json.dumps(package, indent=2).encode()
    with zipfile.ZipFile(out, "w") as zf:
        for info, data in members:
            if info.filename == "datapackage.json":
                data = package_bytes
            elif info.filename == "datapackage-digest.json":
                data = digest_file(package_bytes, package["created"], "pdi", key)
            zf.writestr(info, data)
        zf.writestr("indexes/big.cdx", bomb, compress_type=zipfile.ZIP_DEFLATED)
    code, output, target = _import(out, tmp_path, "bombed")
    assert code == 7 and "indexes/big.cdx" in output and "decompresses to" in output, output
    assert _names(target) == []


def _change_signed(field: str, value: Callable[[str], str]) -> Callable[[bytes], bytes]:
    def change(data: bytes) -> bytes:
        digest = json.loads(data)
        digest["signedData"][field] = value(digest["signedData"][field])
        return json.dumps(digest).encode()
    return change


def _flip_last_octet(token: str) -> str:
    """The base64 of a DER timestamp token with the last octet of its signature value changed: still a token."""
    raw = bytearray(base64.b64decode(token))
    raw[-1] ^= 0x01
    return base64.b64encode(bytes(raw)).decode("ascii")


@pytest.mark.parametrize(("field", "value", "said"), [
    ("domain", lambda _: "whitehouse.gov", "names the domain 'whitehouse.gov', but its domainCert is for"),
    ("timeSignature", _flip_last_octet, "timeSignature is not signed by its timestampCert"),
])
def test_a_domain_form_is_refused_unless_its_domain_and_timestamp_are_its_certificates(
        archive_dir: Path, tmp_path: Path, domain_form: dict[str, Path | str], field: str,
        value: Callable[[str], str], said: str) -> None:
    """Found by an attack (2026-11-27): neither ``domain`` nor ``timeSignature`` is covered by the signature, and
    pdi said "signed (domain form) for whitehouse.gov…, timestamped 19990101000000Z: signature verified" of a
    certificate for another domain and a token no TSA signed. The domain must be one its certificate names (as
    authsign requires too), and the token signed by a certificate of ``timestampCert``."""
    out = tmp_path / "domain.wacz"
    code, output = _domain_export(archive_dir, out, domain_form, "--series", S)
    assert code == 0, output
    _rewrite(out, "datapackage-digest.json", _change_signed(field, value))
    code, output = _pdi("verify", "--signatures", str(out), "--archive", str(archive_dir))
    assert code == 3 and said in output, output
    code, output, target = _import(out, tmp_path, "refused")
    assert code == 3 and said in output, output
    assert _names(target) == []
    code, output = _verify_auth(out, Path(domain_form["roots"]))
    assert code == 1, output  # authsign refuses it too


def test_a_domain_forms_timestamp_is_checked_as_of_its_own_time(
        archive_dir: Path, tmp_path: Path, domain_form: dict[str, Path | str]) -> None:
    """Found in review (2026-11-27): ``openssl ts -verify`` checks every certificate as of now, so a WACZ would be
    refused once its TSA's certificate expired, which a timestamp is made to outlive (authsign checks the
    signature alone). The certificates are checked as of the stamp's genTime: before the TSA's certificate was
    issued they were not valid, so the same token checked as of 1999 is refused, and as of its genTime holds."""
    from pdi.timestamping import epoch_of
    from pdi.wacz_signing import _check_stamp_signed

    assert epoch_of("19700101000010Z") == 10 and epoch_of("20261127050000.25Z") == 1795755600
    out = tmp_path / "domain.wacz"
    code, output = _domain_export(archive_dir, out, domain_form, "--series", S)
    assert code == 0, output
    with zipfile.ZipFile(out) as zf:
        signed = json.loads(zf.read("datapackage-digest.json"))["signedData"]
    from pdi.rfc3161 import read_response

    token = base64.b64decode(signed["timeSignature"])
    stamped = read_response(token).time
    _check_stamp_signed("x.wacz", token, signed["signature"].encode("ascii"), signed["timestampCert"], stamped)
    with pytest.raises(IntegrityError, match="not signed by its timestampCert"):
        _check_stamp_signed("x.wacz", token, signed["signature"].encode("ascii"), signed["timestampCert"],
                            "19990101000000Z")


def test_a_domain_certificate_whose_extensions_cannot_be_read_is_a_parse_error() -> None:
    """Found in review (2026-11-27): a subjectAltName named twice made cryptography raise DuplicateExtension,
    no ValueError, out of the domain check: a traceback, reached by a stranger's own signing key."""
    import datetime

    from cryptography import x509 as cx509
    from cryptography.hazmat.primitives import hashes as chashes
    from cryptography.hazmat.primitives import serialization as cserial
    from cryptography.hazmat.primitives.asymmetric import ec as cec
    from cryptography.x509.oid import NameOID as COID

    from pdi.wacz_signing import _domains_of

    key = cec.generate_private_key(cec.SECP256R1())
    name = cx509.Name([cx509.NameAttribute(COID.COMMON_NAME, "archive.example.org")])
    now = datetime.datetime.now(datetime.UTC)
    made = (cx509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(cx509.SubjectAlternativeName([cx509.DNSName("archive.example.org")]), critical=False)
            .add_extension(cx509.IssuerAlternativeName([cx509.DNSName("archive.example.org")]), critical=False)
            .sign(key, chashes.SHA256()))
    assert _domains_of(made) == {"archive.example.org"}
    # issuerAltName's OID (2.5.29.18, 55 1d 12) made subjectAltName's (2.5.29.17, 55 1d 11): one named twice
    der = made.public_bytes(cserial.Encoding.DER).replace(bytes.fromhex("0603551d12"), bytes.fromhex("0603551d11"))
    with pytest.raises(ParseError, match="the domainCert's extensions cannot be read"):
        _domains_of(cx509.load_der_x509_certificate(der))


@pytest.mark.parametrize(("minutes", "said"), [
    (-60, "is not within 10 minutes of its timestamp"),  # an hour before the stamp
    (5, "is after its timestamp"),  # after the stamp, within 10 minutes of it: authsign's no_older_then refuses it
])
def test_a_domain_form_whose_timestamp_is_not_within_ten_minutes_of_created_is_refused(
        archive_dir: Path, tmp_path: Path, domain_form: dict[str, Path | str], minutes: int, said: str) -> None:
    """WACZ Signing and Verification 0.1.0, *Domain-Name Identity + Timestamp Validation* step 7: "Validate that the
    ``created`` date is within 10 minutes of the signed timestamp in ``timeSignature``" (authsign: its
    ``STAMP_DURATION``, and ``no_older_then``: no more than that before the timestamp, "and also not newer"). A
    package dated an hour before the TSA stamped its signature, or 5 minutes after it, signed and stamped whole
    (every signature holds), is refused by pdi as by authsign."""
    import datetime

    from pdi.archive.signing_key import load_wacz_key
    from pdi.timestamping import request_timestamp
    from pdi.wacz_signing import Identity

    out = tmp_path / "domain.wacz"
    code, output = _domain_export(archive_dir, out, domain_form, "--series", S)
    assert code == 0, output
    with zipfile.ZipFile(out) as zf:
        package = json.loads(zf.read("datapackage.json"))
    made = datetime.datetime.strptime(package["created"], "%Y-%m-%dT%H:%M:%SZ")
    earlier = (made + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
    package["created"] = earlier
    package_bytes = json.dumps(package, indent=2).encode()
    identity = Identity(Path(domain_form["chain"]).read_text(), Path(domain_form["tsa_chain"]).read_text(),
                        lambda data: request_timestamp(str(domain_form["tsa"]), data)[0])
    key = load_wacz_key(archive_dir / "wacz-key.pem")
    digest = digest_file(package_bytes, earlier, "pdi test", key, identity)
    _rewrite(out, "datapackage.json", lambda _: package_bytes)
    _rewrite(out, "datapackage-digest.json", lambda _: digest)
    code, output = _verify_auth(out, Path(domain_form["roots"]))
    assert code == 1, output  # authsign refuses it
    code, output = _pdi("verify", "--signatures", str(out), "--archive", str(archive_dir))
    assert code == 3 and f"created {earlier!r} {said}" in output, output
    code, output, target = _import(out, tmp_path, "refused")
    assert code == 3 and said in output, output
    assert _names(target) == []


def test_a_domain_form_without_created_is_refused_saying_it_has_none(
        archive_dir: Path, tmp_path: Path, domain_form: dict[str, Path | str]) -> None:
    """WACZ Signing and Verification 0.1.0: ``signedData`` has a ``created`` (an ISO 8601 date, checked in step 7
    against the timestamp). A package and its signedData both without one, every signature holding, is refused
    saying that it has none: not that the date ``'None'`` is not ISO 8601 (a Python value it never held)."""
    from pdi.archive.signing_key import load_wacz_key
    from pdi.timestamping import request_timestamp
    from pdi.wacz_signing import Identity

    out = tmp_path / "domain.wacz"
    code, output = _domain_export(archive_dir, out, domain_form, "--series", S)
    assert code == 0, output
    with zipfile.ZipFile(out) as zf:
        package = json.loads(zf.read("datapackage.json"))
    created = package.pop("created")
    package_bytes = json.dumps(package, indent=2).encode()
    identity = Identity(Path(domain_form["chain"]).read_text(), Path(domain_form["tsa_chain"]).read_text(),
                        lambda data: request_timestamp(str(domain_form["tsa"]), data)[0])
    digest = json.loads(digest_file(package_bytes, created, "pdi test", load_wacz_key(archive_dir / "wacz-key.pem"),
                                    identity))
    del digest["signedData"]["created"]  # the signature is of the hash alone: it still holds
    with pytest.raises(ParseError) as refused:
        check_digest("domain.wacz", package_bytes, json.dumps(digest).encode())
    assert "signedData has no created" in str(refused.value), refused.value
    assert "None" not in str(refused.value), refused.value
