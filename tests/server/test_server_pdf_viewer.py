"""The viewer's page of a PDF in Chromium (issue 25): pdf.js draws it, pdi's text layer is laid over it.

Each state of the page is saved as a screenshot (``$PDI_SCREENSHOTS`` or
``tests/artifacts/screenshots/``) for a person to look at: a passage on
page 3 of ``tracemonkey.pdf`` scrolled to and marked, the collection
how-to's sentence marked and selected, a region of page 1 outlined, a
scan with no text layer, a selection named and a box drawn.
The select → cite round trips use real mouse events; the names the page
offers are checked against offsets counted on the text layer as
:mod:`pdi.fragments.pdf` makes it (the layer docs/pdf-text-layer.md
defines, checked against poppler in tests/test_fragments_pdf.py).
"""

from __future__ import annotations

import io
import json
import os
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from test_server_pages_screenshots import dark
from test_server_viewer_browser import _copied, _desktop, _drag, _js, _offered

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools
from pdi.fragments.pdf import text_layer

DATA = Path(__file__).resolve().parents[1] / "data" / "pdf"
SHOTS = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")
LAYER = text_layer((DATA / "tracemonkey.pdf").read_bytes())


def _until(pipe: Pipe, session: str, condition: str, seconds: float = 45) -> Any:
    """Wait until the JavaScript ``condition`` is true on the page (``seconds`` at most); what it was last."""
    deadline = time.monotonic() + seconds
    while True:
        value = _js(pipe, session, f"!!({condition})")
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def _shoot(pipe: Pipe, session: str, name: str) -> None:
    import base64

    shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / name).write_bytes(png)


def _open(pipe: Pipe, url: str) -> str:
    session = open_page(pipe, url)
    _desktop(pipe, session)
    return session


def _view(media: tuple[str, dict[str, str]], key: str, fragment: str = "") -> str:
    base, names = media
    return f"{base}/view?pdi={names[key]}" + (urllib.parse.quote("#" + fragment, safe="=,()") if fragment else "")


def _name(media: tuple[str, dict[str, str]], key: str) -> str:
    return urllib.parse.unquote(media[1][key])


IN_VIEW = "(e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })"


def test_a_passage_is_scrolled_to_and_marked_on_its_page(media: tuple[str, dict[str, str]]) -> None:
    start = LAYER.page_range(3)[0] + LAYER.text[LAYER.page_range(3)[0]:].index("Figure 3. LIR snippet")
    end = start + len("Figure 3. LIR snippet for sample program.")
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper", f"char={start},{end}"))
        marked = _until(pipe, session, f"document.getElementById('passage') && {IN_VIEW}(document.getElementById('passage'))")
        _shoot(pipe, session, "pdf-passage.png")
        assert marked, "the passage is not marked in view"
        facts = _js(pipe, session, """(() => ({
          page: document.getElementById('passage').closest('.pdf-page').id,
          marks: document.querySelectorAll('.pdf-marks .hl').length,
          drawn: [...document.querySelectorAll('.pdf-page')].filter(p => p.querySelector('canvas')).map(p => p.id),
          pages: document.querySelectorAll('.pdf-page').length,
          text: [...document.querySelectorAll('#page-3 .pdf-text span')].filter(s => +s.dataset.i >= START && +s.dataset.i < END)
                 .map(s => s.textContent).join(''),
        }))()""".replace("START", str(start)).replace("END", str(end)))
        dark(pipe, session, time.monotonic() + 30)  # the same for a system preferring a dark colour scheme, to look at
        _shoot(pipe, session, "pdf-passage-dark.png")
    assert facts["page"] == "page-3" and facts["pages"] == 14
    assert facts["marks"] >= 1
    assert facts["text"] == LAYER.text[start:end]  # the laid characters are the layer's
    # drawn a page at a time, as they come into view: not all fourteen
    assert "page-3" in facts["drawn"] and len(facts["drawn"]) < 14


