"""One citable name per selection, in Chromium: the PDI shown, its other forms under "Other forms", each one
followed (resolved through the API) to the same passage, region or stretch (issue 26, item 4).

Every expected number is worked out here from the text or the pixels themselves: a PDI ``char`` position counts
the code points of the CRLF-canonical text (PDI-GRAMMAR.md §3), RFC 5147 counts a line end as one character,
Media Fragments' ``xywh`` is left, top, width and height, and ``t`` is seconds.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

import httpx
from server_helpers import S, Served
from test_server_keyboard import FOCUSED, _key, _keyboard_tab, _tab_to
from test_server_pdf_viewer import LAYER, _shoot, _until
from test_server_viewer_browser import OFFERED, _desktop, _js, _offered, _select

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools

#: A text deposited with CR LF line ends: nine lines, one of them with a character outside the BMP.
CRLF_LINES = [f"Line {i}: the quick brown fox jumps over the lazy dog {'𝕚' if i == 3 else ''}number {i}." for i in range(9)]
CRLF_TEXT = "".join(line + "\r\n" for line in CRLF_LINES)

#: The other forms once each is checked: id -> [state, value, what it says when there is none].
FORMS = """
(async () => {
  const until = performance.now() + 20000;
  const rows = () => [...document.querySelectorAll("#name, #other-forms input")];
  while (rows().some((i) => !["verified", "none", "error"].includes(i.dataset.state)) && performance.now() < until)
    await new Promise((r) => setTimeout(r, 25));
  return Object.fromEntries(rows().map((i) => [i.id, [i.dataset.state, i.value, i.dataset.error || ""]]));
})()
"""


def _typed(pipe: Pipe, session: str, values: tuple[tuple[str, object], ...]) -> None:
    """Type each value in the input of its id, each a change, as the keyboard's way of giving corners or times."""
    for key, value in values:
        _js(pipe, session, f"(() => {{ const i = document.getElementById('{key}'); i.value = '{value}';"
                           " i.dispatchEvent(new Event('change')); })()")


def _forms(pipe: Pipe, session: str) -> dict[str, list[str]]:
    return dict(_js(pipe, session, FORMS))


def _resolved_text(served: Served, name: str) -> str:
    """What a name resolves to through the API, as text (the alias read as the native name it equals)."""
    answer = httpx.get(f"{served.url}/api/resolve", params={"pdi": name})
    assert answer.status_code == 200, answer.text
    native = answer.json()["pdi"]
    return httpx.get(f"{served.url}/uri-res/N2R?{native.replace('%', '%25').replace('#', '%23')}").content.decode()


def _panel(pipe: Pipe, session: str) -> list[Any]:
    return list(_js(pipe, session, "[document.getElementById('other-forms').open,"
                                   " document.getElementById('why').textContent]"))


