"""Schema step 16 on SQLite: the tables a deposit writes, stored by their primary keys (``WITHOUT ROWID``).

A table of SQLite whose primary key is not one integer column keeps its
rows in one B-tree by a hidden row id, and its key in a second B-tree
beside it (``sqlite_autoindex_…``): every row inserted changes both, and
every look-up by key walks both. Six tables that every deposit writes are
keyed so: ``daily_serials``, ``document_days`` (one row a series and day),
``versions``, ``representations`` (a document's versions and formats),
``blob_fixity`` (a blob's chunk digests, by its SHA-256) and
``search_sources`` (which octets the full-text index has read). Made again
``WITHOUT ROWID`` (https://sqlite.org/withoutrowid.html), each is one
B-tree ordered by its key: a deposit writes six pages fewer to the
write-ahead log (27 to 21 for a text of 1 KB) and a catalog holds each key
once (a tenth smaller for 100,000 texts: 211 to 191 MB). Their rows are
small (a blob's chunk digests are 32 octets a MiB), as SQLite advises for
such tables. No statement of pdi reads a row id of them.

The step follows SQLite's way of changing a table's form
(https://sqlite.org/lang_altertable.html#otheralter): with the connection's
foreign keys off (:meth:`pdi.archive.sqlite.SQLiteStore.migrate`), each
table is made anew under another name, filled from the old one, the old one
dropped and the new one renamed, its indexes made again; ``serial_names``'
triggers (step 15), which name these tables, are dropped first and made
again last; and before the commit ``PRAGMA foreign_key_check`` must find
nothing (:meth:`~pdi.archive.sqlite.SQLiteStore._migrated`). It all runs in
the migration's one transaction: a catalog is at step 15 or at step 16,
never between. PostgreSQL keeps every table by its key already and has
nothing to do.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

#: The step of the schema these statements are (:func:`pdi.archive.catalog.schema.migrations`).
KEYED_STEP: Final = 16

#: Each table: its columns and key as step 15 left them (every ``ALTER TABLE`` since included), and its indexes.
_TABLES: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "daily_serials": (
        """series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            last INTEGER NOT NULL,
            PRIMARY KEY (series, day)""",
        (),
    ),
    "document_days": (
        """series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            documents BIGINT NOT NULL,
            last_deposit TEXT,
            PRIMARY KEY (series, day)""",
        (),
    ),
    "versions": (
        """document INTEGER NOT NULL REFERENCES documents(id),
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            embargo_until TEXT,
            PRIMARY KEY (document, version)""",
        ("CREATE INDEX versions_embargoed ON versions (embargo_until) WHERE embargo_until IS NOT NULL",),
    ),
    "representations": (
        """document INTEGER NOT NULL,
            version INTEGER NOT NULL,
            format TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT,
            line_ending TEXT,
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL,
            created_at TEXT NOT NULL,
            stored TEXT NOT NULL DEFAULT 'exact',
            purged TEXT,
            PRIMARY KEY (document, version, format),
            FOREIGN KEY (document, version) REFERENCES versions(document, version)""",
        ("CREATE INDEX representations_by_sha ON representations (sha256)",),
    ),
    "blob_fixity": (
        """sha256 TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            chunk_size INTEGER NOT NULL,
            chunks BLOB NOT NULL,
            created_at TEXT NOT NULL""",
        (),
    ),
    "search_sources": (
        """sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            passages INTEGER NOT NULL,
            note TEXT,
            indexed_at TEXT NOT NULL,
            PRIMARY KEY (sha256, media_type, charset)""",
        (),
    ),
}

#: The tables step 16 makes again.
KEYED_TABLES: Final = tuple(_TABLES)



def _columns(definition: str) -> str:
    """The names of a table definition's columns (its lines that are not constraints), in order."""
    names = []
    for line in definition.split(",\n"):
        first = line.split()[0]
        if first not in ("PRIMARY", "FOREIGN", "UNIQUE", "CHECK"):
            names.append(first)
    return ", ".join(names)


def _rebuilt(table: str, definition: str, indexes: tuple[str, ...]) -> list[str]:
    new = f"{table}_keyed"
    columns = _columns(definition)
    return [
        f"CREATE TABLE {new} (\n            {definition}) WITHOUT ROWID",
        f"INSERT INTO {new} ({columns}) SELECT {columns} FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE {new} RENAME TO {table}",
        *indexes,
    ]


def keyed(schema: Iterable[str]) -> tuple[str, ...]:
    """The statements of step 16 (run with the connection's foreign keys off, checked before the commit), given
    the statements of the catalog's other steps that make triggers naming these tables (step 15's, of
    ``serial_names``): dropped first, made again last."""
    triggers = [s for s in schema if s.lstrip().startswith("CREATE TRIGGER")]
    return (
        *(f"DROP TRIGGER IF EXISTS {s.split()[2]}" for s in triggers),
        *(statement for table, (definition, indexes) in _TABLES.items()
          for statement in _rebuilt(table, definition, indexes)),
        *triggers,
    )
