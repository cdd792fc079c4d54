"""Element indexes made at deposit by an earlier reading of XML and SGML are read anew, not believed.

:data:`pdi.fragments.markup.index.VERSION` 2 marks the readings of 2026-11-28, which changed what ``elt=`` names
on some SGML and XML documents (an element of an internal entity spans nothing of the source; an XML document
holding U+0000 is refused). An archive deposited before keeps version-1 indexes: one of an XML or SGML document
is not used (the document is parsed now, as this pdi reads it); one of HTML, whose reading did not change, is.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pdi.archive import Archive, Content
from pdi.fragments.markup.index import MAGIC
from pdi.fragments.sealed import seal, unseal

S = "readings.example.us"
PROLOG = ('<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>'
          '<!ENTITY e "<b>x</b>">]>\r\n')


def _as_version_1(index: bytes) -> bytes:
    """The same index sealed as version 1 (the layout did not change between the two)."""
    for version in (2, 1):
        try:
            return seal(MAGIC, 1, bytes(unseal(index, MAGIC, version, "element index")))
        except Exception:
            continue
    raise AssertionError("not an element index")


def _index_of(catalog: Path, sha256: str) -> bytes:
    with sqlite3.connect(catalog) as conn:
        return bytes(conn.execute("SELECT data FROM fragment_indexes WHERE sha256 = ?", (sha256,)).fetchone()[0])


def _put_index(catalog: Path, sha256: str, data: bytes) -> None:
    with sqlite3.connect(catalog) as conn:
        conn.execute("UPDATE fragment_indexes SET data = ? WHERE sha256 = ?", (data, sha256))


def test_an_earlier_readings_index_is_read_anew_for_sgml_and_believed_for_html(tmp_path: Path) -> None:
    # the SGML document: element 0 is <a>, 1 the entity's <b> (no text of its own), 2 the written <b>w</b>
    sgml = PROLOG + "<a>&e;<b>w</b></a>"
    written = sgml.index("<b>w</b>")
    # another SGML document of as many octets (an index is refused for octets of another length), whose index
    # says other things of elements 1 and 2 (what a stale index would say)
    other = PROLOG + "<a><b>y</b>zzz</a>"
    assert len(other) == len(sgml)
    location = tmp_path / "a"
    with Archive.init(location) as archive:
        archive.add_series(S)
        (doc,) = archive.deposit(S, [Content(sgml.encode(), "sgml")])
        (elsewhere,) = archive.deposit(S, [Content(other.encode(), "sgml")])
        (page,) = archive.deposit(S, [Content(b"<p>one</p><p>two</p>", "html")])
        (another_page,) = archive.deposit(S, [Content(b"<div>abcdefghi</div>", "html")])  # as long
        shas = {name: archive.resolve(str(name)).record.sha256 for name in (doc, elsewhere, page, another_page)}
    catalog = location / "catalog.sqlite"
    # the archive as an earlier pdi left it: each index of version 1, holding another document's answers
    _put_index(catalog, shas[doc], _as_version_1(_index_of(catalog, shas[elsewhere])))
    stale_page_index = _as_version_1(_index_of(catalog, shas[another_page]))
    _put_index(catalog, shas[page], stale_page_index)
    with Archive.open(location) as archive:
        record = archive.resolve(str(doc)).record
        assert archive.fragment_index(record) is None  # not believed: read anew
        assert archive.resolve(f"{doc}#elt=2,2").data == sgml[written:written + len("<b>w</b>")].encode()
        assert archive.resolve(f"{doc}#elt=1,1").data == b""  # the entity's element spans nothing of the text
        # HTML's reading did not change: its version-1 index is believed (here, another page's, as stored)
        assert archive.fragment_index(archive.resolve(str(page)).record) == stale_page_index
        assert archive.resolve(f"{page}#elt=0,0").data == b"<p>one</p><p>two</p>"  # the other page's element 0
