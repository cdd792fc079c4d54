"""The replay origin's own small pages (a capture not held, a withdrawn one, a private one), light and dark, in Chromium.

Shown in the resolver's frame, such a page must follow the reader's colour scheme as the resolver's pages do
(CSS Media Queries 5 §11.5 ``prefers-color-scheme``): dark, its text legible at WCAG 2.2's 4.5:1 (relative
luminance and contrast ratio as WCAG defines them, :func:`test_server_pages_screenshots.luminance`).
A browser asking for a page (``Accept: text/html``) is answered with a page; a program, with problem JSON.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse

import httpx
import pytest
from server_helpers import Served
from starlette.responses import Response
from test_server_pages_screenshots import SHOTS, luminance

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.capture.browser import Pipe, devtools
from pdi.errors import AccessError, WithdrawnError
from pdi.server.replay.origin import not_held, not_replayed

#: [the body's background, the body's text, the hint's text (.why)] as the page draws them.
COLOURS = "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color," \
          " getComputedStyle(document.querySelector('.why')).color]"


def _not_held_url(served: Served) -> str:
    # the day's serial 999 is no capture the served archive holds
    name = served.capture.rsplit("/", 1)[0] + "/999.related.1"
    return f"{served.replay_url}/replay/{urllib.parse.quote(name, safe='')}/index.html"


def _colours(pipe: Pipe, session: str) -> list[str]:
    answer = pipe.call("Runtime.evaluate", {"expression": COLOURS, "returnByValue": True}, session, time.monotonic() + 30)
    colours: list[str] = answer["result"]["value"]
    return colours


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_a_capture_not_held_is_a_page_to_a_browser_and_problem_json_to_a_program(served: Served) -> None:
    page = httpx.get(_not_held_url(served), headers={"Accept": "text/html,*/*;q=0.8"}, timeout=30)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<h1>No page is held under this name</h1>" in page.text
    assert "content-security-policy" in page.headers  # the replay origin's guard, as on every answer
    program = httpx.get(_not_held_url(served), timeout=30)
    assert program.status_code == 404 and program.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize("which", ["not-held", "private", "refused"])
def test_the_replay_origins_pages_are_dark_for_a_dark_scheme(served: Served, which: str) -> None:
    if which == "not-held":  # as the replay origin answers a frame (a tab opened at it is sent to the viewer)
        url = _as_fetched(_not_held_url(served))
    elif which == "refused":  # a name that is not one (month 13): a 400, as a page (Chromium asks for text/html)
        url = _replay(served, "urn:pdi://archives.gov.us/2026/13/40/x.related.1", "index.html")
    else:  # the refusal's octets as the replay origin sends them (test_server_signin checks it is sent)
        octets = bytes(not_replayed(AccessError("urn:pdi://closed.example.us/2026/11/22/1.related.1 is private")).body)
        url = "data:text/html;base64," + base64.b64encode(octets).decode()
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", deadline=deadline)
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 800, "height": 500, "deviceScaleFactor": 1,
                                                         "mobile": False}, session, deadline)
        navigate_and_wait_for_load(pipe, session, url, deadline)
        light = _colours(pipe, session)
        # getComputedStyle recomputes the style under the emulated scheme (no frame awaited: a script-less sandboxed
        # page of the replay origin may have its animation frames' promise collected)
        pipe.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
                  session, deadline)
        darkened = _colours(pipe, session)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"replay-{which}-dark.png").write_bytes(base64.b64decode(shot["data"]))
    assert luminance(light[0]) > 0.9, f"light: {light}"
    assert luminance(darkened[0]) < 0.05, f"{which} in a dark scheme: its background {darkened[0]} is not dark"
    for colours in (light, darkened):
        assert _contrast(colours[0], colours[1]) >= 4.5, colours
        assert _contrast(colours[0], colours[2]) >= 4.5, colours


def _replay(served: Served, name: str, file: str) -> str:
    return f"{served.replay_url}/replay/{urllib.parse.quote(name, safe='')}/{file}"


@pytest.mark.parametrize("which", ["not-a-name", "no-such-part", "no-such-path"])
def test_every_refusal_of_the_replay_origin_is_a_page_to_a_browser(served: Served, which: str) -> None:
    # RFC 9110 §12.5.1: a browser's Accept asks for text/html; a page shown in the resolver's frame must not be JSON
    url, status = {
        "not-a-name": (_replay(served, "urn:pdi://archives.gov.us/2026/13/40/x.related.1", "index.html"), 400),
        "no-such-part": (_replay(served, served.capture, "no-such-part.html"), 404),
        "no-such-path": (f"{served.replay_url}/elsewhere/index.html", 404),
    }[which]
    page = httpx.get(url, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, timeout=30)
    assert page.status_code == status, page.text
    assert page.headers["content-type"].startswith("text/html"), page.headers
    assert page.text.startswith("<!DOCTYPE html>") and "<h1>" in page.text and "class=\"why\"" in page.text
    assert "content-security-policy" in page.headers
    program = httpx.get(url, timeout=30)
    assert program.status_code == status
    assert program.headers["content-type"] == "application/problem+json"


def _varies_by(answer: httpx.Response) -> set[str]:
    return {field.strip().lower() for field in answer.headers.get("vary", "").split(",") if field.strip()}


@pytest.mark.parametrize("which", ["not-held", "not-a-name", "no-such-part", "no-such-path"])
def test_a_refusal_chosen_by_accept_says_it_varies_by_accept(served: Served, which: str) -> None:
    """RFC 9110 §12.5.5: an answer chosen by a request field names it in ``Vary``, so that no cache gives the problem
    JSON a program got to a browser's frame (a 404 is cacheable by default, RFC 9111 §4.2.2), nor a page to a
    program. The page or the JSON, each says it was chosen by ``Accept``."""
    url = {
        "not-held": _not_held_url(served),
        "not-a-name": _replay(served, "urn:pdi://archives.gov.us/2026/13/40/x.related.1", "index.html"),
        "no-such-part": _replay(served, served.capture, "no-such-part.html"),
        "no-such-path": f"{served.replay_url}/elsewhere/index.html",
    }[which]
    page = httpx.get(url, headers={"Accept": "text/html,*/*;q=0.8"}, timeout=30)
    program = httpx.get(url, headers={"Accept": "application/json"}, timeout=30)
    assert page.headers["content-type"].startswith("text/html")
    assert program.headers["content-type"] == "application/problem+json"
    for answer in (page, program):
        assert "accept" in _varies_by(answer), (answer.headers["content-type"], answer.headers.get("vary"))
        # the replay origin's own (its answers differ by fetch metadata) kept beside it
        assert {"sec-fetch-dest", "sec-fetch-site"} <= _varies_by(answer)


#: A small page's tab and heading, as Chromium shows them.
TAB_AND_HEADING = ("JSON.stringify([document.title, document.querySelector('h1').textContent,"
                   " document.documentElement.clientWidth])")


def _tab_and_heading(pipe: Pipe, url: str, width: int, shot: str) -> list[str]:
    deadline = time.monotonic() + 60
    session = new_tab(pipe, "Page", deadline=deadline)
    pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 500, "deviceScaleFactor": 1,
                                                     "mobile": width < 600}, session, deadline)
    navigate_and_wait_for_load(pipe, session, url, deadline)
    seen = pipe.call("Runtime.evaluate", {"expression": TAB_AND_HEADING, "returnByValue": True}, session, deadline)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / shot).write_bytes(base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session,
                                                          deadline)["data"]))
    *said, laid_out = json.loads(seen["result"]["value"])
    assert laid_out == width, f"{shot}: laid out {laid_out} px wide in a window of {width}"  # not a desktop's, small
    return said


def _as_served(answer: Response) -> str:
    return "data:text/html;base64," + base64.b64encode(bytes(answer.body)).decode()


def _as_fetched(url: str) -> str:
    """The page the replay origin answers at ``url`` to the viewer's frame, as a ``data:`` URL: a tab of its own
    opened at a replayed file is sent to the resolver's viewer (``303``), where such a page is shown in the frame."""
    frame = {"Accept": "text/html,*/*;q=0.8", "Sec-Fetch-Dest": "iframe", "Sec-Fetch-Mode": "navigate",
             "Sec-Fetch-Site": "same-site"}
    return "data:text/html;base64," + base64.b64encode(httpx.get(url, headers=frame, timeout=30).content).decode()


