"""RFC 3161 trusted timestamps of manifests, against a local time-stamping authority made with ``openssl ts``.

The TSA is Debian's openssl (``openssl ts -reply``) behind a small HTTP
server on 127.0.0.1, with its own CA; openssl also reads pdi's requests
(``openssl ts -query -text``) and checks the responses pdi keeps
(``openssl ts -verify``), an independent reader both ways.
"""

from __future__ import annotations

import datetime
import hashlib
import http.server
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import IntegrityError, ParseError
from pdi.rfc3161 import read_response, timestamp_request
from pdi.signing import SigningKey, jwk_set_text
from support.handler_server import handler_server

SERIES = "ex.example.us"
CONFIG = """\
[ tsa_ext ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = {dir}/serial
crypto_device = builtin
signer_cert = {dir}/tsa.pem
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl() -> str:
    found = shutil.which("openssl")
    assert found, "openssl is missing: scripts/bootstrap --dev installs Debian's openssl"
    return found


def _run(*args: str, cwd: Path | None = None, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([_openssl(), *args], cwd=cwd, input=data, capture_output=True, timeout=60, check=True)


def _authority(where: Path, name: str) -> Path:
    """A CA and a TSA certified by it, in ``where``; the CA's certificate."""
    where.mkdir()
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    _run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", f"/CN={name} CA",
         "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign", cwd=where)
    _run("req", *ec, "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", f"/CN={name} TSA", cwd=where)
    (where / "tsa.cnf").write_text(CONFIG.format(dir=where))
    _run("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tsa.pem",
         "-days", "2", "-extfile", "tsa.cnf", "-extensions", "tsa_ext", cwd=where)
    (where / "serial").write_text("01\n")
    return where / "ca.pem"


