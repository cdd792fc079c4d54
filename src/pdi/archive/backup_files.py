"""What a backup is, for taking one and restoring one (:mod:`pdi.archive.backup`, :mod:`pdi.archive.restore`):
its marker and files, copying blobs (each checked against its SHA-256 as it streams), and PostgreSQL's tools.
"""


from __future__ import annotations

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pdi._extras import missing_extra
from pdi.archive.blobs import SHA256_HEX
from pdi.archive.blobs.files import fsync_dir, write_new
from pdi.archive.catalog.blobs import NAMED_OUTSIDE_ROWS
from pdi.archive.modes import Modes, make_folder, make_private
from pdi.archive.sqlite import BACKUP_MARKER
from pdi.errors import IntegrityError, NotFoundError, StoreError

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
#: The marker's record of the SHA-256 of each file the backup holds but its blobs (whose names are their SHA-256):
#: its catalog (or dump), each file of :data:`BESIDE` and of :data:`SGML_FOLDER` (:func:`file_digests`), checked
#: before a restore writes anything (:func:`check_files`). A marker an earlier pdi wrote has none.
FILES = "files"
#: Every key a marker this pdi or an earlier one writes holds (:func:`read_marker`): one of another name in a
#: marker without :data:`FILES` is a damaged marker (a flipped ``files`` would otherwise read as an earlier pdi's
#: marker, whose files are not checked); a later pdi's marker, which records its files, may hold more.
MARKER_KEYS = frozenset({"format", "store", "source", "started_at", "finished_at", "blobs", "schema_version",
                         "schema", FILES})
#: Files a directory archive may keep beside its catalog that are no rows of it: the signing key and the WACZ
#: key (:data:`pdi.archive.signing_key.KEY_FILE`, ``WACZ_KEY_FILE``: private keys, which cannot be made again) and
#: the registry (:data:`pdi.federation.registry.REGISTRY_FILE`). A backup holds each one the archive has, and a
#: restore puts it back (:func:`copy_beside`).
BESIDE = ("signing-key.pem", "wacz-key.pem", "registry.json")
#: The keys of :data:`BESIDE`, each with the variable that may name the archive's key's file elsewhere
#: (:data:`pdi.archive.signing_key.KEY_ENV`, ``WACZ_KEY_ENV``): a backup never removes one it holds
#: (:func:`copy_beside`).
KEYS = {"signing-key.pem": "PDI_SIGNING_KEY", "wacz-key.pem": "PDI_WACZ_KEY"}
#: The folder of a directory archive's own SGML DTDs and their catalog (:data:`pdi.archive.sgml_dtds.SGML_FOLDER`):
#: a backup holds its files, and never removes one (:func:`copy_sgml_folder`).
SGML_FOLDER = "sgml"
#: The largest file of the SGML folder a backup copies (:data:`pdi.archive.sgml_dtds.MAX_DTD`).
MAX_SGML_FILE = 16 << 20
#: The largest file beside a catalog a backup copies: more than any key or registry pdi writes (a registry is at
#: most 4 MiB, :data:`pdi.federation.registry.MAX_REGISTRY`).
MAX_BESIDE = 8 << 20

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
    #: The files beside a directory archive's catalog (:data:`BESIDE`) the backup copied, or the restore put back.
    beside: tuple[str, ...] = ()
    #: A backup's warnings, for standard error: a key it kept that the archive no longer has, or replaced with
    #: another (:func:`copy_beside`).
    warnings: tuple[str, ...] = ()


# --- the destination ----------------------------------------------------------------


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_marker(directory: Path) -> dict[str, Any]:
    """The marker of the backup in ``directory`` (:class:`NotFoundError` when it is none)."""
    path = directory / MARKER
    regular_file(path, "the backup's marker")
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
    if FILES not in marker and set(marker) - MARKER_KEYS:
        raise StoreError(f"{path} holds {', '.join(repr(str(k)[:40]) for k in sorted(set(marker) - MARKER_KEYS))},"
                         f" which no {FORMAT} marker holds: it is damaged")
    return marker


