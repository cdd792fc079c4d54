"""Opening the archive a command names, and writing what it reads: shared by the commands, no click.

:func:`open_archive` opens what ``--archive`` names; :func:`write_out` writes
bytes to a file (whole, or not at all) or to standard output.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from pdi._files import descriptor_of, written_in_place, written_whole
from pdi.archive import Archive
from pdi.errors import NotFoundError


def write_out(data: bytes | Iterable[bytes], output: str | None) -> None:
    """Write ``data`` (bytes, or pieces as they come) to the file ``output``, or to standard output (``None`` or ``-``).

    A file is written beside its name and renamed when complete: a read that
    fails midway (a damaged chunk) leaves no partial file under that name.
    """
    pieces = [data] if isinstance(data, bytes) else data
    if output is None or output == "-":
        for piece in pieces:
            sys.stdout.buffer.write(piece)
        sys.stdout.buffer.flush()
        return
    descriptor = descriptor_of(output)
    if descriptor is not None:  # /dev/stdout, /dev/fd/N, a shell's >(…): written through it, where it stands
        sys.stdout.buffer.flush()
        with open(os.dup(descriptor), "wb") as f:
            for piece in pieces:
                f.write(piece)
        return
    target = Path(output)
    with written_whole(target, output) as partial, partial.open("wb") as f:
        for piece in pieces:
            f.write(piece)


def unwritable(output: str | None) -> str | None:
    """Why the file ``-o`` names cannot be written, said before anything is read (``None``: it may be, or it is
    standard output): its folder is missing, not a folder, or not writable."""
    if output is None or output == "-" or descriptor_of(output) is not None:
        return None
    if not output:
        return "-o names no file: give a file name, or - for standard output"
    if written_in_place(output):  # a device or a named pipe: it must be writable, whatever its folder
        return None if os.access(output, os.W_OK) else f"cannot write {output}: it is not writable"
    folder = Path(os.path.realpath(output)).parent  # a symbolic link's file is replaced beside itself
    if not folder.exists():
        return f"cannot write {output}: the folder {folder} does not exist"
    if not folder.is_dir():
        return f"cannot write {output}: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write {output}: the folder {folder} is not writable"
    return None


def open_archive(archive: str) -> Archive:
    """The archive ``--archive`` names, opened."""
    return Archive.open(archive)


@contextlib.contextmanager
def saying_what_is_near(opened: Archive, name: str) -> Iterator[None]:
    """A :class:`~pdi.errors.NotFoundError` raised within, of ``name``, raised again with what ``opened`` holds near
    the name (:meth:`~pdi.archive.Archive.not_found`: the nearest days of its series with documents), as ``pdi get``
    says it: for the commands that write about a name (``pdi withdraw``, ``embargo``, ``meta``, ``version``)."""
    try:
        yield
    except NotFoundError as exc:
        raise opened.not_found(exc, name) from None
