"""``#:~:text=`` on HTML: what pdi names is what Chromium highlights (Debian's Chromium over DevTools).

For each page and directive, two tabs show the same CRLF-canonical page
from a server on 127.0.0.1:

* Chromium's own: the page opened at ``URL#:~:text=…``; Chromium finds the
  text and paints it with ``::target-text`` (magenta in the page's style);
* pdi's: the page with an empty ``<span>`` put in the source at each end of
  the ``char`` range pdi names, and that range painted with the CSS Custom
  Highlight API (``::highlight``, the same magenta).

The two screenshots' magenta pixels must be the same, but for a few pixels
of glyph edges that the two kinds of highlight paint apart (a directive
neither finds: none in both). Chromium does not let a page's script read the text
fragment's range, so the pixels are what is compared.
"""

from __future__ import annotations

import base64
import http.server
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from PIL import Image

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools
from pdi.fragments.pagetext import markup_page_text
from pdi.fragments.textdirective import find_text_directive, parse_fragment_directive
from support.handler_server import handler_server

DATA = Path(__file__).parent.parent / "data" / "annotation"
MAGENTA = (255, 0, 255)
STYLE = (
    "<style>::target-text{background:rgb(255,0,255);color:#000}"
    "::highlight(pdi){background-color:rgb(255,0,255);color:#000}"
    "body{font:16px/1.4 sans-serif;margin:8px;max-width:760px}</style>"
)

MIXED = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Quick title fox</title>" + STYLE + "</head><body>\n"
    "<h2>Caf&eacute;  notes</h2>\n"
    "<p>The <b>quick</b>\n   brown&nbsp;fox &amp; the <i>lazy</i> dog. The dog slept.</p>\n"
    "<p hidden>The quick hidden fox</p><script>var quick = 'fox';</script>\n"
    "<ul><li>First item</li><li>Second item, longer</li></ul>\n"
    "<table><tr><td>cell one</td><td>cell two</td></tr></table>\n"
    "<div>Crème brûlée for <span>every</span>one, <em>every</em> day.</div>\n"
    "<p>Numbers: 3,000 and 4.5 percent; don't stop.</p>\n"
    "<div>jumped<br>over the wall</div><pre>  two  spaces\n kept</pre>\n"
    "</body></html>\n"
)

#: Text a browser does not show, or shows cut apart: WICG Text Fragments' "search invisible" and "visible
#: text node" rules (§3.5.2), block-level display, and what Chromium does at a box in a line. Each word
#: names its case; the directives below ask for each, shown or not.
HIDDEN = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Hidden text</title>" + STYLE + "<style>\n"
    ".gone { display: none }\n#secret { VISIBILITY: collapse }\naside { display:none } /* a comment */\n"
    ".a { display: none } #b { display: block }\n.force { display: none !important }\n"
    "@media print { .pr { display: none } }\np.shy, .none2 { display : none }\n"
    "</style><style media=print>.printonly { display: none }</style></head><body>\n"
    "<p>Kilo lima <span class=gone>kilo lima</span> first.</p>\n"
    "<div style=\"display:none\">alpha one</div>\n"
    "<p>x <span style=\"visibility:hidden\">bravo two</span> y</p>\n"
    "<div style=\"visibility:hidden\">hidden parent <span style=\"visibility:visible\">charlie visible</span></div>\n"
    "<p class=gone>delta gone</p>\n<p id=secret>echo secret</p>\n<aside>foxtrot aside</aside>\n"
    "<p hidden>golf hidden</p>\n<p hidden=until-found>hotel untilfound</p>\n"
    "<div hidden style=\"display:block\">india shown</div>\n"
    "<select><option>juliet option</option></select>\n<select multiple><option>kilo multi</option></select>\n"
    "<meter>lima meter</meter> <progress>mike progress</progress>\n<noscript>november noscript</noscript>\n"
    "<textarea>oscar textarea</textarea>\n"
    "<div style=\"display:inline\">papa</div> <div style=\"display:inline\">quebec</div>\n"
    "<span style=\"display:block\">romeo</span> sierra\n<p class=a id=b>tango shown</p>\n"
    "<p class=force style=\"display:block\">uniform forced</p>\n<p class=pr>victor print</p>\n"
    "<p class=printonly>printonly shown</p>\n<p class=shy>whiskey shy</p><p class=none2>whiskey none</p>\n"
    "<details><summary>sum</summary>xray closed</details>\n"
    "<div>yankee <div style=\"display:none\">x</div> zulu</div>\n"
    "<div>amber <span style=\"display:none\">x</span> basalt</div>\n"
    "<object>coral object</object>\n<canvas>denim canvas</canvas>\n"
    "<p>ember<img alt=\"flint alt\">gale</p>\n"
    "<p>cobalt <span style=\"visibility:hidden\">zz</span> dune</p>\n"
    "<p>wheat <span style=\"visibility:hidden\">zz</span>xenon</p>\n"
    "<p>lilac <input value=q> moss</p>\n<p>navy <button>opal button</button> pearl</p>\n"
    "<p>umber <iframe srcdoc=q></iframe> violet</p>\n"
    "<p>alder <span style=\"display:inline-block\">birch</span> cedar</p>\n"
    "<p>maple<span style=\"visibility:hidden\"> zz </span>oak</p>\n"
    "<p>hazel<span hidden>q</span>ivory</p>\n"
    "</body></html>\n"
)
HIDDEN_FRAGMENTS = [
    "text=kilo%20lima",  # the first is hidden: the second, the one shown
    "text=alpha%20one", "text=bravo%20two", "text=charlie%20visible", "text=hidden%20parent", "text=delta%20gone",
    "text=echo%20secret", "text=foxtrot", "text=golf", "text=hotel", "text=india", "text=juliet",
    "text=lima%20meter", "text=mike", "text=november", "text=papa%20quebec",
    "text=romeo%20sierra", "text=tango", "text=uniform", "text=victor", "text=printonly", "text=whiskey",
    "text=xray", "text=yankee%20zulu", "text=amber%20basalt", "text=coral", "text=denim", "text=flint",
    "text=embergale", "text=ember%20gale", "text=ember,-gale", "text=x%20y", "text=cobalt%20dune",
    "text=wheat%20xenon", "text=lilac%20moss", "text=navy%20opal", "text=opal%20button", "text=umber%20violet",
    "text=alder%20birch", "text=birch", "text=maple%20oak", "text=mapleoak", "text=hazelivory",
]


