"""Every page of the resolver read with JavaScript disabled in Chromium: what a reader needs is there without it.

The pages are those of :mod:`test_server_pages_screenshots`; scripts are off
(``Emulation.setScriptExecutionDisabled``) before each is opened, so only
what the server wrote is shown. The checks are evaluated by DevTools, not by
the page. A page's check is the screenshot test's where that one asks
nothing of a script; the viewer's pages (whose script scrolls to a passage
and draws a waveform) have their own. Screenshots are saved as
``noscript-PAGE.png``.
"""

from __future__ import annotations

import base64
import io
import time
import urllib.parse
from typing import Any

import pytest
from PIL import Image
from server_helpers import Served, serving
from test_server_pages_screenshots import PAGES, SHOTS, page_url

from chromium_helpers import navigate_and_wait_for_load, new_tab, open_page
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

#: Checks for the pages whose screenshot check needs the page's script (a scroll, a drawing).
WITHOUT_SCRIPT = {
    # the passage marked, a link that goes to it; the places of the names there, empty
    "text": "document.getElementById('passage').textContent === 'world' && document.querySelector('a[href=\"#passage\"]') !== null"
            " && document.getElementById('name').value === '' && document.querySelector('.cite noscript') !== null",
    # the image, its cited box placed by the server's style: (10,5) of 40×30 a quarter of the width from the left
    "image": "document.getElementById('image').naturalWidth === 40"
             " && Math.abs(document.getElementById('cited').getBoundingClientRect().left - document.getElementById('image')"
             ".getBoundingClientRect().left - 10 * 12) < 1",
    # the player, and the cited stretch marked (1 s to 2 s of 2.5 s); the waveform, drawn by the script, is
    # blank: the script did not run; the boxes of its start and end (in the page) are not drawn, as the script types
    # and plays them
    "sound": "document.querySelector('audio') !== null"
             " && (() => { const c = document.getElementById('wave-canvas'); return c.getContext('2d')"
             ".getImageData(0, 0, c.width, c.height).data.every((v) => v === 0); })()"
             " && Math.abs(document.getElementById('cited').getBoundingClientRect().width"
             " - 0.4 * document.getElementById('wave').getBoundingClientRect().width) < 1"
             " && document.getElementById('start').value === '1.000' && document.getElementById('start').getClientRects().length === 0",
    # a video's clip and region: said in words and marked by the server; the player's source carries the clip's
    # Media Fragments #t= (the browser starts and stops there), the region's frame is its poster
    "video": "document.getElementById('clip').textContent.startsWith('The clip cited: from 1.000 s up to 2.000 s')"
             " && document.getElementById('player').getAttribute('src').endsWith('#t=1.000,2.000')"
             " && Math.abs(document.getElementById('cited-clip').getBoundingClientRect().width"
             " - document.getElementById('wave').getBoundingClientRect().width / 3) < 1",
    "video-region": "document.getElementById('player').poster.includes('1500')"
                    " && Math.abs(document.getElementById('cited').getBoundingClientRect().left - document.getElementById('player')"
                    ".getBoundingClientRect().left - 8 * 7) < 1",
    # a window of the long text: the passage marked, and a link that goes to it
    "long-text": "document.getElementById('passage').textContent === '0100000 line of a long text\\n'"
                 " && document.querySelector('a[href=\"#passage\"]') !== null",
    # a PDF: its facts, and how to read it without pdf.js (its bytes, which the browser shows); its pages' frame,
    # which only pdf.js fills ("Loading the pages…"), not drawn
    "pdf": "document.body.innerText.includes('application/pdf') && document.getElementById('pdf').getClientRects().length === 0"
           " && document.querySelector('main').innerText.includes('The pages are drawn by pdf.js, which needs JavaScript')",
    # the page replayed for selection still shows the page; naming a selection needs the script, and the page says
    # how to name a passage without it: from the source, whose link it gives, its whole note read (not cut short)
    "replay-select": "document.querySelector('iframe.replay').src.startsWith('{replay}/replay/')"
                     " && (() => { const note = document.querySelector('.select-tools p.no-script');"
                     " return note.innerText.includes('write the passage\\'s #char=a,b after the name in the Resolve box')"
                     " && note.scrollWidth <= note.clientWidth && note.querySelector('a').getAttribute('href')"
                     " === '/view?pdi=' + encodeURIComponent(new URLSearchParams(location.search).get('pdi')) + '&view=source'; })()",
}


