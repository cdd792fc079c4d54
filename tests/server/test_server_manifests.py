"""Signed manifests over HTTP (``/api/manifest``, ``/api/keys``) and on the command line (``pdi keys``,
``pdi manifest``, ``pdi verify --signatures``).

Checked with an independent JOSE library (jwcrypto) against the JWK set the
resolver serves, and each digest against ``hashlib`` of the bytes deposited.
Access: an anonymous reader's manifest holds no name (and no digest) of an
embargoed document or a private series; a token of the series sees them. A
manifest with one digest changed, or signed by another key, is refused by
``pdi verify --signatures`` with exit status 3 (integrity check failed).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from jwcrypto import jwk, jws
from server_helpers import Clock, serving
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.cli import cli as main
from pdi.errors import IntegrityError
from pdi.server import create_app
from pdi.signing import SigningKey, b64url, b64url_decode
from support.stored_blobs import flip_octet
from test_rfc3161 import tsa  # noqa: F401 (a fixture: a local RFC 3161 TSA made with openssl ts)

OPEN = "open.example.us"
CLOSED = "closed.example.us"
NOW = datetime.datetime(2026, 11, 24, 12, 0, 0, tzinfo=datetime.UTC)
DAY = NOW.date().isoformat()
BYTES = {"one": b"the first minutes\n", "two": b"the second minutes\n", "late": b"a later day\n"}


def _payload(token: str) -> dict:
    return json.loads(b64url_decode(token.split(".")[1], "payload"))


@pytest.fixture
def archive_dir(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    """An archive with public names over two days, an embargoed one, a withdrawn one, a private series, a key."""
    location = tmp_path / "a"
    clock = Clock(NOW)
    names: dict[str, str] = {}
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(OPEN)
        archive.add_series(CLOSED)
        archive.set_series_access(CLOSED, "private")
        names["one"] = str(archive.add(OPEN, BYTES["one"], format="text"))
        names["two"] = str(archive.add(OPEN, BYTES["two"], format="text"))
        names["embargoed"] = str(archive.add(OPEN, b"sealed minutes\n", format="text", embargo_until="2099-01-01"))
        names["gone"] = str(archive.add(OPEN, b"withdrawn minutes\n", format="text"))
        archive.withdraw(names["gone"].rsplit(".", 2)[0], "a mistake")
        names["private"] = str(archive.add(CLOSED, b"closed minutes\n", format="text"))
        clock.now = NOW + datetime.timedelta(days=1)
        names["late"] = str(archive.add(OPEN, BYTES["late"], format="text"))
        _, secret = archive.add_token("clerk", role="read", series=[OPEN, CLOSED])
    result = CliRunner().invoke(main, ["keys", "init", "--archive", str(location)])
    assert result.exit_code == 0, result.output
    return location, names, secret


def _client(location: Path) -> TestClient:
    archive = Archive.open(location, clock=Clock(NOW + datetime.timedelta(days=2)))
    return TestClient(create_app(str(location), archive=archive))


def test_keys_init_writes_a_pkcs8_key_mode_0600_and_never_prints_it(archive_dir: tuple[Path, dict, str]) -> None:
    location, _, _ = archive_dir
    pem = (location / "signing-key.pem").read_bytes()
    assert stat.S_IMODE(os.stat(location / "signing-key.pem").st_mode) == 0o600
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    shown = CliRunner().invoke(main, ["keys", "show", "--archive", str(location)])
    assert shown.exit_code == 0
    public = json.loads(shown.output.splitlines()[0])
    assert set(public) == {"kty", "crv", "x", "kid", "use", "alg"}  # no "d"
    # the JWK's x and kid are those jwcrypto finds in the PEM itself
    theirs = jwk.JWK.from_pem(pem)
    assert public["x"] == json.loads(theirs.export_public())["x"]
    assert public["kid"] == theirs.thumbprint()
    assert f"x\t{public['x']}" in shown.output
    again = CliRunner().invoke(main, ["keys", "init", "--archive", str(location)])
    assert again.exit_code == 5 and "holds a signing key already" in again.output
    assert (location / "signing-key.pem").read_bytes() == pem


def test_a_postgresql_archive_must_name_the_key_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.archive.signing_key import key_path
    from pdi.errors import UnsupportedError

    monkeypatch.delenv("PDI_SIGNING_KEY", raising=False)
    with pytest.raises(UnsupportedError, match="PDI_SIGNING_KEY"):
        key_path("postgresql://pdi@localhost/pdi")
    monkeypatch.setenv("PDI_SIGNING_KEY", "/run/secrets/pdi-key.pem")
    assert key_path("postgresql://pdi@localhost/pdi") == Path("/run/secrets/pdi-key.pem")


def test_the_manifest_verifies_with_jwcrypto_and_lists_the_digests(archive_dir: tuple[Path, dict, str]) -> None:
    location, names, _ = archive_dir
    client = _client(location)
    keys = client.get("/api/keys")
    assert keys.status_code == 200 and keys.headers["content-type"] == "application/jwk-set+json"
    assert client.get("/.well-known/pdi-keys").json() == keys.json()
    keyset = jwk.JWKSet.from_json(keys.text)
    answer = client.get(f"/api/manifest?series={OPEN}&day={DAY}")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/jose"
    checked = jws.JWS()
    checked.deserialize(answer.text)
    kid = json.loads(b64url_decode(answer.text.split(".")[0], "header"))["kid"]
    checked.verify(keyset.get_key(kid), alg="EdDSA")
    payload = json.loads(checked.payload)
    assert payload["series"] == OPEN and payload["day"] == DAY and payload["next"] is None
    listed = {e["name"]: e for e in payload["names"]}
    for which in ("one", "two"):
        assert listed[names[which]]["sha256"] == hashlib.sha256(BYTES[which]).hexdigest()
        assert listed[names[which]]["size"] == len(BYTES[which])
    assert listed[names["gone"]]["withdrawn"] and "sha256" not in listed[names["gone"]]
    # an anonymous reader is shown no embargoed name, nor its digest; the other day is not this day's
    assert names["embargoed"] not in listed and names["late"] not in listed
    assert hashlib.sha256(b"sealed minutes\n").hexdigest() not in answer.text
    whole = _payload(client.get(f"/api/manifest?series={OPEN}").text)
    assert names["late"] in {e["name"] for e in whole["names"]}


def test_a_token_of_the_series_sees_what_is_embargoed_and_private(archive_dir: tuple[Path, dict, str]) -> None:
    location, names, secret = archive_dir
    client = _client(location)
    assert client.get(f"/api/manifest?series={CLOSED}").status_code == 403
    bearer = {"Authorization": f"Bearer {secret}"}
    mine = client.get(f"/api/manifest?series={OPEN}&day={DAY}", headers=bearer)
    assert mine.headers["cache-control"] == "private, no-store"
    listed = {e["name"]: e for e in _payload(mine.text)["names"]}
    assert listed[names["embargoed"]]["sha256"] == hashlib.sha256(b"sealed minutes\n").hexdigest()
    closed = client.get(f"/api/manifest?series={CLOSED}", headers=bearer)
    assert [e["name"] for e in _payload(closed.text)["names"]] == [names["private"]]


def test_pages_follow_the_next_cursor(archive_dir: tuple[Path, dict, str]) -> None:
    location, _, _ = archive_dir
    client = _client(location)
    whole = [e["name"] for e in _payload(client.get(f"/api/manifest?series={OPEN}").text)["names"]]
    seen: list[str] = []
    url = f"/api/manifest?series={OPEN}&limit=1"
    while True:
        answer = client.get(url)
        page = _payload(answer.text)
        assert len(page["names"]) == 1
        seen += [e["name"] for e in page["names"]]
        if page["next"] is None:
            assert "link" not in answer.headers
            break
        assert page["next"] == page["names"][-1]["name"]
        url = answer.links["next"]["url"]
    assert seen == whole and len(whole) == 4  # one, two, the withdrawn one, the later day's


def test_bad_requests_say_what_is_wrong(archive_dir: tuple[Path, dict, str], tmp_path: Path) -> None:
    location, _, _ = archive_dir
    client = _client(location)
    assert client.get("/api/manifest").status_code == 400
    bad_day = client.get(f"/api/manifest?series={OPEN}&day=2026-13-01")
    assert bad_day.status_code == 400 and "YYYY-MM-DD" in bad_day.json()["detail"]
    assert client.get("/api/manifest?series=never.example.us").status_code == 404
    assert client.get(f"/api/manifest?series={OPEN}&limit=10001").status_code == 400
    keyless = tmp_path / "keyless"
    Archive.init(keyless).close()
    answer = TestClient(create_app(str(keyless))).get(f"/api/manifest?series={OPEN}")
    assert answer.status_code == 404 and "pdi keys init" in answer.json()["detail"]


def test_pdi_manifest_writes_the_same_jws_as_the_resolver(archive_dir: tuple[Path, dict, str], tmp_path: Path) -> None:
    location, _, secret = archive_dir
    out = tmp_path / "m.jws"
    result = CliRunner().invoke(main, ["manifest", "--series", OPEN, "--day", DAY, "-o", str(out),
                                       "--archive", str(location)])
    assert result.exit_code == 0, result.output
    # the command line reads as the archive's owner: as a token of the series does, embargoed names included
    bearer = {"Authorization": f"Bearer {secret}"}
    assert out.read_text().strip() == _client(location).get(f"/api/manifest?series={OPEN}&day={DAY}",
                                                            headers=bearer).text


def test_pdi_manifest_day_is_yyyy_mm_dd_only(archive_dir: tuple[Path, dict, str], tmp_path: Path) -> None:
    """``date.fromisoformat`` reads an ISO week date (``2024-W01-1``, 1 January) and the basic form (``20240101``)
    too: ``--day`` asks for YYYY-MM-DD (exit 2, click's usage error), as ``/api/manifest``'s ``day=`` does."""
    location, _, _ = archive_dir
    for day in ("2024-W01-1", "20240101", "2024-001"):
        result = CliRunner().invoke(main, ["manifest", "--series", OPEN, "--day", day, "-o", str(tmp_path / "m.jws"),
                                           "--archive", str(location)])
        assert result.exit_code == 2 and "YYYY-MM-DD" in result.output, (day, result.output)


def _verify(location: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", "--signatures", *args, "--archive", str(location)])
    return result.exit_code, result.output


def test_verify_signatures_passes_and_refuses_a_changed_digest_or_another_key(
        archive_dir: tuple[Path, dict, str], tmp_path: Path) -> None:
    location, names, _ = archive_dir
    good = tmp_path / "good.jws"
    CliRunner().invoke(main, ["manifest", "--series", OPEN, "--all", "--limit", "2", "-o", str(good),
                              "--archive", str(location)])
    assert len(good.read_text().splitlines()) == 3  # the owner's view: five names, the embargoed one too
    status, output = _verify(location, str(good))
    assert status == 0, output
    assert "checked 3 manifests listing 5 names: 0 problems" in output

    # one digest changed, the signature kept: the signature no longer verifies
    head, payload, signature = good.read_text().splitlines()[0].split(".")
    value = json.loads(b64url_decode(payload, "payload"))
    entry = next(e for e in value["names"] if "sha256" in e)
    entry["sha256"] = hashlib.sha256(b"other bytes").hexdigest()
    changed = tmp_path / "changed.jws"
    changed.write_text(f"{head}.{b64url(json.dumps(value).encode())}.{signature}\n")
    status, output = _verify(location, str(changed))
    assert status == IntegrityError.exit_code and "signature\t" in output and "does not verify" in output

    # the same change, signed by another key: refused for the key, even with the change's key named it is
    # refused for the digest
    other = SigningKey.generate()
    from pdi.signing import manifest_payload, sign_manifest

    forged = sign_manifest(other, manifest_payload(value["series"], value["day"], value["names"],
                                                   after=value["after"], next_after=value["next"]))
    (tmp_path / "forged.jws").write_text(forged + "\n")
    status, output = _verify(location, str(tmp_path / "forged.jws"))
    assert status == 3 and "not one of the keys it is checked with" in output
    status, output = _verify(location, str(tmp_path / "forged.jws"), "--key", json.dumps(other.public.jwk()))
    assert status == 3 and f"manifest-digest\t{entry['name']}" in output

    # a blob's bytes changed under the catalog (one octet flipped): found by reading them
    flip_octet(location, hashlib.sha256(BYTES["one"]).hexdigest(), 4)
    status, output = _verify(location, str(good))
    assert status == 3 and f"altered\t{names['one']}" in output, output


def test_verify_signatures_needs_manifests(archive_dir: tuple[Path, dict, str]) -> None:
    location, _, _ = archive_dir
    status, output = _verify(location)
    assert status == 2 and "give files" in output


def test_verify_signatures_reads_a_resolvers_manifest_and_key_over_http(
        archive_dir: tuple[Path, dict, str]) -> None:
    """``pdi serve`` finds the key in the archive's directory; the check follows the pages by their ``next``."""
    location, _, _ = archive_dir
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}"
        status, output = _verify(location, "--key", f"{base}/api/keys", f"{base}/api/manifest?series={OPEN}&limit=1")
        assert status == 0, output
        assert "checked 4 manifests listing 4 names: 0 problems" in output  # the anonymous reader's four
        status, output = _verify(location, "--key", json.dumps(SigningKey.generate().public.jwk()),
                                 f"{base}/api/manifest?series={OPEN}")
        assert status == 3 and "signature\t" in output
        status, output = _verify(location, f"{base}/api/manifest?series=never.example.us")
        assert status == 4 and "HTTP 404" in output


