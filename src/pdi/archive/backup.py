"""Consistent backups of a live archive (``pdi backup``): what a backup holds, and how it is taken.

A backup is a directory marked by ``pdi-backup.json``:

- a **SQLite catalog** is copied by SQLite's online backup API
  (:meth:`sqlite3.Connection.backup`, :data:`~pdi.archive.backup_files.PAGES_A_STEP` pages at a time, so
  memory stays bounded) inside one read transaction of the live catalog: the
  copy is the catalog as one commit left it, whatever deposits go on. Blobs of
  at most 64 KiB are rows of the catalog, so they are in the copy.
- **PostgreSQL** is dumped by its own ``pg_dump -Fc`` (one snapshot of the
  whole database, large objects and ``blob_parts`` included; an archive in a
  schema, that schema; never a ``pdi_restore_check_…`` schema a stopped
  restore's check left) to ``catalog.dump``, restored by ``pg_restore`` into an
  empty database. The ``pg_dump`` must be at least the server's major version.
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
blobs are all there: an interrupted backup leaves the previous one whole. One backup into a directory runs at
a time (an exclusive lock on the directory, held while it runs): a second one started meanwhile is refused, since
it would take the first one's catalog copy and scratch away from under it.

A restore is :mod:`pdi.archive.restore`; what both read and write of a backup is :mod:`pdi.archive.backup_files`.
"""


from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pdi.archive.backup_files import (
    CATALOG,
    DUMP,
    FILES,
    FORMAT,
    MARKER,
    BackupDone,
    BlobCopier,
    Progress,
    check_space,
    copy_beside,
    copy_blobs,
    copy_catalog,
    copy_sgml_folder,
    file_digests,
    named_blobs,
    now,
    postgres_tool,
    read_marker,
    run_tool,
    same_device,
    schema_version_of,
    server_major,
    sgml_folder_left_out,
    unfinished_backup,
    within_folder,
)
from pdi.archive.blobs.files import fsync_dir, write_new
from pdi.archive.catalog.opening import is_postgres_url, shown_location
from pdi.archive.modes import Modes, make_folder, make_private, modes_in
from pdi.errors import ImmutabilityError, NotFoundError, StoreError

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore


def _make_destination(dest: Path, modes: Modes) -> None:
    """Make the directory ``dest`` if it is not there, of ``modes.folder`` whatever the umask (and nothing in it:
    that is for the backup holding its lock, :func:`_only_backup_into`, so that one refused since another runs
    into it leaves it as it was). A ``dest`` there already keeps its permissions: whoever made it chose them, and
    what the backup writes in it is private anyway."""
    if dest.exists() and not dest.is_dir():
        raise ImmutabilityError(f"backup destination {dest} is a file, not a directory")
    try:
        make_folder(dest, modes.folder, parents=True)
    except OSError as exc:
        raise StoreError(f"cannot make the backup directory {dest}: {exc}") from exc


def _prepare_destination(dest: Path, store: str, source: str, modes: Modes) -> None:
    """Check that the directory ``dest`` is empty or a backup of the same archive (``source``, as its marker
    names it: a SQLite archive's folder resolved, a PostgreSQL URL without its password), and make its folders."""
    if any(dest.iterdir()):
        if not (dest / MARKER).exists():
            if unfinished_backup({p.name for p in dest.iterdir()}):
                return _make_folders(dest, modes)  # a first backup that did not finish: taken up again
            raise ImmutabilityError(f"backup destination {dest} is not empty and is not a pdi backup (no {MARKER})")
        marker = read_marker(dest)
        if marker["store"] != store:
            raise ImmutabilityError(f"{dest} holds a backup of a {marker['store']} archive, not of this {store} one:"
                                    " back this one up into an empty or new directory")
        if not _same_archive(str(marker.get("source")), source, store):  # another archive's backup would be lost
            raise ImmutabilityError(
                f"{dest} holds the backup of another archive ({marker.get('source')}), not of {source}: back this"
                " one up into an empty or new directory (if the archive was moved, its old backup stays as it is)")
    _make_folders(dest, modes)


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


def _source(location: str, store: str) -> str:
    """How a backup's marker names the archive at ``location``: its folder resolved, or its URL as shown."""
    return str(Path(location).resolve()) if store == "sqlite" else shown_location(location)


