"""A name anyone may read is told by one statement on the reading thread's connection (issue 24), and the series anyone
may read, which that connection keeps between statements, follow every change another connection commits at once.

The event loop of ``pdi serve`` asks ``Archive.public_digest`` (an ``N2L``, a ``304``) and ``Archive.public_serial``
(an ``N2R``) of a name not asked before; each is one row of ``serial_names`` and, beside it, what tells whether the
series anyone may read must be read again. SQLite's trace callback is told every statement the connection runs,
the ones a statement runs inside it too (``-- PRAGMA data_version``, which the table-valued ``pragma_data_version``
prepares each time it is read).

What anyone may read is worked out here from the spec (a series is readable when it and every series above it is
public, ``docs/reference/write-api.md``: "A subseries is as private as the most private series
above it"), against the archive written by another ``Archive`` opened on the same directory, as
``pdi series access`` run beside a ``pdi serve`` would.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.server.protocol.plain import serial_fields

TOP = "top.example.us"
SUB = "sub.top.example.us"
OTHER = "other.example.us"


def test_a_public_read_is_one_statement_on_the_connection(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(TOP)
        name = str(archive.add(TOP, b"one statement\n", format="text"))
    fields = serial_fields(name.encode())
    assert fields is not None
    with Archive.open(tmp_path / "archive") as reader:
        assert reader.public_digest(name, TOP) is not None  # the series read once, at the first statement
        conn = reader.store._own_connection()  # type: ignore[attr-defined]
        ran: list[str] = []
        conn.set_trace_callback(ran.append)
        try:
            for _ in range(3):
                assert reader.public_digest(name, TOP) is not None
            assert len(ran) == 3, ran
            ran.clear()
            assert reader.public_serial(*fields, name) is not None
            assert len(ran) == 1, ran
            ran.clear()  # many names at once (POST /api/octets): one statement too, the series not read again
            assert [found is not None for found in reader.public_serials([(fields, name)] * 3)] == [True] * 3
            assert len(ran) == 1, ran
        finally:
            conn.set_trace_callback(None)


def test_a_first_asking_read_keeps_its_cursor_and_no_snapshot(tmp_path: Path) -> None:
    """The thread's reads of one name (``public_serial_named``, ``public_digest``) run on one cursor kept with its
    connection, not one made and freed a statement; each ends its read transaction (the statement stepped to its
    end), so that a checkpoint is not held back and a name deposited after is read at once."""
    root = tmp_path / "archive"
    with Archive.init(root) as writer:
        writer.add_series(TOP)
        first = str(writer.add(TOP, b"first\n", format="text"))
        with Archive.open(root) as reader:
            assert reader.public_serial_named(first, TOP) is not None
            own = reader.store._own  # type: ignore[attr-defined]
            kept = own.cursor
            for _ in range(2):
                assert reader.public_serial_named(first, TOP) is not None
                assert reader.public_digest(first, TOP) is not None
                assert reader.public_serial_named(first + "0", TOP) is None  # no row
                assert own.cursor is kept
                assert not own.conn.in_transaction
            other = sqlite3.connect(root / "catalog.sqlite")
            try:  # the whole log copied back and cut: no reader holds a snapshot in it
                assert other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
            finally:
                other.close()
            second = str(writer.add(TOP, b"second\n", format="text"))
            found = reader.public_serial_named(second, TOP)
            assert isinstance(found, tuple) and found[4] == b"second\n"
            assert reader.public_digest(second, TOP) == found[2]
            assert own.cursor is kept


# a step: (what, series) — what is "private", "public", "deposit" (a text in the series) or "register" (OTHER, if
# not yet, public or private as the step says)
_STEPS = st.lists(st.tuples(st.sampled_from(["private", "public", "deposit", "register-public", "register-private"]),
                            st.sampled_from([TOP, SUB, OTHER])), min_size=1, max_size=8)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS)
def test_the_series_anyone_may_read_follow_each_change_at_once(tmp_path_factory, steps) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("public") / "archive"
    access = {TOP: "public", SUB: "public"}
    parent = {TOP: None, SUB: TOP, OTHER: None}
    names: dict[str, str] = {}
    with Archive.init(root) as writer:
        writer.add_series(TOP)
        writer.add_series(SUB, parent=TOP)
        names[str(writer.add(TOP, b"top\n", format="text"))] = TOP
        names[str(writer.add(SUB, b"sub\n", format="text"))] = SUB
        with Archive.open(root) as reader:
            for i, (what, series) in enumerate(steps):
                if what.startswith("register"):
                    if OTHER in access:
                        continue
                    writer.add_series(OTHER)
                    access[OTHER] = "public"
                    if what == "register-private":
                        writer.set_series_access(OTHER, "private")
                        access[OTHER] = "private"
                elif series not in access:
                    continue
                elif what == "deposit":
                    names[str(writer.add(series, f"{series} {i}\n".encode(), format="text"))] = series
                else:
                    writer.set_series_access(series, what)
                    access[series] = what
                for name, of in names.items():
                    readable, at = True, of
                    while at is not None:
                        readable = readable and access[at] == "public"
                        at = parent[at]
                    told = reader.public_digest(name, of)
                    assert (told is not None) == readable, (name, access)
                    fields = serial_fields(name.encode())
                    assert fields is not None
                    assert (reader.public_serial(*fields, name) is not None) == readable, (name, access)
                    assert (reader.public_serial_named(name, of) is not None) == readable, (name, access)