def held_files(directory: Path, store: str) -> list[str]:
    """The files of the backup (or the backup being taken) in ``directory`` whose SHA-256 its marker records: its
    catalog (:data:`CATALOG`, a PostgreSQL archive's :data:`DUMP`), each file of :data:`BESIDE` it holds and each
    file of its :data:`SGML_FOLDER` (``sgml/filing.dtd``), as names relative to it."""
    names = [CATALOG if store == "sqlite" else DUMP]
    names += [name for name in BESIDE if os.path.lexists(directory / name)]
    folder = directory / SGML_FOLDER
    if _folder(folder):
        names += sorted(f"{SGML_FOLDER}/{e.name}" for e in os.scandir(folder) if not e.name.startswith("."))
    return names


def _folder(path: Path) -> bool:
    """Whether ``path`` is a folder, not a link to one (a backup's SGML folder that is a link is refused as it is
    copied, :func:`copy_sgml_folder`)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def file_digests(directory: Path, store: str) -> dict[str, str]:
    """The SHA-256 of each of the backup's :func:`held_files`, for its marker (:data:`FILES`)."""
    digests = {}
    for name in held_files(directory, store):
        path = directory / name
        regular_file(path, "the backup's file")
        try:
            with path.open("rb") as f:
                digests[name] = stream_digest(f)
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return digests


def check_files(directory: Path, marker: dict[str, Any]) -> None:
    """Before a restore writes anything: each file of the backup in ``directory`` whose SHA-256 its marker records
    (:data:`FILES`) is there and has it, and the backup holds no such file the marker does not name. A
    :class:`IntegrityError` names the first that does not (a flipped octet in a catalog's row, a key or a DTD
    passes every other check, and was restored as it was: found 2026-11-30). A marker an earlier pdi wrote
    records none: its files are checked only as they are read."""
    said = marker.get(FILES)
    if said is None:
        return
    where = directory / MARKER
    damaged = "this backup is damaged, restore another one; nothing was restored"
    held = held_files(directory, str(marker["store"]))
    if not isinstance(said, dict) or not all(isinstance(d, str) and SHA256_HEX.fullmatch(d) for d in said.values()):
        raise StoreError(f"{where}: its {FILES!r} are not names with SHA-256 digests: it is damaged")
    for name in said:
        if name not in held:
            if name in BESIDE or re.fullmatch(rf"{SGML_FOLDER}/[^/.][^/]*", name):
                raise IntegrityError(f"{directory / name} is missing from the backup, whose {MARKER} records it:"
                                     f" {damaged}")
            raise StoreError(f"{where} records a file {str(name)[:80]!r} no pdi backup holds: it is damaged")
    for name in held:
        path = directory / name
        if name not in said:
            raise IntegrityError(f"{path} is not one of the files {MARKER} records (put there since the backup was"
                                 f" taken, or the marker damaged): {damaged}")
        regular_file(path, "the backup's file")
        try:
            with path.open("rb") as f:
                found = stream_digest(f)
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if found != said[name]:
            raise IntegrityError(f"{path} does not match the SHA-256 {MARKER} records for it (it is {found}, not"
                                 f" {said[name]}): {damaged}")