def test_a_region_is_outlined_on_its_page(media: tuple[str, dict[str, str]]) -> None:
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper", "rect=(80,78),(531,116)"))
        outlined = _until(pipe, session, "document.getElementById('cited') && document.querySelector('#page-1 canvas')")
        time.sleep(0.5)
        _shoot(pipe, session, "pdf-region.png")
        assert outlined
        box, page = _js(pipe, session, "[document.getElementById('cited').getBoundingClientRect().toJSON(),"
                                       " document.getElementById('page-1').getBoundingClientRect().toJSON()]")
    scale = page["width"] / 612  # tracemonkey's pages are 612 x 792 points (pdfinfo)
    assert abs(box["left"] - page["left"] - 80 * scale) < 1.5 and abs(box["width"] - 451 * scale) < 1.5
    assert abs(box["top"] - page["top"] - 78 * scale) < 1.5 and abs(box["height"] - 38 * scale) < 1.5


def test_rfc8118_search_and_viewrect_are_marked_as_a_passage_and_a_region(media: tuple[str, dict[str, str]]) -> None:
    """``search="w"`` marks its first occurrence as a passage is marked; ``viewrect=l,t,w,h[,page]`` outlines
    its region as ``rect`` does (docs/pdf-text-layer.md §3)."""
    start = LAYER.text.lower().index("snippet")  # an ASCII word: its folded form is its lower case
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper", "search=%22Snippet%22"))
        marked = _until(pipe, session, f"document.getElementById('passage') && {IN_VIEW}(document.getElementById('passage'))")
        _shoot(pipe, session, "pdf-search.png")
        assert marked, "the word found is not marked in view"
        found = _js(pipe, session, """(() => ({
          page: document.getElementById('passage').closest('.pdf-page').id,
          text: [...document.querySelectorAll('.pdf-text span')].filter(s => +s.dataset.i >= START && +s.dataset.i < END)
                 .map(s => s.textContent).join(''),
        }))()""".replace("START", str(start)).replace("END", str(start + 7)))
        assert found == {"page": f"page-{LAYER.page_of(start)}", "text": LAYER.text[start:start + 7]}
        session = _open(pipe, _view(media, "paper", "viewrect=80,78,451,38,1"))
        outlined = _until(pipe, session, "document.getElementById('cited') && document.querySelector('#page-1 canvas')")
        time.sleep(0.5)
        _shoot(pipe, session, "pdf-viewrect.png")
        assert outlined
        box, page = _js(pipe, session, "[document.getElementById('cited').getBoundingClientRect().toJSON(),"
                                       " document.getElementById('page-1').getBoundingClientRect().toJSON()]")
    scale = page["width"] / 612  # as rect=(80,78),(531,116) above
    assert abs(box["left"] - page["left"] - 80 * scale) < 1.5 and abs(box["width"] - 451 * scale) < 1.5
    assert abs(box["top"] - page["top"] - 78 * scale) < 1.5 and abs(box["height"] - 38 * scale) < 1.5


def test_a_scan_says_it_has_no_text_layer_and_is_drawn(media: tuple[str, dict[str, str]]) -> None:
    with devtools() as pipe:
        session = _open(pipe, _view(media, "scan"))
        drawn = _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        time.sleep(1)
        _shoot(pipe, session, "pdf-scan.png")
        _js(pipe, session, "document.getElementById('page-1').scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        _shoot(pipe, session, "pdf-scan-page.png")
        assert drawn
        note = _js(pipe, session, "document.getElementById('no-layer').textContent")
    assert "No text layer" in note and "page and region" in note


def test_without_javascript_a_scans_note_names_no_box_to_draw(media: tuple[str, dict[str, str]]) -> None:
    """The note of a PDF with no text told the reader to draw a box on a page, a control only the script draws
    (not drawn without one): without a script it says what a region is named; with one it names the box."""
    from test_server_pages_without_script import _open_without_script

    with devtools() as pipe:
        plain = _js(pipe, _open_without_script(pipe, _view(media, "scan")), "document.getElementById('no-layer').innerText")
        scripted = _js(pipe, _open(pipe, _view(media, "scan")), "document.getElementById('no-layer').innerText")
    assert "No text layer" in plain and "draw a box" not in plain.lower(), plain
    assert "#rect=(x1,y1),(x2,y2),f" in plain, plain  # the fragment written by hand, as the hint below gives it
    assert "draw a box" in scripted.lower(), scripted


def test_select_text_on_a_page_names_the_passage_as_pdi_counts_it(media: tuple[str, dict[str, str]]) -> None:
    base, _ = media
    wanted = "Dynamic languages such as JavaScript"
    start = LAYER.text.index(wanted)
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-laid]')")
        _js(pipe, session, f"document.querySelector('#page-1 .pdf-text span[data-i=\"{start}\"]').scrollIntoView({{block: 'center'}})")
        # from the middle of "D" to the middle of the last "t", with the mouse
        first, last = _js(pipe, session, """(() => {
          const at = i => document.querySelector('#page-1 .pdf-text span[data-i="' + i + '"]').getBoundingClientRect();
          const a = at(FIRST), b = at(LAST);
          return [[a.left + a.width * 0.3, a.top + a.height / 2], [b.left + b.width * 0.7, b.top + b.height / 2]];
        })()""".replace("FIRST", str(start)).replace("LAST", str(start + len(wanted) - 1)))
        _drag(pipe, session, tuple(first), tuple(last))
        offered = _offered(pipe, session)
        _shoot(pipe, session, "pdf-select.png")
    name = f"{_name(media, 'paper')}#char={start},{start + len(wanted)}"
    assert offered == name
    got = httpx.get(f"{base}/uri-res/N2R?{name.replace('#', '%23')}", headers={"Accept": "text/plain"})
    assert got.status_code == 200 and got.text == wanted