#: CSS white-space (CSS Text 3 §3), from a <style> rule and from a style attribute.
WHITE_SPACE = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>White space</title>" + STYLE + "<style>\n"
    ".ws-pre { white-space: pre } .ws-pl { white-space: pre-line } .ws-nw { white-space: nowrap }\n"
    "</style></head><body>\n"
    "<p class=ws-pre>pine   apple\n  grove</p>\n"
    "<p style=\"white-space:pre-wrap\">quince   jam\n  pot</p>\n"
    "<p class=ws-pl>rasp   berry\n  bush</p>\n"
    "<p class=ws-nw>straw   berry\n  field</p>\n"
    "</body></html>\n"
)
WHITE_SPACE_FRAGMENTS = [
    "text=pine%20%20%20apple", "text=pine%20apple", "text=apple,-grove", "text=apple%20grove",
    "text=quince%20%20%20jam", "text=quince%20jam", "text=jam%20pot", "text=rasp%20berry", "text=berry%20bush",
    "text=straw%20berry%20field",
]
#: MathML in a page: what of it is text, and where its boxes cut it.
MATH = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>MathML</title>" + STYLE + "</head><body>\n"
    "<p>mathpre <math><mi>alpha</mi><mo>+</mo><mn>12</mn></math> mathpost</p>\n"
    "<p><math><mrow><mi>beta</mi><mi>gamma</mi></mrow></math></p>\n"
    "<p><math><semantics><mi>delta</mi><annotation>annot</annotation></semantics></math></p>\n"
    "<p><math><mtext>mtext words here</mtext></math></p>\n"
    "</body></html>\n"
)
MATH_FRAGMENTS = [
    "text=alpha", "text=12", "text=alpha%2B12", "text=mathpre%20alpha", "text=12%20mathpost", "text=beta",
    "text=betagamma", "text=delta", "text=annot", "text=mtext%20words%20here",
]
#: What pdi already read as Chromium does (checked in Chromium 150): a word break opportunity and a soft hyphen
#: inside a word, generated content (not text), a line break inside a word, a template, bidi controls.
INLINE = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Inline</title>" + STYLE + "<style>\n"
    ".gen::before { content: 'genbefore ' } .gen::after { content: ' genafter' } .mid::after { content: 'zz' }\n"
    "</style></head><body>\n"
    "<p>abso<wbr>lutely wonderful and wbrsp<wbr> after</p>\n"
    "<p>hy&shy;phen word and lit\u00aderal soft</p>\n"
    "<p class=gen>gentext</p>\n<p>alpha<span class=mid>beta</span>gamma</p>\n"
    "<p>wa<br>ter lily</p>\n<template><p>tmpl word</p></template>\n"
    "<p>left\u200eright and lri\u2066iso\u2069late</p>\n"
    "</body></html>\n"
)
INLINE_FRAGMENTS = [
    "text=absolutely", "text=wbrsp%20after", "text=hyphen", "text=literal", "text=genbefore", "text=gentext",
    "text=genbefore%20gentext", "text=alphabetagamma", "text=betazzgamma", "text=water", "text=ter%20lily",
    "text=tmpl", "text=leftright", "text=left", "text=isolate",
]

