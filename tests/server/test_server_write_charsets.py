"""The charset of a deposit over HTTP: the ``Content-Type``'s is read with ``format=`` too, and one that ``charset=``
contradicts is refused, naming both.

RFC 2046 §4.1.2: the ``charset`` parameter says how the body's octets are
text, whatever the format they are deposited as. ``Café`` in ISO-8859-1 is
the octets 43 61 66 E9 (E9 is no UTF-8 on its own); in UTF-8, 43 61 66 C3 A9.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import WriteArchive

S = "library.example.us"
LATIN_1 = b"Caf\xe9\n"


Depositing = WriteArchive


@pytest.fixture
def depositing(tmp_path: Path) -> Iterator[Depositing]:
    made = Depositing(tmp_path / "archive")
    try:
        yield made
    finally:
        made.archive.close()


@pytest.mark.parametrize("query", ["&format=text", "&format=text&charset=latin1", "&charset=ISO-8859-1", ""])
def test_the_content_types_charset_is_read_with_format_given_too(depositing: Depositing, query: str) -> None:
    answer = depositing.client.post(
        f"/api/deposit?series={S}{query}", content=LATIN_1,
        headers={"Authorization": f"Bearer {depositing.token}", "Content-Type": "text/plain; charset=iso-8859-1"})
    assert answer.status_code == 201, answer.text
    got = depositing.client.get(f"/uri-res/N2R?{answer.json()['pdi']}")
    assert got.content == LATIN_1
    assert got.headers["content-type"].lower().replace(" ", "") == "text/plain;charset=iso-8859-1"


@pytest.mark.parametrize(("query", "kind"), [("&charset=utf-8", "text/plain; charset=iso-8859-1"),
                                             ("&format=text&charset=utf-8", "text/plain; charset=iso-8859-1"),
                                             ("&charset=iso-8859-1", "text/html; charset=utf-8")])
def test_a_charset_the_content_type_contradicts_is_400_naming_both(depositing: Depositing, query: str,
                                                                  kind: str) -> None:
    before = depositing.snapshot()
    answer = depositing.client.post(f"/api/deposit?series={S}{query}", content=b"Cafe\n",
                                    headers={"Authorization": f"Bearer {depositing.token}", "Content-Type": kind})
    assert answer.status_code == 400, answer.text
    given, header = query.rsplit("=", 1)[1], kind.rsplit("=", 1)[1]
    assert answer.json()["detail"].startswith(f"charset={given} and the Content-Type's charset {header} name two"
                                              " charsets"), answer.text
    assert depositing.snapshot() == before


def test_a_batch_items_manifest_charset_the_parts_content_type_contradicts_is_400_naming_the_item(
        depositing: Depositing) -> None:
    before = depositing.snapshot()
    answer = depositing.client.post(
        f"/api/batch?series={S}", data={"manifest": '[{}, {"charset": "utf-8"}]'},
        files=[("item", ("a.txt", b"Cafe\n", "text/plain")),
               ("item", ("b.txt", LATIN_1, "text/plain; charset=iso-8859-1"))],
        headers={"Authorization": f"Bearer {depositing.token}"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"].startswith("item 1: the manifest's charset utf-8 and the Content-Type's charset"
                                              " iso-8859-1 name"
                                              " two charsets"), answer.text
    assert depositing.snapshot() == before


@pytest.mark.parametrize("charset", ["x-no-such", "zlib_codec"])
def test_a_batch_part_whose_content_type_names_no_charset_is_refused_naming_the_part_and_the_charset(
        depositing: Depositing, charset: str) -> None:
    before = depositing.snapshot(files=True)
    answer = depositing.client.post(
        f"/api/batch?series={S}",
        files=[("item", ("a.txt", b"Cafe\n", "text/plain")),
               ("item", ("b.txt", b"Cafe\n", f"text/plain; charset={charset}"))],
        headers={"Authorization": f"Bearer {depositing.token}"})
    assert 400 <= answer.status_code < 500, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("item 1") and charset in detail and "b.txt" in detail, detail
    assert depositing.snapshot(files=True) == before


@pytest.mark.parametrize("kind", ["application/xml", "image/svg+xml"])
def test_xml_whose_octets_are_not_in_its_encoding_is_400_naming_the_octet_as_a_texts_is(depositing: Depositing,
                                                                                       kind: str) -> None:
    # XML 1.0 §4.3.3: no byte-order mark and no declaration is UTF-8, and E9 before "<" is no UTF-8 (RFC 3629 §4)
    before = depositing.snapshot(files=True)
    bearer = {"Authorization": f"Bearer {depositing.token}"}
    xml = depositing.client.post(f"/api/deposit?series={S}", content=b"<a>Caf\xe9</a>",
                                 headers={**bearer, "Content-Type": kind})
    text = depositing.client.post(f"/api/deposit?series={S}", content=LATIN_1,
                                  headers={**bearer, "Content-Type": "text/plain; charset=utf-8"})
    assert xml.status_code == text.status_code == 400, xml.text
    assert xml.json()["title"] == text.json()["title"] == "syntax error"
    assert xml.json()["detail"].startswith("the request body: the XML is not valid UTF-8 at octet 6: "), xml.text
    assert depositing.snapshot(files=True) == before
    declared = b'<?xml version="1.0" encoding="ISO-8859-1"?><a>Caf\xe9</a>'
    kept = depositing.client.post(f"/api/deposit?series={S}", content=declared,
                                  headers={**bearer, "Content-Type": kind})
    assert kept.status_code == 201, kept.text
    assert depositing.client.get(f"/uri-res/N2R?{kept.json()['pdi']}").content == declared
