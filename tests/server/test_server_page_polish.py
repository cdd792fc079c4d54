"""Rough edges a reader and a designer saw in the screenshots of every page, each measured in Chromium.

- a short page ended half-way down the window, its footer floating above a blank band;
- the panel that names a selection ended in an empty band (the status line's room, reserved so nothing moves
  when it speaks), which said nothing before anything was selected;
- a page refusing to show an image or a TIFF past the viewer's limits said "its octets are served whole by N2R"
  and gave no way to them.

Screenshots: ``polish-….png``.
"""

from __future__ import annotations

import time
import urllib.parse

import pytest
from server_helpers import Served
from test_server_keyboard import _contrast, _js
from test_server_pages_screenshots import dark, page_url
from test_server_pdf_viewer import _shoot

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools

#: Where the footer ends and where main ends, the window's height, the document's height, the gap between the
#: header and main's first box, and main's content width (its width less its paddings).
MEASURE = """(() => { const f = document.querySelector('footer.site').getBoundingClientRect(),
  m = document.querySelector('main'), s = getComputedStyle(m), h = document.querySelector('header.site').getBoundingClientRect();
  return {footer: [f.top, f.bottom], main: m.getBoundingClientRect().bottom, window: innerHeight,
          page: document.documentElement.scrollHeight,
          gap: m.firstElementChild.getBoundingClientRect().top - h.bottom,
          measure: m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)}; })()"""


def _sized(pipe: Pipe, url: str, width: int, height: int) -> str:
    session = open_page(pipe, url)
    pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                      "mobile": width < 600}, session, time.monotonic() + 30)
    _js(pipe, session, "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return session


@pytest.mark.parametrize(("page", "width", "height"), [
    ("error", 1100, 700), ("signin-form", 1100, 700), ("series-list", 1100, 700), ("search", 1100, 900),
    ("error", 375, 740), ("email-thread", 375, 1400),
])
def test_a_short_page_keeps_its_footer_at_the_windows_foot(
    served: Served, media: tuple[str, dict[str, str]], page: str, width: int, height: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), width, height)
        measured = _js(pipe, session, MEASURE)
        _shoot(pipe, session, f"polish-footer-{page}-{width}.png")
    # the page fills the window, no more (nothing to scroll), its footer's foot the window's
    assert measured["page"] == height, measured
    assert abs(measured["footer"][1] - height) <= 1, measured
    assert measured["footer"][0] >= measured["main"], measured
    # and the page's own spacing stays: 1.5rem (on a phone 1rem) between the header and the first thing on it, or
    # its heading's own margin where that is more (a browser's 0.67em; a phone's h1 is 1.6rem: 17.152 px)
    assert abs(measured["gap"] - (24 if width >= 640 else max(16, 0.67 * 1.6 * 16))) <= 0.5, measured


@pytest.mark.parametrize(("page", "measure"), [
    ("error", 960),  # 60rem: the column a page of prose is set in
    ("series-list", 1100 - 32),  # the catalogue's wider 68rem, less the window's 1rem each side
    ("generic", 1085 - 32),  # a long page: the scroll bar's 15 px out of the window
])
def test_a_page_keeps_its_measure_and_a_long_page_its_footer_after_main(
    served: Served, media: tuple[str, dict[str, str]], page: str, measure: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), 1100, 700)
        measured = _js(pipe, session, MEASURE)
        scrolled = _js(pipe, session, "(() => { scrollTo(0, document.documentElement.scrollHeight);"
                                      " return document.querySelector('footer.site').getBoundingClientRect().bottom"
                                      " - innerHeight; })()")
    assert abs(measured["measure"] - measure) <= 1, measured
    assert measured["footer"][0] >= measured["main"], measured
    assert abs(scrolled) <= 1, scrolled  # at the end of a long page, its footer is the last thing, at the foot


#: The cite panel's status line: [its text, its colour, the panel's background, the blank band under the last
#: line of text in the panel (px)].
STATUS = """(() => { const s = document.getElementById('cite-status'), panel = s.closest('section.cite');
  const range = document.createRange(); range.selectNodeContents(s);
  const lines = [...range.getClientRects()];
  const last = lines.length ? Math.max(...lines.map((r) => r.bottom)) : s.getBoundingClientRect().top;
  return [s.innerText, getComputedStyle(s).color, getComputedStyle(panel).backgroundColor,
          panel.getBoundingClientRect().bottom - last]; })()"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("page", ["text", "image", "sound", "email"])
def test_the_cite_panel_says_what_its_name_is_rather_than_end_in_a_blank_band(
    served: Served, media: tuple[str, dict[str, str]], page: str, scheme: str
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), 1100, 700)
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        text, colour, background, band = _js(pipe, session, STATUS)
        _js(pipe, session, "document.getElementById('cite-status').scrollIntoView({block: 'center'})")
        _shoot(pipe, session, f"polish-cite-status-{page}-{scheme}.png")
    # each page is opened at a passage: its name is in the PDI's box (test_server_viewer_opened_at.py), and said so
    assert text == "Shown: the name this page was opened at. Select something else to name that instead.", text
    assert _contrast(colour, background) >= 4.5, (colour, background)  # WCAG 2.2 §1.4.3, muted yet legible
    assert band < 16, band  # under the line, the panel's padding and a line's leading, not an empty line


@pytest.mark.parametrize(("page", "media_type"), [("image-limit", "image/png"), ("image-preview", "image/png"),
                                                  ("tiff-limit", "image/tiff")])
def test_a_page_past_the_viewers_limits_links_the_bytes_whole(
    served: Served, media: tuple[str, dict[str, str]], page: str, media_type: str
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), 1100, 700)
        # a TIFF past the page count: a problem page offering the bytes whole; an image past the pixels a browser
        # is asked to decode: the viewer's stand-in (or the server's preview of it), its note linking the bytes
        link = _js(pipe, session, "[...document.querySelectorAll('.problem a, #not-drawn a')].filter((a) =>"
                                  " ['the bytes, whole', 'the bytes'].includes(a.textContent))"
                                  ".map((a) => a.getAttribute('href'))")
        got = _js(pipe, session, f"fetch({link[0]!r} || '/').then((r) => [r.status, r.headers.get('content-type')])"
                  if link else "null")
        _shoot(pipe, session, f"polish-{page}.png")
    name = urllib.parse.unquote(media[1][{"image-limit": "bomb", "image-preview": "map", "tiff-limit": "pages"}[page]])
    assert link == [f"/uri-res/N2R?{name}"], link
    assert got == [200, media_type], got
