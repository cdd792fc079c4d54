"""An SGML document's #elt= passages never change after deposit, whatever DTD the archive's SGML folder gains later.

The archive answers an SGML document's ``elt`` from the parse kept for it alone: the one made at deposit; one an
earlier pdi kept (index version 2, made before archives had an SGML folder), read anew with the machine's catalogs
alone, as it was made; or, for a document that has none (OpenSP's onsgmls missing where it was deposited, or
imported), refused until ``pdi reindex --elements`` keeps a first parse. The values are onsgmls's, run by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import UnsupportedError
from pdi.fragments.markup import sgml
from pdi.fragments.markup.index import MAGIC, VERSION
from pdi.fragments.sealed import seal, unseal
from pdi.identifier import PDI
from support.sgml_filing import (
    FILING,
    PUBLIC,
    WITH_DTD,
    WITHOUT_DTD,
    add_dtd,
    check_by_hand,
)

assert sgml.onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

S = "acme.court.us"


@pytest.fixture
def oracle(tmp_path: Path) -> None:
    """Check, by onsgmls run by hand, what element 3 of FILING is without its DTD and with it."""
    check_by_hand(tmp_path)


def _as_version_2(index: bytes) -> bytes:
    """The same index sealed as version 2, as a pdi before archives had an SGML folder kept it (the same layout)."""
    return seal(MAGIC, 2, bytes(unseal(index, MAGIC, VERSION, "element index")))


def _deposit(location: str, *, onsgmls: bool, monkeypatch: pytest.MonkeyPatch) -> PDI:
    with monkeypatch.context() as patch:
        if not onsgmls:
            patch.setattr(sgml, "onsgmls_path", lambda: None)
        with Archive.open(location) as archive:
            (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
    return name


@pytest.fixture
def archive_at(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PDI_SGML_CATALOG", str(tmp_path / "sgml"))  # (a PostgreSQL archive has no directory)
    with Archive.init(location) as archive:
        archive.add_series(S)
    return location


@pytest.mark.usefixtures("oracle")
def test_a_kept_parse_is_read_everywhere_after_the_dtd_is_added(
    archive_at: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _deposit(archive_at, onsgmls=True, monkeypatch=monkeypatch)  # no DTD in the archive yet
    add_dtd(tmp_path, archive_at)
    with Archive.open(archive_at) as archive:
        assert archive.resolve(f"{name}#elt=3,3").data == WITHOUT_DTD
        # the reader's page and anchoring select in the octets read whole, with no index given: the kept parse too
        whole = archive.resolve(str(name))
        selected = archive.select(whole, PDI.parse(f"{name}#elt=3,3").fragment)  # type: ignore[arg-type]
        assert selected.data == WITHOUT_DTD
    info = CliRunner().invoke(cli, ["get", str(name), "--info", "--archive", archive_at])
    assert f"no DTD found at deposit for {PUBLIC}" in info.stdout


@pytest.mark.usefixtures("oracle")
def test_an_earlier_pdis_parse_is_read_anew_as_it_was_made_in_every_process(
    archive_at: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _deposit(archive_at, onsgmls=True, monkeypatch=monkeypatch)
    with Archive.open(archive_at) as archive:
        record = archive.resolve(str(name)).record
        store = archive.store
        kept = store.fragment_index(record.sha256, record.media_type, record.charset)
        assert kept is not None
        with store._write():
            store._query("UPDATE fragment_indexes SET data = ? WHERE sha256 = ?", (_as_version_2(kept), record.sha256))
        serving = Archive.open(archive_at)  # a resolver that has answered once (its parse in memory)
    try:
        assert serving.resolve(f"{name}#elt=3,3").data == WITHOUT_DTD
        add_dtd(tmp_path, archive_at)
        assert serving.resolve(f"{name}#elt=3,3").data == WITHOUT_DTD  # the one that answered before
        with Archive.open(archive_at) as started_after:  # and one started after the DTD was added
            assert started_after.resolve(f"{name}#elt=3,3").data == WITHOUT_DTD
    finally:
        serving.close()
    # made anew as it was made: with the machine's catalogs alone, not the DTD the archive has since
    made = CliRunner().invoke(cli, ["reindex", "--elements", "--archive", archive_at])
    assert made.exit_code == 0, made.output
    with Archive.open(archive_at) as archive:
        assert archive.resolve(f"{name}#elt=3,3").data == WITHOUT_DTD
    info = CliRunner().invoke(cli, ["get", str(name), "--info", "--archive", archive_at])
    assert f"no DTD found at deposit for {PUBLIC}" in info.stdout


@pytest.mark.usefixtures("oracle")
def test_a_document_with_no_kept_parse_is_refused_until_reindex_keeps_one(
    archive_at: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _deposit(archive_at, onsgmls=False, monkeypatch=monkeypatch)  # onsgmls missing where it was deposited
    with Archive.open(archive_at) as archive:
        with pytest.raises(UnsupportedError, match=r"no kept SGML parse .*pdi reindex --elements"):
            archive.resolve(f"{name}#elt=3,3")
        whole = archive.resolve(str(name))
        with pytest.raises(UnsupportedError, match="no kept SGML parse"):
            archive.select(whole, PDI.parse(f"{name}#elt=3,3").fragment)  # type: ignore[arg-type]
        assert archive.resolve(f"{name}#char=0,9").data == b"<!DOCTYPE"  # its text is read as ever
    info = CliRunner().invoke(cli, ["get", str(name), "--info", "--archive", archive_at])
    assert "#elt= is refused until pdi reindex --elements keeps a parse of it" in info.stdout
    add_dtd(tmp_path, archive_at)
    made = CliRunner().invoke(cli, ["reindex", "--elements", "--archive", archive_at])
    assert made.exit_code == 0, made.output
    with Archive.open(archive_at) as archive:  # the first parse, with the archive's DTD, kept from now on
        assert archive.resolve(f"{name}#elt=3,3").data == WITH_DTD
        assert archive.resolve(f"{name}#char=0,9").data == b"<!DOCTYPE"
    again = CliRunner().invoke(cli, ["reindex", "--elements", "--archive", archive_at])
    assert again.exit_code == 0 and "made 0" in again.output, again.output
