"""``pdi add`` of a file whose name says XML (``.tei``: ``application/tei+xml`` by Debian's ``mime.types``) but which
holds SGML — TEI P3's dictionaries are such files — deposits it as its name says and notes on stderr that it is no
well-formed XML and what reads its passages (``--format sgml``); a well-formed file, or one whose format was given,
gets no note. What is well-formed is Python's expat's to say, not pdi's, with XML 1.0 Fifth Edition's names (which
expat, of the Fourth, lacks) read as ``#elt`` reads them."""

from __future__ import annotations

import shutil
import xml.parsers.expat
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli as main

S = "archives.gov.us"
TEI_P3 = Path(__file__).parent / "data" / "sgml" / "sco-deu.tei"  # FreeDict's Scots-German, TEI P3 SGML


@pytest.fixture()
def archive(tmp_path: Path) -> str:
    with Archive.init(str(tmp_path / "a")) as made:
        made.add_series(S)
    return str(tmp_path / "a")


def _add(archive: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["add", "--archive", archive, "--series", S, *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_tei_p3_file_is_deposited_as_named_with_a_note_that_it_is_sgml(archive: str, tmp_path: Path) -> None:
    parser = xml.parsers.expat.ParserCreate()
    with pytest.raises(xml.parsers.expat.ExpatError) as raised:  # expat's verdict, which the note repeats
        parser.Parse(TEI_P3.read_bytes(), True)
    where = f"line {raised.value.lineno}, column {raised.value.offset + 1}"
    copy = tmp_path / "sco-deu.tei"
    shutil.copyfile(TEI_P3, copy)
    code, out, err = _add(archive, str(copy))
    assert code == 0, err
    assert out.strip().endswith(".tei%2Bxml.1"), out  # deposited as its name says
    assert f"note: {copy} is not well-formed XML (" in err and where in err, err
    assert "--format sgml" in err, err
    code, out, err = _add(archive, str(copy), "--format", "sgml")
    assert code == 0 and out.strip().endswith(".sgml.1") and "well-formed" not in err, (out, err)


@pytest.mark.parametrize("name, text", [
    ("p5.tei", b'<?xml version="1.0"?>\n<!DOCTYPE TEI>\n<TEI><text>hi</text></TEI>\n'),
    ("doc.xml", b"<!DOCTYPE doc>\n<doc><p>well formed</p></doc>\n"),
    ("plain.xml", b"<doc><p>not well formed</doc>\n"),  # no document type declaration: no guess at SGML
    # XML 1.0 Fifth Edition's names (U+01CA, U+1F600; expat knows the Fourth's): well-formed
    ("fifth.xml", "<!DOCTYPE d>\n<d><\u01caa>x</\u01caa></d>\n".encode()),
    ("fifth-bom.xml", "\ufeff<!DOCTYPE d><d \U0001f600='1'/>".encode()),
])
def test_no_note_for_well_formed_xml_or_without_a_doctype(archive: str, tmp_path: Path, name: str,
                                                           text: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(text)
    code, _, err = _add(archive, str(path))
    assert code == 0 and err == "", err


def test_no_note_when_the_format_is_given(archive: str, tmp_path: Path) -> None:
    copy = tmp_path / "sco-deu.tei"
    shutil.copyfile(TEI_P3, copy)
    code, _, err = _add(archive, str(copy), "--format", "tei%2Bxml")
    assert code == 0 and err == "", err
