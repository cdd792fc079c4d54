"""``Archive.iter_name_text``: what ``pdi ls`` prints, a page of names to a string, made by the database.

The serial names of a page are joined by the catalog's own statement (SQLite:
one ``group_concat`` a page; PostgreSQL: one ``string_agg``), so
nothing is made in Python per row. Every listing here is compared, byte for
byte, with the general path: ``str`` of each :class:`~pdi.identifier.PDI`
:meth:`Archive.ls` builds from the catalog's rows (checked against the order
worked out from the deposited names in :mod:`test_archive_list_names`),
followed by a newline; on both stores, for every filter, after every cursor, in
pages cut small enough that each run is paged by its key, for a reader who may
not see everything, and on archives hypothesis makes (serial and foreign
names, versions, formats, withdrawals, several series and days).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from archive_helpers import GIF, Clock
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_archive_keyset import OTHER, PRESS, S, _deposit, _sorted
from test_archive_list_names import FILTERS

from pdi.archive import Archive, Content
from pdi.archive.access import Reader, reading_as
from pdi.archive.store import ListQuery
from pdi.cli import cli
from pdi.errors import (
    ImmutabilityError,
    LimitError,
    NotFoundError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI


def _store_text(archive: Archive, query: ListQuery, page: int) -> list[str]:
    """The store's pages as text: a page of names with a foreign id printed by the grammar (``PDI.build``)."""
    blocks = []
    for made in archive.store.iter_name_text(query, page=page):
        if isinstance(made, str):
            blocks.append(made)
            continue
        day, serials, rows = made
        assert not serials and rows
        blocks.append("".join(
            f"{PDI.build(series=series, date=datetime.date.fromisoformat(day), foreign_id=unique_id, format=token, version=version)}\n"
            for unique_id, series, version, token in rows))
    return blocks


def _general(archive: Archive, pattern: str | None = None, **filters: Any) -> str:
    # Archive.ls builds a PDI of each row (for the owner, iter_names cuts the catalog's text, the path under test)
    return "".join(f"{name}\n" for name in archive.ls(pattern, **filters))


@pytest.mark.parametrize(("pattern", "filters"), FILTERS)
def test_text_is_the_listed_names_a_line_each(archive: Archive, clock: Clock, pattern: str | None,
                                              filters: dict[str, Any]) -> None:
    _deposit(archive, clock)
    expected = _general(archive, pattern, **filters)
    assert "".join(archive.iter_name_text(pattern, **filters)) == expected


def test_text_in_order_and_after_every_cursor(archive: Archive, clock: Clock) -> None:
    expected = _sorted(_deposit(archive, clock))
    assert "".join(archive.iter_name_text()) == "".join(f"{n}\n" for n in expected)
    for at in range(0, len(expected), 5):
        assert "".join(archive.iter_name_text(after=expected[at])) == "".join(f"{n}\n" for n in expected[at + 1:])
    assert list(archive.iter_name_text(after=expected[-1])) == []


@pytest.mark.parametrize("page", [1, 2, 3, 5, 13, 1000])
def test_pages_cut_small_join_up_to_the_whole_listing(archive: Archive, clock: Clock, page: int) -> None:
    expected = _sorted(_deposit(archive, clock))
    for query in (ListQuery(), ListQuery(series=S), ListQuery(series=PRESS, year=2026, month=11, day=22),
                  ListQuery(series=S, format="gif", version=2)):
        wanted = [n for n in expected if query.series is None or PDI.parse(n).series_name == query.series]
        if query.day is not None:
            wanted = [n for n in wanted if PDI.parse(n).date == datetime.date(2026, 11, 22)]
        if query.version is not None:
            wanted = [n for n in wanted if PDI.parse(n).version == 2 and PDI.parse(n).format == "gif"]
        blocks = _store_text(archive, query, page)
        assert all(block.endswith("\n") for block in blocks)
        assert "".join(blocks) == "".join(f"{n}\n" for n in wanted)
        # a page of serial names is one string, however many names it holds
        assert len(blocks) <= len(wanted)
    # after a cursor inside a day's serial run, in pages smaller than what is left of it
    for at in (0, 3, 11, 40):
        cursor = PDI.parse(expected[at])
        query = ListQuery(after=archive_key(cursor))
        assert "".join(_store_text(archive, query, page)) == "".join(f"{n}\n" for n in expected[at + 1:])


def archive_key(name: PDI) -> Any:
    from pdi.archive.listing import _list_key

    return _list_key(name)


def test_pdi_ls_prints_the_names_byte_for_byte(archive: Archive, clock: Clock) -> None:
    _deposit(archive, clock)
    for argv, (pattern, filters) in (
        ([], (None, {})), ([S], (None, {"series": S})), ([f"urn:pdi://{S}/2026/11/*/*"], (f"urn:pdi://{S}/2026/11/*/*", {})),
        ([PRESS, "--limit", "5", "--offset", "2"], (None, {"series": PRESS, "limit": 5, "offset": 2})),
    ):
        result = CliRunner().invoke(cli, ["ls", *argv, "--archive", archive.location])
        assert result.exit_code == 0, (argv, result.output)
        assert result.stdout_bytes == _general(archive, pattern, **filters).encode()


