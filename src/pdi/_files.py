"""Files written whole: beside their name first, renamed into place only when complete.

A write that fails midway (a full disk, a damaged chunk read, an interrupt)
leaves nothing under the target's name and removes what it wrote (the
rename is atomic on one file system: ``os.replace``, POSIX ``rename(2)``).

What is no regular file is written in place, never replaced: a device
(``/dev/null``), a named pipe. A symbolic link is followed: the file it
names is replaced, the link kept (a loop of links is replaced as a file
is). A path naming one of this process's descriptors (``/dev/stdout``,
``/dev/fd/N``, a shell's ``>(…)``) is no file to write whole: the callers
that stream (``pdi get -o``) write to the descriptor itself
(:func:`descriptor_of`), and :func:`written_whole` refuses it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from pdi.errors import StoreError

__all__ = ["descriptor_of", "free_room", "written_in_place", "written_whole"]

#: How a path names one of this process's open descriptors, once its links are followed.
_DESCRIPTOR = re.compile(r"/(?:proc/(?:self|thread-self|\d+)|dev)/fd/(\d+)")


def descriptor_of(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``), its
    symbolic links followed one by one; ``None`` for any other path. Such a path is written through the descriptor
    (the shell's ``>> log`` keeps its place), never replaced nor reopened (found in review, 2026-11-27: followed to
    the file the shell had open, ``-o /dev/fd/1`` replaced that file and lost what it held)."""
    current = os.path.abspath(os.fspath(path))
    for _ in range(40):
        found = _DESCRIPTOR.fullmatch(current)
        if found is not None and (not current.startswith("/proc/") or current.split("/")[2] in
                                  ("self", "thread-self", str(os.getpid()))):
            return int(found.group(1))
        try:
            link = os.readlink(current)
        except OSError:
            return None  # not a link (or not there): no descriptor
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return None


@contextlib.contextmanager
def written_whole(target: Path, shown: str) -> Iterator[Path]:
    """The path to write ``target``'s content to (``.NAME.pdi-partial`` beside it), renamed to ``target`` at the end;
    ``target`` itself when it is there and no regular file (found 2026-11-27: ``pdi get -o /dev/null``, run as
    root, replaced the device with a file of the octets, and every later ``> /dev/null`` of the machine failed).

    An :class:`OSError` is a :class:`~pdi.errors.StoreError` naming ``shown``
    (the name as the user gave it); on any error the partial file is removed.
    """
    if descriptor_of(target) is not None:
        raise StoreError(f"cannot write {shown}: it names an open descriptor of this process, not a file (give a file,"
                         " or write to standard output)")
    in_place = written_in_place(target)
    if not in_place and target.is_symlink():
        target = Path(os.path.realpath(target))
    if not shown or (not in_place and target.name in ("", "..")):  # "" (Path reads it "."), "/", "x/..": no file's name
        raise StoreError(f"cannot write {shown!r}: it names no file (give a file name)")
    partial = target if in_place else target.with_name(f".{target.name}.pdi-partial")
    try:
        yield partial
        if not in_place:
            os.replace(partial, target)
    except BaseException as exc:
        if not in_place:
            _discard(partial)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        raise


def written_in_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is there and no regular file nor folder (a device, a named pipe; through a symbolic
    link): what is written in place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # not there (or not to be read): made, or the write says why
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _discard(partial: Path) -> None:
    """Remove a partial file, if there is one (its folder may not exist, or not be a folder: nothing to remove)."""
    with contextlib.suppress(OSError):
        partial.unlink(missing_ok=True)


def free_room(folder: str | os.PathLike[str]) -> str:
    """The room left on the disk of ``folder``, in words (``12.5 MB free``), for the error of a disk that filled."""
    try:
        room = os.statvfs(folder)
    except OSError:
        return "the room unknown"
    return f"{room.f_bavail * room.f_frsize / 1e6:.1f} MB free"