def _evaluate(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": f"!!({expression})", "returnByValue": True}, session,
                       time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"]["value"]


def _open_without_script(pipe: Pipe, url: str) -> str:
    """Open ``url`` in a new 1100×700 tab whose scripts are disabled before it loads; wait for its load event."""
    deadline = time.monotonic() + 60
    session = new_tab(pipe, "Page", "Runtime", deadline=deadline)
    pipe.call("Emulation.setScriptExecutionDisabled", {"value": True}, session, deadline)
    size = {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
    navigate_and_wait_for_load(pipe, session, url, deadline)
    return session


@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_reads_without_javascript(served: Served, media: tuple[str, dict[str, str]], page: str) -> None:
    check = PAGES[page][1]
    check = WITHOUT_SCRIPT.get(page, check).replace("{replay}", served.replay_url)
    with devtools() as pipe:
        session = _open_without_script(pipe, page_url(served, media, page))
        shown = _evaluate(pipe, session, check)
        tree = pipe.call("Page.getFrameTree", None, session, time.monotonic() + 30)["frameTree"].get("childFrames", [])
        # a frame in a process of its own (the sandboxed frame of a page replayed for selection) is a target of its own
        targets = pipe.call("Target.getTargets", None, None, time.monotonic() + 30)["targetInfos"]
        frames = [f["frame"]["url"] for f in tree] + [t["url"] for t in targets if t["type"] == "iframe"]
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"noscript-{page}.png").write_bytes(base64.b64decode(shot["data"]))
    assert shown is True, f"{page}: {check}"
    if page.startswith("replay-"):  # the archived page itself loaded in its frame, from the replay origin
        assert [url for url in frames if url.startswith(served.replay_url + "/replay/")], frames


def test_a_passage_far_down_is_reached_without_javascript_by_the_link_to_it(served: Served) -> None:
    # Line 100,000 of the long text: its window holds 20,000 characters of context before it.
    url = page_url(served, ("", {}), "long-text")  # /view?pdi={long}%23line=100000,100001
    with devtools() as pipe:
        session = _open_without_script(pipe, url)
        href = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('a[href=\"#passage\"]').href",
                                              "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"]
        assert href == url + "#passage"
        followed = _open_without_script(pipe, href)
        # the browser scrolls to the fragment's element: a few lines below the window's top (its scroll margin)
        in_view = _evaluate(pipe, followed, "(() => { const r = document.getElementById('passage').getBoundingClientRect();"
                                            " return scrollY > 1000 && r.top > 20 && r.bottom <= innerHeight; })()")
    assert in_view is True


def test_a_search_hit_leads_to_its_passage_without_javascript(served: Served) -> None:
    with devtools() as pipe:
        session = _open_without_script(pipe, served.url + "/search?q=world")
        href = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('ol.hits a').href", "returnByValue": True},
                         session, time.monotonic() + 30)["result"]["value"]
        assert href.endswith("%23char=7,12#passage")
        followed = _open_without_script(pipe, href)
        assert _evaluate(pipe, followed, "document.getElementById('passage').textContent === 'world'"
                                         " && location.hash === '#passage'") is True


#: The cite panel's parts that only a script makes work: the "Cite the selection" button and its keyboard hint,
#: the PDI's box (filled by the script once it has checked a selection's name) and the other forms' boxes.
_SCRIPTED_PARTS = "['#cite-selection', '#name', '#other-forms'].map((s) => document.querySelector(s).getClientRects().length)"


def test_without_javascript_the_cite_panel_offers_no_button_nor_box_that_does_nothing(served: Served) -> None:
    """Found reading the noscript screenshot: with scripts off the text page still drew "Cite the selection"
    (a button that did nothing), "press Enter to cite", an empty PDI box "(not yet)" with a disabled Copy and
    "Other forms" of empty boxes, beside the note that naming a selection needs JavaScript. Without scripts only
    the note is drawn; with them, the parts are there as before."""
    url = page_url(served, ("", {}), "text")
    with devtools() as pipe:
        session = _open_without_script(pipe, url)
        without = pipe.call("Runtime.evaluate", {"expression": _SCRIPTED_PARTS, "returnByValue": True}, session,
                            time.monotonic() + 30)["result"]["value"]
        note = _evaluate(pipe, session, "document.querySelector('.cite').innerText.includes('Naming a selection needs JavaScript')")
        scripted = open_page(pipe, url)
        with_script = pipe.call("Runtime.evaluate", {"expression": _SCRIPTED_PARTS, "returnByValue": True}, scripted,
                                time.monotonic() + 30)["result"]["value"]
    assert without == [0, 0, 0]
    assert note is True
    assert with_script == [1, 1, 1]


