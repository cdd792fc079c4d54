"""elt on text/sgml (issue 25): the elements OpenSP's onsgmls reports, checked against onsgmls run here, and their text."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import NotFoundError, UnsupportedError
from pdi.fragments import evaluate
from pdi.fragments.markup.sgml import read_sgml
from pdi.fragments.text.lines import to_crlf

DATA = pathlib.Path(__file__).parent / "data" / "sgml"


def _onsgmls(path: pathlib.Path) -> tuple[list[str], int]:
    """The element names onsgmls reports, in order, and its error count: the oracle."""
    run = subprocess.run(["onsgmls", "-E0", str(path)], capture_output=True, text=True, errors="replace", timeout=60, check=False)
    names = [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]
    return names, sum(":E:" in line for line in run.stderr.splitlines())


@pytest.mark.parametrize("name", ["apache-301.html", "w3c-document-notice.html", "manpage.example.sgml"])
def test_elements_are_what_onsgmls_reports(name: str) -> None:
    path = DATA / name
    names, errors = _onsgmls(path)
    reading = read_sgml(to_crlf(path.read_text(encoding="utf-8")))
    assert [e.name for e in reading.elements] == names
    assert reading.errors == errors
    assert reading.dtd_found


def test_html2_elements_select_their_source() -> None:
    data = (DATA / "apache-301.html").read_bytes()
    assert len(_onsgmls(DATA / "apache-301.html")[0]) == 7  # HTML HEAD TITLE BODY H1 P A

    def elt(a: int, b: int) -> bytes:
        return evaluate("elt", (a, b), data, media_type="text/sgml").data

    assert elt(2, 2) == b"<title>301 Moved Permanently</title>"
    assert elt(6, 6) == b'<a href="https://www.iana.org/">here</a>'
    assert elt(4, 5) == b'<h1>Moved Permanently</h1>\r\n<p>The document has moved <a href="https://www.iana.org/">here</a>.</p>'
    with pytest.raises(NotFoundError):
        evaluate("elt", (7, 7), data, media_type="text/sgml")


def test_omitted_tags_counted_and_closed_where_the_parser_closes_them() -> None:
    text = '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<title>T</title>\n<p>one\n<p>two<br>x\n'
    data = text.encode()
    reading = read_sgml(to_crlf(text))
    names = [e.name for e in reading.elements]
    assert names == ["HTML", "HEAD", "TITLE", "BODY", "P", "P", "BR"]  # what onsgmls reports (HTML 2.0 DTD)

    def cut(a: int, b: int) -> bytes:
        return evaluate("elt", (a, b), data, media_type="text/sgml").data

    assert cut(4, 4) == b"<p>one\r\n"  # ends where the next <p> begins
    assert cut(6, 6) == b"<br>"  # EMPTY: the start tag
    assert cut(0, 0) == b"<title>T</title>\r\n<p>one\r\n<p>two<br>x\r\n"  # implied: from the first markup to the end


def test_missing_dtd_is_parsed_without_it() -> None:
    text = '<!DOCTYPE memo SYSTEM "memo.dtd">\n<memo><to>A</to><body>x</body></memo>\n'
    reading = read_sgml(to_crlf(text))
    assert not reading.dtd_found
    assert [e.name for e in reading.elements] == ["MEMO", "TO", "BODY"]
    assert reading.errors >= 1
    assert evaluate("elt", (1, 1), text.encode(), media_type="text/sgml").data == b"<to>A</to>"


def test_entity_by_url_is_refused_not_fetched() -> None:
    text = '<!DOCTYPE x [<!ENTITY e SYSTEM "http://127.0.0.1:9/x">]>\n<x>&e;</x>\n'
    with pytest.raises(UnsupportedError):
        read_sgml(text)


def test_local_file_entity_is_not_read() -> None:
    text = '<!DOCTYPE x [<!ENTITY e SYSTEM "/etc/hostname">]>\n<x>&e;</x>\n'
    reading = read_sgml(to_crlf(text))
    assert [e.name for e in reading.elements] == ["X"]
    assert reading.errors >= 1  # onsgmls -R: cannot find it


def test_char_on_sgml_counts_its_text() -> None:
    data = (DATA / "apache-301.html").read_bytes()
    assert evaluate("char", (0, 9), data, media_type="text/sgml").data == b"<!DOCTYPE"


def test_html32_elements_select_their_source() -> None:
    data = (DATA / "w3c-document-notice.html").read_bytes()
    names, _ = _onsgmls(DATA / "w3c-document-notice.html")
    assert len(names) == 42

    def elt(a: int, b: int) -> bytes:
        return evaluate("elt", (a, b), data, media_type="text/sgml").data

    assert names[4] == "TITLE" and elt(4, 4) == b"<TITLE>DOCUMENT NOTICE</TITLE>"
    assert names[12] == "BR" and elt(12, 12) == b"<BR>"  # EMPTY in the HTML 3.2 DTD
    assert names[13:15] == ["FONT", "B"] and elt(13, 13) == b'<FONT size="5"><B></B></FONT>'
    assert elt(13, 14) == b'<FONT size="5"><B></B>'  # through the end of element 14
    assert names[1] == "HEAD" and elt(1, 1).endswith(b"</HEAD>")
    # <P> with its end tag omitted: it ends where the next <P> begins
    assert names[15:17] == ["P", "P"] and elt(16, 16).startswith(b"<P>") and elt(15, 15).endswith(b"\r\n")
    assert b"<P>" not in elt(15, 15)[3:]


def test_docbook_elements_select_their_source() -> None:
    data = (DATA / "manpage.example.sgml").read_bytes()
    names, _ = _onsgmls(DATA / "manpage.example.sgml")
    assert len(names) == 128

    def elt(a: int, b: int) -> bytes:
        return evaluate("elt", (a, b), data, media_type="text/sgml").data

    assert names[8] == "YEAR" and elt(8, 8) == b"<year>2002</year>"
    assert names[16] == "REFPURPOSE" and elt(16, 16) == b"<refpurpose>program to do something</refpurpose>"
    assert names[19] == "COMMAND" and elt(19, 19) == b"<command>&manpackage;</command>"
    assert names[0] == "REFENTRY" and elt(0, 0).startswith(b"<refentry>") and elt(0, 0).endswith(b"</refentry>")
    # <email> comes from the entity &manemail; (its replacement text): counted, zero-length at the reference
    email = evaluate("elt", (3, 3), data, media_type="text/sgml")
    assert names[3] == "EMAIL" and email.data == b""
    assert email.ranges[0].start == email.ranges[0].end
    assert to_crlf(data.decode()).startswith("&manemail;", email.ranges[0].start)


def test_index_made_at_deposit_answers_alike() -> None:
    from pdi.fragments import build_index
    from pdi.fragments.markup.index import ElementIndex

    for name in ("apache-301.html", "w3c-document-notice.html", "manpage.example.sgml"):
        data = (DATA / name).read_bytes()
        index = build_index(data, media_type="text/sgml")
        assert index is not None
        kept = ElementIndex.from_bytes(index)
        assert kept.kind == "sgml" and kept.sgml == (True, 0)
        assert len(kept) == len(_onsgmls(DATA / name)[0])
        for a in range(len(kept)):
            assert evaluate("elt", (a, a), data, media_type="text/sgml", index=index) == evaluate(
                "elt", (a, a), data, media_type="text/sgml"
            )
    missing = b'<!DOCTYPE memo SYSTEM "memo.dtd">\n<memo><to>A</to></memo>\n'
    index = build_index(missing, media_type="text/sgml")
    assert index is not None and ElementIndex.from_bytes(index).sgml == (False, read_sgml(to_crlf(missing.decode())).errors)


def test_cli_deposit_elt_and_info(tmp_path: pathlib.Path) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    archive = str(tmp_path / "arc")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", archive]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "oma.eop.gov.us", "--archive", archive]).exit_code == 0
    added = runner.invoke(cli, ["add", str(DATA / "apache-301.html"), "-f", "sgml", "-s", "oma.eop.gov.us",
                                "--archive", archive])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    assert name.endswith(".sgml.1")
    got = runner.invoke(cli, ["get", name + "#elt=6,6", "--archive", archive])
    assert got.exit_code == 0, got.output
    assert got.stdout == '<a href="https://www.iana.org/">here</a>'
    info = runner.invoke(cli, ["get", name, "--info", "--archive", archive])
    assert "sgml-parse\tDTD found (-//IETF//DTD HTML 2.0//EN); 0 parser errors" in info.stdout
    memo = tmp_path / "memo.sgml"
    memo.write_bytes(b'<!DOCTYPE memo SYSTEM "memo.dtd">\n<memo><to>A</to></memo>\n')
    other = runner.invoke(cli, ["add", str(memo), "-s", "oma.eop.gov.us", "--archive", archive]).stdout.strip()
    info = runner.invoke(cli, ["get", other, "--info", "--archive", archive])
    assert ("sgml-parse\tno DTD found at deposit for memo.dtd (neither the archive's SGML folder nor this machine's"
            " SGML catalogs had it; pdi sgml add makes it found for documents deposited after): parsed without one"
            in info.stdout)
    bare = tmp_path / "bare.sgml"
    bare.write_bytes(b"<memo><to>A</to></memo>\n")
    other = runner.invoke(cli, ["add", str(bare), "-f", "sgml", "-s", "oma.eop.gov.us", "--archive", archive]).stdout.strip()
    info = runner.invoke(cli, ["get", other, "--info", "--archive", archive])
    assert "sgml-parse\tno DTD found (no document type declaration): parsed without one" in info.stdout


def test_entity_expansion_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.errors import LimitError
    from pdi.fragments.markup import sgml

    monkeypatch.setattr(sgml, "MAX_OUTPUT", 1 << 20)
    levels = ['<!ENTITY e0 "lol">'] + [f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 9)]
    text = "<!DOCTYPE x [\n" + "\n".join(levels) + "\n]>\n<x>&e8;</x>\n"  # 3e8 characters of data
    with pytest.raises(LimitError):
        read_sgml(to_crlf(text))


def test_entities_expanding_to_a_million_elements_are_refused_before_they_are_read(tmp_path: pathlib.Path) -> None:
    """Reported: 442 octets of nested entities expanding to 7 million elements, each well within onsgmls's
    output bound, cost 42 s and 3.5 GB as Python objects (a 500 on the write API; 36 MB of index from
    ``pdi add``). The parse's element start events are counted first: past MAX_START_TAGS, as HTML and XML are
    bounded, the document is refused for element fragments, and its deposit keeps the refusal."""
    from pdi.archive import Archive, Content
    from pdi.errors import LimitError
    from pdi.fragments.markup.bounds import MAX_START_TAGS

    levels = ['<!ENTITY a0 "' + "<e>" * 10 + '">'] + [f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 6)]
    text = ("<!DOCTYPE d [\n<!ELEMENT d - - (e)*>\n<!ELEMENT e - O EMPTY>\n" + "\n".join(levels)
            + "\n]>\n<d>&a5;</d>\n")  # 10 × 10⁵ elements e, and d
    assert len(text) < 500 and MAX_START_TAGS < 1_000_001
    with pytest.raises(LimitError, match="has 1,000,001 elements"):
        read_sgml(to_crlf(text))
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series("oma.eop.gov.us")
        name = str(archive.deposit("oma.eop.gov.us", [Content(text.encode(), "sgml")]).names[0])
        with pytest.raises(LimitError, match="1,000,001 elements"):
            archive.resolve(name + "#elt=1,1")
        assert archive.resolve(name + "#char=0,9").data == b"<!DOCTYPE"
    one_element = "<!DOCTYPE d [\n<!ELEMENT d - - (e)*>\n<!ELEMENT e - O EMPTY>\n]>\n<d>" + "<e>" * 1000 + "</d>\n"
    assert len(read_sgml(to_crlf(one_element)).elements) == 1001  # under the bound: read as before


def test_document_cannot_name_the_parsers_output() -> None:
    text = '<!DOCTYPE x [<!ENTITY e SYSTEM "../esis">]>\n<x>&e;</x>\n'
    reading = read_sgml(to_crlf(text))
    assert [e.name for e in reading.elements] == ["X"] and reading.errors >= 1


def test_without_onsgmls_elt_is_unsupported_and_char_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.fragments import build_index
    from pdi.fragments.markup import _elements, sgml
    from pdi.fragments.sealed import index_kind

    monkeypatch.setattr(sgml, "onsgmls_path", lambda: None)
    _elements.cache_clear()
    data = b'<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<title>x</title>\n'
    with pytest.raises(UnsupportedError, match="onsgmls"):
        evaluate("elt", (0, 0), data, media_type="text/sgml")
    index = build_index(data, media_type="text/sgml")
    assert index is None or index_kind(index) != "markup"  # the text's table only: nothing kept that says no
    assert evaluate("char", (52, 59), data, media_type="text/sgml", index=index).data == b"<title>"


def test_real_document_without_its_dtd(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The HTML 3.2 notice where no catalog knows its DTD: parsed as onsgmls parses it without one."""
    empty = tmp_path / "catalog"
    empty.write_text("")
    monkeypatch.setenv("SGML_CATALOG_FILES", str(empty))
    path = DATA / "w3c-document-notice.html"
    names, errors = _onsgmls(path)  # onsgmls with the same (empty) catalog
    text = to_crlf(path.read_text(encoding="ascii"))
    reading = read_sgml(text)
    assert not reading.dtd_found
    assert [e.name for e in reading.elements] == names and reading.errors == errors
    # no DTD, so no omitted end tags: a <P> runs until an ancestor's end tag closes it (</BODY>)
    first_p = reading.elements[15]
    assert first_p.name == "P" and text[first_p.start : first_p.start + 3] == "<P>"
    assert text[first_p.end :].startswith("</BODY>")


