"""Element indexes made at deposit by an earlier reading of XML and SGML are read anew, not believed.

:data:`pdi.fragments.markup.index.VERSION` 2 marks the readings of 2026-11-28, which changed what ``elt=`` names
on some SGML and XML documents (an element of an internal entity spans nothing of the source; an XML document
holding U+0000 is refused). An archive deposited before keeps version-1 indexes: one of an XML or SGML document
is not used (the document is parsed now, as this pdi reads it); one of HTML, whose reading did not change, is.
Version 3 marks the reading of SGML of 2026-11-30 (what an internal entity's tag closes ends at the reference): a
version-2 index of SGML is read anew, one of XML believed. Version 4 marks the reading of HTML of 2026-12-01 (an
element the parser closes when text comes ends where the text begins): an HTML index of any earlier version is
read anew, and so is one of XML (whose reading of U+0085 changed with it), a version-3 one of SGML believed.
Version 5 marks the reading of XML that reads XML 1.0 Fifth Edition's names (``<\u01caa/>``, which expat's Fourth
Edition refused): a version-4 index of XML is read anew, one of HTML or SGML believed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.fragments.markup.index import MAGIC
from pdi.fragments.sealed import seal, unseal

S = "readings.example.us"
PROLOG = ('<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>'
          '<!ENTITY e "<b>x</b>">]>\r\n')


def _as_version_1(index: bytes, *, version: int = 1) -> bytes:
    """The same index sealed as ``version`` (1 unless told; the layout did not change between them)."""
    for made in (5, 4, 3, 2, 1):
        try:
            return seal(MAGIC, version, bytes(unseal(index, MAGIC, made, "element index")))
        except Exception:
            continue
    raise AssertionError("not an element index")


def _index_of(catalog: Path, sha256: str) -> bytes:
    with sqlite3.connect(catalog) as conn:
        return bytes(conn.execute("SELECT data FROM fragment_indexes WHERE sha256 = ?", (sha256,)).fetchone()[0])


def _put_index(catalog: Path, sha256: str, data: bytes) -> None:
    with sqlite3.connect(catalog) as conn:
        conn.execute("UPDATE fragment_indexes SET data = ? WHERE sha256 = ?", (data, sha256))


def test_an_earlier_readings_index_is_read_anew_for_sgml_and_html(tmp_path: Path) -> None:
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
        # HTML's reading changed since too (version 4): its version-1 index is not believed either
        assert archive.fragment_index(archive.resolve(str(page)).record) is None
        assert archive.resolve(f"{page}#elt=0,0").data == b"<p>one</p>"  # its own first start tag, read anew


XML = '<?xml version="1.0"?>\r\n<r><i>one</i><i>two</i></r>'
OTHER_XML = '<?xml version="1.0"?>\r\n<r><j>abcdefghijklm</j></r>'  # as long, other elements


def _rows(archive: Archive, table: str) -> list[tuple[object, ...]]:
    store = archive.store
    with store._read():
        return sorted(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                      for row in store._query(f"SELECT * FROM {table}"))


def _stale(archive: Archive, name: object, made_of: object) -> bytes:
    """Keep, as the element index of ``name``'s octets, ``made_of``'s index sealed as version 1 (as an earlier pdi
    left it, and answering as another document would)."""
    store = archive.store
    record, other = archive.resolve(str(name)).record, archive.resolve(str(made_of)).record
    stale = _as_version_1(store.fragment_index(other.sha256, other.media_type, other.charset) or b"")
    with store._write():
        store._query("UPDATE fragment_indexes SET data = ? WHERE sha256 = ?", (stale, record.sha256))
    return stale


def test_reindex_elements_makes_an_earlier_readings_indexes_anew_and_touches_nothing_else(location: str) -> None:
    sgml = PROLOG + "<a>&e;<b>w</b></a>"
    other = PROLOG + "<a><b>y</b>zzz</a>"
    assert len(other) == len(sgml) and len(XML) == len(OTHER_XML)
    with Archive.init(location) as archive:
        archive.add_series(S)
        (doc,) = archive.deposit(S, [Content(sgml.encode(), "sgml")])
        (elsewhere,) = archive.deposit(S, [Content(other.encode(), "sgml")])
        (xml,) = archive.deposit(S, [Content(XML.encode(), "xml")])
        (other_xml,) = archive.deposit(S, [Content(OTHER_XML.encode(), "xml")])
        (page,) = archive.deposit(S, [Content(b"<p>one</p><p>two</p>", "html")])
        (another_page,) = archive.deposit(S, [Content(b"<div>abcdefghi</div>", "html")])
        _stale(archive, doc, elsewhere)
        _stale(archive, xml, other_xml)
        stale_page = _stale(archive, page, another_page)
        assert archive.fragment_index(archive.resolve(str(doc)).record) is None  # read anew at each request
        tables = ("documents", "versions", "representations", "blob_fixity", "search_sources")
        before = {t: _rows(archive, t) for t in tables}
        kept = {row[:3]: row for row in _rows(archive, "fragment_indexes")}
        blobs = archive.store.blob_names()
        # a run stopped after its first index keeps what it made; the next makes the rest
        stopped = []

        def stop(done: int) -> None:
            stopped.append(done)
            raise KeyboardInterrupt

        try:
            archive.reindex_elements(progress=stop)
        except KeyboardInterrupt:
            pass
        assert stopped == [1]
    runner = CliRunner()
    made = runner.invoke(cli, ["reindex", "--elements", "--archive", location])
    assert made.exit_code == 0, made.output
    assert made.output == "made 2 element indexes anew\n"  # of the three, the two the stopped run left
    again = runner.invoke(cli, ["reindex", "--elements", "--archive", location])
    assert again.exit_code == 0 and again.output == "made 0 element indexes anew\n"
    with Archive.open(location) as archive:
        for name in (doc, xml, page):
            index = archive.fragment_index(archive.resolve(str(name)).record)
            assert index is not None and index[:4] == MAGIC and int.from_bytes(index[4:6], "little") == 5
        # believed now, and answering for the document's own octets, not the other's whose index was kept
        written = sgml.index("<b>w</b>")
        assert archive.resolve(f"{doc}#elt=2,2").data == sgml[written:written + len("<b>w</b>")].encode()
        assert archive.resolve(f"{doc}#elt=1,1").data == b""
        assert archive.resolve(f"{xml}#elt=2,2").data == b"<i>two</i>"
        assert archive.resolve(f"{page}#elt=1,1").data == b"<p>two</p>"
        assert archive.fragment_index(archive.resolve(str(page)).record) != stale_page
        # nothing but those three index rows changed: no document, name, representation or blob
        assert {t: _rows(archive, t) for t in tables} == before
        assert archive.store.blob_names() == blobs
        after = {row[:3]: row for row in _rows(archive, "fragment_indexes")}
        changed = {key[0] for key in kept if kept[key] != after[key]}
        assert after.keys() == kept.keys()
        assert changed == {archive.resolve(str(n)).record.sha256 for n in (doc, xml, page)}


def test_reindex_elements_of_an_unknown_series_is_refused(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    with Archive.init(location) as archive:
        archive.add_series(S)
    refused = CliRunner().invoke(cli, ["reindex", "--elements", "--series", "nosuch.example.us", "--archive", location])
    assert refused.exit_code == 4 and "nosuch.example.us" in refused.output


def test_a_version_2_index_is_read_anew_for_sgml_and_xml(tmp_path: Path) -> None:
    # <p> (end tag omitted) before &sig;, whose <p> closes it: the reading of 2026-11-30 ends it at the reference
    prolog = ('<!DOCTYPE a [<!ELEMENT a - - (p+)><!ELEMENT p - O (#PCDATA)><!ENTITY sig "<p>x">]>\r\n')
    sgml, other = prolog + "<a><p>one &sig;<p>b</a>", prolog + "<a><p>onex<p>bbbbbb</a>"
    assert len(sgml) == len(other)
    location = tmp_path / "a"
    with Archive.init(location) as archive:
        archive.add_series(S)
        (doc,) = archive.deposit(S, [Content(sgml.encode(), "sgml")])
        (elsewhere,) = archive.deposit(S, [Content(other.encode(), "sgml")])
        (xml,) = archive.deposit(S, [Content(XML.encode(), "xml")])
        (other_xml,) = archive.deposit(S, [Content(OTHER_XML.encode(), "xml")])
        shas = {name: archive.resolve(str(name)).record.sha256 for name in (doc, elsewhere, xml, other_xml)}
    catalog = location / "catalog.sqlite"
    _put_index(catalog, shas[doc], _as_version_1(_index_of(catalog, shas[elsewhere]), version=2))
    stale_xml = _as_version_1(_index_of(catalog, shas[other_xml]), version=2)
    _put_index(catalog, shas[xml], stale_xml)
    with Archive.open(location) as archive:
        assert archive.fragment_index(archive.resolve(str(doc)).record) is None  # read anew
        assert archive.resolve(f"{doc}#elt=1,1").data == b"<p>one "
        # XML's reading did not change at version 3, but did at 4 (U+0085 read as a character): read anew too
        assert archive.fragment_index(archive.resolve(str(xml)).record) is None
        assert stale_xml is not None and archive.resolve(f"{xml}#elt=2,2").data == b"<i>two</i>"


def test_a_version_3_index_is_read_anew_for_html_and_xml(tmp_path: Path) -> None:
    # the reading of 2026-12-01: a head closed by text ends where the text begins (it ran to the end before)
    page, other_page = b"<head><title>t</title>Hello<p>x</p>", b"<div><div>aaaaaaaaaaaaa</div></div>"
    assert len(page) == len(other_page)
    sgml, other = PROLOG + "<a>&e;<b>w</b></a>", PROLOG + "<a><b>y</b>zzz</a>"
    location = tmp_path / "a"
    with Archive.init(location) as archive:
        archive.add_series(S)
        names = [next(iter(archive.deposit(S, [Content(data, kind)]))) for data, kind in (
            (page, "html"), (other_page, "html"), (XML.encode(), "xml"), (OTHER_XML.encode(), "xml"),
            (sgml.encode(), "sgml"), (other.encode(), "sgml"))]
        html, html_elsewhere, xml, xml_elsewhere, doc, elsewhere = names
        shas = {name: archive.resolve(str(name)).record.sha256 for name in names}
    catalog = location / "catalog.sqlite"
    stale = {}
    for name, made_of in ((html, html_elsewhere), (xml, xml_elsewhere), (doc, elsewhere)):
        stale[name] = _as_version_1(_index_of(catalog, shas[made_of]), version=3)
        _put_index(catalog, shas[name], stale[name])
    with Archive.open(location) as archive:
        assert archive.fragment_index(archive.resolve(str(html)).record) is None  # read anew
        assert archive.resolve(f"{html}#elt=0,0").data == b"<head><title>t</title>"
        assert archive.fragment_index(archive.resolve(str(xml)).record) is None  # read anew
        assert archive.resolve(f"{xml}#elt=2,2").data == b"<i>two</i>"
        # SGML's reading did not change since version 3
        assert archive.fragment_index(archive.resolve(str(doc)).record) == stale[doc]


def test_a_version_4_index_is_read_anew_for_xml_alone(tmp_path: Path) -> None:
    # the version-4 reading refused a Fifth Edition name (U+01CA): its index holds that refusal
    fifth = "<r><\u01caa>one</\u01caa><i>two</i></r>"
    page, other_page = b"<p>one</p><p>two</p>", b"<div>abcdefghi</div>"
    sgml, other = PROLOG + "<a>&e;<b>w</b></a>", PROLOG + "<a><b>y</b>zzz</a>"
    location = tmp_path / "a"
    with Archive.init(location) as archive:
        archive.add_series(S)
        names = [next(iter(archive.deposit(S, [Content(data, kind)]))) for data, kind in (
            (fifth.encode(), "xml"), (XML.encode(), "xml"), (OTHER_XML.encode(), "xml"), (page, "html"),
            (other_page, "html"), (sgml.encode(), "sgml"), (other.encode(), "sgml"))]
        fifth_xml, xml, xml_elsewhere, html, html_elsewhere, doc, elsewhere = names
        shas = {name: archive.resolve(str(name)).record.sha256 for name in names}
        assert archive.resolve(f"{fifth_xml}#elt=1,1").data == "<\u01caa>one</\u01caa>".encode()
    catalog = location / "catalog.sqlite"
    stale = {}
    for name, made_of in ((xml, xml_elsewhere), (html, html_elsewhere), (doc, elsewhere)):
        stale[name] = _as_version_1(_index_of(catalog, shas[made_of]), version=4)
        _put_index(catalog, shas[name], stale[name])
    _put_index(catalog, shas[fifth_xml], _as_version_1(_index_of(catalog, shas[fifth_xml]), version=4))
    with Archive.open(location) as archive:
        assert archive.fragment_index(archive.resolve(str(xml)).record) is None  # read anew
        assert archive.resolve(f"{xml}#elt=2,2").data == b"<i>two</i>"
        assert archive.fragment_index(archive.resolve(str(fifth_xml)).record) is None
        assert archive.resolve(f"{fifth_xml}#elt=2,2").data == b"<i>two</i>"
        # HTML's and SGML's readings did not change since version 4
        assert archive.fragment_index(archive.resolve(str(html)).record) == stale[html]
        assert archive.fragment_index(archive.resolve(str(doc)).record) == stale[doc]
