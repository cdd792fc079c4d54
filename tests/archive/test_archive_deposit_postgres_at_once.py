"""A small deposit on PostgreSQL in one statement, committed on its own: one round trip, all or nothing.

A new serial whose formats are all in hand (blobs of at most ``INLINE_LIMIT``
octets, a few full-text passages) is minted with every row of its deposit by
one statement sent outside a transaction, which PostgreSQL commits before it
answers: one format by the function of schema 14 (``pdi_deposit_one``), more
by data-modifying ``WITH`` queries (``pdi.archive.postgres.deposits._at_once``). What
either writes must be what the transaction of several statements wrote, in
its order; a statement that fails must leave every table as it was and take
no serial; concurrent depositors (through pgbouncer too) must still get
gap-free serials; a refusal (a mirrored series, a serial taken) is said as before.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import re
import threading
from collections.abc import Iterator

import psycopg
import pytest

from pdi.archive import Archive, Content
from pdi.archive.postgres import PostgresStore
from pdi.archive.store import NewRepresentation
from pdi.errors import ImmutabilityError, StoreError
from pdi.signing import SigningKey
from support.pgcluster import TemporaryBouncer, TemporaryCluster

S = "oma.eop.gov.us"
_schemas = iter(range(1, 1 << 20))

#: Every table a deposit writes.
TABLES = ("daily_serials", "documents", "document_days", "versions", "representations", "blob_fixity", "blobs",
          "search_sources", "search_passages", "fragment_indexes")


@pytest.fixture
def pg(pg_cluster: TemporaryCluster) -> Iterator[Archive]:
    archive = Archive.init(pg_cluster.create_schema(f"pdi_at_once_{next(_schemas)}"))
    archive.add_series(S)
    try:
        yield archive
    finally:
        archive.close()


def _store(archive: Archive) -> PostgresStore:
    store = archive.store
    assert isinstance(store, PostgresStore)
    return store


def _rows(archive: Archive, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    return _store(archive)._query(sql, params)


def _counts(archive: Archive) -> dict[str, object]:
    return {table: _rows(archive, f"SELECT count(*) FROM {table}")[0][0] for table in TABLES}


class _Sent:
    """The queries psycopg sends (every ``Cursor.execute``, a client-side cursor's too), while counting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.queries: list[str] = []
        real = psycopg.Cursor.execute

        def execute(cursor: psycopg.Cursor[object], query: object, *args: object, **kwargs: object) -> object:
            self.queries.append(str(query))
            return real(cursor, query, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)


@pytest.mark.parametrize("function", [True, False], ids=["function", "statement"])
def test_a_small_text_is_deposited_by_one_query_and_reads_back_whole(
    pg: Archive, monkeypatch: pytest.MonkeyPatch, function: bool
) -> None:
    """By the function of schema 14, or, in a catalog without it, by one statement."""
    monkeypatch.setattr(_store(pg), "_deposit_one", function)
    pg.add(S, b"the first minutes\n", format="text")  # the series is then known to be registered
    data = ("Minutes of the meeting\n" + "the quorum was present and voted\n" * 30).encode()
    sent = _Sent(monkeypatch)
    name = pg.add(S, data, format="text")
    monkeypatch.undo()
    assert len(sent.queries) == 1, sent.queries
    assert sent.queries[0].startswith("SELECT pdi_deposit_one(" if function else "WITH s AS (")
    assert name.serial == 2
    sha = hashlib.sha256(data).hexdigest()
    assert pg.get(str(name)).data == data
    assert _rows(pg, "SELECT data FROM blobs WHERE sha256 = ?", (sha,)) == [(data,)]
    assert _rows(pg, "SELECT passages FROM search_sources WHERE sha256 = ?", (sha,)) == [(1,)]
    assert _rows(pg, "SELECT documents, last_deposit IS NOT NULL FROM document_days") == [(2, True)]
    hits = pg.search("quorum voted")
    assert [str(hit.name).split("#")[0] for hit in hits.hits] == [str(name)]
    assert pg.verify().ok


def test_what_one_statement_writes_is_what_the_transaction_wrote(pg: Archive, pg_cluster: TemporaryCluster) -> None:
    """The same deposits made at once (one format: by the function; more: by the statement) and the long way
    (the transaction of several statements, taken for a series not known to be registered) leave the same
    rows, but for ids and times."""
    texts = [b"plain words\n" * 40, ("caf\u00e9 na\u00efve \u2014 " * 60).encode(), b"\xef\xbb\xbfwith a mark\n",
             b"\xff\xfe" + "little-endian text\n".encode("utf-16-le"), b"<p>a page</p>\n"]
    deposits = [[(data, "text")] for data in texts[:4]] + [[(texts[4], "html")], [(b"\x00\x01\x02", "octet-stream")]]
    deposits += [[(data, "text"), (data, "octet-stream")] for data in texts[:3]]  # by the statement
    deposits += [[(b"first of two\n", "text"), (b"<p>second</p>\n", "html")]]
    for formats in deposits:
        pg.deposit(S, [Content(data, token) for data, token in formats])
    with Archive.init(pg_cluster.create_schema(f"pdi_at_once_{next(_schemas)}")) as slow:
        slow.add_series(S)
        for formats in deposits:  # registered=False: the long way, with its series check
            slow.store.mint(S, pg.now().date(), None, [_prepared(slow, data, token) for data, token in formats],
                            "2026-11-25T00:00:00.000000Z")
        for table, columns in (
            ("representations", "format, media_type, charset, line_ending, sha256, size, stored, version"),
            ("blob_fixity", "sha256, size, chunk_size, chunks"),
            ("blobs", "sha256, data, upload"),
            ("search_sources", "sha256, media_type, charset, passages, note"),
            ("search_passages", "sha256, media_type, charset, start, body, runs, tsv"),
            ("fragment_indexes", "sha256, media_type, charset, data"),
            ("documents", "series, day, year, month, dom, unique_id, serial, embargo_until"),
            ("versions", "version, embargo_until"),
            ("daily_serials", "series, day, last"),
            ("document_days", "series, day, documents"),
        ):
            sql = f"SELECT {columns} FROM {table} ORDER BY {columns.replace(', tsv', '')}"
            assert _rows(pg, sql) == _rows(slow, sql), table


def _prepared(archive: Archive, data: bytes, token: str) -> NewRepresentation:
    from pdi.archive.content import prepare

    return prepare(Content(data, token), archive.store)


def test_a_failing_statement_leaves_every_table_as_it_was_and_takes_no_serial(pg: Archive) -> None:
    first = pg.add(S, b"first\n", format="text")
    before = _counts(pg)
    _rows(pg, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
    _rows(pg, "CREATE TRIGGER refuse BEFORE INSERT ON representations FOR EACH ROW EXECUTE FUNCTION refuse()")
    with pytest.raises(StoreError, match="refused"):
        pg.add(S, b"second\n" * 20, format="text")
    assert _counts(pg) == before
    _rows(pg, "DROP TRIGGER refuse ON representations")
    second = pg.add(S, b"second\n" * 20, format="text")
    assert (first.serial, second.serial) == (1, 2)
    serials = [r[0] for r in _rows(pg, "SELECT serial FROM documents ORDER BY serial")]
    assert serials == [1, 2]


def test_a_mirrored_series_is_refused_and_takes_no_serial(pg: Archive) -> None:
    pg.add(S, b"first\n", format="text")
    before = _counts(pg)
    pg.add_mirror(S, "https://a.example.org", "origin", json.dumps({"keys": [SigningKey.generate().public.jwk()]}))
    with pytest.raises(ImmutabilityError, match=re.escape("mirrored from https://a.example.org")):
        pg.add(S, b"second\n", format="text")
    assert _counts(pg) == before
    assert _rows(pg, "SELECT last FROM daily_serials") == [(1,)]


def test_two_formats_of_the_same_octets_share_their_blob(pg: Archive) -> None:
    data = b"the same octets\n" * 8
    names = pg.deposit(S, [Content(data, "text"), Content(data, "octet-stream")])
    assert [pg.get(str(n)).data for n in names] == [data, data]
    sha = hashlib.sha256(data).hexdigest()
    assert _rows(pg, "SELECT count(*) FROM blobs WHERE sha256 = ?", (sha,)) == [(1,)]
    assert _rows(pg, "SELECT count(*) FROM blob_fixity WHERE sha256 = ?", (sha,)) == [(1,)]
    assert _rows(pg, "SELECT format FROM representations ORDER BY format") == [("octet-stream",), ("text",)]


def test_threads_depositing_at_once_get_gap_free_serials(pg: Archive) -> None:
    threads, each = 6, 15
    names: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def deposit(t: int) -> None:
        try:
            for n in range(each):
                name = pg.add(S, f"thread {t} deposit {n}\n".encode(), format="text")
                with lock:
                    names.append(str(name))
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=deposit, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    serials = sorted(r[0] for r in _rows(pg, "SELECT serial FROM documents"))
    assert serials == list(range(1, threads * each + 1))
    assert _rows(pg, "SELECT last FROM daily_serials") == [(threads * each,)]
    assert _rows(pg, "SELECT documents FROM document_days") == [(threads * each,)]
    assert len(set(names)) == threads * each
    assert all(pg.get(name).data.startswith(b"thread ") for name in names)


@pytest.mark.parametrize("formats", [["text"], ["text", "octet-stream"]], ids=["function", "statement"])
def test_a_serial_a_foreign_id_holds_is_refused_and_no_serial_is_taken(pg: Archive, formats: list[str]) -> None:
    """Not made by pdi's own foreign ids (a digit id is escaped), but refused all the same: no gap after it."""
    pg.add(S, b"first\n", format="text")
    _rows(pg, "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
              " SELECT series, day, year, month, dom, '2', NULL, created_at FROM documents")
    before = _counts(pg)
    with pytest.raises(ImmutabilityError, match="already minted"):
        pg.deposit(S, [Content(b"second\n", token) for token in formats])
    assert _counts(pg) == before
    assert _rows(pg, "SELECT last FROM daily_serials") == [(1,)]


_bounced = iter(range(1, 1 << 20))


def test_through_pgbouncer_in_transaction_mode_deposits_at_once_mint_gap_free(pg_cluster: TemporaryCluster) -> None:
    """Two server connections shared by eight depositing threads, one and two formats a deposit."""
    database = f"pdi_at_once_bounced_{next(_bounced)}"
    pg_cluster.create_database(database)
    bouncer = TemporaryBouncer(pg_cluster, database, pool_size=2).start()
    try:
        with Archive.init(bouncer.url()) as archive:
            archive.add_series(S)
            names: list[list[str]] = [[] for _ in range(8)]

            def deposit(t: int) -> None:
                for n in range(12):
                    data = f"thread {t} deposit {n}\n".encode()
                    formats = [Content(data, "text")] + ([Content(data, "octet-stream")] if n % 3 == 0 else [])
                    names[t].append(str(archive.deposit(S, formats)[0]))

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(deposit, range(8)))
            serials = sorted(r[0] for r in _rows(archive, "SELECT serial FROM documents"))
            assert serials == list(range(1, 8 * 12 + 1))
            for t, made in enumerate(names):
                assert [archive.get(name).data for name in made] == [f"thread {t} deposit {n}\n".encode() for n in range(12)]
    finally:
        bouncer.stop()


@pytest.mark.parametrize("formats", [["html"], ["html", "text"]], ids=["function", "statement"])
def test_the_rows_are_written_in_the_long_ways_order(pg: Archive, formats: list[str]) -> None:
    """The order two deposits of the same octets meet on the unique keys in: the same whichever way each is
    made (another order would let them wait for each other: a deadlock). A trigger numbers each row written."""
    tables = ("daily_serials", "documents", "document_days", "versions", "blob_fixity", "blobs", "fragment_indexes",
              "search_sources", "search_passages", "representations")
    _rows(pg, "CREATE TABLE written (n serial, name text)")
    _rows(pg, "CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS"
              " $$ BEGIN INSERT INTO written (name) VALUES (TG_TABLE_NAME); RETURN NEW; END $$")
    for table in tables:
        _rows(pg, f"CREATE TRIGGER note_write BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION note_write()")
    pg.deposit(S, [Content(f"<p>the same words, as {token}</p>\n".encode(), token) for token in formats])
    order = [str(r[0]) for r in _rows(pg, "SELECT name FROM written ORDER BY n")]
    firsts = sorted(set(order), key=order.index)
    assert firsts[:2] == ["daily_serials", "documents"]
    assert [t for t in firsts if t in tables[4:]] == list(tables[4:])
    assert set(firsts) == set(tables)
