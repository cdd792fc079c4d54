"""``pdi serve --max-upload-mib``: the write API refuses a body past the bound, whether its ``Content-Length``
says so or its octets pass it (sent chunked, no length), for one deposit and for a batch, with ``413 Content
Too Large`` (RFC 9110 §15.5.14), and keeps nothing of it; a body within the bound is deposited whole."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
from server_helpers import serving

from pdi.archive import Archive

S = "library.example.us"
MIB = 1 << 20


def _chunked(data: bytes) -> Iterator[bytes]:
    """The body as a generator: httpx sends it chunked, with no Content-Length."""
    for at in range(0, len(data), 64 << 10):
        yield data[at : at + (64 << 10)]


def test_a_body_past_the_bound_is_413_and_leaves_nothing(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
    bearer = {"Authorization": f"Bearer {token}"}
    small = b"within the bound\n" * 60_000  # about 1 MiB: under the 2 MiB bound
    large = bytes(range(256)) * (2 * MIB // 256 + 1)  # one octet a line more than 2 MiB
    assert len(small) < 2 * MIB < len(large)
    with serving(location, "--max-upload-mib", "2") as (_, port):
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers=bearer, timeout=60) as client:
            told = client.post(f"/api/deposit?series={S}&format=octet-stream", content=large)
            assert told.status_code == 413, told.text
            assert told.headers["content-type"] == "application/problem+json"
            assert told.json()["detail"] == (f"the body of {len(large):,} octets is more than this server takes,"
                                             " 2,097,152 octets (pdi serve --max-upload-mib 2)")
            streamed = client.post(f"/api/deposit?series={S}&format=octet-stream", content=_chunked(large))
            assert streamed.status_code == 413, streamed.text
            assert streamed.json()["detail"] == ("the body is more than this server takes, 2,097,152 octets"
                                                 " (pdi serve --max-upload-mib 2)")
            batch = client.post(f"/api/batch?series={S}", files=[("file", ("a.bin", large, "application/octet-stream"))])
            assert batch.status_code == 413, batch.text
            kept = client.post(f"/api/deposit?series={S}&format=text", content=small,
                               headers={"Content-Type": "text/plain; charset=utf-8"})
            assert kept.status_code == 201, kept.text
            name = kept.json()["pdi"]
            assert hashlib.sha256(client.get(f"/uri-res/N2R?{name}").content).digest() == hashlib.sha256(small).digest()
    with Archive.open(location) as archive:
        records = list(archive.store.iter_representations())
        assert [r.size for r in records] == [len(small)]
        assert not archive.verify().problems


def test_the_help_names_every_route_the_bound_holds(tmp_path: Path) -> None:
    # the bound holds for /api/format and /api/batch too; --help named only a deposit and a version
    from click.testing import CliRunner

    from pdi.cli import cli

    said = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).stdout.split())
    assert "takes for a deposit, a version, a format or a batch (MiB)" in said
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
        name = archive.add(S, b"a text\n", format="text")
    with serving(location, "--max-upload-mib", "1") as (_, port), httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        told = client.post(f"/api/format?pdi={name}&format=octet-stream", content=b"x" * (MIB + 1))
        assert told.status_code == 413, told.text


def test_a_small_body_whose_content_length_says_more_than_its_bound_is_413_before_100_continue(
        tmp_path: Path) -> None:
    # A statement's value, a reason, an OAI-PMH form: bounded bodies read whole. A Content-Length past the bound is
    # refused as it stands (RFC 9110 §10.1.1: a server MAY answer a final status instead of 100 Continue), not
    # asked for with 100 Continue and read up to the bound first.
    import socket

    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a document\n", format="text"))
        _, token = archive.add_token("curator", role="curate", series=[S])
        before = (archive.store.assertions(), list(archive.store.audit_log()))
    with serving(location) as (_, port):
        for target in (f"/api/statements?pdi={name}&key=title", f"/api/withdraw?pdi={name}", "/oai"):
            head = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                    "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000000000\r\n"
                    "Expect: 100-continue\r\n\r\n").encode()
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                conn.sendall(head)
                first = conn.recv(65536).split(b"\r\n", 1)[0]
            assert first.startswith(b"HTTP/1.1 413 "), (target, first)
    with Archive.open(location) as archive:
        assert (archive.store.assertions(), list(archive.store.audit_log())) == before  # nothing stated or withdrawn
