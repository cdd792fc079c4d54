"""Purge: a withdrawal that also deletes the octets (a legal takedown), issue 15.

Each test runs on both catalogs (``location``: SQLite with blob files,
PostgreSQL with blobs in the database) and the S3 tests on Swift. Whether the
octets are still stored is asked of the storage itself — the blob file's
path (README: ``blobs/<first two hex digits>/<sha256>``) and a small blob's
row in the SQLite catalog through sqlite3 (``support.stored_blobs``), PostgreSQL's rows
through psycopg, the bucket through boto3 — never of pdi; the SHA-256 names
are computed here with hashlib.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import boto3
import psycopg
import pytest
from archive_helpers import Clock
from click.testing import CliRunner
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.archive.blobs.s3 import S3Location
from pdi.cli import cli
from pdi.errors import IntegrityError, StoreError, WithdrawnError
from pdi.server import create_app
from support.stored_blobs import blob_is_stored

S = "oma.eop.gov.us"
SEALED = b"the sealed affidavit of a protected witness, zanzibarite\n"
PUBLIC = b"the public ruling\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stored(location: str, data: bytes) -> bool:
    """Whether the octets ``data`` are still kept, asked of the files or of PostgreSQL directly."""
    sha = _sha(data)
    if not location.startswith("postgresql:"):
        return blob_is_stored(location, sha)
    with psycopg.connect(location) as conn:
        rows = conn.execute("SELECT count(*) FROM blobs WHERE sha256 = %s", (sha,)).fetchone()
        parts = conn.execute(
            "SELECT count(*) FROM blob_parts WHERE position(%s::bytea in data) > 0", (data,)
        ).fetchone()
    assert rows is not None and parts is not None
    return bool(rows[0] or parts[0])


def test_purging_a_version_deletes_its_octets_and_keeps_its_tombstone(archive: Archive, location: str) -> None:
    sealed = archive.add(S, SEALED, format="text")
    generic = str(sealed).rsplit(".", 2)[0]
    second = archive.add_version(generic, [Content(PUBLIC, "text")])[0]
    assert _stored(location, SEALED)
    record = archive.withdraw(sealed, "order of the court, 2026-11-20", purge=True)
    assert record.purged and record.version == 1 and record.kept == ()
    assert not _stored(location, SEALED)
    assert _stored(location, PUBLIC)
    # the name stays, answers its tombstone, and says it was purged
    assert str(sealed) in [str(n) for n in archive.ls(series=S)]
    with pytest.raises(WithdrawnError, match=r"\(its octets purged\): order of the court") as gone:
        archive.get(sealed)
    assert gone.value.purged
    assert archive.get(second).data == PUBLIC
    # verify: the purged name is a note, not a missing blob
    report = archive.verify()
    assert report.ok, report.problems
    assert [(p.kind, p.sha256, p.names) for p in report.purged] == [("purged", _sha(SEALED), (str(sealed),))]
    assert report.checked_representations == 2
    # the full-text index forgot the text
    assert archive.search("zanzibarite").hits == ()
    assert [(e.action, e.subject) for e in archive.audit() if e.action in ("withdraw", "purge")] == [
        ("purge", str(sealed))
    ]


def test_bytes_another_name_keeps_stay_until_every_holder_is_purged(archive: Archive, location: str) -> None:
    first = archive.add(S, SEALED, format="text")
    copy = archive.add(S, SEALED, format="text", foreign_id="case-12")
    assert _stored(location, SEALED)
    kept = archive.withdraw(first, "takedown", purge=True)
    assert kept.kept == (_sha(SEALED),)
    assert _stored(location, SEALED)
    assert archive.get(copy).data == SEALED
    # withdrawn without purge, the copy still holds them
    archive.withdraw(copy, "withdrawn too")
    assert _stored(location, SEALED)
    report = archive.verify()
    assert report.ok and [p.names for p in report.purged] == [(str(first),)]
    # purging the last holder deletes them
    assert archive.withdraw(copy, "takedown, second order", purge=True).kept == ()
    assert not _stored(location, SEALED)
    report = archive.verify()
    assert report.ok, report.problems
    assert sorted(p.names[0] for p in report.purged) == sorted([str(first), str(copy)])


def test_a_whole_document_is_purged_with_every_version(archive: Archive, location: str) -> None:
    first = archive.add(S, SEALED, format="text")
    generic = str(first).rsplit(".", 2)[0]
    archive.add_version(generic, [Content(PUBLIC, "text")])
    archive.withdraw(generic, "the whole case is sealed", purge=True)
    assert not _stored(location, SEALED) and not _stored(location, PUBLIC)
    for version in (1, 2):
        with pytest.raises(WithdrawnError, match="its document was withdrawn"):
            archive.get(f"{generic}.text.{version}")


def test_an_interrupted_purge_is_reported_and_finished_by_purging_again(
    archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sealed = archive.add(S, SEALED, format="text")

    def crash(sha256s: object) -> object:  # the process dies between the commit and the deletion
        raise StoreError("killed")

    with monkeypatch.context() as patched:
        patched.setattr(archive.store, "delete_purged_blobs", crash)
        with pytest.raises(StoreError):
            archive.withdraw(sealed, "takedown", purge=True)
    assert _stored(location, SEALED)
    with pytest.raises(WithdrawnError):  # the catalog committed the purge: the name is gone already
        archive.get(sealed)
    report = archive.verify()
    assert [(p.kind, p.names) for p in report.problems] == [("unpurged", (str(sealed),))]
    archive.withdraw(sealed, "takedown, again", purge=True)
    assert not _stored(location, SEALED)
    assert archive.verify().ok


def test_a_name_withdrawn_earlier_can_be_purged_later(archive: Archive, location: str) -> None:
    sealed = archive.add(S, SEALED, format="text")
    archive.withdraw(sealed, "withdrawn pending an order")
    assert _stored(location, SEALED)
    with pytest.raises(WithdrawnError) as before:
        archive.get(sealed)
    assert not before.value.purged
    archive.withdraw(sealed, "the order came", purge=True)
    assert not _stored(location, SEALED)
    with pytest.raises(WithdrawnError, match="withdrawn pending an order") as after:
        archive.get(sealed)  # the first tombstone's reason stays; it now says purged
    assert after.value.purged


def test_a_bag_says_what_was_purged_and_imports_it_without_octets(
    archive: Archive, tmp_path: Path, clock: Clock
) -> None:
    sealed = archive.add(S, SEALED, format="text")
    public = archive.add(S, PUBLIC, format="text")
    archive.withdraw(sealed, "takedown", purge=True)
    bag = tmp_path / "bag"
    archive.export_bag(bag)
    catalog = json.loads((bag / "data" / "catalog.json").read_text(encoding="utf-8"))
    entries = {r["pdi"]: r for r in catalog["representations"]}
    assert entries[str(sealed)]["purged"] is not None and entries[str(public)]["purged"] is None
    assert [(w["purged"], w["reason"]) for w in catalog["withdrawals"]] == [(True, "takedown")]
    assert sorted(p.name for p in (bag / "data" / "objects").iterdir()) == [_sha(PUBLIC)]
    manifest = (bag / "manifest-sha256.txt").read_text(encoding="utf-8")
    assert _sha(SEALED) not in manifest
    for line in manifest.splitlines():  # RFC 8493 §2.1.3: each payload file has its checksum
        checksum, path = line.split(maxsplit=1)
        assert hashlib.sha256((bag / path).read_bytes()).hexdigest() == checksum
    with Archive.init(tmp_path / "copy", clock=clock) as copy:
        assert copy.import_bag(bag) == 2
        with pytest.raises(WithdrawnError) as gone:
            copy.get(sealed)
        assert gone.value.purged
        assert copy.get(public).data == PUBLIC
        report = copy.verify()
        assert report.ok and [p.names for p in report.purged] == [(str(sealed),)]
        assert not blob_is_stored(tmp_path / "copy", _sha(SEALED))


def test_purge_over_http_needs_admin_and_the_tombstone_says_purged(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        _, admin = archive.add_token("registrar", role="admin", series=[S])
        sealed = archive.add(S, SEALED, format="text")
        client = TestClient(create_app(location, archive=archive))
        refused = client.post(f"/api/withdraw?pdi={sealed}&purge=true", content=b"takedown",
                              headers={"Authorization": f"Bearer {curator}"})
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
        assert _stored(location, SEALED)
        assert client.get(f"/uri-res/N2R?{sealed}").content == SEALED  # the refusal changed nothing
        bad = client.post(f"/api/withdraw?pdi={sealed}&purge=yes", content=b"takedown",
                          headers={"Authorization": f"Bearer {admin}"})
        assert bad.status_code == 400 and "purge=" in bad.json()["detail"]
        made = client.post(f"/api/withdraw?pdi={sealed}&purge=true", content=b"takedown",
                           headers={"Authorization": f"Bearer {admin}"})
        assert made.status_code == 201, made.text
        assert made.json()["withdrawn"]["purged"] is True and made.json()["kept"] == []
        assert not _stored(location, SEALED)
        gone = client.get(f"/uri-res/N2R?{sealed}")
        assert gone.status_code == 410 and "purged" in gone.json()["detail"]
        assert client.get(f"/uri-res/N2C?{sealed}").json()["withdrawn"]["purged"] is True
        audit = [(e.who, e.action) for e in archive.audit() if e.action in ("withdraw", "purge")]
        assert audit == [("token:registrar", "purge")]


def test_pdi_withdraw_purge_and_verify_on_the_command_line(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        sealed = archive.add(S, SEALED, format="text")
        copy = archive.add(S, SEALED, format="text", foreign_id="case-12")
    runner = CliRunner()
    done = runner.invoke(cli, ["withdraw", str(sealed), "--reason", "takedown", "--purge", "--archive", location])
    assert done.exit_code == 0, done.output
    assert "1 blob stays: other names hold the same bytes" in done.output
    done = runner.invoke(cli, ["withdraw", str(copy), "--reason", "takedown", "--purge", "--archive", location])
    assert done.exit_code == 0 and "its octets are purged\n" in done.output
    checked = runner.invoke(cli, ["verify", "--archive", location])
    assert checked.exit_code == 0, checked.output
    purged = sorted(line.split("\t")[1] for line in checked.output.splitlines() if line.startswith("purged\t"))
    assert purged == sorted([str(sealed), str(copy)])
    got = runner.invoke(cli, ["get", str(sealed), "--archive", location])
    assert got.exit_code == 11 and "purged" in got.output


def test_pdi_withdraw_purge_of_a_name_withdrawn_earlier_says_the_reason_it_resolves_to(tmp_path: Path) -> None:
    """``pdi withdraw NAME --purge`` of a name withdrawn before said "withdrew version 1 of NAME at <now>: <the
    purge's reason>", though the name resolves to its first tombstone, its time and reason. It now says it purged,
    and the first withdrawal's time and reason, which pdi get then shows; a name withdrawn by this purge is said
    withdrawn, as before. Whether the octets are gone is asked of the files."""
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        sealed = archive.add(S, SEALED, format="text")
        public = archive.add(S, PUBLIC, format="text")
    runner = CliRunner()
    first = runner.invoke(cli, ["withdraw", str(sealed), "--reason", "pending an order", "--archive", location])
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith(f"withdrew version 1 of {sealed} at ")
    at = first.stdout.split(" at ", 1)[1].split(": ", 1)[0]
    assert _stored(location, SEALED)
    purged = runner.invoke(cli, ["withdraw", str(sealed), "--reason", "the order came", "--purge", "--archive",
                                 location])
    assert purged.exit_code == 0, purged.output
    said = purged.stdout.splitlines()
    assert said[0].startswith(f"purged version 1 of {sealed} at "), said
    assert said[0].endswith(f": the order came (withdrawn already, at {at}: pending an order, the reason its tombstone"
                            " keeps; pdi audit lists this purge with its own)"), said
    assert said[1:] == ["its octets are purged"]
    assert not _stored(location, SEALED)
    got = runner.invoke(cli, ["get", str(sealed), "--archive", location])
    assert got.exit_code == 11
    assert f"withdrawn {at} (its octets purged): pending an order" in got.stderr
    audit = [line.split("\t")[3:6] for line in runner.invoke(cli, ["audit", "--archive", location]).stdout.splitlines()]
    assert audit[-1] == ["purge", str(sealed), "version 1, its octets purged: the order came"]
    whole = runner.invoke(cli, ["withdraw", str(public), "--reason", "takedown", "--purge", "--archive", location])
    assert whole.stdout.startswith(f"withdrew version 1 of {public} at ") and "already" not in whole.stdout


def _keys(url: str) -> set[str]:
    where = S3Location.parse(url)
    client = boto3.client("s3")
    found: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=where.bucket, Prefix=where.prefix):
        found |= {item["Key"][len(where.prefix):] for item in page.get("Contents", [])}
    return found


def test_purge_deletes_the_object_in_an_s3_store_unless_another_name_keeps_it(
    location: str, s3_blobs: str
) -> None:
    with Archive.init(location, blobs=s3_blobs) as archive:
        archive.add_series(S)
        sealed = archive.add(S, SEALED, format="text")
        public = archive.add(S, PUBLIC, format="text")
        copy = archive.add(S, PUBLIC, format="text", foreign_id="case-12")
        assert _keys(s3_blobs) == {_sha(SEALED), _sha(PUBLIC)}
        archive.withdraw(sealed, "takedown", purge=True)
        assert _keys(s3_blobs) == {_sha(PUBLIC)}
        assert archive.withdraw(public, "takedown", purge=True).kept == (_sha(PUBLIC),)
        assert _keys(s3_blobs) == {_sha(PUBLIC)}
        assert archive.get(copy).data == PUBLIC
        report = archive.verify()
        assert report.ok, report.problems
        assert sorted(p.names[0] for p in report.purged) == sorted([str(sealed), str(public)])
        # remove-unreferenced never takes what a name keeps
        archive.remove_unreferenced(0)
        assert _keys(s3_blobs) == {_sha(PUBLIC)}


def test_a_purged_small_blob_leaves_no_copy_in_the_sqlite_catalogs_files(tmp_path: Path) -> None:
    """A small blob is a row of the SQLite catalog: its purge zeroes the row's pages and empties the log.

    Asked of the files themselves: neither ``catalog.sqlite`` nor its write-ahead log holds the octets
    (a deleted row's cell would otherwise stay in its page, and the log would keep the deposit's pages).
    """
    archive = Archive.init(tmp_path / "a")
    archive.add_series(S)
    sealed = bytes(range(256)) * 8 + b"sealed exhibit 41, never to be shown"  # octets, no passages
    name = archive.add(S, sealed, format="octet-stream")
    catalog = tmp_path / "a" / "catalog.sqlite"

    def held() -> bool:
        return any(p.exists() and sealed[-2000:] in p.read_bytes()
                   for p in (catalog, catalog.with_name("catalog.sqlite-wal")))

    assert held()
    archive.withdraw(name, "order of the court", purge=True)
    assert not held()
    archive.close()
    assert not held()


def test_a_catalog_naming_a_path_as_a_purged_blob_deletes_nothing_outside_the_archive(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): an archive folder made by someone else (copied, unpacked) whose catalog names
    ``../victim.txt`` as a version's blob: ``pdi withdraw --purge`` of it unlinked ``blobs/../../victim.txt``,
    outside the archive, and said "its octets are purged". A blob's name is made into a path only when it is a
    SHA-256."""
    import sqlite3

    root = tmp_path / "archive"
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    octets = bytes(range(256)) * 400  # a blob file, not a row (more than 64 KiB)
    with Archive.init(root) as archive:
        archive.add_series(S)
        (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
    conn = sqlite3.connect(root / "catalog.sqlite")
    try:
        conn.execute("UPDATE representations SET sha256 = '../victim.txt' WHERE sha256 = ?", (_sha(octets),))
        conn.commit()
    finally:
        conn.close()
    result = CliRunner().invoke(cli, ["withdraw", str(name), "--reason", "takedown", "--purge", "--archive",
                                      str(root)])
    assert victim.read_bytes() == b"precious\n"
    assert result.exit_code == IntegrityError.exit_code, result.output
    assert "'../victim.txt', which is no SHA-256" in result.output
