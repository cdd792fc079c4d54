"""Listing by keyset: the order names are listed in, page by page and after a cursor, against both stores.

The order is the README's: GMT day; a day's serial names by serial (as
numbers: 2 before 10), then its names with a foreign id by id (code points);
then series, version and format. The expected order is worked out here from
the names the test deposited, in an order of deposit that is none of these.
"""

from __future__ import annotations

import datetime
import json

import pytest
from archive_helpers import GIF, Clock
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.archive.store import ListKey, ListQuery
from pdi.cli import cli
from pdi.errors import ParseError, UnsupportedError
from pdi.identifier import PDI

S = "oma.eop.gov.us"
PRESS = "press.oma.eop.gov.us"
OTHER = "other.fr"
FOREIGN = ("zeta", "Alpha", "007", "a-mnemonic", "http://www.example.com/a b")


def _deposit(archive: Archive, clock: Clock) -> list[PDI]:
    """Names in three series over three days, deposited out of order, with versions and formats."""
    archive.add_series(PRESS)
    archive.add_series(OTHER)
    names: list[PDI] = []
    for day in (22, 21, 1):
        month = 12 if day == 1 else 11
        clock.now = datetime.datetime(2026, month, day, 9, tzinfo=datetime.UTC)
        for series in (OTHER, S, PRESS):
            for i in range(12):  # serials 1..12: 10 sorts after 9, not after 1
                names.append(archive.add(series, GIF + b"%s %d %d" % (series.encode(), day, i), format="gif"))
            for uid in FOREIGN:
                names.append(archive.add(series, GIF + f"{series} {day} {uid}".encode(), format="gif", foreign_id=uid))
        # version 2 of serial 2 of S, and a document with two formats, deposited last
        generic = str(names[-2 * (12 + len(FOREIGN)) + 1]).rsplit(".", 2)[0]
        names.extend(archive.add_version(generic, [Content(GIF + b"v2 %d" % day, "gif")]))
        text = archive.add(S, b"two formats %d\n" % day, format="text")
        names.append(text)
        names.append(archive.add_format(text, b"two formats %d\n" % day, format="html", force=True))
    return names


def _key(name: PDI) -> tuple[object, ...]:
    """The README's order, from a name's own parts."""
    assert name.date is not None and name.version is not None and name.format is not None
    serial = name.serial
    return (name.date, serial is None, serial or 0, name.unique_id, name.series_name, name.version, name.format)


def _sorted(names: list[PDI]) -> list[str]:
    return [str(n) for n in sorted(names, key=_key)]


def test_keyset_order_is_date_then_serial_then_foreign_id(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    expected = _sorted(deposited)
    assert len(set(expected)) == len(expected) == 3 * (3 * (12 + len(FOREIGN)) + 3)
    assert [str(n) for n in archive.ls()] == expected
    # the same walk in pages of any size, however the pages fall on days, runs and documents
    for page in (1, 2, 3, 7, 50):
        keys = [ListKey.of(r) for r in archive.store.iter_representations(ListQuery(), page=page)]
        assert keys == sorted(keys, key=lambda k: (k.day, k.serial is None, k.serial or 0, k.unique_id,
                                                   k.series, k.version, k.format)), page
        assert len(keys) == len(expected)
    of_s = _sorted([n for n in deposited if n.series_name == S])
    assert [str(n) for n in archive.ls(series=S)] == of_s
    assert [str(n) for n in archive.ls(f"urn:pdi://{S}/2026/11/*/*")] == [n for n in of_s if "/2026/11/" in n]
    assert [str(n) for n in archive.ls(f"urn:pdi://{S}/*/*/*/*.html.*")] == [n for n in of_s if ".html." in n]


def test_pages_after_a_cursor_join_up_to_the_whole_listing(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    expected = _sorted(deposited)
    for limit in (1, 4, 25):
        listed: list[str] = []
        after: PDI | None = None
        while page := archive.ls(limit=limit, after=after):
            assert len(page) <= limit
            listed += map(str, page)
            after = page[-1]
        assert listed == expected, limit
    of_s = _sorted([n for n in deposited if n.series_name == S])
    for i in (0, 11, 12, 16, len(of_s) - 2):
        assert [str(n) for n in archive.ls(series=S, after=of_s[i])] == of_s[i + 1 :]
        assert [str(n) for n in archive.ls(series=S, after=of_s[i], offset=2, limit=3)] == of_s[i + 3 : i + 6]
    assert archive.ls(series=S, after=of_s[-1]) == []


def test_a_cursor_need_not_be_in_the_archive(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    expected = sorted(deposited, key=_key)
    for cursor in (
        f"urn:pdi://{S}/2026/11/22/5.gif.9",  # no version 9: after version 1, before serial 6
        f"urn:pdi://{S}/2026/11/22/500.gif.1",  # past the serials: the foreign ids come next
        f"urn:pdi://{S}/2026/11/22/Beta.gif.1",  # between two foreign ids
        f"urn:pdi://{S}/2026/11/23/1.gif.1",  # a day with no names
        "urn:pdi://aaa.fr/2026/11/21/3.gif.1",  # a series sorting before every other on a tie
        f"urn:pdi://{S}/2025/01/01/1.gif.1",  # before all
    ):
        key = _key(PDI.parse(cursor))
        assert [str(n) for n in archive.ls(after=cursor)] == [str(n) for n in expected if _key(n) > key], cursor


def test_a_cursor_is_a_whole_versioned_name(archive: Archive, clock: Clock) -> None:
    _deposit(archive, clock)
    for cursor in (
        f"urn:pdi://{S}/2026/11/22/5",  # generic
        f"urn:pdi://{S}/2026/11/22/5.gif",  # no version
        f"urn:pdi://{S}/2026/11/*/*",  # a pattern
        f"urn:pdi://{S}/2026/11/22/5.gif.1#byte=0,1",  # a passage
    ):
        with pytest.raises(UnsupportedError):
            archive.ls(after=cursor)
    with pytest.raises(ParseError):
        archive.ls(after="garbage")


def test_pdi_ls_streams_names_and_a_json_array(archive: Archive, clock: Clock) -> None:
    deposited = _deposit(archive, clock)
    expected = _sorted([n for n in deposited if n.series_name == PRESS])
    location = archive.location  # the test cluster's URLs hold no password to hide

    def run(*argv: str) -> str:
        result = CliRunner().invoke(cli, ["ls", *argv, "--archive", location])
        assert result.exit_code == 0, (argv, result.output, result.stderr)
        return result.stdout

    assert run(PRESS) == "".join(f"{n}\n" for n in expected)
    assert json.loads(run(PRESS, "--json")) == expected
    assert run(PRESS, "--after", expected[4], "--limit", "3") == "".join(f"{n}\n" for n in expected[5:8])
    assert json.loads(run(PRESS, "--after", expected[-1], "--json")) == []
    assert run(PRESS, "--after", expected[-1], "--json") == "[]\n"
    assert run(PRESS, "--json", "--limit", "2") == f'["{expected[0]}",\n"{expected[1]}"]\n'
