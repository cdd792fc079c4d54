"""A message's body text in pages: the reader's page of a message shows one page of a long body (``docs/email.md`` §4).

A page is at most :data:`PAGE_LINES` lines and at most :data:`PAGE_CHARACTERS` characters of the body's text
(the CRLF-canonical text its ``char=`` and ``line=`` count in), whichever comes first: it ends after a line's
break, unless one line alone is longer than a page, which is then cut (never between the CR and the LF of a
break) and goes on on the next page. A body of 2,100,000 short lines took Chromium 16.5 s to lay out in one
``<pre>``; a page of it opens as a short message does.

``/view?pdi=NAME&page=N`` shows page *N* (from 1); without ``page=``, the page holding the start of the passage
the name's ``char``/``line`` fragment marks, else the first. Pages are found from where each starts
(:func:`page_table`): they follow one another, so each one's start depends on all before it, found once a
process for a message (:data:`MAX_TABLES` of them kept, by the SHA-256 of the message's octets, as the body's
text is kept: :mod:`pdi.fragments.email_text`).

Pure but for that cache, its process's own state: no I/O.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from pdi.server.pages.catalogue import view_path
from pdi.server.pages.layout import esc

#: The most lines of a body's text one page shows: 2,000 short lines open in Chromium in well under a second.
PAGE_LINES: Final = 2_000
#: The most characters one page shows (256 Ki), for a body of long lines: 2,000 lines of a few hundred characters
#: each would otherwise be megabytes.
PAGE_CHARACTERS: Final = 256 << 10
#: The most messages whose pages' starts a process keeps (each a few kilobytes: a body of 16 Mi characters has at
#: most 8,000 pages).
MAX_TABLES: Final = 64


@dataclass(frozen=True)
class PageTable:
    """Where each page of a body's text starts (characters) and the line breaks before it, and its lines in all."""

    starts: tuple[int, ...]
    breaks: tuple[int, ...]
    lines: int
    length: int


@dataclass(frozen=True)
class BodyPage:
    """One page of a body's text: its number (from 1) of ``pages``, the characters ``[start, end)`` of the text it
    shows, its first and last lines (from 1) of ``lines``, and whether it starts or ends inside a line."""

    number: int
    pages: int
    start: int
    end: int
    first_line: int
    last_line: int
    lines: int
    cut_before: bool
    cut_after: bool


def page_table(text: str, most_lines: int = PAGE_LINES, most_characters: int = PAGE_CHARACTERS) -> PageTable:
    """The pages of ``text`` (a body's CRLF-canonical text), each as the module docstring says: at most
    ``most_lines`` lines and ``most_characters`` characters (at least 2: a line break's CR and LF)."""
    # most_lines line breaks (the text is CRLF-canonical: a break is CR LF, and an LF is only ever a break's), each
    # line scanned once, matched from a page's start no further than most_characters (re keeps it compiled)
    page_of_lines = re.compile(rf"(?:[^\n]*\n){{{most_lines}}}")
    starts: list[int] = []
    breaks: list[int] = []
    at = counted = 0
    length = len(text)
    while at < length or not starts:
        starts.append(at)
        breaks.append(counted)
        limit = min(at + most_characters, length)
        found = page_of_lines.match(text, at, limit)
        if found is not None:
            end = found.end()
        elif limit == length:
            end = length
        else:  # fewer lines than a page in as many characters as one: up to the last break, or a long line cut
            last = text.rfind("\n", at, limit)
            end = last + 1 if last >= 0 else limit - (text[limit - 1] == "\r")
        counted += text.count("\n", at, end)
        at = end
    lines = counted + (1 if length and not text.endswith("\n") else 0)
    return PageTable(tuple(starts), tuple(breaks), lines, length)


_TABLES: OrderedDict[str, PageTable] = OrderedDict()
_LOCK = threading.Lock()


def kept_page_table(key: str, text: str) -> PageTable:
    """:func:`page_table` of ``text``, the body text of the message whose octets' SHA-256 is ``key``: made once a
    process (at most :data:`MAX_TABLES` kept, least recently used out first)."""
    with _LOCK:
        table = _TABLES.get(key)
        if table is not None and table.length == len(text):
            _TABLES.move_to_end(key)
            return table
    table = page_table(text)
    with _LOCK:
        _TABLES[key] = table
        while len(_TABLES) > MAX_TABLES:
            _TABLES.popitem(last=False)
    return table


def page_holding(table: PageTable, position: int) -> int:
    """The number (from 1) of the page holding the character at ``position`` (one at or past the end: the last)."""
    from bisect import bisect_right

    return max(1, bisect_right(table.starts, position))


def body_page(table: PageTable, text: str, number: int) -> BodyPage:
    """Page ``number`` of ``text`` (whose pages ``table`` holds); a number past the last is the last (the caller
    says so: :func:`paging`)."""
    number = min(max(number, 1), len(table.starts))
    start = table.starts[number - 1]
    end = table.starts[number] if number < len(table.starts) else table.length
    first = table.breaks[number - 1] + 1
    ends_at_break = end > start and text[end - 1] == "\n"
    last = table.breaks[number - 1] + text.count("\n", start, end) + (0 if ends_at_break else 1)
    return BodyPage(number, len(table.starts), start, end, first, last, table.lines,
                    cut_before=start > 0 and text[start - 1] != "\n", cut_after=end < table.length and not ends_at_break)


def page_href(name: str, number: int) -> str:
    """The address of page ``number`` of the page of ``name`` (escaped for an attribute)."""
    return esc(f"{view_path(name)}&page={number}")


def paging(shown: BodyPage, name: str, asked: int | None, *, where: str) -> str:
    """The line that says which lines of the body ``shown`` holds, with links to the first, previous, next and last
    pages (each a plain link, ``page=`` in its address: no script needed); ``""`` for a body of one page. ``asked``:
    the page number the address gave, said when past the last. ``where``: ``top`` or ``end``, the nav's place."""
    if shown.pages == 1:
        return ""
    said = (f"Page {shown.number:,} of {shown.pages:,} of the body's text: lines {shown.first_line:,}\u2013"
            f"{shown.last_line:,} of {shown.lines:,}")
    if shown.cut_before or shown.cut_after:
        said += " (a line longer than a page goes on from one page to the next)"
    said += "."
    if asked is not None and asked > shown.pages:
        said += f" There is no page {asked:,}: the last is shown."

    def link(number: int, words: str, rel: str, here: bool) -> str:
        if here:  # no link to the page shown: its place kept, so the links do not move from page to page
            return f'<span class="here" aria-disabled="true">{words}</span>'
        return f'<a href="{page_href(name, number)}"{rel}>{words}</a>'

    first, last = shown.number == 1, shown.number == shown.pages
    links = " · ".join((
        link(1, "\u00ab First", "", first),
        link(shown.number - 1, "\u2039 Previous", ' rel="prev"', first),
        link(shown.number + 1, "Next \u203a", ' rel="next"', last),
        link(shown.pages, "Last \u00bb", "", last),
    ))
    label = "The body's pages" if where == "top" else "The body's pages, again"
    return (f'<nav class="body-pages" id="body-pages-{where}" aria-label="{label}"><p>{said}</p>'
            f"<p>{links}</p></nav>")


PAGING_STYLE = """
nav.body-pages{margin:0.6rem 0} nav.body-pages p{margin:0.2rem 0} nav.body-pages .here{color:#6b6b6b}
@media (prefers-color-scheme:dark){nav.body-pages .here{color:#a0a0a0}}
"""