#: Characters whose folding at the primary level is several (™ is tm, ℃ is °C, ½ is 1⁄2, ß is ss): a word ends
#: where the page's characters say (™ is a symbol), and nothing matches inside one character's folding.
FOLDED = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Folded</title>" + STYLE + "</head><body>\n"
    "<p>Apple\u2122 phones</p>\n<p>Call \u21166 now</p>\n<p>It weighs 7\u338f net</p>\n"
    "<p>It is 25\u2103 today</p>\n<p>\u00bd cup</p>\n<p>Gro\u00dfe Stra\u00dfe</p>\n"
    "<p>Area x\u00b2 here</p>\n<p>Water H\u2082O</p>\n<p>Item \u2460one</p>\n<p>Roman \u216bteen</p>\n"
    "<p>Circ \u24b6bc</p>\n<p>Mix k\u00bc</p>\n<p>Sign\u2122\u2019ok here</p>\n"
    "<p>Stop can\u2019\u200bt go and 4,\u200b500 more</p>\n"
    "</body></html>\n"
)
#: A number but a digit (², ₂, ①, ¼: General_Category No) is no word character to UAX #29 (Word_Break Other),
#: though ² folds to 2; a numeral letter (Ⅻ, Nl) and a circled letter (Ⓐ, Alphabetic) are.
FOLDED_FRAGMENTS = [
    "text=Apple", "text=Appletm", "text=6", "text=No6", "text=7", "text=C", "text=25C", "text=2", "text=1",
    "text=Stras", "text=Strasse", "text=tm%20phones",
    "text=x", "text=x2", "text=H", "text=O", "text=H2O", "text=one", "text=teen", "text=bc", "text=k", "text=ok",
    "text=can", "text=4", "text=500",
]

#: Connector punctuation and NARROW NO-BREAK SPACE join words (UAX #29's ExtendNumLet, WB13a/b): ``a‿b`` is one
#: word, as ``a_b`` is, and so is ``kilo`` with the NARROW NO-BREAK SPACE French sets before ``!`` (checked in
#: Chromium 150: none of these is found alone).
JOINED = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Joined</title>" + STYLE + "</head><body>\n"
    "<p>Tie alpha\u203fbeta here</p>\n<p>Wide gamma\uff3fdelta here</p>\n<p>Low echo_fox here</p>\n"
    "<p>Narrow golf\u202fhotel here</p>\n<p>Count 10\u202f000 here</p>\n<p>Char india\u2040juliet here</p>\n"
    "<p>Salut kilo\u202f! et lima\u202f? here</p>\n"
    "</body></html>\n"
)
JOINED_FRAGMENTS = [
    "text=alpha", "text=beta", "text=gamma", "text=delta", "text=echo", "text=fox", "text=golf", "text=hotel",
    "text=golf%20hotel", "text=10", "text=000", "text=10%20000", "text=india", "text=juliet",
    "text=kilo", "text=lima", "text=kilo%20!",
]

#: What stands between a prefix and the match, or the match and a suffix: white space only (§3.6.1's "advance range
#: start to next non-whitespace position"); a character the comparison ignores parts them, but a combining mark or a
#: ZERO WIDTH JOINER after the prefix's last letter, which is part of it.
GAPS = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Gaps</title>" + STYLE + "</head><body>\n"
    "<p>alpha\u200bbravo here</p>\n<p>charlie\u00addelta here</p>\n<p>echo\u2060foxtrot here</p>\n"
    "<p>golf\u200dhotel here</p>\n<p>india\u0301juliet here</p>\n<p>kilo \u00a0 lima here</p>\n"
    "<p>mike \u00ad november here</p>\n"
    "</body></html>\n"
)
GAPS_FRAGMENTS = [
    "text=alpha-,bravo", "text=alpha,-bravo", "text=charlie-,delta", "text=charlie,-delta", "text=charliedelta",
    "text=echo-,foxtrot", "text=golf-,hotel", "text=india-,juliet", "text=india,-juliet", "text=kilo-,lima",
    "text=mike-,november", "text=mike,-november",
]
#: Controls that are not white space: ignored by the comparison, yet each parts two words (UAX #29); a
#: noncharacter, U+FFFF, is a character.
CONTROLS = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Controls</title>" + STYLE + "</head><body>\n"
    "<p>oscar\x01papa here</p>\n<p>quebec\x1fromeo here</p>\n<p>sierra\x7ftango here</p>\n"
    "<p>uniform\x85victor here</p>\n<p>whiskey\x0bxray here</p>\n<p>yankee\x00zulu here</p>\n"
    "<p>amber\uffffbasalt here</p>\n"
    "</body></html>\n"
)
CONTROLS_FRAGMENTS = [
    "text=oscarpapa", "text=oscar", "text=papa", "text=oscar%01papa", "text=oscar-,papa", "text=quebecromeo",
    "text=romeo", "text=sierratango", "text=sierra", "text=uniformvictor", "text=uniform", "text=whiskeyxray",
    "text=whiskey", "text=yankeezulu", "text=yankee", "text=amber%EF%BF%BFbasalt", "text=amber-,basalt",
]

#: Emoji: one word however spelled (a ZWJ sequence, a modifier, a flag's pair of regional indicators), a variation
#: selector ignored.
EMOJI = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Emoji</title>" + STYLE + "</head><body>\n"
    "<p>one \U0001F469\u200d\U0001F4BB two</p>\n<p>three \U0001F44D\U0001F3FD four</p>\n"
    "<p>five \U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA six</p>\n<p>I \u2764\ufe0f NY</p>\n<p>seven a\u200d\U0001F4BB</p>\n<p>eight ab\U0001F3FDcd</p>\n"
    "</body></html>\n"
)
EMOJI_FRAGMENTS = [
    "text=%F0%9F%91%A9", "text=%F0%9F%92%BB", "text=%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB", "text=%F0%9F%91%8D",
    "text=%F0%9F%91%8D%F0%9F%8F%BD", "text=%F0%9F%87%AB", "text=%F0%9F%87%B7%F0%9F%87%A9",
    "text=%F0%9F%87%A9%F0%9F%87%AA", "text=I%20%E2%9D%A4%20NY", "text=seven%20a", "text=cd",
]
#: A format character (SOFT HYPHEN, WORD JOINER, a bidi mark) after a word: no word ends just before it (WB4).
FORMATS = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Formats</title>" + STYLE + "</head><body>\n"
    "<p>alpha\u00ad bravo</p>\n<p>charlie\u2060 delta</p>\n<p>echo\u200e foxtrot</p>\n<p>golf \u200ehotel</p>\n"
    "<p>india\u200c juliet</p>\n<p>kilo\u00ad</p>\n"
    "</body></html>\n"
)
FORMATS_FRAGMENTS = [
    "text=alpha", "text=alpha%C2%AD", "text=bravo", "text=charlie", "text=echo", "text=hotel", "text=india",
    "text=kilo", "text=echo,-foxtrot", "text=golf,hotel",
]

