"""An import's one sync, begun when its blobs are placed and waited for before its catalog commits.

:meth:`pdi.archive.blobs.files.FileBlobs.stage_import_begun` places an import's files at their names, marked as
not yet durable, and hands back an :class:`ImportSync`: the sync of those files and their folders runs on a thread
of its own while the import's catalog statements run, and the transaction waits for it (:meth:`ImportSync.wait`)
before it commits; once the files are durable their marks are cleared.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class ImportSync:
    """``sync`` (the files and folders made durable) then ``unmark`` (their marks cleared), on a thread of its own
    from its making; :meth:`wait` joins it and raises what it raised."""

    def __init__(self, sync: Callable[[], None], unmark: Callable[[], None]) -> None:
        self._sync, self._unmark = sync, unmark
        self._failure: BaseException | None = None
        self._waited = False
        self._thread = threading.Thread(target=self._run, name="pdi-import-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._sync()
        except BaseException as exc:  # (raised by wait, in the import's thread)
            self._failure = exc
            return
        self._unmark()

    def wait(self) -> None:
        """Once the files and folders are durable (and unmarked); what the sync raised, raised here (once)."""
        self._thread.join()
        if self._failure is not None and not self._waited:
            self._waited = True
            raise self._failure
