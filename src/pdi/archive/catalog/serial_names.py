"""Schema step 15 on SQLite: ``serial_names``, the names a resolver is asked for most, one row each, kept by triggers.

A name spelled as ``pdi add`` prints it
(``urn:pdi://SERIES/YYYY/MM/DD/SERIAL.FORMAT.VERSION``) names one format of
one version of a document with a serial. Told by the catalog's tables, it
takes five of them (the document, its version, the format, whether either
is withdrawn, their embargoes): a walk down ten B-trees for a name the
resolver has not been asked before. ``serial_names`` holds one row for
each such name, keyed by the name itself, with what
:meth:`pdi.archive.sqlite.SQLiteStore.public_serial_version` needs to
answer it: the format's record, the document's and version's embargoes,
whether it is withdrawn or purged, and how many formats its version has.

Triggers keep it as :data:`SERIAL_NAMES_OF` makes it from the other tables,
whatever writes them (a deposit, an import, a mirror's sync, a withdrawal, a
purge, an embargo set or lifted): ``tests/archive/test_archive_serial_names.py``
checks that they do. A name without a row is read by the usual statements,
so a row may be missing (a document without a serial), but none says more
than the tables say. PostgreSQL has no such table: its resolver reads the
tables (:meth:`~pdi.archive.catalog.base.CatalogBase.public_serial_version`).
"""

from __future__ import annotations

from typing import Final


def _name_of(series: str, day: str, serial: str) -> str:
    """The SQL of a serial document's generic name ``urn:pdi://SERIES/YYYY/MM/DD/SERIAL``."""
    return f"'urn:pdi://' || {series} || '/' || replace({day}, '-', '/') || '/' || {serial}"


#: The generic name of document ``d``.
_NAME: Final = _name_of("d.series", "d.day", "d.serial")
#: The documents with names of this shape: a serial, which is also its unique id as spelled.
_SERIAL_DOCUMENT: Final = "d.serial IS NOT NULL AND d.unique_id = CAST(d.serial AS TEXT)"


def _names_of(generic: str) -> str:
    """The rows of every format and version of the document of this generic name (an SQL expression): the names
    ``GENERIC.FORMAT.VERSION`` sort after ``GENERIC.`` and before ``GENERIC/``, a range of the table's key."""
    return f"name > {generic} || '.' AND name < {generic} || '/'"


def _names_of_document(document: str) -> str:
    """The rows of the names of the document whose id is ``document`` (none for a document without a serial)."""
    return (f"name > (SELECT {_NAME} || '.' FROM documents d WHERE d.id = {document} AND {_SERIAL_DOCUMENT})"
            f" AND name < (SELECT {_NAME} || '/' FROM documents d WHERE d.id = {document} AND {_SERIAL_DOCUMENT})")


def _row_of(rep: str) -> str:
    """The ``INSERT … SELECT`` of the rows of representation ``rep`` (``NEW`` in a trigger, ``r`` in a query over
    ``representations r``), of document ``d`` and version ``v`` (the ``FROM`` follows)."""
    return (
        f"INSERT INTO serial_names SELECT {_NAME} || '.' || {rep}.format || '.' || {rep}.version AS name, {rep}.version,"
        f" {rep}.media_type, {rep}.charset, {rep}.line_ending, {rep}.sha256, {rep}.size, {rep}.created_at,"
        f" {rep}.stored, d.embargo_until, v.embargo_until,"
        f" {rep}.purged IS NOT NULL OR EXISTS (SELECT 1 FROM withdrawals w WHERE w.document = d.id"
        f" AND (w.version IS NULL OR w.version = {rep}.version)),"
        f" (SELECT COUNT(*) FROM representations o WHERE o.document = {rep}.document AND o.version = {rep}.version)"
    )


#: The rows of ``serial_names`` as the other tables make them (the migration fills the table with it).
SERIAL_NAMES_OF: Final = (
    _row_of("r") + " FROM documents d JOIN versions v ON v.document = d.id"
    f" JOIN representations r ON r.document = d.id AND r.version = v.version WHERE {_SERIAL_DOCUMENT}"
)
_SELECT: Final = SERIAL_NAMES_OF.removeprefix("INSERT INTO serial_names ")
#: The names whose row differs from what the tables say, or that have a row and should have none, or none and
#: should have one (``pdi verify``), at most ``?`` of them.
SERIAL_NAMES_DIFFERING: Final = (
    f"SELECT name FROM (SELECT * FROM serial_names EXCEPT {_SELECT})"
    f" UNION SELECT name FROM ({_SELECT} EXCEPT SELECT * FROM serial_names) ORDER BY name LIMIT ?"
)
#: The kind of :class:`~pdi.archive.store.CatalogProblem` of a row that says what the tables do not.
PROBLEM_KIND: Final = "serial-names"
#: The table made again from the other tables (``pdi verify --repair``).
SERIAL_NAMES_AGAIN: Final = ("DELETE FROM serial_names", SERIAL_NAMES_OF)

