"""Listing: representations in listing order by keyset pages, and the blobs the catalog names."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from itertools import chain
from typing import Any, TypeVar

from pdi.archive.catalog.base import (
    PAGE_ROWS,
    CatalogBase,
)
from pdi.archive.catalog.rows import (
    LISTING_ORDER,
    REP_COLUMNS,
    blob_use,
    rep_record,
)
from pdi.archive.store import (
    BlobUse,
    DocumentKey,
    ListKey,
    ListQuery,
    NamePage,
    RepresentationRecord,
    window,
)
from pdi.errors import StoreError

#: The keys of a day's two runs in listing order (:class:`~pdi.archive.store.ListKey`):
#: serial documents, then those with a foreign id. Each begins with the columns
#: of the index ``documents_by_day (day, serial, unique_id)`` after the day, so a
#: page is a range of it; series, version and format order rows that tie there.
_SERIAL_RUN = ("d.serial", "d.unique_id", "d.series", "r.version", "r.format")


_FOREIGN_RUN = ("d.unique_id", "d.series", "r.version", "r.format")

#: What a page of serial names may read of each row to make its name around the page (with ``d.series`` unless
#: the series is given): :meth:`ListingPart._page_names`.
NAME_PARTS = "d.serial, r.format, r.version"



#: What a walk of the catalog makes of each run (:meth:`ListingPart._days`): pages of rows, or of text.
_Made = TypeVar("_Made")

#: Rows of a page of names (:meth:`ListingPart.iter_name_pages`): five columns a row, not
#: fourteen, so about the memory of a page of records; a day of 10,000 names in one read
#: (PostgreSQL otherwise reads the day twice, each page a walk of its whole run).
NAME_PAGE_ROWS = 4 * PAGE_ROWS


def _day_range(filters: dict[str, Any]) -> tuple[str, str] | None:
    """``[first, after last)`` of the GMT days (ISO dates, which sort as dates) a year, month and day filter allow.

    ``None`` when they allow no one range: no year, a day without its month,
    or a date that does not exist (the equality filters then select nothing).
    """
    year, month, day = filters.get("d.year"), filters.get("d.month"), filters.get("d.dom")
    if year is None or (day is not None and month is None):
        return None
    try:
        if month is None:
            first, last = datetime.date(year, 1, 1), datetime.date(year + 1, 1, 1)
        elif day is None:
            first = datetime.date(year, month, 1)
            last = datetime.date(year + month // 12, month % 12 + 1, 1)
        else:
            first = datetime.date(year, month, day)
            last = first + datetime.timedelta(days=1)
    except (ValueError, OverflowError):
        return None
    return first.isoformat(), last.isoformat()


#: How to read a page of serial names by the range of its documents' ids: a statement of the least and the
#: greatest id of the run's documents and their number (at most a page and one), and whether the day holds a
#: document with a foreign id the filters of the run's documents select (its other run), and what makes the
#: page's statement of that range (``ListingPart._serial_page``).
RangedPage = tuple[tuple[str, list[Any]], Callable[[int, int], tuple[str, list[Any]]]]


#: How a page's names are made of its rows ``p``: an expression of them (a name, or its tail from the serial on)
#: and its parameters, and what is put before each line the aggregate gives (the names' head, or nothing).
NameMade = tuple[str, list[Any], str]


def headed(text: str, head: str) -> str:
    """``text`` (lines joined by newlines) with ``head`` put before each line."""
    return f"{head}{text.replace(chr(10), chr(10) + head)}" if head else text


def _day_selected(day: datetime.date, filters: dict[str, Any]) -> bool:
    """Whether ``day`` is one the year, month and day-of-month filters (``d.year``, ``d.month``, ``d.dom``) allow."""
    return all(filters.get(column) in (None, value)
               for column, value in (("d.year", day.year), ("d.month", day.month), ("d.dom", day.day)))


def page_near(least: int, greatest: int, count: int, page: int) -> bool:
    """Whether a page of a run is read by the range of its documents' ids (:data:`RangedPage`): the run's
    documents (after the page's key) no more than a page, and the greatest id less than the least plus four times
    their number plus 1,000, so that the range holds about the page's rows."""
    return 0 < count <= page and greatest - least < 4 * count + 1000


def last_name_key(
    text: str,
) -> tuple[str, list[Any], Callable[[Any], tuple[Any, ...]]] | None:
    """How to find the key of the last serial name of a page of them (``text``, a name a line, as
    :meth:`ListingPart._serial_text` reads them): the name gives its series, day, serial, format and version
    (``urn:pdi://SERIES/Y/M/D/SERIAL.FORMAT.VERSION``, as the catalog spells them), and one look-up of the
    day's documents of that serial by ``documents_by_day`` its unique id. Returned: that statement, its
    parameters, and what makes the key of the unique id it finds; ``None`` for a name not so spelled. A page's
    second walk, that read the key of its row ``page`` (``LIMIT 1 OFFSET page - 1``), cost as much as the
    page (32 of the 73 ms of a full page of 20,000, on PostgreSQL); the look-up finds one row. Where it finds
    none or two (documents of one serial on one day in one series: a catalog imported so), the caller walks.
    """
    name = text[text.rfind("\n") + 1:]
    if not name.startswith("urn:pdi://"):
        return None
    parts = name[len("urn:pdi://"):].split("/")
    if len(parts) != 5:
        return None
    series, year, month, dom, tail = parts
    serial, _, rest = tail.partition(".")
    token, _, version = rest.rpartition(".")
    if not (serial.isascii() and serial.isdigit() and version.isascii() and version.isdigit() and token):
        return None
    number, made = int(serial), int(version)
    return ("SELECT d.unique_id FROM documents d WHERE d.day = ? AND d.serial = ? AND d.series = ? LIMIT 2",
            [f"{year}-{month}-{dom}", number, series],
            lambda unique_id: (number, unique_id, series, made, token))


def _run_key(key: ListKey, serials: bool) -> tuple[Any, ...]:
    """The values of ``key`` for the columns of its run (:data:`_SERIAL_RUN` or :data:`_FOREIGN_RUN`)."""
    head: tuple[Any, ...] = (key.serial, key.unique_id) if serials else (key.unique_id,)
    return (*head, key.series, key.version, key.format)


def _blob_scope(series: Sequence[str] | None) -> tuple[str, list[Any]]:
    """``FROM … WHERE …`` of the representations whose blobs a walk takes: all, or those of ``series``."""
    if series is None:
        return "FROM representations r WHERE 1 = 1", []
    marks = ", ".join("?" * len(series)) or "NULL"
    return (
        f"FROM representations r JOIN documents d ON d.id = r.document WHERE d.series IN ({marks})",
        list(series),
    )


class ListingPart(CatalogBase):
    """Reading names: a document's versions and formats, listings page by page, the blobs named."""

    def document_exists(self, key: DocumentKey) -> bool:
        with self._read():
            return self._document_id(key) is not None

    def versions(self, key: DocumentKey, *, wanted: int | None = None) -> list[int]:
        """The versions of ``key``, oldest first (none: no such document). On a replica that may lag behind, a
        document not found, or one without the version ``wanted``, is asked of the primary too."""
        sql = ("SELECT v.version FROM versions v JOIN documents d ON d.id = v.document"
               " WHERE d.series = ? AND d.day = ? AND d.unique_id = ? ORDER BY v.version")
        params = (key.series, key.day.isoformat(), key.unique_id)
        with self._read():
            found = [int(r[0]) for r in self._query(sql, params)]
            if not found or (wanted is not None and wanted not in found):
                found = [int(r[0]) for r in self._ask_primary(sql, params)] or found
        return found

    def representations(
        self, key: DocumentKey, version: int | None = None
    ) -> list[RepresentationRecord]:
        sql = (
            f"SELECT {REP_COLUMNS} FROM representations r JOIN documents d ON d.id = r.document"
            " WHERE d.series = ? AND d.day = ? AND d.unique_id = ?"
        )
        params: list[Any] = [key.series, key.day.isoformat(), key.unique_id]
        if version is not None:
            sql += " AND r.version = ?"
            params.append(version)
        with self._read():
            rows = self._query(sql + LISTING_ORDER, params)
        return [rep_record(r) for r in rows]

    def iter_representations(
        self, query: ListQuery | None = None, *, page: int = PAGE_ROWS
    ) -> Iterator[RepresentationRecord]:
        """The representations ``query`` selects in listing order (:class:`ListKey`), a page at a time.

        Each page is one range read from the index ``documents_by_day (day,
        serial, unique_id)``, starting after the last row of the page before
        (a keyset, never ``OFFSET``): a day's serial documents, then its
        documents with a foreign id (whose serial is NULL), then the next
        day. Memory is one page however many names there are, and each page
        costs the same however deep it is. Each page is its own read
        transaction, so a long walk holds no lock between pages (inside
        :meth:`snapshot` they all share one); a name deposited meanwhile
        is listed if it sorts after the current position.
        """
        pages = self._pages(query or ListQuery(), page, REP_COLUMNS)
        return map(rep_record, chain.from_iterable(rows for _, _, rows in pages))

    def iter_name_pages(
        self, query: ListQuery, *, page: int = NAME_PAGE_ROWS
    ) -> Iterator[NamePage]:
        """What names the representations ``query`` selects, in :meth:`iter_representations`'s pages.

        Each page is ``(day, serials, rows)``: the ISO day, whether the rows
        are of serial documents, and the catalog's own tuples of the columns
        that order them, nothing more made per row (a listing that prints
        names needs no record): ``(serial, unique_id, series, version,
        format)`` for serial documents, ``(unique_id, series, version,
        format)`` for those with a foreign id. A page is larger than a page
        of records (:data:`NAME_PAGE_ROWS`), as a row is a third of one.
        """
        return self._pages(query, page, None)

    def iter_name_text(self, query: ListQuery, *, page: int = NAME_PAGE_ROWS) -> Iterator[str | NamePage]:
        """The names ``query`` selects (``offset`` 0, no ``limit``), in :meth:`iter_name_pages`'s order: a page of
        serial names as one string, each name followed by a newline, made by the database; a page of names with a
        foreign id as :meth:`iter_name_pages` gives it (such a name is %-escaped as the grammar says, in Python).

        A serial name is its series, its day's path, its serial, its format and
        its version put together, as ``str`` of its :class:`~pdi.identifier.PDI`
        prints it (the catalog holds format tokens in their canonical
        spelling), so a listing that prints names makes no Python object per
        row (:meth:`_serial_text`: one aggregate of a page's names, SQLite's
        ``group_concat`` or PostgreSQL's ``string_agg``, one string a page).
        A run is paged by its key as :meth:`iter_name_pages` is: a full
        page's last key is read in the same snapshot as its names. Where
        :attr:`ranges_pages` (PostgreSQL), the last page of a day's serial
        names reads in its snapshot whether the day has names with a foreign
        id too; when it has none, that page reaches the day's end, as a larger
        page would (a name with a foreign id deposited on the day after it is
        read sorts before the listing's position, and is not listed: a name
        deposited meanwhile is listed if it sorts after the position).
        """
        if query.offset or query.limit is not None:
            raise ValueError("names as text are listed whole: cut a listing with iter_name_pages")

        # days whose serial run's last page found no document with a foreign id on the day. The last page's: each
        # page is read on its own (outside a snapshot), and a foreign id deposited after an earlier page sorts
        # after the listing's position, so it is listed (an earlier page's answer would leave it out)
        unmixed: set[str] = set()

        def run(day: str, serials: bool, key: tuple[Any, ...] | None,
                filters: list[tuple[str, Any]]) -> Iterator[str | NamePage]:
            if not serials:
                if day not in unmixed:
                    for rows in self._run(day, False, key, filters, page, None):
                        yield day, False, rows
                return
            while True:
                text, following, foreign = self._serial_page(day, key, filters, page)
                if foreign is False and following is None:
                    unmixed.add(day)
                if text:
                    yield text
                if following is None:
                    return
                if following == key:  # pragma: no cover - a database whose order and comparison disagree
                    raise StoreError(f"{self.location}: listing the catalog does not advance past {key}")
                key = following

        # a day named whole is not looked up where a page's bounds say whether it holds names (ranges_pages)
        return self._days(query, run, look_up_named_day=not self.ranges_pages)

    def _serial_page(
        self, day: str, key: tuple[Any, ...] | None, filters: list[tuple[str, Any]], page: int,
    ) -> tuple[str, tuple[Any, ...] | None, bool | None]:
        """One page of a day's serial names after ``key``, as text, its last row's key if the page is full, and
        whether the day has documents with a foreign id the filters may select (``None``: not asked)."""
        path = f"/{day[:4]}/{day[5:7]}/{day[8:10]}/"
        series = dict(filters).get("d.series")
        parts, parts_params, made = self._page_names(series, path)
        names, params = self._run_statement(day, True, key, filters, parts, parts_params)
        keys, key_params = self._run_statement(day, True, key, filters, ", ".join(_SERIAL_RUN))
        ranged: RangedPage | None = None
        if self.ranges_pages:
            documents, chosen = self._run_documents(day, True, key, filters)[:2]
            # and whether the day's other run has a document to read: a day that has none is not asked again for
            # them (:meth:`iter_name_text`). Its first row in the order of documents_by_day, so that one entry of
            # the index is read (as EXISTS, whose ORDER BY PostgreSQL drops, a catalog never analysed had every
            # serial document of the day read to find none)
            foreign = self._run_documents(day, False, None, filters)[:2]
            bounds = (f"SELECT MIN(x.id), MAX(x.id), COUNT(*), COALESCE((SELECT TRUE FROM documents d WHERE"
                      f" {foreign[0]} ORDER BY d.serial, d.unique_id LIMIT 1), FALSE)"
                      f" FROM (SELECT d.id FROM documents d WHERE {documents} LIMIT ?) AS x",
                      [*foreign[1], *chosen, page + 1])

            def within(least: int, greatest: int) -> tuple[str, list[Any]]:
                sql, ranged_params = self._run_statement(day, True, key, filters, parts, parts_params,
                                                         ranged=(least, greatest))
                return f"{sql} LIMIT ?", [*ranged_params, page]

            ranged = bounds, within
        # the key of the page's last row, if there are more: from its name (last_name_key), else the row ``page`` of
        # the same walk (``keys``)
        return self._serial_text(
            (f"{names} LIMIT ?", [*params, page]), (f"{keys} LIMIT 1 OFFSET ?", [*key_params, page - 1]), page,
            ranged, made)

    #: A serial name made of a row of :data:`_SERIAL_RUN`'s tables, the day's ``/Y/M/D/`` its one parameter: as
    #: ``str`` of the name prints it (the catalog holds format tokens canonical; a serial and a version, decimal).
    serial_name_sql = "printf('urn:pdi://%s%s%d.%s.%d', d.series, ?, d.serial, r.format, r.version)"
    #: The same, its one parameter the name up to the serial (``urn:pdi://`` and the series the run is of, the day's
    #: path): what a listing of one series makes (two values fewer put together a name).
    serial_name_after_sql = "printf('%s%d.%s.%d', ?, d.serial, r.format, r.version)"

    def _page_names(self, series: str | None, path: str) -> tuple[str, list[Any], NameMade]:
        """What a page of a day's serial names selects of each row (and its parameters), and how the page's
        aggregate makes the names of those rows ``p`` (:data:`NameMade`), for a listing of ``series`` (``None``:
        of any) on the day whose path is ``path`` (``/Y/M/D/``). Here each row's name is made in the row, as
        ``n``, and the aggregate joins them (SQLite: making them around the page's rows, or only their tails
        with the head put before each in Python, was not faster in process)."""
        if series is None:
            return f"{self.serial_name_sql} AS n", [path], ("p.n", [], "")
        return f"{self.serial_name_after_sql} AS n", [f"urn:pdi://{series}{path}"], ("p.n", [], "")

    #: Whether a page of serial names is read by the range of its documents' ids where they lie close
    #: (:data:`RangedPage`): PostgreSQL's; SQLite looks each document's representations up, as cheaply.
    ranges_pages = False

    def _serial_text(
        self, names: tuple[str, list[Any]], last: tuple[str, list[Any]], page: int,
        ranged: RangedPage | None, made: NameMade,
    ) -> tuple[str, tuple[Any, ...] | None, bool | None]:
        """The names of the rows statement ``names`` gives (at most ``page``; each name made of its row ``p`` as
        ``made`` says: :data:`NameMade`), a line each, and, when there are ``page`` of them,
        the key of the last (:meth:`_page_end`: from its name, else statement ``last``), read in the same
        snapshot. ``ranged``: how to read the rows by the range of their documents' ids instead
        (:data:`RangedPage`, where :attr:`ranges_pages`), which tells too whether the day has documents with a
        foreign id (the third value returned; ``None`` without ``ranged``).

        SQLite joins them in one statement (``group_concat`` over the ordered,
        limited rows: SQLite reads a ``LIMIT`` subquery of an aggregate in its
        order, not flattened into it), one string a page; PostgreSQL likewise
        with ``string_agg`` (:meth:`pdi.archive.postgres.store.PostgresStore._serial_text`).
        """
        sql, params = names
        with self._read():
            ((text, count),) = self._query(f"SELECT group_concat({made[0]}, char(10)), count(*) FROM ({sql}) AS p",
                                           [*made[1], *params])
            text = headed(text, made[2]) if count else text
            key = self._page_end(last, count, page, text)
        return (f"{text}\n" if count else ""), key, None

    def _page_end(self, last: tuple[str, list[Any]], count: int, page: int, text: str) -> tuple[Any, ...] | None:
        """The key of a full page's last row, or ``None`` after a page that is not full: from the page's last name
        (``text``'s last line) and its document's unique id (:func:`last_name_key`), else by statement ``last``."""
        if count < page:
            return None
        found = last_name_key(text)
        if found is not None:
            statement, params, made = found
            rows = self._query(statement, params)
            if len(rows) == 1:
                return made(rows[0][0])
        rows = self._query(*last)
        if not rows:  # pragma: no cover - the snapshot held between the two statements
            raise StoreError(f"{self.location}: the listing's page of {page} names has no last row")
        return tuple(rows[0])

    def _pages(
        self, query: ListQuery, page: int, columns: str | None
    ) -> Iterator[NamePage]:
        """The pages of :meth:`_walk`, cut to start after ``query.offset`` rows and hold at most ``query.limit``."""
        if query.limit is not None:
            page = max(1, min(page, query.offset + query.limit))
        return window(self._walk(query, page, columns), query.offset, query.limit)

    def _walk(
        self, query: ListQuery, page: int, columns: str | None
    ) -> Iterator[NamePage]:
        """The pages of :meth:`_pages`: day by day, each day's two runs page by page."""

        def run(day: str, serials: bool, key: tuple[Any, ...] | None,
                filters: list[tuple[str, Any]]) -> Iterator[NamePage]:
            for rows in self._run(day, serials, key, filters, page, columns):
                yield day, serials, rows

        return self._days(query, run)

    def _days(
        self, query: ListQuery,
        run: Callable[[str, bool, tuple[Any, ...] | None, list[tuple[str, Any]]], Iterator[_Made]],
        *, look_up_named_day: bool = True,
    ) -> Iterator[_Made]:
        """What ``run`` makes of each day's two runs in turn (the day, serial or not, the key to start after and the
        filters of a run), from ``query.after`` or the first day on, for the days ``query`` selects. A query of
        one day (its year, month and day) has that day looked up first, unless ``look_up_named_day`` is false:
        then its runs are asked at once, and find nothing on a day that has no document."""
        documents: list[tuple[str, Any]] = [
            (column, value)
            for column, value in (
                ("d.series", query.series), ("d.year", query.year), ("d.month", query.month),
                ("d.dom", query.day), ("d.unique_id", query.unique_id),
            )
            if value is not None
        ]
        formats = [
            (column, value)
            for column, value in (("r.format", query.format), ("r.version", query.version))
            if value is not None
        ]
        # within a day, the year, month and day of month are the day's own
        filters = [(c, v) for c, v in documents + formats if c not in ("d.year", "d.month", "d.dom")]
        after = query.after
        # a year, a month and a day given: one day, and no day after it to look for (an empty day's listing is
        # still the one statement that finds no document, or, without the look-up, its runs finding none)
        bounds = _day_range(dict(documents))
        only = bounds[0] if bounds is not None and query.day is not None else None
        if after is None:
            day = only if only is not None and not look_up_named_day else self._next_day(None, documents)
            serials, key = True, None
        else:
            day, serials = after.day.isoformat(), after.serial is not None
            key = _run_key(after, serials)
            if not _day_selected(after.day, dict(documents)):  # the key's day is none the query selects: from the
                day, serials, key = self._next_day(day, documents), True, None  # first day after it that it does
        while day is not None:
            if serials:
                yield from run(day, True, key, filters)
                key = None
            yield from run(day, False, key, filters)
            key, serials = None, True
            day = None if only is not None and day >= only else self._next_day(day, documents)

    def _next_day(self, after: str | None, documents: list[tuple[str, Any]]) -> str | None:
        """The first day after ``after`` (or the first day) with a document the filters select.

        A year, a month of it or a day of that becomes a range of ``d.day`` too,
        so the look-up is a range of the index ``documents_by_day`` rather than
        a walk over every document after ``after`` (a day of a catalog of a
        million names was listed 11 times slower than one of 10,000).

        The least day is the first row in the day's order (``ORDER BY d.day LIMIT 1``), not ``MIN(d.day)``:
        PostgreSQL, before its tables are first analysed (right after a bulk
        load), planned the aggregate as a walk of every document of the range,
        10,000 rows for a day of 10,000 names (2 to 3 ms), where the first row
        is one.
        """
        sql = "SELECT d.day FROM documents d WHERE 1 = 1"
        params: list[Any] = []
        if after is not None:
            sql += " AND d.day > ?"
            params.append(after)
        bounds = _day_range(dict(documents))
        if bounds is not None:
            sql += " AND d.day >= ? AND d.day < ?"
            params += bounds
        for column, value in documents:
            sql += f" AND {column} = ?"
            params.append(value)
        with self._read():
            rows = self._query(f"{sql} ORDER BY d.day LIMIT 1", params)
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    def _run_statement(
        self, day: str, serials: bool, key: tuple[Any, ...] | None, filters: list[tuple[str, Any]], selected: str,
        selected_params: Sequence[Any] = (), *, ranged: tuple[int, int] | None = None,
    ) -> tuple[str, list[Any]]:
        """The statement of a page of one day's serial documents (or those with a foreign id) after ``key``, of
        ``selected`` a row (``selected_params``, its parameters), in the run's order, and its parameters: the
        statement ends before its ``LIMIT``. ``ranged``: the least and greatest id of the page's documents, for
        their representations read as :meth:`_run_join` reads them so."""
        columns = _SERIAL_RUN if serials else _FOREIGN_RUN
        documents, chosen, rest, more = self._run_documents(day, serials, key, filters)
        tables, condition, condition_params = self._run_join(ranged)
        sql = f"SELECT {selected} FROM {tables} WHERE {condition}{documents}{rest}"
        params = [*selected_params, *condition_params, *chosen, *more]
        # d.id after d.series changes no order (a day's series and unique id name one document), but
        # says so to the planner: the index documents_by_day then gives the order and nothing is sorted
        # (SQLite: 2.5 times as fast a page, when the series is given). So does d.serial before the foreign
        # run's unique id (every one NULL there): PostgreSQL, its tables not yet analysed, otherwise found a
        # day's few foreign ids by reading every serial document of the day by the series' unique index.
        order = ", ".join(columns[:-2]) if serials else f"d.serial, {', '.join(columns[:-2])}"
        return f"{sql} ORDER BY {order}, d.id, {', '.join(columns[-2:])}", params

    def _run_documents(
        self, day: str, serials: bool, key: tuple[Any, ...] | None, filters: list[tuple[str, Any]],
    ) -> tuple[str, list[Any], str, list[Any]]:
        """What selects a run's documents after ``key`` (their own columns) and its parameters, then what selects
        among their representations (`` AND …`` or nothing) and its parameters."""
        columns = _SERIAL_RUN if serials else _FOREIGN_RUN
        documents = f"d.day = ? AND d.serial IS {'NOT NULL' if serials else 'NULL'}" + "".join(
            f" AND {column} = ?" for column, _ in filters if column.startswith("d."))
        chosen: list[Any] = [day, *(value for column, value in filters if column.startswith("d."))]
        rest = "".join(f" AND {column} = ?" for column, _ in filters if not column.startswith("d."))
        more: list[Any] = [value for column, value in filters if not column.startswith("d.")]
        if key is not None:
            # The whole key after the last row; and, said again of the index's own columns
            # alone, where in the index to start (PostgreSQL starts a range only from that).
            lead = 2 if serials else 1
            documents += f" AND ({', '.join(columns[:lead])}) >= ({', '.join('?' * lead)})"
            chosen += key[:lead]
            rest += f" AND ({', '.join(columns)}) > ({', '.join('?' * len(columns))})"
            more += key
        return documents, chosen, rest, more

    def _run_join(self, ranged: tuple[int, int] | None) -> tuple[str, str, list[Any]]:
        """How a run's statement reads the run's documents ``d`` and their representations ``r``: its tables, a
        condition that ends in ``AND`` (or nothing) and its parameters. A join planned as a look-up a document
        (:attr:`run_representations`); ``ranged``, the least and greatest id of the page's documents: a join of
        the representations in that range of ids (one range of ``representations_pkey``)."""
        if ranged is None:
            return f"documents d {self.run_representations}", "", []
        return ("documents d JOIN representations r ON r.document = d.id", "r.document BETWEEN ? AND ? AND ",
                list(ranged))

    def _run(
        self, day: str, serials: bool, key: tuple[Any, ...] | None,
        filters: list[tuple[str, Any]], page: int, selected: str | None,
    ) -> Iterator[list[tuple[Any, ...]]]:
        """One day's serial documents (or those with a foreign id) after ``key``, a page (a list of rows) at a time.

        A row is of ``selected`` (:data:`~pdi.archive.catalog.rows.REP_COLUMNS`), or,
        for ``None``, of the run's own columns (:data:`_SERIAL_RUN`, :data:`_FOREIGN_RUN`).
        """
        columns = _SERIAL_RUN if serials else _FOREIGN_RUN
        while True:
            sql, params = self._run_statement(day, serials, key, filters, selected or ", ".join(columns))
            with self._read():
                rows = self._query(f"{sql} LIMIT ?", [*params, page])
            if rows:
                yield rows
            if len(rows) < page:
                return
            last = rows[-1]
            if selected is None:
                following = tuple(last)
            else:  # series, day, unique_id, serial, version, format, …
                following = (last[3], last[2], last[0], last[4], last[5]) if serials else (last[2], last[0], last[4], last[5])
            if following == key:  # pragma: no cover - a database whose order and comparison disagree
                raise StoreError(f"{self.location}: listing the catalog does not advance past {key}")
            key = following

    def snapshot(self) -> AbstractContextManager[None]:
        """One read transaction for several walks (an export): every page inside sees the same catalog, as it was
        at the first read (:meth:`_snapshot`), whatever is deposited meanwhile."""
        return self._snapshot()

    def count_blobs_used(self, series: Sequence[str] | None = None) -> int:
        """How many distinct blobs the catalog names (only by names in ``series``, if given)."""
        scope, params = _blob_scope(series)
        with self._read():
            rows = self._query(f"SELECT COUNT(DISTINCT r.sha256) {scope}", params)
        return int(rows[0][0])

    def iter_blob_uses(self, series: Sequence[str] | None = None, *, page: int = 1000) -> Iterator[BlobUse]:
        """Each blob the catalog names (by names in ``series``, if given), by SHA-256, a page at a time.

        A page takes the next ``page`` SHA-256 names from the index
        ``representations_by_sha`` and then sums up their rows, so a blob
        that a million names share costs one group, not a million records.
        """
        scope, params = _blob_scope(series)
        after: str | None = None
        while True:
            bound = "" if after is None else " AND r.sha256 > ?"
            lower: list[Any] = [*params] if after is None else [*params, after]
            with self._read():
                names = self._query(
                    f"SELECT DISTINCT r.sha256 {scope}{bound} ORDER BY r.sha256 LIMIT ?", [*lower, page]
                )
                if not names:
                    return
                last = str(names[-1][0])
                rows = self._query(
                    "SELECT r.sha256, r.format, r.media_type, r.charset, r.line_ending, COUNT(*),"
                    " MIN(r.size), MAX(r.size), SUM(CASE WHEN r.purged IS NULL THEN 0 ELSE 1 END)"
                    f" {scope}{bound} AND r.sha256 <= ?"
                    " GROUP BY r.sha256, r.format, r.media_type, r.charset, r.line_ending"
                    " ORDER BY r.sha256, r.format, r.media_type, r.charset, r.line_ending",
                    [*lower, last],
                )
            grouped: dict[str, list[tuple[Any, ...]]] = {}
            for row in rows:
                grouped.setdefault(str(row[0]), []).append(row)
            for (sha256,) in names:
                uses = grouped.get(str(sha256))
                if uses:  # none: the index names what no row holds, damage the catalog's integrity check reports
                    yield blob_use(str(sha256), uses)
            if len(names) < page:
                return
            after = last

    def held_the_same_day(self, key: DocumentKey, sha256s: Sequence[str]) -> RepresentationRecord | None:
        """A representation of a document of ``key``'s series and day minted before ``key``'s that keeps one of
        ``sha256s`` (its octets not purged), the first in listing order; ``None`` if there is none. A document
        minted after it (a later message of the same mbox, the same octets) does not hold them "already".

        One query by the ``representations_by_sha`` index (a name a deposit minted just now is the
        only one of its octets, usually, so there is nothing more to read).
        """
        marks = ", ".join("?" * len(sha256s))
        with self._read():
            rows = self._query(
                f"SELECT {REP_COLUMNS} FROM representations r JOIN documents d ON d.id = r.document"
                f" WHERE r.sha256 IN ({marks}) AND r.purged IS NULL AND d.series = ? AND d.day = ?"
                " AND d.id < (SELECT id FROM documents WHERE series = ? AND day = ? AND unique_id = ?)"
                f"{LISTING_ORDER} LIMIT 1",
                (*sha256s, key.series, key.day.isoformat(), key.series, key.day.isoformat(), key.unique_id),
            )
        return rep_record(rows[0]) if rows else None

    def blob_representations(self, sha256: str) -> list[RepresentationRecord]:
        """Every representation that names the blob ``sha256``, in listing order."""
        with self._read():
            rows = self._query(
                f"SELECT {REP_COLUMNS} FROM representations r JOIN documents d ON d.id = r.document"
                f" WHERE r.sha256 = ?{LISTING_ORDER}",
                (sha256,),
            )
        return [rep_record(r) for r in rows]
