"""Files written whole: beside their name first, renamed into place only when complete.

A write that fails midway (a full disk, a damaged chunk read, an interrupt)
leaves nothing under the target's name and removes what it wrote (the
rename is atomic on one file system: ``os.replace``, POSIX ``rename(2)``).

What is no regular file is written in place, never replaced: a device
(``/dev/null``, ``/dev/stdout`` when it is a terminal), a named pipe (a
shell's ``>(…)``, ``/dev/stdout`` when it is a pipe). A symbolic link is
followed: the file it names is replaced, the link kept.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from pdi.errors import StoreError

__all__ = ["written_whole"]


@contextlib.contextmanager
def written_whole(target: Path, shown: str) -> Iterator[Path]:
    """The path to write ``target``'s content to (``.NAME.pdi-partial`` beside it), renamed to ``target`` at the end;
    ``target`` itself when it is there and no regular file (found 2026-11-27: ``pdi get -o /dev/null``, run as
    root, replaced the device with a file of the octets, and every later ``> /dev/null`` of the machine failed).

    An :class:`OSError` is a :class:`~pdi.errors.StoreError` naming ``shown``
    (the name as the user gave it); on any error the partial file is removed.
    """
    try:
        mode = os.stat(target).st_mode  # through a symbolic link
    except OSError:
        mode = None  # not there (or not to be read): made below, or the write says why
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        try:
            yield target
        except OSError as exc:
            raise StoreError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        return
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    partial = target.with_name(f".{target.name}.pdi-partial")
    try:
        yield partial
        os.replace(partial, target)
    except OSError as exc:
        _discard(partial)
        raise StoreError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    except BaseException:
        _discard(partial)
        raise


def _discard(partial: Path) -> None:
    """Remove a partial file, if there is one (its folder may not exist, or not be a folder: nothing to remove)."""
    with contextlib.suppress(OSError):
        partial.unlink(missing_ok=True)
