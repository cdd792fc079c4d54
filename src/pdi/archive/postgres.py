"""The team store: catalog and blobs in PostgreSQL, through psycopg 3.

Selected by a ``postgresql://`` (or ``postgres://``) URL. The database must
exist; ``pdi init URL`` creates the tables in it. Blobs live in a ``blobs``
table (``bytea``, named by SHA-256) written in the same transaction as the
catalog rows, so a deposit is atomic with no file system involved. Daily
serials come from a counter row updated inside the deposit's transaction
(``INSERT … ON CONFLICT DO UPDATE … RETURNING``): concurrent minters queue on
that row, and a rolled-back deposit gives its serial back.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors

from pdi.archive.sql import SQLStore
from pdi.archive.store import SCHEMA_VERSION, BlobSource, blob_bytes
from pdi.errors import ImmutabilityError, NotFoundError, PDIError, StoreError

# Any fixed number: the advisory lock that serializes schema migrations.
_MIGRATION_LOCK = 0x0A5C1E


def is_postgres_url(location: str) -> bool:
    """Whether a location names a PostgreSQL database rather than a directory."""
    return location.startswith(("postgresql://", "postgres://"))


def _oneline(exc: BaseException) -> str:
    # psycopg's messages span lines (a hint on the next one); the CLI prints one line.
    return " ".join(str(exc).split())


def _redact(url: str) -> str:
    # Never print a password written into the URL: in its userinfo, or as
    # libpq's password= query parameter.
    url = _PASSWORD_PARAMETER.sub(r"\1***", url)
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)


class PostgresStore(SQLStore):
    """A PostgreSQL database holding the catalog and the blobs."""

    id_pk = "BIGSERIAL PRIMARY KEY"
    blob_type = "BYTEA"
    blob_table = True
    for_update = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        self.location = _redact(url)
        try:
            self._conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        self._lock = threading.RLock()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            cursor = self._conn.execute(sql.replace("?", "%s"), tuple(params))
            if cursor.description is None:
                return []
            return list(cursor.fetchall())
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    @contextmanager
    def _outermost(self, write: bool) -> Iterator[None]:
        # Writers queue on the rows they update (the serial counter, FOR UPDATE).
        try:
            with self._conn.transaction():
                yield
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def _has_table(self, name: str) -> bool:
        rows = self._query("SELECT to_regclass(?)", (name,))
        return rows[0][0] is not None

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        with self._write():
            self._query("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            return super().migrate(target)

    def _stage_blob(self, sha256: str, content: BlobSource) -> None:
        return None

    def _store_blob(self, sha256: str, content: BlobSource) -> None:
        if self._query("SELECT 1 FROM blobs WHERE sha256 = ?", (sha256,)):
            return  # content-addressed: the same name is the same bytes
        self._query(
            "INSERT INTO blobs (sha256, data) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
            (sha256, blob_bytes(content)),
        )

    def read_blob(self, sha256: str) -> bytes | None:
        # Binary results: a bytea in text format would arrive hex-encoded, twice the size.
        with self._lock:
            try:
                cursor = self._conn.cursor(binary=True)
                cursor.execute("SELECT data FROM blobs WHERE sha256 = %s", (sha256,))
                row = cursor.fetchone()
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        return bytes(row[0]) if row is not None else None

    def blob_names(self) -> set[str]:
        with self._read():
            return {str(r[0]) for r in self._query("SELECT sha256 FROM blobs")}

    def iter_blob_names(self, *, page: int = 5000) -> Iterator[str]:
        """Every blob's name in ascending order, a page at a time (keyset on the primary key)."""
        after: str | None = None
        while True:
            with self._read():
                if after is None:
                    rows = self._query("SELECT sha256 FROM blobs ORDER BY sha256 LIMIT ?", (page,))
                else:
                    rows = self._query(
                        "SELECT sha256 FROM blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?", (after, page)
                    )
            for (name,) in rows:
                yield str(name)
            if len(rows) < page:
                return
            after = str(rows[-1][0])


def open_postgres(url: str, *, create: bool) -> PostgresStore:
    """Connect to an archive database (with ``create``, make its tables) and migrate forward."""
    store = PostgresStore(url)
    try:
        if not create and store.schema_version() == 0:
            raise NotFoundError(
                f"no archive in {store.location} (no pdi tables); create one with pdi init"
            )
        store.migrate()
    except PDIError:
        store.close()
        raise
    return store
