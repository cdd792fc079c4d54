"""Restores from a backup (``pdi restore``): the same copy as a backup, the other way.

The blobs first, then the catalog (SQLite: the backup API, then a rename; PostgreSQL: ``pg_restore``, once
the dump is found to hold only what pdi makes, :mod:`pdi.archive.postgres_dumps`; S3: each object the
catalog names that the bucket lacks is uploaded again, or, with ``blobs``, every object into another bucket).
A backup is read as a stranger's may be: its marker and catalog plain files, its catalog checked (no view,
no trigger pdi does not make, SQLite's integrity check), every blob it names a SHA-256 with a size, before
anything is written. How a backup is taken is :mod:`pdi.archive.backup`.
"""


from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from pdi._extras import missing_extra
from pdi.archive.backup_files import (
    BESIDE,
    CATALOG,
    DUMP,
    MARKER,
    READ_SIZE,
    SGML_FOLDER,
    UNFINISHED,
    BackupDone,
    BlobCopier,
    Progress,
    blob_file,
    check_files,
    check_space,
    copy_beside,
    copy_blobs,
    copy_catalog,
    copy_sgml_folder,
    gone,
    has_table,
    named_blobs,
    now,
    postgres_tool,
    read_marker,
    regular_file,
    run_tool,
    same_device,
    schema_version_of,
    server_major,
    tool_said,
    within_folder,
)
from pdi.archive.blobs import SHA256_HEX
from pdi.archive.blobs.files import fsync_dir
from pdi.archive.catalog.opening import is_postgres_url
from pdi.archive.modes import NEW_ARCHIVE, make_folder, modes_in
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    NotFoundError,
    StoreError,
    UnsupportedError,
)


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
            raise gone(sha256, blob_file(src, sha256), restoring=True)


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


# --- restore -----------------------------------------------------------------------------


def restore(source: str | os.PathLike[str], to: str | None = None, *, link: bool = False,
            progress: Progress | None = None, blobs: str | None = None) -> tuple[str, BackupDone]:
    """Restore the backup in ``source`` to ``to`` (default: where it was taken); where, and what was done.

    Blob files are copied, so that the restored archive shares no file with its backup (a blob changed in
    the one, after a ``chmod``, would be changed in the other). ``link``: hard-link them where the backup is on
    the same file system (seconds, whatever their size), the two sharing each blob's file. ``blobs``
    (``s3://BUCKET/PREFIX``): an archive whose blobs are in S3 is restored with them in this store instead of
    the one it recorded, every blob uploaded there from the backup (a drill that must not share the live
    archive's bucket, or a bucket lost).
    """
    src = Path(source)
    marker = read_marker(src)
    if blobs is not None:
        from pdi.archive.blobs.s3 import S3Location

        blobs = str(S3Location.parse(blobs))  # (held against the store the backup records once its catalog is read)
    if to is None and not isinstance(marker.get("source"), str):
        raise StoreError(f"{src}'s marker names no place it was taken from: give --to")
    location = to if to is not None else str(marker["source"])
    if to is None and "***" in location:
        raise StoreError(f"{src} was taken from {location}, whose password is not kept: give --to")
    started_at = now()
    from pdi.archive.store import SCHEMA_VERSION

    # what is read of the backup before anything is written: plain files (a named pipe would hold it for ever)
    held_file = src / (CATALOG if marker["store"] == "sqlite" else DUMP)
    if not held_file.exists():
        raise NotFoundError(f"{src} is not a whole pdi backup: it has no {held_file.name}; nothing was restored")
    regular_file(held_file, "the backup's catalog")
    check_files(src, marker)  # every octet of the catalog, the keys and the DTDs as the backup wrote them
    held = backup_schema_version(src, marker)
    if held is not None and held > SCHEMA_VERSION:  # restored, it could not be opened here: say so first
        raise StoreError(f"{src} holds an archive at schema version {held}, newer than this pdi understands"
                         f" ({SCHEMA_VERSION}): restore it with the release that made it, or a newer one;"
                         " nothing was written")
    if not is_postgres_url(location) and within_folder(Path(location), src):
        raise ImmutabilityError(f"{location} is inside the backup {src}: restore it to a place outside the backup")
    if marker["store"] == "sqlite":
        if is_postgres_url(location):
            raise UnsupportedError(f"{src} is a backup of a SQLite archive: restore it to a directory"
                                   " (pdi export and pdi import move an archive to PostgreSQL); nothing was written")
        done = _restore_sqlite(src, Path(location), started_at, link, progress, blobs)
    else:
        if not is_postgres_url(location):
            raise UnsupportedError(f"{src} is a backup of a PostgreSQL archive: restore it --to a postgresql:// URL;"
                                   " nothing was written")
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


