"""An SGML document's element index is never larger than the bound of its document's size, by construction.

An SGML declaration may raise NAMELEN (ISO 8879 §13.5.3; the reference concrete syntax's is 8), so an honest
document may name its elements with tens of thousands of characters, and a DTD may imply elements the document
never writes. The index made of it is kept whole when it fits
(:func:`~pdi.fragments.markup.bounds.max_sgml_index_octets` of the document's size, and a name of at most
:data:`~pdi.fragments.markup.bounds.MAX_ELEMENT_NAME_OCTETS` octets), else the refusal is kept in its place, said
by each query: never an index that a mirror or a bag's import then cannot read. The names and their lengths are
onsgmls's (:func:`onsgmls`), run by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pdi.errors import LimitError
from pdi.fragments import evaluate
from pdi.fragments.markup import bounds
from pdi.fragments.markup.index import ElementIndex
from pdi.fragments.markup.sgml import SgmlCatalog, onsgmls_path
from test_fragments_sgml_declaration import DECLARATION, onsgmls

assert onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"


def long_named(length: int) -> str:
    """A valid document (DocBook's declaration, NAMELEN raised to 99,999,999) whose second element's name is
    ``length`` characters long."""
    name = "E" + "X" * (length - 1)
    declaration = DECLARATION.replace("NAMELEN 44", "NAMELEN 99999999").replace("\n", "\r\n")
    return (declaration + f"<!DOCTYPE a [<!ELEMENT a - - ({name})*><!ELEMENT {name} - - (#PCDATA)>]>\r\n"
            f"<a><{name}>hi</{name}></a>")


def test_a_name_namelen_allows_and_the_index_layout_holds_is_kept_and_read_back() -> None:
    text = long_named(60_000)
    names, messages = onsgmls(text)
    assert [len(n) for n in names] == [1, 60_000] and ":E:" not in messages, messages
    index = ElementIndex.build(text.encode(), "text/sgml", "utf-8")
    made = index.to_bytes()
    assert len(made) <= bounds.max_sgml_index_octets(len(text))
    again = ElementIndex.from_bytes(made)
    assert again.failure is None and [e.name for e in again] == names
    long_element = text[text.index("<EXXX") : text.rindex("</a>")]
    assert evaluate("elt", (1, 1), text.encode(), media_type="text/sgml", charset="utf-8",
                    index=made).data == long_element.encode()


def test_a_name_longer_than_the_index_keeps_is_refused_when_the_index_is_made_and_said_by_each_query() -> None:
    text = long_named(70_000)
    names, messages = onsgmls(text)
    assert [len(n) for n in names] == [1, 70_000] and ":E:" not in messages, messages  # valid, as NAMELEN says
    index = ElementIndex.build(text.encode(), "text/sgml", "utf-8")
    made = index.to_bytes()  # (an index of this refusal: small, whatever the names)
    assert len(made) < 4096
    kept = ElementIndex.from_bytes(made)
    assert len(kept) == 0
    with pytest.raises(LimitError, match="this SGML has an element name of 70,000 octets, more than the 65,534 an"
                                         r" element index keeps \(its SGML declaration raises NAMELEN\); char and line"):
        kept.raise_failure()
    with pytest.raises(LimitError, match="element name of 70,000 octets"):
        evaluate("elt", (1, 1), text.encode(), media_type="text/sgml", charset="utf-8", index=made)


def test_an_index_larger_than_its_documents_bound_is_refused_when_it_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names a DTD implies are not written in the document (an omitted start tag, ISO 8879 §7.3.1.1): three of
    20,000 characters each, from the archive's own catalog, implied by a document of a few hundred octets. With the
    bound's allowance for what is not the document's lowered to 40,000 octets (the 8 MiB it is would take a DTD of
    megabytes here), the index of 60,000 octets of names is refused, and the refusal says the bound."""
    names = [letter + "X" * 19_999 for letter in "BCD"]
    dtd = (f"<!ELEMENT a - O ({names[0]})>" + "".join(
        f"<!ELEMENT {name} O O ({following})>" for name, following in zip(names, [*names[1:], "#PCDATA"], strict=True)))
    folder = tmp_path / "sgml"
    folder.mkdir()
    (folder / "long.dtd").write_text(dtd, encoding="ascii")
    (folder / "catalog").write_text('PUBLIC "-//ACME//DTD Long//EN" "long.dtd"\n', encoding="ascii")
    declaration = DECLARATION.replace("NAMELEN 44", "NAMELEN 99999999").replace("OMITTAG NO", "OMITTAG YES")
    text = (declaration + '<!DOCTYPE a PUBLIC "-//ACME//DTD Long//EN">\n<a>words\n').replace("\n", "\r\n")
    document = tmp_path / "document.sgml"
    document.write_text(text, encoding="ascii")
    import subprocess

    run = subprocess.run(["onsgmls", "-c", str(folder / "catalog"), str(document)], capture_output=True, text=True,
                         timeout=60, check=False)
    reported = [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]
    assert reported == ["A", *names] and ":E:" not in run.stderr, run.stderr  # three implied, none written
    monkeypatch.setattr(bounds, "SGML_INDEX_BASE", 40_000)
    kept = ElementIndex.build(text.encode(), "text/sgml", "utf-8", sgml_catalog=SgmlCatalog(str(folder)))
    assert len(kept) == 0 and len(kept.to_bytes()) <= bounds.max_sgml_index_octets(len(text))
    with pytest.raises(LimitError, match=f"more than the {40_000 + len(text):,} pdi keeps of a document of"
                                         f" {len(text):,} octets"):
        kept.raise_failure()
    monkeypatch.setattr(bounds, "SGML_INDEX_BASE", 8 << 20)  # the bound pdi keeps: the same parse is kept whole
    whole = ElementIndex.build(text.encode(), "text/sgml", "utf-8", sgml_catalog=SgmlCatalog(str(folder)))
    assert whole.failure is None and [e.name for e in whole] == reported
