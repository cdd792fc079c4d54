"""Who may read an archive and its backups: the permissions of the folders and files pdi makes, whatever the umask.

An archive holds every private and embargoed document: the octets of each in a blob file, or in a row of the
catalog (a blob of at most 64 KiB, :mod:`pdi.archive.blobs.inline`), and the catalog's metadata of each, with the
hashes of its tokens. Under the common umask 022 a folder made without saying a mode is 0755 and a file 0644: open
to every local user. So pdi says the mode of each one it makes (docs/reference/backup.md, "Who can read an
archive"), as PostgreSQL's ``initdb`` makes its data directory 0700 (0750 only with ``--allow-group-access``):

- the archive's folder, when ``pdi init`` or ``pdi restore`` makes it, 0700; one there already (a systemd
  ``StateDirectory=``, a mount point, an operator's ``mkdir``) keeps its mode;
- what pdi makes in it (the catalog and SQLite's ``-wal`` and ``-shm`` beside it, ``blobs/`` and each folder in
  it, ``tmp/``, ``sgml/``, the registry) is its owner's alone, folders 0700 and files 0600, unless the archive's
  folder is deliberately shared with its group (:func:`modes_in`): then its group may read it too, 0750 and 0640,
  never write it. A key file is 0600 always; a blob file is read-only to everyone (0444), its folder keeps it.
  A folder made in a set-group-ID one keeps the bit, so that what is made in it stays of the shared group.
- in a shared archive, the catalog's ``-wal`` and ``-shm`` stay when its owner's last connection closes (empty),
  so that a member of the group, who may not make them, reads the catalog (:mod:`pdi.archive.sqlite`).

A backup follows the same rule (:mod:`pdi.archive.backup`), read of the archive it copies.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pdi.errors import StoreError

__all__ = ["EXPORT", "NEW_ARCHIVE", "Modes", "make_folder", "make_own_folder", "make_private", "modes_in",
           "open_private", "readable_by_others"]

#: The mode of an archive's folder that ``pdi init`` or ``pdi restore`` makes: its owner's alone (``initdb``'s).
NEW_ARCHIVE = 0o700


@dataclass(frozen=True)
class Modes:
    """The permissions of what pdi makes in an archive's folder or a backup's, whatever the umask."""

    folder: int = 0o700  #: each folder made in it (``blobs/``, ``blobs/ab/``, ``tmp/``, ``sgml/``)
    file: int = 0o600  #: each file made in it (the catalog, a dump, a marker, the registry; a key is 0600 always)


#: What an export (``pdi export``'s bag, its WACZ) is made of, whatever the umask: its owner's alone, as it may
#: hold a private series' documents (its owner shares one with ``chmod``: docs/reference/backup.md).
EXPORT = Modes()


def modes_in(folder: Path | None) -> Modes:
    """What pdi makes in ``folder`` (an archive's; ``None``: a PostgreSQL archive, which has none) is of: its
    owner's alone, unless ``folder`` is deliberately shared with its group, readable by its group and closed to
    others (0750 or 0770: a umask of 027 or 007, systemd's ``StateDirectoryMode=0750``, a ``chmod``); then its
    group may read it too (folders 0750, files 0640), never write it. The common umask 022 gives a folder 0755,
    open to every local user, which says no one chose to share it."""
    if folder is None:
        return Modes()
    try:
        mode = stat.S_IMODE(os.stat(folder).st_mode)
    except OSError:
        return Modes()
    if mode & stat.S_IRGRP and not mode & stat.S_IRWXO:
        return Modes(folder=0o750, file=0o640)
    return Modes()


def make_folder(path: Path | str, mode: int, *, parents: bool = False) -> bool:
    """Make the folder ``path`` of permissions ``mode`` whatever the umask (a folder above it that ``parents``
    makes is the umask's, as ``mkdir -p`` makes it), and set-group-ID if its parent is; one there already keeps
    its own. Whether it was made."""
    if parents:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
        return False
    # the umask may have taken the group's bits of a shared archive's folder; a file system that keeps no modes
    # of its own (FAT, SMB without its Unix extensions) refuses or ignores it: its mount options say who reads it.
    # The set-group-ID bit a folder takes from its parent's (install -d -m 2750 -g GROUP DIR) is kept: by it what
    # is made in the folder is GROUP's too, not its maker's own group's (which that group could not read)
    with contextlib.suppress(OSError):
        os.chmod(path, mode | (os.stat(path).st_mode & stat.S_ISGID))
    return True


def make_private(path: Path, mode: int, *, exist_ok: bool = False) -> None:
    """Make the empty file ``path`` (none may be there, unless ``exist_ok``: then one there is left as it is) of
    permissions ``mode`` whatever the umask, for a tool (SQLite, ``pg_dump``) to write into: what it writes is
    never readable by more than ``mode`` allows."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileExistsError:
        if exist_ok:
            return
        raise StoreError(f"cannot make {path}: it is there already") from None
    except OSError as exc:
        raise StoreError(f"cannot make {path}: {exc.strerror or exc}") from exc
    try:
        with contextlib.suppress(OSError):  # as make_folder's
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def open_private(path: Path | str, mode: int) -> BinaryIO:
    """``path`` opened to write (made, or one there emptied), of permissions ``mode`` whatever the umask: what is
    written in it is never readable by more than ``mode`` allows. A device or a named pipe there is written as it
    is, its mode unchanged. A regular file there of another user, or one whose mode cannot be set, is a
    :class:`~pdi.errors.StoreError` naming it, before anything is written (its owner could read what is)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, mode)
    try:
        found = os.fstat(fd)
        if stat.S_ISREG(found.st_mode):
            if found.st_uid != os.geteuid():
                raise StoreError(f"cannot write {path}: it is another user's file (uid {found.st_uid}), who could"
                                 " read what is written; remove it, or write elsewhere")
            try:
                os.fchmod(fd, mode)
            except OSError as exc:
                raise StoreError(f"cannot make {path} of mode {mode:04o}: {exc.strerror or exc}") from exc
            os.ftruncate(fd, 0)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def make_own_folder(path: Path | str, mode: int) -> None:
    """Make the folder ``path`` of permissions ``mode`` whatever the umask, none being there (a folder, a file or a
    link there is a :class:`FileExistsError`): a folder no one else made nor could have opened first, set-group-ID
    if its parent is (as :func:`make_folder`'s). A mode that cannot be set is an :class:`OSError`, not ignored."""
    os.mkdir(path, mode)
    os.chmod(path, mode | (os.stat(path).st_mode & stat.S_ISGID))  # the umask's bits taken back; a failure said


#: What of a directory archive ``pdi init`` tells every local user can read (:func:`readable_by_others`).
_WATCHED = ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "blobs", "tmp", "sgml", "registry.json",
            "signing-key.pem", "wacz-key.pem")


def readable_by_others(archive: Path) -> list[tuple[str, int]]:
    """What of the directory archive ``archive`` every local user can read (its catalog and SQLite's files beside
    it, its blob, temporary and SGML folders, its registry and keys: each one that others may read, in a folder
    they may enter), with its mode: ``[("catalog.sqlite", 0o644), ("blobs", 0o755)]``; nothing when they cannot
    enter the archive's folder. What an earlier pdi made under the umask 022 (``pdi init`` says it, and changes
    no mode of an archive there already)."""
    try:
        if not os.stat(archive).st_mode & stat.S_IXOTH:
            return []
    except OSError:
        return []
    found = []
    for name in _WATCHED:
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(os.lstat(archive / name).st_mode)
            if mode & stat.S_IROTH:
                found.append((name, mode))
    return found