def _make_folders(dest: Path, modes: Modes) -> None:
    """``blobs/`` and ``tmp/`` of ``modes.folder``, whatever the umask, and so when an earlier pdi made them 0755:
    a blob file is read-only to everyone (0444, and a hard link is the archive's own file), its folder keeps it."""
    try:
        for folder in (dest / "blobs", dest / "tmp"):
            folder.mkdir(mode=modes.folder, exist_ok=True)
            os.chmod(folder, modes.folder)
    except OSError as exc:
        raise StoreError(f"cannot make the backup directory {dest}: {exc}") from exc


@contextlib.contextmanager
def _only_backup_into(dest: Path) -> Iterator[None]:
    """While the backup into ``dest`` runs: an exclusive lock on the directory (:func:`fcntl.flock`, let go when
    the backup ends, or its process does), so that no other backup runs into it meanwhile. A second backup would
    remove the first's catalog copy (``catalog.sqlite.partial``) as a killed one's leftover, and take its scratch
    away before it was done (found in review, 2026-11-28: the first failed on its next blob); it is refused."""
    try:
        fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise StoreError(f"cannot open the backup directory {dest}: {exc}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"another pdi backup into {dest} is running: run this one again once it is done"
                             " (it copies only what is new since)") from None
        except OSError as exc:
            raise StoreError(f"cannot lock the backup directory {dest}: {exc}") from exc
        yield
    finally:
        os.close(fd)


def _clear_scratch(dest: Path) -> None:
    """Before the marker: take away what only taking the backup needed, so that it holds what a restore needs
    alone. ``tmp/`` (where each blob is copied before it is renamed into ``blobs/``) goes, with what a killed
    backup left there (no other backup into DEST runs meanwhile: :func:`_only_backup_into`). ``blobs/`` goes
    where it holds none (a PostgreSQL archive's blobs in its database, a SQLite archive's all rows of its
    catalog), as does a folder of it that a failed copy left empty. A restore makes the archive's own folders
    (:mod:`.restore`)."""
    scratch, blobs = dest / "tmp", dest / "blobs"
    try:
        if scratch.is_dir():
            for path in scratch.iterdir():
                path.unlink()
            scratch.rmdir()
        if blobs.is_dir():
            for folder in blobs.iterdir():
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
            if not any(blobs.iterdir()):
                blobs.rmdir()
    except OSError as exc:
        raise StoreError(f"cannot take away the backup's scratch in {dest}: {exc}") from exc


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    write_new(partial, data, mode)
    os.replace(partial, path)
    fsync_dir(path.parent)


def _write_marker(dest: Path, store: str, source: str, started_at: str, blobs: int, schema_version: int,
                  modes: Modes, schema: str | None = None) -> None:
    """The backup's marker: of what and when, its blobs, the catalog's schema version (what release can open it),
    ``schema``, the PostgreSQL schema the archive is in (``null``: SQLite, or a database's ``public``), and the
    SHA-256 of each of its files but its blobs (:data:`~pdi.archive.backup_files.FILES`), which a restore checks."""
    files = file_digests(dest, store)
    marker = {"format": FORMAT, "store": store, "source": source, "started_at": started_at,
              "finished_at": now(), "blobs": blobs, "schema_version": schema_version, "schema": schema,
              FILES: files}
    _write_atomically(dest / MARKER, json.dumps(marker, indent=1).encode() + b"\n", modes.file)


# --- backup -----------------------------------------------------------------------------


def backup(location: str, dest: str | os.PathLike[str], *, copy: bool = False,
           progress: Progress | None = None) -> BackupDone:
    """Back up the archive at ``location`` (live: deposits may go on) into the directory ``dest``.

    ``copy``: copy blob files even where a hard link could be made (a link
    shares the archive's disk blocks: it survives ``rm -rf``, not damage to the disk).
    """
    from pdi.archive.catalog.opening import open_store

    target = Path(dest)
    started_at = now()
    store = "postgres" if is_postgres_url(location) else "sqlite"
    # as it is: a backup taken by a newer pdi before it migrates the archive is what the older one can open
    catalog = open_store(location, create=False, older="keep")  # NotFoundError when there is no archive
    try:
        if store == "sqlite" and within_folder(target, Path(location)):
            raise ImmutabilityError(
                f"backup destination {target} is inside the archive it would back up ({location}): it would go"
                " with the archive (rm -rf) and be taken for the archive's own files; give a place outside it")
        modes = modes_in(Path(location) if store == "sqlite" else None)
        _make_destination(target, modes)
        with _only_backup_into(target):  # before DEST is read or anything made in it: another backup may run
            _prepare_destination(target, store, _source(location, store), modes)
            if store == "sqlite":
                return _backup_sqlite(catalog, Path(location), target, started_at, copy, progress, modes)
            return _backup_postgres(catalog, location, target, started_at, progress, modes)
    finally:
        catalog.close()