def test_the_collection_howtos_sentence_is_marked_and_selecting_it_cites_it(media: tuple[str, dict[str, str]]) -> None:
    """docs/how-to/collection.md's citation, ``#char=654,751`` of the paper: the abstract's first sentence, across a
    line end whose hyphen PDFium marks (``com-`` CR LF ``pile``, docs/pdf-text-layer.md). Opened at it, the viewer
    marks every character of it on page 1, in view (saved as ``pdf-sentence.png``); selected with the mouse from its
    "D" to its full stop, the Cite panel names it so and its copy button copies that name."""
    base, _ = media
    sentence = "Dynamic languages such as JavaScript are more difficult to com-\r\npile than statically typed ones."
    start = LAYER.text.index(sentence)
    end = start + len(sentence)
    assert (start, end) == (654, 751)  # the how-to's numbers, on the layer as pdi.fragments.pdf makes it
    name = f"{_name(media, 'paper')}#char={start},{end}"
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper", f"char={start},{end}"))
        marked = _until(pipe, session, f"document.getElementById('passage') && {IN_VIEW}(document.getElementById('passage'))"
                                       " && document.querySelector('#page-1 canvas')")
        time.sleep(0.5)
        _shoot(pipe, session, "pdf-sentence.png")
        assert marked, "the sentence is not marked in view"
        facts = _js(pipe, session, """(() => {
          const spans = [...document.querySelectorAll('#page-1 .pdf-text span')]
            .filter(s => +s.dataset.i >= START && +s.dataset.i < END);
          const marks = [...document.querySelectorAll('#page-1 .pdf-marks .hl')].map(m => m.getBoundingClientRect());
          const inside = (r, m) => { const x = r.left + r.width / 2, y = r.top + r.height / 2;
                                     return x >= m.left && x <= m.right && y >= m.top && y <= m.bottom; };
          const shown = spans.filter(s => s.getBoundingClientRect().width > 0 && s.textContent.trim());
          return {
            page: document.getElementById('passage').closest('.pdf-page').id,
            text: spans.map(s => s.textContent).join(''),
            shown: shown.length,
            unmarked: shown.filter(s => !marks.some(m => inside(s.getBoundingClientRect(), m))).map(s => s.textContent),
            lines: new Set(marks.map(m => Math.round(m.top))).size,
            stray: [...document.querySelectorAll('#page-1 .pdf-text span')]
              .filter(s => (+s.dataset.i < START - 1 || +s.dataset.i > END) && s.textContent.trim()
                           && marks.some(m => inside(s.getBoundingClientRect(), m))).map(s => s.dataset.i),
          };
        })()""".replace("START", str(start)).replace("END", str(end)))
        assert facts["page"] == "page-1"
        assert facts["text"] == sentence, facts["text"]  # the laid characters are the layer's
        assert facts["shown"] > 80 and facts["unmarked"] == [], facts
        assert facts["lines"] >= 2 and facts["stray"] == [], facts  # both lines marked, nothing around them

        # the reader's way to the name: select the sentence with the mouse, and the Cite panel's copy button
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-laid]')")
        _js(pipe, session, f"document.querySelector('#page-1 .pdf-text span[data-i=\"{start}\"]').scrollIntoView({{block: 'center'}})")
        first, last = _js(pipe, session, """(() => {
          const at = i => document.querySelector('#page-1 .pdf-text span[data-i="' + i + '"]').getBoundingClientRect();
          const a = at(FIRST), b = at(LAST);
          return [[a.left + a.width * 0.3, a.top + a.height / 2], [b.left + b.width * 0.7, b.top + b.height / 2]];
        })()""".replace("FIRST", str(start)).replace("LAST", str(end - 1)))
        _drag(pipe, session, tuple(first), tuple(last))
        offered = _offered(pipe, session)
        _shoot(pipe, session, "pdf-sentence-selected.png")
        copied = _copied(pipe, session, base)
    assert offered == name
    assert copied == name
    got = httpx.get(f"{base}/uri-res/N2R?{name.replace('#', '%23')}", headers={"Accept": "text/plain"})
    assert got.status_code == 200 and got.text == sentence


