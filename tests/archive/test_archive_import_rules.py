"""A bag import is held to the rules of minting and deposit, and the audit log says who imported what.

Issue 12: import accepted serial 999 (so 2..998 never exist and the next mint
is 1000), future dates, media types holding CR/LF (whose names then got an
empty reply from the resolver), and statements backdated before their
document with a forged ``who``. Each case is a real export whose
``catalog.json`` is edited the way a careless or hostile tool would, and
resealed; the import must refuse it with a syntax error naming the entry, and
leave the target archive exactly as it was.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import Clock, reseal, snapshot

from pdi.archive import Archive, Content
from pdi.errors import NotFoundError, ParseError

S = "oma.eop.gov.us"
NOW = datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC)

Edit = Callable[[dict[str, Any]], None]


def _serial(catalog: dict[str, Any], serial: int) -> dict[str, Any]:
    return next(r for r in catalog["representations"] if r["serial"] == serial)


def _renumber(rep: dict[str, Any], serial: int) -> None:
    rep["serial"] = serial
    rep["unique_id"] = str(serial)
    rep["pdi"] = rep["pdi"].replace("/2.text.1", f"/{serial}.text.1")


def _serial_999(catalog: dict[str, Any]) -> None:
    _renumber(_serial(catalog, 2), 999)


def _future_day(catalog: dict[str, Any]) -> None:
    rep = _serial(catalog, 2)
    for field in ("day", "created_at"):
        rep[field] = rep[field].replace("2026-11-22", "2027-01-05")
    rep["pdi"] = rep["pdi"].replace("/2026/11/22/", "/2027/01/05/")
    _renumber(rep, 1)


def _day_not_its_deposit(catalog: dict[str, Any]) -> None:
    _serial(catalog, 2)["created_at"] = "2026-11-21T10:00:00.000000Z"


def _a_time_not_written_as_the_catalog_writes_it(catalog: dict[str, Any]) -> None:
    # ISO 8601 with a zone, but not the catalog's form (pdi verify reads created_at as the catalog writes it)
    _serial(catalog, 2)["created_at"] = _serial(catalog, 2)["created_at"][:19] + "Z"


def _serial_deposited_after_its_day(catalog: dict[str, Any]) -> None:
    # Only a later version, or a name with a foreign id dated by its source (a web
    # archive's capture), is deposited after the day it names; serial 1 of a day is not.
    rep = _serial(catalog, 2)
    rep["day"] = "2026-11-20"
    rep["pdi"] = rep["pdi"].replace("/2026/11/22/", "/2026/11/20/")
    _renumber(rep, 1)


def _media_type_with_crlf(catalog: dict[str, Any]) -> None:
    _serial(catalog, 2)["media_type"] = "text/plain\r\nX-Injected: yes"


def _media_type_of_another_format(catalog: dict[str, Any]) -> None:
    _serial(catalog, 2)["media_type"] = "image/gif"


def _statement_before_its_document(catalog: dict[str, Any]) -> None:
    catalog["assertions"][0]["at"] = "1997-09-01T00:00:00.000000Z"
    catalog["assertions"][0]["who"] = "Thomas Jefferson"


def _statement_in_the_future(catalog: dict[str, Any]) -> None:
    catalog["assertions"][0]["at"] = "2030-01-01T00:00:00.000000Z"


def _statement_holding_nul(catalog: dict[str, Any]) -> None:
    catalog["assertions"][0]["value"] = "AAAA\x00BBBB"  # kept as "AAAA": SQLite's text ended at the NUL


def _statement_holding_a_lone_surrogate(catalog: dict[str, Any]) -> None:
    # json.dumps writes it as the escape \ud800, which ijson's C reader read as "?": "AAAA?BBBB" was kept
    catalog["assertions"][0]["value"] = "AAAA\ud800BBBB"


def _version_gap(catalog: dict[str, Any]) -> None:
    rep = next(r for r in catalog["representations"] if r["version"] == 2)
    rep["version"] = 5
    rep["pdi"] = rep["pdi"].replace(".text.2", ".text.5")


def _only_version_2(catalog: dict[str, Any]) -> None:
    rep = _serial(catalog, 2)
    rep["version"] = 2
    rep["pdi"] = rep["pdi"].replace(".text.1", ".text.2")


CASES: dict[str, tuple[Edit, str]] = {
    "serial 999 on a day with 2": (_serial_999, "gaps in the serials"),
    "a day in the future": (_future_day, "in the future"),
    "a day that is not the deposit's": (_day_not_its_deposit, "deposited on 2026-11-21"),
    "a time not written as the catalog writes it": (_a_time_not_written_as_the_catalog_writes_it,
                                                    "is not a catalog timestamp"),
    "a serial name deposited after its day": (_serial_deposited_after_its_day, "names the day 2026-11-20, but was deposited on 2026-11-22"),
    "a media type with CR/LF": (_media_type_with_crlf, "is not that of format text"),
    "the media type of another format": (_media_type_of_another_format, "is not that of format text"),
    "a statement before its document": (_statement_before_its_document, "before its document was minted"),
    "a statement in the future": (_statement_in_the_future, "in the future"),
    "a statement holding NUL": (_statement_holding_nul, r"holds U\+0000 in its value \(character 4\)"),
    "a statement holding a lone surrogate": (_statement_holding_a_lone_surrogate,
                                             r"holds U\+D800 in its value \(character 4\)"),
    "version 5 after version 1": (_version_gap, "gaps in the versions"),
    "a version 2 alone": (_only_version_2, r"gaps in the versions of .*: 1 version numbered 2 to 2 \(rule catalog\)$"),
}


def _export(root: Path) -> Path:
    with Archive.init(root / "source", clock=Clock(NOW)) as source:
        source.add_series(S)
        first = source.add(S, b"one\n", format="text")
        source.add(S, b"two\n", format="text")
        source.add_version(first, [Content(b"one, again\n", "text")])
        source.annotate(first, "title", "One")
        source.export_bag(root / "bag")
    return root / "bag"


@pytest.mark.parametrize("case", list(CASES))
def test_import_refuses_what_minting_would_refuse(tmp_path: Path, case: str) -> None:
    edit, message = CASES[case]
    bag = _export(tmp_path)
    catalog = json.loads((bag / "data" / "catalog.json").read_text())
    edit(catalog)
    (bag / "data" / "catalog.json").write_text(json.dumps(catalog))
    reseal(bag)
    with Archive.init(tmp_path / "target", clock=Clock(NOW)) as target:
        before = snapshot(target)
        with pytest.raises(ParseError, match=message):
            target.import_bag(bag)
        assert snapshot(target) == before
        assert target.audit() == []


def test_an_untouched_bag_imports_and_the_audit_log_names_the_importer(location: str, tmp_path: Path) -> None:
    bag = _export(tmp_path)
    with Archive.init(location, clock=Clock(NOW + datetime.timedelta(hours=1))) as target:
        target.who = "archivist"
        assert target.import_bag(bag) == 3
        entries = target.audit()
        assert [(e.who, e.action, e.subject) for e in entries] == [
            ("archivist", "import", f"urn:pdi://{S}/2026/11/22/1"),
            ("archivist", "import", f"urn:pdi://{S}/2026/11/22/2"),
        ]
        assert all(e.at == "2026-11-22T15:30:00.000000Z" and str(bag) in e.detail for e in entries)
        # Importing the same bag again brings nothing new, and logs nothing.
        assert target.import_bag(bag) == 0
        assert len(target.audit()) == 2
        # The next mint continues the day's serials.
        assert target.add(S, b"three\n", format="text").serial == 3


def test_import_refuses_a_text_whose_octets_are_not_its_charset(tmp_path: Path) -> None:
    # A deposit refuses such a text even with --force; a bag must not bring one in.
    # Serial 2's object is replaced by Latin-1 octets (E9 is no UTF-8 sequence) under its
    # new SHA-256, and the catalog and manifests are made to agree with it.
    bag = _export(tmp_path)
    catalog = json.loads((bag / "data" / "catalog.json").read_text())
    rep = _serial(catalog, 2)
    assert rep["charset"] == "utf-8"
    bad = "caf\u00e9\r\n".encode("latin-1")
    sha = hashlib.sha256(bad).hexdigest()
    (bag / "data" / "objects" / rep["sha256"]).unlink()
    (bag / "data" / "objects" / sha).write_bytes(bad)
    rep["sha256"], rep["size"] = sha, len(bad)
    (bag / "data" / "catalog.json").write_text(json.dumps(catalog))
    reseal(bag)
    with Archive.init(tmp_path / "target", clock=Clock(NOW)) as target:
        before = snapshot(target)
        with pytest.raises(ParseError, match=r"/2\.text\.1: the bytes are not valid utf-8") as refused:
            target.import_bag(bag)
        assert refused.value.offset == 3
        assert snapshot(target) == before


def _statement_about_no_document(catalog: dict[str, Any]) -> None:
    statement = catalog["assertions"][0]
    statement["unique_id"] = "7"
    statement["subject"] = statement["subject"].replace("/2026/11/22/1", "/2026/11/22/7")


#: Refusals found only inside the import's transaction, once its blobs are staged and its rows written.
IN_TRANSACTION: dict[str, tuple[Edit, type[Exception], str]] = {
    "serial 999 on a day with 2": (_serial_999, ParseError, "gaps in the serials of oma.eop.gov.us on 2026-11-22:"
                                   " 2 serials numbered 1 to 999"),
    "version 5 after version 1": (_version_gap, ParseError, "gaps in the versions of urn:pdi://oma.eop.gov.us/2026/11/22/1:"
                                  " 2 versions numbered 1 to 5"),
    "a statement about no document": (_statement_about_no_document, NotFoundError, "no such document"),
}


@pytest.mark.parametrize("case", list(IN_TRANSACTION))
def test_a_refusal_inside_the_transaction_leaves_either_store_as_it_was(
    location: str, tmp_path: Path, case: str
) -> None:
    edit, error, message = IN_TRANSACTION[case]
    bag = _export(tmp_path)
    catalog = json.loads((bag / "data" / "catalog.json").read_text())
    edit(catalog)
    (bag / "data" / "catalog.json").write_text(json.dumps(catalog))
    reseal(bag)
    with Archive.init(location, clock=Clock(NOW)) as target:
        target.add_series("elsewhere.example.us")
        target.add("elsewhere.example.us", b"already here\n", format="text")  # something for the import to keep
        before = snapshot(target)
        audit = target.audit()
        with pytest.raises(error, match=message):
            target.import_bag(bag)
        assert snapshot(target) == before
        assert target.audit() == audit


def test_importing_the_archives_own_bag_into_it_changes_nothing_and_says_so(location: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    with Archive.init(location) as archive:
        archive.add_series(S)
        first = archive.add(S, b"one\n", format="text")
        archive.add_version(first.without_fragment(), [Content(b"two\n", "text")])  # version 2
        archive.add_version(first.without_fragment(), [Content(b"one\n", "text")], force=True)  # 3: 1's bytes
        archive.add(S, b"<p>page</p>", format="html")
        bag = tmp_path / "own-bag"
        archive.export_bag(bag)
        before, audit = snapshot(archive), archive.audit()
        again = archive.import_bag(bag)
        assert (again, again.listed, again.unchanged) == (0, 4, 4)  # type: ignore[attr-defined]
        assert snapshot(archive) == before and archive.audit() == audit
    got = CliRunner().invoke(cli, ["import", str(bag), "--archive", location])
    assert got.exit_code == 0, got.output
    assert got.output.strip() == f"imported 0 new representations into {location}" \
        " (4 unchanged: held already, byte for byte)"
    with Archive.open(location) as archive:
        assert snapshot(archive) == before


def test_escapes_of_characters_past_the_bmp_are_read_as_the_characters(tmp_path: Path) -> None:
    """A catalog whose writer escaped every character beyond ASCII (json.dumps's default: a character past U+FFFF as
    two surrogate escapes, ``\\ud83d\\ude00``) is read as the characters, whichever reader reads it."""
    bag = _export(tmp_path)
    catalog = json.loads((bag / "data" / "catalog.json").read_text())
    title = "One \U0001f600 \u00e9t\u00e9 \\ud800 as written"  # the last: a backslash, then letters
    catalog["assertions"][0]["value"] = title
    written = json.dumps(catalog)  # ensure_ascii: escapes only
    assert "\\ud83d\\ude00" in written and "\\\\ud800" in written
    (bag / "data" / "catalog.json").write_text(written)
    reseal(bag)
    with Archive.init(tmp_path / "target", clock=Clock(NOW)) as target:
        target.import_bag(bag)
        subject = catalog["assertions"][0]["subject"]
        assert target.meta(subject)["title"] == title
