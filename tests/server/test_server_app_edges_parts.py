"""More rough edges of the reader's web app seen in its screenshots, each measured in Chromium (the first ones:
``test_server_app_edges.py``).

- an e-mail's To address broke inside a label on a phone (``<cravindogs@cravindogs.c`` above ``om>`` at 390 px).

Screenshots: ``app-edges-parts-….png``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from server_helpers import Served
from test_server_app_edges import _js, _shoot, _sized, page_url

from pdi.capture.browser import devtools

#: A function of an element and a list of ``[from, to]`` spans of its text (``textContent``): the spans a line break
#: cuts in two (their pieces' boxes on more than one line), as ``[from, to]``.
CUT = """((element, spans) => {
  const nodes = [], walk = document.createTreeWalker(element, NodeFilter.SHOW_TEXT); let seen = 0;
  for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, seen]); seen += node.data.length; }
  const place = (i, end) => { for (const [node, start] of nodes)
    if (end ? i <= start + node.data.length : i < start + node.data.length) return [node, i - start]; };
  return spans.filter(([from, to]) => { const r = document.createRange(), [n1, o1] = place(from, false),
    [n2, o2] = place(to, true); r.setStart(n1, o1); r.setEnd(n2, o2);
    return new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1; }); })"""

# --- an e-mail's addresses ----------------------------------------------------------------------------------------

#: The addresses in a message's From, To and Cc (``dl.message``): each field, the addresses in it, and the pieces of
#: each (its local part, each label of its domain) a line break cuts in two; and how far the page scrolls sideways.
ADDRESSES = """(() => { const cut = CUT, fields = [];
  for (const dt of document.querySelectorAll('dl.message dt')) {
    if (!['From', 'To', 'Cc'].includes(dt.textContent)) continue;
    const dd = dt.nextElementSibling, text = dd.textContent, found = [], spans = [];
    for (const m of text.matchAll(/[^\\s<>()",]+@[^\\s<>()",]+/g)) {
      found.push(m[0]);
      for (const p of m[0].matchAll(/[^@.]+/g)) spans.push([m.index + p.index, m.index + p.index + p[0].length]);
    }
    fields.push([dt.textContent, found, cut(dd, spans).map(([f, t]) => text.slice(f, t))]);
  }
  return [fields, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 320])
def test_an_email_address_breaks_only_after_its_at_or_between_its_labels(
    served: Served, media: tuple[str, dict[str, str]], width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, "email-parts"), width, 844)
        fields, sideways = _js(pipe, session, ADDRESSES.replace("CUT", CUT))
        _shoot(pipe, session, f"app-edges-parts-email-{width}.png")
    # tests/data/email/msg_07.txt: From: Barry <barry@digicool.com>, To: Dingus Lovers <cravindogs@cravindogs.com>
    assert [(field, found) for field, found, _ in fields] == [
        ("From", ["barry@digicool.com"]), ("To", ["cravindogs@cravindogs.com"])], fields
    assert [cut for _, _, cut in fields if cut] == [], fields  # never "cravindogs.c" above "om"
    assert sideways <= 0, sideways


@given(st.text(st.sampled_from("ab.-@<> \u202e\x00&'"), max_size=40))
@example("Dingus Lovers <cravindogs@cravindogs.com>")
def test_an_address_fields_breaks_leave_its_characters_as_shown(value: str) -> None:
    import html5lib

    from pdi.server.pages.mail_pages import shown_addresses, shown_field

    def text(made: str) -> str:
        return "".join(html5lib.parse(f"<dd>{made}</dd>", namespaceHTMLElements=False).find(".//dd").itertext())

    made = shown_addresses(value)
    assert text(made) == text(shown_field(value))  # the same characters, escapes and all
    # a break after an address's @ and before each dot of its domain, and nowhere else
    assert made.replace("<wbr>", "") == shown_field(value)
    for at in re.finditer("<wbr>", made):
        before, after = made[:at.start()], made[at.end():]
        assert before.endswith("@") or (after.startswith(".") and "@" in before), made
