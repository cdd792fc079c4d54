"""An HTML part's references (:func:`pdi.mhtml.html_references`) are the ones html5lib's tree holds, where raw text
elements (``script``, ``style``, ``title``, ``textarea``) open and close in any case, and in letters that only
Python's Unicode case rules take for ASCII ones (U+017F ``ſ`` for ``s``, U+0131 ``ı`` for ``i``, U+212A KELVIN
SIGN for ``k``).

The oracle is html5lib (the WHATWG HTML tokenizer and tree builder): each ``img``'s ``src`` and each
``link rel=stylesheet``'s ``href`` in its tree, in document order. HTML's tokenizer lower-cases names in ASCII only
(§13.2.5.8) and ends raw text at ``</`` and the element's name in ASCII letters of any case (§13.2.5.11).
"""

from __future__ import annotations

import html5lib
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.mhtml import html_references

_PIECES = st.sampled_from([
    "<script>", "</script>", "</SCRIPT>", "</\u017fcript>", "<SCRIPT >", "</scr\u0131pt>",
    "<style>", "</style>", "</\u017ftyle>", "</STYLE>",
    "<title>", "</title>", "</t\u0131tle>", "<textarea>", "</textarea>", "</TEXTAREA>",
    "x", " ", "<p>", "</p>",
])


@st.composite
def _documents(draw: st.DrawFn) -> str:
    out = []
    for n in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            out.append(f"<img src=i{n}.png>")
        elif kind == 1:
            name = draw(st.sampled_from(["link", "LINK", "lin\u212a"]))
            out.append(f"<{name} rel=stylesheet href=s{n}.css>")
        else:
            out.append(draw(_PIECES))
    return "".join(out)


def _html5lib_references(document: str) -> list[str]:
    tree = html5lib.parse(document, namespaceHTMLElements=False)
    found = []
    for element in tree.iter():
        if element.tag == "img" and element.get("src") is not None:
            found.append(element.get("src"))
        elif element.tag == "link" and element.get("rel") == "stylesheet" and element.get("href") is not None:
            found.append(element.get("href"))
    return found


@settings(max_examples=300, deadline=None)
@example("<script>a='</\u017fcript><img src=x.png>'</script>")
@example("<style>p{}</\u017ftyle><img src=y.png></style>")
@example("<title></t\u0131tle><img src=z.png></title>")
@example("<lin\u212a rel=stylesheet href=b.css>")
@given(_documents())
def test_references_are_those_of_html5libs_tree(document: str) -> None:
    """Found by a hunt: Python's ``re.I`` matches ``ſ`` for ``s`` and ``ı`` for ``i``, and ``str.lower`` makes the
    Kelvin sign a ``k``: ``</ſcript>`` ended a script and ``<linK>`` was a ``<link>``, so references inside a
    script's text (which unpacking rewrote) or in no element at all were taken for the page's."""
    assert [reference.url for reference in html_references(document)] == _html5lib_references(document)
