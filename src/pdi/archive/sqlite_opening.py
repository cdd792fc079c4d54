"""Who may open an archive's SQLite catalog, and how (docs/reference/backup.md, "Who can read an archive"): its
owner reads and writes it; a member of the group of an archive shared with it (:mod:`pdi.archive.modes`) and anyone
reading it from read-only media read it only, by SQLite's own means (https://sqlite.org/wal.html#readonly,
https://sqlite.org/uri.html#uriimmutable), and each of their writes is refused before anything is written, naming
the archive and who may write it. :class:`~pdi.archive.sqlite.SQLiteStore` opens its catalog by these rules."""

from __future__ import annotations

import contextlib
import os
import pwd
import sqlite3
import stat
import time
from pathlib import Path
from urllib.parse import quote

from pdi.archive.modes import Modes, modes_in
from pdi.errors import ReadOnlyArchiveError, StoreError

#: The catalog's file in an archive's folder.
CATALOG = "catalog.sqlite"
#: How long a statement waits for another connection's lock (SQLite's busy handler): two minutes, a writer
#: queued behind another's deposit.
BUSY_TIMEOUT_MS = 120_000

#: How long an opening that may only read the catalog waits for its ``-wal`` and ``-shm`` to be there again: the
#: owner's last connection takes them away as it closes and makes them again at once (:func:`leave_log_for_group`).
LOG_WAIT = 1.0


def read_only_uri(catalog: str | os.PathLike[str], immutable: bool = False) -> str:
    """The URI that opens ``catalog`` read-only (https://sqlite.org/uri.html: its path percent-encoded, so that a
    ``?``, ``#`` or ``%`` in a folder's name is a part of the path); ``immutable``: on read-only media, where
    nothing can change it (:func:`at_rest_on_read_only_media`), with no lock and no ``-shm`` looked for."""
    return f"file:{quote(os.path.abspath(catalog))}?mode=ro{'&immutable=1' if immutable else ''}"


