"""Where a WACZ export works, and the room it needs: the checks of ``OUT`` before any work, the folder its work
files are made in, and the error of a disk that fills (:func:`pdi.interop.wacz.export_wacz` uses them).

The work files (the WARC, its index runs, the pages, the revisit dates) are made beside ``OUT``, on the disk whose
room matters, unless ``OUT`` is a stream, a named pipe or a device (then ``$TMPDIR``) or ``--work-dir`` names a
folder. A disk that fills (``ENOSPC``, ``EDQUOT``, SQLite's ``SQLITE_FULL``) is told with the folder, about the room
the export needs there and what is free.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from pdi._files import descriptor_of, free_room, written_in_place
from pdi.errors import ImmutabilityError, StoreError

__all__ = ["check_target", "disk_full", "file_size", "no_space_working", "no_space_writing", "work_parent"]

#: SQLite's result code for a full disk (``sqlite3.SQLITE_FULL``; sqlite3 is imported only when a revisit needs it).
_SQLITE_FULL = 13


def check_target(target: Path, shown: str) -> None:
    """Refused before any work: an ``output`` that exists (a file), names a descriptor, or has no folder."""
    if descriptor_of(target) is not None:
        raise StoreError(f"cannot write {shown}: it names an open descriptor of this process, not a file (give a"
                         " file, or a stream)")
    if written_in_place(target):
        return  # a named pipe, a device: written in place
    if target.exists():
        raise ImmutabilityError(f"export never overwrites: {shown} exists")
    folder = Path(os.path.realpath(target)).parent
    if not folder.is_dir():
        raise StoreError(f"cannot write {shown}: the folder {folder} does not exist")


def work_parent(target: Path | None, work_dir: str | Path | None) -> tuple[str | None, str]:
    """Where an export's work folder is made (``None``: ``$TMPDIR``), and the start of its name."""
    if work_dir is not None:
        if not Path(work_dir).is_dir():
            raise StoreError(f"the work folder {work_dir} does not exist (or is no folder)")
        return os.fspath(work_dir), "pdi-wacz-"
    if target is None or written_in_place(target):
        return None, "pdi-wacz-"  # a stream, a pipe, a device: no file system of the WACZ's to work on
    real = Path(os.path.realpath(target))  # a symbolic link's file is written beside itself: so is the work
    return os.fspath(real.parent), f".{real.name}.pdi-work-"


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says a disk is full: ``ENOSPC`` or a quota (``EDQUOT``), or SQLite's ``SQLITE_FULL``."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return type(exc).__module__ == "sqlite3" and getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL


def no_space_writing(work: Path, target: Path, shown: str, made: int) -> StoreError:
    """The error of a disk that filled while the WACZ ``target`` was written, its work files (``made`` octets, the
    WACZ about as much) all written in ``work``."""
    folder = Path(os.path.realpath(target)).parent
    beside = _same_disk(work, folder)
    needed = made * 2 if beside else made
    return StoreError(
        f"no space left in {folder} to write {shown}: about {_mb(needed)} MB needed there (the WACZ about"
        f" {_mb(made)} MB" + (f", beside its work files' {_mb(made)} MB" if beside else "")
        + f"), {free_room(folder)}; free some, or "
        + ("give --work-dir a folder on another disk" if beside else "write the WACZ to another disk")
    )


def no_space_working(work: Path, target: Path | None, shown: str, made: int, done: int, total: int) -> StoreError:
    """The error of a disk that filled while the work files were written in ``work``: ``made`` octets for ``done``
    records of ``total`` tell what they will need; the WACZ beside them, if on the same disk, about as much again."""
    beside = target is not None and _same_disk(work, Path(os.path.realpath(target)).parent)
    work_needed = made * max(total, done) // done if done else made
    needed = work_needed * 2 if beside else work_needed
    folder = work.parent
    return StoreError(
        f"no space left in {folder} for the work files of {shown} (its WARC and index): about {_mb(needed)} MB"
        f" needed there (the work files about {_mb(work_needed)} MB, {_mb(made)} MB written for"
        f" {done} of {max(total, done)} records" + (", and the WACZ about as much again" if beside else "")
        + f"), {free_room(folder)}; free some, or give --work-dir a folder on a disk with room"
    )


def file_size(path: Path) -> int:
    """The size of the file ``path`` (0: none, or no file)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _same_disk(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_dev == b.stat().st_dev
    except OSError:
        return False


def _mb(octets: int) -> str:
    return f"{octets / 1e6:.1f}"
