"""An SGML document brought by ``pdi import`` answers its #elt= passages at once, as the archive it came from does.

A bag pdi exports carries the parse each SGML document keeps (its element index, ``data/element-indexes/``), and
the archive it is imported into keeps that parse, checked against the document's octets, never one of its own: so
a name selects there what it selected where it was deposited, whatever DTDs either archive has. A bag with none
(an earlier pdi's, or of a document that had none) has each SGML document parsed on import as a deposit parses it.
The expected passages are onsgmls's, run by hand (:mod:`support.sgml_filing`); the importing archive is SQLite and
PostgreSQL (``location``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import IntegrityError, UnsupportedError
from pdi.fragments import build_index
from pdi.fragments.markup import sgml
from pdi.fragments.markup.index import ElementIndex
from pdi.identifier import PDI
from support.sgml_filing import FILING, PUBLIC, WITH_DTD, add_dtd, check_by_hand

assert sgml.onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

S = "acme.court.us"


@pytest.fixture
def oracle(tmp_path: Path) -> None:
    check_by_hand(tmp_path)


def _origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, dtd: bool, onsgmls: bool = True) -> tuple[Path, PDI]:
    """A SQLite archive (its SGML folder its own) holding FILING, deposited after its DTD was added (``dtd``) or
    not, and where onsgmls is missing (``onsgmls`` False): its export's bag and the name."""
    where = tmp_path / "origin"
    with Archive.init(where) as archive:
        archive.add_series(S)
    if dtd:
        add_dtd(tmp_path, str(where))
    with monkeypatch.context() as patch:
        if not onsgmls:
            patch.setattr(sgml, "onsgmls_path", lambda: None)
        with Archive.open(where) as archive:
            (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
    bag = tmp_path / "bag"
    exported = CliRunner().invoke(cli, ["export", str(bag), "--archive", str(where)])
    assert exported.exit_code == 0, exported.output
    return bag, name


@pytest.fixture
def target(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The archive imported into, its SGML folder empty (a PostgreSQL archive's named by $PDI_SGML_CATALOG)."""
    monkeypatch.setenv("PDI_SGML_CATALOG", str(tmp_path / "target-sgml"))
    Archive.init(location).close()
    return location


def _import(bag: Path, location: str) -> str:
    done = CliRunner().invoke(cli, ["import", str(bag), "--archive", location])
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.usefixtures("oracle")
def test_an_imported_export_answers_elt_at_once_with_the_parse_it_carries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str,
) -> None:
    bag, name = _origin(tmp_path, monkeypatch, dtd=True)  # parsed with its DTD where it was deposited
    assert len(list((bag / "data" / "element-indexes").iterdir())) == 1
    monkeypatch.setenv("PDI_SGML_CATALOG", str(tmp_path / "target-sgml"))  # the target has no DTD at all
    Archive.init(location).close()
    output = _import(bag, location)
    assert "unparsed" not in output
    with Archive.open(location) as archive:
        assert archive.resolve(f"{name}#elt=3,3").data == WITH_DTD  # the origin's parse, not one without its DTD
    info = CliRunner().invoke(cli, ["get", str(name), "--info", "--archive", location])
    assert f"DTD found ({PUBLIC}" in info.stdout, info.stdout
    # imported again (into itself, say): nothing changes, nothing is parsed
    assert "imported 0 new representations" in _import(bag, location)
    with Archive.open(location) as archive:
        assert archive.resolve(f"{name}#elt=3,3").data == WITH_DTD


@pytest.mark.usefixtures("oracle")
def test_a_bag_that_carries_no_parse_has_its_sgml_parsed_on_import_as_a_deposit_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str,
) -> None:
    bag, name = _origin(tmp_path, monkeypatch, dtd=False, onsgmls=False)  # no parse kept where it came from
    assert not (bag / "data" / "element-indexes").exists()
    add_dtd(tmp_path, target)
    output = _import(bag, target)
    assert "unparsed" not in output
    with Archive.open(target) as archive:  # parsed on import with the target's own DTD, as a deposit there is
        assert archive.resolve(f"{name}#elt=3,3").data == WITH_DTD


@pytest.mark.usefixtures("oracle")
def test_where_onsgmls_is_missing_an_import_says_which_documents_it_kept_no_parse_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str,
) -> None:
    bag, name = _origin(tmp_path, monkeypatch, dtd=False, onsgmls=False)
    monkeypatch.setattr(sgml, "onsgmls_path", lambda: None)
    output = _import(bag, target)
    assert f"unparsed\t{name}\t" in output and "pdi reindex --elements" in output, output
    with Archive.open(target) as archive, pytest.raises(UnsupportedError, match="no kept SGML parse"):
        archive.resolve(f"{name}#elt=3,3")