def test_drag_a_box_on_a_page_names_the_region_in_points(media: tuple[str, dict[str, str]]) -> None:
    base, _ = media
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-laid]')")
        _js(pipe, session, "document.getElementById('pdf-box-mode').click()")
        _js(pipe, session, "document.getElementById('page-1').scrollIntoView({block: 'start'})")
        page = _js(pipe, session, "document.getElementById('page-1').getBoundingClientRect().toJSON()")
        scale = page["width"] / 612
        # the title's two lines, pdftotext -bbox: x 80.5 to 529.6, y 79.0 to 115.0 points from the top-left
        start = (page["left"] + 78 * scale, page["top"] + 76 * scale)
        end = (page["left"] + 532 * scale, page["top"] + 118 * scale)
        # not under the cite panel, which stays at the top of the window
        assert _js(pipe, session, f"document.elementFromPoint({start[0]}, {start[1]}).closest('#page-1') !== null")
        _drag(pipe, session, start, end)
        offered = _offered(pipe, session)
        _shoot(pipe, session, "pdf-box.png")
    assert offered == f"{_name(media, 'paper')}#rect=(78,76),(532,118)"
    got = httpx.get(f"{base}/uri-res/N2R?{offered.replace('#', '%23')}", headers={"Accept": "text/plain"})
    assert got.status_code == 200
    assert got.text == "Trace-based Just-in-Time Type Specialization for Dynamic\r\nLanguages"
    assert json.loads(httpx.get(f"{base}/api/resolve", params={"pdi": offered}).text)["fragment"]["region"]["frame"] == 0


def test_a_region_typed_by_page_and_corners_is_named_and_shown_on_its_page(media: tuple[str, dict[str, str]]) -> None:
    base, _ = media
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        # the keyboard's way: page 2, the corners around its first word, "Hence," (pdftotext -bbox: 54.0-79.1 pt
        # across, 73.9-81.9 down), typed, each a change
        _js(pipe, session, """(() => {
          const set = (id, v) => { const i = document.getElementById(id); i.focus(); i.value = v;
                                   i.dispatchEvent(new Event("change")); };
          set("pdf-region-page", 2); set("pdf-x1", 53); set("pdf-y1", 73); set("pdf-x2", 80); set("pdf-y2", 83);
        })()""")
        offered = _offered(pipe, session)
        shown = _until(pipe, session, "(b => b && !b.hidden)(document.querySelector('#page-2 .box.selection'))")
        _shoot(pipe, session, "pdf-typed-region.png")
    assert offered == f"{_name(media, 'paper')}#rect=(53,73),(80,83),1"
    assert shown, "the typed region is not shown on page 2"
    got = httpx.get(f"{base}/uri-res/N2R?{offered.replace('#', '%23')}", headers={"Accept": "text/plain"})
    assert got.text == "Hence,"


