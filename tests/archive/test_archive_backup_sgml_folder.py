"""A backup says which SGML folder it did not copy: the one ``$PDI_SGML_CATALOG`` names, a PostgreSQL archive's (it
has no directory) or a directory archive's kept outside it (docs/reference/backup.md). A directory archive's own
``sgml/`` is copied, and then nothing is said."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli
from pdi.fragments.markup.sgml import onsgmls_path

assert onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

DTD = "<!ELEMENT memo - - (#PCDATA)>\n"


def _added(tmp_path: Path, location: str) -> None:
    dtd = tmp_path / "memo.dtd"
    dtd.write_text(DTD, encoding="ascii")
    added = CliRunner().invoke(cli, ["sgml", "add", str(dtd), "--public-id", "-//ACME//DTD Memo//EN",
                                     "--archive", location])
    assert added.exit_code == 0, added.output


def test_a_backup_names_the_sgml_folder_it_did_not_copy(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "elsewhere" / "sgml"
    monkeypatch.setenv("PDI_SGML_CATALOG", str(folder))
    with Archive.init(location):
        pass
    _added(tmp_path, location)
    done = CliRunner().invoke(cli, ["backup", str(tmp_path / "backup"), "--archive", location])
    assert done.exit_code == 0, done.output
    said = " ".join(done.stderr.split())
    assert f"pdi: warning: did not copy the archive's SGML folder {folder} ($PDI_SGML_CATALOG; 2 files)" in said
    assert "keep that folder's DTDs with the archive's key files" in said
    assert not (tmp_path / "backup" / "sgml").exists()


def test_a_directory_archives_own_sgml_folder_is_copied_and_nothing_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = str(tmp_path / "archive")
    monkeypatch.delenv("PDI_SGML_CATALOG", raising=False)
    with Archive.init(location):
        pass
    _added(tmp_path, location)
    done = CliRunner().invoke(cli, ["backup", str(tmp_path / "backup"), "--archive", location])
    assert done.exit_code == 0, done.output
    assert "SGML folder" not in done.stderr
    assert (tmp_path / "backup" / "sgml" / "memo.dtd").read_text(encoding="ascii") == DTD
