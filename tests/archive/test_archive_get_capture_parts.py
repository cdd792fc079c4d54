"""``pdi get --info`` of a capture (an MHTML aggregate, ``multipart/related``) lists its parts as an e-mail's does
(docs/email.md: a ``part<TAB>N: TYPE (…)`` line a part, the ``body`` line naming the part passages count in): each
part's number in file order (as ``pdi mhtml ls`` numbers them), its media type and its Content-Location or
Content-ID, and a ``root`` line naming the page (RFC 2557 §5's start part) that replay shows and ``char=``,
``line=``, ``elt=`` and ``name=`` select in (:mod:`pdi.fragments.aggregate`)."""

from __future__ import annotations

import datetime
from pathlib import Path

from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli

NOW = datetime.datetime(2026, 11, 29, 10, 0, tzinfo=datetime.UTC)
S = "court.example.fr"

#: An RFC 2557 aggregate written by hand (not by pdi's writer): its start part the second (``start=``, §5), a
#: part labelled by Content-ID alone, and a part of no label.
CAPTURE = (
    b"MIME-Version: 1.0\r\nSubject: The news\r\n"
    b'Content-Type: multipart/related; boundary="BB"; type="text/html"; start="<page@x>"\r\n\r\n'
    b"--BB\r\nContent-Type: text/css\r\nContent-Location: http://www.example.com/style.css\r\n\r\np{color:red}\r\n"
    b"--BB\r\nContent-Type: text/html; charset=utf-8\r\nContent-ID: <page@x>\r\n"
    b"Content-Location: http://www.example.com/news\r\n\r\n"
    b'<link rel=stylesheet href="style.css"><p>Hello <img src="cid:sun@x">\r\n'
    b"--BB\r\nContent-Type: image/png\r\nContent-ID: <sun@x>\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    b"iVBORw0KGgo=\r\n"
    b"--BB\r\nContent-Type: application/octet-stream\r\n\r\nabc\r\n"
    b"--BB--\r\n"
)


def _info(location: Path, name: str) -> list[str]:
    result = CliRunner().invoke(cli, ["get", "--info", name, "--archive", str(location)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_get_info_of_a_capture_lists_its_parts_as_an_e_mails_info_does(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a", clock=lambda: NOW) as archive:
        archive.add_series(S)
        name = str(archive.add(S, CAPTURE, format="related"))
    lines = _info(tmp_path / "a", name)
    assert lines[:2] == [f"pdi\t{name}", "media-type\tmultipart/related"], lines
    told = [line for line in lines if line.startswith(("root\t", "part\t"))]
    assert told == [
        "root\tpart 1 (text/html; charset=utf-8): the page replay shows (char=, line=, elt= and name= select in it)",
        "part\t0: text/css (location http://www.example.com/style.css)",
        "part\t1: text/html (location http://www.example.com/news, cid:page@x)",
        "part\t2: image/png (cid:sun@x)",
        "part\t3: application/octet-stream",
    ], lines


def test_get_info_of_a_passage_of_a_capture_lists_its_parts_too(tmp_path: Path) -> None:
    # as an e-mail's #part=N keeps the message's lines: the passage's lines, then the whole capture's parts
    with Archive.init(tmp_path / "a", clock=lambda: NOW) as archive:
        archive.add_series(S)
        name = str(archive.add(S, CAPTURE, format="related"))
    lines = _info(tmp_path / "a", name + "#char=0,5")
    assert "part\t2: image/png (cid:sun@x)" in lines and "range\tchar=0,5 (octets 0 to 5)" in lines, lines


def test_get_info_of_a_capture_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    # deposited with --force: it is kept, but no part of it can be listed
    with Archive.init(tmp_path / "a", clock=lambda: NOW) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"Content-Type: multipart/related; boundary=BB\r\n\r\nno part at all",
                               format="related", force=True))
    lines = _info(tmp_path / "a", name)
    assert [line for line in lines if line.startswith(("part\t", "root\t", "parts\t"))] == [
        "parts\tnot listed: pdi's MHTML reader cannot read it within its limits (deposited with --force)"], lines