def test_a_reader_is_given_only_what_it_may_see(archive: Archive, clock: Clock) -> None:
    _deposit(archive, clock)
    archive.set_series_access(OTHER, "private")
    clock.now = datetime.datetime(2026, 12, 2, 9, tzinfo=datetime.UTC)
    embargoed = archive.add(S, b"embargoed\n", format="text", embargo_until="2030-01-01")
    with reading_as(Reader()):
        text = "".join(archive.iter_name_text())
        assert text == _general(archive)
        assert f"{embargoed}\n" not in text and OTHER not in text
        assert "".join(archive.iter_name_text(offset=3, limit=10)) == _general(archive, offset=3, limit=10)
    assert f"{embargoed}\n" in "".join(archive.iter_name_text())  # the owner sees it


def test_arguments_are_checked_before_a_row_is_read(archive: Archive) -> None:
    with pytest.raises(LimitError):
        archive.iter_name_text(limit=-1)
    with pytest.raises(NotFoundError):
        archive.iter_name_text(series="nowhere.example.us")
    with pytest.raises(UnsupportedError):
        archive.iter_name_text(after=f"urn:pdi://{S}/2026/11/22/1")
    assert list(archive.iter_name_text(f"urn:pdi://{S}/2026/11/22/1x.gif.1")) == []
    assert list(archive.iter_name_text()) == []  # an empty archive: nothing, not an empty line


_SERIES = (S, PRESS, OTHER)
_FOREIGN = ("zeta", "Alpha", "007", "a.10", "http://www.example.com/a b", "ü")
_FORMATS = ("gif", "text", "html", "png", "audio+mpeg")

_operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(_SERIES), st.integers(0, 3), st.sampled_from(_FORMATS),
              st.none() | st.sampled_from(_FOREIGN)),
    st.tuples(st.just("version"), st.integers(0, 10_000), st.sampled_from(_FORMATS)),
    st.tuples(st.just("format"), st.integers(0, 10_000), st.sampled_from(_FORMATS)),
    st.tuples(st.just("withdraw"), st.integers(0, 10_000)),
)


# The archive grows from one example to the next (each compares the two paths on what it holds by then), so a
# failing example is not shrunk: it is reported as found, with the archive it found.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(operations=st.lists(_operation, max_size=12), page=st.integers(1, 9),
       start=st.integers(0, 60), series=st.none() | st.sampled_from(_SERIES))
def test_generated_archives_list_the_same_text(archive: Archive, clock: Clock, operations: list[tuple[Any, ...]],
                                               page: int, start: int, series: str | None) -> None:
    for name in (PRESS, OTHER):
        if archive.store.get_series(name) is None:
            archive.add_series(name)
    names = [PDI.parse(n) for n in archive.iter_names()]
    for operation in operations:
        try:
            _apply(archive, clock, names, operation)
        except (ImmutabilityError, WithdrawnError):  # refused (a withdrawn version, a foreign id held): nothing changed
            pass
    listed = _general(archive, series=series)
    assert "".join(archive.iter_name_text(series=series)) == listed
    assert sorted(listed.splitlines()) == sorted({str(n) for n in names
                                                  if series is None or n.series_name == series})
    query = ListQuery(series=series)
    assert "".join(_store_text(archive, query, page)) == listed
    every = listed.splitlines()
    if every:
        at = start % len(every)
        after = ListQuery(series=series, after=archive_key(PDI.parse(every[at])))
        assert "".join(_store_text(archive, after, page)) == "".join(f"{n}\n" for n in every[at + 1:])


def _apply(archive: Archive, clock: Clock, names: list[PDI], operation: tuple[Any, ...]) -> None:
    kind = operation[0]
    if kind == "add":
        _, in_series, day, token, foreign = operation
        clock.now = datetime.datetime(2026, 11, 20 + day, 9, tzinfo=datetime.UTC)
        names.append(archive.add(in_series, GIF + repr(operation).encode() + str(len(names)).encode(),
                                 format=token, foreign_id=foreign, force=True))
        return
    if not names:
        return
    held = names[operation[1] % len(names)]
    generic = str(held).rsplit(".", 2)[0]
    if kind == "version":
        names.extend(archive.add_version(generic, [Content(GIF + b"v %d" % len(names), operation[2])], force=True))
    elif kind == "format":
        names.append(archive.add_format(held, GIF + b"f %d" % len(names), format=operation[2], force=True))
    else:
        archive.withdraw(held, "hypothesis")


def archive_document(name: PDI) -> Any:
    from pdi.archive.naming import key_of

    return key_of(name)