class _Authority(http.server.BaseHTTPRequestHandler):
    """A time-stamping authority over HTTP (RFC 3161 §3.4): what it answers is its subclass's; it logs nothing."""

    def granted(self, reply: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """A local TSA over HTTP: its URL, its CA's certificate, and another CA's (which certifies another TSA)."""
    base = tmp_path_factory.mktemp("tsa")
    ca = _authority(base / "ours", "ours")
    other = _authority(base / "theirs", "theirs")
    lock = threading.Lock()

    class Stamp(_Authority):
        def do_POST(self) -> None:
            query = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                (base / "q.tsq").write_bytes(query)
                subprocess.run([_openssl(), "ts", "-reply", "-config", str(base / "ours" / "tsa.cnf"), "-queryfile",
                                str(base / "q.tsq"), "-out", str(base / "r.tsr")], capture_output=True, timeout=60,
                               check=True)
                reply = (base / "r.tsr").read_bytes()
            self.granted(reply)

    with handler_server(Stamp) as url:
        yield url, ca, other


def test_rfc3161_2_4_1_openssl_reads_the_request(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"a manifest\n").digest()
    (tmp_path / "q.tsq").write_bytes(timestamp_request(digest, 0x1234567))
    text = _run("ts", "-query", "-in", str(tmp_path / "q.tsq"), "-text").stdout.decode()
    assert "Version: 1" in text and "Hash Algorithm: sha256" in text
    assert "Nonce: 0x01234567" in text and "Certificate required: yes" in text
    assert digest[:8].hex(" ") in text.replace("-", " ")


def test_rfc3161_2_4_2_a_granted_response_read(tsa: tuple[str, Path, Path]) -> None:
    from pdi.timestamping import request_timestamp

    url, _, _ = tsa
    response, stamp = request_timestamp(url, b"a manifest\n")
    assert stamp.imprint == hashlib.sha256(b"a manifest\n").digest()
    assert len(stamp.time) >= 15 and stamp.time.endswith("Z")
    assert read_response(response) == stamp
    with pytest.raises(IntegrityError, match="not of these octets"):
        stamp.check(b"another manifest\n")


def test_rfc3161_2_4_2_a_rejection_is_refused(tmp_path: Path, tsa: tuple[str, Path, Path]) -> None:
    _, ca, _ = tsa
    (tmp_path / "data").write_bytes(b"x")
    # a SHA-1 request, which this TSA (digests = sha256) rejects
    _run("ts", "-query", "-data", str(tmp_path / "data"), "-sha1", "-out", str(tmp_path / "q.tsq"))
    reply = subprocess.run([_openssl(), "ts", "-reply", "-config", str(ca.parent / "tsa.cnf"), "-queryfile",
                            str(tmp_path / "q.tsq"), "-out", str(tmp_path / "r.tsr")], capture_output=True, timeout=60)
    assert reply.returncode == 0
    with pytest.raises(IntegrityError, match="rejection"):
        read_response((tmp_path / "r.tsr").read_bytes())


@settings(max_examples=200)
@given(st.binary(max_size=400))
def test_any_octets_fail_only_as_parse_or_integrity_errors(data: bytes) -> None:
    try:
        read_response(data)
    except (ParseError, IntegrityError):
        pass


def test_every_cut_of_a_response_is_refused(tsa: tuple[str, Path, Path]) -> None:
    from pdi.timestamping import request_timestamp

    response, _ = request_timestamp(tsa[0], b"x")
    for end in range(0, len(response) - 1, 7):
        with pytest.raises((ParseError, IntegrityError)):
            read_response(response[:end])


def _keyed_archive(tmp_path: Path) -> tuple[Path, CliRunner, Path]:
    """An archive of one text with a signing key, a runner of pdi's commands, and where a manifest goes."""
    location = tmp_path / "a"
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        archive.add(SERIES, b"minutes\n", format="text")
    runner = CliRunner()
    assert runner.invoke(cli, ["keys", "init", "--archive", str(location)]).exit_code == 0
    return location, runner, tmp_path / "m.jws"


def test_pdi_manifest_tsa_and_verify_tsa_ca(tmp_path: Path, tsa: tuple[str, Path, Path]) -> None:
    url, ca, other = tsa
    location, runner, out = _keyed_archive(tmp_path)
    made = runner.invoke(cli, ["manifest", "--series", SERIES, "-o", str(out), "--tsa", url, "--archive", str(location)])
    assert made.exit_code == 0, made.output
    stamp = tmp_path / "m.jws.tsr"
    # openssl, independently: the TSA's signature good, of this file
    checked = _run("ts", "-verify", "-in", str(stamp), "-data", str(out), "-CAfile", str(ca)).stdout.decode()
    assert "Verification: OK" in checked

    def verify(*args: str) -> tuple[int, str]:
        result = runner.invoke(cli, ["verify", "--signatures", str(out), *args, "--archive", str(location)])
        return result.exit_code, result.output

    status, output = verify("--tsa-ca", str(ca))
    assert status == 0 and f"timestamped\t{out}\t" in output, output
    status, output = verify()
    assert status == 0 and "the TSA's signature unchecked" in output
    status, output = verify("--tsa-ca", str(other))
    assert status == 3 and f"timestamp\t{stamp}\t" in output and "does not verify" in output
    out.write_text(out.read_text() + "\n")  # the file changed after it was stamped
    status, output = verify()
    assert status == 3 and "not of these octets" in output


@pytest.mark.parametrize("again", ["without --tsa", "with the TSA down"])
def test_a_manifest_made_again_never_keeps_the_timestamp_of_the_one_it_replaced(
        tmp_path: Path, tsa: tuple[str, Path, Path], again: str) -> None:
    """Found by a tester (2026-11-30): ``pdi manifest -o FILE --tsa URL``, a deposit, then ``pdi manifest -o FILE``
    again without ``--tsa`` (or with a TSA that is down: exit 16) left the old ``FILE.tsr`` beside the new FILE, and
    ``pdi verify --signatures FILE`` failed (exit 3, "not of these octets"). The stale timestamp is removed, and said;
    one of the very octets written again is kept (it is the older); a TSA that answers stamps the new file."""
    url, ca, _ = tsa
    location, runner, out = _keyed_archive(tmp_path)
    stamp = tmp_path / "m.jws.tsr"

    def manifest(*args: str) -> tuple[int, str]:
        made = runner.invoke(cli, ["manifest", "--series", SERIES, "--all", "-o", str(out), *args,
                                   "--archive", str(location)])
        return made.exit_code, made.stderr

    def remade() -> tuple[int, str]:
        if again == "without --tsa":
            return manifest()
        with socket.socket() as held:  # a port bound and not listening: the TSA is down
            held.bind(("127.0.0.1", 0))
            return manifest("--tsa", f"http://127.0.0.1:{held.getsockname()[1]}/")

    def verify() -> tuple[int, str]:
        checked = runner.invoke(cli, ["verify", "--signatures", str(out), "--tsa-ca", str(ca), "--archive",
                                      str(location)])
        return checked.exit_code, checked.output

    def deposit(text: bytes) -> None:
        with Archive.open(str(location)) as archive:
            archive.add(SERIES, text, format="text")

    status, failure = (0, "") if again == "without --tsa" else (16, "cannot reach the time-stamping authority")
    removed = f"removed {stamp}: it is not a timestamp of the new {out} (pdi manifest --tsa URL stamps it)\n"
    assert manifest("--tsa", url)[0] == 0 and stamp.is_file()
    first = stamp.read_bytes()
    deposit(b"more minutes\n")
    made, said = remade()
    assert made == status and said.startswith(removed) and failure in said, said
    assert not stamp.exists()
    checked, said = verify()  # the new file, unstamped: clean
    assert checked == 0 and "timestamped" not in said and "no RFC 3161 timestamp beside it" in said, said
    assert manifest("--tsa", url)[0] == 0 and verify()[0] == 0  # a TSA that answers stamps the new file
    second = stamp.read_bytes()
    assert second != first
    checked_by_openssl = _run("ts", "-verify", "-in", str(stamp), "-data", str(out), "-CAfile", str(ca))
    assert "Verification: OK" in checked_by_openssl.stdout.decode()
    made, said = remade()  # nothing deposited: the same octets, whose timestamp is kept
    assert made == status and "removed" not in said and failure in said, said
    assert stamp.read_bytes() == second and verify()[0] == 0


@pytest.mark.parametrize("digest", ["sha384", "sha512"])
def test_rfc3161_2_4_2_a_stamp_of_a_sha384_or_sha512_imprint_of_the_file_is_checked(
        tmp_path: Path, tsa: tuple[str, Path, Path], digest: str) -> None:
    """RFC 3161 §2.4.2: the TSTInfo's messageImprint is the hash algorithm and digest the request named; a stamp of
    a manifest file asked by another tool (``openssl ts -query -sha512``) is of that algorithm's digest of the file.
    openssl verifies it (the independent reader); so does ``pdi verify --signatures``, and a changed file is
    refused, naming the algorithm."""
    _, ca, _ = tsa
    location, runner, out = _keyed_archive(tmp_path)
    made = runner.invoke(cli, ["manifest", "--series", SERIES, "-o", str(out), "--archive", str(location)])
    assert made.exit_code == 0, made.output
    stamp = tmp_path / "m.jws.tsr"
    _run("ts", "-query", "-data", str(out), f"-{digest}", "-cert", "-out", str(tmp_path / "q.tsq"))
    _run("ts", "-reply", "-config", str(ca.parent / "tsa.cnf"), "-queryfile", str(tmp_path / "q.tsq"),
         "-out", str(stamp))
    said = _run("ts", "-reply", "-in", str(stamp), "-text").stdout.decode()
    assert f"Hash Algorithm: {digest}" in said, said
    checked = _run("ts", "-verify", "-in", str(stamp), "-data", str(out), "-CAfile", str(ca)).stdout.decode()
    assert "Verification: OK" in checked
    read = read_response(stamp.read_bytes())
    assert read.imprint == hashlib.new(digest, out.read_bytes()).digest()
    read.check(out.read_bytes())

    def verify(*args: str) -> tuple[int, str]:
        result = runner.invoke(cli, ["verify", "--signatures", str(out), *args, "--archive", str(location)])
        return result.exit_code, result.output

    status, output = verify("--tsa-ca", str(ca))
    assert status == 0 and f"timestamped\t{out}\t" in output, output
    out.write_text(out.read_text() + "\n")  # the file changed after it was stamped
    status, output = verify()
    named = {"sha384": "SHA-384", "sha512": "SHA-512"}[digest]
    assert status == 3 and f"the timestamp is of {named} " in output and "not of these octets" in output, output


def test_rfc3161_2_4_2_a_tsa_that_stamps_another_digest_than_asked_is_refused(
        tmp_path: Path, tsa: tuple[str, Path, Path]) -> None:
    """RFC 3161 §2.4.2: a response's messageImprint "MUST have the same value as the similar field in
    TimeStampReq". pdi asks for the SHA-256 of what it stamps; an authority answering with a stamp of the SHA-512 of
    the same octets (made by openssl for a query of its own) answered something else than it was asked: its
    failure (exit 16), and no stamp is kept."""
    from pdi.errors import RemoteError
    from pdi.timestamping import request_timestamp

    _, ca, _ = tsa
    data = tmp_path / "data"
    data.write_bytes(b"a manifest\n")
    _run("ts", "-query", "-data", str(data), "-sha512", "-cert", "-out", str(tmp_path / "q.tsq"))
    _run("ts", "-reply", "-config", str(ca.parent / "tsa.cnf"), "-queryfile", str(tmp_path / "q.tsq"),
         "-out", str(tmp_path / "r.tsr"))
    reply = (tmp_path / "r.tsr").read_bytes()
    assert read_response(reply).algorithm == "sha512"  # a good stamp of the same octets, by another digest

    class Other(_Authority):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.granted(reply)

    with handler_server(Other) as url, pytest.raises(RemoteError, match="stamped the SHA-512 of what it was asked"):
        request_timestamp(url, b"a manifest\n")


def test_rfc3161_a_stamp_of_a_sha1_imprint_is_refused(tmp_path: Path, tsa: tuple[str, Path, Path]) -> None:
    """SHA-1 collisions are made (SHAttered, 2017): a SHA-1 stamp of one file stamps another too. Refused, as a
    response whose digest is not its algorithm's size is."""
    digest = hashlib.sha1(b"x").digest()
    with pytest.raises(IntegrityError, match="not of a SHA-256, SHA-384 or SHA-512 digest"):
        read_response(_response(digest, algorithm="2b0e03021a"))  # 1.3.14.3.2.26, id-sha1
    with pytest.raises(ParseError, match="sha256 digest is 20 octets, not 32"):
        read_response(_response(digest))


def test_tsa_needs_a_file(tmp_path: Path) -> None:
    location = tmp_path / "a"
    Archive.init(location).close()
    result = CliRunner().invoke(cli, ["manifest", "--series", SERIES, "--tsa", "http://127.0.0.1:9/",
                                      "--archive", str(location)])
    assert result.exit_code == 2 and "--output FILE" in result.output
    # a named pipe or a descriptor cannot be read back to be stamped (found in review, 2026-11-27: a pipe hung)
    import os

    os.mkfifo(tmp_path / "pipe")
    for output in (str(tmp_path / "pipe"), "/dev/stdout"):
        result = CliRunner().invoke(cli, ["manifest", "--series", SERIES, "--tsa", "http://127.0.0.1:9/", "-o", output,
                                          "--archive", str(location)])
        assert result.exit_code == 2 and "a pipe or a device cannot be read back" in result.output, result.output


def test_a_tsa_that_cannot_be_reached_or_fails_is_a_remote_error(tmp_path: Path) -> None:
    """Another server's failure, not this archive's storage: exit 16 (and 502 from the resolver)."""
    from pdi.errors import RemoteError
    from pdi.timestamping import request_timestamp

    with socket.socket() as held:  # a port bound and not listening: the connection is refused
        held.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{held.getsockname()[1]}/"
        with pytest.raises(RemoteError, match="cannot reach the time-stamping authority"):
            request_timestamp(closed, b"x")

        class Failing(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        with handler_server(Failing) as failing:
            with pytest.raises(RemoteError, match="answered HTTP 503"):
                request_timestamp(failing, b"x")
            location, runner, out = _keyed_archive(tmp_path)
            for url, said in ((closed, "cannot reach"), (failing, "answered HTTP 503")):
                made = runner.invoke(cli, ["manifest", "--series", SERIES, "-o", str(out), "--tsa", url,
                                           "--archive", str(location)])
                assert made.exit_code == 16 and said in made.output, made.output
                assert not (tmp_path / "m.jws.tsr").exists()


def _tlv(tag: int, content: bytes) -> bytes:
    """A DER element (X.690 §8.1: the tag, the length in short or long form, the content), written here."""
    n = len(content)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + length + content


def _response(digest: bytes, *, status: bytes = b"\x00", gen_time: bytes = b"20261127050000Z",
              nonce: bytes | None = None, algorithm: str = "608648016503040201") -> bytes:
    """A granted TimeStampResp (RFC 3161 §2.4.2) as its ASN.1 module spells it, its SignedData unsigned; its imprint
    of ``algorithm`` (the DER content of its OID, in hex: by default 2.16.840.1.101.3.4.2.1, SHA-256)."""
    oid = bytes.fromhex(algorithm)
    imprint = _tlv(0x30, _tlv(0x30, _tlv(0x06, oid) + _tlv(0x05, b"")) + _tlv(0x04, digest))
    tst = _tlv(0x02, b"\x01") + _tlv(0x06, b"\x2a\x03") + imprint + _tlv(0x02, b"\x05") + _tlv(0x18, gen_time)
    if nonce is not None:
        tst += _tlv(0x02, nonce)
    content = _tlv(0x30, _tlv(0x06, bytes.fromhex("2a864886f70d0109100104")) + _tlv(0xA0, _tlv(0x04, _tlv(0x30, tst))))
    signed = _tlv(0x30, _tlv(0x02, b"\x03") + _tlv(0x31, b"") + content + _tlv(0x31, b""))
    token = _tlv(0x30, _tlv(0x06, bytes.fromhex("2a864886f70d010702")) + _tlv(0xA0, signed))
    return _tlv(0x30, _tlv(0x30, _tlv(0x02, status)) + token)


def test_a_strangers_integers_and_time_are_read_within_bounds() -> None:
    """Found by an attack (2026-11-27): a PKIStatus or nonce of 2,000 octets is a number of 4,800 digits, which
    Python refuses to print, so the refusal itself failed (a traceback; a 500 from ``pdi serve --tsa``); a genTime
    of control characters reached the terminal. RFC 3161 §2.4.2 writes genTime ``YYYYMMDDhhmmss[.s...]Z``."""
    digest = hashlib.sha256(b"a manifest\n").digest()
    stamp = read_response(_response(digest, nonce=b"\x01\x23\x45\x67"))
    assert (stamp.imprint, stamp.time, stamp.nonce) == (digest, "20261127050000Z", 0x1234567)
    assert read_response(_response(digest, gen_time=b"20261127050000.25Z")).time == "20261127050000.25Z"
    with pytest.raises(IntegrityError, match="rejection"):
        read_response(_response(digest, status=b"\x02"))
    with pytest.raises(ParseError, match="the PKIStatus is an INTEGER of 2000 octets, more than 4"):
        read_response(_response(digest, status=b"\x01" * 2000))
    with pytest.raises(ParseError, match="the nonce is an INTEGER of 2000 octets, more than 32"):
        read_response(_response(digest, nonce=b"\x01" * 2000))
    for bad in (b"\x1b[2J\x1b[H19990101000000Z", b"2026112705000Z", b"20261127050000.50Z", b"20261127050000",
                b"20261332000000Z", b"20260230120000Z", b"20261127250000Z"):  # month 13, 30 February, hour 25
        with pytest.raises(ParseError, match="genTime is not a time"):
            read_response(_response(digest, gen_time=bad))


def test_a_hostile_tsas_answer_is_its_failure_not_a_traceback(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a response with a 2,000-octet nonce ended ``pdi manifest --tsa`` in a
    traceback (a 500 from ``pdi serve --tsa``); it is the authority's failure, exit 16 (502 from the resolver), as
    are an answer in a content coding it was not asked for and a redirect to a URL httpx cannot read."""
    from pdi.errors import RemoteError
    from pdi.timestamping import request_timestamp

    answers = {
        "/nonce": (200, {"Content-Type": "application/timestamp-reply"},
                   _response(b"\x00" * 32, nonce=b"\x01" * 2000)),
        "/gzip": (200, {"Content-Type": "application/timestamp-reply", "Content-Encoding": "gzip"}, b"\x1f\x8b"),
        "/script": (302, {"Location": "javascript:alert(1)"}, b""),
    }

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            status, fields, body = answers[self.path]
            self.send_response(status)
            for field, value in (fields | {"Content-Length": str(len(body))}).items():
                self.send_header(field, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    location, runner, out = _keyed_archive(tmp_path)
    with handler_server(Hostile) as base:
        for path, said in (("nonce", "answered no timestamp response: the nonce is an INTEGER of 2000 octets"),
                           ("gzip", "is sent with Content-Encoding 'gzip'"),
                           ("script", "cannot reach the time-stamping authority")):
            with pytest.raises(RemoteError, match=said):
                request_timestamp(base + path, b"x")
            made = runner.invoke(cli, ["manifest", "--series", SERIES, "-o", str(out), "--tsa", base + path,
                                       "--archive", str(location)])
            assert made.exit_code == 16 and said in made.output, made.output


def test_a_tsa_that_sends_its_answers_head_an_octet_at_a_time_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack (2026-11-27): each read of the authority's answer was bounded (``TSA_TIMEOUT``), its head
    was not, nor was the whole before its body: an authority sending its header section an octet just inside
    each read's timeout held ``pdi manifest --tsa`` (and a worker of ``pdi serve --tsa``) for as long as the head
    may grow (httpcore reads 100 KiB of one: at 29 s an octet, a month)."""
    import time

    import pdi.timestamping as timestamping
    from pdi.errors import RemoteError

    monkeypatch.setattr(timestamping, "TSA_TIMEOUT", 1.0)  # each read, and the head, made short
    monkeypatch.setattr(timestamping, "TSA_DEADLINE", 2.0)

    class Dripping(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(1000):
                    for octet in b"X-Slow: a\r\n":
                        self.wfile.write(bytes([octet]))
                        self.wfile.flush()
                        time.sleep(0.2)  # 5 octets a second: each read in time
            except OSError:
                pass

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Dripping) as base:
        started = time.monotonic()
        with pytest.raises(RemoteError, match=f"cannot reach the time-stamping authority {base}: the head of the"
                                              r" answer took more than 1 s \(its status line and header fields\)"):
            timestamping.request_timestamp(base, b"x")
        assert time.monotonic() - started < 10  # else hung: 11,000 octets at 5 a second


def test_a_resolvers_page_that_is_not_ascii_is_reported_with_its_timestamp_not_a_traceback(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): ``pdi verify --signatures URL`` checks a resolver's timestamp of each page
    it answered (``/api/manifest.tsr``) against the page's octets, which it encoded as ASCII: a page with an
    ``é`` in it (no JWS, RFC 7515 §7.1: base64url and dots) ended the command in a ``UnicodeEncodeError``
    traceback. The page is refused for its signature, and its timestamp for not being of its octets."""
    page = "é.e30.AA".encode()
    stamped = hashlib.sha256(b"another page").digest()

    class Resolver(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = _response(stamped) if self.path.startswith("/api/manifest.tsr") else page
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    location = tmp_path / "a"
    Archive.init(location).close()
    key = SigningKey.generate()
    with handler_server(Resolver) as base:
        url = f"{base}api/manifest?series={SERIES}"
        checked = CliRunner().invoke(cli, ["verify", "--signatures", url, "--key", jwk_set_text([key.public]),
                                           "--archive", str(location)])
    assert checked.exit_code == 3, (checked.exception, checked.output)
    assert "the JWS header is not unpadded base64url" in checked.output, checked.output
    assert f"the timestamp is of SHA-256 {stamped.hex()}, not of these octets" in checked.output, checked.output


def test_tsa_ca_names_a_file_and_says_when_a_manifest_has_no_timestamp_to_check(tmp_path: Path) -> None:
    """Typed as docs/how-to/signatures.md shows (found following it, 2026-11-28): a ``--tsa-ca`` that names no file
    is a usage error naming the option, not a clean check; and a manifest with no ``FILE.tsr`` beside it, checked
    with ``--tsa-ca``, still checks clean (a timestamp is optional) but says on standard error that there was no
    timestamp for the CA to check, rather than leave the reader believing one was checked."""
    location, runner, out = _keyed_archive(tmp_path)
    made = runner.invoke(cli, ["manifest", "--series", SERIES, "--all", "-o", str(out), "--archive", str(location)])
    assert made.exit_code == 0, made.output
    missing = tmp_path / "tsa-ca.pem"
    result = runner.invoke(cli, ["verify", "--signatures", str(out), "--tsa-ca", str(missing),
                                 "--archive", str(location)])
    assert result.exit_code == 2, result.output
    assert "--tsa-ca" in result.output and "does not exist" in result.output, result.output
    ca = tmp_path / "ca.pem"
    ca.write_text("not read: there is no timestamp to check\n")
    result = runner.invoke(cli, ["verify", "--signatures", str(out), "--tsa-ca", str(ca), "--archive", str(location)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "checked 1 manifest listing 1 name: 0 problems\n", result.stdout
    assert result.stderr == (f"{out}: no RFC 3161 timestamp beside it ({out}.tsr, made by pdi manifest --tsa):"
                             " --tsa-ca had nothing to check\n"), result.stderr


def _openssl_time(said: str) -> datetime.datetime:
    """The ``Time stamp:`` line of ``openssl ts -reply -text`` (``Nov 28 22:27:24.25 2026 GMT``) as a UTC time."""
    line = next(line for line in said.splitlines() if line.startswith("Time stamp: "))
    month, day, clock, year, _ = line.removeprefix("Time stamp: ").split()
    whole, _, fraction = clock.partition(".")
    parsed = datetime.datetime.strptime(f"{month} {day} {whole} {year}", "%b %d %H:%M:%S %Y")
    return parsed.replace(microsecond=int((fraction or "0").ljust(6, "0")[:6]), tzinfo=datetime.UTC)


@pytest.mark.parametrize("digits", [0, 3])
def test_verify_prints_the_timestamp_as_iso_8601_utc(tmp_path: Path, tsa: tuple[str, Path, Path],
                                                     digits: int) -> None:
    """``pdi verify --signatures`` prints when the TSA stamped the manifest as ISO 8601 in UTC
    (``2026-11-28T22:27:24Z``), not as the token's raw GeneralizedTime (``20261128222724Z``); a TSA that writes
    fractions of a second (openssl's ``clock_precision_digits``) has them kept. The time is the one openssl reads
    from the same token (``openssl ts -reply -text``)."""
    _, ca, _ = tsa
    location, runner, out = _keyed_archive(tmp_path)
    made = runner.invoke(cli, ["manifest", "--series", SERIES, "-o", str(out), "--archive", str(location)])
    assert made.exit_code == 0, made.output
    config = tmp_path / "tsa.cnf"
    config.write_text((ca.parent / "tsa.cnf").read_text().replace(
        "[ tsa_config1 ]\n", f"[ tsa_config1 ]\nclock_precision_digits = {digits}\n"))
    stamp = tmp_path / "m.jws.tsr"
    _run("ts", "-query", "-data", str(out), "-sha256", "-cert", "-out", str(tmp_path / "q.tsq"))
    _run("ts", "-reply", "-config", str(config), "-queryfile", str(tmp_path / "q.tsq"), "-out", str(stamp))
    expected = _openssl_time(_run("ts", "-reply", "-in", str(stamp), "-text").stdout.decode())
    result = runner.invoke(cli, ["verify", "--signatures", str(out), "--tsa-ca", str(ca), "--archive", str(location)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("timestamped\t"))
    printed = line.split("\t")[2]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", printed), printed
    assert datetime.datetime.fromisoformat(printed) == expected, (printed, expected)


@given(st.datetimes(min_value=datetime.datetime(1950, 1, 1), max_value=datetime.datetime(9999, 12, 31)))
def test_rfc3161_2_4_2_gen_time_read_as_iso_8601(when: datetime.datetime) -> None:
    """Any genTime as RFC 3161 §2.4.2 writes it (the fraction, if any, without trailing zeros) reads as the same
    instant in ISO 8601 UTC, as Python's own ISO reader takes it."""
    from pdi.rfc3161 import iso_8601

    fraction = f".{when.microsecond:06d}".rstrip("0").rstrip(".")
    written = when.strftime("%Y%m%d%H%M%S").rjust(14, "0") + fraction + "Z"
    iso = iso_8601(written)
    assert iso.endswith("Z") and "T" in iso
    assert datetime.datetime.fromisoformat(iso) == when.replace(tzinfo=datetime.UTC)