def test_a_crlf_text_offers_one_name_and_its_other_forms_each_naming_the_same_passage(served: Served) -> None:
    name = str(served.archive.add(S, CRLF_TEXT.encode(), format="text"))
    wanted_lf = "jumps over the lazy dog 𝕚number 3.\nLine 4"  # as the page shows it (LF)
    wanted = wanted_lf.replace("\n", "\r\n")  # as deposited
    start = CRLF_TEXT.index(wanted)  # code points: str indexes count them, and CR and LF are each one
    end = start + len(wanted)
    rfc_start = start - CRLF_TEXT[:start].count("\r\n")  # a CR LF is one character
    rfc_end = end - CRLF_TEXT[:end].count("\r\n")
    assert (start, end, rfc_start, rfc_end) == (217, 259, 214, 255)  # 3 lines of 61 + CR LF, "Line 3: the quick brown fox "
    primary = f"{name}#char={start},{end}"
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        _desktop(pipe, session)
        assert _select(pipe, session, wanted_lf) == primary
        forms = _forms(pipe, session)
        opened, why = _panel(pipe, session)
        # open its other forms, as a reader would, and keep the picture
        _js(pipe, session, "document.getElementById('other-forms').open = true")
        _js(pipe, session, "document.querySelector('section.cite').scrollIntoView({block: 'start'})")
        _shoot(pipe, session, "text-other-forms.png")
    # one name shown; the others folded away, with the reason they differ
    assert opened is False
    assert "RFC 5147 counts a line end as one character" in why and "deposited with CR LF line ends" in why
    assert forms["name"] == ["verified", primary, ""]
    assert {k: v[0] for k, v in forms.items()} == {
        "name": "verified", "rfc5147": "verified", "textfrag": "verified", "annotation": "verified"}
    # RFC 5147: the resolver's copy, positions with a CR LF counted once
    rfc = forms["rfc5147"][1]
    assert rfc.startswith(f"{served.url}/uri-res/N2R?{name}#char={rfc_start},{rfc_end};length=")
    checked = httpx.get(f"{served.url}/api/rfc5147", params={"pdi": name, "fragment": rfc.split("#", 1)[1]}).json()
    assert checked["text"] == wanted and checked["integrity"] == "ok"
    # the text fragment: a PDI with a browser's #:~:text=, resolved to the same characters
    fragment = forms["textfrag"][1]
    assert fragment.startswith(name + "#:~:text=")
    assert httpx.get(f"{served.url}/api/resolve", params={"pdi": fragment}).json()["pdi"] == primary
    assert _resolved_text(served, fragment) == wanted
    # the W3C selectors: each selects the passage, counted as its own spec counts
    selectors = {s["type"]: s for s in json.loads(forms["annotation"][1])}
    assert selectors["TextQuoteSelector"]["exact"] == wanted
    position = selectors["TextPositionSelector"]
    assert CRLF_TEXT[position["start"]:position["end"]] == wanted
    assert selectors["FragmentSelector"]["value"] == f"char={rfc_start},{rfc_end}"
    assert CRLF_TEXT.replace("\r\n", "\n")[rfc_start:rfc_end] == wanted_lf


def test_each_form_of_a_text_selection_opens_on_the_same_passage(served: Served) -> None:
    # "Hello, world.\nSecond 𝕚 line.\n…" (LF): "world" is PDI characters 7 to 12; its forms, opened in the viewer
    # (the text fragment read as the char name it equals), mark the same word
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        assert _select(pipe, session, "world") == served.text + "#char=7,12"
        forms = _forms(pipe, session)
        why = _panel(pipe, session)[1]
        href = _js(pipe, session, "document.getElementById('open-textfrag').href")
        opened = open_page(pipe, href)
        marked = _js(pipe, opened, "[document.getElementById('passage').textContent, document.getElementById('alias').textContent]")
    assert "deposited with LF line ends" in why
    assert forms["textfrag"] == ["verified", served.text + "#:~:text=world", ""]
    assert marked[0] == "world" and "#char=7,12" in marked[1]


def test_a_text_fragment_is_given_the_words_around_it_when_its_words_stand_earlier_too(served: Served) -> None:
    name = str(served.archive.add(S, CRLF_TEXT.encode(), format="text"))
    wanted = "the lazy dog"  # on every line: the one on line 5 needs the words around it
    start = CRLF_TEXT.index("Line 5: ") + CRLF_TEXT[CRLF_TEXT.index("Line 5: "):].index(wanted)
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        _js(pipe, session, """(() => { const t = document.getElementById("text").firstChild;
            const at = t.data.indexOf("the lazy dog", t.data.indexOf("Line 5: ")); const r = document.createRange();
            r.setStart(t, at); r.setEnd(t, at + 12); document.getSelection().removeAllRanges();
            document.getSelection().addRange(r); })()""")
        forms = _forms(pipe, session)
    assert forms["name"][1] == f"{name}#char={start},{start + len(wanted)}"
    fragment = forms["textfrag"][1]
    # the three words before it on its line ("fox jumps over") and after it ("number 5."): the one on line 5 alone
    assert fragment == name + "#:~:text=fox%20jumps%20over-,the%20lazy%20dog,-number%205."
    assert httpx.get(f"{served.url}/api/resolve", params={"pdi": fragment}).json()["pdi"] == forms["name"][1]