def test_a_page_fragment_opens_the_viewer_at_that_page(media: tuple[str, dict[str, str]]) -> None:
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper", "page=5"))
        drawn = _until(pipe, session, "document.querySelector('#page-5[data-drawn]')")
        top, panel = _js(pipe, session, "[document.getElementById('page-5').getBoundingClientRect().top,"
                                        " document.querySelector('.cite').getBoundingClientRect().bottom]")
        _shoot(pipe, session, "pdf-page.png")
    assert drawn
    assert panel <= top < panel + 100, (top, panel)  # at the top of the window, wholly below the cite panel there


def test_a_region_of_a_turned_page_is_outlined_where_its_characters_are_drawn(media: tuple[str, dict[str, str]]) -> None:
    from pdi.fragments import evaluate

    # rotation.pdf's page 2 has /Rotate 90: its lines run up the page in its own points (x about 97, from 716
    # points below its top upwards), and across the screen once turned. The region is named before /Rotate
    # (docs/pdf-text-layer.md §3).
    rect = [(90, 600), (105, 720), 1]
    data = (DATA / "rotation.pdf").read_bytes()
    selected = evaluate("rect", rect, data, media_type="application/pdf")
    assert selected.data.decode().startswith("This is my")
    offsets = [i for r in selected.ranges for i in range(r.start, r.end)]
    with devtools() as pipe:
        session = _open(pipe, _view(media, "turned", "rect=(90,600),(105,720),1"))
        assert _until(pipe, session, "document.getElementById('cited') && document.querySelector('#page-2[data-laid]')")
        box = _js(pipe, session, "document.getElementById('cited').getBoundingClientRect().toJSON()")
        centres = _js(pipe, session, """OFFSETS.map(i => {
          const s = document.querySelector('#page-2 .pdf-text span[data-i="' + i + '"]');
          if (!s || s.classList.contains('gen')) return null;  // a generated character has no box of its own
          const r = s.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];
        }).filter(c => c)""".replace("OFFSETS", json.dumps(offsets)))
        _shoot(pipe, session, "pdf-turned-region.png")
    assert box["width"] > 4 * box["height"]  # 15 x 120 points before /Rotate: 120 across, 15 down on the screen
    # rendered, the region is turned as the page is shown: 120 points across, 15 down, at 2 pixels a point
    png = httpx.get(f"{media[0]}/uri-res/N2R?{_name(media, 'turned')}%23rect=(90,600),(105,720),1",
                    headers={"Accept": "image/png"})
    assert png.status_code == 200, png.text
    assert Image.open(io.BytesIO(png.content)).size == (240, 30)
    assert len(centres) >= 8
    for x, y in centres:
        assert box["left"] <= x <= box["right"] and box["top"] <= y <= box["bottom"], (x, y, box)


