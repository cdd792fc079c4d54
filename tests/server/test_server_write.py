"""The write API: deposits over HTTP behind bearer tokens, idempotent retries, audit, and nothing lost on failure.

Issue 15. What the tests hold the API to comes from the issue and the
specifications it names: RFC 6750 §3 (a ``401`` carries a ``Bearer``
challenge, with ``error="invalid_token"`` for a token that is not good),
RFC 9110 §15.3.2 (``201 Created`` with ``Location``), and
draft-ietf-httpapi-idempotency-key-header (a retry with the same key is
answered as the first request was; the same key with another body is
``422``). Every byte comparison is against ``hashlib`` over what the test
sent; every "nothing changed" is a snapshot of the whole archive.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest
from server_helpers import serving
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.errors import FormatCheckError
from pdi.server import create_app

S = "library.example.us"
OTHER = "other.example.us"


class Writable:
    def __init__(self, location: str) -> None:
        self.location = location
        self.archive = Archive.init(location)
        self.archive.add_series(S)
        self.archive.add_series(OTHER)
        self.archive.add_series(f"maps.{S}")
        _, self.deposit = self.archive.add_token("depositor", role="deposit", series=[S])
        _, self.curate = self.archive.add_token("curator", role="curate", series=[S])
        _, self.admin = self.archive.add_token("admin", role="admin")
        self.client = TestClient(create_app(location, archive=self.archive))

    @staticmethod
    def bearer(token: str, **more: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", **more}


@pytest.fixture
def writable(location: str) -> Iterator[Writable]:
    made = Writable(location)
    try:
        yield made
    finally:
        made.archive.close()


def snapshot(archive: Archive) -> object:
    store = archive.store
    return (
        list(store.iter_representations()),
        store.assertions(),
        sorted(store.blob_names()),
        [(e.action, e.subject) for e in store.audit_log()],
    )


def test_without_a_live_token_every_write_is_401_with_a_bearer_challenge(writable: Writable) -> None:
    client = writable.client
    before = snapshot(writable.archive)
    url = f"/api/deposit?series={S}"
    body = b"some text\n"
    answer = client.post(url, content=body, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == 'Bearer realm="pdi"'
    assert answer.headers["content-type"] == "application/problem+json"
    # RFC 6750 §3: another scheme is as if no token were given (no error code); Bearer without a token is
    # malformed, 400 with invalid_request (§3.1)
    answer = client.post(url, content=body, headers={"Authorization": f"Basic {writable.deposit}"})
    assert answer.status_code == 401 and answer.headers["www-authenticate"] == 'Bearer realm="pdi"'
    assert "not Basic" in answer.json()["detail"]
    bare = "pdi_" + "B" * 43  # a token sent without its scheme: refused, and never echoed back
    answer = client.post(url, content=body, headers={"Authorization": bare})
    assert answer.status_code == 401 and "pdi_" not in answer.text and "another scheme" in answer.json()["detail"]
    answer = client.post(url, content=body, headers={"Authorization": "Bearer "})
    assert answer.status_code == 400 and answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="invalid_request"'
    for read in ("/api/series", f"/uri-res/N2R?urn:pdi://{S}/2026/11/26/1.text.1"):  # the readers' check says the same
        assert client.get(read, headers={"Authorization": "Basic eDp5"}).headers["www-authenticate"] == 'Bearer realm="pdi"'
        assert client.get(read, headers={"Authorization": "Bearer  "}).status_code == 400
    # a token of the right shape that was never made
    answer = client.post(url, content=body, headers=Writable.bearer("pdi_" + "A" * 43))
    assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
    writable.archive.revoke_token("depositor")
    answer = client.post(url, content=body, headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"}))
    assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
    after = snapshot(writable.archive)
    assert after[:3] == before[:3]  # only the revocation was logged
    assert after[3] == [*before[3], ("token-revoke", "token:depositor")]  # type: ignore[misc]


def test_the_location_of_a_deposit_under_a_foreign_id_with_escapes_names_it_and_no_other(writable: Writable) -> None:
    """Foreign ids ``x#y`` and ``x%23y`` (sent %-escaped in the query) are two names, ``…/x%23y.text.1`` and
    ``…/x%2523y.text.1``; each deposit's ``Location`` must fetch its own bytes. Written raw, the second's named
    the first's document (N2R reads ``%23`` in its query as ``#``), and the first's a fragment with no format."""
    bodies = {"x%23y": b"the first text\n", "x%2523y": b"the second text\n"}
    for escaped, body in bodies.items():
        answer = writable.client.post(
            f"/api/deposit?series={S}&format=text&id={escaped}", content=body,
            headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"}),
        )
        assert answer.status_code == 201, answer.text
        fetched = writable.client.get(answer.headers["location"])
        assert fetched.status_code == 200 and fetched.content == body, (answer.headers["location"], fetched.text)
        assert fetched.headers["x-pdi-sha256"] == hashlib.sha256(body).hexdigest()


def test_a_deposit_is_201_with_its_name_the_exact_bytes_and_an_audit_entry(writable: Writable) -> None:
    body = b"one\ntwo\r\nthree\rfour"  # mixed line endings: kept exactly
    answer = writable.client.post(
        f"/api/deposit?series={S}&format=text", content=body,
        headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"}),
    )
    assert answer.status_code == 201, answer.text
    name = answer.json()["pdi"]
    today = writable.archive.now().date()
    assert name == f"urn:pdi://{S}/{today:%Y/%m/%d}/1.text.1"
    assert answer.json() == {"pdi": name, "names": [name], "version": 1, "unchanged": False}
    assert answer.headers["location"] == f"/uri-res/N2R?{name}"
    fetched = writable.client.get(answer.headers["location"])
    assert hashlib.sha256(fetched.content).hexdigest() == hashlib.sha256(body).hexdigest()
    (entry,) = [e for e in writable.archive.audit() if e.action == "deposit"]
    assert (entry.who, entry.subject, entry.address) == ("token:depositor", name.rsplit(".", 2)[0], "testclient")
    assert entry.detail == name  # the exact versioned name written, not only its document and format


def test_the_format_comes_from_the_content_type_and_a_foreign_id_is_kept(writable: Writable) -> None:
    answer = writable.client.post(
        f"/api/deposit?series={S}&id=report-7", content=b"<!DOCTYPE html><title>t</title><p>x",
        headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/html; charset=utf-8"}),
    )
    assert answer.status_code == 201, answer.text
    name = answer.json()["pdi"]
    assert name.endswith("/report-7.html.1")
    assert writable.client.get(f"/uri-res/N2C?{name}").json()["charset"].lower() == "utf-8"  # RFC 2978: any case


def test_out_of_scope_or_too_small_a_role_is_403_and_changes_nothing(writable: Writable) -> None:
    before = snapshot(writable.archive)
    text = {"Content-Type": "text/plain"}
    answer = writable.client.post(f"/api/deposit?series={OTHER}", content=b"x\n",
                                  headers=Writable.bearer(writable.deposit, **text))
    assert answer.status_code == 403
    assert answer.json()["detail"] == f"token 'depositor' may write {S}, not series {OTHER}"
    # RFC 6750 §3.1: a token that is live but does not cover the request is insufficient_scope
    assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="insufficient_scope"'

    name = str(writable.archive.add(S, b"by hand\n", format="text"))
    before = snapshot(writable.archive)
    answer = writable.client.post(f"/api/statements?pdi={name}&key=title", content=b"A title",
                                  headers=Writable.bearer(writable.deposit))
    assert answer.status_code == 403 and "needs curate" in answer.json()["detail"]
    assert writable.client.get("/api/audit", headers=Writable.bearer(writable.curate)).status_code == 403
    assert snapshot(writable.archive) == before
    # a subseries is in its parent's scope
    answer = writable.client.post(f"/api/deposit?series=maps.{S}", content=b"a map's note\n",
                                  headers=Writable.bearer(writable.deposit, **text))
    assert answer.status_code == 201


def test_a_curator_makes_statements_and_an_admin_reads_the_audit_log(writable: Writable) -> None:
    name = str(writable.archive.add(S, b"by hand\n", format="text"))
    answer = writable.client.post(f"/api/statements?pdi={name}&key=title", content="Ünïcode title".encode(),
                                  headers=Writable.bearer(writable.curate))
    assert answer.status_code == 201, answer.text
    meta = writable.client.get("/api/meta", params={"pdi": name}).json()
    assert {"key": "title", "value": "Ünïcode title", "who": "token:curator"} in [
        {k: h[k] for k in ("key", "value", "who")} for h in meta["history"]
    ]
    log = writable.client.get("/api/audit", headers=Writable.bearer(writable.admin))
    assert log.status_code == 200
    assert [(e["who"], e["action"]) for e in log.json()][-1] == ("token:curator", "statement")


def test_an_admin_of_one_series_does_not_read_the_whole_archives_audit_log(writable: Writable) -> None:
    """The log names every series' documents, withdrawals and their reasons, tokens and addresses: an admin token
    limited to some series reads none of it (not even its own series' entries, which the log does not tell apart)."""
    writable.archive.set_series_access(OTHER, "hidden")
    sealed = writable.archive.add(OTHER, b"sealed\n", format="text")
    writable.archive.withdraw(str(sealed), reason="sealed by order")
    _, scoped = writable.archive.add_token("series-admin", role="admin", series=[S])
    answer = writable.client.get("/api/audit", headers=Writable.bearer(scoped))
    assert answer.status_code == 403
    assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="insufficient_scope"'
    assert "sealed" not in answer.text and OTHER not in answer.text
    whole = writable.client.get("/api/audit", headers=Writable.bearer(writable.admin))
    assert whole.status_code == 200 and any(e["subject"].startswith(f"urn:pdi://{OTHER}/") for e in whole.json())


def test_a_retry_with_the_same_key_mints_once_and_the_key_with_another_body_is_422(writable: Writable) -> None:
    headers = Writable.bearer(writable.deposit, **{"Content-Type": "text/plain", "Idempotency-Key": "batch-1/item-9"})
    url = f"/api/deposit?series={S}&format=text"
    first = writable.client.post(url, content=b"the same body\n", headers=headers)
    again = writable.client.post(url, content=b"the same body\n", headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true" and "idempotent-replayed" not in first.headers
    before = snapshot(writable.archive)
    other = writable.client.post(url, content=b"another body\n", headers=headers)
    assert other.status_code == 422 and "Idempotency-Key" in other.json()["detail"]
    other = writable.client.post(url + "&charset=utf-8", content=b"the same body\n", headers=headers)
    assert other.status_code == 422
    assert snapshot(writable.archive) == before
    assert writable.archive.ls(series=S) == [writable.archive.resolve(first.json()["pdi"]).pdi]
    # the key is the token's own: another token's same key is another request
    _, second = writable.archive.add_token("second", role="deposit", series=[S])
    mine = writable.client.post(url, content=b"the same body\n", headers={**headers, **Writable.bearer(second)})
    assert mine.status_code == 201 and mine.json()["pdi"] != first.json()["pdi"]


def test_a_refused_body_is_a_problem_and_leaves_the_archive_as_it_was(writable: Writable) -> None:
    before = snapshot(writable.archive)
    answer = writable.client.post(
        f"/api/deposit?series={S}&format=text&charset=utf-8", content=b"caf\xe9 is latin-1\n",
        headers=Writable.bearer(writable.deposit),
    )
    # the body does not parse in its charset: a syntax error naming where (octet 3, the 0xE9)
    assert answer.status_code == 400
    assert "not valid utf-8" in answer.json()["detail"] and "offset 3" in answer.json()["detail"]
    assert snapshot(writable.archive) == before


PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"  # a PNG's signature and first chunk's head (RFC 2083 §3.1, §3.2)


def test_a_refused_format_or_charset_is_told_in_the_api_words_not_the_command_line_flags(writable: Writable) -> None:
    # the content checks' advice: a client of the API declares a format or a charset; it has no --format or --force
    before = snapshot(writable.archive)
    answer = writable.client.post(f"/api/deposit?series={S}", content=PNG_HEAD,
                                  headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"}))
    detail = answer.json()["detail"]
    assert answer.status_code == 422 and answer.json()["title"] == "format check failed"
    assert "image/png" in detail and "declare the format png" in detail and "--" not in detail.replace("pdi add --force", "")
    # "Grüße" in UTF-8 declared ISO-8859-1: the first multi-byte character, U+00FC, is C3 BC at octet 2
    answer = writable.client.post(f"/api/deposit?series={S}", content="Grüße".encode(), headers=Writable.bearer(
        writable.deposit, **{"Content-Type": "text/plain; charset=iso-8859-1"}))
    detail = answer.json()["detail"]
    assert answer.status_code == 422 and answer.json()["title"] == "charset check failed"
    assert "C3 BC at byte 2" in detail and "declare the charset utf-8" in detail and "--charset" not in detail
    # in a batch, the item is named once and the advice said once
    answer = _batch(writable, [("ok.txt", b"fine\n", "text/plain"), ("pic.txt", PNG_HEAD, "text/plain")])
    detail = answer.json()["detail"]
    assert answer.status_code == 422 and detail.startswith("item 1: pic.txt: the content is image/png")
    assert detail.count("declare the format png") == 1 and detail.count("deposits it as declared") == 1
    assert snapshot(writable.archive) == before
    # the command line's words stay the command line's
    with pytest.raises(FormatCheckError) as refused:
        writable.archive.add(S, PNG_HEAD, format="text")
    assert str(refused.value).endswith("give --format png, or --force to deposit it as declared")


def test_a_parameter_a_write_does_not_take_is_refused_and_nothing_is_written(writable: Writable) -> None:
    # a misspelt format= would otherwise be left unread, and a name minted for good in the wrong format
    name = str(writable.archive.add(S, b"first\n", format="text"))
    before = snapshot(writable.archive)
    admin = Writable.bearer(writable.admin, **{"Content-Type": "text/plain"})
    for path in (f"/api/deposit?series={S}&fromat=html", f"/api/version?pdi={name.rsplit('.', 2)[0]}&charst=utf-8",
                 f"/api/format?pdi={name}&format=html&embargo=2030-01-01", f"/api/statements?pdi={name}&key=dc:title&x=1",
                 f"/api/withdraw?pdi={name}&pruge=true", f"/api/embargo?pdi={name}&untill=2030-01-01",
                 f"/api/batch?series={S}&serie={S}", f"/api/mirrors?series={S}&base_url=http://a.example.us/&x=1"):
        method = "DELETE" if path.startswith("/api/mirrors") else "POST"
        answer = writable.client.request(method, path, content=b"<p>x</p>", headers=admin)
        given = path.rsplit("&", 1)[1].split("=")[0]
        assert answer.status_code == 400, (path, answer.status_code, answer.text)
        assert f"{given}= is not one this route takes" in answer.json()["detail"], path
    assert writable.client.get("/api/audit?after=0&limt=5", headers=admin).status_code == 400
    assert snapshot(writable.archive) == before


def test_the_parameters_a_write_takes_are_the_ones_its_description_lists(writable: Writable) -> None:
    from pdi.server.write.api import TAKES

    described = writable.client.get("/openapi.json").json()["paths"]
    for path, keys in TAKES.items():
        (operation,) = described[path].values()
        assert {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"} == keys, path


def test_a_statement_is_read_in_the_charset_its_content_type_names(writable: Writable) -> None:
    # RFC 2046 §4.1.2: a text body's charset is its Content-Type's parameter; without one, UTF-8
    name = str(writable.archive.add(S, b"by hand\n", format="text"))
    curator = writable.curate
    said = {"latin-1": ("text/plain; charset=iso-8859-1", "Café".encode("iso-8859-1")),
            "utf-8": ("text/plain", "Café".encode())}
    for key, (kind, octets) in said.items():
        answer = writable.client.post(f"/api/statements?pdi={name}&key=note.{key}", content=octets,
                                      headers=Writable.bearer(curator, **{"Content-Type": kind}))
        assert answer.status_code == 201 and answer.json()["value"] == "Café", answer.text
    refused = writable.client.post(f"/api/statements?pdi={name}&key=note", content="Café".encode("iso-8859-1"),
                                   headers=Writable.bearer(curator, **{"Content-Type": "text/plain"}))
    assert refused.status_code == 400 and "must be text in utf-8: octet 3 is not" in refused.json()["detail"]
    unknown = writable.client.post(f"/api/statements?pdi={name}&key=note", content=b"x",
                                   headers=Writable.bearer(curator, **{"Content-Type": "text/plain; charset=klingon"}))
    assert unknown.status_code == 415 and "klingon" in unknown.json()["detail"]


def test_retries_sent_at_once_with_one_key_mint_one_name(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("racer", role="deposit", series=[S])
    headers = {**Writable.bearer(token), "Content-Type": "text/plain", "Idempotency-Key": "only-once"}
    with serving(location, "--workers", "2") as (_, port):
        url = f"http://127.0.0.1:{port}/api/deposit?series={S}&format=text"
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(
                lambda _: httpx.post(url, content=b"sent eight times\n", headers=headers, timeout=60), range(8)
            ))
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["pdi"] for a in answers}) == 1
    assert sum(a.headers.get("idempotent-replayed") == "true" for a in answers) == 7
    with Archive.open(location) as archive:
        assert len(archive.ls(series=S)) == 1


def test_a_client_that_goes_away_mid_body_leaves_nothing(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("flaky", role="deposit", series=[S])
        before = snapshot(archive)
    with serving(location) as (_, port):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                f"POST /api/deposit?series={S}&format=octet-stream HTTP/1.1\r\nHost: x\r\n"
                f"Authorization: Bearer {token}\r\nContent-Length: {8 << 20}\r\n\r\n".encode()
                + os.urandom(3 << 20)
            )
            # the body is being staged as it comes (a temporary blob file grows) when the client goes
            deadline = time.monotonic() + 20
            while not [p for p in (location / "tmp").iterdir() if p.stat().st_size > 0]:
                assert time.monotonic() < deadline, "the body was not being staged"
                time.sleep(0.05)
        # the server is still answering, and the half body is nowhere
        deadline = time.monotonic() + 20
        while True:
            with Archive.open(location) as archive:
                if not list((location / "tmp").iterdir()):
                    assert snapshot(archive) == before
                    break
            assert time.monotonic() < deadline, "the staged half body was not removed"
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/api/series").status_code == 200


def test_a_large_upload_streams_through_in_bounded_memory(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("bulk", role="deposit", series=[S])
    size = 384 << 20
    block = hashlib.sha256(b"seed").digest() * (1 << 15)  # 1 MiB of a repeating pattern
    expected = hashlib.sha256()
    for _ in range(size // len(block)):
        expected.update(block)

    def body() -> Iterator[bytes]:
        for _ in range(size // len(block)):
            yield block

    with serving(location) as (process, port):
        answer = httpx.post(
            f"http://127.0.0.1:{port}/api/deposit?series={S}&format=octet-stream", content=body(),
            headers={**Writable.bearer(token), "Content-Type": "application/octet-stream"}, timeout=300,
        )
        status = Path(f"/proc/{process.pid}/status").read_text()
    assert answer.status_code == 201, answer.text
    peak_kib = int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
    assert peak_kib < 200 * 1024, f"pdi serve peaked at {peak_kib // 1024} MiB taking {size >> 20} MiB"
    with Archive.open(location) as archive, archive.open_octets(answer.json()["pdi"]) as opened:
        got = hashlib.sha256()
        for piece in opened.reader.chunks(0, opened.size):
            got.update(piece)
    assert got.hexdigest() == expected.hexdigest()


def test_token_add_prints_the_token_alone_and_the_catalog_keeps_only_its_digest(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
    pdi = [sys.executable, "-m", "pdi"]
    made = subprocess.run([*pdi, "token", "add", "ci", "--series", S, "--role", "deposit", "--archive", str(location)],
                          capture_output=True, text=True, check=True)
    lines = made.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pdi_") and len(lines[0]) == 47
    secret = lines[0]
    listed = subprocess.run([*pdi, "token", "list", "--json", "--archive", str(location)],
                            capture_output=True, text=True, check=True).stdout
    assert secret not in listed and '"role": "deposit"' in listed
    with sqlite3.connect(location / "catalog.sqlite") as db:
        (stored,) = db.execute("SELECT digest FROM tokens WHERE name = 'ci'").fetchone()
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.encode() not in (location / "catalog.sqlite").read_bytes()
    with Archive.open(location) as archive:
        assert archive.authenticate(secret) is not None
    subprocess.run([*pdi, "token", "revoke", "ci", "--archive", str(location)], check=True, capture_output=True)
    with Archive.open(location) as archive:
        assert archive.authenticate(secret) is None
    again = subprocess.run([*pdi, "token", "add", "ci", "--role", "admin", "--archive", str(location)],
                           capture_output=True, text=True)
    assert again.returncode == 5 and "never reused" in again.stderr


def _batch(writable: Writable, files: list[tuple[str, bytes, str]], manifest: object = None, *,
           token: str | None = None, query: str = "", **headers: str) -> httpx.Response:
    """POST /api/batch with ``files`` (name, octets, media type) as multipart/form-data, as httpx encodes it."""
    data = {} if manifest is None else {"manifest": json.dumps(manifest)}
    return writable.client.post(
        f"/api/batch?series={S}{query}", data=data,
        files=[("item", (name, octets, media_type)) for name, octets, media_type in files],
        headers=Writable.bearer(writable.deposit if token is None else token, **headers),
    )


def test_a_batch_mints_every_item_in_order_with_its_exact_bytes(writable: Writable) -> None:
    files = [("a.txt", b"first\r\nitem\n", "text/plain"),
             ("b.html", b"<!DOCTYPE html><title>b</title><p>second", "text/html; charset=utf-8"),
             ("c.bin", bytes(range(256)), "application/octet-stream")]
    answer = _batch(writable, files, manifest=[{}, {"id": "page-b"}, {}])
    assert answer.status_code == 201, answer.text
    items = answer.json()["items"]
    day = f"{writable.archive.now().date():%Y/%m/%d}"
    assert [i["pdi"] for i in items] == [
        f"urn:pdi://{S}/{day}/1.text.1", f"urn:pdi://{S}/{day}/page-b.html.1", f"urn:pdi://{S}/{day}/2.octet-stream.1",
    ]
    for item, (_, octets, _) in zip(items, files, strict=True):
        assert writable.client.get(f"/uri-res/N2R?{item['pdi']}").content == octets
    assert [(e.subject, e.detail) for e in writable.archive.audit() if e.action == "deposit"] == [
        (i["pdi"].rsplit(".", 2)[0], i["pdi"]) for i in items
    ]


def test_a_batch_embargoed_from_the_start_needs_a_curator_and_hides_every_item(writable: Writable) -> None:
    files = [("a.txt", b"sealed one\n", "text/plain"), ("b.txt", b"sealed two\n", "text/plain")]
    before = snapshot(writable.archive)
    refused = _batch(writable, files, query="&embargo=2099-01-01")  # a depositor may not embargo
    assert refused.status_code == 403 and "curate" in refused.json()["detail"]
    assert snapshot(writable.archive) == before
    bad = _batch(writable, files, token=writable.curate, query="&embargo=someday")
    assert bad.status_code == 400 and "someday" in bad.json()["detail"]
    assert snapshot(writable.archive) == before
    made = _batch(writable, files, token=writable.curate, query="&embargo=2099-01-01")
    assert made.status_code == 201, made.text
    for item, (_, octets, _) in zip(made.json()["items"], files, strict=True):
        hidden = writable.client.get(f"/uri-res/N2R?{item['pdi']}")
        assert hidden.status_code == 403 and "embargoed until 2099-01-01" in hidden.json()["detail"]
        assert "www-authenticate" not in hidden.headers  # no token was given: no token's scope to speak of
        shown = writable.client.get(f"/uri-res/N2R?{item['pdi']}", headers=Writable.bearer(writable.curate))
        assert shown.status_code == 200 and shown.content == octets


def test_one_refused_item_refuses_the_batch_naming_it_and_nothing_is_kept(writable: Writable) -> None:
    writable.archive.add(S, b"taken\n", format="text", foreign_id="taken-id")
    before = snapshot(writable.archive)
    good = ("ok.txt", b"a good item\n", "text/plain")
    bad_text = ("bad.txt", b"caf\xe9\n", "text/plain; charset=utf-8")
    answer = _batch(writable, [good, good, bad_text])
    assert answer.status_code == 400 and answer.json()["detail"].startswith("item 2: ")
    answer = _batch(writable, [good, ("again.txt", b"other\n", "text/plain")], manifest=[{}, {"id": "taken-id"}])
    assert answer.status_code == 409 and answer.json()["detail"].startswith("item 1: ")
    answer = _batch(writable, [good, good], manifest=[{"id": "twice"}, {"id": "twice"}])
    assert answer.status_code == 409 and "twice" in answer.json()["detail"]
    answer = _batch(writable, [good, good], manifest=[{}])
    assert answer.status_code == 400 and answer.json()["detail"].startswith("the manifest lists 1 item, the body has 2 files ")
    answer = _batch(writable, [good], manifest=[{"format": "text", "colour": "red"}])
    assert answer.status_code == 400 and answer.json()["detail"].startswith("the manifest is an array")
    for manifest, said in (("[" * 100_000 + "]" * 100_000, "the manifest is not JSON pdi reads: it is nested more than 100 levels deep"),
                           ("[{]", "the manifest is not JSON: ")):  # a stranger's field: 400, never a 500
        answer = writable.client.post(f"/api/batch?series={S}", data={"manifest": manifest},
                                      files=[("item", good)], headers=Writable.bearer(writable.deposit))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(said), answer.text
    assert snapshot(writable.archive) == before


def test_a_retried_batch_with_its_key_mints_nothing_more(writable: Writable) -> None:
    files = [("a.txt", b"one\n", "text/plain"), ("b.txt", b"two\n", "text/plain")]
    first = _batch(writable, files, **{"Idempotency-Key": "nightly-2026-11-23"})
    again = _batch(writable, files, **{"Idempotency-Key": "nightly-2026-11-23"})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert len(writable.archive.ls(series=S)) == 2
    other = _batch(writable, files[:1], **{"Idempotency-Key": "nightly-2026-11-23"})
    assert other.status_code == 422


def test_a_batch_item_held_already_under_its_id_is_answered_unchanged_with_its_name(writable: Writable) -> None:
    # as a deposit of the same octets under the same id answers (200, "unchanged": true, the name holding them), and
    # as `pdi add x.mbox` answers such an item of its batch: nothing is stored for it, the other items are minted
    held = b"kept as it was\n"
    writable.archive.add(S, held, format="text", foreign_id="held-id")
    day = f"{writable.archive.now().date():%Y/%m/%d}"
    name, new = f"urn:pdi://{S}/{day}/held-id.text.1", f"urn:pdi://{S}/{day}/1.text.1"
    before = snapshot(writable.archive)
    alone = _batch(writable, [("held.txt", held, "text/plain")], manifest=[{"id": "held-id"}])
    assert alone.status_code == 200, alone.text  # every item held: nothing was created
    assert alone.json() == {"items": [{"pdi": name, "names": [name], "version": 1, "unchanged": True}]}
    single = writable.client.post(f"/api/deposit?series={S}&id=held-id", content=held,
                                  headers=Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"}))
    assert single.status_code == 200 and single.json() == alone.json()["items"][0]
    assert snapshot(writable.archive) == before
    # other octets under the held id are still refused, naming the item, and nothing is minted
    refused = _batch(writable, [("new.txt", b"a new one\n", "text/plain"), ("held.txt", b"other\n", "text/plain")],
                     manifest=[{}, {"id": "held-id"}])
    assert refused.status_code == 409 and refused.json()["detail"].startswith("item 1: "), refused.text
    assert snapshot(writable.archive) == before
    # beside a new item: 201, the new one minted and the held one named; a retry under its key is that answer again
    files = [("new.txt", b"a new one\n", "text/plain"), ("held.txt", held, "text/plain")]
    key = {"Idempotency-Key": "held-2026-11-28"}
    mixed = _batch(writable, files, manifest=[{}, {"id": "held-id"}], **key)
    assert mixed.status_code == 201, mixed.text
    assert mixed.json() == {"items": [{"pdi": new, "names": [new], "version": 1, "unchanged": False},
                                      {"pdi": name, "names": [name], "version": 1, "unchanged": True}]}
    assert writable.client.get(f"/uri-res/N2R?{new}").content == b"a new one\n"
    assert writable.client.get(f"/uri-res/N2R?{name}").content == held
    after = snapshot(writable.archive)
    again = _batch(writable, files, manifest=[{}, {"id": "held-id"}], **key)
    assert again.status_code == 201 and again.json() == mixed.json() and again.headers["idempotent-replayed"] == "true"
    assert snapshot(writable.archive) == after
    # each answer is one the OpenAPI description gives for its status
    described = writable.client.get("/openapi.json").json()["paths"]["/api/batch"]["post"]["responses"]
    for answer in (alone, mixed, again):
        schema = described[str(answer.status_code)]["content"]["application/json"]["schema"]
        jsonschema.validate(answer.json(), schema)
        assert schema["properties"]["items"]["items"]["required"] == ["pdi", "names", "version", "unchanged"]


def test_a_batch_under_a_used_key_with_other_ids_in_its_manifest_is_422_not_the_first_answer(
        writable: Writable) -> None:
    # the manifest is part of the body: the same files under other names is another request (the draft: 422)
    files = [("a.txt", b"one\n", "text/plain"), ("b.txt", b"two\n", "text/plain")]
    key = {"Idempotency-Key": "ids-2026-11-27"}
    first = _batch(writable, files, manifest=[{"id": "case-1"}, {"id": "case-2"}], **key)
    assert first.status_code == 201, first.text
    before = snapshot(writable.archive)
    for manifest in ([{"id": "case-3"}, {"id": "case-4"}], [{"id": "case-1"}, {}], None):
        other = _batch(writable, files, manifest=manifest, **key)
        assert other.status_code == 422, (manifest, other.text)
        assert "idempotent-replayed" not in other.headers
    again = _batch(writable, files, manifest=[{"id": "case-1"}, {"id": "case-2"}], **key)
    assert again.status_code == 201 and again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert snapshot(writable.archive) == before


def _form(*parts: tuple[str, str | None, bytes], boundary: str = "b0undary") -> bytes:
    """A multipart/form-data body (RFC 7578) of parts (name, filename or None for a field, octets), written by hand."""
    out = b""
    for name, filename, octets in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        kind = "Content-Type: text/plain\r\n" if filename is not None else ""
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n{kind}\r\n".encode() + octets + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


@pytest.mark.parametrize(("parts", "said"), [
    # an item sent as a field (curl -F 'item=<b.txt' sends the file's octets with no filename): one item fewer
    ([("item", "a.txt", b"first\n"), ("item", None, b"second\n")],
     "part 2 (item) is a form field, not a file"),
    ([("note", None, b"for the record"), ("item", "a.txt", b"first\n")], "part 1 (note) is a form field, not a file"),
    # RFC 7578 §4.3: a field sent twice holds two values; the batch read the last manifest alone
    ([("manifest", None, b'[{"format": "html"}]'), ("manifest", None, b'[{}]'), ("item", "a.txt", b"first\n")],
     "the manifest is given 2 times (parts 1 and 2)"),
])
def test_a_batch_part_it_would_not_deposit_refuses_the_batch_naming_it(
        writable: Writable, parts: list[tuple[str, str | None, bytes]], said: str) -> None:
    before = snapshot(writable.archive)
    answer = writable.client.post(
        f"/api/batch?series={S}", content=_form(*parts),
        headers=Writable.bearer(writable.deposit, **{"Content-Type": "multipart/form-data; boundary=b0undary"}))
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"].startswith(said), answer.text
    assert snapshot(writable.archive) == before


def test_a_format_added_again_with_the_same_bytes_is_200_unchanged_and_creates_nothing(writable: Writable) -> None:
    client, token = writable.client, Writable.bearer(writable.deposit)
    name = client.post(f"/api/deposit?series={S}&format=text", content=b"plain\n", headers=token).json()["pdi"]
    html = b"<!DOCTYPE html><title>t</title><p>plain"
    first = client.post(f"/api/format?pdi={name}&format=html", content=html, headers=token)
    assert first.status_code == 201 and first.json()["unchanged"] is False
    before = snapshot(writable.archive)[:3]  # every representation, statement and blob (the audit says "unchanged")
    again = client.post(f"/api/format?pdi={name}&format=html", content=html, headers=token)
    # RFC 9110 §15.3.2: 201 is for a resource created; the description's 200 is "nothing new stored"
    assert again.status_code == 200, again.text
    assert again.json() == {**first.json(), "unchanged": True}
    assert again.headers["location"] == first.headers["location"]
    assert snapshot(writable.archive)[:3] == before
    other = client.post(f"/api/format?pdi={name}&format=html", content=html + b"!", headers=token)
    assert other.status_code == 409 and snapshot(writable.archive)[:3] == before


def test_a_format_for_a_generic_name_is_refused_400_not_added_to_version_one(writable: Writable) -> None:
    # docs/reference/write-api.md: POST /api/format?pdi=VERSIONED; a generic name took version 1, unsaid
    client, token = writable.client, Writable.bearer(writable.deposit)
    name = client.post(f"/api/deposit?series={S}&format=text", content=b"one\n", headers=token).json()["pdi"]
    generic = name.rsplit(".", 2)[0]
    made = client.post(f"/api/version?pdi={generic}&format=text", content=b"two\n", headers=token)
    assert made.status_code == 201, made.text
    before = snapshot(writable.archive)
    refused = client.post(f"/api/format?pdi={generic}&format=html", content=b"<p>two", headers=token)
    assert refused.status_code == 400 and "names no version" in refused.json()["detail"], refused.text
    assert snapshot(writable.archive) == before


def test_a_form_sent_as_one_document_is_refused_unless_its_format_is_said(writable: Writable) -> None:
    # curl -F file=@a.txt …/api/deposit sends a multipart/form-data envelope (RFC 7578): minted as it stood,
    # the document's name would hold the envelope, boundary and all, for good
    client, token = writable.client, Writable.bearer(writable.deposit)
    before = snapshot(writable.archive)
    for route in (f"/api/deposit?series={S}", "/api/version?pdi=" + str(writable.archive.add(S, b"v1\n", format="text")).rsplit(".", 2)[0]):
        before = snapshot(writable.archive)
        sent = client.post(route, files=[("file", ("a.txt", b"a document\n", "text/plain"))], headers=token)
        assert sent.status_code == 415, sent.text
        detail = sent.json()["detail"]
        assert "multipart/form-data" in detail and "/api/batch" in detail and "format=form-data" in detail
        assert snapshot(writable.archive) == before
    said = client.post(f"/api/deposit?series={S}&format=form-data", files=[("file", ("a.txt", b"kept\n", "text/plain"))],
                       headers=token)
    assert said.status_code == 201 and said.json()["pdi"].endswith(".form-data.1")


def test_a_body_curl_sent_as_a_form_says_how_to_send_it(writable: Writable) -> None:
    # curl --data-binary @a.txt, without -H 'Content-Type: …', labels the body application/x-www-form-urlencoded
    # (curl's manual, --data): the refusal names the field to give
    client, token = writable.client, Writable.bearer(writable.deposit)
    before = snapshot(writable.archive)
    sent = client.post(f"/api/deposit?series={S}", content=b"a document\n",
                       headers={**token, "Content-Type": "application/x-www-form-urlencoded"})
    assert sent.status_code == 415, sent.text
    assert "curl --data-binary" in sent.json()["detail"] and "Content-Type: text/plain" in sent.json()["detail"]
    assert snapshot(writable.archive) == before
    said = client.post(f"/api/deposit?series={S}", content=b"a document\n",
                       headers={**token, "Content-Type": "text/plain; charset=utf-8"})
    assert said.status_code == 201, said.text


def test_a_charset_whose_quoted_string_is_not_closed_is_refused_naming_it(writable: Writable) -> None:
    client, token = writable.client, Writable.bearer(writable.deposit)
    before = snapshot(writable.archive)
    sent = client.post(f"/api/deposit?series={S}", content=b"a document\n",
                       headers={**token, "Content-Type": 'text/plain; charset="utf-8'})
    assert sent.status_code == 415, sent.text
    assert "is not closed" in sent.json()["detail"] and "RFC 9110" in sent.json()["detail"]
    assert snapshot(writable.archive) == before


@pytest.mark.parametrize("withdrawn", ["the version", "the whole document", "the version, purged"])
def test_octets_a_withdrawn_latest_version_held_are_not_answered_unchanged_with_its_name(
        writable: Writable, withdrawn: str) -> None:
    # write-over-http.md: a withdrawn name "resolves to its tombstone" (410), so it does not hold the octets for a
    # reader; a deposit of the same octets under its id must not be told they are held there (200, unchanged,
    # that name): it is refused as other octets under a minted id are (409), naming the withdrawal, nothing stored
    held = b"withdrawn by order\n"
    name = writable.archive.add(S, held, format="text", foreign_id="taken-down")
    generic = str(name).rsplit(".", 2)[0]
    writable.archive.withdraw(generic if withdrawn == "the whole document" else name, "asked to",
                              purge="purged" in withdrawn)
    assert writable.client.get(f"/uri-res/N2R?{name}").status_code == 410
    before = snapshot(writable.archive)
    headers = Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"})
    single = writable.client.post(f"/api/deposit?series={S}&id=taken-down", content=held, headers=headers)
    assert single.status_code == 409, single.text
    assert "withdrawn" in single.json()["detail"] and str(name) in single.json()["detail"]
    # no command line's flag: a client of the write API cannot force a deposit (ContentRefusal.over_http)
    assert "--force" not in single.json()["detail"] and "pdi version" not in single.json()["detail"], single.text
    batch = _batch(writable, [("new.txt", b"a new one\n", "text/plain"), ("held.txt", held, "text/plain")],
                   manifest=[{}, {"id": "taken-down"}])
    assert batch.status_code == 409 and batch.json()["detail"].startswith("item 1: "), batch.text
    assert "withdrawn" in batch.json()["detail"] and "--force" not in batch.json()["detail"], batch.text
    version = writable.client.post(f"/api/version?pdi={generic}&format=text", content=held, headers=headers)
    # a document withdrawn whole takes no version at all, as every name of it is gone (410, as its N2R above)
    status = 410 if withdrawn == "the whole document" else 409
    assert version.status_code == status and "withdrawn" in version.json()["detail"], version.text
    assert "--force" not in version.json()["detail"], version.text
    assert snapshot(writable.archive) == before


def test_octets_an_earlier_withdrawn_version_held_are_refused_after_a_later_version(writable: Writable) -> None:
    # version 1 withdrawn, version 2 in service: version 1's octets again would serve the withdrawn content under
    # the name of version 3; they are refused (409) naming version 1 and its withdrawal, nothing stored
    held = b"withdrawn by order\n"
    name = writable.archive.add(S, held, format="text", foreign_id="taken-down")
    generic = str(name).rsplit(".", 2)[0]
    writable.archive.withdraw(name, "asked to")
    writable.archive.add_version(generic, [Content(b"corrected\n", "text")])
    before = snapshot(writable.archive)
    headers = Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"})
    version = writable.client.post(f"/api/version?pdi={generic}&format=text", content=held, headers=headers)
    assert version.status_code == 409, version.text
    detail = version.json()["detail"]
    assert f"{name} holds" in detail and "withdrawn" in detail and "asked to" in detail, detail
    assert "--force" not in detail, detail
    assert snapshot(writable.archive) == before


def test_an_unchanged_answer_is_kept_under_its_idempotency_key_as_a_created_one_is(writable: Writable) -> None:
    # draft-ietf-httpapi-idempotency-key-header §2.6: the key with another request payload is a 422; the answer a
    # key was given (200, "unchanged": true here, as 201 for a created name) is the answer of every retry under it
    held = b"kept as it was\n"
    name = writable.archive.add(S, held, format="text", foreign_id="held-id")
    generic = str(name).rsplit(".", 2)[0]
    text = Writable.bearer(writable.deposit, **{"Content-Type": "text/plain"})
    writes = [(f"/api/deposit?series={S}&id=held-id", "deposit-once"),
              (f"/api/version?pdi={generic}&format=text", "version-once"),
              (f"/api/format?pdi={name}&format=text", "format-once")]
    for url, key in writes:
        headers = {**text, "Idempotency-Key": key}
        first = writable.client.post(url, content=held, headers=headers)
        assert first.status_code == 200 and first.json()["unchanged"] is True, (url, first.text)
        assert "idempotent-replayed" not in first.headers
        again = writable.client.post(url, content=held, headers=headers)
        assert again.status_code == 200 and again.json() == first.json(), (url, again.text)
        assert again.headers["idempotent-replayed"] == "true", url
        before = snapshot(writable.archive)
        other = writable.client.post(url, content=b"another body\n", headers=headers)
        assert other.status_code == 422 and "Idempotency-Key" in other.json()["detail"], (url, other.text)
        assert snapshot(writable.archive) == before
    # a batch whose every item is held: 200, and its key is as used as a batch's that minted
    files = [("held.txt", held, "text/plain")]
    first = _batch(writable, files, manifest=[{"id": "held-id"}], **{"Idempotency-Key": "batch-held"})
    assert first.status_code == 200 and first.json()["items"][0]["unchanged"] is True, first.text
    again = _batch(writable, files, manifest=[{"id": "held-id"}], **{"Idempotency-Key": "batch-held"})
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    before = snapshot(writable.archive)
    other = _batch(writable, [("new.txt", b"a new one\n", "text/plain")], **{"Idempotency-Key": "batch-held"})
    assert other.status_code == 422, other.text
    assert snapshot(writable.archive) == before


def test_an_empty_body_is_refused_unless_allow_empty_says_it_is_meant(writable: Writable) -> None:
    """An empty body (a client that read no file) minted a 0-octet document for good: refused as pdi add refuses an
    empty file, on every route that deposits a body, and deposited with allow_empty=true."""
    bearer = Writable.bearer(writable.deposit)
    first = writable.client.post(f"/api/deposit?series={S}&format=text", content=b"first\n", headers=bearer)
    assert first.status_code == 201, first.text
    versioned = first.json()["pdi"]
    generic = versioned.removesuffix(".text.1")
    before = snapshot(writable.archive)
    for path in (f"/api/deposit?series={S}&format=text", f"/api/version?pdi={generic}&format=text",
                 f"/api/format?pdi={versioned}&format=html"):
        for explicit in ("", "&allow_empty=false"):
            answer = writable.client.post(path + explicit, content=b"", headers=bearer)
            assert answer.status_code == 400, (path, answer.text)
            assert answer.json()["detail"].startswith("the body is empty (0 octets): nothing was deposited"), answer.text
            assert "allow_empty=true" in answer.json()["detail"]
    batch = writable.client.post(f"/api/batch?series={S}", headers=bearer, files=[
        ("file", ("a.txt", b"a\n", "text/plain")), ("file", ("nothing.txt", b"", "text/plain"))])
    assert batch.status_code == 400, batch.text
    assert batch.json()["detail"].startswith("item 1 (nothing.txt) is empty (0 octets): nothing was deposited")
    assert snapshot(writable.archive) == before  # nothing of any of them written
    made = writable.client.post(f"/api/deposit?series={S}&format=text&allow_empty=true", content=b"", headers=bearer)
    assert made.status_code == 201, made.text
    assert writable.client.get(f"/uri-res/N2R?{made.json()['pdi']}").content == b""
    again = writable.client.post(f"/api/version?pdi={generic}&format=text&allow_empty=true", content=b"",
                                 headers=bearer)
    assert again.status_code == 201 and again.json()["version"] == 2, again.text
    both = writable.client.post(f"/api/batch?series={S}&allow_empty=true", headers=bearer, files=[
        ("file", ("a.txt", b"a\n", "text/plain")), ("file", ("nothing.txt", b"", "text/plain"))])
    assert both.status_code == 201, both.text
    assert writable.client.get(f"/uri-res/N2R?{both.json()['items'][1]['pdi']}").content == b""
