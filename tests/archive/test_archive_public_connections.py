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
