"""Consistent backups of a live archive, and restores from them (``pdi backup``, ``pdi restore``).

A backup is a directory marked by ``pdi-backup.json``:

- a **SQLite catalog** is copied by SQLite's online backup API
  (:meth:`sqlite3.Connection.backup`, :data:`PAGES_A_STEP` pages at a time, so
  memory stays bounded) inside one read transaction of the live catalog: the
  copy is the catalog as one commit left it, whatever deposits go on. Blobs of
  at most 64 KiB are rows of the catalog, so they are in the copy.
- **PostgreSQL** is dumped by its own ``pg_dump -Fc`` (one snapshot of the
  whole database, large objects and ``blob_parts`` included) to
  ``catalog.dump``, restored by ``pg_restore`` into an empty database. The
  ``pg_dump`` must be at least the server's major version.
- **Blob files** (beside a SQLite catalog) and **S3 objects** are copied to
  ``blobs/ab/<sha256>`` *after* the catalog's snapshot, each one the snapshot
  names (a later deposit's are not needed): a file is hard-linked when the
  backup is on the same file system (else copied), each hashed as it streams
  and refused unless its SHA-256 is its name; an S3 object is read by verified
  chunks. Blobs are never rewritten, only added, so every blob the snapshot
  names is still there (unless a purge or ``--remove-unreferenced`` ran
  meanwhile: then the backup fails and says so).

A second backup into the same directory copies only the blobs not there yet,
writes the new catalog beside the old one and renames it into place once its
blobs are all there: an interrupted backup leaves the previous one whole.

A restore is the same copy the other way: the blobs first, then the catalog
(SQLite: the backup API again, then a rename; PostgreSQL: ``pg_restore``, once
the dump is found to hold only what pdi makes, :mod:`pdi.archive.postgres_dumps`; S3:
each object the catalog names that the bucket lacks is uploaded again).
"""

from __future__ import annotations

import dataclasses
import datetime
import errno
import hashlib
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pdi._extras import missing_extra
from pdi.archive.blobs import SHA256_HEX
from pdi.archive.blobs.files import fsync_dir
from pdi.archive.catalog.blobs import NAMED_OUTSIDE_ROWS
from pdi.archive.catalog.opening import is_postgres_url, shown_location
from pdi.archive.sqlite import BACKUP_MARKER
from pdi.errors import ImmutabilityError, IntegrityError, NotFoundError, StoreError

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore

#: The file that marks a directory as a pdi backup (and says of what).
MARKER = BACKUP_MARKER
#: The SQLite catalog of a backup of a directory archive (the same name as in the archive).
CATALOG = "catalog.sqlite"
#: The ``pg_dump -Fc`` of a backup of a PostgreSQL archive.
DUMP = "catalog.dump"
#: Pages the SQLite backup API copies a step (of 4 KiB: 4 MiB).
PAGES_A_STEP = 1024
#: Octets read a time when a blob is copied.
READ_SIZE = 1 << 20
#: What is left free beyond the estimate before a backup starts (64 MiB).
SPARE = 64 << 20
#: The format of the marker.
FORMAT = "pdi-backup/1"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class BackupDone:
    """What a backup (or a restore) did."""

    kind: str  #: the catalog: ``sqlite`` or ``postgres``
    blobs_copied: int
    blobs_linked: int
    blobs_present: int  #: already in the destination (an incremental backup)
    octets_copied: int
    started_at: str
    #: A restore's: the schema version of the catalog it brought back, as the backup held it (``None``: not said).
    schema_version: int | None = None
    #: A restore's: the S3 store the restored archive keeps its blobs in (``None``: its own), and whether it is the
    #: one the backup's archive recorded (which that archive, if it still runs, uses too).
    blob_store: str | None = None
    shares_blob_store: bool = False


# --- the destination ----------------------------------------------------------------


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_marker(directory: Path) -> dict[str, Any]:
    """The marker of the backup in ``directory`` (:class:`NotFoundError` when it is none)."""
    path = directory / MARKER
    _regular(path, "the backup's marker")
    try:
        with path.open("rb") as f:
            raw = f.read(1 << 16)
        marker = json.loads(raw)
    except FileNotFoundError:
        if not directory.is_dir():
            raise NotFoundError(f"{directory}: no such folder (a pdi backup is a folder pdi backup made)") from None
        raise NotFoundError(f"{directory} is not a pdi backup (no {MARKER})") from None
    except NotADirectoryError:
        raise NotFoundError(f"{directory} is not a folder: a pdi backup is a folder pdi backup made") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    if not isinstance(marker, dict) or marker.get("format") != FORMAT or marker.get("store") not in ("sqlite", "postgres"):
        raise StoreError(f"{path} is not a {FORMAT} marker")
    return marker


def _prepare_destination(dest: Path, store: str, source: str) -> None:
    """Make ``dest``, or check that it is empty or a backup of the same archive (``source``, as its marker
    names it: a SQLite archive's folder resolved, a PostgreSQL URL without its password)."""
    if dest.exists() and not dest.is_dir():
        raise ImmutabilityError(f"backup destination {dest} is a file, not a directory")
    if dest.is_dir() and any(dest.iterdir()):
        if not (dest / MARKER).exists():
            if {p.name for p in dest.iterdir()} <= _UNFINISHED:
                return _make_folders(dest)  # a first backup that did not finish: taken up again
            raise ImmutabilityError(f"backup destination {dest} is not empty and is not a pdi backup (no {MARKER})")
        marker = read_marker(dest)
        if marker["store"] != store:
            raise ImmutabilityError(f"{dest} holds a backup of a {marker['store']} archive, not of this {store} one")
        if not _same_archive(str(marker.get("source")), source, store):  # another archive's backup would be lost
            raise ImmutabilityError(
                f"{dest} holds the backup of another archive ({marker.get('source')}), not of {source}: back this"
                " one up into an empty or new directory (if the archive was moved, its old backup stays as it is)")
    _make_folders(dest)


