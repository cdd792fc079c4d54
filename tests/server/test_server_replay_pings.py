"""A replayed page's ``<a ping>`` sends nothing when its links are clicked, in Chromium with hyperlink auditing on.

pdi's Chromium runs ``--no-pings`` (:data:`pdi.capture.browser._FLAGS`), so no other browser test could see a
ping; a reader's browser sends them. Here Chromium runs without that flag: the same page served live pings the
witness for each click (so pings are on), and replayed in the viewer's frame, with its script run
(``--replay-scripts``, which sets one link's ``ping`` itself) or not, its two links clicked, it pings nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from server_helpers import with_replay
from test_server_replay_browser import SERIES, _in_frame_when, _open, _site, _top, _view, _witness

from pdi.archive import Archive
from pdi.capture.browser import Pipe, chromium_path, devtools

#: Two links 60 pixels high, one above the other: one pings by its markup, the other by what its script sets.
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Pings</title>
<style>body{margin:0} a{display:block;width:300px;height:60px;background:#0a0}</style></head><body>
<a href="#one" ping="http://127.0.0.1:WPORT/markup-ping">markup</a><a id="scripted" href="#two">scripted</a>
<script>document.title = "scripted"; document.getElementById("scripted").ping = "http://127.0.0.1:WPORT/script-ping";</script>
</body></html>
"""


def _click_both(pipe: Pipe, session: str, x: float, y: float) -> None:
    """A reader's click on each link, the page's top left corner at ``x``, ``y`` of the tab."""
    for middle in (30, 90):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            pipe.call("Input.dispatchMouseEvent", {"type": kind, "x": x + 50, "y": y + middle, "button": "left",
                                                   "clickCount": 1, "buttons": 1 if kind == "mousePressed" else 0},
                      session, time.monotonic() + 20)


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_a_replayed_pages_links_ping_nothing_when_clicked(tmp_path: Path, scripts: bool) -> None:
    browser = tmp_path / "chromium"  # Chromium as pdi starts it, but for --no-pings
    browser.write_text(f'#!/bin/sh\nfor a; do shift; [ "$a" = --no-pings ] || set -- "$@" "$a"; done\n'
                       f'exec "{chromium_path()}" "$@"\n')
    browser.chmod(0o755)
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _witness() as (port, witnessed), with_replay(location, scripts=scripts) as (resolver, _), \
            devtools(chromium=str(browser)) as pipe:
        page = PAGE.replace("WPORT", str(port)).encode()
        with Archive.open(location) as archive:
            name = str(archive.add(SERIES, page, format="html"))
        with _site({"/live.html": ("text/html", page)}) as (site, _):
            live, _ = _open(pipe, site + "/live.html")
            _click_both(pipe, live, 0, 0)
            deadline = time.monotonic() + 20
            while len(witnessed) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            pinged_live = sorted(witnessed)
        witnessed.clear()
        session, _ = _open(pipe, _view(resolver, name))
        title = _in_frame_when(pipe, session, "document.title", lambda t: t == "scripted" or not scripts)
        frame = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay')"
                                               ".getBoundingClientRect())"))
        _click_both(pipe, session, frame["x"], frame["y"])
        clicked = _in_frame_when(pipe, session, "location.hash", lambda h: h == "#two")
        time.sleep(2)  # a ping is sent as the click's navigation starts: it has had its time
    assert pinged_live == ["POST /markup-ping", "POST /script-ping"]  # pings are on in this Chromium
    assert title == ("scripted" if scripts else "Pings")
    assert clicked == "#two"  # both links were followed in the replayed page
    assert witnessed == []  # and neither pinged: its ping rewritten, a script's refused (connect-src 'none')
