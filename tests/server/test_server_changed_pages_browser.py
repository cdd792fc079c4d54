"""Pages this session changed that no other Chromium test opens, opened in Chromium and shot at 1100 and 375 px.

* The catalogue pages of a day of 1,235 documents (2026-11-22: 1,234 texts and one capture's, worked out by hand):
  their counts grouped by thousands (``1,235 documents``), as the rest of the app prints numbers.
* The viewer's ``400`` for a capture's name typed into ``/view?pdi=`` as it is: the query reads its id's ``%2F``
  and ``%2E`` (PDI-GRAMMAR.md's encapsulated URL) as ``/`` and ``.``; the page says to write ``%`` as ``%25`` and
  links the name itself.
"""

from __future__ import annotations

import base64
import datetime
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import serving
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive, Content
from pdi.capture.browser import Pipe, devtools

S = "library.example.us"
MANY = 1234


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    root: Path = tmp_path_factory.mktemp("changed-pages")
    day = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC)
    with Archive.init(root / "archive", clock=lambda: day) as archive:
        archive.add_series(S)
        archive.deposit_batch(S, [([Content(b"minutes %d\n" % i, "text")], None) for i in range(MANY)])
        capture = str(archive.add(S, b"a page\n", format="text", foreign_id="https://example.org/a.txt"))
    with serving(root / "archive") as (_, port):
        yield port, capture


def _shown(pipe: Pipe, url: str, width: int, file: str) -> str:
    """The page's main text, in a tab ``width`` pixels wide, after its screenshot is saved as ``file``."""
    session = open_page(pipe, url)
    pipe.call("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}, session,
              time.monotonic() + 30)
    found = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('main').innerText",
                                           "returnByValue": True}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / file).write_bytes(base64.b64decode(
        pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))
    return str(found["result"]["value"])


@pytest.mark.parametrize("width", [1100, 375])
@pytest.mark.parametrize(("page", "path", "said"), [
    ("series", f"/series/{S}", "1,235 documents, minted on"),
    ("month", f"/series/{S}/2026/11", "1,235 documents minted this month."),
    ("day", f"/series/{S}/2026/11/22", "1,235 documents minted on this day (GMT); this page shows the first 100."),
])
def test_a_catalogue_page_shows_its_count_grouped(
    served: tuple[int, str], page: str, path: str, said: str, width: int
) -> None:
    port, _ = served
    with devtools() as pipe:
        text = _shown(pipe, f"http://127.0.0.1:{port}{path}", width, f"counts-grouped-{page}-{width}.png")
    assert said in " ".join(text.split()), text[:400]


@pytest.mark.parametrize("width", [1100, 375])
def test_a_captures_name_typed_as_it_is_says_to_write_percent_as_25(served: tuple[int, str], width: int) -> None:
    port, capture = served
    with devtools() as pipe:
        text = _shown(pipe, f"http://127.0.0.1:{port}/view?pdi={capture}", width, f"decoded-escapes-400-{width}.png")
    assert "%25" in text and "Resolve" in text, json.dumps(text[:600])