#: The controls a reader sees that do nothing without a script: every visible button, box and list that is neither
#: a form's submit button nor a field its form sends (a form with a submit button: HTML §4.10.21.3), nor a
#: read-only box holding a value to read or copy. A disabled control counts: it never comes alive without a script.
_DEAD_CONTROLS = """(() => {
  const dead = [];
  for (const e of document.querySelectorAll('button, input, select, textarea')) {
    if (e.type === 'hidden' || e.getClientRects().length === 0 || getComputedStyle(e).visibility === 'hidden') continue;
    const form = e.disabled ? null : e.form;
    const submits = form !== null && (e.tagName === 'BUTTON' ? e.type === 'submit' : ['submit', 'image'].includes(e.type));
    const sent = form !== null && e.tagName !== 'BUTTON' && !['button', 'reset'].includes(e.type) && e.name !== ''
      && [...form.elements].some((s) => !s.disabled && (s.tagName === 'BUTTON' ? s.type === 'submit' : ['submit', 'image'].includes(s.type)));
    const shown = e.tagName !== 'BUTTON' && !e.disabled && e.readOnly && e.value !== '';
    if (!(submits || sent || shown)) dead.push(e.id ? '#' + e.id : e.outerHTML.slice(0, 80));
  }
  return dead;
})()"""

#: Whatever is marked ``needs-script`` and hidden by its own style or an ancestor's (``display:none``).
_SCRIPTED_HIDDEN = ("[...document.querySelectorAll('.needs-script')].filter((e) => {"
                    " for (let a = e; a; a = a.parentElement) { if (getComputedStyle(a).display === 'none') return true; }"
                    " return false; }).map((e) => e.id || e.className)")