def _same_archive(recorded: str, source: str, store: str) -> bool:
    """Whether a backup's marker (``recorded``) names the archive ``source`` names: a SQLite archive's resolved
    folder; a PostgreSQL database by its host, port, database, user and ``search_path``, however its URL is
    spelled (the password, TLS and timeouts left out: a password moved to ``.pgpass`` is the same archive)."""
    if store == "sqlite":
        return recorded == source
    return _database_of(recorded) == _database_of(source)


def _database_of(url: str) -> tuple[str, ...] | str:
    """What names a PostgreSQL archive in ``url``: its host, port, database, user and ``options`` (the
    ``search_path`` of an archive in a schema); ``url`` itself when libpq cannot read it."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(url.replace("postgres://", "postgresql://", 1))
    except Exception:  # an unreadable URL is compared as written
        return url
    return tuple(str(parts.get(key) or default) for key, default in
                 (("host", "localhost"), ("port", "5432"), ("dbname", ""), ("user", ""), ("options", "")))


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it (each resolved: a link or ``..`` does not hide it)."""
    inner, outer = path.resolve(), folder.resolve()
    return inner == outer or outer in inner.parents


def _source(location: str, store: str) -> str:
    """How a backup's marker names the archive at ``location``: its folder resolved, or its URL as shown."""
    return str(Path(location).resolve()) if store == "sqlite" else shown_location(location)


#: What a backup that did not finish leaves in its directory.
_UNFINISHED = frozenset({"blobs", "tmp", CATALOG + ".partial", CATALOG + ".partial-journal", DUMP + ".partial"})


