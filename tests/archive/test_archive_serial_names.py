"""``serial_names`` (schema step 15, SQLite): one row a name as ``pdi add`` prints it, kept by triggers.

Hypothesis runs sequences of what a curator does (deposits with and without
a foreign id, new versions, new formats, withdrawals, purges, embargoes set
and lifted, a series made private) and after each compares the table with
a model the test keeps of its own: the names the archive printed, the
SHA-256 of the bytes given, what was withdrawn and embargoed. It also
checks what the resolver's fast read
(:meth:`~pdi.archive.Archive.public_serial`) says of every name against the
five-table statement it stands in for
(:meth:`~pdi.archive.sqlite.SQLiteStore.public_version`), at a moment before
and after each embargo. A bag exported and imported into another archive,
and a catalog taken back to step 14 and migrated, hold the same rows.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from archive_helpers import PNG, Clock, before_serial_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.catalog.serial_names import SERIAL_NAMES_DIFFERING
from pdi.archive.content import Content
from pdi.archive.store import DocumentKey, PublicVersion, SmallPublic
from pdi.errors import ImmutabilityError

S = "oma.eop.gov.us"
#: Embargoes the curator sets: one over before the test's moments, one between them, one after both.
PAST, BETWEEN, FUTURE = "2020-01-01", "2026-12-01", "2030-01-01"
EARLY = datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC)
LATE = datetime.datetime(2027, 6, 1, tzinfo=datetime.UTC)


@dataclass
class Document:
    generic: str
    serial: bool
    #: version → format → (sha256, size)
    versions: dict[int, dict[str, tuple[str, int]]] = field(default_factory=dict)
    embargo: str | None = None
    version_embargoes: dict[int, str | None] = field(default_factory=dict)
    withdrawn: set[int | None] = field(default_factory=set)


def _text(n: int) -> bytes:
    return f"document {n}\n".encode()


def _digest(data: bytes) -> tuple[str, int]:
    return hashlib.sha256(data).hexdigest(), len(data)


def _rows(location: Path) -> dict[str, tuple[object, ...]]:
    with sqlite3.connect(location / "catalog.sqlite") as db:
        return {name: tuple(rest) for name, *rest in db.execute(
            "SELECT name, sha256, size, document_embargo, version_embargo, withdrawn, formats FROM serial_names")}


def _expected(documents: list[Document]) -> dict[str, tuple[object, ...]]:
    rows = {}
    for doc in documents:
        if not doc.serial:
            continue  # a foreign id: its names go to the usual reads
        for version, formats in doc.versions.items():
            for token, (sha256, size) in formats.items():
                withdrawn = int(None in doc.withdrawn or version in doc.withdrawn)
                rows[f"{doc.generic}.{token}.{version}"] = (
                    sha256, size, doc.embargo, doc.version_embargoes.get(version), withdrawn, len(formats))
    return rows


OPERATIONS = st.lists(st.tuples(
    st.sampled_from(["add", "foreign", "two", "version", "format", "withdraw", "withdraw_version", "purge",
                     "purge_document", "embargo", "embargo_version", "private"]),
    st.integers(0, 50), st.sampled_from([PAST, BETWEEN, FUTURE, None])), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_the_table_says_what_the_archive_was_told(tmp_path_factory, operations) -> None:  # type: ignore[no-untyped-def]
    location = tmp_path_factory.mktemp("serial")
    clock = Clock(EARLY)
    documents: list[Document] = []
    count = 0
    with Archive.init(str(location), clock=clock) as archive:
        archive.add_series(S)
        for op, pick, until in operations:
            count += 1
            live = [d for d in documents if None not in d.withdrawn]
            if op == "two":  # two formats in one deposit
                data, image = _text(count), PNG + _text(count)
                made = archive.deposit(S, [Content(data, "text"), Content(image, "png")], force=True)
                documents.append(Document(str(made[0]).rsplit(".", 2)[0], True,
                                          {1: {"text": _digest(data), "png": _digest(image)}}))
            elif op in ("add", "foreign") or not live:
                data = _text(count)
                name = archive.add(S, data, format="text", foreign_id=f"f{count}" if op == "foreign" else None)
                documents.append(Document(str(name).rsplit(".", 2)[0], op != "foreign", {1: {"text": _digest(data)}}))
            else:
                _do(archive, op, live[pick % len(live)], count, until)
            assert _rows(location) == _expected(documents), op
            assert not archive.store._query(SERIAL_NAMES_DIFFERING, (10,))  # type: ignore[attr-defined]
            _same_as_the_tables(archive, documents, clock)


def _do(archive: Archive, op: str, doc: Document, count: int, until: str | None) -> None:
    """What a curator does to a document that is not withdrawn, and the model told of it."""
    latest = max(doc.versions)
    if op == "version":
        data = _text(count)
        made = archive.add_version(doc.generic, [Content(data, "text")]).names[0]
        version = int(str(made).rsplit(".", 1)[1])
        doc.versions[version] = {"text": _digest(data)}
    elif op == "format" and "png" not in doc.versions[latest] and latest not in doc.withdrawn:
        data = PNG + _text(count)
        made = archive.add_format(f"{doc.generic}.text.{latest}", data, format="png", force=True)
        assert str(made) == f"{doc.generic}.png.{latest}"
        doc.versions[latest]["png"] = _digest(data)
    elif op in ("withdraw", "purge_document"):
        archive.withdraw(doc.generic, "a test", purge=op == "purge_document")
        doc.withdrawn.add(None)
    elif op in ("withdraw_version", "purge") and latest not in doc.withdrawn:
        archive.withdraw(f"{doc.generic}.text.{latest}", "a test", purge=op == "purge")
        doc.withdrawn.add(latest)
    elif op == "embargo":
        with contextlib.suppress(ImmutabilityError):  # a lift of nothing while a version's holds: nothing changes
            doc.embargo = archive.embargo(doc.generic, until, shorten=True).after
    elif op == "embargo_version":
        with contextlib.suppress(ImmutabilityError):  # a lift of nothing under the document's: nothing changes
            doc.version_embargoes[latest] = archive.embargo(f"{doc.generic}.text.{latest}", until, shorten=True).after
    elif op == "private":
        archive.set_series_access(S, "private" if count % 2 else "public")


def _same_as_the_tables(archive: Archive, documents: list[Document], clock: Clock) -> None:
    """What the fast reads say of every name, at a moment before and after the embargo between them, is what the
    five-table statement says; the clock is left as it was."""
    store = archive.store
    was = clock.now
    for moment in (EARLY, LATE):
        clock.now = moment
        _many_as_each(archive, documents)
        for doc in documents:
            series, year, month, day, serial = doc.generic.removeprefix("urn:pdi://").split("/")
            key = DocumentKey(series, datetime.date(int(year), int(month), int(day)), serial)
            for version, formats in doc.versions.items():
                for token in formats:
                    fast = archive.public_serial(series, key.day, serial, version, token)
                    slow = store.public_version(key, version, token, archive._now_stamp)  # type: ignore[attr-defined]
                    digest = archive.public_digest(f"{doc.generic}.{token}.{version}", series)
                    without_octets = store.public_version(  # what N2L and a 304 were told before the table
                        key, version, token, archive._now_stamp, False)  # type: ignore[attr-defined]
                    named = archive.public_serial_named(f"{doc.generic}.{token}.{version}", series)
                    if not doc.serial:
                        assert fast is None and digest is None and named is None
                        continue
                    _named_as_fast(named, fast, formats[token][0])
                    assert digest == (None if without_octets is None else without_octets.record.sha256)
                    assert (fast is None) == (slow is None), (doc.generic, version, token, moment)
                    if fast is not None and slow is not None:
                        assert fast.record == slow.record and fast.records == slow.records
                        assert fast.path == slow.path
                        assert (fast.size, fast.chunk_size, fast.chunks, fast.data) == (
                            slow.size, slow.chunk_size, slow.chunks, slow.data)
    clock.now = was


def _named_as_fast(named: SmallPublic | PublicVersion | None, fast: PublicVersion | None, sha256: str) -> None:
    """What ``public_serial_named`` tells of a name is what ``public_serial`` tells: for a version of one format whose
    octets the catalog's row holds, not embargoed, their media type, charset, SHA-256 (hashed here: the octets
    deposited), deposit time and octets, one chunk whose digest is that SHA-256; else the same
    :class:`PublicVersion`, or ``None``."""
    if not isinstance(named, tuple):
        assert named == fast
        return
    assert fast is not None and fast.data is not None and len(fast.records) == 1
    record = fast.record
    assert named == (record.media_type, record.charset, record.sha256, record.created_at, fast.data)
    assert record.sha256 == sha256 == hashlib.sha256(named[4]).hexdigest()
    assert fast.chunks == hashlib.sha256(named[4]).digest()


def _many_as_each(archive: Archive, documents: list[Document]) -> None:
    """Many names asked at once (``public_serials``, one statement; ``open_public_many``, as ``POST /api/octets``
    asks them) are told each as it is asked alone, in the order asked, a name asked twice told twice, and a name
    never made (a serial none has, a version or format none deposited) told ``None``."""
    asked: list[tuple[tuple[str, datetime.date, str, int, str], str]] = []
    for doc in documents:
        series, year, month, day, serial = doc.generic.removeprefix("urn:pdi://").split("/")
        on = datetime.date(int(year), int(month), int(day))
        for version, formats in doc.versions.items():
            for token in [*formats, "pdf"]:
                asked.append(((series, on, serial, version, token), f"{doc.generic}.{token}.{version}"))
        asked.append(((series, on, serial, max(doc.versions) + 1, "text"), f"{doc.generic}.text.{max(doc.versions) + 1}"))
        asked.append(((series, on, "999999", 1, "text"), f"urn:pdi://{series}/{year}/{month}/{day}/999999.text.1"))
    asked += asked[:3]  # asked twice
    each = [archive.public_serial(*fields, name) for fields, name in asked]
    assert archive.public_serials(asked) == each
    opened = archive.open_public_many(asked)
    try:
        assert len(opened) == len(asked)
        for one, (_, name), alone in zip(opened, asked, each, strict=True):
            assert (one is None) == (alone is None), name
            if isinstance(one, tuple) and alone is not None:
                record, reader = one
                assert record == alone.record and reader.read() == _octets_of(archive, name)
    finally:
        for one in opened:
            if isinstance(one, tuple):
                one[1].close()


def _octets_of(archive: Archive, name: str) -> bytes:
    """The octets the usual read of ``name`` gives."""
    return archive.get(name).data


def _filled(location: Path, clock: Clock) -> tuple[list[str], list[str]]:
    """An archive with a serial document of two versions and two formats, one withdrawn, one embargoed, and one with a
    foreign id; the serial names and the foreign one."""
    with Archive.init(str(location), clock=clock) as archive:
        archive.add_series(S)
        first = str(archive.add(S, _text(1), format="text"))
        generic = first.rsplit(".", 2)[0]
        second = str(archive.add_version(generic, [Content(_text(2), "text")]).names[0])
        png = str(archive.add_format(second, PNG + b"2", format="png", force=True))
        withdrawn = str(archive.add(S, _text(3), format="text"))
        archive.withdraw(withdrawn, "a test")
        embargoed = str(archive.add(S, _text(4), format="text", embargo_until=FUTURE))
        foreign = str(archive.add(S, _text(5), format="text", foreign_id="report-5"))
    return [first, second, png, withdrawn, embargoed], [foreign]


def test_a_catalog_of_step_14_gets_its_rows_when_migrated(tmp_path: Path) -> None:
    clock = Clock(EARLY)
    serial, foreign = _filled(tmp_path, clock)
    made = _rows(tmp_path)
    assert sorted(made) == sorted(serial) and not set(foreign) & set(made)
    with Archive.open(str(tmp_path), clock=clock) as archive, archive.store._write():  # type: ignore[attr-defined]
        for statement in before_serial_names(archive):
            archive.store._query(statement)  # type: ignore[attr-defined]
    with sqlite3.connect(tmp_path / "catalog.sqlite") as db:
        assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'serial_names'").fetchall()
    Archive.init(str(tmp_path), clock=clock).close()  # pdi init migrates it
    assert _rows(tmp_path) == made


def test_an_imported_bag_has_the_same_rows(tmp_path: Path) -> None:
    clock = Clock(EARLY)
    _filled(tmp_path / "a", clock)
    with Archive.open(str(tmp_path / "a"), clock=clock) as archive:
        archive.export_bag(tmp_path / "bag")
    with Archive.init(str(tmp_path / "b"), clock=clock) as archive:
        archive.import_bag(tmp_path / "bag")
        assert not archive.store._query(SERIAL_NAMES_DIFFERING, (10,))  # type: ignore[attr-defined]
    assert _rows(tmp_path / "b") == _rows(tmp_path / "a")


def test_a_document_of_the_same_serial_and_another_id_touches_no_row_of_the_other(tmp_path: Path) -> None:
    """What no pdi code writes (a serial not spelled as its unique id), written behind its back: that document has
    no names of this shape, and what is done to it changes no row of the document whose names they are."""
    clock = Clock(EARLY)
    with Archive.init(str(tmp_path), clock=clock) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _text(1), format="text", embargo_until=FUTURE))
        before = _rows(tmp_path)
        with sqlite3.connect(tmp_path / "catalog.sqlite") as db:
            db.execute("INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
                       " SELECT series, day, year, month, dom, 'x', serial, created_at FROM documents")
            other = db.execute("SELECT id FROM documents WHERE unique_id = 'x'").fetchone()[0]
            db.execute("INSERT INTO versions (document, version, created_at) VALUES (?, 1, 'now')", (other,))
            db.execute("INSERT INTO representations (document, version, format, media_type, sha256, size,"
                       " created_at) SELECT ?, 1, 'text', media_type, sha256, size, created_at FROM representations",
                       (other,))
            db.execute("UPDATE documents SET embargo_until = NULL WHERE id = ?", (other,))
            db.execute("INSERT INTO withdrawals (document, reason, who, at) VALUES (?, 'r', 'w', 'now')", (other,))
        assert _rows(tmp_path) == before
        assert archive.public_digest(name, S) is None  # still embargoed


def test_a_row_that_says_what_the_tables_do_not_is_found_by_verify_and_made_again_by_repair(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    clock = Clock(EARLY)
    serial, _ = _filled(tmp_path, clock)
    made = _rows(tmp_path)
    with sqlite3.connect(tmp_path / "catalog.sqlite") as db:  # behind the triggers' back, as no pdi code writes
        db.execute("UPDATE serial_names SET withdrawn = 0")  # the withdrawn name said readable
        db.execute("DELETE FROM serial_names WHERE name = ?", (serial[2],))  # a format without its row
        db.execute("INSERT INTO serial_names SELECT 'urn:pdi://oma.eop.gov.us/2026/11/22/99.text.1', version,"
                   " media_type, charset, line_ending, sha256, size, created_at, stored, document_embargo,"
                   " version_embargo, withdrawn, formats FROM serial_names WHERE name = ?", (serial[0],))
    with Archive.open(str(tmp_path), clock=clock) as archive:
        found = [(p.kind, p.names) for p in archive.verify().problems]
    wrong = sorted([serial[3], serial[2], "urn:pdi://oma.eop.gov.us/2026/11/22/99.text.1"])
    assert found == [("catalog-serial-names", (name,)) for name in wrong]
    verified = CliRunner().invoke(cli, ["verify", "--archive", str(tmp_path)])
    assert verified.exit_code == 3 and all(f"catalog-serial-names\t{name}\t" in verified.output for name in wrong)
    repaired = CliRunner().invoke(cli, ["verify", "--repair", "--archive", str(tmp_path)])
    assert repaired.exit_code == 0, repaired.output
    assert all(f"repaired\t{name}\t" in repaired.output for name in wrong)
    assert _rows(tmp_path) == made
    assert CliRunner().invoke(cli, ["verify", "--archive", str(tmp_path)]).exit_code == 0