@pytest.mark.parametrize("name", ["apache-301.html", "w3c-document-notice.html"])
def test_written_start_and_end_tags_are_where_the_source_has_them(name: str) -> None:
    """Each element onsgmls says was started by a written tag starts at one of the source's start tags (found
    by a regular expression, comments and declarations aside), every one of them used once; each written end
    tag ends its element."""

    path = DATA / name
    run = subprocess.run(["onsgmls", "-otagomit", str(path)], capture_output=True, text=True, errors="replace",
                         timeout=60, check=False)
    written_start: list[bool] = []
    written_end: dict[int, bool] = {}
    stack: list[int] = []
    omitted = False
    for line in run.stdout.splitlines():
        if line == "o":
            omitted = True
            continue
        if line.startswith("("):
            stack.append(len(written_start))
            written_start.append(not omitted)
        elif line.startswith(")"):
            written_end[stack.pop()] = not omitted
        if line[:1] in "()":
            omitted = False
    text = to_crlf(path.read_text(encoding="ascii"))
    source = re.sub(r"<!(?:--.*?--\s*)*>|<![^>]*>", lambda m: " " * len(m.group(0)), text, flags=re.S)
    tags = [m.start() for m in re.finditer(r"<[A-Za-z]", source)]
    elements = read_sgml(text).elements
    assert len(elements) == len(written_start)
    assert sorted(e.start for e, w in zip(elements, written_start, strict=True) if w) == tags
    for e in elements:
        if written_end[e.number]:
            assert re.fullmatch(rf"</{e.name}\s*>", text[text.rindex("</", e.start, e.end) : e.end], re.I)