def _make_folders(dest: Path) -> None:
    try:
        (dest / "blobs").mkdir(parents=True, exist_ok=True)
        (dest / "tmp").mkdir(exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot make the backup directory {dest}: {exc}") from exc


def _check_space(dest: Path, needed: int) -> None:
    free = shutil.disk_usage(dest).free
    if needed + SPARE > free:
        raise StoreError(
            f"not enough space at {dest}: about {needed >> 20} MiB needed (and {SPARE >> 20} MiB spare),"
            f" {free >> 20} MiB free"
        )


def _write_atomically(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
    fsync_dir(path.parent)


def _write_marker(dest: Path, store: str, source: str, started_at: str, blobs: int, schema_version: int,
                  schema: str | None = None) -> None:
    """The backup's marker: of what and when, its blobs, the catalog's schema version (what release can open it),
    and ``schema``, the PostgreSQL schema the archive is in (``null``: SQLite, or a database's ``public``)."""
    marker = {"format": FORMAT, "store": store, "source": source, "started_at": started_at,
              "finished_at": _now(), "blobs": blobs, "schema_version": schema_version, "schema": schema}
    _write_atomically(dest / MARKER, json.dumps(marker, indent=1).encode() + b"\n")


# --- blobs ------------------------------------------------------------------------------


def blob_file(root: Path, sha256: str) -> Path:
    return root / "blobs" / sha256[:2] / sha256


class BlobCopier:
    """Copies blobs into ``root/blobs`` (by a hard link where it can), each checked against its name."""

    def __init__(self, root: Path, *, link: bool = True, restoring: bool = False) -> None:
        self.root = root
        self.link = link
        #: Copying from a backup (a blob missing there is the backup's damage), not into one.
        self.restoring = restoring
        self.copied = self.linked = self.present = self.octets = 0
        self._dirs: set[Path] = set()

    def has(self, sha256: str, size: int) -> bool:
        """Whether the blob is there already: its size checked (in a backup, its digest was checked when it came);
        restoring, its octets re-hashed too, since the folder a restore goes into may hold blob files it did not
        write (an archive's whose damaged catalog was removed so that its backup could be put back)."""
        path = blob_file(self.root, sha256)
        try:
            if os.stat(path).st_size != size:
                return False
            if not self.restoring:
                return True
            with path.open("rb") as f:
                return _stream_digest(f) == sha256
        except FileNotFoundError:
            return False

    def from_file(self, sha256: str, source: Path) -> None:
        """Place the file ``source`` (hard-linked, or copied) and check its SHA-256 is ``sha256``."""
        _regular(source, "the blob file")
        target = blob_file(self.root, sha256)
        target.parent.mkdir(exist_ok=True)
        temporary = self.root / "tmp" / f"{sha256}.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        if self.link:
            try:
                os.link(source, temporary)
            except FileNotFoundError:
                raise _gone(sha256, source, self.restoring) from None
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    raise StoreError(f"cannot link {source} to {temporary}: {exc}") from exc
                self.link = False  # another file system: copy from now on
            else:
                try:
                    with temporary.open("rb") as f:
                        self._check(sha256, _stream_digest(f), source)
                except BaseException:
                    temporary.unlink(missing_ok=True)
                    raise
                self._place(temporary, target)
                self.linked += 1
                return
        try:
            f = source.open("rb")
        except FileNotFoundError:
            raise _gone(sha256, source, self.restoring) from None
        with f:
            self.from_stream(sha256, iter(lambda: f.read(READ_SIZE), b""), str(source))

    def from_stream(self, sha256: str, chunks: Iterator[bytes], where: str) -> None:
        """Write ``chunks`` to the blob's file, hashing them as they stream; refused unless they are ``sha256``."""
        target = blob_file(self.root, sha256)
        target.parent.mkdir(exist_ok=True)
        temporary = self.root / "tmp" / f"{sha256}.{os.getpid()}"
        digest = hashlib.sha256()
        try:
            with temporary.open("wb") as out:
                for chunk in chunks:
                    digest.update(chunk)
                    out.write(chunk)
                    self.octets += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            self._check(sha256, digest.hexdigest(), where)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.chmod(temporary, 0o444)
        self._place(temporary, target)
        self.copied += 1

    def _check(self, sha256: str, found: str, where: object) -> None:
        if found != sha256:
            then = ("this backup is damaged (a backup hard-linked to its archive shares its blocks): restore another"
                    " one" if self.restoring else
                    "run pdi verify on the archive (pdi verify --repair fetches it from a mirror), then back it up")
            raise IntegrityError(f"blob {sha256} at {where} does not match its SHA-256 (it is {found}): nothing"
                                 f" damaged was copied; {then}")

    def _place(self, temporary: Path, target: Path) -> None:
        os.replace(temporary, target)
        self._dirs.add(target.parent)

    def sync(self) -> None:
        """Make every placed blob's name durable."""
        for folder in sorted(self._dirs):
            fsync_dir(folder)
        fsync_dir(self.root / "blobs")
        self._dirs.clear()


def _gone(sha256: str, source: Path, restoring: bool) -> StoreError:
    if restoring:  # after the loss a restore is for, the backup cannot be made again: say what it lacks
        return StoreError(f"blob {sha256} the backup's catalog names is missing from the backup ({source}):"
                          " this backup is incomplete or damaged; restore another one")
    return StoreError(f"blob {sha256} the catalog names is missing from the archive ({source}): run pdi verify"
                      " on the archive, which says whether it was missing before (then repair it, pdi verify"
                      " --repair from a mirror, or restore it) or was taken during the backup by a purge or pdi"
                      " verify --remove-unreferenced (then run the backup again)")


def _stream_digest(f: Any) -> str:
    digest = hashlib.sha256()
    while chunk := f.read(READ_SIZE):
        digest.update(chunk)
    return digest.hexdigest()


def _named_blobs(conn: sqlite3.Connection) -> Iterator[tuple[str, int]]:
    """The blobs a SQLite catalog names that are not rows of its own (name, size), by name."""
    yield from conn.execute(NAMED_OUTSIDE_ROWS)


def _blob_names(rows: Iterable[tuple[object, object]], where: object) -> list[tuple[str, int]]:
    """``rows`` of (name, size) as a catalog ``where`` lists its blobs, each name a SHA-256 as pdi writes it and
    each size a count: a name is made into a path of the backup and of the archive, so a backup's catalog naming
    ``/etc/passwd`` (found by an attack, 2026-11-27: restored, ``pdi withdraw --purge`` then unlinked that file)
    is refused before anything is written."""
    names: list[tuple[str, int]] = []
    for name, size in rows:
        if not isinstance(name, str) or not SHA256_HEX.fullmatch(name) or not isinstance(size, int) or size < 0:
            raise StoreError(f"{where} names a blob {str(name)[:80]!r} of size {str(size)[:20]}, which is no SHA-256"
                             " and size as pdi writes them: not a pdi catalog, or a damaged one; nothing was restored")
        names.append((name, size))
    return names


def _check_triggers(conn: sqlite3.Connection, where: Path) -> None:
    """:class:`StoreError` unless each trigger of the catalog ``conn`` reads is one pdi's migrations make, word for
    word (SQLite keeps a trigger's statement as it was written): a stranger's trigger restored with the catalog runs
    later, in the restored archive's own commands (one naming ``../victim.txt`` as a withdrawn version's blob, found
    by an attack, 2026-11-27, made ``pdi withdraw --purge`` unlink that file, outside the archive)."""
    from pdi.archive.sqlite import SQLiteStore

    made = {statement for statement in SQLiteStore.names_schema if statement.startswith("CREATE TRIGGER ")}
    foreign = [str(name) for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
               if sql not in made]
    if foreign:
        raise StoreError(f"{where} holds triggers pdi does not make ({', '.join(n[:40] for n in foreign[:3])}),"
                         " which would run in the restored archive: not a pdi backup, or one a stranger changed;"
                         " nothing was restored")


def _check_integrity(conn: sqlite3.Connection, where: Path) -> None:
    """:class:`StoreError` unless SQLite's ``PRAGMA integrity_check`` finds the catalog ``conn`` reads whole: a page
    no step of a restore reads (the audit log's) may be damaged, and the restored archive would then look whole
    until a command read it ("database disk image is malformed"). It reads every page once."""
    try:
        said = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(5)")]
    except sqlite3.DatabaseError as exc:  # damage the check cannot read past
        said = [str(exc)]
    if said != ["ok"]:
        raise StoreError(f"{where} is damaged (SQLite's integrity check: {'; '.join(p[:200] for p in said)}): this"
                         " backup is damaged, restore another one; nothing was restored")


def _check_blobs_said(conn: sqlite3.Connection, src: Path, files: list[tuple[str, int]]) -> None:
    """:class:`IntegrityError` unless each blob the backup's catalog keeps as a row is its SHA-256 and the size its
    representations give, and each of the blob files ``files`` names is the size the catalog gives it (its
    octets are checked against its name as it is copied). Read before anything is written: a restore said
    "restored" of each, and ``pdi verify`` of the restored archive then found it altered."""
    where = src / CATALOG
    damaged = "this backup is damaged, restore another one; nothing was restored"
    for rowid, sha256 in conn.execute("SELECT rowid, sha256 FROM blobs").fetchall():
        digest = hashlib.sha256()
        with conn.blobopen("blobs", "data", rowid, readonly=True) as row:
            while chunk := row.read(READ_SIZE):
                digest.update(chunk)
        if digest.hexdigest() != sha256:
            raise IntegrityError(f"blob {str(sha256)[:80]} in {where} does not match its SHA-256 (it is"
                                 f" {digest.hexdigest()}): {damaged}")
    said = conn.execute("SELECT r.sha256, length(b.data), r.size FROM representations r JOIN blobs b"
                        " ON b.sha256 = r.sha256 WHERE r.purged IS NULL AND r.size IS NOT length(b.data)").fetchone()
    for sha256, size in files:
        if said is not None:
            break
        try:
            found = os.stat(blob_file(src, sha256))
        except OSError:
            continue  # missing, or unreadable: said when it is copied
        if stat.S_ISREG(found.st_mode) and found.st_size != size:  # a pipe, a folder: said when it is copied
            said = (sha256, found.st_size, size)
    if said is not None:
        raise IntegrityError(f"blob {said[0]} is {said[1]} octets, not the {said[2]} its catalog gives ({where}):"
                             f" {damaged}")


def _check_blobs_there(src: Path, root: Path, names: list[tuple[str, int]]) -> None:
    """:class:`StoreError` for the first blob the backup's catalog names that is neither a file of the backup nor,
    of its size, where the restore goes: said before anything is made (it was said once the blobs before it were
    copied, hours into a large restore, a folder of blobs without a catalog left behind)."""
    for sha256, size in names:
        if not os.path.lexists(blob_file(src, sha256)):
            try:
                if os.stat(blob_file(root, sha256)).st_size == size:
                    continue  # a blob an unfinished restore left: re-hashed as the restore goes
            except OSError:
                pass
            raise _gone(sha256, blob_file(src, sha256), restoring=True)


def _regular(path: Path, what: str) -> None:
    """:class:`StoreError` unless ``path`` is a regular file (a named pipe would hold the restore for ever), and
    not a symbolic link: pdi makes none in a backup or an archive, and a stranger's backup holding a link to a file
    outside it (whose SHA-256 its catalog names) was restored with that very file hard-linked as its blob."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # not there: whoever needs it says so (the catalog and dump are looked for first, in restore)
    except OSError as exc:
        raise StoreError(f"cannot read {what} {path}: {exc}") from exc
    if stat.S_ISLNK(mode):
        raise StoreError(f"{what} {path} is a symbolic link (to {str(os.readlink(path))[:200]!r}): pdi makes none in"
                         " a backup or an archive, and one may lead out of it: nothing was copied from it")
    if not stat.S_ISREG(mode):
        raise StoreError(f"{what} {path} is not a file (a pipe, a device or a folder): not a pdi backup")


def _copy_catalog(source: sqlite3.Connection, partial: Path) -> None:
    """Copy the SQLite database ``source`` to the new file ``partial`` by SQLite's backup API, a step at a time,
    as one file (no ``-wal`` beside it, so that it can be renamed), fsynced."""
    copied = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(copied, pages=PAGES_A_STEP)
        copied.execute("PRAGMA journal_mode = DELETE")
    finally:
        copied.close()
    with partial.open("rb") as f:
        os.fsync(f.fileno())


def _same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _copy_blobs(copier: BlobCopier, catalog: SQLStore | None, names: list[tuple[str, int]],
                files: Path | None, progress: Progress | None) -> None:
    """Copy each named blob not in the destination: from ``files`` (a blob directory) or read through ``catalog``."""
    for done, (sha256, size) in enumerate(names, 1):
        if copier.has(sha256, size):
            copier.present += 1
        elif files is not None:
            copier.from_file(sha256, blob_file(files, sha256))
        else:
            assert catalog is not None
            reader = catalog.open_blob(sha256, name=sha256)
            if reader is None:
                raise StoreError(f"blob {sha256} the catalog names is not in {catalog.location}")
            with reader:
                copier.from_stream(sha256, reader.chunks(), catalog.location)
        if progress is not None:
            progress(done, len(names))
    copier.sync()


# --- backup -----------------------------------------------------------------------------


def backup(location: str, dest: str | os.PathLike[str], *, copy: bool = False,
           progress: Progress | None = None) -> BackupDone:
    """Back up the archive at ``location`` (live: deposits may go on) into the directory ``dest``.

    ``copy``: copy blob files even where a hard link could be made (a link
    shares the archive's disk blocks: it survives ``rm -rf``, not damage to the disk).
    """
    from pdi.archive.catalog.opening import open_store

    target = Path(dest)
    started_at = _now()
    store = "postgres" if is_postgres_url(location) else "sqlite"
    # as it is: a backup taken by a newer pdi before it migrates the archive is what the older one can open
    catalog = open_store(location, create=False, migrate=False)  # NotFoundError when there is no archive
    try:
        if store == "sqlite" and _within(target, Path(location)):
            raise ImmutabilityError(
                f"backup destination {target} is inside the archive it would back up ({location}): it would go"
                " with the archive (rm -rf) and be taken for the archive's own files; give a place outside it")
        _prepare_destination(target, store, _source(location, store))
        if store == "sqlite":
            return _backup_sqlite(catalog, Path(location), target, started_at, copy, progress)
        return _backup_postgres(catalog, location, target, started_at, progress)
    finally:
        catalog.close()


def schema_version_at(location: str) -> int | None:
    """The schema version of the archive at ``location`` as it is (not migrated); ``None`` where there is none."""
    from pdi.archive.catalog.opening import open_store

    try:
        catalog = open_store(location, create=False, migrate=False)
    except NotFoundError:
        return None
    try:
        return catalog.schema_version()
    finally:
        catalog.close()


def _backup_sqlite(catalog: SQLStore, root: Path, dest: Path, started_at: str, copy: bool,
                   progress: Progress | None) -> BackupDone:
    files = None if catalog.blob_store_url() is not None else root
    snapshot = dest / (CATALOG + ".partial")
    for leftover in (snapshot, snapshot.with_name(snapshot.name + "-journal")):
        leftover.unlink(missing_ok=True)
    source = sqlite3.connect(root / CATALOG, isolation_level=None, timeout=60)
    try:
        pages, page_size = (source.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
        _check_space(dest, pages * page_size)
        # one read transaction: every step copies the same commit, whatever writers do meanwhile
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        _copy_catalog(source, snapshot)
        source.execute("COMMIT")
        copied = sqlite3.connect(f"file:{snapshot}?mode=ro", uri=True)
        try:
            names = list(_named_blobs(copied))
            schema_version = _schema_version(copied)
        finally:
            copied.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot copy the catalog {root / CATALOG} to {snapshot}: {exc}") from exc
    finally:
        source.close()
    copier = BlobCopier(dest, link=not copy and files is not None and _same_device(root / "blobs", dest / "blobs"))
    needed = 0 if copier.link else sum(size for name, size in names if not copier.has(name, size))
    _check_space(dest, needed)
    _copy_blobs(copier, catalog, names, files, progress)
    os.replace(snapshot, dest / CATALOG)
    fsync_dir(dest)
    _write_marker(dest, "sqlite", _source(str(root), "sqlite"), started_at, len(names), schema_version)
    return BackupDone("sqlite", copier.copied, copier.linked, copier.present, copier.octets, started_at)


# --- PostgreSQL -------------------------------------------------------------------------

_VERSION = re.compile(r"\(PostgreSQL\) (\d+)")


def _postgres_tool(name: str, server_major: int) -> str:
    """The path of ``pg_dump`` or ``pg_restore``, checked to be at least the server's major version."""
    path = shutil.which(name)
    if path is None:
        raise StoreError(f"{name} not found: install Debian's postgresql-client-{server_major}"
                         " (the server's major version)")
    try:
        said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise StoreError(f"cannot run {path} --version: {exc}") from exc
    found = _VERSION.search(said)
    if found is None:
        raise StoreError(f"{path} --version said {said.strip()!r}, not a PostgreSQL version")
    if int(found.group(1)) < server_major:
        raise StoreError(f"{path} is PostgreSQL {found.group(1)}, older than the server ({server_major}):"
                         f" install Debian's postgresql-client-{server_major}")
    return path


def _server_major(url: str) -> tuple[int, str | None, bool]:
    """The server's major version, the schema the URL's search_path names (``None``: the default), and whether
    the URL holds a catalog."""
    try:
        import psycopg
    except ImportError as exc:  # pdi installed without its postgres extra
        missing_extra("postgres", exc)

    try:
        with psycopg.connect(url, connect_timeout=30) as conn:
            number = int(conn.execute("SHOW server_version_num").fetchone()[0])  # type: ignore[index]
            path = str(conn.execute("SHOW search_path").fetchone()[0])  # type: ignore[index]
            holds = conn.execute("SELECT to_regclass('series') IS NOT NULL").fetchone()[0]  # type: ignore[index]
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the PostgreSQL server: {exc}") from exc
    first = path.split(",")[0].strip().strip('"')
    named = None if first in ("$user", "public") else first
    return number // 10000, named, bool(holds)


def _make_way_for_schema(url: str, schema: str) -> None:
    """Before restoring a backup of the schema ``schema`` (the one ``url`` names): an empty one is dropped
    (``pg_restore`` makes it again)."""
    try:
        import psycopg
    except ImportError as exc:  # pdi installed without its postgres extra
        missing_extra("postgres", exc)

    try:
        with psycopg.connect(url, connect_timeout=30, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone():
                conn.execute(psycopg.sql.SQL("DROP SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    except psycopg.errors.DependentObjectsStillExist as exc:
        raise ImmutabilityError(f"the schema {schema!r} --to names is not empty: restore into an empty one") from exc
    except psycopg.Error as exc:
        raise StoreError(f"cannot prepare the schema {schema!r}: {exc}") from exc


def _run_tool(argv: list[str], what: str, stdin: Any = subprocess.DEVNULL) -> None:
    """Run ``pg_dump``/``pg_restore`` (reading ``stdin``): its messages kept to their last 64 KiB, a failure a
    :class:`StoreError`."""
    with subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as child:
        assert child.stderr is not None
        said = bytearray()
        while chunk := child.stderr.read(8192):
            said += chunk
            del said[:-65536]
        status = child.wait()
    if status != 0:
        raise StoreError(f"{what} failed (exit {status}): {said.decode(errors='replace').strip()[-2000:]}")


def _dump_estimate(url: str, in_database: bool) -> int:
    """Octets a ``pg_dump`` of the catalog ``url`` names may take, at most about: its tables' data without their
    indexes (which a dump does not hold), and the large objects' when the blobs are in the database, with room
    for what compressing octets that do not compress adds."""
    import psycopg

    query = ("SELECT COALESCE(SUM(pg_table_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n"
             " ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'm') AND n.nspname = current_schema()")
    try:
        with psycopg.connect(url, connect_timeout=30) as conn:
            size = int(conn.execute(query).fetchone()[0])  # type: ignore[index]
            if in_database:
                size += int(conn.execute("SELECT pg_table_size('pg_largeobject')").fetchone()[0])  # type: ignore[index]
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the PostgreSQL server: {exc}") from exc
    return size + size // 64 + (1 << 20)  # what does not compress grows a little in zlib, and the dump's own list


def _backup_postgres(catalog: SQLStore, url: str, dest: Path, started_at: str,
                     progress: Progress | None) -> BackupDone:
    major, schema, _ = _server_major(url)
    pg_dump = _postgres_tool("pg_dump", major)
    # the dump is compressed: its tables' size is about the most it takes (the last dump is kept till it is done)
    _check_space(dest, _dump_estimate(url, catalog.blob_store_url() is None))
    partial = dest / (DUMP + ".partial")
    partial.unlink(missing_ok=True)
    argv = [pg_dump, "--format=custom", "--no-owner", "--blobs", f"--file={partial}"]
    if schema is not None:
        argv.append(f"--schema={schema}")
    try:
        _run_tool([*argv, f"--dbname={url}"], "pg_dump")
        with partial.open("rb") as f:
            os.fsync(f.fileno())
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    copier = BlobCopier(dest, link=False)
    if catalog.blob_store_url() is not None:
        # every blob the dump names is named now too (a name is only ever added, but by a purge)
        names = list(catalog.named_blobs())
        _check_space(dest, sum(size for name, size in names if not copier.has(name, size)))
        _copy_blobs(copier, catalog, names, None, progress)
    os.replace(partial, dest / DUMP)
    fsync_dir(dest)
    _write_marker(dest, "postgres", _source(url, "postgres"), started_at, copier.copied + copier.present,
                  catalog.schema_version(), schema)
    return BackupDone("postgres", copier.copied, copier.linked, copier.present, copier.octets, started_at)


# --- restore -----------------------------------------------------------------------------


def restore(source: str | os.PathLike[str], to: str | None = None, *, copy: bool = False,
            progress: Progress | None = None, blobs: str | None = None) -> tuple[str, BackupDone]:
    """Restore the backup in ``source`` to ``to`` (default: where it was taken); where, and what was done.

    ``copy``: copy blob files even where a hard link could be made. ``blobs`` (``s3://BUCKET/PREFIX``): an
    archive whose blobs are in S3 is restored with them in this store instead of the one it recorded, every blob
    uploaded there from the backup (a drill that must not share the live archive's bucket, or a bucket lost).
    """
    src = Path(source)
    marker = read_marker(src)
    if blobs is not None:
        from pdi.archive.blobs.s3 import S3Blobs, S3Location

        blobs = str(S3Location.parse(blobs))
        recorded = _recorded_blob_store(src, marker)
        if recorded is None:
            raise StoreError(f"{src} is a backup of an archive that keeps its blobs beside its catalog, not in S3:"
                             " --blobs names where an S3 archive's blobs are restored; nothing was restored")
        if recorded == blobs:
            blobs = None  # the store the archive records: restored as without --blobs
        elif recorded:  # (a PostgreSQL dump's is read once the dump is checked)
            S3Blobs.open(blobs).check_bucket()  # a bucket that is not there is said before anything is written
    if to is None and not isinstance(marker.get("source"), str):
        raise StoreError(f"{src}'s marker names no place it was taken from: give --to")
    location = to if to is not None else str(marker["source"])
    if to is None and "***" in location:
        raise StoreError(f"{src} was taken from {location}, whose password is not kept: give --to")
    started_at = _now()
    from pdi.archive.store import SCHEMA_VERSION

    # what is read of the backup before anything is written: plain files (a named pipe would hold it for ever)
    held_file = src / (CATALOG if marker["store"] == "sqlite" else DUMP)
    if not held_file.exists():
        raise NotFoundError(f"{src} is not a whole pdi backup: it has no {held_file.name}; nothing was restored")
    _regular(held_file, "the backup's catalog")
    held = backup_schema_version(src, marker)
    if held is not None and held > SCHEMA_VERSION:  # restored, it could not be opened here: say so first
        raise StoreError(f"{src} holds an archive at schema version {held}, newer than this pdi understands"
                         f" ({SCHEMA_VERSION}): restore it with the release that made it, or a newer one;"
                         " nothing was written")
    if not is_postgres_url(location) and _within(Path(location), src):
        raise ImmutabilityError(f"{location} is inside the backup {src}: restore it to a place outside the backup")
    if marker["store"] == "sqlite":
        if is_postgres_url(location):
            raise StoreError(f"{src} is a backup of a SQLite archive: restore it to a directory"
                             " (pdi export and pdi import move an archive to PostgreSQL)")
        done = _restore_sqlite(src, Path(location), started_at, copy, progress, blobs)
    else:
        if not is_postgres_url(location):
            raise StoreError(f"{src} is a backup of a PostgreSQL archive: restore it --to a postgresql:// URL")
        schema = marker.get("schema")
        done = _restore_postgres(src, location, schema if isinstance(schema, str) else None, started_at, progress,
                                 marker.get("schema_version"), blobs)
    return location, dataclasses.replace(done, schema_version=held if held is not None else done.schema_version)


def _record_blob_store(catalog: Path, blobs: str) -> None:
    """Make the restored SQLite catalog ``catalog`` (not yet in its place) record ``blobs`` as its S3 store."""
    conn = sqlite3.connect(catalog, isolation_level=None)
    try:
        conn.execute("UPDATE blob_store SET url = ? WHERE id = 1", (blobs,))
    finally:
        conn.close()


def _recorded_blob_store(src: Path, marker: dict[str, Any]) -> str | None:
    """The S3 store a SQLite backup's catalog records (``None``: its blobs are files beside it); for a PostgreSQL
    backup ``""``: its dump is read for it once the dump has been checked (:func:`_dumped_blob_store`)."""
    if marker.get("store") != "sqlite":
        return ""
    try:
        conn = sqlite3.connect(f"file:{src / CATALOG}?mode=ro", uri=True, isolation_level=None)
        try:
            rows = conn.execute("SELECT url FROM blob_store").fetchall() if _has_table(conn, "blob_store") else []
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the backup's catalog {src / CATALOG}: {exc}") from exc
    return str(rows[0][0]) if rows else None


def _dumped_blob_store(pg_restore: str, dump: BinaryIO, path: Path) -> str | None:
    """The S3 store a checked PostgreSQL dump (``dump``, the file ``path``) records (its ``blob_store`` row, as
    ``pg_restore`` writes it out as text), or ``None``."""
    dump.seek(0)
    done = subprocess.run([pg_restore, "--data-only", "--table=blob_store", "--file=-"],
                          stdin=dump, capture_output=True, check=False)
    if done.returncode != 0:
        raise StoreError(f"pg_restore failed (exit {done.returncode}) reading {path}: "
                         f"{done.stderr.decode(errors='replace').strip()[-2000:]}")
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    for at, line in enumerate(lines):
        found = re.match(r"COPY \S+ \(([^)]*)\) FROM stdin;$", line)
        if found and at + 1 < len(lines) and lines[at + 1] != "\\.":
            columns = [c.strip().strip('"') for c in found.group(1).split(",")]
            row = lines[at + 1].split("\t")
            if "url" in columns and len(row) == len(columns):
                return row[columns.index("url")]
    return None


def _restore_sqlite(src: Path, root: Path, started_at: str, copy: bool, progress: Progress | None,
                    blobs: str | None = None) -> BackupDone:
    if (root / CATALOG).exists():
        raise ImmutabilityError(f"{root} holds an archive already: restore into an empty or new directory")
    if root.exists() and not root.is_dir():
        raise ImmutabilityError(f"{root} is a file, not a directory")
    if root.is_dir() and not {p.name for p in root.iterdir()} <= _UNFINISHED:
        raise ImmutabilityError(f"{root} is not empty: restore into an empty or new directory")
    backup_catalog = sqlite3.connect(f"file:{src / CATALOG}?mode=ro", uri=True, isolation_level=None)
    try:
        try:  # what the catalog names is read, and checked, before anything is made
            views = [row[0] for row in backup_catalog.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
            if views:  # a view in a table's place may read without end (a recursive one filled the disk)
                raise StoreError(f"{src / CATALOG} holds views ({', '.join(str(v)[:40] for v in views[:3])}), which"
                                 " no pdi catalog has: not a pdi backup; nothing was restored")
            _check_triggers(backup_catalog, src / CATALOG)
            _check_integrity(backup_catalog, src / CATALOG)
            names = _blob_names(_named_blobs(backup_catalog), src / CATALOG)
            blobs_s3 = backup_catalog.execute("SELECT url FROM blob_store").fetchall() if _has_table(
                backup_catalog, "blob_store") else []
            _check_blobs_said(backup_catalog, src, [] if blobs_s3 else names)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the backup's catalog {src / CATALOG}: {exc}") from exc
        if not blobs_s3:
            _check_blobs_there(src, root, names)
        made = not root.exists()  # then a failed restore takes it away again; leftovers it only adds to
        partial = root / (CATALOG + ".partial")
        try:
            try:
                for sub in ("blobs", "tmp"):
                    (root / sub).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot make the archive directory {root}: {exc}") from exc
            copier = BlobCopier(root, link=not copy and _same_device(src / "blobs", root / "blobs"), restoring=True)
            if not blobs_s3:
                _check_space(root, 0 if copier.link else sum(size for _, size in names))
                _copy_blobs(copier, None, names, src, progress)
            partial.unlink(missing_ok=True)
            _copy_catalog(backup_catalog, partial)
            if blobs is not None:
                _record_blob_store(partial, blobs)
            os.replace(partial, root / CATALOG)
            fsync_dir(root)
        except BaseException:
            if made:
                shutil.rmtree(root, ignore_errors=True)
            else:
                partial.unlink(missing_ok=True)
            raise
    except sqlite3.Error as exc:
        raise StoreError(f"cannot restore the catalog {src / CATALOG}: {exc}") from exc
    finally:
        backup_catalog.close()
    store = blobs or (str(blobs_s3[0][0]) if blobs_s3 else None)
    if store is not None:
        _restore_s3(src, store, names, progress, copier)
    return BackupDone("sqlite", copier.copied, copier.linked, copier.present, copier.octets, started_at,
                      blob_store=store, shares_blob_store=store is not None and blobs is None)


def backup_schema_version(src: Path, marker: dict[str, Any]) -> int | None:
    """The schema version of the catalog a backup holds: a SQLite backup's catalog's own, which its marker (when it
    says one) must say too (a :class:`StoreError` when it does not: the restore would be judged by the marker's);
    a PostgreSQL backup's marker's; ``None`` where neither says (an older PostgreSQL backup)."""
    said = marker.get("schema_version")
    if marker.get("store") != "sqlite" or not (src / CATALOG).exists():
        return said if isinstance(said, int) else None
    try:
        conn = sqlite3.connect(f"file:{src / CATALOG}?mode=ro", uri=True, isolation_level=None)
        try:
            held = _schema_version(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the backup's catalog {src / CATALOG}: {exc}") from exc
    if said is not None and said != held:
        raise StoreError(f"{src / MARKER} says the catalog is at schema version {str(said)[:20]}, but"
                         f" {src / CATALOG} is at {held}: this backup is damaged, restore another one; nothing"
                         " was restored")
    return held


def _schema_version(conn: sqlite3.Connection) -> int:
    """The schema version of the SQLite catalog ``conn`` reads, as the catalog itself tells it (0: none yet)."""
    if not _has_table(conn, "schema_migrations"):
        return 0
    return int(conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] or 0)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def _restore_postgres(src: Path, url: str, schema: str | None, started_at: str,
                      progress: Progress | None, marker_version: object = None, blobs: str | None = None) -> BackupDone:
    major, named, holds = _server_major(url)
    if holds:
        raise ImmutabilityError("the database --to names holds an archive already: restore into an empty one")
    pg_restore = _postgres_tool("pg_restore", major)
    if named != schema:
        raise StoreError(f"the backup holds the schema {schema or 'public'!r}: name a database whose"
                         f" search_path is it (…?options=-csearch_path%3D{schema}), not {named or 'public'!r}"
                         if schema is not None else f"the backup holds a whole database's archive (schema public):"
                         f" restore --to a database URL without a search_path (not {named!r})")
    from pdi.archive.postgres_dumps import RESTORE_OPTIONS, check_dump

    try:  # one file checked and restored (pdi.archive.postgres_dumps); neither a link nor a pipe waited on
        held = os.open(src / DUMP, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise StoreError(f"cannot read the backup's catalog {src / DUMP} (a file, not a link): {exc}") from exc
    with os.fdopen(held, "rb") as dump:
        if not stat.S_ISREG(os.fstat(held).st_mode):
            raise StoreError(f"the backup's catalog {src / DUMP} is not a file (a pipe, a device or a folder):"
                             " not a pdi backup")
        os.set_blocking(held, True)
        version = check_dump(dump, src / DUMP, url, schema, marker_version, pg_restore,
                             _postgres_tool("pg_dump", major))
        if blobs is not None:
            dumped = _dumped_blob_store(pg_restore, dump, src / DUMP)
            if dumped is None:
                raise StoreError(f"{src} is a backup of an archive that keeps its blobs in its database, not in S3:"
                                 " --blobs names where an S3 archive's blobs are restored; nothing was restored")
            if dumped == blobs:
                blobs = None
            else:
                from pdi.archive.blobs.s3 import S3Blobs

                S3Blobs.open(blobs).check_bucket()
        if schema is not None:
            _make_way_for_schema(url, schema)
        dump.seek(0)
        _run_tool([pg_restore, *RESTORE_OPTIONS, "--exit-on-error", "--single-transaction", f"--dbname={url}"],
                  "pg_restore", stdin=dump)
    copier = BlobCopier(src, link=False)
    from pdi.archive.catalog.opening import open_store

    catalog = open_store(url, create=False, migrate=False)  # the backup's schema, as the SQLite restore keeps it
    try:
        if blobs is not None:
            catalog.move_blob_store(blobs)
        recorded = catalog.blob_store_url()
        names = _blob_names(catalog.named_blobs(), "the restored catalog") if recorded is not None else []
    finally:
        catalog.close()
    if recorded is not None:
        _restore_s3(src, recorded, names, progress, copier)
    return BackupDone("postgres", copier.copied, copier.linked, copier.present, copier.octets, started_at, version,
                      blob_store=recorded, shares_blob_store=recorded is not None and blobs is None)


def _restore_s3(src: Path, recorded: str, names: list[tuple[str, int]],
                progress: Progress | None, copier: BlobCopier) -> None:
    """Upload again each blob the restored catalog names that the bucket lacks, from the backup's copy."""
    import uuid

    from pdi.archive.blobs.s3 import S3Blobs

    bucket = S3Blobs.open(recorded)
    for done, (sha256, size) in enumerate(names, 1):
        if bucket.size(sha256) == size:
            copier.present += 1
        else:
            path = blob_file(src, sha256)
            if not path.exists():
                raise NotFoundError(f"blob {sha256} is neither in {recorded} nor in the backup {src}")
            _regular(path, "the blob file")
            with path.open("rb") as f:
                ident = uuid.uuid4().hex
                info = bucket.upload(ident, f, None)
                if info.sha256 != sha256:
                    bucket.delete(bucket.staging_key(ident))
                    raise IntegrityError(f"blob {path} in the backup does not match its SHA-256 name")
                bucket.place(ident, info)
            copier.copied += 1
            copier.octets += size
        if progress is not None:
            progress(done, len(names))
