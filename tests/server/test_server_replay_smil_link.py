"""A replayed page's SVG link made by an animation leads nowhere: Chromium, opened on the replay origin, clicked.

An archived page may hold ``<svg><a><set attributeName="href" to="http://…"/>…</a></svg>``: no ``href`` attribute
holds the URL, an animation gives it to the link. A reader who opens the replayed page's address in a tab (a link to
the replay origin shared, or followed) is sent to the viewer's page of it, and a click on the link in its frame must
stay in the archive, as with any link of the page (its reference rewritten to ``about:blank``); before, Chromium went
to the live web.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path

from server_helpers import with_replay
from test_server_replay_browser import SERIES, _in_frame, _mouse, _open, _top, _view, _witness

from pdi.archive import Archive
from pdi.capture.browser import devtools

#: A link the size of the page's first 300 by 100 pixels, made a link to the witness by an animation.
PAGE = (
    "<!DOCTYPE html><html><head><meta charset=utf-8><title>Animated link</title><style>body{margin:0}</style></head>"
    '<body><svg width="300" height="100" style="display:block"><a id="link">'
    '<set attributeName="href" to="http://127.0.0.1:WPORT/animated-link"/>'
    '<rect width="300" height="100" fill="#0a0"/></a></svg></body></html>'
)


def test_a_link_an_svg_animation_makes_in_a_replayed_page_leads_nowhere_when_clicked(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _witness() as (port, witnessed), with_replay(location) as (resolver, replay), devtools() as pipe:
        with Archive.open(location) as archive:
            name = str(archive.add(SERIES, PAGE.replace("WPORT", str(port)).encode(), format="html"))
        session, _ = _open(pipe, f"{replay}/replay/{urllib.parse.quote(name, safe='')}/index.html")
        at = _top(pipe, session, "location.href")  # the tab was sent to the viewer's page of it
        deadline = time.monotonic() + 20
        while (animated := _in_frame(pipe, session, "document.getElementById('link').href.animVal")) == "":
            assert time.monotonic() < deadline, "the animation did not run"
            time.sleep(0.05)
        frame = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay').getBoundingClientRect())"))
        for kind, buttons in (("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)):  # a reader's click on it
            _mouse(pipe, session, kind, frame["x"] + 50, frame["y"] + 50, buttons)
        time.sleep(2)  # the navigation the click starts has had its time
        after = _top(pipe, session, "location.href")
    assert at == after == _view(resolver, name)
    assert animated == "about:blank"  # the animation's URL was rewritten, as an href's is
    assert witnessed == []  # and the click reached nothing of the live web
