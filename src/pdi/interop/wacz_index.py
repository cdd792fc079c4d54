"""What a WACZ export keeps as it writes its WARC (:mod:`pdi.interop.wacz`): the CDXJ index, made as each record
is written and sorted in bounded memory (:class:`CdxjIndex`, :class:`SortedLines`), and the date each URL's octets
were first written, which its revisits refer to (:class:`Written`). Nothing here grows with the archive: past a
bound, lines spill to files and pairs to a SQLite file in the export's own folder (removed with it).
"""

from __future__ import annotations

import contextlib
import heapq
import re
from collections.abc import Iterable
from json.encoder import encode_basestring_ascii as _json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from warcio.recordloader import ArcWarcRecord
from warcio.timeutils import iso_date_to_timestamp

from pdi.interop.surt_key import simple_key

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CdxjIndex", "SortedLines", "Written", "cdxj_mime"]

#: The WARC file an export writes, as its CDXJ lines name it (in the package's ``archive/``).
WARC_NAME = "data.warc.gz"

#: What cdxj-indexer cuts a ``Content-Type`` at to make a line's ``mime`` (its ``CDXJIndexer.RE_SPACE``).
_MIME_END = re.compile(r"[;\s]")


def cdxj_mime(content_type: str) -> str:
    """A response's CDXJ ``mime``: its ``Content-Type`` up to a ``;`` or a space, as cdxj-indexer cuts it."""
    return _MIME_END.split(content_type, 1)[0].strip() if content_type else content_type


class CdxjIndex:
    """The CDXJ index of the WARC an export writes, made as each record is written (not read back).

    A plain record's line (:meth:`line`) is made from the values it was
    written with: its key by :func:`~pdi.interop.surt_key.simple_key` (cdxj-indexer's SURT key, made
    here for the common shape of URL) or else by cdxj-indexer's own ``get_url_key``, its
    timestamp by warcio's ``iso_date_to_timestamp``, its fields in
    cdxj-indexer's order and JSON; any other record's line by cdxj-indexer's
    :class:`~cdxj_indexer.CDXJIndexer` from the record warcio has just
    serialized (:meth:`add`). Either way the line cdxj-indexer makes reading
    the file back (tests/interop/test_interop_wacz.py compares them), which an
    export did before (a fifth of its time). cdxj-indexer's ``SortingWriter``
    sorts them and drops duplicates; here :class:`SortedLines` does it as
    it does, its spill files in the export's own folder; ``finish`` writes them.
    """

    def __init__(self, out: TextIO, work: Path) -> None:
        from cdxj_indexer.main import CDXJIndexer

        self.indexer = CDXJIndexer(output=None, inputs=[], sort=True, post_append=True)
        self.indexer.curr_filename = WARC_NAME
        self.lines = SortedLines(out, work)
        self.timestamps: dict[str, str] = {}  # each WARC-Date's, made once (a page's parts share theirs): bounded

    def add(self, record: ArcWarcRecord, offset: int, length: int) -> None:
        if not self.indexer.filter_record(record):
            return
        record.file_offset = offset
        record.file_length = length
        self.indexer.process_index_entry(None, record, WARC_NAME, self.lines)

    def line(
        self, url: str, date: str, mime: str | None, status: str, digest: str, offset: int, length: int
    ) -> None:
        """The line of a ``response`` or ``revisit`` record: cdxj-indexer's default fields, in its order."""
        stamp = self.timestamps.get(date)
        if stamp is None:
            if len(self.timestamps) >= _TIMESTAMPS_HELD:
                self.timestamps.clear()
            stamp = self.timestamps[date] = iso_date_to_timestamp(date)
        # json.dumps of the fields in cdxj-indexer's order, each string as json writes it (ASCII, escaped)
        mime_field = "" if mime is None else f', "mime": {_json(mime)}'
        self.lines.write(
            f'{simple_key(url) or self.indexer.get_url_key(url)} {stamp} {{"url": {_json(url)}{mime_field}, "status": {_json(status)},'
            f' "digest": {_json(digest)}, "length": "{length}", "offset": "{offset}", "filename": "{WARC_NAME}"}}\n'
        )

    def finish(self) -> None:
        self.lines.flush()