#: Numeric character references to a control or a noncharacter: the character itself (a parse error to WHATWG HTML,
#: not a removal); NUL is U+FFFD, and a C1 control of the HTML table windows-1252's character.
REFERENCES = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>References</title>" + STYLE + "</head><body>\n"
    "<p>alpha&#1;bravo here</p>\n<p>charlie&#x7f;delta here</p>\n<p>echo&#128;fox here</p>\n"
    "<p>golf&#xFFFE;hotel here</p>\n<p>india&#0;juliet here</p>\n<p>kilo&#x1f;lima here</p>\n"
    "</body></html>\n"
)
REFERENCES_FRAGMENTS = [
    "text=alpha", "text=alphabravo", "text=charlie", "text=echo%E2%82%ACfox", "text=golf", "text=golf%EF%BF%BEhotel",
    "text=india%EF%BF%BDjuliet", "text=india", "text=kilo", "text=kilolima",
]

#: Kana voicing marks: a combining one counts only after a kana letter (ignored elsewhere, in a term or the page), and
#: a spacing one (゛, ゜) is one word with the kana or Han characters beside it.
KANA = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Kana</title>" + STYLE + "</head><body>\n"
    "<p>\u304b\u304b\u309b\u304d</p>\n<p>\u304b\u304c\u304d</p>\n<p>mike \u0301november here</p>\n"
    "<p>\u6f22\u309b\u5b57</p>\n<p>oscar a\u3099b papa</p>\n"
    "</body></html>\n"
)
KANA_FRAGMENTS = [
    "text=%E3%82%99%E3%81%8D", "text=%E3%81%8B%E3%82%9B", "text=mike-,november", "text=mike,-november",
    "text=%E6%BC%A2", "text=%E6%BC%A2%E3%82%9B%E5%AD%97", "text=oscar%20ab", "text=%E3%82%9B%E5%AD%97",
]

#: Each text node's ends are word boundaries: markup inside a word (a tag, a comment, a hidden element) ends it there.
NODES = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Nodes</title>" + STYLE + "</head><body>\n"
    "<p>xx hazel<b>ivory</b> yy</p>\n<p>xx jas<b>per</b>kiwi yy</p>\n<p>xx lemon<!-- c -->mango yy</p>\n"
    "<p>xx nutmeg<span hidden>q</span>olive yy</p>\n<p>xx 3<!-- c -->5 yy</p>\n"
    "</body></html>\n"
)
NODES_FRAGMENTS = [
    "text=hazel", "text=ivory", "text=jasper", "text=perkiwi", "text=kiwi", "text=lemon", "text=mango",
    "text=lemonmango", "text=monman", "text=nutmeg", "text=olive", "text=5", "text=xx-,lemon",
]

CASES: list[tuple[str, list[str]]] = [
    (MIXED, [
        "text=quick",
        "text=The%20quick%20brown",
        "text=brown%20fox%20%26%20the",
        "text=lazy-,dog",
        "text=dog,-slept",
        "text=the,slept",
        "text=cafe%20notes",
        "text=CREME%20BRULEE",
        "text=item,-Second",
        "text=First%20item%20Second",
        "text=cell%20two",
        "text=everyone",
        "text=every,-day",
        "text=3%2C000",
        "text=don't%20stop",
        "text=hidden",
        "text=title",
        "text=ick",
        "text=Second%20item&text=cell%20one",
        "text=jumped%20over",
        "text=two%20%20spaces",
        "text=spaces,kept",
        "text=spaces%20kept",
        "text=jumped,-over",
        "text=wall",
    ]),
    (HIDDEN, HIDDEN_FRAGMENTS),
    ((DATA / "essay.html").read_text(encoding="utf-8").replace(
        "</title>", "</title>" + STYLE, 1), [
        "text=A%20citation%20is%20a%20promise",
        "text=promise-,the%20words",
        "text=Libraries,having",
        "text=notice%20%E2%80%94%20which",
        "text=Name%20the%20version",
        "text=keep,-records",
        "text=written%20by%20hand",
    ]),
    (WHITE_SPACE, WHITE_SPACE_FRAGMENTS),
    (MATH, MATH_FRAGMENTS),
    (INLINE, INLINE_FRAGMENTS),
    (FOLDED, FOLDED_FRAGMENTS),
    (JOINED, JOINED_FRAGMENTS),
    (GAPS, GAPS_FRAGMENTS),
    (CONTROLS, CONTROLS_FRAGMENTS),
    (EMOJI, EMOJI_FRAGMENTS),
    (FORMATS, FORMATS_FRAGMENTS),
    (REFERENCES, REFERENCES_FRAGMENTS),
    (KANA, KANA_FRAGMENTS),
    (NODES, NODES_FRAGMENTS),
]


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


