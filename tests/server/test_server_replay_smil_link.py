"""A replayed page's SVG link made by an animation leads nowhere: Chromium, opened on the replay origin, clicked.

An archived page may hold ``<svg><a><set attributeName="href" to="http://…"/>…</a></svg>``: no ``href`` attribute
holds the URL, an animation gives it to the link. A reader who opens the replayed page in a tab of its own (a link
to the replay origin shared, or followed) and clicks it must stay in the archive, as with any link of the page
(its reference rewritten to ``about:blank``); before, Chromium went to the live web.
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

from server_helpers import with_replay
from test_server_replay_browser import SERIES, _open, _top, _witness

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
    with _witness() as (port, witnessed), with_replay(location) as (_, replay), devtools() as pipe:
        with Archive.open(location) as archive:
            name = str(archive.add(SERIES, PAGE.replace("WPORT", str(port)).encode(), format="html"))
        session, _ = _open(pipe, f"{replay}/replay/{urllib.parse.quote(name, safe='')}/index.html")
        deadline = time.monotonic() + 20
        while (animated := _top(pipe, session, "document.getElementById('link').href.animVal")) == "":
            assert time.monotonic() < deadline, "the animation did not run"
            time.sleep(0.05)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):  # a reader's click on the link
            pipe.call("Input.dispatchMouseEvent", {"type": kind, "x": 50, "y": 50, "button": "left", "clickCount": 1,
                                                   "buttons": 1 if kind == "mousePressed" else 0}, session, deadline)
        time.sleep(2)  # the navigation the click starts has had its time
    assert animated == "about:blank"  # the animation's URL was rewritten, as an href's is
    assert witnessed == []  # and the click reached nothing of the live web