def within_folder(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it (each resolved: a link or ``..`` does not hide it)."""
    inner, outer = path.resolve(), folder.resolve()
    return inner == outer or outer in inner.parents


#: What a backup that did not finish leaves in its directory.
UNFINISHED = frozenset({"blobs", "tmp", CATALOG + ".partial", CATALOG + ".partial-journal", DUMP + ".partial"})


def unfinished_backup(names: set[str]) -> bool:
    """Whether a destination holding the files ``names`` (and no marker) is a first backup that did not finish: what
    a backup makes before its marker, the files beside the catalog (:data:`BESIDE`) only with the catalog's copy they
    are made after (a folder holding a key and nothing else is someone's, not a backup's)."""
    beside = {name for name in names if name.removesuffix(".partial") in BESIDE or name == SGML_FOLDER}
    return names - beside <= UNFINISHED and (not beside or CATALOG + ".partial" in names)


def check_space(dest: Path, needed: int) -> None:
    free = shutil.disk_usage(dest).free
    if needed + SPARE > free:
        raise StoreError(
            f"not enough space at {dest}: about {needed >> 20} MiB needed (and {SPARE >> 20} MiB spare),"
            f" {free >> 20} MiB free"
        )


# --- blobs ------------------------------------------------------------------------------


def blob_file(root: Path, sha256: str) -> Path:
    return root / "blobs" / sha256[:2] / sha256


class BlobCopier:
    """Copies blobs into ``root/blobs`` (by a hard link where it can), each checked against its name."""

    def __init__(self, root: Path, *, link: bool = True, restoring: bool = False,
                 folder_mode: int | None = None) -> None:
        self.root = root
        self.link = link
        #: A backup's (:attr:`Modes.folder`): each ``blobs/ab/`` it makes of it, whatever the umask.
        self.folder_mode = folder_mode
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
                return stream_digest(f) == sha256
        except FileNotFoundError:
            return False

    def from_file(self, sha256: str, source: Path) -> None:
        """Place the file ``source`` (hard-linked, or copied) and check its SHA-256 is ``sha256``."""
        regular_file(source, "the blob file")
        target = blob_file(self.root, sha256)
        self._make_folder(target.parent)
        temporary = self.root / "tmp" / f"{sha256}.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        if self.link:
            try:
                os.link(source, temporary)
            except FileNotFoundError:
                raise gone(sha256, source, self.restoring) from None
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    raise StoreError(f"cannot link {source} to {temporary}: {exc}") from exc
                self.link = False  # another file system: copy from now on
            else:
                try:
                    with temporary.open("rb") as f:
                        self._check(sha256, stream_digest(f), source)
                except BaseException:
                    temporary.unlink(missing_ok=True)
                    raise
                self._place(temporary, target)
                self.linked += 1
                return
        try:
            f = source.open("rb")
        except FileNotFoundError:
            raise gone(sha256, source, self.restoring) from None
        with f:
            self.from_stream(sha256, iter(lambda: f.read(READ_SIZE), b""), str(source))

    def from_stream(self, sha256: str, chunks: Iterator[bytes], where: str) -> None:
        """Write ``chunks`` to the blob's file, hashing them as they stream; refused unless they are ``sha256``."""
        target = blob_file(self.root, sha256)
        self._make_folder(target.parent)
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

    def _make_folder(self, folder: Path) -> None:
        if self.folder_mode is None:
            folder.mkdir(exist_ok=True)  # read from, not written to (a PostgreSQL restore's)
            return
        make_folder(folder, self.folder_mode)

    def _check(self, sha256: str, found: str, where: object) -> None:
        if found != sha256:
            then = ("this backup is damaged (a backup hard-linked to its archive shares its blocks): restore another"
                    " one" if self.restoring else
                    "run pdi verify on the archive and mend it (--repair-from DIR copies it from an earlier backup"
                    " restored to DIR, --repair fetches it from a mirror), then back it up")
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


def gone(sha256: str, source: Path, restoring: bool) -> StoreError:
    if restoring:  # after the loss a restore is for, the backup cannot be made again: say what it lacks
        return StoreError(f"blob {sha256} the backup's catalog names is missing from the backup ({source}):"
                          " this backup is incomplete or damaged; restore another one")
    return StoreError(f"blob {sha256} the catalog names is missing from the archive ({source}): run pdi verify"
                      " on the archive, which says whether it was missing before (then mend it: --repair-from DIR"
                      " copies it from an earlier backup restored to DIR, --repair fetches it from a mirror) or was"
                      " taken during the backup by a purge or pdi"
                      " verify --remove-unreferenced (then run the backup again)")


def stream_digest(f: Any) -> str:
    digest = hashlib.sha256()
    while chunk := f.read(READ_SIZE):
        digest.update(chunk)
    return digest.hexdigest()


def named_blobs(conn: sqlite3.Connection) -> Iterator[tuple[str, int]]:
    """The blobs a SQLite catalog names that are not rows of its own (name, size), by name."""
    yield from conn.execute(NAMED_OUTSIDE_ROWS)


def regular_file(path: Path, what: str) -> None:
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


def copy_beside(source: Path, dest: Path, what: str, mode: int,
                warnings: list[str] | None = None) -> tuple[str, ...]:
    """Copy the files of :data:`BESIDE` that ``source`` holds into ``dest`` (the keys mode 0600, as ``pdi keys
    init`` makes them, and the registry ``mode``, whatever the umask: :mod:`pdi.archive.modes`), each written
    beside and renamed into place, fsynced; a name ``source`` does not hold is removed from ``dest`` (a backup into
    the same DEST again is the archive as it is now). The names copied.

    ``warnings`` is given by a backup (``dest`` a backup of the archive ``source``): a key of :data:`KEYS` it
    holds that the archive no longer has is kept, never removed (a lost key cannot be made again, and the backup's
    may be its last copy: found 2026-11-30, the backup after an ``rm signing-key.pem`` removed it, saying nothing),
    and unless the file ``$PDI_SIGNING_KEY`` (``$PDI_WACZ_KEY``) names holds the same key, a warning says so and
    what to do. A key the archive has that is another than the backup's (a new one, made once the old one was
    moved away) replaces it, as a backup is the archive as it is now, and a warning says so too.

    ``what`` says whose the files are in an error. A file that is not a plain one (a link, a pipe) or larger than
    :data:`MAX_BESIDE` is refused before anything of it is written."""
    copied = []
    for name in BESIDE:
        path = source / name
        regular_file(path, f"{what}'s {name}")
        target = dest / name
        guarded = warnings is not None and name in KEYS and _plain(target)
        if not path.exists():
            if guarded:
                assert warnings is not None
                warnings.extend(_kept_key(source, target, KEYS[name]))
            elif target.exists():
                target.unlink()
            continue
        partial = dest / (name + ".partial")
        try:
            with path.open("rb") as f:
                data = f.read(MAX_BESIDE + 1)
            if len(data) > MAX_BESIDE:
                raise StoreError(f"{what}'s {path} is larger than any key or registry pdi writes ({MAX_BESIDE:,}"
                                 " octets): not copied")
            if guarded and _read_beside(target) != data:
                assert warnings is not None
                warnings.append(f"replaced {target} in the backup with {path}, another key (made once the old one"
                                " was moved away: a backup is the archive as it is now): the old key is in this"
                                " backup no more; keep the copy that was moved away")
            partial.unlink(missing_ok=True)
            write_new(partial, data, 0o600 if name in KEYS else mode)
            os.replace(partial, target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise StoreError(f"cannot copy {path} to {target}: {exc}") from exc
        copied.append(name)
    return tuple(copied)


def copy_sgml_folder(source: Path, dest: Path, what: str, modes: Modes,
                     warnings: list[str] | None = None) -> tuple[str, ...]:
    """Copy the files of ``source``'s SGML folder (:data:`SGML_FOLDER`: the archive's own DTDs and their catalog)
    into ``dest``'s, each written beside and renamed into place, fsynced (a DTD read-only, as ``pdi sgml add``
    writes it); those ``dest`` holds already, the same, are left. The names copied (``sgml/filing.dtd``).
    ``modes`` (:mod:`pdi.archive.modes`): the folder (one there already too) and its files of those permissions,
    whatever the umask (a DTD read-only).

    A document's passages are read with the DTD it was deposited with, so a DTD is never removed: ``warnings``
    (a backup's) is told of one the backup holds that the archive no longer has, or has other octets of (the
    archive's copy replaces it: a backup is the archive as it is now), kept or replaced. ``what`` says whose the
    files are in an error. A file that is not a plain one (a link, a folder) or larger than :data:`MAX_SGML_FILE`
    is refused before anything of it is written."""
    folder, target = source / SGML_FOLDER, dest / SGML_FOLDER
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise StoreError(f"cannot read {what}'s {folder}: {exc.strerror or exc}") from exc
    if mode is not None and not stat.S_ISDIR(mode):
        raise StoreError(f"{what}'s {folder} is not a folder (a link, or a file): pdi keeps its SGML DTDs in a folder")
    names = sorted(e.name for e in os.scandir(folder) if not e.name.startswith(".")) if mode is not None else []
    held = sorted(e.name for e in os.scandir(target) if not e.name.startswith(".")) if target.is_dir() else []
    if warnings is not None:
        for gone in sorted(set(held) - set(names)):
            warnings.append(f"kept {target / gone} in the backup, though the archive has no {folder / gone}: a"
                            " document deposited with a DTD is read with it; put it back if it was lost")
    copied = []
    for name in names:
        path = folder / name
        regular_file(path, f"{what}'s {SGML_FOLDER}/{name}")
        with path.open("rb") as f:
            data = f.read(MAX_SGML_FILE + 1)
        if len(data) > MAX_SGML_FILE:
            raise StoreError(f"{what}'s {path} is larger than any DTD pdi keeps ({MAX_SGML_FILE:,} octets): not copied")
        there = target / name
        if _plain(there):
            old = _read_beside(there) if os.path.getsize(there) <= MAX_SGML_FILE else b""
            if old == data:
                continue
            if warnings is not None and name != "catalog":
                warnings.append(f"replaced {there} in the backup with {path}, other octets (pdi sgml add never"
                                " replaces a DTD: it was changed by hand)")
        _make_sgml_folder(target, modes)
        partial = target / f".{name}.partial"
        try:
            partial.unlink(missing_ok=True)
            write_new(partial, data, modes.file if name == "catalog" else modes.file & ~0o222)
            os.replace(partial, there)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise StoreError(f"cannot copy {path} to {there}: {exc}") from exc
        copied.append(f"{SGML_FOLDER}/{name}")
    if copied:
        fsync_dir(target)
    elif _folder(target):
        _make_sgml_folder(target, modes)  # an earlier pdi's backup's folder (0755): this one's permissions
    return tuple(copied)


def _make_sgml_folder(target: Path, modes: Modes) -> None:
    """The SGML folder ``target`` of ``modes``, whatever the umask, made if it is not there, and one there already
    too (an earlier pdi's backup's was 0755; a restore's is new)."""
    if not make_folder(target, modes.folder):
        os.chmod(target, modes.folder)


def sgml_folder_left_out(location: str) -> list[str]:
    """What a backup of the archive at ``location`` says of an SGML folder it does not copy: the folder
    ``$PDI_SGML_CATALOG`` names (:data:`pdi.archive.sgml_dtds.SGML_ENV`), a PostgreSQL archive's (having no
    directory) or a directory archive's kept outside it, when it holds files. Like the key files ``$PDI_*`` name, it
    is the operator's to keep; unlike them it is no secret, and every pdi that deposits or reindexes SGML reads its
    DTDs from it, so the backup says where it is."""
    from pdi.archive.sgml_dtds import SGML_ENV, sgml_folder

    named = os.environ.get(SGML_ENV)
    if not named:
        return []
    folder = sgml_folder(location)
    if folder is None or ("://" not in location and os.path.abspath(folder) == os.path.abspath(Path(location) / SGML_FOLDER)):
        return []
    try:
        files = [e.name for e in os.scandir(folder) if not e.name.startswith(".")]
    except OSError:
        return []
    if not files:
        return []
    return [f"did not copy the archive's SGML folder {folder} (${SGML_ENV}; {len(files)} files): a backup holds"
            f" the archive's own {SGML_FOLDER}/ alone; keep that folder's DTDs with the archive's key files (every"
            " pdi that deposits SGML or runs pdi reindex --elements reads them; the passages kept do not need them)"]


def _kept_key(source: Path, held: Path, env: str) -> list[str]:
    """What to say of the key ``held`` a backup keeps though the archive ``source`` has it no more: nothing when
    the file ``$env`` names holds the same key (the archive keeps it there now, and the backup its copy)."""
    elsewhere = os.environ.get(env)
    where = f"{source} has no {held.name}"
    if not elsewhere:
        where += f" (nor does ${env} name one)"
    elif not os.path.isfile(elsewhere):  # a regular file, its links followed (a secret mounted as a file)
        where += f" and ${env} names {elsewhere}, which holds none"
    else:
        try:
            same = _read_beside(Path(elsewhere)) == _read_beside(held)
        except StoreError:
            same = False  # not to be read by this backup: said as another key
        if same:
            return []
        where += f" and ${env} names {elsewhere}, another key (which a backup does not copy)"
    return [f"kept {held} in the backup, though the archive {where}: a lost key cannot be made again, and this may"
            f" be its last copy. If it was lost, put it back: copy it to {source / held.name} (mode 0600), or"
            f" restore the backup (pdi restore); if the key was retired on purpose, remove {held} by hand"]


def _plain(path: Path) -> bool:
    """Whether ``path`` is there and a regular file (not a link)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_beside(path: Path) -> bytes:
    """The octets of a file of :data:`BESIDE` (at most :data:`MAX_BESIDE` and one), to compare two copies."""
    try:
        with path.open("rb") as f:
            return f.read(MAX_BESIDE + 1)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc


def copy_catalog(source: sqlite3.Connection, partial: Path, mode: int) -> None:
    """Copy the SQLite database ``source`` to the new file ``partial`` by SQLite's backup API, a step at a time,
    as one file (no ``-wal`` beside it, so that it can be renamed), fsynced. The file is made of ``mode``,
    whatever the umask, before a page is copied into it (SQLite makes its journal of the same)."""
    make_private(partial, mode)
    copied = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(copied, pages=PAGES_A_STEP)
        copied.execute("PRAGMA journal_mode = DELETE")
    finally:
        copied.close()
    with partial.open("rb") as f:
        os.fsync(f.fileno())


def same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def copy_blobs(copier: BlobCopier, catalog: SQLStore | None, names: list[tuple[str, int]],
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


# --- PostgreSQL -------------------------------------------------------------------------

VERSION_LINE = re.compile(r"\(PostgreSQL\) (\d+)")


def postgres_tool(name: str, server_major: int) -> str:
    """The path of ``pg_dump`` or ``pg_restore``, checked to be at least the server's major version."""
    path = shutil.which(name)
    if path is None:
        raise StoreError(f"{name} not found: install Debian's postgresql-client-{server_major}"
                         " (the server's major version)")
    try:
        said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise StoreError(f"cannot run {path} --version: {exc}") from exc
    found = VERSION_LINE.search(said)
    if found is None:
        raise StoreError(f"{path} --version said {said.strip()!r}, not a PostgreSQL version")
    if int(found.group(1)) < server_major:
        raise StoreError(f"{path} is PostgreSQL {found.group(1)}, older than the server ({server_major}):"
                         f" install Debian's postgresql-client-{server_major}")
    return path


def server_major(url: str) -> tuple[int, str | None, bool]:
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
        from pdi.archive.postgres.servers import redact_url

        # the server may well have answered (a database it does not have, a password it refused): no "reach"
        raise StoreError(f"cannot connect to the PostgreSQL database {redact_url(url)}: {exc}") from exc
    first = path.split(",")[0].strip().strip('"')
    named = None if first in ("$user", "public") else first
    return number // 10000, named, bool(holds)


def run_tool(argv: list[str], what: str, stdin: Any = subprocess.DEVNULL) -> None:
    """Run ``pg_dump``/``pg_restore`` (reading ``stdin``): its messages kept to their last 64 KiB, a failure a
    :class:`StoreError` saying :func:`tool_said`."""
    with subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as child:
        assert child.stderr is not None
        said = bytearray()
        while chunk := child.stderr.read(8192):
            said += chunk
            del said[:-65536]
        status = child.wait()
    if status != 0:
        raise StoreError(f"{what} failed (exit {status}): {tool_said(said.decode(errors='replace'), what)}")


#: How much of the statement a failed ``pg_restore`` names (``Command was: …``) its error keeps.
_STATEMENT_KEPT = 160


def tool_said(said: str, what: str) -> str:
    """What the PostgreSQL tool ``what`` wrote on its standard error, as an error's message: each of its own lines
    (``pg_restore: error: … ERROR:  permission denied for schema public``), libpq's ``DETAIL:`` and ``HINT:``, and the
    first line of each ``Command was:``, clipped; where it wrote none of those, its last 2,000 characters. (A failed
    statement's whole text, a function's body of a hundred lines, buried the error before it.)"""
    kept: list[str] = []
    for line in said.strip().splitlines():
        if line.startswith((f"{what}:", "DETAIL:", "HINT:")):
            kept.append(line.strip())
        elif line.startswith("Command was:"):
            kept.append(line if len(line) <= _STATEMENT_KEPT else line[:_STATEMENT_KEPT] + "…")
    return " / ".join(kept)[-2000:] if kept else said.strip()[-2000:]


def schema_version_of(conn: sqlite3.Connection) -> int:
    """The schema version of the SQLite catalog ``conn`` reads, as the catalog itself tells it (0: none yet)."""
    if not has_table(conn, "schema_migrations"):
        return 0
    return int(conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] or 0)


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None