class Pages(http.server.BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        path = self.path.split("#")[0]
        body = self.pages.get(path)
        self.send_response(200 if body is not None else 404)
        kind = "text/plain" if path.endswith(".txt") else "text/html"
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with handler_server(Pages) as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Pipe]:
    with devtools() as pipe:
        yield pipe


def magenta(pipe: Pipe, session: str, *, wait: bool) -> frozenset[tuple[int, int]]:
    """The magenta pixels of the tab (waiting, 20 s at most, for a highlight to be painted when ``wait``).

    Chromium finds and paints a text directive after the load event, later on
    a loaded machine; a highlight expected is waited for, returned as soon as seen.
    """
    deadline = time.monotonic() + (20.0 if wait else 0.3)
    found: frozenset[tuple[int, int]] = frozenset()
    while True:
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
        image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
        width = image.width
        data = image.tobytes()
        found = frozenset(
            (k % width, k // width) for k in range(0, len(data) // 3) if data[3 * k : 3 * k + 3] == b"\xff\x00\xff"
        )
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def with_markers(source: str, ranges: list[tuple[int, int]]) -> str:
    """``source`` with empty spans at each end of each range (from the last, so earlier offsets hold)."""
    cuts = sorted({(a, f'<span class=pdi-a data-k="{k}"></span>') for k, (a, _) in enumerate(ranges)}
                  | {(b, f'<span class=pdi-b data-k="{k}"></span>') for k, (_, b) in enumerate(ranges)},
                  key=lambda c: (c[0], c[1].startswith("<span class=pdi-a")), reverse=True)
    for at, tag in cuts:
        source = source[:at] + tag + source[at:]
    return source


PAINT = """(() => {
  const ranges = [];
  for (const a of document.querySelectorAll('span.pdi-a')) {
    const b = document.querySelector('span.pdi-b[data-k="' + a.dataset.k + '"]');
    const r = new Range(); r.setStartAfter(a); r.setEndBefore(b); ranges.push(r);
    // as Chromium reveals what it matches: hidden=until-found and a closed details around the range
    for (let e = a.parentElement; e; e = e.parentElement) {
      if ((e.getAttribute('hidden') || '').toLowerCase() === 'until-found') e.removeAttribute('hidden');
      if (e.localName === 'details') e.open = true;
    }
  }
  CSS.highlights.set('pdi', new Highlight(...ranges));
  return ranges.length;
})()"""


@pytest.mark.slow  # a minute of Chromium: started first in a parallel run
@pytest.mark.parametrize("case", range(len(CASES)))
def test_pdi_names_what_chromium_highlights(chromium: Pipe, server: str, case: int) -> None:
    page, fragments = CASES[case]
    source = crlf(page)
    text = markup_page_text(source, "html")
    disagreements = []
    for k, fragment in enumerate(fragments):
        directives = parse_fragment_directive(fragment)
        found = [find_text_directive(d, text) for d in directives]
        ranges = [text.document_range(*f) for f in found if f is not None]
        Pages.pages[f"/c{case}/{k}/chromium.html"] = source.encode("utf-8")
        Pages.pages[f"/c{case}/{k}/pdi.html"] = with_markers(source, ranges).encode("utf-8")
        theirs_tab = open_page(chromium, f"{server}/c{case}/{k}/chromium.html#:~:{fragment}")
        theirs = magenta(chromium, theirs_tab, wait=bool(ranges))
        scrolled = chromium.call("Runtime.evaluate", {"expression": "window.scrollY", "returnByValue": True},
                                 theirs_tab, time.monotonic() + 30)["result"]["value"]
        ours_tab = open_page(chromium, f"{server}/c{case}/{k}/pdi.html")
        chromium.call("Runtime.enable", None, ours_tab, time.monotonic() + 30)
        painted = chromium.call("Runtime.evaluate", {"expression": PAINT, "returnByValue": True}, ours_tab,
                                time.monotonic() + 30)["result"]["value"]
        assert painted == len(ranges)
        chromium.call("Runtime.evaluate", {"expression": f"window.scrollTo(0, {scrolled})"}, ours_tab,
                      time.monotonic() + 30)
        ours = magenta(chromium, ours_tab, wait=False)
        for tab in (theirs_tab, ours_tab):
            chromium.call("Target.closeTarget", {"targetId": _target(chromium, tab)}, None, time.monotonic() + 30)
        shown = [source[a:b] for a, b in ranges]
        # the two highlights may paint a few pixels of glyph edges apart; a word apart is hundreds
        # pdi names a range exactly when Chromium paints one: a range in hidden text paints nothing in either
        if len(ours ^ theirs) > max(24, len(ours | theirs) // 50) or bool(ours) != bool(theirs) \
                or bool(ranges) != bool(theirs):
            disagreements.append(f"{fragment}: pdi {shown!r} ({len(ours)} px), Chromium {len(theirs)} px, "
                                 f"{len(ours ^ theirs)} px differ")
    assert not disagreements, "\n".join(disagreements)


def _target(pipe: Pipe, session: str) -> str:
    info = pipe.call("Target.getTargetInfo", None, session, time.monotonic() + 30)
    return str(info["targetInfo"]["targetId"])


PLAIN = (
    "Chapter One\r\n\r\nIt was a bright cold day in April, and the clocks were striking thirteen.\r\n"
    "Winston Smith, his chin nuzzled into his breast, slipped quickly through the glass doors.\r\n"
    "The hallway smelt of boiled cabbage and old rag mats.\r\n"
)
PLAIN_FRAGMENTS = [
    "text=bright%20cold%20day",
    "text=clocks,thirteen",
    "text=thirteen,-Winston",  # the suffix on the next line
    "text=April-,and%20the",
    "text=WINSTON%20SMITH",
    "text=cabbage,-and%20new",
    "text=old%20rag",
    "text=thirteen.%0AWinston%20Smith",  # a term's line feed is the text's CRLF, a CR nowhere (the text node's)
    "text=thirteen.%0D%0AWinston",
]
PLAIN_STYLE = (
    "(() => { const s = document.createElement('style'); s.textContent = `" + STYLE[7:-8] + "`;"
    " document.documentElement.appendChild(s); return true; })()"
)
PLAIN_PAINT = """((ranges) => {
  const node = document.querySelector('pre').firstChild;
  const made = ranges.map(([a, b]) => { const r = new Range(); r.setStart(node, a); r.setEnd(node, b); return r; });
  CSS.highlights.set('pdi', new Highlight(...made));
  return made.length;
})"""


def test_on_plain_text_pdi_names_what_chromium_highlights(chromium: Pipe, server: str) -> None:
    from pdi.fragments.pagetext import plain_page_text

    page = plain_page_text(PLAIN)
    Pages.pages["/plain.txt"] = PLAIN.encode("utf-8")
    disagreements = []
    for fragment in PLAIN_FRAGMENTS:
        found = [find_text_directive(d, page) for d in parse_fragment_directive(fragment)]
        ranges = [page.document_range(*f) for f in found if f is not None]
        # the browser's text node holds the text with LF line endings: a CRLF is one character there
        dom = [(a - PLAIN.count("\r\n", 0, a), b - PLAIN.count("\r\n", 0, b)) for a, b in ranges]
        theirs_tab = open_page(chromium, f"{server}/plain.txt#:~:{fragment}")
        evaluate(chromium, theirs_tab, PLAIN_STYLE)
        theirs = magenta(chromium, theirs_tab, wait=bool(ranges))
        ours_tab = open_page(chromium, f"{server}/plain.txt")
        evaluate(chromium, ours_tab, PLAIN_STYLE)
        assert evaluate(chromium, ours_tab, f"({PLAIN_PAINT})({json.dumps(dom)})") == len(dom)
        ours = magenta(chromium, ours_tab, wait=False)
        for tab in (theirs_tab, ours_tab):
            chromium.call("Target.closeTarget", {"targetId": _target(chromium, tab)}, None, time.monotonic() + 30)
        # pdi names a range exactly when Chromium paints one: a range in hidden text paints nothing in either
        if len(ours ^ theirs) > max(24, len(ours | theirs) // 50) or bool(ours) != bool(theirs) \
                or bool(ranges) != bool(theirs):
            shown = [PLAIN[a:b] for a, b in ranges]
            disagreements.append(f"{fragment}: pdi {shown!r} ({len(ours)} px), Chromium {len(theirs)} px")
    assert not disagreements, "\n".join(disagreements)


def evaluate(pipe: Pipe, session: str, expression: str) -> object:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session,
                       time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer["result"].get("description")
    return answer["result"].get("value")


TEXTAREA = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
            "<p>ginkgo <textarea>\nhemlock &amp; juniper\n  larch</textarea> oak</p>\n"
            "<select multiple><option>kilo multi</option></select>\n"
            "<p>before <select size=3><option>sizeopt one</option><option>sizeopt two</option></select> after</p>\n"
            "<p><select size=1><option>dropopt one</option></select></p>\n<textarea>nulone\x00nultwo</textarea>\n"
            "</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=hemlock%20%26%20juniper", "hemlock &amp; juniper"), ("text=larch", "larch"),
    ("text=ginkgo%20hemlock", None), ("text=juniper%20larch", None), ("text=kilo%20multi", "kilo multi"),
    # a select of size above 1 is a list box too (WHATWG HTML §4.10.7), each option a line; of size 1, a drop-down
    ("text=sizeopt%20one", "sizeopt one"), ("text=sizeopt%20two", "sizeopt two"), ("text=one%20sizeopt", None),
    ("text=before%20sizeopt", None), ("text=two%20after", None), ("text=dropopt", None),
    # a NUL in a textarea is U+FFFD (RCDATA), not dropped as in a p
    ("text=nulone%EF%BF%BDnultwo", "nulone\x00nultwo"), ("text=nulone", "nulone"), ("text=nulonenultwo", None),
])
def test_the_text_of_a_textarea_or_a_list_box_is_matched_as_chromium_does(chromium: Pipe, server: str, fragment: str,
                                                              expected: str | None) -> None:
    """A textarea's text is shown as written, in a box of its own: Chromium matches in it, and no term across it;
    a ``select multiple`` or one of ``size`` above 1 (a list box, not search invisible) shows its options.

    Marker spans cannot go in a textarea (its content is text) and a
    highlight is not painted in an option: what is compared is whether
    Chromium paints, and what pdi names in the source.
    """
    _paints_and_names(chromium, server, TEXTAREA, "/textarea.html", fragment, expected)