def test_serve_tsa_timestamps_each_manifest_page(archive_dir: tuple[Path, dict, str],
                                                 tsa: tuple[str, Path, Path]) -> None:  # noqa: F811
    """``pdi serve --tsa URL``: /api/manifest.tsr is an RFC 3161 timestamp of the page /api/manifest answers (openssl
    ts -verify says so), asked once and kept; ``pdi verify --signatures URL --tsa-ca`` checks each page's."""
    import httpx

    location, _, _ = archive_dir
    url, ca, other = tsa
    with serving(location, "--tsa", url, "--workers", "1") as (_, port):  # one worker: one kept set of stamps
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(f"{base}/api/manifest?series={OPEN}&limit=2", timeout=30)
        stamp = httpx.get(f"{base}/api/manifest.tsr?series={OPEN}&limit=2", timeout=30)
        assert stamp.status_code == 200 and stamp.headers["content-type"] == "application/timestamp-reply"
        work = location.parent
        (work / "page.jws").write_bytes(page.content)
        (work / "page.tsr").write_bytes(stamp.content)
        checked = subprocess.run(["openssl", "ts", "-verify", "-in", str(work / "page.tsr"), "-data",
                                  str(work / "page.jws"), "-CAfile", str(ca)], capture_output=True, text=True,
                                 timeout=60)
        assert "Verification: OK" in checked.stdout, checked.stdout + checked.stderr
        again = httpx.get(f"{base}/api/manifest.tsr?series={OPEN}&limit=2", timeout=30)
        assert again.content == stamp.content  # kept: the TSA (whose every answer has its own serial) asked once

        manifest = f"{base}/api/manifest?series={OPEN}&limit=1"
        status, output = _verify(location, manifest, "--tsa-ca", str(ca))
        assert status == 0 and output.count(f"timestamped\t{base}/api/manifest?") == 4, output
        status, output = _verify(location, manifest, "--tsa-ca", str(other))
        assert status == 3 and "timestamp\t" in output and "does not verify" in output, output
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}"
        none = httpx.get(f"{base}/api/manifest.tsr?series={OPEN}", timeout=30)
        assert none.status_code == 404 and "pdi serve --tsa" in none.json()["detail"]
        status, output = _verify(location, f"{base}/api/manifest?series={OPEN}", "--tsa-ca", str(ca))
        assert status == 0 and "timestamped" not in output, output
        # said, not a problem: the resolver keeps no timestamps, so the CA had nothing to check
        assert f"/api/manifest.tsr?series={OPEN}: that resolver keeps none, pdi serve --tsa)" in output, output
        assert "--tsa-ca had nothing to check" in output, output


