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

__all__ = ["descriptor_of", "free_room", "make_partial", "written_in_place", "written_whole"]

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
def written_whole(target: Path, shown: str, mode: int | None = None) -> Iterator[Path]:
    """The path to write ``target``'s content to (``.NAME.pdi-partial`` beside it), renamed to ``target`` at the end;
    ``target`` itself when it is there and no regular file (found 2026-11-27: ``pdi get -o /dev/null``, run as
    root, replaced the device with a file of the octets, and every later ``> /dev/null`` of the machine failed).

    The partial file is made here, empty, of permissions ``mode`` whatever the umask (without it, the umask's:
    0666 less its bits), and only here: by ``O_CREAT | O_EXCL | O_NOFOLLOW``, so that no one else's file nor a
    link of its name is written through (found in review, 2026-12-02: another local user who could write to the
    folder made the name first, and read the export). One there already is removed only if it is this user's own regular file (a killed run's); else it is
    refused, named. It must still be the file made here when it is renamed.

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
    made: tuple[int, int] | None = None  # the partial file's device and inode, once made
    held: int | None = None  # its descriptor, kept open while it is written
    try:
        if not in_place:
            held, made = make_partial(partial, mode, shown)
        # the file made, reopened through its descriptor (Linux's /proc/self/fd), not by its name: another user who
        # can write to the folder and puts a link in its place before the caller opens it has nothing written
        # through the link (found in review, 2026-12-02); where there is no /proc, its name
        yield partial if held is None else _reopened(held, partial)
        if made is not None:
            found = os.lstat(partial)
            if (found.st_dev, found.st_ino) != made:
                made = None  # not ours to remove
                raise StoreError(f"cannot write {shown}: {partial} was replaced by another file while it was written;"
                                 f" {shown} was left as it was")
            os.replace(partial, target)
    except BaseException as exc:
        if made is not None:
            _discard(partial, made)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        raise
    finally:
        if held is not None:
            os.close(held)


def _reopened(fd: int, partial: Path) -> Path:
    """A path that opens the file of this process's descriptor ``fd`` whatever is at its name now: Linux's
    ``/proc/self/fd/N`` (a regular file's is opened anew, its own offset and mode); ``partial``, its name, where
    there is no such folder."""
    through = Path(f"/proc/self/fd/{fd}")
    return through if through.exists() else partial


def make_partial(partial: Path, mode: int | None, shown: str) -> tuple[int, tuple[int, int]]:
    """Make the empty file ``partial`` of permissions ``mode`` whatever the umask (``None``: the umask's), no other
    file nor a link of its name written through; one there already removed first if it is this user's own regular
    file. Its descriptor (open for writing, the caller's to close), device and inode."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(2):
        try:
            fd = os.open(partial, flags, 0o666 if mode is None else mode)
        except FileExistsError:
            found = os.lstat(partial)
            if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
                what = "a link" if stat.S_ISLNK(found.st_mode) else "not a regular file" if not stat.S_ISREG(
                    found.st_mode) else f"another user's file (uid {found.st_uid})"
                raise StoreError(f"cannot write {shown}: {partial} is there and is {what}, not a partial file"
                                 " this user left; remove it, or write elsewhere") from None
            os.unlink(partial)  # a killed run's
            continue
        try:
            if mode is not None:  # its bits the umask took given back; a failure said (an OSError)
                os.fchmod(fd, mode)
            found = os.fstat(fd)
        except BaseException:
            os.close(fd)
            os.unlink(partial)
            raise
        return fd, (found.st_dev, found.st_ino)
    raise StoreError(f"cannot write {shown}: {partial} was made again by someone else as it was removed")


def written_in_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is there and no regular file nor folder (a device, a named pipe; through a symbolic
    link): what is written in place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # not there (or not to be read): made, or the write says why
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _discard(partial: Path, made: tuple[int, int]) -> None:
    """Remove the partial file made here (device and inode ``made``), if it is still there: no other file of its
    name."""
    with contextlib.suppress(OSError):
        found = os.lstat(partial)
        if (found.st_dev, found.st_ino) == made:
            partial.unlink()


def free_room(folder: str | os.PathLike[str]) -> str:
    """The room left on the disk of ``folder``, in words (``12.5 MB free``), for the error of a disk that filled."""
    try:
        room = os.statvfs(folder)
    except OSError:
        return "the room unknown"
    return f"{room.f_bavail * room.f_frsize / 1e6:.1f} MB free"
