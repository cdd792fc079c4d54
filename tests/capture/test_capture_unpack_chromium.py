"""An unpacked page opened from disk in Debian's Chromium asks for no file: URL outside its folder.

The crasher files of tests/data/crashers/ (meta refresh, srcdoc, form actions, ping, a
script, and every other way a page names a file: URL) are unpacked, and Chromium, driven
over the DevTools protocol on a pipe, opens out/index.html. Every request it makes
(``Network.requestWillBeSent``) and every navigation of any frame (``Page.frameNavigated``,
``Page.frameRequestedNavigation``) is recorded until the page has been loaded for two
seconds (a meta refresh of 0 s goes at once). A control page shows that a file: request
is seen when there is one.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from chromium_helpers import navigate_and_wait_for_load
from pdi.capture import unpack_to
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml import parse
from pdi.mhtml.unpack import plan

CRASHERS = Path(__file__).resolve().parents[1] / "data" / "crashers"


def _watch(pipe: Pipe, url: str, linger: float = 2.0) -> list[str]:
    """Open ``url`` in a new tab; every URL requested or navigated to, in any frame."""
    deadline = time.monotonic() + 60
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
    pipe.call("Network.enable", None, session, deadline)
    pipe.call("Page.enable", None, session, deadline)
    pipe.events.clear()
    seen: list[str] = []

    def note(message: dict[str, Any]) -> None:
        params = message.get("params", {})
        method = message.get("method")
        if method == "Network.requestWillBeSent":
            seen.append(params["request"]["url"])
        elif method == "Page.frameNavigated":
            seen.append(params["frame"]["url"])
        elif method == "Page.frameRequestedNavigation":
            seen.append(params["url"])

    navigate_and_wait_for_load(pipe, session, url, deadline, note)
    until = time.monotonic() + linger
    while (message := pipe.events.pop(0) if pipe.events else pipe.receive(until)) is not None:
        note(message)
    pipe.call("Target.closeTarget", {"targetId": target}, None, time.monotonic() + 30)
    return seen


def _outside(seen: list[str], folder: Path, names: set[str]) -> list[str]:
    inside = {(folder / name).as_uri() for name in names}
    return [u for u in seen if u.lower().startswith("file:") and u.split("#", 1)[0] not in inside]


@pytest.fixture(scope="module")
def pipe() -> object:
    with devtools() as p:
        yield p


def test_a_file_request_is_seen_when_there_is_one(pipe: Pipe, tmp_path: Path) -> None:
    # The control: a page (not unpacked) that asks for a file outside its folder.
    elsewhere, deeper = tmp_path / "elsewhere.png", tmp_path / "deeper.png"
    page = tmp_path / "out" / "index.html"
    page.parent.mkdir()
    page.write_text(f'<img src="{elsewhere.as_uri()}"><iframe srcdoc="<img src={deeper.as_uri()}>"></iframe>')
    seen = _watch(pipe, page.as_uri())
    assert _outside(seen, page.parent, {"index.html"}) == [elsewhere.as_uri(), deeper.as_uri()]


@pytest.mark.parametrize("name", ["file_refs.mht", "cases_small_refresh.mht", "cases_small_srcdoc.mht"])
def test_unpacked_crasher_reaches_no_file_outside_its_folder(pipe: Pipe, tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    written = unpack_to(plan(parse((CRASHERS / name).read_bytes())), out)
    seen = _watch(pipe, (out / "index.html").as_uri())
    assert (out / "index.html").as_uri() in seen  # it was opened
    assert _outside(seen, out, {p.name for p in written}) == []
    assert not any(u.startswith("file:///etc") for u in seen)
