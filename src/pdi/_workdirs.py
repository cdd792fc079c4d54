"""Work folders that a killed process does not leave behind for good.

A command's work folder (a WARC import's spooled records, a WACZ export's WARC, a browser's profile) is removed
when the command ends, however it ends in Python; a process killed outright (``SIGKILL``, the OOM killer, a
power cut) leaves it where it was, gigabytes perhaps, and nothing else would ever remove it. So each folder made
here holds a lock file (:data:`LOCK`), ``flock``-ed for as long as the folder is in use (the lock goes with the
process, however it dies), and making a folder first sweeps its parent: a sibling folder of the same prefix whose
lock file is older than :data:`GRACE` seconds and no longer locked was left by a process that is gone, and is
removed.

Only what this mechanism made is swept: a folder of the prefix without the lock file (made by another program,
or by a pdi before this one), a symbolic link, a folder of another user, or one whose lock is held, is left
alone (the owner asked is the lock file's: a sandboxed browser's profile folder is given to
``nobody``). The grace covers the moment between making a folder and locking its file, when another sweep could see
it unlocked.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from types import TracebackType

__all__ = ["GRACE", "LOCK", "WorkFolder", "sweep"]

#: The lock file each work folder holds, locked while the folder is in use.
LOCK = ".pdi-work-lock"
#: Seconds a lock file must have been there, unlocked, before its folder is taken as left by a process gone.
GRACE = 60.0


class WorkFolder:
    """A new folder ``PREFIX…`` in ``parent`` (``None``: ``$TMPDIR``, as :func:`tempfile.mkdtemp`), as a context
    manager giving its path (text, as :class:`tempfile.TemporaryDirectory` does) and removing it at the end; the
    folders of ``prefix`` left there by processes killed before their end are removed first (module
    docstring). An :class:`OSError` of making it is raised as it is, with nothing left behind."""

    def __init__(self, prefix: str, parent: str | None = None) -> None:
        where = parent if parent is not None else tempfile.gettempdir()
        sweep(where, prefix)
        self.name = tempfile.mkdtemp(prefix=prefix, dir=where)
        try:
            self._lock = os.open(os.path.join(self.name, LOCK),
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except BaseException:
            shutil.rmtree(self.name, ignore_errors=True)
            raise
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        except BaseException:
            os.close(self._lock)
            shutil.rmtree(self.name, ignore_errors=True)
            raise

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.cleanup()

    def cleanup(self) -> None:
        """Remove the folder and all in it (what cannot be removed is left: its lock goes, so that a later sweep
        tries again), then let its lock go."""
        if self._lock < 0:
            return
        try:
            shutil.rmtree(self.name, ignore_errors=True)
        finally:
            os.close(self._lock)
            self._lock = -1


def sweep(parent: str, prefix: str, *, grace: float = GRACE) -> list[str]:
    """Remove the folders ``prefix…`` in ``parent`` that a process gone left (module docstring); their names.
    What cannot be read or removed is passed over: a sweep never stops the command that makes a folder."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    now, mine = time.time(), os.geteuid()
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            lock = os.open(os.path.join(entry.path, LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # no lock file: not one of ours (or one being made), left alone
        try:
            made = os.fstat(lock)  # the lock file's owner, not the folder's: a browser's profile is given to nobody
            if made.st_uid != mine or now - made.st_mtime < grace:
                continue
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # locked: in use
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
        finally:
            os.close(lock)
    return removed