def _value(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session, time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"]["value"]


@pytest.mark.parametrize("page", list(PAGES))
def test_without_javascript_no_page_draws_a_control_that_does_nothing(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    """Found going through every page with scripts off: the PDF's "Draw a box" and its region's boxes, the sound's
    and the video's start, end, marks and "Play the selection", the image's corners and the names' boxes of a page
    replayed for selection were drawn and did nothing. Each control drawn without a script works without one (a
    form's button or field), at a desktop's width and a phone's; with scripts on, nothing marked as needing them is
    hidden."""
    url = page_url(served, media, page)
    with devtools() as pipe:
        session = _open_without_script(pipe, url)
        desktop = _value(pipe, session, _DEAD_CONTROLS)
        phone = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
        pipe.call("Emulation.setDeviceMetricsOverride", phone, session, time.monotonic() + 30)
        on_a_phone = _value(pipe, session, _DEAD_CONTROLS)
        scripted = open_page(pipe, url)
        hidden = _value(pipe, scripted, _SCRIPTED_HIDDEN)
    assert desktop == [], f"{page} without JavaScript, 1100 px wide: {desktop}"
    assert on_a_phone == [], f"{page} without JavaScript, 390 px wide: {on_a_phone}"
    assert hidden == [], f"{page} with JavaScript: {hidden}"


#: For each medium, the fragments its page says to write when a selection cannot be named without a script: those
#: the PDI grammar gives it (PDI-GRAMMAR.md: a text's #char, an image's #rect, a sound's and a video's #sec and #msec,
#: a frame's #rect at t ms, a PDF's #char of its text layer and #rect on page f + 1).
_WRITTEN = {
    "text": ["#char=a,b"],
    "email": ["#char=a,b"],
    "image": ["#rect=(x1,y1),(x2,y2)"],
    "sound": ["#sec=a,b", "#msec=a,b"],
    "video": ["#msec=a,b", "#sec=a,b", "#rect=(x1,y1),(x2,y2),t"],
    "pdf": ["#char=a,b", "#rect=(x1,y1),(x2,y2),f"],
}


@pytest.mark.parametrize("page", list(_WRITTEN))
def test_without_javascript_each_medium_says_which_fragment_to_write(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    """Found reading the noscript screenshots: every viewer's note said to write "#char=a,b, #rect=(x1,y1),(x2,y2),
    #sec=a,b", a text's, an image's and a sound's fragments alike, on a PDF, whose region needs its page, as on a
    sound, which has no characters. Each says its own medium's."""
    with devtools() as pipe:
        session = _open_without_script(pipe, page_url(served, media, page))
        written = _value(pipe, session, "[...document.querySelector('.cite p.note').querySelectorAll('code')]"
                                        ".map((c) => c.textContent)")
    assert written == _WRITTEN[page]


#: The colour of the image's top-left pixel as the browser decoded it: [r, g, b].
_FIRST_PIXEL = ("(() => { const i = document.getElementById('image'), c = document.createElement('canvas');"
                " c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);"
                " return [...g.getImageData(0, 0, 1, 1).data.slice(0, 3)]; })()")


def test_without_javascript_another_frame_of_an_image_is_reached_by_a_link(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Found going through the pages with scripts off: a GIF's frame chooser (a list of its frames) did nothing
    without a script, and nothing said how to see another frame. Without scripts the chooser is not drawn; the page
    says which frame is shown and names the others' whole region (PDI-GRAMMAR: ``#rect=(x1,y1),(x2,y2),frame``),
    with links to the frames before and after it."""
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    frames = [Image.new("RGB", (8, 6), colour) for colour in colours]
    gif = io.BytesIO()
    frames[0].save(gif, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    root = tmp_path_factory.mktemp("frames")
    with Archive.init(root / "archive") as archive:
        archive.add_series("library.example.us")
        name = str(archive.add("library.example.us", gif.getvalue(), format="gif"))
    whole = [f"{name}#rect=(0,0),(8,6),{k}" for k in range(3)]
    with serving(root / "archive") as (_, port), devtools() as pipe:
        base = f"http://127.0.0.1:{port}"
        session = _open_without_script(pipe, f"{base}/view?pdi={urllib.parse.quote(whole[1], safe='')}")
        note = _value(pipe, session, "document.getElementById('frames-without-script').innerText")
        links = _value(pipe, session, "[...document.querySelectorAll('#frames-without-script a')].map((a) => a.href)")
        shown = _value(pipe, session, _FIRST_PIXEL)
        dead = _value(pipe, session, _DEAD_CONTROLS)
        following = _open_without_script(pipe, links[-1])
        followed = _value(pipe, following, _FIRST_PIXEL)
    assert note.startswith("Frame 1 of 3 (from 0) is shown.")
    assert "#rect=(0,0),(8,6),k" in note
    assert links == [f"{base}/view?pdi={urllib.parse.quote(whole[k], safe='')}" for k in (0, 2)]
    assert shown == [0, 255, 0]
    assert followed == [0, 0, 255]
    assert dead == []


#: The words of each viewer's hint that name a control its script draws (a button, a drag, a selection).
_CONTROLS_NAMED = {
    "pdf": ["Select text", "Draw a box"],
    "image": ["Drag a box"],
    "sound": ["Drag on the waveform"],
    "video": ["Mark in and out", "Box on the frame"],
}
_HINT = "document.querySelector('.cite p.hint').innerText"


@pytest.mark.parametrize("page", list(_CONTROLS_NAMED))
def test_without_javascript_a_hint_names_no_control_that_is_not_drawn(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    """Found reading the noscript screenshots: with the PDF's "Draw a box", the video's marks and its "Box on the
    frame" not drawn without a script, their hints still told the reader to press them. Without a script a hint says
    what a passage, a region or a clip is named, and names none of those controls; with one it names them."""
    url = page_url(served, media, page)
    with devtools() as pipe:
        plain = _value(pipe, _open_without_script(pipe, url), _HINT)
        scripted = _value(pipe, open_page(pipe, url), _HINT)
    assert not [words for words in _CONTROLS_NAMED[page] if words in plain], plain
    assert all(words in scripted for words in _CONTROLS_NAMED[page]), scripted
    assert " is named: #" in plain, plain  # what to write instead, by the same fragments the hint gives