def test_a_selection_inside_a_word_is_quoted_with_its_word_around_it(served: Served) -> None:
    # "orl" of "world": a text directive's start matches at a word's start unless a prefix stands right before
    # it (WICG Text Fragments §3.6.1, "find a range from a text directive"): "Hello, w" is that prefix
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        assert _select(pipe, session, "orl") == served.text + "#char=8,11"
        forms = _forms(pipe, session)
    assert forms["textfrag"] == ["verified", served.text + "#:~:text=Hello%2C%20w-,orl,-d.", ""]
    assert _resolved_text(served, forms["textfrag"][1]) == "orl"
    assert forms["rfc5147"][0] == forms["annotation"][0] == "verified"


def test_a_selection_starting_with_white_space_has_no_text_fragment_and_says_why(served: Served) -> None:
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        assert _select(pipe, session, " world") == served.text + "#char=6,12"
        forms = _forms(pipe, session)
        placeholder = _js(pipe, session, "document.getElementById('textfrag').placeholder")
    assert forms["textfrag"][0] == "none" and forms["textfrag"][1] == ""
    assert placeholder.startswith("none for this selection: a text fragment quotes whole words")
    assert forms["rfc5147"][0] == forms["annotation"][0] == "verified"


def test_an_image_region_offers_rect_and_its_media_fragment_and_selector(served: Served) -> None:
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.picture, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        _typed(pipe, session, (("x1", 2), ("y1", 3), ("x2", 40), ("y2", 9)))
        forms = _forms(pipe, session)
        why = _panel(pipe, session)[1]
        _desktop(pipe, session)
        _js(pipe, session, "document.getElementById('other-forms').open = true")
        _js(pipe, session, "document.querySelector('section.cite').scrollIntoView({block: 'start'})")
        _shoot(pipe, session, "image-other-forms.png")
    primary = served.picture + "#rect=(2,3),(40,9)"
    assert forms["name"] == ["verified", primary, ""]
    # xywh: left 2, top 3, width 40 - 2, height 9 - 3
    assert forms["mediafrag"] == ["verified", served.picture + "#xywh=2,3,38,6", ""]
    assert httpx.get(f"{served.url}/api/resolve", params={"pdi": forms["mediafrag"][1]}).json()["pdi"] == primary
    assert json.loads(forms["annotation"][1])["value"] == "xywh=pixel:2,3,38,6"
    assert "#crop=" in why and "#xywh=" in why


def test_a_stretch_of_sound_offers_sec_and_its_media_fragment(served: Served) -> None:
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.sound, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        _typed(pipe, session, (("start", "0.5"), ("end", "2")))
        forms = _forms(pipe, session)
    primary = served.sound + "#msec=500,2000"
    assert forms["name"] == ["verified", primary, ""]
    assert forms["mediafrag"] == ["verified", served.sound + "#t=0.5,2", ""]
    assert httpx.get(f"{served.url}/api/resolve", params={"pdi": forms["mediafrag"][1]}).json()["pdi"] == primary
    assert json.loads(forms["annotation"][1])["value"] == "t=npt:0.5,2"


def test_the_source_of_an_html_page_offers_a_text_fragment_where_the_selection_is_text(served: Served) -> None:
    # served.page is "<p id=a>one<p>two</p>": "two" is source characters 14 to 17, and text a reader sees
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.page, safe='')}&view=source")
        assert _select(pipe, session, "two") == served.page + "#char=14,17"
        forms = _forms(pipe, session)
        assert _select(pipe, session, "one<p>two") == served.page + "#char=8,17"
        markup = _forms(pipe, session)
    assert forms["textfrag"] == ["verified", served.page + "#:~:text=two", ""]
    assert httpx.get(f"{served.url}/api/resolve", params={"pdi": forms["textfrag"][1]}).json()["pdi"] == served.page + "#char=14,17"
    assert forms["annotation"][0] == "verified"
    assert "rfc5147" not in forms
    # a selection holding markup: no text fragment names it (its text is in two blocks), and none is offered
    assert markup["name"][0] == "verified" and markup["textfrag"][0] == "none"


