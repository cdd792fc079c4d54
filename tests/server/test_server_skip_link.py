"""A way past the site's header from the keyboard: the first Tab of every page stops on a link to its content.

WCAG 2.2 §2.4.1 (Bypass Blocks, level A): the header repeats six stops on
every page (home, series, the search box and its button, the resolve box and
its button) and a seventh (sign in); a reader using a keyboard alone should
not have to pass them on each page. The link is hidden until it has the focus
(a sighted mouse user does not see it), drawn in sight with its focus ring
when it has, and Enter on it sends the next Tab into ``<main>``.
"""

from __future__ import annotations

import json
import time

import pytest
from server_helpers import Served
from test_server_keyboard import _contrast, _js, _key, _keyboard_tab
from test_server_pages_screenshots import dark, page_url

from pdi.capture.browser import devtools

#: What has the focus: [its tag, its href, its text, whether it is inside <main>, whether its box is whole and in the
#: window (at least 8 × 8 px, not cut off by a clip), whether its focus is drawn].
FOCUS = """JSON.stringify((() => { const e = document.activeElement; const r = e.getBoundingClientRect();
  const s = getComputedStyle(e);
  const whole = r.width >= 8 && r.height >= 8 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth
    && r.bottom <= innerHeight && s.clip === 'auto' && s.clipPath === 'none';
  return [e.tagName.toLowerCase(), e.getAttribute('href'), (e.textContent || '').trim(), e.closest('main') !== null,
          whole, e.matches(':focus-visible') && s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2]; })())"""

#: Whether the skip link is out of sight before anything has the focus: its box off the window or under 2 px.
UNSEEN = """(() => { const e = document.querySelector('a[href="#main"]'); const r = e.getBoundingClientRect();
  return r.right <= 0 || r.bottom <= 0 || r.left >= innerWidth || r.width < 2 || r.height < 2; })()"""


@pytest.mark.parametrize("width", [1100, 375])
@pytest.mark.parametrize("page", ["home", "document", "series-day", "search", "error"])
def test_the_first_tab_offers_to_skip_the_header_and_enter_goes_to_the_content(
    served: Served, page: str, width: int
) -> None:
    with devtools() as pipe:
        session = _keyboard_tab(pipe, page_url(served, ("", {}), page))
        size = {"width": width, "height": 700, "deviceScaleFactor": 1, "mobile": width < 600}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        unseen = _js(pipe, session, UNSEEN)
        _key(pipe, session, "Tab", 9)
        first = json.loads(_js(pipe, session, FOCUS))
        _key(pipe, session, "Enter", 13, "\r")
        _key(pipe, session, "Tab", 9)
        after = json.loads(_js(pipe, session, FOCUS))
    assert unseen, f"{page}: the skip link is in sight before it has the focus"
    assert first[:3] == ["a", "#main", "Skip to the content"], first
    assert first[4], f"{page} at {width} px: the focused skip link is not whole in the window: {first}"
    assert first[5], f"{page} at {width} px: the focused skip link draws no focus ring: {first}"
    assert after[3], f"{page} at {width} px: after Enter on the skip link, Tab went to {after}, not into <main>"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_skip_links_text_is_legible_when_it_shows(served: Served, scheme: str) -> None:
    # WCAG 2.2 §1.4.3: its text at least 4.5:1 against its own background, light or dark
    with devtools() as pipe:
        session = _keyboard_tab(pipe, served.url + "/")
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        _key(pipe, session, "Tab", 9)
        colours = json.loads(_js(pipe, session, "JSON.stringify([getComputedStyle(document.activeElement).color,"
                                                " getComputedStyle(document.activeElement).backgroundColor])"))
    assert not colours[1].startswith("rgba"), f"its background is not opaque: {colours}"
    assert _contrast(*colours) >= 4.5, colours
