"""The one-statement reads of a name anyone may read (``Archive.public_serial``, ``open_public``, ``read_public``) run
on a read-only connection of the calling thread's own: a thread that ends leaves none behind.

A resolver asks them from its event loop's thread and, for ``POST /api/octets``, from worker threads that
anyio makes and retires (after 10 s idle); each connection left open would hold the catalog's file, its WAL
and shared-memory files and a 256 MiB map. The process's open descriptors are counted in ``/proc/self/fd``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pdi.archive import Archive
from pdi.server.protocol.plain import serial_fields
from support.pgcluster import TemporaryCluster

S = "threads.example.us"


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_threads_that_read_a_public_name_and_end_leave_no_connection_open(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"read by many threads\n", format="text"))
    fields = serial_fields(name.encode())
    assert fields is not None
    archive = Archive.open(tmp_path / "archive")
    try:
        def read() -> None:
            opened = archive.open_public(*fields, name)
            assert opened is not None
            record, reader = opened
            with reader:
                assert reader.read() == b"read by many threads\n" and record.size == 21
            assert archive.public_serial(S, fields[1], "1", 1, "text") is not None

        def in_a_thread() -> None:
            thread = threading.Thread(target=read)
            thread.start()
            thread.join()

        in_a_thread()  # the catalog's files as one such connection leaves them (WAL, shared memory)
        before = _open_descriptors()
        for _ in range(30):
            in_a_thread()
        assert _open_descriptors() == before  # each thread's connection closed as the thread ended
        read()  # the calling thread's own connection stays, and is closed with the archive
    finally:
        archive.close()


def test_reads_held_share_one_snapshot_that_sees_no_later_commit_until_let_go(tmp_path: Path) -> None:
    # a resolver's event loop holds one snapshot for the names asked in one turn (Archive.hold_public_reads); what
    # another connection commits meanwhile is seen once it is let go, as SQLite's isolation says
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        first = str(archive.add(S, b"there before\n", format="text"))
    reader = Archive.open(tmp_path / "archive")
    try:
        sha256 = reader.get(first).sha256
        release = reader.hold_public_reads()
        assert release is not None
        assert reader.hold_public_reads() is None  # one is held already: nothing more begun
        generation = reader.generation_at_once()
        assert reader.public_digest(first, S) == sha256
        with Archive.open(tmp_path / "archive") as writer:
            later = str(writer.add(S, b"deposited while the snapshot is held\n", format="text"))
            writer.withdraw(first, "withdrawn while the snapshot is held")
        fields = serial_fields(later.encode())
        assert fields is not None
        # the snapshot: the first name still readable, the later one not there yet, the generation as it was
        assert reader.public_digest(first, S) == sha256
        assert reader.public_digest(later, S) is None and reader.public_serial(*fields, later) is None
        assert reader.generation_at_once() == generation
        release()
        assert reader.public_digest(first, S) is None  # withdrawn
        assert reader.public_digest(later, S) == reader.get(later).sha256
        found = reader.public_serial(*fields, later)
        assert found is not None and found.data == b"deposited while the snapshot is held\n"
        assert reader.generation_at_once() != generation
        release()  # let go twice: nothing held, nothing to do
        assert reader.hold_public_reads() is not None  # and one can be held again
    finally:
        reader.close()


def test_postgresql_holds_no_snapshot(pg_cluster: TemporaryCluster) -> None:
    # its resolver reads through the usual statements, each in its own transaction: nothing to hold or let go
    location = pg_cluster.create_schema("pdi_test_hold_reads")
    with Archive.init(location) as archive:
        assert archive.hold_public_reads() is None
