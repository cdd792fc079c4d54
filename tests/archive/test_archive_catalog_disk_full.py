"""A catalog statement that fills a disk says which disk: the catalog's, or the one SQLite keeps its temporary files on.

SQLite writes temporary files (a large sort, the full-text index's merges, a statement's journal) in
``SQLITE_TMPDIR`` or ``TMPDIR`` (else ``/var/tmp``, ``/usr/tmp``, ``/tmp``), which it reads once a process, so the
indexer runs here as a user runs it, ``pdi index`` in a child process, with ``TMPDIR`` a real 2 MiB tmpfs filled to
the last octet. Its failure must say that the disk is full, which folders SQLite writes to and the room left on
each, not a rollback of a transaction SQLite had already ended (which is what it said before); and it must go
through once ``TMPDIR`` has room. SQLite only: PostgreSQL's server keeps its own files.
"""

from __future__ import annotations

import datetime
import errno
import os
import random
import subprocess
import sys
from pathlib import Path

from pdi.archive import Archive
from pdi.archive.search import LEASE_SECONDS

S = "bench.example.us"


def _pdi(*argv: str, archive: Path, tmpdir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PDI_ARCHIVE=str(archive))
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    env.pop("SQLITE_TMPDIR", None)
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, env=env,
                          check=False)


def _fill(disk: Path) -> None:
    """Write ``disk`` full: octets until the file system refuses one more (in pieces of 64 KiB, then of 512)."""
    for name, piece in (("filler", 64 * 1024), ("filler-tail", 512)):
        with open(disk / name, "wb", buffering=0) as out:
            try:
                while True:
                    out.write(b"\xff" * piece)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


def test_a_full_disk_under_sqlites_temporary_files_is_said_with_its_folder_and_then_indexed(
    tmp_path: Path, small_disk: Path
) -> None:
    archive = tmp_path / "archive"
    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(5000)]
    text = tmp_path / "text.txt"  # 3 MB: queued for the indexer, whose passages SQLite sorts in temporary files
    text.write_text("\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(36_000)))
    assert _pdi("init", str(archive), archive=archive).returncode == 0
    assert _pdi("series", "add", S, archive=archive).returncode == 0
    added = _pdi("add", "-s", S, str(text), archive=archive)
    assert added.returncode == 0, added.stderr
    _fill(small_disk)
    failed = _pdi("index", archive=archive, tmpdir=small_disk)
    said = failed.stdout + failed.stderr
    assert failed.returncode != 0, said
    assert "database or disk is full" in said, said
    assert f"in {small_disk}, where SQLite writes its temporary files" in said, said
    assert "where the catalog is" in said and "TMPDIR" in said, said
    assert "rollback failed" not in said and "Traceback" not in said, said
    # the text is still queued (nothing of it indexed), and is indexed once its failed turn's lease is over, here
    # where there is room
    searched = _pdi("search", words[0], archive=archive)
    assert "index pending" in searched.stdout + searched.stderr, searched
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=2 * LEASE_SECONDS)
    with Archive.open(archive, clock=lambda: later) as opened:
        run = opened.index_queued()
        assert (run.indexed, run.failed) == (1, ()), run
        assert opened.pending_index() == 0
    found = _pdi("search", words[0], archive=archive)
    assert found.returncode == 0 and "index pending" not in found.stdout + found.stderr, found