TEI = DATA / "sco-deu.tei"
UTF8_SGML = "text/sgml; charset=utf-8"  # text/* is US-ASCII unless it says otherwise (RFC 2046 §4.1.2)


def _onsgmls_as_pdi_runs_it(path: pathlib.Path) -> tuple[list[str], int]:
    """onsgmls run as pdi runs it (``-R``, UTF-8 fixed, the system's catalogs, the file's own directory and
    the SGML directories the only places it may read): element names in order and the error count."""
    import os

    command = ["onsgmls", "-R", "-E0", "-D", str(path.parent)]
    for allowed in ("/etc/sgml", "/usr/share/sgml", "/usr/share/xml", "/var/lib/sgml-base"):
        command += ["-D", allowed]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SP_CHARSET_FIXED": "1", "SP_ENCODING": "utf-8",
           "SGML_CATALOG_FILES": "/etc/sgml/catalog"}
    run = subprocess.run([*command, path.name], capture_output=True, text=True, errors="replace", timeout=60,
                         check=False, cwd=path.parent, env=env)
    names = [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]
    return names, sum(":E:" in line for line in run.stderr.splitlines())


def test_tei_p3_without_its_dtd_counts_what_onsgmls_reports() -> None:
    """A real TEI P3 document (FreeDict's Scottish Gaelic-German dictionary, 2002): no catalog here knows
    ``-//TEI P3//DTD Main Document Type//EN``, so it is parsed as onsgmls parses it without its DTD."""
    text = TEI.read_text(encoding="utf-8")
    assert text.startswith('<!DOCTYPE TEI.2       PUBLIC "-//TEI P3//DTD Main Document Type//EN"')
    names, errors = _onsgmls_as_pdi_runs_it(TEI)
    assert len(names) == 1512 and names[:4] == ["TEI.2", "TEIHEADER", "FILEDESC", "TITLESTMT"]
    assert names.count("ENTRY") == text.count("<entry>") == 260 and names.count("ORTH") == text.count("<orth>")
    crlf = text.replace("\n", "\r\n")  # the file's lines end in LF alone
    reading = read_sgml(crlf)
    assert not reading.dtd_found
    assert [e.name for e in reading.elements] == names
    assert reading.errors == errors
    assert reading.first_error is not None and "TEI.2" in reading.first_error
    # every tag is written (no DTD, so none may be omitted): each element runs from its start tag to its end tag
    starts = [m.start() for m in re.finditer(r"<[A-Za-z]", crlf)]
    assert sorted(e.start for e in reading.elements) == starts
    for e in reading.elements:
        source = crlf[e.start : e.end]
        assert re.match(rf"<{re.escape(e.name)}[\s>]", source, re.I), (e.number, source[:40])
        assert re.search(rf"</{re.escape(e.name)}>\Z", source, re.I), (e.number, source[-40:])