def _parts(answer: object) -> list[tuple[dict[str, str], bytes]]:
    """The parts of a POST /api/octets answer, read by the standard library's MIME parser (not pdi's)."""
    import email.parser
    import email.policy

    head = f"Content-Type: {answer.headers['content-type']}\r\n\r\n".encode()  # type: ignore[attr-defined]
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + answer.content)  # type: ignore[attr-defined]
    assert message.is_multipart() and not message.defects
    return [({k.lower(): str(v) for k, v in part.items()}, part.get_payload(decode=True))
            for part in message.iter_parts()]


def test_octets_of_many_names_in_one_answer_each_as_n2r_would(archive_dir: tuple[Path, dict, str]) -> None:
    location, names, secret = archive_dir
    client = _client(location)
    never = names["one"].replace("/1.text.1", "/99.text.1")
    asked = [names["one"], names["late"], never, names["gone"], names["embargoed"], names["private"],
             names["two"] + "#char=0,3", names["two"]]
    answer = client.post("/api/octets", json={"names": asked})
    assert answer.status_code == 200 and answer.headers["cache-control"].endswith("no-store")
    boundary = hashlib.sha256(json.dumps(asked).encode()).hexdigest()
    assert answer.headers["content-type"] == f"multipart/mixed; boundary={boundary}"
    parts = _parts(answer)
    assert [h["content-location"] for h, _ in parts] == asked
    for (head, body), name in zip(parts, asked, strict=True):
        assert int(head["content-length"]) == len(body)
        if name in (names["one"], names["late"], names["two"]):
            expected = BYTES[next(k for k in BYTES if names[k] == name)]
            assert body == expected and head["x-pdi-sha256"] == hashlib.sha256(expected).hexdigest()
            assert head["content-type"] == "text/plain"
        else:  # what N2R answers this reader, with its status
            n2r = client.get(f"/uri-res/N2R?{name.split('#')[0]}") if "#" not in name else None
            problem = json.loads(body)
            assert head["content-type"] == "application/problem+json"
            status = {never: 404, names["gone"]: 410, names["embargoed"]: 403, names["private"]: 403}.get(name, 400)
            assert problem["status"] == status and problem["detail"]
            if n2r is not None:
                # N2R's 404 says what the archive holds near the name after the same sentence (pdi.archive.nearest);
                # a mirror's bulk fetch has no use for that hint, and is not made to look for it
                said = n2r.json()["detail"]
                assert n2r.status_code == status and (said == problem["detail"] or (status == 404 and said.startswith(
                    problem["detail"] + "; "))), (said, problem["detail"])
    bearer = client.post("/api/octets", json={"names": [names["private"]]},
                         headers={"Authorization": f"Bearer {secret}"})
    assert _parts(bearer)[0][1] == b"closed minutes\n"