SVG = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
       "<p>svgpre <svg width=300 height=40><text x=0 y=15>svgword one</text><title>svgtitle</title>"
       "<desc>svgdesc</desc><text x=100 y=15>second <tspan>tspanword</tspan></text><defs><text id=d>defsword</text>"
       "</defs><rect/>loose</svg> svgpost</p>\n<p><svg width=300 height=40><text x=0 y=15>svgnul\x00two</text></svg></p>\n"
       "</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=svgword%20one", "svgword one"), ("text=svgpre%20svgword", None), ("text=svgdesc", None),
    ("text=svgtitle", None), ("text=one%20second", None), ("text=second%20tspanword", "second <tspan>tspanword"),
    ("text=tspanword", "tspanword"), ("text=defsword", None), ("text=loose", None), ("text=svgpost", "svgpost"),
    ("text=svgnul%EF%BF%BDtwo", "svgnul\x00two"), ("text=svgnultwo", None),  # a NUL in SVG is U+FFFD
])
def test_the_text_of_an_svg_is_matched_as_chromium_does(chromium: Pipe, server: str, fragment: str,
                                                        expected: str | None) -> None:
    """An svg is a box of its own in the line, each of its ``text`` elements a block (a ``tspan`` inline), and
    nothing else in it is text (``desc``, ``title``, ``defs``, text outside a ``text`` element).

    Marker spans inside an svg's text shift what they mark: what is compared is whether Chromium paints, and
    what pdi names in the source.
    """
    _paints_and_names(chromium, server, SVG, "/svg.html", fragment, expected)