def _other_blob_store(src: Path, recorded: str | None, blobs: str | None, own: str) -> str | None:
    """The store ``--blobs`` names for a backup whose catalog records ``recorded`` (``None``: its blobs are not in
    S3 but ``own``): ``None`` when it is that one or none was named; its bucket checked to be there, before
    anything is written."""
    if blobs is None or blobs == recorded:
        return None  # the store the archive records: restored as without --blobs
    if recorded is None:
        raise StoreError(f"{src} is a backup of an archive that keeps its blobs {own}, not in S3: --blobs names"
                         " where an S3 archive's blobs are restored; nothing was restored")
    from pdi.archive.blobs.s3 import S3Blobs

    S3Blobs.open(blobs).check_bucket()
    return blobs


def _dumped_blob_store(pg_restore: str, dump: BinaryIO, path: Path) -> str | None:
    """The S3 store a checked PostgreSQL dump (``dump``, the file ``path``) records (its ``blob_store`` row, as
    ``pg_restore`` writes it out as text), or ``None``."""
    dump.seek(0)
    done = subprocess.run([pg_restore, "--data-only", "--table=blob_store", "--file=-"],
                          stdin=dump, capture_output=True, check=False)
    if done.returncode != 0:
        raise StoreError(f"pg_restore failed (exit {done.returncode}) reading {path}: "
                         f"{tool_said(done.stderr.decode(errors='replace'), 'pg_restore')}")
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    for at, line in enumerate(lines):
        found = re.match(r"COPY \S+ \(([^)]*)\) FROM stdin;$", line)
        if found and at + 1 < len(lines) and lines[at + 1] != "\\.":
            columns = [c.strip().strip('"') for c in found.group(1).split(",")]
            row = lines[at + 1].split("\t")
            if "url" in columns and len(row) == len(columns):
                return row[columns.index("url")]
    return None