def test_tei_p3_elt_and_char_select_their_source() -> None:
    data = TEI.read_bytes()
    crlf = data.decode("utf-8").replace("\n", "\r\n")
    names, _ = _onsgmls_as_pdi_runs_it(TEI)

    def elt(a: int, b: int) -> bytes:
        return evaluate("elt", (a, b), data, media_type=UTF8_SGML).data

    assert names[6] == "AUTHORITY" and elt(6, 6) == b"<authority>Freedict.de</authority>"
    orth = [i for i, n in enumerate(names) if n == "ORTH"]
    bible = next(i for i in orth if "Bìobull".encode() in elt(i, i))
    assert elt(bible, bible) == "<orth>Bìobull</orth>".encode()
    assert names[bible - 2 : bible + 4] == ["ENTRY", "FORM", "ORTH", "TRANS", "TR", "ENTRY"]
    entry = elt(bible - 2, bible - 2)
    assert entry.startswith(b"<entry>") and entry.endswith(b"</entry>") and b"<tr>Bibel</tr>" in entry
    assert elt(0, 0) == crlf.encode()[crlf.encode().index(b"<tei.2>") :].rstrip(b"\r\n")
    # char counts code points of the CRLF-canonical text: the ì is one, the U+2010 hyphen one
    at = crlf.index("Bìobull")
    assert evaluate("char", (at, at + 7), data, media_type=UTF8_SGML).data == "Bìobull".encode()
    hyphen = crlf.index("Di\u2010Màirt")
    assert evaluate("char", (hyphen, hyphen + 8), data, media_type=UTF8_SGML).data == "Di\u2010Màirt".encode()