def _rebag(bag: Path) -> None:
    """Write the bag's manifests and Payload-Oxum anew for the files it now holds (a bag changed on purpose)."""
    files = sorted(p for p in (bag / "data").rglob("*") if p.is_file())
    (bag / "manifest-sha256.txt").write_text("".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(bag).as_posix()}\n" for p in files))
    info = (bag / "bag-info.txt").read_text().splitlines()
    oxum = f"Payload-Oxum: {sum(p.stat().st_size for p in files)}.{len(files)}"
    (bag / "bag-info.txt").write_text("\n".join(oxum if line.startswith("Payload-Oxum") else line for line in info) + "\n")
    tags = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt"]
    (bag / "tagmanifest-sha256.txt").write_text(
        "".join(f"{hashlib.sha256((bag / t).read_bytes()).hexdigest()}  {t}\n" for t in tags))


@pytest.mark.usefixtures("oracle")
def test_a_carried_parse_not_made_of_its_documents_octets_refuses_the_import_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str,
) -> None:
    bag, name = _origin(tmp_path, monkeypatch, dtd=True)
    # the parse of another document (a line longer), filed under the name its SHA-256 gives, in the catalog too
    longer = FILING.replace("Second", "Second and last").encode()
    other = build_index(longer, media_type="text/sgml", charset="utf-8")  # (the filing was deposited as UTF-8)
    assert other is not None
    folder = bag / "data" / "element-indexes"
    (old,) = (p.name for p in folder.iterdir())
    (folder / old).unlink()
    new = hashlib.sha256(other).hexdigest()
    (folder / new).write_bytes(other)
    catalog = bag / "data" / "catalog.json"
    catalog.write_text(catalog.read_text().replace(old, new))
    _rebag(bag)
    done = CliRunner().invoke(cli, ["import", str(bag), "--archive", target])
    assert done.exit_code == 3, done.output
    assert f"data/element-indexes/{new}, the element index of {name}, is not one of its octets" in done.output
    assert f"made for {len(longer)} octets, not for these {len(FILING)}" in done.output, done.output
    with Archive.open(target) as archive:
        assert archive.store.list_series() == []  # nothing was imported, not even its series


def test_an_element_index_is_refused_for_octets_of_another_size_whatever_they_are() -> None:
    index = build_index(FILING.encode(), media_type="text/sgml")
    assert index is not None
    kept = ElementIndex.from_bytes(index)
    kept.check_made_for(FILING.encode(), "text/sgml", None)  # its own octets

    @settings(max_examples=200, deadline=None)
    @given(st.binary(max_size=400).filter(lambda data: len(data) != len(FILING)))
    def other(data: bytes) -> None:
        with pytest.raises(IntegrityError, match="element index"):
            kept.check_made_for(data, "text/sgml", None)

    other()


def test_an_element_index_with_an_element_past_the_text_is_refused() -> None:
    """An index whose elements end past the text's end (a forged one, sealed anew) is not one of the octets."""
    index = build_index(FILING.encode(), media_type="text/sgml")
    assert index is not None
    kept = ElementIndex.from_bytes(index)
    names = sorted({e.name for e in kept})
    forged = ElementIndex(
        kind="sgml", size=kept.size, declared=kept.declared, charset=kept.charset, failure=None,
        text_table=kept.text_table, starts=np.array([e.start for e in kept]),
        ends=np.array([e.end + len(FILING) for e in kept]), tag_names=names,
        tags=np.array([names.index(e.name) for e in kept]), values=[], firsts=np.array([], dtype=np.int64),
        sgml=kept.sgml,
    )
    again = ElementIndex.from_bytes(forged.to_bytes())
    with pytest.raises(IntegrityError, match="an element past the end of the text"):
        again.check_made_for(FILING.encode(), "text/sgml", None)
