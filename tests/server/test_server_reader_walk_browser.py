"""Pages a new reader's walk through the app found wanting, opened in Chromium and shot at 1100 and 390 px.

* A withdrawn name's tombstone whose reason ends a sentence (``Deposited in error.``): its citation has one full
  stop there, not two (``…copy.. http://``).
* An embargoed version and a private series' document read by a browser signed in with a token (the ``pdi-token``
  cookie, as ``/signin`` sets it): each page says *Not open to everyone*, and why.
* An embargoed name's ``403`` to a browser without a token: the embargo's end written as the page writes times, not
  as the catalog keeps them (``2099-01-01T00:00:00.000000Z``).
"""

from __future__ import annotations

import base64
import datetime
import json
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import serving
from test_server_pages_screenshots import SHOTS

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

S = "records.example.us"
CLOSED = "closed.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("reader-walk")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        archive.add_series(S)
        archive.add_series(CLOSED)
        archive.set_series_access(CLOSED, "private")
        names = {
            "withdrawn": str(archive.add(S, b"a duplicate\n", format="text")),
            "sealed": str(archive.add(S, b"Sealed until the trial ends.\n", format="text")),
            "closed": str(archive.add(CLOSED, b"A sealed court minute.\n", format="text")),
            "whole": str(archive.add(S, b"A sealed file, every version of it.\n", format="text")),
        }
        archive.withdraw(names["withdrawn"], "Deposited in error: a duplicate of the court's own copy.")
        archive.embargo(names["sealed"], "2099-01-01")
        archive.embargo(names["whole"].rsplit(".", 2)[0], "2099-01-01")  # the document, by its generic name
        _, token = archive.add_token("reader", role="read")
    with serving(root / "archive") as (_, port):
        yield port, token, names


#: How many lines the page's times are drawn on, each (a time in a sentence broke at its date's hyphen on a phone).
TIME_LINES = "[...document.querySelectorAll('main p time')].map((t) => t.getClientRects().length)"


def _shown(pipe: Pipe, url: str, width: int, file: str, token: str | None = None, check: str = "",
           seconds: float = 60) -> str:
    """The text of ``url``'s ``<main>`` in a tab ``width`` pixels wide (signed in with ``token``, as the cookie
    ``/signin`` sets), after its screenshot is saved as ``file``; then ``check``'s value, if given, as JSON. Within
    ``seconds`` (a bound on a hang, not a measure of speed)."""
    deadline = time.monotonic() + seconds
    session = new_tab(pipe, "Page", "Network", deadline=deadline)
    if token is not None:
        pipe.call("Network.setCookie", {"name": "pdi-token", "value": token, "url": url, "httpOnly": True,
                                        "sameSite": "Strict"}, session, deadline)
    pipe.call("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, session, deadline)
    navigate_and_wait_for_load(pipe, session, url, deadline)
    expression = f"JSON.stringify({check})" if check else "document.querySelector('main').innerText"
    found = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session, deadline)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / file).write_bytes(base64.b64decode(
        pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"]))
    return " ".join(str(found["result"]["value"]).split())


def _view(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"


@pytest.mark.parametrize("width", [1100, 390])
def test_a_tombstones_citation_ends_its_reason_with_one_full_stop(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        text = _shown(pipe, _view(port, names["withdrawn"]), width, f"walk-tombstone-{width}.png")
    assert "Withdrawn 2026-11-30: Deposited in error: a duplicate of the court's own copy. http://" in text, text
    assert "copy.." not in text


@pytest.mark.parametrize("width", [1100, 390])
@pytest.mark.parametrize(("which", "said"), [
    ("sealed", "Not open to everyone: this version is under embargo until 1 January 2099."),
    ("closed", f"Not open to everyone: its series, {CLOSED}, is private."),
])
def test_a_signed_in_reader_is_told_a_name_is_not_open_to_everyone(
    served: tuple[int, str, dict[str, str]], which: str, said: str, width: int
) -> None:
    port, token, names = served
    with devtools() as pipe:
        text = _shown(pipe, _view(port, names[which]), width, f"walk-not-open-{which}-{width}.png", token)
    assert said in text and "a reader without one is refused it" in text, text[:600]


@pytest.mark.parametrize("width", [1100, 390])
def test_an_embargoed_names_refusal_writes_its_end_as_pages_write_times(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        text = _shown(pipe, _view(port, names["sealed"]), width, f"walk-embargoed-403-{width}.png")
    assert "Under embargo until 1 January 2099" in text and "embargoed until 2099-01-01 00:00:00 UTC;" in text, text
    assert "T00:00:00" not in text
    with devtools() as pipe:  # each time on one line: 2099-01-01 00:00:00 UTC, never 2099- above 01-01
        lines = json.loads(_shown(pipe, _view(port, names["sealed"]), width, f"walk-embargoed-403-{width}.png",
                                  check=TIME_LINES))
    assert lines and all(n == 1 for n in lines), lines


@pytest.mark.parametrize("width", [1100, 390])
def test_a_document_page_marks_its_version_under_embargo_to_a_signed_in_reader(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, token, names = served
    with devtools() as pipe:
        text = _shown(pipe, _view(port, names["sealed"].rsplit(".", 2)[0]), width,
                      f"walk-document-sealed-version-{width}.png", token)
    assert ("under embargo until 1 January 2099: not open to a reader without a token until then") in text, text


@pytest.mark.parametrize(("which", "lead"), [
    ("sealed", "This version is under embargo until"),  # the version asked for is under its own embargo
    ("whole", "This document is under embargo until"),  # the document asked for by its generic name
])
def test_an_embargo_refusal_says_what_is_under_embargo(
    served: tuple[int, str, dict[str, str]], which: str, lead: str
) -> None:
    port, _, names = served
    name = names[which] if which == "sealed" else names[which].rsplit(".", 2)[0]
    with devtools() as pipe:
        text = _shown(pipe, _view(port, name), 1100, f"walk-embargoed-403-{which}-1100.png")
    assert lead in text, text
