"""The reader's pages' remaining rough edges, opened in Chromium and shot at 1100 and 390 px.

* A document's Versions list and a tombstone show each format as the media type its token names
  (``image/svg+xml``), not as a name spells the token (``svg%2Bxml``), as a day's table does; the name itself is
  shown exactly as it is.

Expected values are worked out here: the media types from PDI-GRAMMAR.md's decision 6 (``text`` is text/plain,
``svg%2Bxml`` the media type image/svg+xml, ``utf-16`` text/plain in UTF-16), the names as deposited.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import serving
from test_server_reader_walk_browser import _shown

from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from support.tiff import tiff_chain

S = "records.example.us"
CLOSED = "closed.example.us"
SECRET = "secret.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("remaining-edges")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        for series in (S, CLOSED, SECRET):
            archive.add_series(series)
        archive.set_series_access(CLOSED, "private")
        archive.set_series_access(SECRET, "hidden")
        drawing = archive.add(S, SVG, format="svg%2Bxml", force=True)
        generic = str(drawing).rsplit(".", 2)[0]
        second = archive.add_version(generic, [Content(SVG, "svg%2Bxml"), Content("A drawing.\n".encode("utf-16"),
                                                                                  "utf-16")], force=True)
        names = {
            "drawing": generic, "v1": str(drawing), "v2": str(second[0]), "v2-text": str(second[1]),
            "gone": str(archive.add(S, SVG, format="svg%2Bxml", force=True)),
            "pages": str(archive.add(S, tiff_chain(5_010), format="tiff")),
            "text": str(archive.add(S, b"Plain words.\n", format="text")),
            "closed": str(archive.add(CLOSED, b"A sealed court minute.\n", format="text")),
            "closed-sealed": str(archive.add(CLOSED, b"Sealed twice over.\n", format="text")),
            "secret": str(archive.add(SECRET, b"Not even its series is told.\n", format="text")),
        }
        archive.withdraw(names["gone"], "Deposited in error.")
        archive.embargo(names["closed-sealed"].rsplit(".", 2)[0], "2099-01-01")
        _, token = archive.add_token("reader", role="read")
    with serving(root / "archive") as (_, port):
        yield port, token, names


def _view(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"


# --- 1. formats as media types -----------------------------------------------------------------------------------

#: Each row of the Versions list: its number, and each format's link text, tooltip and the name beside it.
VERSIONS = ("[...document.querySelectorAll('#versions tbody tr')].map((r) => [r.cells[0].innerText,"
            " [...r.cells[2].querySelectorAll('li')].map((li) => [li.querySelector('a').innerText,"
            " li.querySelector('a').title, li.querySelector('code.name').innerText])])")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_documents_versions_list_shows_formats_as_media_types(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        rows = json.loads(_shown(pipe, _view(port, names["drawing"]), width, f"remaining-versions-{width}.png",
                                 check=VERSIONS))
    assert rows == [
        ["1", [["image/svg+xml", f"format svg%2Bxml: {names['v1']}", names["v1"]]]],
        ["2", [["image/svg+xml", f"format svg%2Bxml: {names['v2']}", names["v2"]],
               ["text/plain utf-16", f"format utf-16: {names['v2-text']}", names["v2-text"]]]],
    ], rows
    assert names["v1"].endswith(".svg%2Bxml.1")  # the name as deposited, shown whole beside its media type


#: The tombstone's table: each row's format cell, its tooltip; and the name as the tombstone states it.
TOMBSTONE = ("{rows: [...document.querySelectorAll('#withdrawn tbody tr')].map((r) => [r.cells[1].innerText,"
             " r.cells[1].title]), named: document.querySelector('dl.tombstone dd code').innerText}")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_tombstone_shows_its_format_as_a_media_type(served: tuple[int, str, dict[str, str]], width: int) -> None:
    port, _, names = served
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, names["gone"]), width, f"remaining-tombstone-{width}.png",
                                 check=TOMBSTONE))
    assert seen == {"rows": [["image/svg+xml", "format svg%2Bxml"]], "named": names["gone"]}, seen
