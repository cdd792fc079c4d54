"""A WARC import of pages and resources whose document has a withdrawn version (pdi.interop.warc.pages).

docs/reference/write-api.md: a withdrawal takes a version (or a whole document) out of service for good; the
name stays and resolves to its tombstone. docs/explanation/name.md: a deposit of the bytes a withdrawn latest
version holds is refused, naming that version and its withdrawal, never answered with its name, and ``pdi
version`` deposits other bytes as the next version. An import answers each record as those rules do, and one
record refused never stops the others (a refusal is listed, as the content checks' refusals are).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from warc_builder import WarcBuilder, everything, parts_of

from pdi.archive import Archive
from pdi.capture.deposit import deposit_capture
from pdi.cli import cli
from pdi.errors import WithdrawnError
from pdi.identifier import PDI
from pdi.interop.warc import Imported, import_warc

S = "web.example.us"
DAY = datetime.date(2024, 5, 1)
A = "http://example.org/a/"
B = "http://example.org/b/"
LONE = "http://example.org/lone.png"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))


def _name(url: str, fmt: str = "related", version: int = 1) -> PDI:
    return PDI.build(series=S, date=DAY, foreign_id=url, format=fmt, version=version)


def _warc(path: Path, a: bytes, *, b: bytes | None = None, lone: bytes | None = None, hour: int = 10) -> Path:
    """Page A (and page B, and a lone image) captured on :data:`DAY` at ``hour``."""
    builder = WarcBuilder()
    builder.response(A, a, "text/html; charset=utf-8", f"2024-05-01T{hour:02d}:00:00Z")
    if lone is not None:
        builder.response(LONE, lone, "image/png", f"2024-05-01T{hour:02d}:00:01Z")
    if b is not None:
        builder.response(B, b, "text/html; charset=utf-8", f"2024-05-01T{hour:02d}:00:02Z")
    return builder.save(path)


def _archive(location: str) -> Archive:
    opened = Archive.init(location)
    opened.add_series(S)
    return opened


@pytest.mark.parametrize("purge", [False, True])
def test_other_bytes_after_a_withdrawn_version_are_the_next_version_and_the_import_goes_on(
    location: str, tmp_path: Path, purge: bool
) -> None:
    with _archive(location) as archive:
        first, _ = import_warc(archive, _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1"), S)
        assert [d.name for d in first] == [_name(A), _name(LONE, "png")]
        for withdrawn in (_name(A), _name(LONE, "png")):
            archive.withdraw(withdrawn, "takedown order 7", purge=purge)
        done, plan = import_warc(
            archive, _warc(tmp_path / "2.warc.gz", b"<p>two</p>", b=b"<p>bee</p>", lone=PNG + b"2", hour=11), S
        )
        assert not plan.skipped, plan.skipped
        # the file's order: A, the image, B; A and the image are new versions of their documents, B a new name
        assert [(d.name, d.unchanged) for d in done] == [
            (_name(A, version=2), False), (_name(LONE, "png", 2), False), (_name(B), False)]
        assert parts_of(archive.get(_name(A, version=2)).data)[A] == ("text/html", b"<p>two</p>")
        assert archive.get(_name(LONE, "png", 2)).data == PNG + b"2"
        assert parts_of(archive.get(_name(B)).data)[B] == ("text/html", b"<p>bee</p>")
        assert archive.meta(_name(A, version=2))["warc:date"] == "2024-05-01T11:00:00Z"
        for withdrawn in (_name(A), _name(LONE, "png")):  # the withdrawals stand
            with pytest.raises(WithdrawnError, match="takedown order 7"):
                archive.get(withdrawn)
        assert archive.versions(_name(A)) == [1, 2]


def test_a_page_of_a_document_withdrawn_whole_is_refused_naming_it_and_the_rest_is_imported(
    location: str, tmp_path: Path
) -> None:
    # a document withdrawn whole is out of service for good: every version of it, later ones too, is its tombstone
    with _archive(location) as archive:
        import_warc(archive, _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1"), S)
        for name in (_name(A), _name(LONE, "png")):
            archive.withdraw(str(name).rsplit(".", 2)[0], "the whole site, by order")  # generic: no format, version
        again = _warc(tmp_path / "2.warc.gz", b"<p>two</p>", b=b"<p>bee</p>", lone=PNG + b"2", hour=11)
        done, plan = import_warc(archive, again, S)
        assert [(d.name, d.unchanged) for d in done] == [(_name(B), False)]
        assert len(plan.skipped) == 2, plan.skipped
        for refusal, name, url in zip(plan.skipped, (_name(A), _name(LONE, "png")), (A, LONE), strict=True):
            generic = str(name).rsplit(".", 2)[0]
            assert url in refusal and "withdrawn" in refusal and "the whole site, by order" in refusal, refusal
            assert f"{generic}:" in refusal or f"{generic} " in refusal, refusal
            assert archive.versions(name) == [1]


@pytest.mark.parametrize("purge", [False, True])
def test_the_same_file_again_after_a_withdrawal_refuses_the_withdrawn_page_naming_it(
    location: str, tmp_path: Path, purge: bool
) -> None:
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", b=b"<p>bee</p>", lone=PNG + b"1")
    with _archive(location) as archive:
        import_warc(archive, warc, S)
        archive.withdraw(_name(A), "asked to by its author", purge=purge)
        archive.withdraw(_name(LONE, "png"), "asked to by its author", purge=purge)
        before = everything(archive)
        done, plan = import_warc(archive, warc, S)
        # B is held as before; A and the image are not answered with names that serve only their tombstones
        assert [(d.name, d.unchanged) for d in done] == [(_name(B), True)]
        assert len(plan.skipped) == 2, plan.skipped
        for refusal, name in zip(plan.skipped, (_name(A), _name(LONE, "png")), strict=True):
            assert str(name) in refusal and "withdrawn" in refusal and "asked to by its author" in refusal, refusal
        assert everything(archive) == before


def test_the_same_bytes_captured_again_after_a_withdrawal_are_refused_not_deposited(
    location: str, tmp_path: Path
) -> None:
    # another capture (another time of the day) of the bytes the withdrawn version holds: the catalog's rule
    with _archive(location) as archive:
        import_warc(archive, _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1"), S)
        archive.withdraw(_name(A), "court order")
        archive.withdraw(_name(LONE, "png"), "court order")
        before = everything(archive)
        again = _warc(tmp_path / "2.warc.gz", b"<p>one</p>", b=b"<p>bee</p>", lone=PNG + b"1", hour=12)
        done, plan = import_warc(archive, again, S)
        assert [(d.name, d.unchanged) for d in done] == [(_name(B), False)]
        assert len(plan.skipped) == 2, plan.skipped
        for refusal, name in zip(plan.skipped, (_name(A), _name(LONE, "png")), strict=True):
            assert str(name) in refusal and "withdrawn" in refusal and "court order" in refusal, refusal
        assert archive.versions(_name(A)) == archive.versions(_name(LONE, "png")) == [1]
        assert [r for r in everything(archive)[0] if r.unique_id != B] == before[0]  # A and the image: as they were


def test_pdi_import_lists_the_refused_page_and_exits_0(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", b=b"<p>bee</p>")
    with _archive(location) as archive:
        import_warc(archive, warc, S)
        archive.withdraw(_name(A), "asked to")
    result = CliRunner().invoke(cli, ["import", str(warc), "--series", S, "--archive", location])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [str(_name(B))]
    refused = [line for line in result.stderr.splitlines() if line.startswith("not imported: ")]
    assert len(refused) == 1 and str(_name(A)) in refused[0] and "asked to" in refused[0], result.stderr
    assert "(0 new, 1 unchanged)" in result.stderr


def test_an_export_made_before_a_withdrawal_imported_after_it_refuses_the_withdrawn_version(tmp_path: Path) -> None:
    # a version deposited on a later day than its document (pdi version) is exported dated that later day, and
    # its record names it (the PDI field): once it is withdrawn, the export imported again is not answered with it
    from pdi.archive.content import Content
    from pdi.interop.wacz import export_wacz

    clock = {"now": datetime.datetime(2026, 11, 20, 18, 0, 7, tzinfo=datetime.UTC)}
    with Archive.init(tmp_path / "archive", clock=lambda: clock["now"]) as archive:
        archive.add_series(S)
        first = archive.add(S, b"<html><title>T</title><p>first</p></html>", format="html", foreign_id=A)
        clock["now"] = datetime.datetime(2026, 11, 21, 9, 30, 5, tzinfo=datetime.UTC)
        second = archive.add_version(str(first).rsplit(".", 2)[0],
                                     [Content(b"<html><title>T</title><p>second</p></html>", "html")])[0]
        export_wacz(archive, tmp_path / "before.wacz")
        archive.withdraw(second, "deposited by mistake")
        before = everything(archive)
        done, plan = import_warc(archive, tmp_path / "before.wacz", S)
        assert [(d.name, d.unchanged) for d in done] == [(first, True)]
        assert len(plan.skipped) == 1 and str(second) in plan.skipped[0], plan.skipped
        assert "withdrawn" in plan.skipped[0] and "deposited by mistake" in plan.skipped[0], plan.skipped
        assert everything(archive) == before


@pytest.mark.parametrize("purge", [False, True])
def test_the_same_page_after_a_withdrawal_of_it_in_another_wrapper_is_refused_while_its_octets_are_kept(
    location: str, tmp_path: Path, purge: bool
) -> None:
    # the withdrawn version holds page A in other octets (its file with a Date header field, RFC 5322 §3.6.1, as
    # Chromium or another writer writes one): the page is compared by its parts, as a capture of it is
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", b=b"<p>bee</p>")
    with _archive(str(tmp_path / "scratch")) as scratch:
        import_warc(scratch, warc, S)
        head, crlf, rest = scratch.get(_name(A)).data.partition(b"\r\n")
    dated = head + crlf + b"Date: Wed, 01 May 2024 09:00:00 +0000\r\n" + rest
    with _archive(location) as archive:
        (name,) = deposit_capture(archive, S, A, dated, day=DAY)
        assert name == _name(A) and parts_of(archive.get(name).data)[A] == ("text/html", b"<p>one</p>")
        archive.withdraw(name, "court order", purge=purge)
        warned: list[Imported] = []
        done, plan = import_warc(archive, warc, S, deposited=warned.append)
        if purge:
            # nothing to compare it with: the next version, with a warning that says so
            assert [(d.name, d.unchanged) for d in done] == [(_name(A, version=2), False), (_name(B), False)]
            assert not plan.skipped, plan.skipped
            (said,) = done[0].warnings
            assert str(name) in said and "purged" in said and "could not be compared" in said, said
            return
        assert [(d.name, d.unchanged) for d in done] == [(_name(B), False)]
        assert len(plan.skipped) == 1 and str(name) in plan.skipped[0], plan.skipped
        assert "withdrawn" in plan.skipped[0] and "court order" in plan.skipped[0], plan.skipped
        assert archive.versions(name) == [1]


def test_the_bytes_of_an_earlier_withdrawn_version_captured_again_after_a_later_one_are_refused(
    location: str, tmp_path: Path
) -> None:
    # version 1 withdrawn, version 2 other bytes in service: version 1's bytes again are refused naming version 1
    # (they were the next version, serving the withdrawn page again), and the rest of the file is imported
    with _archive(location) as archive:
        import_warc(archive, _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1"), S)
        archive.withdraw(_name(A), "court order")
        archive.withdraw(_name(LONE, "png"), "court order")
        import_warc(archive, _warc(tmp_path / "2.warc.gz", b"<p>two</p>", lone=PNG + b"2", hour=11), S)
        again = _warc(tmp_path / "3.warc.gz", b"<p>one</p>", b=b"<p>bee</p>", lone=PNG + b"1", hour=12)
        done, plan = import_warc(archive, again, S)
        assert [(d.name, d.unchanged) for d in done] == [(_name(B), False)]
        assert len(plan.skipped) == 2, plan.skipped
        for refusal, name in zip(plan.skipped, (_name(A), _name(LONE, "png")), strict=True):
            assert f"{name} holds" in refusal and "withdrawn" in refusal and "court order" in refusal, refusal
        assert archive.versions(_name(A)) == archive.versions(_name(LONE, "png")) == [1, 2]


def test_the_page_of_an_earlier_purged_version_in_another_wrapper_is_imported_with_a_warning_naming_it(
    location: str, tmp_path: Path
) -> None:
    # version 1 withdrawn and purged, version 2 in service: page A again in another file cannot be compared (its
    # octets are gone), so it is the next version, and the import's line for it says so, naming version 1
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", hour=12)
    with _archive(str(tmp_path / "scratch")) as scratch:
        import_warc(scratch, warc, S)
        head, crlf, rest = scratch.get(_name(A)).data.partition(b"\r\n")
    dated = head + crlf + b"Date: Wed, 01 May 2024 09:00:00 +0000\r\n" + rest
    with _archive(location) as archive:
        (name,) = deposit_capture(archive, S, A, dated, day=DAY)
        archive.withdraw(name, "court order", purge=True)
        deposit_capture(archive, S, A, dated.replace(b"<p>one</p>", b"<p>two</p>"), day=DAY)
        done, plan = import_warc(archive, warc, S)
        assert [(d.name, d.unchanged) for d in done] == [(_name(A, version=3), False)]
        assert not plan.skipped, plan.skipped
        (said,) = done[0].warnings
        assert said.startswith(f"{name} was withdrawn at ") and "purged" in said, said
        assert "could not be compared" in said and str(_name(A, version=3)) in said, said
def _said(refusal: str, url: str) -> str:
    """A refusal as ``plan.skipped`` lists it, without where the record is (``FILE: the record at offset N (URL): ``)."""
    where, _, said = refusal.partition(f" ({url}): ")
    assert where.startswith(("1.warc.gz: the record at offset ", "2.warc.gz: the record at offset ")), refusal
    return said


@pytest.mark.parametrize("purge", [False, True])
def test_a_withdrawn_version_holding_the_record_is_worded_alike_whichever_way_the_import_finds_it(
    location: str, tmp_path: Path, purge: bool
) -> None:
    # the same file again (the import finds the version holding each record) and the same bytes captured at
    # another time (the catalog refuses them; the page, whose octets it keeps, compared by its parts first) are one
    # refusal, worded as a deposit's is (docs/explanation/name.md)
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1")
    with _archive(location) as archive:
        import_warc(archive, warc, S)
        for name in (_name(A), _name(LONE, "png")):
            archive.withdraw(name, "court order", purge=purge)
        at = {t.key.unique_id: t.at for t in archive.withdrawals()}
        again = _warc(tmp_path / "2.warc.gz", b"<p>one</p>", lone=PNG + b"1", hour=12)
        for file in (warc, again):
            done, plan = import_warc(archive, file, S)
            assert done == [] and len(plan.skipped) == 2, plan.skipped
            for refusal, name, url in zip(plan.skipped, (_name(A), _name(LONE, "png")), (A, LONE), strict=True):
                purged = " (its octets purged)" if purge else ""
                held, them = ("these octets", "these octets")
                if file == again and url == A and not purge:
                    held, them = ("this page (the same parts, whatever the file's date, boundary and Content-IDs)",
                                  "this page")
                assert _said(refusal, url) == (
                    f"{name} holds {held} but was withdrawn at {at[url]}{purged}, reason: court order; it answers"
                    f" with its tombstone, not {them}, so nothing was deposited"), refusal


def test_a_record_held_by_a_document_withdrawn_whole_names_the_document_and_every_version(
    location: str, tmp_path: Path
) -> None:
    # a document withdrawn whole: its tombstone answers for every version, so no forced version could hold them
    warc = _warc(tmp_path / "1.warc.gz", b"<p>one</p>", lone=PNG + b"1")
    with _archive(location) as archive:
        import_warc(archive, warc, S)
        for name in (_name(A), _name(LONE, "png")):
            archive.withdraw(str(name).rsplit(".", 2)[0], "the whole site, by order")
        at = {t.key.unique_id: t.at for t in archive.withdrawals()}
        done, plan = import_warc(archive, warc, S)
        assert done == [] and len(plan.skipped) == 2, plan.skipped
        for refusal, name, url in zip(plan.skipped, (_name(A), _name(LONE, "png")), (A, LONE), strict=True):
            generic = str(name).rsplit(".", 2)[0]
            assert _said(refusal, url) == (
                f"{name} holds these octets but its document {generic} was withdrawn whole at {at[url]}, reason: the"
                " whole site, by order; every version of it answers with its tombstone, so nothing was deposited"
            ), refusal