def test_tei_p3_deposit_says_its_dtd_was_missing(tmp_path: pathlib.Path) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    archive = str(tmp_path / "arc")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", archive]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "loc.gov.us", "--archive", archive]).exit_code == 0
    added = runner.invoke(cli, ["add", str(TEI), "-f", "sgml", "-s", "loc.gov.us", "--archive", archive])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    names, errors = _onsgmls_as_pdi_runs_it(TEI)
    info = runner.invoke(cli, ["get", name, "--info", "--archive", archive])
    assert info.exit_code == 0, info.output
    line = next(x for x in info.stdout.splitlines() if x.startswith("sgml-parse\t"))
    assert line.startswith("sgml-parse\tno DTD found at deposit for -//TEI P3//DTD Main Document Type//EN"
                           " (neither the archive's SGML folder nor this machine's SGML catalogs had it;")
    assert "every element undefined" in line and "content ANY" in line
    assert "omitted only where an ancestor's end tag closes it" in line
    assert f"{errors:,} parser errors" in line or f"{errors} parser errors" in line
    last = len(names) - 1
    got = runner.invoke(cli, ["get", f"{name}#elt={last},{last}", "--archive", archive])
    assert got.exit_code == 0, got.output
    assert got.stdout == "<tr>Daumen</tr>"
    at = TEI.read_text(encoding="utf-8").replace("\n", "\r\n").index("Bìobull")  # its charset found at deposit
    got = runner.invoke(cli, ["get", f"{name}#char={at},{at + 7}", "--archive", archive])
    assert got.exit_code == 0, got.output
    assert got.stdout == "Bìobull"


