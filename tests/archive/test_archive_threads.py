"""The thread index of e-mail messages (schema 10): by Message-ID and by parent, on any day, in any series, both
catalogs; filled at deposit, by an import, and for the messages of an older archive when it is opened.

The ids each message has are read by Python's ``email`` (the oracle of ``docs/email.md``), not by pdi.
"""

from __future__ import annotations

import datetime
import email
import email.policy
from pathlib import Path

import pytest
from archive_helpers import Clock, before_serial_names

from pdi.archive import Archive, Content
from pdi.archive.store import SCHEMA_VERSION
from pdi.mail.mbox import split_mbox

DATA = Path(__file__).resolve().parents[1] / "data" / "email"
A = "lists.example.us"
B = "archive.example.us"


def _thread() -> list[bytes]:
    """The three messages of a real thread (a message, a reply, a reply to the reply)."""
    with (DATA / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
        return [m.data for m in split_mbox(mbox)]


def _ids(data: bytes) -> tuple[str, str | None]:
    """A message's Message-ID and the id it replies to (In-Reply-To's last, else References' last), by Python's email."""
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    replying = (message["In-Reply-To"] or message["References"] or "").split()
    return str(message["Message-ID"]).strip(), replying[-1] if replying else None


def _on(clock: Clock, day: datetime.date) -> None:
    clock.now = datetime.datetime.combine(day, datetime.time(12), tzinfo=datetime.UTC)


def _deposit_far_apart(archive: Archive, clock: Clock) -> list[str]:
    """The thread deposited over 100 days: the first message in A by its mid: name, the reply 45 days later in B by
    a serial, the reply to it 100 days after the first in A by --id: generic names."""
    first, reply, later = _thread()
    start = datetime.date(2026, 1, 10)
    names = []
    for data, days, series, foreign in ((first, 0, A, "mid"), (reply, 45, B, None), (later, 100, A, "reply-3")):
        _on(clock, start + datetime.timedelta(days=days))
        mid = "mid:" + _ids(data)[0].strip("<>") if foreign == "mid" else foreign
        deposited = str(archive.deposit(series, [Content(data, "rfc822")], foreign_id=mid)[0])
        assert deposited.endswith(".rfc822.1")
        names.append(deposited.removesuffix(".rfc822.1"))
    return names


@pytest.fixture
def mail_archive(location: str, clock: Clock) -> Archive:
    archive = Archive.init(location, clock=clock)
    archive.add_series(A)
    archive.add_series(B)
    return archive


def test_replies_are_found_by_parent_over_months_and_series(mail_archive: Archive, clock: Clock) -> None:
    ids = [_ids(m) for m in _thread()]
    assert ids[1][1] == ids[0][0] and ids[2][1] == ids[1][0]  # the oracle: each replies to the one before
    with mail_archive as archive:
        names = _deposit_far_apart(archive, clock)
        assert [(i, str(d.pdi)) for i, d in archive.message_replies([ids[0][0]])] == [(ids[0][0], names[1])]
        assert [(i, str(d.pdi)) for i, d in archive.message_replies([ids[1][0]])] == [(ids[1][0], names[2])]
        assert archive.message_replies([ids[2][0]]) == []
        found = archive.messages_by_id([ids[2][0], ids[1][0], "<nobody@example.com>"])
        assert sorted((i, str(d.pdi)) for i, d in found) == sorted([(ids[1][0], names[1]), (ids[2][0], names[2])])

        from pdi.server.pages.mail_pages import render_thread

        page = render_thread(archive, names[0] + ".rfc822.1")
        for name in names[1:]:  # 45 and 100 days later, in another series, by a serial: under it
            assert _link(name + ".rfc822.1") in page
        assert page.index(_link(names[1] + ".rfc822.1")) < page.index(_link(names[2] + ".rfc822.1"))
        last = render_thread(archive, names[2] + ".rfc822.1")  # its ancestors, found by id whatever their names
        assert _link(names[0] + ".rfc822.1") in last and _link(names[1] + ".rfc822.1") in last
        assert "not in the archive" not in last


def test_a_private_series_reply_is_not_listed_to_a_reader(mail_archive: Archive, clock: Clock) -> None:
    from pdi.archive.access import Reader, reading_as

    ids = [_ids(m) for m in _thread()]
    with mail_archive as archive:
        names = _deposit_far_apart(archive, clock)
        archive.set_series_access(B, "private")
        with reading_as(Reader()):  # anonymous
            assert archive.message_replies([ids[0][0]]) == []
            assert [str(d.pdi) for _, d in archive.messages_by_id([ids[2][0]])] == [names[2]]
        assert len(archive.message_replies([ids[0][0]])) == 1  # the owner sees it


def _to_schema_9(archive: Archive) -> None:
    """The catalog as schema 9 left it: no thread index (nor step 11's mirrors, nor step 12's tombstones, nor step 13's
    token sources, nor step 14's deposit function, nor step 15's serial names)."""
    store = archive.store
    with store._write():  # type: ignore[attr-defined]
        if store.dialect == "postgresql":
            store._query("DROP FUNCTION pdi_deposit_one")  # type: ignore[attr-defined]
        for statement in (*before_serial_names(archive), "DELETE FROM schema_migrations WHERE version = 14",
                          "DELETE FROM schema_migrations WHERE version = 13",
                          "DROP TABLE mirror_withdrawals", "DELETE FROM schema_migrations WHERE version = 12",
                          "DROP TABLE mirrors", "DELETE FROM schema_migrations WHERE version = 11",
                          "DROP TABLE message_heads_pending", "DROP TABLE message_references", "DROP TABLE message_heads",
                          "DELETE FROM schema_migrations WHERE version = 10"):
            store._query(statement)  # type: ignore[attr-defined]
    assert store.schema_version() == 9


def test_an_older_archive_gets_its_messages_indexed_when_migrated(location: str, clock: Clock) -> None:
    ids = [_ids(m) for m in _thread()]
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(A)
        archive.add_series(B)
        names = _deposit_far_apart(archive, clock)
        forced = archive.deposit(A, [Content(b"no message at all\n", "rfc822")], force=True)[0]
        _to_schema_9(archive)
    with Archive.init(location, clock=clock) as archive:  # pdi init migrates it
        assert archive.schema_version() == SCHEMA_VERSION
        assert archive.store.messages_pending() == 0
        assert [str(d.pdi) for _, d in archive.message_replies([ids[0][0]])] == [names[1]]
        assert [str(d.pdi) for _, d in archive.message_replies([ids[1][0]])] == [names[2]]
        assert [str(d.pdi) for _, d in archive.messages_by_id([ids[0][0]])] == [names[0]]
        assert archive.get(str(forced)).data == b"no message at all\n"
        assert archive.verify().ok


def test_pdi_init_migrates_an_older_archive(tmp_path: Path, clock: Clock) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    location = str(tmp_path / "old")
    ids = [_ids(m) for m in _thread()]
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(A)
        archive.add_series(B)
        names = _deposit_far_apart(archive, clock)
        _to_schema_9(archive)
    done = CliRunner().invoke(cli, ["init", location])
    assert done.exit_code == 0, done.output
    assert f"schema version {SCHEMA_VERSION}" in done.output
    with Archive.open(location, clock=clock) as archive:
        assert [str(d.pdi) for _, d in archive.message_replies([ids[1][0]])] == [names[2]]


def test_a_bag_import_indexes_its_messages(mail_archive: Archive, clock: Clock, tmp_path: Path) -> None:
    ids = [_ids(m) for m in _thread()]
    with mail_archive as archive:
        names = _deposit_far_apart(archive, clock)
        archive.export_bag(tmp_path / "bag")
    with Archive.init(tmp_path / "other", clock=clock) as other:
        other.import_bag(tmp_path / "bag")
        assert [str(d.pdi) for _, d in other.message_replies([ids[0][0]])] == [names[1]]
        assert [str(d.pdi) for _, d in other.messages_by_id([ids[2][0]])] == [names[2]]


def _link(name: str) -> str:
    import html
    import urllib.parse

    return html.escape("/view?pdi=" + urllib.parse.quote(name, safe=""))


def test_a_reply_whose_parent_is_missing_is_found_by_its_references(mail_archive: Archive, clock: Clock) -> None:
    """The third message names the first in its References and replies to the second, which is not deposited:
    the first's thread lists it under the first, saying which message between them is missing."""
    first, reply, later = _thread()
    ids = [_ids(m) for m in (first, reply, later)]
    references = email.message_from_bytes(later, policy=email.policy.compat32)["References"].split()
    assert references == [ids[0][0], ids[1][0]]  # the oracle: it names both, and replies to the second
    with mail_archive as archive:
        _on(clock, datetime.date(2026, 2, 1))
        top = str(archive.deposit(A, [Content(first, "rfc822")])[0])
        _on(clock, datetime.date(2026, 6, 1))
        last = str(archive.deposit(B, [Content(later, "rfc822")])[0])
        assert archive.message_replies([ids[0][0]]) == []  # nothing replies to it directly
        assert [(i, str(d.pdi)) for i, d in archive.message_referrers([ids[0][0]])] == [
            (ids[0][0], last.removesuffix(".rfc822.1"))]
        from pdi.server.pages.mail_pages import render_thread

        page = render_thread(archive, top)
        assert _link(last) in page
        assert (f"(a reply to <code><bdi>{ids[1][0].replace('<', '&lt;').replace('>', '&gt;')}</bdi></code>, not in the"
                " archive)") in page  # the id a depositor's, isolated: its bidi controls reorder nothing after it
        assert page.index("(this message)") < page.index(_link(last))


def test_verify_reports_a_message_the_thread_index_lacks(mail_archive: Archive, clock: Clock) -> None:
    with mail_archive as archive:
        names = _deposit_far_apart(archive, clock)
        assert archive.verify().ok
        store = archive.store
        with store._write():  # type: ignore[attr-defined]
            store._query("DELETE FROM message_heads WHERE parent IS NULL")  # type: ignore[attr-defined]
        problems = [(p.kind, p.detail) for p in archive.verify().problems]
        assert problems == [("catalog-messages", "1 message not in the thread index: their threads miss them"
                                                 " (pdi reindex reads them again)")]
        archive.reindex()
        assert archive.verify().ok
        first = _ids(_thread()[0])[0]
        assert [str(d.pdi) for _, d in archive.messages_by_id([first])] == [names[0]]