RUBY = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
        "<p>ruby <ruby>kan<rt>kanrt</rt></ruby> end</p>\n"
        "<p><ruby>baseone<rt>annone</rt>basetwo<rt>anntwo</rt></ruby></p>\n"
        "<p>xx <ruby>rbase<rp>(</rp><rt>rpann</rt><rp>)</rp></ruby> yy</p>\n</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=kankanrt", "kan<rt>kanrt"), ("text=kanrt%20end", "kanrt</rt></ruby> end"), ("text=kan,-end", None),
    ("text=kanrt,-end", "kanrt"), ("text=ruby-,kan", "kan"), ("text=baseonebasetwo", None),
    ("text=baseoneannone", "baseone<rt>annone"), ("text=annonebasetwo", "annone</rt>basetwo"),
    ("text=annoneanntwo", None), ("text=rbase%20yy", None), ("text=rpann", "rpann"),
])
def test_a_ruby_annotation_is_matched_as_chromium_does(chromium: Pipe, server: str, fragment: str,
                                                       expected: str | None) -> None:
    """A ruby annotation's text runs on from its base's, in the order written, yet each is its own words; an
    ``rp`` is not shown.

    Marker spans inside an ``rt`` paint apart from where Chromium paints: what is compared is whether
    Chromium paints, and what pdi names in the source.
    """
    _paints_and_names(chromium, server, RUBY, "/ruby.html", fragment, expected)


def _paints_and_names(chromium: Pipe, server: str, html: str, path: str, fragment: str, expected: str | None) -> None:
    """Whether Chromium paints ``fragment``'s match on the page ``html`` (served at ``path``), and what pdi names of
    its source: both ``expected``, or neither (``None``). For pages where marker spans cannot stand, or shift what
    they mark (a textarea, an option, an svg's text, an rt)."""
    source = crlf(html)
    page = markup_page_text(source, "html")
    found = [find_text_directive(d, page) for d in parse_fragment_directive(fragment)]
    named = [source[a:b] for a, b in (page.document_range(*f) for f in found if f is not None)]
    Pages.pages[path] = source.encode("utf-8")
    tab = open_page(chromium, f"{server}{path}#:~:{fragment}")
    theirs = magenta(chromium, tab, wait=expected is not None)
    chromium.call("Target.closeTarget", {"targetId": _target(chromium, tab)}, None, time.monotonic() + 30)
    assert bool(theirs) == (expected is not None)
    assert named == ([] if expected is None else [expected])