MARKED = [
    # a TEI P3 text without its DTD: an ignored and a CDATA marked section, a processing instruction, before its <p>
    '<!DOCTYPE TEI.2 PUBLIC "-//TEI P3//DTD Main Document Type//EN">\n<TEI.2><text><body>\n'
    '<![ IGNORE [<p>ignored <![ INCLUDE [<p>nested</p>]]> still</p>]]>\n<![ CDATA [<p>not a tag</p>]]>\n'
    '<p>kept<?tei <pb>?>here</p>\n<![ INCLUDE [<p>included</p>]]>\n</body></text></TEI.2>\n',
    # a status keyword given by a parameter entity the document declares
    '<!DOCTYPE memo [<!ENTITY % draft "IGNORE"><!ENTITY % final "INCLUDE">]>\n'
    '<memo><![ %draft; [<to>draft</to>]]><![ %final; [<to>final</to>]]></memo>\n',
    # the same, after a declaration whose keyword is no ENTITY (a dotless i, U+0131: onsgmls refuses it and takes
    # the real one; Python's Unicode case rules would read it as the first declaration of draft, INCLUDE)
    '<!DOCTYPE memo [<!ENT\u0131TY % draft "INCLUDE"><!ENTITY % draft "IGNORE"><!ENTITY % final "INCLUDE">]>\n'
    '<memo><![ %draft; [<to>draft</to>]]><![ %final; [<to>final</to>]]></memo>\n',
    # HTML 2.0 with its DTD: an omitted </P> closed by the <P> after an ignored section
    '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<title>T</title>\n<p>one\n<![ IGNORE [<p>no]]><p>two\n',
]


@pytest.mark.parametrize("text", MARKED)
def test_marked_sections_and_processing_instructions_hold_no_element(text: str, tmp_path: pathlib.Path) -> None:
    """onsgmls reads no element in an IGNORE or CDATA marked section, nor in a processing instruction: each
    element is found at the start tag it read, whose name follows its <."""
    path = tmp_path / "marked.sgml"
    path.write_text(to_crlf(text), encoding="utf-8", newline="")
    names, errors = _onsgmls_as_pdi_runs_it(path)
    crlf = to_crlf(text)
    reading = read_sgml(crlf)
    assert [e.name for e in reading.elements] == names and reading.errors == errors
    hidden = [m.span() for m in re.finditer(r"<!\[ (?:IGNORE|CDATA|%draft;) \[.*?\]\]>(?!\]\]>)|<\?[^>]*>", crlf)]
    for e in reading.elements:
        assert not any(a <= e.start < b for a, b in hidden), (e.name, crlf[e.start : e.start + 30])
        if e.name not in ("HTML", "HEAD", "BODY"):  # HTML 2.0's, implied: they start where what implied them does
            assert re.match(rf"<{re.escape(e.name)}\b", crlf[e.start :], re.I), (e.name, crlf[e.start : e.start + 30])
    if "HTML 2.0" in text:
        first_p = next(e for e in reading.elements if e.name == "P")
        assert crlf[first_p.start : first_p.end] == "<p>one\r\n<![ IGNORE [<p>no]]>"  # closed by the <p> after it