def schema_version_at(location: str) -> int | None:
    """The schema version of the archive at ``location`` as it is (not migrated); ``None`` where there is none."""
    from pdi.archive.catalog.opening import open_store

    try:
        catalog = open_store(location, create=False, older="keep")
    except NotFoundError:
        return None
    try:
        return catalog.schema_version()
    finally:
        catalog.close()


def _backup_sqlite(catalog: SQLStore, root: Path, dest: Path, started_at: str, copy: bool,
                   progress: Progress | None, modes: Modes) -> BackupDone:
    files = None if catalog.blob_store_url() is not None else root
    snapshot = dest / (CATALOG + ".partial")
    for leftover in (snapshot, snapshot.with_name(snapshot.name + "-journal")):
        leftover.unlink(missing_ok=True)
    source = sqlite3.connect(root / CATALOG, isolation_level=None, timeout=60)
    try:
        pages, page_size = (source.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
        check_space(dest, pages * page_size)
        # one read transaction: every step copies the same commit, whatever writers do meanwhile
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        copy_catalog(source, snapshot, modes.file)
        source.execute("COMMIT")
        copied = sqlite3.connect(f"file:{snapshot}?mode=ro", uri=True)
        try:
            names = list(named_blobs(copied))
            schema_version = schema_version_of(copied)
        finally:
            copied.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot copy the catalog {root / CATALOG} to {snapshot}: {exc}") from exc
    finally:
        source.close()
    copier = BlobCopier(dest, link=not copy and files is not None and same_device(root / "blobs", dest / "blobs"),
                        folder_mode=modes.folder)
    needed = 0 if copier.link else sum(size for name, size in names if not copier.has(name, size))
    check_space(dest, needed)
    copy_blobs(copier, catalog, names, files, progress)
    warnings: list[str] = []
    beside = (copy_beside(root, dest, "the archive", modes.file, warnings)
              + copy_sgml_folder(root, dest, "the archive", modes, warnings))
    warnings += sgml_folder_left_out(str(root))
    os.replace(snapshot, dest / CATALOG)
    _clear_scratch(dest)
    fsync_dir(dest)
    _write_marker(dest, "sqlite", _source(str(root), "sqlite"), started_at, len(names), schema_version, modes)
    return BackupDone("sqlite", copier.copied, copier.linked, copier.present, copier.octets, started_at,
                      beside=beside, warnings=tuple(warnings))


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
                     progress: Progress | None, modes: Modes) -> BackupDone:
    major, schema, _ = server_major(url)
    pg_dump = postgres_tool("pg_dump", major)
    # the dump is compressed: its tables' size is about the most it takes (the last dump is kept till it is done)
    check_space(dest, _dump_estimate(url, catalog.blob_store_url() is None))
    partial = dest / (DUMP + ".partial")
    partial.unlink(missing_ok=True)
    argv = [pg_dump, "--format=custom", "--no-owner", "--blobs", f"--file={partial}"]
    if schema is not None:
        argv.append(f"--schema={schema}")
    else:  # a schema a restore's check left in this database (an older pdi's, stopped by Ctrl-C): not the archive's,
        # and its restore would refuse it as a statement pdi does not make
        from pdi.archive.postgres_dumps import REFERENCE_PREFIX

        argv.append(f"--exclude-schema={REFERENCE_PREFIX}*")
    try:
        make_private(partial, modes.file)  # pg_dump writes into it as it is, not a file of the umask's
        run_tool([*argv, f"--dbname={url}"], "pg_dump")
        with partial.open("rb") as f:
            os.fsync(f.fileno())
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    copier = BlobCopier(dest, link=False, folder_mode=modes.folder)
    if catalog.blob_store_url() is not None:
        # every blob the dump names is named now too (a name is only ever added, but by a purge)
        names = list(catalog.named_blobs())
        check_space(dest, sum(size for name, size in names if not copier.has(name, size)))
        copy_blobs(copier, catalog, names, None, progress)
    os.replace(partial, dest / DUMP)
    _clear_scratch(dest)
    fsync_dir(dest)
    _write_marker(dest, "postgres", _source(url, "postgres"), started_at, copier.copied + copier.present,
                  catalog.schema_version(), modes, schema)
    return BackupDone("postgres", copier.copied, copier.linked, copier.present, copier.octets, started_at,
                      warnings=tuple(sgml_folder_left_out(url)))