PLAINTEXT = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
             "<p>xmpre</p><xmp>x &amp; y</xmp>\n"
             "<p>before <plaintext>after <b>bold</b> &amp; </plaintext> more\n  line2 nul\x00two\n</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=after%20%3Cb%3Ebold", "after <b>bold"), ("text=after%20bold", None), ("text=%26amp%3B", "&amp;"),
    ("text=bold%20%26", None), ("text=%3C%2Fplaintext%3E%20more", "</plaintext> more"),
    ("text=more%0A%20%20line2", "more\r\n  line2"), ("text=more%20line2", None), ("text=before%20after", None),
    ("text=nul%EF%BF%BDtwo", "nul\x00two"), ("text=%3C%2Fbody%3E", "</body>"),
    ("text=x%20%26amp%3B%20y", "x &amp; y"), ("text=x%20%26%20y", None),
])
def test_the_text_after_plaintext_and_in_an_xmp_is_matched_as_chromium_does(chromium: Pipe, server: str,
                                                                           fragment: str, expected: str | None) -> None:
    """After ``<plaintext>`` the rest of the page is its text as written (the tokenizer's PLAINTEXT state: no tags, no
    character references, a NUL is U+FFFD), and an ``xmp``'s text has no character references (RAWTEXT).

    Marker spans after ``<plaintext>`` would be text: what is compared is whether Chromium paints, and what pdi
    names in the source.
    """
    _paints_and_names(chromium, server, PLAINTEXT, "/plaintext.html", fragment, expected)


LIST_BOXES = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
              '<p>lb <select size=4><optgroup label="grplabel one"><option>opta</option><option>optb</option>'
              "</optgroup><option>optc</option></select> la</p>\n<p>dd <select><optgroup label=dglabel><option>dopt"
              "</option></optgroup></select> de</p>\n<datalist><optgroup label=dlg><option label=dll>dlopt</option>"
              '</datalist>\n<p><select size=3><option label="spaced   label">c</option><option label="a &amp; b">d'
              "</option><option>mixa<b>mixb</b></option></select></p>\n<p>xx <option label=ol>t</option> yy</p>\n"
              "<p>aa <option>ot</option> bb</p>\n<p>cc <optgroup label=og></optgroup> dd</p>\n</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=grplabel%20one", "grplabel one"), ("text=one%20opta", None), ("text=lb%20grplabel", None),
    ("text=optb%20optc", None), ("text=dglabel", None), ("text=dopt", None), ("text=dlg", None), ("text=dll", None),
    ("text=dlopt", None), ("text=spaced%20label", "spaced   label"), ("text=a%20%26%20b", "a &amp; b"),
    ("text=mixa", None), ("text=mixamixb", "mixa<b>mixb"), ("text=ol", "ol"), ("text=xx%20ol", None),
    ("text=aa%20ot", None), ("text=ot", "ot"), ("text=og", "og"), ("text=cc%20og", None),
])
def test_option_and_optgroup_labels_are_matched_as_chromium_does(chromium: Pipe, server: str, fragment: str,
                                                                 expected: str | None) -> None:
    """A list box shows an ``optgroup``'s label and an ``option``'s label (in place of its text) each as a line, and
    an option's text as one string; a drop-down's and a ``datalist``'s are search invisible; out of a ``select`` an
    option is a line of its own and shows its label.

    A label is no text of the page, and a highlight is not painted in an option: what is compared is whether
    Chromium paints, and what pdi names in the source.
    """
    _paints_and_names(chromium, server, LIST_BOXES, "/listboxes.html", fragment, expected)


MATHML = ("<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>t</title>" + STYLE + "</head><body>\n"
          "<p><math><semantics><annotation>anfirst</annotation><mi>sec</mi></semantics></math></p>\n"
          "<p><math><maction actiontype=toggle><mi>actone</mi><mi>acttwo</mi></maction></math></p>\n"
          "<p><math><mphantom><mi>phan</mi></mphantom><mi>after</mi></math></p>\n"
          "<p><math>loosemath<mrow>rowtext</mrow></math></p>\n"
          "<p><math><semantics><mrow><mi>sa</mi></mrow><mi>sbb</mi></semantics></math></p>\n"
          "<p><math><mrow><b>brk</b></mrow></math></p>\n<p><math><mtext><b>inbold</b> more</mtext></math></p>\n"
          "<p><math><mi>mi<span>sp</span></mi></math></p>\n"
          "<p><svg width=300 height=40><text x=0 y=15>svga<b>svgb</b> svgc</text></svg> svgd</p>\n"
          "</body></html>\n")


@pytest.mark.parametrize("fragment, expected", [
    ("text=anfirst", None), ("text=sec", None), ("text=actone", "actone"), ("text=acttwo", None), ("text=phan", None),
    ("text=after", "after"), ("text=loosemath", None), ("text=rowtext", None), ("text=sa", "sa"), ("text=sbb", None),
    ("text=brk", "brk"), ("text=inbold", "inbold"), ("text=inbold%20more", None), ("text=misp", None),
    ("text=sp", "sp"), ("text=svga", "svga"), ("text=svgb%20svgc", "svgb</b> svgc"), ("text=svgasvgb", None),
    ("text=svgc%20svgd", "svgc</text></svg> svgd"),
])
def test_mathml_is_matched_as_chromium_lays_it_out(chromium: Pipe, server: str, fragment: str,
                                                   expected: str | None) -> None:
    """Only a MathML token element's text is shown (``mi``, ``mo``, ``mn``, ``ms``, ``mtext``), a ``semantics``'
    and an ``maction``'s first child only, no ``mphantom``; an HTML element in a token element is a box of its own,
    and an HTML start tag of the breakout list (``b``, ``p``, ``span`` …) outside one ends the math or svg.

    Marker spans in MathML or SVG shift what they mark: what is compared is whether Chromium paints, and what pdi
    names in the source.
    """
    _paints_and_names(chromium, server, MATHML, "/mathml.html", fragment, expected)