def on_read_only_media(catalog: Path) -> bool:
    """Whether ``catalog`` is on a file system mounted read-only (a snapshot, a read-only bind mount, a disc)."""
    try:
        return bool(os.statvfs(catalog.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def at_rest_on_read_only_media(catalog: Path) -> bool:
    """Whether ``catalog`` is on read-only media with nothing in a write-ahead log beside it, so that SQLite may
    read it as ``immutable`` (https://sqlite.org/uri.html#uriimmutable: "held on read-only media and cannot be
    modified"), which needs no ``-shm``: pdi's last connection takes ``-wal`` and ``-shm`` away as it closes, so a
    copy or snapshot of an archive at rest has none, and without them SQLite cannot open a WAL database it may not
    write otherwise. A ``-wal`` that holds frames is never passed over so (``immutable`` would not read them)."""
    if not on_read_only_media(catalog):
        return False
    try:
        return os.path.getsize(f"{catalog}-wal") == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def refused_as_read_only(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused a statement because its connection may only read (``SQLITE_READONLY`` and its
    extended codes, https://sqlite.org/rescode.html#readonly)."""
    return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_READONLY


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def read_only_said(location: str, catalog: str) -> str:
    """Why the archive at ``location`` may not be written by this process, whose catalog ``catalog`` it may read
    and not write: a member of the group of an archive shared with it (:mod:`pdi.archive.modes`), or a read-only
    file system."""
    me = _user(os.geteuid())
    try:
        found = os.stat(catalog)
    except OSError:
        return f"cannot write the archive at {location}: this user ({me}) may read its catalog {catalog}, not write it"
    owner = _user(found.st_uid)
    if on_read_only_media(Path(catalog)):
        return f"cannot write the archive at {location}: it is on a read-only file system"
    if found.st_uid == os.geteuid():
        return (f"cannot write the archive at {location}: its catalog {catalog} (mode {stat.S_IMODE(found.st_mode):04o})"
                " may not be written here (a read-only file system, or its mode)")
    return (f"cannot write the archive at {location}: this user ({me}) may read it, not write it (its catalog"
            f" {catalog} is of mode {stat.S_IMODE(found.st_mode):04o}, {owner}'s to write; an archive shared with"
            f" its group is read by that group, never written): write to it as {owner}, or through a resolver"
            f" {owner} runs")


def may_write(catalog: Path | str) -> bool:
    """Whether this process may write the catalog ``catalog`` (its effective user and groups, as the kernel asks
    when it is opened): not a member of the group of an archive shared with it, nor on a read-only mount."""
    return os.access(catalog, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def refuse_writing_in(location: str, path: str | os.PathLike[str]) -> None:
    """A :class:`ReadOnlyArchiveError`, before anything is written, when ``path`` (a key, the registry, the SGML
    folder, an export named inside the archive) lies in the folder of the directory archive at ``location`` and
    this process may read that archive, not write it: the message a write to its catalog gets
    (:func:`read_only_said`), not the file system's "Permission denied" or "Read-only file system" of one file.
    Nothing is said of a path elsewhere (``--key-file``, ``--registry-file``, ``$PDI_SGML_CATALOG``), of a
    PostgreSQL archive, or of a folder that holds no archive (the write says what it finds)."""
    if "://" in location:
        return
    catalog = os.path.abspath(os.path.join(location, CATALOG))
    if not os.path.isfile(catalog) or may_write(catalog):
        return
    root, inside = os.path.realpath(location), os.path.realpath(path)
    if inside == root or inside.startswith(root.rstrip(os.sep) + os.sep):
        raise ReadOnlyArchiveError(read_only_said(location, catalog))


def read_only_catalog(catalog: Path, immutable: bool) -> sqlite3.Connection:
    """A connection that only reads the catalog ``catalog`` of an archive this process may read and not write
    (https://sqlite.org/wal.html#readonly: SQLite reads a WAL database it may not write when its ``-wal`` and
    ``-shm`` are there to read, which the owner's pdi leaves in an archive shared with its group; ``immutable``:
    at rest on read-only media, :func:`at_rest_on_read_only_media`). When they are not (an archive an earlier pdi
    left at rest), a :class:`StoreError` says so and what its owner does."""
    conn = sqlite3.connect(read_only_uri(catalog, immutable), uri=True, isolation_level=None,
                           timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        waited = time.monotonic() + LOG_WAIT
        while True:
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.Error as exc:
                missing = [f"{catalog}{end}" for end in ("-wal", "-shm") if not os.path.exists(f"{catalog}{end}")]
                if not missing or not (refused_as_read_only(exc)
                                       or getattr(exc, "sqlite_errorcode", 0) == sqlite3.SQLITE_CANTOPEN):
                    raise
                location = str(catalog.parent)
                if on_read_only_media(catalog):  # nothing will make them: no wait (a -wal with frames, no -shm)
                    raise StoreError(
                        f"cannot read the archive at {location}: it is on a read-only file system, and its catalog's"
                        f" write-ahead log {catalog}-wal holds changes not yet in the catalog, which SQLite cannot"
                        f" read without {catalog}-shm beside it. Copy the archive to a place that may be written, or"
                        " snapshot it at rest (with no pdi running on it)"
                    ) from exc
                if time.monotonic() < waited:
                    time.sleep(0.05)
                    continue
                raise StoreError(
                    f"cannot read the archive at {location}: {' and '.join(missing)} (SQLite's write-ahead log"
                    f" beside the catalog) {'is' if len(missing) == 1 else 'are'} not there, and this user"
                    f" ({_user(os.geteuid())}) may read the archive, not make files in it. Run any pdi command on it"
                    f" once as its owner ({_user(os.stat(catalog).st_uid)}): pdi ls --archive {location}. pdi"
                    " leaves them for the group of an archive shared with it (pdi docs reference/backup, 'Who can"
                    " read an archive')"
                ) from exc
    except BaseException:
        conn.close()
        raise


def leave_log_for_group(root: Path) -> None:
    """In an archive shared with its group (:func:`~pdi.archive.modes.modes_in`), the catalog's ``-wal`` and
    ``-shm`` made again, empty, if the connection that closed last took them away, as SQLite's persistent WAL mode
    keeps them (``SQLITE_FCNTL_PERSIST_WAL``, "useful when other processes that do not have write permission on
    the directory containing the database file want to read the database file": Python's sqlite3 cannot set it).
    Without them a member of the group, who may not make them, cannot read the catalog at all
    (https://sqlite.org/wal.html#readonly). An empty ``-wal`` holds no frame, and an empty ``-shm`` is made anew
    by the next connection that may write; one made meanwhile by another process is left as it is. Made of the
    catalog's mode and owner, as SQLite makes them (``os_unix.c``: ``findCreateFileMode``, ``robustFchown``)."""
    if modes_in(root) == Modes():
        return
    catalog = root / CATALOG
    try:
        found = os.stat(catalog)
    except OSError:
        return
    for end in ("-wal", "-shm"):
        try:
            fd = os.open(f"{catalog}{end}", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         stat.S_IMODE(found.st_mode))
        except OSError:  # there already (another process has the catalog open); or refused: the reader says so
            continue
        try:
            with contextlib.suppress(OSError):
                os.fchmod(fd, stat.S_IMODE(found.st_mode))  # whatever the umask
                if os.geteuid() == 0:
                    os.fchown(fd, found.st_uid, found.st_gid)
        finally:
            os.close(fd)