_NEW_ROW: Final = (f"{_row_of('NEW')} FROM documents d JOIN versions v ON v.document = d.id AND v.version = NEW.version"
                   f" WHERE d.id = NEW.document AND {_SERIAL_DOCUMENT}")
_OLD_ROW: Final = ("DELETE FROM serial_names WHERE name = ("
                   f"SELECT {_NAME} || '.' || OLD.format || '.' || OLD.version FROM documents d"
                   f" WHERE d.id = OLD.document AND {_SERIAL_DOCUMENT})")


#: Whether the document of a trigger's ``OLD`` row had names of this shape.
_OLD_SERIAL: Final = "OLD.serial IS NOT NULL AND OLD.unique_id = CAST(OLD.serial AS TEXT)"
#: The rows of the names of a trigger's ``OLD`` document.
_OLD_NAMES: Final = f"{_OLD_SERIAL} AND {_names_of(_name_of('OLD.series', 'OLD.day', 'OLD.serial'))}"


def _siblings(row: str, other: str) -> str:
    """The names of the other formats of ``row``'s version (``NEW`` or ``OLD``); ``other`` says which are others."""
    return (f"SELECT {_NAME} || '.' || o.format || '.' || o.version FROM documents d"
            f" JOIN representations o ON o.document = d.id"
            f" WHERE d.id = {row}.document AND o.version = {row}.version AND {other} AND {_SERIAL_DOCUMENT}")


#: The statements of step 15: the table, filled, and its triggers.
SERIAL_NAMES: Final[tuple[str, ...]] = (
    """CREATE TABLE serial_names (
        name TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        media_type TEXT NOT NULL,
        charset TEXT,
        line_ending TEXT,
        sha256 TEXT NOT NULL,
        size BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        stored TEXT NOT NULL,
        document_embargo TEXT,
        version_embargo TEXT,
        withdrawn INTEGER NOT NULL,
        formats INTEGER NOT NULL) WITHOUT ROWID""",
    SERIAL_NAMES_OF,
    # a format deposited: its row, and one format more for the others of its version
    f"""CREATE TRIGGER serial_names_added AFTER INSERT ON representations BEGIN
        UPDATE serial_names SET formats = formats + 1 WHERE name IN ({_siblings("NEW", "o.format <> NEW.format")});
        {_NEW_ROW};
        END""",
    # a format changed (its octets purged): its row made again
    f"""CREATE TRIGGER serial_names_changed AFTER UPDATE ON representations BEGIN
        {_OLD_ROW};
        {_NEW_ROW};
        END""",
    f"""CREATE TRIGGER serial_names_withdrawn AFTER INSERT ON withdrawals BEGIN
        UPDATE serial_names SET withdrawn = 1
            WHERE {_names_of_document("NEW.document")} AND (NEW.version IS NULL OR version = NEW.version);
        END""",
    f"""CREATE TRIGGER serial_names_document_embargo AFTER UPDATE OF embargo_until ON documents BEGIN
        UPDATE serial_names SET document_embargo = NEW.embargo_until WHERE {_names_of_document("NEW.id")};
        END""",
    f"""CREATE TRIGGER serial_names_version_embargo AFTER UPDATE OF embargo_until ON versions BEGIN
        UPDATE serial_names SET version_embargo = NEW.embargo_until
            WHERE {_names_of_document("NEW.document")} AND version = NEW.version;
        END""",
    # what no part of pdi does, so that no row outlives what it says: a format, version or document removed, a
    # document renamed, a withdrawal taken back
    f"""CREATE TRIGGER serial_names_removed AFTER DELETE ON representations BEGIN
        {_OLD_ROW};
        UPDATE serial_names SET formats = formats - 1 WHERE name IN ({_siblings("OLD", "1")});
        END""",
    f"""CREATE TRIGGER serial_names_version_removed AFTER DELETE ON versions BEGIN
        DELETE FROM serial_names WHERE {_names_of_document("OLD.document")} AND version = OLD.version;
        END""",
    f"""CREATE TRIGGER serial_names_document_removed AFTER DELETE ON documents BEGIN
        DELETE FROM serial_names WHERE {_OLD_NAMES};
        END""",
    f"""CREATE TRIGGER serial_names_document_renamed AFTER UPDATE OF series, day, unique_id, serial ON documents BEGIN
        DELETE FROM serial_names WHERE {_OLD_NAMES};
        {SERIAL_NAMES_OF} AND d.id = NEW.id;
        END""",
    f"""CREATE TRIGGER serial_names_withdrawal_removed AFTER DELETE ON withdrawals BEGIN
        DELETE FROM serial_names WHERE {_names_of_document("OLD.document")};
        {SERIAL_NAMES_OF} AND d.id = OLD.document;
        END""",
)
