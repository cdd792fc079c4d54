"""Small blobs beside a SQLite catalog: rows of its ``blobs`` table, written by the deposit's own transaction.

A blob of at most ``INLINE_LIMIT`` octets a deposit brings is one row of the
catalog (``pdi.archive.blobs.inline``, as beside PostgreSQL:
``test_archive_small_blobs_postgres.py``), made durable by the catalog's
commit alone: no file, no directory to sync. A larger one is a file, as is
every blob an import brings. Either way every read is checked against the
chunk digests, ``pdi verify`` finds a damaged or missing row, a refused
deposit leaves no row, and a purge or the remover takes the row away. What
is stored is asked of the catalog with ``sqlite3`` and of the files with
``os`` (``support.stored_blobs``), never of pdi.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.archive.content import ONE_BLOCK
from pdi.errors import ImmutabilityError, IntegrityError
from pdi.fragments.text.table import BLOCK_SIZE
from support.stored_blobs import blob_file, blob_row, delete_blob, flip_octet, stored_blob_names

S = "oma.eop.gov.us"
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    made = Archive.init(tmp_path / "archive")
    made.add_series(S)
    return made


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_small_blob_is_a_catalog_row_and_no_file(archive: Archive, tmp_path: Path) -> None:
    data = b"a small text\n" * 10
    name = archive.add(S, data, format="text")
    location = tmp_path / "archive"
    assert blob_row(location, _sha(data)) == data
    assert not blob_file(location, _sha(data)).exists()
    assert [p for p in (location / "blobs").rglob("*") if p.is_file()] == []
    assert list((location / "tmp").iterdir()) == []
    assert archive.get(str(name)).data == data
    assert archive.get(f"{name}#line=1,2").data == b"a small text\r\n"  # CRLF-canonical
    assert archive.verify().ok


def test_the_limit_is_inclusive_and_a_larger_blob_is_a_file(archive: Archive, tmp_path: Path) -> None:
    at_limit = b"x" * INLINE_LIMIT
    over = b"y" * (INLINE_LIMIT + 1)
    small = archive.add(S, at_limit, format="octet-stream")
    large = archive.add(S, over, format="octet-stream")
    location = tmp_path / "archive"
    assert blob_row(location, _sha(at_limit)) == at_limit and not blob_file(location, _sha(at_limit)).exists()
    assert blob_row(location, _sha(over)) is None and blob_file(location, _sha(over)).read_bytes() == over
    assert archive.get(str(small)).data == at_limit
    assert archive.get(str(large)).data == over
    assert archive.verify().ok


def test_the_same_octets_deposited_twice_are_one_row(archive: Archive, tmp_path: Path) -> None:
    data = b"twice\n"
    first = archive.add(S, data, format="text")
    second = archive.add(S, data, format="text")
    assert first != second
    assert stored_blob_names(tmp_path / "archive") == {_sha(data)}
    report = archive.verify()
    assert report.ok and (report.checked_blobs, report.checked_representations) == (1, 2)


def test_a_flipped_octet_of_a_small_blob_is_refused_and_found_by_verify(archive: Archive, tmp_path: Path) -> None:
    data = b"0123456789abcdef\n" * 40
    name = archive.add(S, data, format="text")
    flip_octet(tmp_path / "archive", _sha(data), 100)
    with pytest.raises(IntegrityError, match="chunk 0"):
        archive.get(str(name))
    with pytest.raises(IntegrityError):
        archive.get(f"{name}#char=0,3")
    report = archive.verify()
    assert [(p.kind, p.sha256, p.names) for p in report.problems] == [("altered", _sha(data), (str(name),))]


def test_a_missing_row_is_found_by_verify_and_refused(archive: Archive, tmp_path: Path) -> None:
    data = b"to be lost\n"
    name = archive.add(S, data, format="text")
    delete_blob(tmp_path / "archive", _sha(data))
    with pytest.raises(IntegrityError, match="missing"):
        archive.get(str(name))
    report = archive.verify()
    assert [(p.kind, p.names) for p in report.problems] == [("missing", (str(name),))]


def test_a_refused_deposit_leaves_no_row(archive: Archive, tmp_path: Path) -> None:
    archive.deposit(S, [Content(b"first\n", "text")], foreign_id="one")
    other = b"other bytes under the same id\n"
    with pytest.raises(ImmutabilityError):
        archive.deposit(S, [Content(other, "text")], foreign_id="one", force=True)
    with pytest.raises(IntegrityError):
        archive.add(S, b"not a PNG at all", format="png")
    assert stored_blob_names(tmp_path / "archive") == {_sha(b"first\n")}


def test_a_purge_deletes_the_row(archive: Archive, tmp_path: Path) -> None:
    sealed = b"sealed words\n"
    name = archive.add(S, sealed, format="text")
    kept = archive.add(S, b"kept words\n", format="text")
    archive.withdraw(name, "order of the court", purge=True)
    assert blob_row(tmp_path / "archive", _sha(sealed)) is None
    assert stored_blob_names(tmp_path / "archive") == {_sha(b"kept words\n")}
    report = archive.verify()
    assert report.ok and [p.names for p in report.purged] == [(str(name),)]
    assert archive.get(str(kept)).data == b"kept words\n"


def test_a_row_no_name_holds_is_unreferenced_and_removed(archive: Archive, tmp_path: Path) -> None:
    name = archive.add(S, b"named\n", format="text")
    stray = b"no name holds this\n"
    conn = sqlite3.connect(tmp_path / "archive" / "catalog.sqlite")
    with conn:
        conn.execute("INSERT INTO blobs (sha256, data) VALUES (?, ?)", (_sha(stray), stray))
    conn.close()
    assert archive.verify().unreferenced == [_sha(stray)]
    # a row is written by the transaction that names it: one no name holds is no deposit's, whatever its age
    assert archive.remove_unreferenced(older_than=3600) == [_sha(stray)]
    assert stored_blob_names(tmp_path / "archive") == {_sha(b"named\n")}
    assert archive.verify().ok and archive.get(str(name)).data == b"named\n"


def test_small_blobs_move_through_a_bag(archive: Archive, tmp_path: Path) -> None:
    data = b"kept through a bag\n"
    large = b"a larger text\n" * 6000
    name = archive.add(S, data, format="text")
    other = archive.add(S, large, format="text")
    archive.export_bag(tmp_path / "bag")
    assert (tmp_path / "bag" / "data" / "objects" / _sha(data)).read_bytes() == data
    with Archive.init(tmp_path / "copy") as copy:
        assert copy.import_bag(tmp_path / "bag") == 2
        assert copy.get(str(name)).data == data and copy.get(str(other)).data == large
        # an import writes every blob as a file, however small (a page of a bag may bring thousands)
        assert blob_file(tmp_path / "copy", _sha(data)).read_bytes() == data
        assert copy.verify().ok


def test_a_one_block_text_needs_no_block_table(archive: Archive, tmp_path: Path) -> None:
    assert ONE_BLOCK == BLOCK_SIZE
    small = archive.add(S, b"line one\nline two\n", format="text")
    large = archive.add(S, b"line\n" * (BLOCK_SIZE // 5 + 1), format="text")
    conn = sqlite3.connect(tmp_path / "archive" / "catalog.sqlite")
    indexed = {str(r[0]) for r in conn.execute("SELECT sha256 FROM fragment_indexes")}
    conn.close()
    assert indexed == {archive.get(str(large)).sha256}
    assert archive.get(f"{small}#line=1,2").data == b"line two\r\n"
    assert archive.get(f"{large}#line=13107,13108").data == b"line\r\n"


def test_an_acknowledged_small_deposit_survives_sigkill(tmp_path: Path) -> None:
    """A process killed right after its deposit returned: the row is there (the commit made it durable)."""
    location = tmp_path / "archive"
    Archive.init(location).close()
    script = (
        "import os, signal, sys\n"
        "from pdi.archive import Archive\n"
        "a = Archive.open(sys.argv[1])\n"
        "a.add_series('oma.eop.gov.us')\n"
        "name = a.add('oma.eop.gov.us', b'acknowledged\\n', format='text')\n"
        "print(name, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(location)], capture_output=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert proc.returncode == -signal.SIGKILL
    name = proc.stdout.decode().strip()
    with Archive.open(location) as reopened:
        assert reopened.get(name).data == b"acknowledged\n"
        assert reopened.verify().ok
    assert blob_row(location, _sha(b"acknowledged\n")) == b"acknowledged\n"


@pytest.mark.parametrize("value", ["tampered", 42, 1.5], ids=["text", "integer", "real"])
def test_a_row_holding_a_value_that_is_not_octets_is_found_by_verify(
    archive: Archive, tmp_path: Path, value: object
) -> None:
    """SQLite keeps whatever a hand or a tool writes into a row (``sqlite3``'s ``replace()`` of a BLOB gives
    TEXT): such a row is damage ``pdi verify`` reports as ``altered``, and a read refuses, not a traceback."""
    data = b"a small text\n" * 3
    name = archive.add(S, data, format="text")
    with sqlite3.connect(tmp_path / "archive" / "catalog.sqlite") as conn:
        conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (value, _sha(data)))
        assert conn.execute("SELECT typeof(data) FROM blobs").fetchone()[0] in ("text", "integer", "real")
    with pytest.raises(IntegrityError):
        archive.get(str(name))
    report = archive.verify()
    assert [(p.kind, p.names) for p in report.problems] == [("altered", (str(name),))]


def test_a_row_whose_octets_are_kept_as_text_reads_as_those_octets(archive: Archive, tmp_path: Path) -> None:
    """The same octets kept as TEXT (``CAST(data AS TEXT)``, UTF-8) are still the blob's octets: read, and
    found whole."""
    data = "a small text, «quoted»\n".encode() * 3
    name = archive.add(S, data, format="text")
    with sqlite3.connect(tmp_path / "archive" / "catalog.sqlite") as conn:
        conn.execute("UPDATE blobs SET data = CAST(data AS TEXT) WHERE sha256 = ?", (_sha(data),))
        assert conn.execute("SELECT typeof(data) FROM blobs").fetchone()[0] == "text"
    assert archive.get(str(name)).data == data
    assert archive.verify().ok
