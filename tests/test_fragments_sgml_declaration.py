"""elt on SGML that carries its own SGML declaration (ISO 8879 §13).

pdi finds the tags onsgmls reports by the reference concrete syntax's
delimiters (``<``, ``</``, ``>``) and marked sections by its reserved names
(:mod:`pdi.fragments.markup.sgml`). A declaration that keeps them is read as
the document is written; one that changes them (§13.4.6 delimiters, §13.4.7
reserved names) is refused, naming what it changes, where its elements were
placed nowhere, or in a section the parser ignores. The element names are
onsgmls's, run here.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from pdi.errors import UnsupportedError
from pdi.fragments import evaluate
from pdi.fragments.markup.sgml import read_sgml

#: DocBook 3.1's SGML declaration (Debian's docbook package, /usr/share/sgml/docbook/dtd/3.1/docbook.dcl), its
#: comments left out: the reference concrete syntax's delimiters and names (DELIM GENERAL SGMLREF, NAMES SGMLREF).
DECLARATION = """<!SGML "ISO 8879:1986"
CHARSET BASESET "ISO 646:1983//CHARSET International Reference Version (IRV)//ESC 2/5 4/0"
 DESCSET 0 9 UNUSED 9 2 9 11 2 UNUSED 13 1 13 14 18 UNUSED 32 95 32 127 1 UNUSED
 BASESET "ISO Registration Number 100//CHARSET ECMA-94 Right Part of Latin Alphabet Nr. 1//ESC 2/13 4/1"
 DESCSET 128 32 UNUSED 160 96 32
CAPACITY SGMLREF TOTALCAP 99000000 ATTCAP 1000000 ATTCHCAP 1000000 AVGRPCAP 1000000 ELEMCAP 1000000
 ENTCAP 1000000 ENTCHCAP 1000000 GRPCAP 1000000 IDCAP 32000000 IDREFCAP 32000000
SCOPE DOCUMENT
SYNTAX SHUNCHAR CONTROLS 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153
 154 155 156 157 158 159
 BASESET "ISO 646:1983//CHARSET International Reference Version (IRV)//ESC 2/5 4/0" DESCSET 0 128 0
 FUNCTION RE 13 RS 10 SPACE 32 TAB SEPCHAR 9
 NAMING LCNMSTRT "" UCNMSTRT "" LCNMCHAR ".-_" UCNMCHAR ".-_" NAMECASE GENERAL YES ENTITY NO
 DELIM GENERAL SGMLREF -- delimiters -- SHORTREF SGMLREF
 NAMES SGMLREF -- names --
 QUANTITY SGMLREF ATTCNT 256 GRPCNT 253 GRPGTCNT 253 LITLEN 8092 NAMELEN 44 TAGLVL 100
FEATURES MINIMIZE DATATAG NO OMITTAG NO RANK NO SHORTTAG YES
 LINK SIMPLE NO IMPLICIT NO EXPLICIT NO OTHER CONCUR NO SUBDOC NO FORMAL YES
APPINFO NONE>
"""
DOCTYPE = "<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>]>\r\n"


def declared(*, delimiters: str = "", names: str = "") -> str:
    return DECLARATION.replace("-- delimiters --", delimiters).replace("-- names --", names).replace("\n", "\r\n")


def onsgmls(text: str) -> tuple[list[str], str]:
    """The element names onsgmls reports, in order, and its messages: the oracle."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "document.sgml"
        path.write_bytes(text.encode())
        run = subprocess.run(["onsgmls", str(path)], capture_output=True, text=True, timeout=60, check=False)
    return [line[1:] for line in run.stdout.splitlines() if line.startswith("(")], run.stderr


@pytest.mark.parametrize("delimiters", ["", 'HCRO "&#38;#x"'])
def test_a_declaration_that_keeps_the_tags_delimiters_is_read_as_written(delimiters: str) -> None:
    head = declared(delimiters=delimiters) + DOCTYPE
    text = head + "<a>x<!-- c --><b>y</b> <![ IGNORE [<b>n</b>]]><b>z</b></a>"
    names, _ = onsgmls(text)
    assert names == ["A", "B", "B"]
    elements = read_sgml(text).elements
    assert [(e.name, text[e.start : e.end]) for e in elements] == [
        ("A", text[len(head) :]), ("B", "<b>y</b>"), ("B", "<b>z</b>")
    ]


def test_a_declaration_that_changes_the_tags_delimiters_is_refused_naming_them() -> None:
    text = declared(delimiters='STAGO "{" ETAGO "{/" TAGC "}"') + DOCTYPE + "{a}x{b}y{/b}{/a}"
    names, messages = onsgmls(text)
    assert names == ["A", "B"] and ":E:" not in messages  # a valid document, its tags in braces
    with pytest.raises(UnsupportedError, match="SGML declaration changes the delimiters STAGO, ETAGO, TAGC"):
        read_sgml(text)
    with pytest.raises(UnsupportedError, match=r"#char=, #line=\) select its text"):
        evaluate("elt", (0, 0), text.encode(), media_type="text/sgml")


def test_a_declaration_that_renames_a_marked_section_status_is_refused_naming_it() -> None:
    text = declared(names="IGNORE SKIP") + DOCTYPE + "<a>x<![ SKIP [<b>n</b>]]><b>z</b></a>"
    names, messages = onsgmls(text)
    assert names == ["A", "B"] and ":E:" not in messages  # the first <b> is in a section the parser ignores
    with pytest.raises(UnsupportedError, match="SGML declaration changes the reserved names IGNORE"):
        read_sgml(text)


def test_a_declaration_keyword_spelled_with_a_long_s_is_no_sgml_declaration() -> None:
    """ISO 8879 §9.3: ``SGML`` is a reserved name, ASCII letters in any case. ``<!ſGML`` (U+017F LATIN SMALL LETTER
    LONG S) is none, and onsgmls reads the document under the reference concrete syntax (its ``SKIP`` no reserved
    name: both ``B`` are elements). Found by a hunt: Python's ``str.upper`` makes ``ſ`` an ``S``, and the document
    was refused for a declaration that renames IGNORE."""
    text = declared(names="IGNORE SKIP").replace("<!SGML", "<!\u017fGML", 1) + DOCTYPE + (
        "<a>x<![ SKIP [<b>n</b>]]><b>z</b></a>")
    names, _messages = onsgmls(text)
    assert names == ["A", "B", "B"]
    reading = read_sgml(text)
    assert [(e.name, text[e.start : e.end]) for e in reading.elements] == [
        ("A", "<a>x<![ SKIP [<b>n</b>]]><b>z</b></a>"), ("B", "<b>n</b>"), ("B", "<b>z</b>")]


def test_a_doctype_keyword_spelled_with_a_dotless_i_names_no_public_identifier() -> None:
    """ISO 8879 §11.1: ``PUBLIC`` is a reserved name, ASCII letters in any case; ``PUBLıC`` (U+0131 LATIN SMALL
    LETTER DOTLESS I, which Python's Unicode case folding matches with ``I``) is none, and onsgmls says so. So the
    document names no public identifier pdi should look a DTD up by, and ``pdi`` names it by its type's name."""
    from pdi.fragments.markup.sgml import declared_dtd

    text = '<!DOCTYPE memo PUBL\u0131C "-//ACME//DTD Memo//EN"><memo>x</memo>'
    _names, messages = onsgmls(text)
    assert ":E:" in messages, messages
    assert declared_dtd(text) == "DOCTYPE memo"
    assert declared_dtd(text.replace("PUBL\u0131C", "public")) == "-//ACME//DTD Memo//EN"
