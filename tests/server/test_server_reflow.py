"""The narrowest phones: every control of the site's header inside the window, and no page scrolling sideways.

WCAG 2.1 §1.4.10 "Reflow" asks that content read without scrolling sideways
at 320 CSS px; phones are 320 (the first iPhone SE), 360 (most Android
phones) and 375 (the iPhone SE and mini) wide. The axe test checks a 390 px
phone; here the header, which every page shares, is measured in Chromium at
the narrower widths, on a few pages of different kinds. Screenshots:
``reflow-PAGE-WIDTH.png``.
"""

from __future__ import annotations

import time
import urllib.parse

import pytest
from server_helpers import Served
from test_server_pdf_viewer import _shoot

from chromium_helpers import open_page
from pdi.capture.browser import devtools

#: What sticks out of the window: the tags, ids and right edges of the header's controls past its right edge.
OUTSIDE = """[...document.querySelectorAll('header.site a, header.site input, header.site button, header.site label')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || '').trim()
       + ' right=' + Math.round(e.getBoundingClientRect().right))"""


@pytest.mark.parametrize("width", [320, 360, 375])
@pytest.mark.parametrize("page", ["home", "search", "text"])
def test_the_header_fits_the_narrowest_phones(served: Served, page: str, width: int) -> None:
    path = {"home": "/", "search": "/search?q=world",
            "text": "/view?pdi=" + urllib.parse.quote(served.text + "#char=7,12", safe="")}[page]
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)

        def js(expression: str) -> object:
            return pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                             session, deadline)["result"]["value"]

        js("scrollTo(0, 0)")  # the header in the picture (a passage scrolls itself into view)
        _shoot(pipe, session, f"reflow-{page}-{width}.png")
        outside = js(OUTSIDE)
        widths = js("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        go = js("document.querySelector('header.site form[action=\"/view\"] button').getBoundingClientRect().width")
    assert widths == [width, width], f"{page} at {width} px scrolls sideways: {widths}; outside: {outside}"
    assert outside == [], f"{page} at {width} px: the header's controls past the window's edge: {outside}"
    assert isinstance(go, (int, float)) and go > 20  # the Go button is drawn whole, not squeezed to nothing