@pytest.mark.parametrize("width", [1100, 390])
def test_the_replay_origins_tabs_say_in_words_why_nothing_is_replayed(served: Served, width: int) -> None:
    # the tabs read "Not replayed: gone", "Not replayed: not found", "Not replayed: syntax error" (a problem's title):
    # each says it in the words the resolver's pages use after "Cannot show this:"; opened on a phone, a page is
    # laid out at its width (it was laid out 980 px wide and drawn at 40 %)
    name = "urn:pdi://closed.example.us/2026/11/22/1.related.1"
    pages = {
        "not-held": (_as_fetched(_not_held_url(served)), ["Not replayed: not in this archive", "No page is held under this name"]),
        "withdrawn": (_as_served(not_held(WithdrawnError(f"{name}: withdrawn 2026-11-23T10:00:00Z: a duplicate",
                                                         reason="a duplicate", at="2026-11-23T10:00:00Z", who="root"))),
                      ["Not replayed: withdrawn", "This page was withdrawn: it is not replayed"]),
        "private": (_as_served(not_replayed(AccessError(f"{name} is private"))),
                    ["Not replayed: this capture is private", "This capture is private: it is not replayed"]),
        "not-a-name": (_replay(served, "urn:pdi://archives.gov.us/2026/13/40/x.related.1", "index.html"),
                       ["Not replayed: not written right"] * 2),
        "no-such-part": (_as_fetched(_replay(served, served.capture, "no-such-part.html")),
                         ["Not replayed: nothing is at this address"] * 2),
    }
    with devtools() as pipe:
        seen = {page: _tab_and_heading(pipe, url, width, f"replay-tab-{page}-{width}.png")
                for page, (url, _) in pages.items()}
    assert seen == {page: said for page, (_, said) in pages.items()}, seen
    # a program's problem keeps its title
    assert httpx.get(_not_held_url(served), timeout=30).json()["title"] == "not found"