#: The most WARC-Dates whose CDXJ timestamps :class:`CdxjIndex` keeps made (then it forgets them all).
_TIMESTAMPS_HELD = 4096
#: Octets of CDXJ lines :class:`SortedLines` sorts in memory before it writes them, sorted, to a spill file.
_SORT_OCTETS = 1 << 20
#: The most spill files merged at once: open files stay few, and each line is written again once a level.
_MERGE_AT_ONCE = 64
#: The most (URL, payload digest) pairs :class:`Written` keeps in memory (then it moves them to a SQLite file).
_WRITTEN_HELD = 4096
class SortedLines:
    """CDXJ lines sorted with bounded memory, and each line once: as cdxj-indexer's ``SortingWriter`` does (the
    lines sorted as Python sorts ``str``, a line equal to the one before it dropped; an external merge sort), with
    at most :data:`_SORT_OCTETS` of lines held and its spill files in the export's folder (``work``, removed with
    it, whatever happens). Spill files are merged :data:`_MERGE_AT_ONCE` at a time into one of the next level (a
    log-structured merge): a line is written again once a level, not once a merge."""

    def __init__(self, out: TextIO, work: Path) -> None:
        self.out = out
        self.work = work
        self.held: list[str] = []
        self.octets = 0
        self.levels: list[list[Path]] = []  # the spill files of each level: level n + 1's each merged from n's
        self.made = 0

    def write(self, line: str) -> None:
        self.held.append(line)
        self.octets += len(line)
        if self.octets > _SORT_OCTETS:
            self._spill()

    def _spill(self) -> None:
        self.held.sort()
        path = self._next()
        with path.open("w", encoding="utf-8") as spill:
            _unique(self.held, spill)
        self.held, self.octets = [], 0
        self._add(0, path)

    def _add(self, level: int, path: Path) -> None:
        if level == len(self.levels):
            self.levels.append([])
        files = self.levels[level]
        files.append(path)
        if len(files) >= _MERGE_AT_ONCE:
            merged = self._next()
            with merged.open("w", encoding="utf-8") as out:
                self._merge(files, out)
            self.levels[level] = []
            self._add(level + 1, merged)

    def _next(self) -> Path:
        self.made += 1
        return self.work / f"index-{self.made}.cdx"

    @staticmethod
    def _merge(paths: list[Path], out: TextIO) -> None:
        """The lines of the sorted files ``paths`` merged into ``out``, each once; the files then removed."""
        with contextlib.ExitStack() as files:
            opened = [files.enter_context(path.open(encoding="utf-8")) for path in paths]
            _unique(heapq.merge(*opened), out)
        for path in paths:
            path.unlink()

    def flush(self) -> None:
        if not self.levels:
            self.held.sort()
            _unique(self.held, self.out)
        else:
            if self.held:
                self._spill()
            # what is left of every level, at most _MERGE_AT_ONCE - 1 files of each: merged at most as many at once
            left = [path for files in self.levels for path in files]
            while len(left) > _MERGE_AT_ONCE:
                merged = self._next()
                with merged.open("w", encoding="utf-8") as out:
                    self._merge(left[:_MERGE_AT_ONCE], out)
                left = [*left[_MERGE_AT_ONCE:], merged]
            self._merge(left, self.out)
            self.levels = []
        self.held, self.octets = [], 0
        self.out.flush()


def _unique(lines: Iterable[str], out: TextIO) -> None:
    """``lines`` (sorted) written to ``out``, a line equal to the one before it left out (as ``SortingWriter``)."""
    last = None
    for line in lines:
        if line != last:
            out.write(line)
        last = line


class Written:
    """The ``WARC-Date`` each (URL, payload digest) was first written at, for the revisits of the same octets under
    the same URL (WARC 1.1 §6.7.2). The first ``held`` pairs (:data:`_WRITTEN_HELD`) are kept in a dict; past them
    all are moved to a SQLite file in the export's folder and kept there: an export of millions of captures does
    not hold one entry each in memory, and a small one makes no database (a statement a record cost an export of
    750 records a sixteenth of its CPU: docs/benchmarks.md, "WARC and WACZ")."""

    def __init__(self, work: Path, *, held: int | None = None) -> None:
        self.work = work
        self.held = _WRITTEN_HELD if held is None else held
        self.dates: dict[tuple[str, str], str] = {}  # (digest, url) -> date, until the file is made
        self.db: sqlite3.Connection | None = None

    def first(self, url: str, digest: str, date: str) -> str | None:
        """When ``url``'s octets of ``digest`` were first written (``None``: not before; now they are, at ``date``)."""
        if self.db is None:
            found = self.dates.get((digest, url))
            if found is not None:
                return found
            if len(self.dates) < self.held:
                self.dates[(digest, url)] = date
                return None
            self.db = self._open()
        row = self.db.execute("INSERT INTO written VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
                              (digest, url, date)).fetchone()
        if row is not None:
            return None
        found_row = self.db.execute("SELECT date FROM written WHERE digest = ? AND url = ?", (digest, url)).fetchone()
        return str(found_row[0])

    def _open(self) -> sqlite3.Connection:
        """The SQLite file, holding what the dict held (which is then emptied)."""
        import sqlite3

        db = sqlite3.connect(self.work / "written.sqlite", isolation_level=None)
        # a scratch file, thrown away with the folder: nothing to keep through a crash
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("PRAGMA cache_size = -1024")  # KiB of pages held: the rest is read from the file as needed
        db.execute("CREATE TABLE written (digest TEXT, url TEXT, date TEXT, PRIMARY KEY (digest, url)) WITHOUT ROWID")
        db.execute("BEGIN")
        db.executemany("INSERT INTO written VALUES (?, ?, ?)", ((d, u, when) for (d, u), when in self.dates.items()))
        self.dates = {}
        return db

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