def test_a_page_whose_rotate_is_no_multiple_of_90_is_turned_as_pdi_renders_it(media: tuple[str, dict[str, str]]) -> None:
    # /Rotate 91 (ISO 32000-1 Table 30: "shall be a multiple of 90"): pdf.js would draw the 200 × 400 point page
    # unturned, PDFium turns it a quarter, as pdi's size of it and its rendering (tests/test_fragments_pdf_rotate.py)
    base = media[0]
    png = httpx.get(f"{base}/uri-res/N2R?{_name(media, 'askew')}%23page=1", headers={"Accept": "image/png"})
    assert png.status_code == 200, png.text
    assert Image.open(io.BytesIO(png.content)).size == (800, 400)
    with devtools() as pipe:
        session = _open(pipe, _view(media, "askew"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-laid]')")
        canvas, word = _js(pipe, session, """[document.querySelector('#page-1 canvas').getBoundingClientRect().toJSON(),
          [...document.querySelectorAll('#page-1 .pdf-text span')].filter(s => !s.classList.contains('gen'))
            .map(s => s.getBoundingClientRect().toJSON())]""")
        _shoot(pipe, session, "pdf-askew.png")
    assert abs(canvas["width"] / canvas["height"] - 2) < 0.01, canvas  # 400 × 200 points once turned
    # "Hi", 10 points from the page's left edge and 36 to 60 below its top before /Rotate: turned clockwise, near
    # the right edge (36 to 60 of 400 points from it) and in the top tenth (10 to about 30 of 200 points)
    assert len(word) == 2
    for box in word:
        assert canvas["right"] - 0.2 * canvas["width"] < box["left"] < canvas["right"], (box, canvas)
        assert canvas["top"] < box["top"] < canvas["top"] + 0.2 * canvas["height"], (box, canvas)


def test_a_region_of_a_page_with_a_user_unit_is_outlined_where_its_characters_are_drawn(
        media: tuple[str, dict[str, str]]) -> None:
    # /UserUnit 2 (ISO 32000-1 §8.3.2.3): pdf.js scales its viewport by 2, PDFium and pdi do not; a region is in units
    # of user space (docs/pdf-text-layer.md §3), and the viewer places it through pdf.js's viewport: on "Hi", 10 to
    # about 36 units from the left, 340 to 364 up from the bottom of the 400-unit page
    with devtools() as pipe:
        session = _open(pipe, _view(media, "large", "rect=(0,30),(60,80)"))
        assert _until(pipe, session, "document.getElementById('cited') && document.querySelector('#page-1[data-laid]')")
        box, canvas, centres = _js(pipe, session, """[document.getElementById('cited').getBoundingClientRect().toJSON(),
          document.querySelector('#page-1 canvas').getBoundingClientRect().toJSON(),
          [...document.querySelectorAll('#page-1 .pdf-text span')].filter(s => !s.classList.contains('gen'))
            .map(s => { const r = s.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })]""")
        _shoot(pipe, session, "pdf-user-unit-region.png")
    scale = canvas["width"] / 200  # CSS pixels a unit of user space, as drawn
    assert abs(canvas["height"] - 400 * scale) < 1
    assert abs(box["left"] - canvas["left"]) < 1 and abs(box["width"] - 60 * scale) < 1, (box, canvas)
    assert abs(box["top"] - canvas["top"] - 30 * scale) < 1 and abs(box["height"] - 50 * scale) < 1, (box, canvas)
    assert len(centres) == 2
    for x, y in centres:
        assert box["left"] <= x <= box["right"] and box["top"] <= y <= box["bottom"], (x, y, box)


def test_draw_a_box_stays_at_hand_on_a_page_far_down(media: tuple[str, dict[str, str]]) -> None:
    # the panel of names stays at the top of the window as the reader scrolls the pages (desktop); the button that
    # turns to drawing a box, which its hint names, stays with it, in view and not under it
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        _js(pipe, session, "document.getElementById('page-5').scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        shown = _js(pipe, session, """(() => { const b = document.getElementById('pdf-box-mode'), r = b.getBoundingClientRect();
            return [scrollY > 2000, r.top >= 0 && r.bottom <= innerHeight,
                    document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === b]; })()""")
        _shoot(pipe, session, "pdf-page-5-box-mode.png")
        _js(pipe, session, "document.getElementById('pdf-box-mode').click()")
        pressed = _js(pipe, session, "document.getElementById('pdf-box-mode').getAttribute('aria-pressed')")
    assert shown == [True, True, True], shown
    assert pressed == "true"


#: The sticky panel of names on a PDF's page: [the room above its first child, the room below its last child that
#: shows something (text, a control)], in CSS px, each from the panel's border edge.
PANEL_ROOM = """(() => { const panel = document.querySelector('section.cite'), p = panel.getBoundingClientRect();
  const shown = [...panel.children].filter((e) => { const r = e.getBoundingClientRect();
    return r.height > 0 && (e.innerText.trim() !== '' || e.querySelector('input, button') !== null); });
  return [shown[0].getBoundingClientRect().top - p.top, p.bottom - shown[shown.length - 1].getBoundingClientRect().bottom,
          shown[shown.length - 1].classList[0]]; })()"""


def test_the_panel_of_names_ends_below_draw_a_box_as_it_begins_above_its_hint(media: tuple[str, dict[str, str]]) -> None:
    # desktop: the panel stays at the top of the window over the pages, so each empty line in it hides a line of the
    # PDF; below "Draw a box" (its last line until something is said) there is as much room as above its first line
    # (its padding), not an empty status line's height more
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        above, below, last = _js(pipe, session, PANEL_ROOM)
        _shoot(pipe, session, "pdf-panel.png")
        _js(pipe, session, "document.getElementById('pdf-box-mode').click()")  # something said: shown, in the panel
        said = _js(pipe, session, "(() => { const s = document.getElementById('cite-status').getBoundingClientRect(),"
                   " p = document.querySelector('section.cite').getBoundingClientRect();"
                   " return [s.height > 10, s.bottom <= p.bottom]; })()")
    assert last == "pdf-tools"
    assert abs(below - above) <= 1, (above, below)
    assert said == [True, True]


#: The panel of names on a PDF's page: [the room between the PDI's row and "Other forms", the room between "Other
#: forms" and the row of "Draw a box"], in CSS px.
ROWS_ROOM = """(() => { const top = (e) => e.getBoundingClientRect().top, bottom = (e) => e.getBoundingClientRect().bottom;
  const offer = document.getElementById('name').closest('.offer'), forms = document.getElementById('other-forms');
  const tools = document.querySelector('.pdf-tools');
  return [top(forms) - bottom(offer), top(tools) - bottom(forms)]; })()"""


def test_draw_a_box_stands_as_close_under_other_forms_as_other_forms_under_the_pdi(
    media: tuple[str, dict[str, str]],
) -> None:
    # the panel's rows are spaced alike: "Draw a box" had a paragraph's 1 em above it (about 20 px of empty room
    # under "Other forms"), where the rows above it have 0.3 rem between them
    with devtools() as pipe:
        session = _open(pipe, _view(media, "paper"))
        assert _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        forms, tools = _js(pipe, session, ROWS_ROOM)
        _shoot(pipe, session, "pdf-panel-rows.png")
    assert forms > 0 and abs(tools - forms) <= 1, (forms, tools)


def test_a_pdf_whose_page_tree_viewers_read_differently_offers_no_page_or_box(
        media: tuple[str, dict[str, str]]) -> None:
    """A PDF whose page tree PDFium and pdf.js read differently (here a /Count of 3 over 2 pages: PDFium counts 3
    pages, pdf.js 2) has no page or region cited (pdi.fragments.pdf_positions.cite_pages_of): its viewer said
    nothing of it and offered "Draw a box", whose every box the server then refused. Now the page says why, draws
    no box button nor region form, lays no text over pdf.js's pages (its page n may not be PDFium's, whose
    characters the text layer holds: a selection would name other text than the one seen), and shows a passage
    named as text."""
    with devtools() as pipe:
        session = _open(pipe, _view(media, "tree", "char=0,2"))
        drawn = _until(pipe, session, "document.querySelector('#page-1[data-drawn]')")
        time.sleep(0.5)
        _shoot(pipe, session, "pdf-page-tree.png")
        _js(pipe, session, "window.scrollTo(0, 0)")
        time.sleep(0.3)
        _shoot(pipe, session, "pdf-page-tree-note.png")
        facts = _js(pipe, session, """(() => ({
          count: document.querySelector('.pdf-count').innerText,
          drawn: document.querySelectorAll('.pdf-page').length,
          note: (document.getElementById('page-tree') || {}).innerText || '',
          box: !!document.getElementById('pdf-box-mode'),
          region: !!document.getElementById('pdf-region-page'),
          laid: document.querySelectorAll('.pdf-text span').length,
          cited: (document.getElementById('pdf-cited') || {}).innerText || '',
        }))()""")
    assert drawn, "pdf.js did not draw its first page"
    assert "pdi cites no page or region of this PDF" in facts["note"], facts
    assert "its page tree is not one PDFium" in facts["note"] and "/Count is 3" in facts["note"], facts
    assert not facts["box"] and not facts["region"], facts
    assert facts["laid"] == 0, facts  # no character of PDFium's pages over pdf.js's
    assert facts["cited"] == "p1", facts  # char=0,2 of the text layer: page 1's word, as tree_pdf draws it
    # pdf.js draws the 2 pages it reads, and the count is not PDFium's 3
    assert facts["drawn"] == 2 and "3 pages" not in facts["count"], facts
