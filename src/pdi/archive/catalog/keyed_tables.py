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
B-tree ordered by its key: a deposit writes four pages fewer to the
write-ahead log (27 to 23 for a text of 1 KB: a page less for each row it
inserts, a version, a format, a blob's digests, a source of the index; the
day's two counters, updated in place, were one page each already) and a
catalog holds each key once (a tenth smaller for 100,000 texts: 211 to 191
MB). Their rows are
small, as SQLite advises for such tables, but for the chunk digests of a
blob of more than some 30 MiB (32 octets a MiB), which go on to overflow
pages as a large row does in any table. No statement of pdi reads a row
id of them.

The step follows SQLite's way of changing a table's form
(https://sqlite.org/lang_altertable.html#otheralter): with the connection's
foreign keys off (:meth:`pdi.archive.sqlite.SQLiteStore.migrate`), each
table is made anew under another name from its own definition (as the
earlier steps left it in ``sqlite_master``), filled from the old one, the
old one dropped and the new one renamed, its indexes made again from their
own text; the triggers (``serial_names``', step 15, which name these
tables) are dropped first and made again last from theirs; and before the
commit ``PRAGMA foreign_key_check`` must find nothing
(:meth:`~pdi.archive.sqlite.SQLiteStore._migrated`). It all runs in
the migration's one transaction: a catalog is at step 15 or at step 16,
never between. PostgreSQL keeps every table by its key already and has
nothing to do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final

#: The step of the schema these statements are (:func:`pdi.archive.catalog.schema_steps.migrations`).
KEYED_STEP: Final = 16

#: The tables step 16 makes again.
KEYED_TABLES: Final = ("daily_serials", "document_days", "versions", "representations", "blob_fixity", "search_sources")

#: The end of a table's definition that keeps it by its key already.
_KEYED: Final = re.compile(r"\)\s*WITHOUT\s+ROWID\s*$", re.IGNORECASE)

#: Reads the catalog inside the migration's transaction: a statement and its parameters, the rows.
Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def keyed(query: Query) -> list[str]:
    """The statements of step 16 for the catalog ``query`` reads (inside the migration's transaction, so what it
    reads is what the statements change): each table made again from its own definition as the earlier steps
    left it (``sqlite_master``: every ``ALTER TABLE`` since is in it), ``WITHOUT ROWID``, and its indexes; every
    trigger dropped first and made again last, from its own text. Nothing is restated here that the earlier steps
    say, so a catalog keeps exactly the columns, defaults and constraints it had."""
    triggers = query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY rowid", ())
    statements = [f"DROP TRIGGER {name}" for name, _ in triggers]
    for table in KEYED_TABLES:
        (definition,), = query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        columns = ", ".join(str(name) for name, in query("SELECT name FROM pragma_table_info(?)", (table,)))
        indexes = [str(sql) for sql, in query(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
            (table,))]
        body = str(definition)[str(definition).index("("):]
        body = _KEYED.sub(")", body)  # made so already (a catalog taken back a step): made so again
        statements += [
            f"CREATE TABLE {table}_keyed {body} WITHOUT ROWID",
            f"INSERT INTO {table}_keyed ({columns}) SELECT {columns} FROM {table}",
            f"DROP TABLE {table}",
            f"ALTER TABLE {table}_keyed RENAME TO {table}",
            *indexes,
        ]
    return statements + [str(sql) for _, sql in triggers]
