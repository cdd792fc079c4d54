"""``Archive.iter_names``: the names ``pdi ls`` prints, made from the catalog's rows, against both stores.

Each listing is compared with ``str`` of every :class:`~pdi.identifier.PDI`
:meth:`Archive.iter_ls` gives for the same filters (names parsed and printed
by the identifier's own grammar), and with the order worked out from the
deposited names (:mod:`test_archive_keyset`): serial names in several series,
formats and versions, foreign ids that need %-escapes, pages cut small, and a
reader who may not see a private series nor an embargoed version.
"""

from __future__ import annotations

import datetime
import itertools
from typing import Any

import pytest
from archive_helpers import Clock
from test_archive_keyset import OTHER, PRESS, S, _deposit, _sorted

from pdi.archive import Archive
from pdi.archive.access import Reader, reading_as
from pdi.archive.store import ListQuery
from pdi.errors import AccessError, LimitError, NotFoundError, UnsupportedError
from pdi.identifier import PDI

FILTERS: list[tuple[str | None, dict[str, Any]]] = [
    (None, {}),
    (None, {"series": PRESS}),
    (None, {"series": S, "limit": 7}),
    (None, {"series": S, "offset": 5, "limit": 9}),
    (None, {"offset": 40}),
    (None, {"year": 2026, "month": 11}),
    (None, {"year": 2026, "month": 11, "day": 21, "series": OTHER}),
    (None, {"year": 2026, "month": 12}),
    (None, {"year": 2025}),
    (None, {"limit": 0}),
    (f"urn:pdi://{S}/2026/11/22/*", {}),
    (f"urn:pdi://{S}/2026/11/*/*", {"limit": 30}),
    (f"urn:pdi://{S}/2026/*/*/*.gif.2", {}),
    (f"urn:pdi://{S}/2026/*/*/*.text.*", {}),
    (f"urn:pdi://{S}/2026/11/21/http%3A%2F%2Fwww%2Eexample%2Ecom%2Fa%20b.gif.1", {}),
    (f"urn:pdi://{S}/2026/11/21/2.*", {}),
    (f"urn:pdi://{PRESS}/*/*/*/*", {}),
]


@pytest.mark.parametrize(("pattern", "filters"), FILTERS)
def test_names_are_the_listed_pdis_printed(archive: Archive, clock: Clock, pattern: str | None,
                                           filters: dict[str, Any]) -> None:
    _deposit(archive, clock)
    expected = [str(n) for n in archive.iter_ls(pattern, **filters)]
    assert list(archive.iter_names(pattern, **filters)) == expected
    assert all(str(PDI.parse(name)) == name for name in expected)


def test_names_in_order_and_after_every_cursor(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    expected = _sorted(deposited)
    names = list(archive.iter_names())
    assert names == expected
    for at in range(0, len(expected), 7):
        assert list(archive.iter_names(after=expected[at], limit=11)) == expected[at + 1:at + 12]


@pytest.mark.parametrize("page", [1, 2, 3, 5, 13])
def test_small_pages_join_up_to_the_whole_listing(archive: Archive, clock: Clock, page: int) -> None:
    deposited = _deposit(archive, clock)
    expected = _sorted(deposited)
    for query in (ListQuery(), ListQuery(series=S), ListQuery(series=S, offset=4, limit=23), ListQuery(limit=page)):
        rows = [
            (day, serials, row)
            for day, serials, rows in archive.store.iter_name_pages(query, page=page)
            for row in rows
        ]
        assert all(len(r) == (5 if serials else 4) for _, serials, r in rows)
        wanted = [n for n in expected if query.series is None or PDI.parse(n).series_name == query.series]
        wanted = wanted[query.offset:][:query.limit] if query.limit is not None else wanted[query.offset:]
        got = [f"{day} {r[-4]} {r[-3]} {r[-2]} {r[-1]}" for day, _, r in rows]
        assert got == [f"{p.date} {p.unique_id} {p.series_name} {p.version} {p.format}"
                       for p in map(PDI.parse, wanted)]
        records = list(archive.store.iter_representations(query, page=page))
        assert [(r.day.isoformat(), r.unique_id, r.series, r.version, r.format) for r in records] == [
            (day, r[-4], r[-3], r[-2], r[-1]) for day, _, r in rows]


def test_a_reader_is_listed_only_what_it_may_see(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    archive.set_series_access(OTHER, "private")
    clock.now = datetime.datetime(2026, 12, 2, 9, tzinfo=datetime.UTC)
    embargoed = archive.add(S, b"embargoed\n", format="text", embargo_until="2030-01-01")
    public = archive.add(S, b"public\n", format="text")
    with reading_as(Reader()):
        seen = list(archive.iter_names())
        assert seen == [str(n) for n in archive.iter_ls()]
        assert str(embargoed) not in seen and str(public) in seen
        assert not any(PDI.parse(n).series_name == OTHER for n in seen)
        assert seen == _sorted([n for n in [*deposited, public] if n.series_name != OTHER])
        # offset and limit count the names the reader sees
        for offset, limit in itertools.product((0, 3, 50), (None, 1, 10)):
            kwargs: dict[str, Any] = {"offset": offset, "limit": limit}
            wanted = seen[offset:] if limit is None else seen[offset:offset + limit]
            assert list(archive.iter_names(**kwargs)) == wanted
        with pytest.raises(AccessError, match="private"):
            archive.iter_names(series=OTHER)


def test_arguments_are_checked_before_a_row_is_read(archive: Archive) -> None:
    with pytest.raises(LimitError):
        archive.iter_names(limit=-1)
    with pytest.raises(LimitError):
        archive.iter_names(offset=-1)
    with pytest.raises(NotFoundError):
        archive.iter_names(series="nowhere.example.us")
    with pytest.raises(UnsupportedError):
        archive.iter_names(after=f"urn:pdi://{S}/2026/11/22/1")
    with pytest.raises(UnsupportedError):
        archive.iter_names(f"urn:pdi://{S}/2026/*/*/*", year=2026)
    assert list(archive.iter_names(f"urn:pdi://{S}/2026/11/22/1x.gif.1")) == []