def _restore_sqlite(src: Path, root: Path, started_at: str, link: bool, progress: Progress | None,
                    blobs: str | None = None) -> BackupDone:
    if (root / CATALOG).exists():
        raise ImmutabilityError(f"{root} holds an archive already: restore into an empty or new directory")
    if root.exists() and not root.is_dir():
        raise ImmutabilityError(f"{root} is a file, not a directory")
    if root.is_dir() and not {p.name for p in root.iterdir()} <= UNFINISHED:
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
            names = _blob_names(named_blobs(backup_catalog), src / CATALOG)
            blobs_s3 = backup_catalog.execute("SELECT url FROM blob_store").fetchall() if has_table(
                backup_catalog, "blob_store") else []
            _check_blobs_said(backup_catalog, src, [] if blobs_s3 else names)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the backup's catalog {src / CATALOG}: {exc}") from exc
        blobs = _other_blob_store(src, str(blobs_s3[0][0]) if blobs_s3 else None, blobs, "beside its catalog")
        if not blobs_s3:
            _check_blobs_there(src, root, names)
        made = not root.exists()  # then a failed restore takes it away again; leftovers it only adds to
        partial = root / (CATALOG + ".partial")
        sgml_made = not (root / SGML_FOLDER).exists()
        try:
            try:  # as pdi init makes an archive, whatever the umask (pdi.archive.modes): not as the backup is
                make_folder(root, NEW_ARCHIVE, parents=True)
                modes = modes_in(root)
                for sub in () if blobs_s3 else ("blobs", "tmp"):  # blobs in an object store: no folder for them
                    make_folder(root / sub, modes.folder)
            except OSError as exc:
                raise StoreError(f"cannot make the archive directory {root}: {exc}") from exc
            copier = BlobCopier(root, link=link and same_device(src / "blobs", root / "blobs"), restoring=True,
                                folder_mode=modes.folder)
            if not blobs_s3:
                check_space(root, 0 if copier.link else sum(size for _, size in names))
                copy_blobs(copier, None, names, src, progress)
            partial.unlink(missing_ok=True)
            copy_catalog(backup_catalog, partial, modes.file)
            if blobs is not None:
                _record_blob_store(partial, blobs)
            beside = copy_beside(src, root, "the backup", modes.file)  # the keys and the registry, before the
            beside += copy_sgml_folder(src, root, "the backup", modes)  # catalog is; and the archive's SGML DTDs
            os.replace(partial, root / CATALOG)
            fsync_dir(root)
        except BaseException:
            if made:
                shutil.rmtree(root, ignore_errors=True)
            else:  # the place held none of them (or it was refused as not empty): what this restore wrote
                for name in (CATALOG + ".partial", *BESIDE, *(n + ".partial" for n in BESIDE)):
                    (root / name).unlink(missing_ok=True)
                if sgml_made:
                    shutil.rmtree(root / SGML_FOLDER, ignore_errors=True)
            raise
    except sqlite3.Error as exc:
        raise StoreError(f"cannot restore the catalog {src / CATALOG}: {exc}") from exc
    finally:
        backup_catalog.close()
    store = blobs or (str(blobs_s3[0][0]) if blobs_s3 else None)
    if store is not None:
        _restore_s3(src, store, names, progress, copier)
    return BackupDone("sqlite", copier.copied, copier.linked, copier.present, copier.octets, started_at,
                      blob_store=store, shares_blob_store=store is not None and blobs is None, beside=beside)


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
            held = schema_version_of(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the backup's catalog {src / CATALOG}: {exc}") from exc
    if said is not None and said != held:
        raise StoreError(f"{src / MARKER} says the catalog is at schema version {str(said)[:20]}, but"
                         f" {src / CATALOG} is at {held}: this backup is damaged, restore another one; nothing"
                         " was restored")
    return held


def _restore_postgres(src: Path, url: str, schema: str | None, started_at: str,
                      progress: Progress | None, marker_version: object = None, blobs: str | None = None) -> BackupDone:
    try:
        major, named, holds = server_major(url)
    except StoreError as exc:
        from pdi.archive.postgres_dumps import role_and_database

        role, database = role_and_database(url)  # ROLE, NAME for a URL libpq cannot read (what exc says already)
        raise StoreError(f"{exc}; pdi restore restores into an empty database that is there: if it is not, make it"
                         f" first, that role's own (createdb --owner {role} --template template0 --lc-ctype C.UTF-8"
                         f" {database}); nothing was restored") from exc
    if holds:
        raise ImmutabilityError("the database --to names holds an archive already: restore into an empty one")
    pg_restore = postgres_tool("pg_restore", major)
    if named != schema:
        # the place given is not of the backup's kind: the user's to mend, not a failure of the storage (exit 6)
        raise UnsupportedError(f"the backup holds the schema {schema or 'public'!r}: name a database whose"
                               f" search_path is it (…?options=-csearch_path%3D{schema}), not {named or 'public'!r}"
                               if schema is not None else f"the backup holds a whole database's archive (schema"
                               f" public): restore --to a database URL without a search_path (not {named!r})")
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
                             postgres_tool("pg_dump", major))
        if blobs is not None:
            blobs = _other_blob_store(src, _dumped_blob_store(pg_restore, dump, src / DUMP), blobs, "in its database")
        if schema is not None:
            _make_way_for_schema(url, schema)
        dump.seek(0)
        run_tool([pg_restore, *RESTORE_OPTIONS, "--exit-on-error", "--single-transaction", f"--dbname={url}"],
                  "pg_restore", stdin=dump)
    copier = BlobCopier(src, link=False)
    from pdi.archive.catalog.opening import open_store

    catalog = open_store(url, create=False, older="keep")  # the backup's schema, as the SQLite restore keeps it
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
            regular_file(path, "the blob file")
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