def test_octets_a_damaged_blob_cuts_the_answer(archive_dir: tuple[Path, dict, str]) -> None:
    location, names, _ = archive_dir
    flip_octet(location, hashlib.sha256(BYTES["late"]).hexdigest(), 2)
    client = _client(location)
    # the damaged chunk is never sent: the answer, begun, is cut short (Starlette's test client raises)
    with pytest.raises(RuntimeError, match="response already started") as raised:
        client.post("/api/octets", json={"names": [names["one"], names["late"], names["two"]]})
    assert isinstance(raised.value.__cause__, IntegrityError)


@pytest.mark.parametrize(("body", "status", "words"), [
    (b'{"names": []}', 400, "1 to 1000 names, not 0"),
    (json.dumps({"names": ["urn:pdi://x.us/2026/11/24/1.text.1"] * 1001}).encode(), 400, "not 1001"),
    (b'{"names": "urn:pdi://x.us/2026/11/24/1.text.1"}', 400, '{"names": [versioned names]}'),
    (b"names=1", 400, "not JSON"),
    (b'{"names": ["' + b"x" * (1 << 20) + b'"]}', 413, "more than 1048576 octets"),
])
def test_octets_a_body_that_is_wrong_is_a_problem_naming_what(
    archive_dir: tuple[Path, dict, str], body: bytes, status: int, words: str,
) -> None:
    answer = _client(archive_dir[0]).post("/api/octets", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status and answer.headers["content-type"] == "application/problem+json"
    assert words in answer.json()["detail"]


def test_a_kept_timestamp_is_of_the_page_as_its_rules_are_now(archive_dir: tuple[Path, dict, str],
                                                               tsa: tuple[str, Path, Path]) -> None:  # noqa: F811
    """A page signs how many times its series' rules changed (``rules``): a change makes it a new page, whose
    timestamp is asked of the TSA and is of its octets (openssl ts -verify); the access a series has already,
    given again, changes no rule, so the page and its kept timestamp stay the same."""
    import httpx

    location, names, _ = archive_dir
    url, ca, _ = tsa
    with serving(location, "--tsa", url, "--workers", "1") as (_, port):
        base = f"http://127.0.0.1:{port}"

        def page_and_stamp() -> tuple[bytes, bytes]:
            page = httpx.get(f"{base}/api/manifest?series={OPEN}", timeout=30).content
            stamp = httpx.get(f"{base}/api/manifest.tsr?series={OPEN}", timeout=30).content
            (location.parent / "page.jws").write_bytes(page)
            (location.parent / "page.tsr").write_bytes(stamp)
            checked = subprocess.run(["openssl", "ts", "-verify", "-in", str(location.parent / "page.tsr"), "-data",
                                      str(location.parent / "page.jws"), "-CAfile", str(ca)], capture_output=True,
                                     text=True, timeout=60)
            assert "Verification: OK" in checked.stdout, checked.stdout + checked.stderr
            return page, stamp

        first = page_and_stamp()
        assert _payload(first[0].decode())["rules"] == 0  # registered, deposited in: no rule changed
        assert CliRunner().invoke(main, ["series", "access", OPEN, "public", "--archive", str(location)]).exit_code == 0
        assert page_and_stamp() == first  # public already: no change, the same page, the timestamp kept
        with Archive.open(location) as archive:  # a name an anonymous reader is not shown: embargoed whole too
            archive.embargo(names["embargoed"].rsplit(".", 2)[0], "2099-01-01")
        changed = page_and_stamp()
        assert changed[0] != first[0] and changed[1] != first[1]  # a new page (its rules alone), a new timestamp
        said, before = _payload(changed[0].decode()), _payload(first[0].decode())
        assert said["rules"] == 1 and said["names"] == before["names"]