def test_a_clip_of_a_video_offers_its_media_fragment(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    video = urllib.parse.unquote(names["video"])  # the fixture's names are quoted for a URL
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/view?pdi={names['video']}")
        _typed(pipe, session, (("start", "1"), ("end", "2.5")))
        forms = _forms(pipe, session)
    primary = video + "#msec=1000,2500"
    assert forms["name"] == ["verified", primary, ""]
    assert forms["mediafrag"] == ["verified", video + "#t=1,2.5", ""]
    assert httpx.get(f"{base}/api/resolve", params={"pdi": forms["mediafrag"][1]}).json()["pdi"] == primary


# --- select → cite with the keyboard alone ----------------------------------------------------------------


def test_a_passage_is_selected_and_cited_with_the_keyboard_alone(served: Served) -> None:
    # "Hello, world.\nSecond 𝕚 line.\n…": Tab into the text, seven steps right (past "Hello, "), five more with
    # Shift ("world"), Enter: the name is #char=7,12 (PDI characters of the CRLF-canonical text), said in the status
    with devtools() as pipe:
        session = _keyboard_tab(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        visited = _tab_to(pipe, session, "text")
        assert visited[-1][3] and visited[-1][4], visited[-1]  # the text's focus is drawn (:focus-visible, an outline)
        # the button that cites, and the keys, were on the way: a reader meets them before the text
        assert "cite-selection" in [v[1] for v in visited]
        for _ in range(7):
            _key(pipe, session, "ArrowRight", 39)
        for _ in range(5):
            _key(pipe, session, "ArrowRight", 39, shift=True)
        assert _js(pipe, session, "document.getSelection().toString()") == "world"
        caret = _js(pipe, session, "(() => { const c = document.querySelector('.caret'); return !c.hidden && c.offsetHeight > 0; })()")
        assert caret is True  # the caret the page draws is shown at the selection's moving end
        _key(pipe, session, "Enter", 13, "\r")
        assert _offered(pipe, session) == served.text + "#char=7,12"
        status = _js(pipe, session, "[document.getElementById('cite-status').textContent,"
                                    " document.getElementById('cite-status').getAttribute('aria-live')]")
        assert status == ["Resolved and checked: " + served.text + "#char=7,12", "polite"]
        assert json.loads(_js(pipe, session, FOCUSED))[1] == "text"  # the focus stays in the text
        _js(pipe, session, "scrollTo(0, 0)")
        _shoot(pipe, session, "text-keyboard-cite.png")
        # Shift+Down extends it onto the next line; Enter names that; the name resolves to what is selected
        _key(pipe, session, "ArrowDown", 40, shift=True)
        selected = _js(pipe, session, "document.getSelection().toString()")
        assert selected.startswith("world.\nSecond") and "\n" in selected
        _key(pipe, session, "Enter", 13, "\r")
        name = str(_js(pipe, session, OFFERED.replace("BEFORE", json.dumps(served.text + "#char=7,12"))))
    got = httpx.get(f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}").content
    assert got == selected.replace("\n", "\r\n").encode(), name
    start, end = map(int, name.split("#char=")[1].split(","))
    assert (start, end - start) == (7, len(selected.replace("\n", "\r\n")))  # 𝕚 is one code point, two UTF-16 units


def test_enter_with_no_selection_says_how_to_make_one(served: Served) -> None:
    with devtools() as pipe:
        session = _keyboard_tab(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        _tab_to(pipe, session, "text")
        _key(pipe, session, "Enter", 13, "\r")
        said = _js(pipe, session, "document.getElementById('cite-status').textContent")
    assert said.startswith("Select a passage first: Shift with the arrow keys")


def test_a_passage_of_a_pdf_offers_its_w3c_selector(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    paper = urllib.parse.unquote(names["paper"])
    wanted = "Dynamic languages such as JavaScript"
    start = LAYER.text.index(wanted)  # characters of the PDF's text layer, as the PDI counts them
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/view?pdi={names['paper']}")
        _desktop(pipe, session)
        assert _until(pipe, session, "document.querySelector('#page-1[data-laid]')")
        _js(pipe, session, f"""(() => {{ const at = (i) => document.querySelector('#page-1 .pdf-text span[data-i="' + i + '"]');
            const r = document.createRange(); r.setStart(at({start}).firstChild, 0);
            r.setEnd(at({start + len(wanted) - 1}).firstChild, 1);
            document.getSelection().removeAllRanges(); document.getSelection().addRange(r); }})()""")
        forms = _forms(pipe, session)
    primary = f"{paper}#char={start},{start + len(wanted)}"
    assert forms["name"] == ["verified", primary, ""]
    assert forms["annotation"][0] == "verified", forms["annotation"]
    selectors = {s["type"]: s for s in json.loads(forms["annotation"][1])}
    assert selectors["TextQuoteSelector"]["exact"] == wanted
    position = selectors["TextPositionSelector"]
    assert LAYER.text[position["start"]:position["end"]] == wanted
    exported = httpx.get(f"{base}/api/annotation", params={"pdi": primary}).json()
    assert [r["pdi"] for r in httpx.post(f"{base}/api/annotation", json=exported).json()["results"]] == [primary]


def test_the_other_forms_fit_a_phone(served: Served) -> None:
    # 390 CSS pixels wide: the panel, its other forms open, stays within the window (each name's box under its label)
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        size = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        assert _select(pipe, session, "world") == served.text + "#char=7,12"
        _forms(pipe, session)
        _js(pipe, session, "document.getElementById('other-forms').open = true")
        _js(pipe, session, "document.querySelector('section.cite').scrollIntoView({block: 'start'})")
        widest = _js(pipe, session, "Math.max(...[...document.querySelectorAll('section.cite *')]"
                                    ".map((e) => e.getBoundingClientRect().right))")
        boxes = _js(pipe, session, "[...document.querySelectorAll('section.cite .offer input')].map((i) => i.clientWidth)")
        # the name longer than its box: its end, the fragment, in view; the status said whole, not cut off
        end = _js(pipe, session, "(() => { const i = document.getElementById('name');"
                                 " return [i.scrollWidth > i.clientWidth, i.scrollLeft + i.clientWidth >= i.scrollWidth - 1]; })()")
        status = _js(pipe, session, "(() => { const s = document.getElementById('cite-status');"
                                    " return [s.textContent, s.scrollWidth <= s.clientWidth, s.scrollHeight <= s.clientHeight]; })()")
        _shoot(pipe, session, "text-other-forms-phone.png")
    assert widest <= 390, widest
    assert min(boxes) > 200, boxes  # wide enough to read the start of a name
    assert end == [True, True], end
    assert status[0].endswith("#char=7,12") and status[1:] == [True, True], status


def test_the_status_says_a_long_name_whole_on_a_desktop(media: tuple[str, dict[str, str]]) -> None:
    # an e-mail named by its Message-ID: "Resolved and checked: NAME#char=0,16" is wider than the panel at 1100 px;
    # its end, the fragment the reader chose, must be read, not cut off by an ellipsis
    base, names = media
    email = urllib.parse.unquote(names["email"])
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/view?pdi={names['email']}")
        _desktop(pipe, session)
        assert _select(pipe, session, "Thank you Jesus.") == email + "#char=0,16"
        _forms(pipe, session)
        status = _js(pipe, session, "(() => { const s = document.getElementById('cite-status'); s.scrollIntoView();"
                                    " const r = s.getBoundingClientRect(), p = s.parentElement.getBoundingClientRect();"
                                    " return [s.textContent, s.scrollWidth <= s.clientWidth, s.scrollHeight <= s.clientHeight,"
                                    " r.right <= p.right]; })()")
        _shoot(pipe, session, "email-status-desktop.png")
    assert status[0] == f"Resolved and checked: {email}#char=0,16" and status[1:] == [True, True, True], status