def test_a_parse_past_the_bounds_is_kept_and_refused_at_once(tmp_path: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A document whose entities expand past onsgmls's output bound is deposited (it is a document, and SGML);
    its index keeps the refusal, so that each ``elt`` query says it at once instead of running onsgmls again
    (a stranger asking for it again and again would cost a parse each time), and ``char`` still reads it."""
    from pdi.archive import Archive, Content
    from pdi.errors import LimitError
    from pdi.fragments.markup import sgml

    monkeypatch.setattr(sgml, "MAX_OUTPUT", 1 << 20)
    levels = ['<!ENTITY e0 "<p>lol">'] + [f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 9)]
    text = ("<!DOCTYPE x [\n<!ELEMENT x - - (p*)>\n<!ELEMENT p - O (#PCDATA)>\n" + "\n".join(levels)
            + "\n]>\n<x>&e8;</x>\n")  # 1e8 elements
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series("oma.eop.gov.us")
        name = str(archive.deposit("oma.eop.gov.us", [Content(text.encode(), "sgml")]).names[0])
        ran: list[object] = []
        monkeypatch.setattr(sgml.subprocess, "run", lambda *a, **k: ran.append(a))
        for _ in range(3):
            with pytest.raises(LimitError, match="onsgmls wrote more than its bound"):
                archive.resolve(name + "#elt=1,1")
        assert ran == []  # the refusal came from the index kept at deposit
        assert archive.resolve(name + "#char=0,9").data == b"<!DOCTYPE"


_DECLARED_CDATA = "<!DOCTYPE d [\n<!ELEMENT d - - (s?, p*)>\n<!ELEMENT s - - CDATA>\n<!ELEMENT p - - (#PCDATA)>\n]>\n"


def test_dashes_after_a_markup_declaration_open_in_cdata_take_no_time() -> None:
    """Found by an attack, 2026-11-27: the finder read a comment declaration with ``<!(?:--.*?--\\s*)*>``, which
    tries every way of cutting a run of dashes into comments: ``<!`` and 56 dashes in an element of declared CDATA
    content (data, which the parser passes) took ``elt=`` 4 s, 64 dashes 40 s, 80 hours. In a child, so that the
    old reading fails this test by its timeout rather than hang the suite."""
    code = (
        "from pdi.fragments import evaluate\n"
        f"text = {_DECLARED_CDATA!r} + '<d><s><!' + '-' * 200 + 'x</s><p>hello</p></d>\\n'\n"
        "print(evaluate('elt', (2, 2), text.encode(), media_type='text/sgml').data.decode())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == "<p>hello</p>\n"


_COMMENT = st.text(alphabet="-a <>p\n", max_size=8).filter(lambda c: "--" not in c and not c.endswith("-"))
_DECLARATION = st.lists(st.tuples(_COMMENT, st.sampled_from(["", " ", "\n"])), max_size=3).map(
    lambda comments: "<!" + "".join(f"--{c}--{blank}" for c, blank in comments) + ">")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(_DECLARATION, st.just("<p>x</p>")), min_size=1, max_size=6))
def test_comment_declarations_between_elements_hide_nothing_and_hold_no_element(pieces: list[str]) -> None:
    """Comment declarations (ISO 8879 §10.3), with ``<p>`` and ``>`` inside their comments, between ``<p>``
    elements: each element is where it was written, and no element is found inside a comment."""
    body = "".join(pieces)
    text = _DECLARED_CDATA + "<d>" + body + "</d>\n"
    starts, at = [], len(_DECLARED_CDATA) + 3
    for piece in pieces:
        if piece == "<p>x</p>":
            starts.append(at)
        at += len(piece)
    for number, start in enumerate(starts, start=1):
        found = evaluate("elt", (number, number), text.encode(), media_type="text/sgml")
        assert found.data == b"<p>x</p>", (text, number)
        assert found.ranges[0].byte_start == start, (text, number)
