"""A viewer opened at a passage's name shows that name in its Cite panel at once, in Chromium.

A colleague's link, ``/view?pdi=NAME%23FRAGMENT``, opens a page with the passage (region, stretch, clip, part)
marked; its Cite panel's PDI box holds NAME#FRAGMENT as the page resolved it (a browser's fragment read as the
native name it equals), with its Copy button and its *open it* link, and its other forms are offered as a
selection's would be, until the reader selects something else. A fragment that marks nothing (wholly past the end)
leaves the panel waiting for a selection, the page's note saying why.

Every expected value is the name in the URL opened, or worked out here by hand: PDI ``char`` positions count code
points of the CRLF-canonical text (PDI-GRAMMAR.md §3), RFC 5147 counts a line end as one character and ``line=``
positions are RFC 5147's, Media Fragments' ``xywh`` is left, top, width and height and ``t`` seconds. Each page is
saved as a screenshot (``tests/artifacts/screenshots/opened-*.png``).
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.parse
from typing import Any

from server_helpers import TEXT, Served
from test_server_cite_forms import _forms
from test_server_pdf_viewer import _until
from test_server_viewer_browser import _copied, _desktop, _js, _select, _shoot

from chromium_helpers import navigate_and_wait_for_load, new_tab, open_page
from pdi.capture.browser import Pipe, devtools

#: The PDI box as the page shows it: [its value, its placeholder, its Copy button disabled, its link, the status].
PDI_BOX = """JSON.stringify((() => { const i = document.getElementById('name');
  const open = document.getElementById('open-name');
  return [i.value, i.placeholder, document.getElementById('copy-name').disabled,
          open.hasAttribute('href') ? open.href : null, document.getElementById('cite-status').textContent]; })())"""

#: What the status says while the name the page was opened at is shown.
OPENED = "Shown: the name this page was opened at. Select something else to name that instead."


def _open(pipe: Pipe, url: str) -> str:
    session = open_page(pipe, url)
    _desktop(pipe, session)
    return session


def _box(pipe: Pipe, session: str) -> list[Any]:
    return list(json.loads(_js(pipe, session, PDI_BOX)))


def _view(origin: str, name: str, tail: str = "") -> str:
    return f"{origin}/view?pdi={urllib.parse.quote(name, safe='')}{tail}"


def _shown_at_once(pipe: Pipe, session: str, origin: str, name: str, shot: str, status: str = OPENED) -> None:
    """The PDI box holds ``name`` as the page is loaded (no selection made), its link opens it, its status says
    why it is there, and its Copy button (clicked with the mouse) copies it; the page is saved as ``shot``."""
    value, placeholder, disabled, href, said = _box(pipe, session)
    assert [value, placeholder, disabled, said] == [name, "(not yet)", False, status]
    assert href.startswith(f"{origin}/view?pdi=") and urllib.parse.unquote(href.split("=", 1)[1]) == name, href
    _shoot(pipe, session, shot)
    _js(pipe, session, "document.getElementById('copy-name').scrollIntoView({block: 'center'})")
    assert _copied(pipe, session, origin) == name


def test_a_text_opened_at_a_passage_shows_its_name_and_its_other_forms(served: Served) -> None:
    # "Hello, world.\nSecond 𝕚 line.\n…" stored with LF: "world" is characters 7 to 12 in both counts (no line end
    # before it); RFC 5147's checks are of the whole entity, 55 code points
    name = served.text + "#char=7,12"
    checks = f";length=55,UTF-8;md5={hashlib.md5(TEXT).hexdigest()},UTF-8"
    assert len(TEXT.decode()) == 55
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name))
        _shown_at_once(pipe, session, served.url, name, "opened-text.png")
        forms = _forms(pipe, session)
        assert forms["name"] == ["verified", name, ""]
        assert forms["rfc5147"] == ["verified", f"{served.url}/uri-res/N2R?{served.text}#char=7,12{checks}", ""]
        assert forms["textfrag"] == ["verified", served.text + "#:~:text=world", ""]
        assert forms["annotation"][0] == "verified"
        selectors = {s["type"]: s for s in json.loads(forms["annotation"][1])}
        assert selectors["TextQuoteSelector"]["exact"] == "world"
        assert (selectors["TextPositionSelector"]["start"], selectors["TextPositionSelector"]["end"]) == (7, 12)
        # until the reader selects something else: "Second" follows "Hello, world." (13) and CR LF (2)
        assert _select(pipe, session, "Second") == served.text + "#char=15,21"


def test_a_text_opened_at_lines_shows_the_lines_name_and_the_other_forms_of_those_characters(served: Served) -> None:
    # line=1,2 (RFC 5147 line positions) is the second line, its line end included: "Second 𝕚 line.\n", 15 code
    # points after the first line's 14 (its LF one character in RFC 5147)
    name = served.text + "#line=1,2"
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name))
        assert _js(pipe, session, "document.getElementById('passage').textContent") == "Second 𝕚 line.\n"
        _shown_at_once(pipe, session, served.url, name, "opened-text-lines.png")
        forms = _forms(pipe, session)
    assert forms["name"] == ["verified", name, ""]
    assert forms["rfc5147"][:2] == ["verified", f"{served.url}/uri-res/N2R?{served.text}#char=14,29"
                                    f";length=55,UTF-8;md5={hashlib.md5(TEXT).hexdigest()},UTF-8"]
    assert forms["textfrag"][0] == "none"  # it ends with its line end: a text fragment quotes whole words
    assert forms["annotation"][0] == "verified"


def test_a_text_opened_at_a_browsers_text_fragment_shows_the_native_name_it_is(served: Served) -> None:
    # "Second" is PDI characters 15 to 21 (the first line's 13 and its CR LF)
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, served.text + "#:~:text=Second"))
        _shown_at_once(pipe, session, served.url, served.text + "#char=15,21", "opened-text-alias.png")


#: A phone's window (CSS pixels), set before the page loads, as a phone opens a colleague's link.
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}

#: The PDI box: whether the name is longer than the box, and whether the box shows its end (the fragment).
END_SHOWN = """JSON.stringify((() => { const i = document.getElementById('name');
  return [i.scrollWidth > i.clientWidth, i.scrollLeft + i.clientWidth >= i.scrollWidth - 1]; })())"""


def test_on_a_phone_the_box_shows_the_end_of_the_name_opened_at(served: Served) -> None:
    # found following the reader's pages on a phone (2026-12-01): a link opened at a passage showed
    # "urn:pdi://library.examp" in the PDI box, the fragment that says which passage out of sight, where a name
    # the reader selects is shown from its end (test_server_cite_forms.py); a desktop's box holds the name whole
    name = served.text + "#char=7,12"
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", deadline=deadline)
        pipe.call("Emulation.setDeviceMetricsOverride", PHONE, session, deadline)
        navigate_and_wait_for_load(pipe, session, _view(served.url, name), deadline)
        assert _box(pipe, session)[0] == name
        end = json.loads(_js(pipe, session, END_SHOWN))
        _shoot(pipe, session, "opened-text-phone.png")
        # the window made wide (the name whole in its box) and narrow again, as a phone turned twice: its end still
        for size in ({**PHONE, "width": 1100, "mobile": False}, PHONE):
            pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
            _js(pipe, session, "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        turned = json.loads(_js(pipe, session, END_SHOWN))
    assert end == [True, True], end
    assert turned == [True, True], turned


def test_a_fragment_past_the_end_leaves_the_panel_waiting_and_the_note_says_why(served: Served) -> None:
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, served.text + "#char=500,600"))
        box = _box(pipe, session)
        note = _js(pipe, session, "document.querySelector('main p.note').textContent")
    assert box == ["", "(not yet)", True, None, "Nothing selected yet."]
    assert "500" in note and "58 characters" in note, note  # 55 code points, each of its 3 LF two in the PDI


def test_the_source_of_an_html_page_opened_at_a_passage_shows_its_name(served: Served) -> None:
    # served.page is "<p id=a>one<p>two</p>": "one" is characters 8 to 11 of the source
    name = served.page + "#char=8,11"
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name, "&view=source"))
        _shown_at_once(pipe, session, served.url, name, "opened-html-source.png")
        forms = _forms(pipe, session)
    assert forms["textfrag"] == ["verified", served.page + "#:~:text=one", ""]


def test_a_long_text_opened_at_a_line_shows_its_name(served: Served) -> None:
    k = 120_000  # each line is 28 characters with its LF: line k starts at RFC 5147 character 28 * k
    name = served.long + f"#line={k},{k + 1}"
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name))
        _shown_at_once(pipe, session, served.url, name, "opened-long-text.png")
        forms = _forms(pipe, session)
    assert forms["rfc5147"][1].startswith(f"{served.url}/uri-res/N2R?{served.long}#char={28 * k},{28 * (k + 1)};length=")


def test_an_image_opened_at_a_region_shows_its_name_and_its_media_fragment(served: Served) -> None:
    # a 40×30 picture: (5,6) to (20,16) is 15 wide and 10 high
    name = served.picture + "#rect=(5,6),(20,16)"
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name))
        _shown_at_once(pipe, session, served.url, name, "opened-image.png")
        forms = _forms(pipe, session)
        assert forms["mediafrag"] == ["verified", served.picture + "#xywh=5,6,15,10", ""]
        assert forms["annotation"][0] == "verified"
        # a browser's Media Fragment opens the page at the native name it equals
        session = _open(pipe, _view(served.url, served.picture + "#xywh=5,6,15,10"))
        assert _box(pipe, session)[0] == name


def test_a_sound_opened_at_a_stretch_shows_its_name_and_its_media_fragment(served: Served) -> None:
    name = served.sound + "#msec=500,1500"  # 250 frames at 100 Hz: 0.5 s to 1.5 s is within it
    with devtools() as pipe:
        session = _open(pipe, _view(served.url, name))
        _shown_at_once(pipe, session, served.url, name, "opened-sound.png")
        forms = _forms(pipe, session)
    assert forms["mediafrag"] == ["verified", served.sound + "#t=0.5,1.5", ""]
    assert forms["annotation"][0] == "verified"


def test_a_video_opened_at_a_clip_or_a_region_shows_its_name(media: tuple[str, dict[str, str]]) -> None:
    origin, names = media
    video = urllib.parse.unquote(names["video"])  # 3 s of 64×48
    clip, region = video + "#msec=1200,2400", video + "#rect=(8,6),(40,30),1500"
    with devtools() as pipe:
        session = _open(pipe, _view(origin, clip))
        _shown_at_once(pipe, session, origin, clip, "opened-video-clip.png")
        assert _forms(pipe, session)["mediafrag"] == ["verified", video + "#t=1.2,2.4", ""]
        session = _open(pipe, _view(origin, region))
        _shown_at_once(pipe, session, origin, region, "opened-video-region.png")
        assert _forms(pipe, session)["mediafrag"][0] == "none"  # a region of a frame has no Media Fragment


def test_a_pdf_opened_at_a_passage_shows_its_name(media: tuple[str, dict[str, str]]) -> None:
    # the collection how-to's citation (tests/server/test_server_pdf_viewer.py finds it on the text layer)
    origin, names = media
    name = urllib.parse.unquote(names["paper"]) + "#char=654,751"
    with devtools() as pipe:
        session = _open(pipe, _view(origin, name))
        assert _until(pipe, session, "document.getElementById('passage')")
        time.sleep(0.3)  # scrolled to it
        _shown_at_once(pipe, session, origin, name, "opened-pdf.png", status="")
        forms = _forms(pipe, session)
    assert forms["annotation"][0] == "verified"
    exact = {s["type"]: s for s in json.loads(forms["annotation"][1])}["TextQuoteSelector"]["exact"]
    assert exact == "Dynamic languages such as JavaScript are more difficult to com-\r\npile than statically typed ones."


def test_an_email_opened_at_a_passage_or_a_part_shows_its_name(media: tuple[str, dict[str, str]]) -> None:
    origin, names = media
    passage = urllib.parse.unquote(names["email"]) + "#char=0,16"  # the body's "Thank you Jesus."
    part = urllib.parse.unquote(names["attached"]) + "#part=1"
    with devtools() as pipe:
        session = _open(pipe, _view(origin, passage))
        assert _js(pipe, session, "document.getElementById('passage').textContent") == "Thank you Jesus."
        _shown_at_once(pipe, session, origin, passage, "opened-email.png")
        session = _open(pipe, _view(origin, part))
        _shown_at_once(pipe, session, origin, part, "opened-email-part.png")
