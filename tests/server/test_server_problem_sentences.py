"""A problem page's line saying what is wrong begins as a sentence does: with a capital, unless a name begins it.

The line is the error's message (:mod:`pdi.errors`), which begins in lower
case for the command line (``pdi: no such date: …``). On a page it began so
too ("no message with the Message-ID … is in the archive."), where the pages'
own lines begin with a capital ("There is no page at …", "This name is held
elsewhere …"). A message that begins with a word now begins with a capital on
a page; one that begins with a name, a media type or a command keeps it as it
is written (``urn:pdi://…``, ``image/tiff: …``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import Served
from test_server_keyboard import _js

from chromium_helpers import open_page
from pdi.capture.browser import devtools
from pdi.server.pages.problem_pages import sentence

#: The problem page's detail line.
DETAIL = "document.querySelector('.problem p.error').innerText"


@pytest.mark.parametrize(("path", "begins"), [
    ("/thread?mid=mid:nobody%40example.com", "No message with the Message-ID <nobody@example.com> is in the archive."),
    ("/series/nowhere.example.us", "Series nowhere.example.us is not registered"),
    # a line beginning with a name keeps the name as it is written
    ("/view?pdi=urn:pdi://nowhere.example.us/2026/11/22/1.text.1",
     "urn:pdi://nowhere.example.us/2026/11/22/1.text.1 is not in this archive."),
    ("/no/such/page", "There is no page at /no/such/page."),
])
def test_a_problem_pages_detail_line_begins_as_a_sentence(served: Served, path: str, begins: str) -> None:
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        said = _js(pipe, session, DETAIL)
    assert said.startswith(begins), json.dumps(said)


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@given(_TEXT | st.builds(lambda word, rest: f"{word} {rest}", st.text("abcdefghijklmnopqrstuvwxyzAZ1:/é", min_size=1), _TEXT))
def test_a_sentence_changes_at_most_its_first_letter(message: str) -> None:
    said = sentence(message)
    assert len(said) == len(message) and said[1:] == message[1:]
    first = message.split(" ", 1)[0]
    if " " in message and first.isascii() and first.isalpha() and first.islower():
        assert said[0] == message[0].upper()  # a word begins it: a capital
    else:
        assert said == message  # a name, a command, a number, a media type begins it: as written


def test_a_sentence_of_the_messages_pdi_gives() -> None:
    assert sentence("no such date: 2026/13") == "No such date: 2026/13"
    assert sentence("urn:pdi://x.example.us/2026/11/22/1 is not in this archive") == (
        "urn:pdi://x.example.us/2026/11/22/1 is not in this archive")
    assert sentence("image/tiff: a TIFF of 5,001 pages") == "image/tiff: a TIFF of 5,001 pages"
    assert sentence("expected 'urn:pdi:'") == "Expected 'urn:pdi:'"
    assert sentence("") == ""


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="`&"), max_size=40),
       st.sampled_from(["urn:pdi://s.example.us/2026/11/22/1.text.1", "pdi://s.example.us/2026/11/22/x%2Fy.html.2"]),
       st.sampled_from(["", ".", ":", ","]))
def test_an_errors_name_is_set_to_wrap_between_its_parts_and_its_words_stay_as_said(
    before: str, name: str, after: str
) -> None:
    import html
    import re

    from pdi.errors import NotFoundError
    from pdi.server.pages.layout import breakable
    from pdi.server.pages.problem_pages import _said

    message = f"{before} {name}{after} is not in this archive; try `pdi ls {name}`"
    said = _said(NotFoundError(message))
    # every character as it was (the page's own marks aside: tags, and the backticks that became <code>)
    assert html.unescape(re.sub(r"<[^>]+>", "", said)) == sentence(message).replace("`", "")
    assert f'<span class="name" dir="ltr">{breakable(name)}</span>{html.escape(after)} is not' in said, said
    # the command quoted holds the name as written, unbroken
    assert f"<code>pdi ls {name}</code>" in said, said


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="`"), max_size=30),
       st.sampled_from(["urn:pdi://s.example.us/2026/11/22/1.text.1", "pdi://s.example.us/2026/11/22/x%2Fy.html.2",
                        "urn:pdi://s.example.us/2026/11/22/1.text.1#t=1&xywh=1,2,3,4"]),
       st.sampled_from(["'", '"', "<", ">", "';", "'.", '")', "'),"]),
       st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="`"), max_size=30))
def test_an_errors_words_stay_as_said_whatever_stands_around_its_name(
    before: str, name: str, close: str, after: str
) -> None:
    """A name an error's message quotes (``not 'urn:pdi://…'``, as ``{name!r}`` writes it) or that an escaped
    character follows was read on through the escape's ``&#x27`` and left its ``;`` after it, the page saying
    ``'urn:pdi://…/1.text.1';`` and its span holding the quote: the page's text is the message's, every character."""
    import html
    import re

    from pdi.errors import NotFoundError
    from pdi.server.pages.layout import breakable
    from pdi.server.pages.problem_pages import _said

    message = f"{before} not {close[:1]}{name}{close} {after}"
    said = _said(NotFoundError(message))
    assert html.unescape(re.sub(r"<[^>]+>", "", said)) == sentence(message), said
    assert f'<span class="name" dir="ltr">{breakable(name)}</span>' in said, said


def test_a_name_quoted_as_python_writes_it_is_the_name_alone() -> None:
    from pdi.errors import ParseError
    from pdi.server.pages.problem_pages import _said

    said = _said(ParseError("/api/image/preview needs the name of one image, not 'urn:pdi://x.us/2026/1/2/1.text.1'"))
    assert said.endswith(
        "not &#x27;<span class=\"name\" dir=\"ltr\">urn:pdi://<wbr>x<wbr>.us/<wbr>2026/<wbr>1/<wbr>2/<wbr>1.text.1</span>&#x27;"), said
