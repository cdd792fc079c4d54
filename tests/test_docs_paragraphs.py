"""The reference and explanation pages are read in paragraphs of at most 15 lines, and so are their lists' items.

A paragraph is a run of prose lines: not a code block, a table, a heading or a list. A list item's own lines (to a
blank line or the next item) and each paragraph indented under it are read alike, at most 15 lines each: a longer
item is cut into a sub-list (indented four spaces, as Python-Markdown nests a list). A page of the
manual that holds a 30-line paragraph is a page its readers skim; one that lists rules writes them as a list, one
that compares options as a table, and the history of how a rule was found goes out of the reader's way. The pages
are those ``tests/test_docs_reference_facts.py`` reads against the code: docs/reference/, docs/explanation/, and
the explanation pages at the top of docs/ (e-mail, the PDF text layer, the code layout).

On every page MkDocs draws, a list nests as Python-Markdown reads it: a sub-item, or an item's paragraph after a
blank line, is indented four spaces (two draw a sub-list flat, and end the list before a paragraph), and an item
is never written right under a paragraph's line (it is drawn as more of that paragraph).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import markdown
import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(
    [*(DOCS / "reference").glob("*.md"), *(DOCS / "explanation").glob("*.md"),
     DOCS / "email.md", DOCS / "pdf-text-layer.md", DOCS / "layout.md"]
)
#: The longest paragraph a page may hold, in lines as the page is wrapped.
MOST_LINES = 15
#: Paragraphs not yet cut, by page and first line: none. A page that cannot be finished is named here, with why.
EXCEPTIONS: dict[str, set[int]] = {}

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


def paragraphs(text: str) -> Iterator[tuple[int, list[str]]]:
    """Each paragraph of a Markdown page: its first line's number (from 1) and its lines.

    Fenced code blocks, tables (lines starting ``|``), headings and lists are not paragraphs. A list goes on
    through its items' indented lines and, until a blank line, their unindented (lazy) continuation lines; a
    paragraph written flush left after a blank line ends it. As Python-Markdown reads it (MkDocs's), a list
    begins only after a blank line: an item written right under a line of prose is more of that paragraph."""
    return ((start, run) for kind, start, run in _blocks(text) if kind == "prose")


def item_paragraphs(text: str) -> Iterator[tuple[int, list[str]]]:
    """Each paragraph of a list of a Markdown page (read as :func:`paragraphs` reads lists): an item's own
    lines (from its marker to a blank line or the next item, a nested one too) and each paragraph indented under
    it, with its first line's number (from 1)."""
    return ((start, run) for kind, start, run in _blocks(text) if kind == "item")


def _blocks(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """The paragraphs of a page, each ``("prose", first line, lines)`` or, in a list, ``("item", …)``."""
    fence = ""
    run: list[str] = []
    kind, start = "prose", 0
    in_list = False
    after_blank = True
    for number, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
        blank = not line.strip()
        item = bool(ITEM.match(line)) and (after_blank or in_list)
        if opening or blank or item or line.lstrip().startswith(("|", "#")):
            if run:
                yield kind, start, run
            run = [line] if item else []
            kind, start = "item", number
            in_list = item or (in_list and (blank or bool(opening)))
            after_blank = blank
            continue
        if in_list and (line[:1] in (" ", "\t") or not after_blank):
            if not run:
                kind, start = "item", number
            run.append(line)
            after_blank = False
            continue
        in_list = after_blank = False
        if not run:
            kind, start = "prose", number
        run.append(line)
    if run:
        yield kind, start, run


def test_the_reading_finds_prose_and_leaves_out_code_tables_headings_and_lists() -> None:
    page = "\n".join([
        "# A heading", "prose one", "prose two", "",  # 2: a paragraph of two lines
        "```sh", "code", "", "more code", "```",
        "| a | b |", "|---|---|", "| 1 | 2 |", "",
        "- an item", "  its own line", "a lazy continuation", "",
        "    an indented paragraph of the item", "",
        "1. a numbered item", "",
        "prose", "- not an item: no blank line above it", "  so more of the paragraph", "",
        "back to prose", "after a list",  # 26: a paragraph of two lines
        "## Another", "last",  # 29
    ])
    assert list(paragraphs(page)) == [
        (2, ["prose one", "prose two"]),
        (22, ["prose", "- not an item: no blank line above it", "  so more of the paragraph"]),
        (26, ["back to prose", "after a list"]),
        (29, ["last"]),
    ]


@given(st.lists(st.tuples(st.sampled_from(["prose", "code", "table", "list"]), st.integers(1, 40)), max_size=12))
def test_each_prose_block_is_one_paragraph_of_its_own_length(blocks: list[tuple[str, int]]) -> None:
    """Blocks of any kind and length, a blank line apart: the paragraphs found are the prose blocks, whole."""
    lines: list[str] = []
    expected: list[tuple[int, int]] = []
    for kind, length in blocks:
        if kind == "prose":
            expected.append((len(lines) + 1, length))
            lines += [f"words {i} of a sentence" for i in range(length)]
        elif kind == "code":
            lines += ["```", *(["", "a line of code"] * length), "```"]
        elif kind == "table":
            lines += ["| a | b |", "|---|---|", *(["| 1 | 2 |"] * length)]
        else:
            lines += ["- an item", *(["  its continuation"] * length)]
        lines.append("")
    assert [(start, len(run)) for start, run in paragraphs("\n".join(lines))] == expected


def test_the_reading_of_a_list_finds_each_items_own_lines_and_its_paragraphs() -> None:
    page = "\n".join([
        "prose", "",
        "- an item", "  its own line", "a lazy continuation",  # 3: three lines
        "    - a sub-item", "      its line",  # 6: two
        "- the next item", "",  # 8: one
        "    an indented paragraph of the item", "    and its line", "",  # 10: two
        "```", "- code, no item", "```", "",
        "1. a numbered item", "",  # 17
        "back to prose",
    ])
    assert list(item_paragraphs(page)) == [
        (3, ["- an item", "  its own line", "a lazy continuation"]),
        (6, ["    - a sub-item", "      its line"]),
        (8, ["- the next item"]),
        (10, ["    an indented paragraph of the item", "    and its line"]),
        (17, ["1. a numbered item"]),
    ]
    assert list(paragraphs(page)) == [(1, ["prose"]), (19, ["back to prose"])]


def test_the_pages_are_there() -> None:
    assert len(PAGES) > 30
    assert set(EXCEPTIONS) <= {page.relative_to(DOCS).as_posix() for page in PAGES}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(DOCS).as_posix())
def test_no_paragraph_runs_past_15_lines(page: Path) -> None:
    """Each paragraph of ``page`` is at most 15 lines: a longer one is cut (a list of rules, a table of
    options, a story in short paragraphs, its example first), every fact kept."""
    named = page.relative_to(DOCS).as_posix()
    long = {start: len(run) for start, run in paragraphs(page.read_text("utf-8")) if len(run) > MOST_LINES}
    assert {f"{named}:{start}: {lines} lines" for start, lines in long.items()
            if start not in EXCEPTIONS.get(named, set())} == set()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(DOCS).as_posix())
def test_no_list_items_paragraph_runs_past_15_lines(page: Path) -> None:
    """Each list item's own lines, and each paragraph indented under one, are at most 15 lines: a longer item is
    cut into a sub-list (a limit an item, a step an item), every fact kept."""
    named = page.relative_to(DOCS).as_posix()
    long = {start: len(run) for start, run in item_paragraphs(page.read_text("utf-8")) if len(run) > MOST_LINES}
    assert {f"{named}:{start}: {lines} lines" for start, lines in long.items()} == set()


def shallow_nesting(text: str) -> Iterator[tuple[int, str]]:
    """Each line of a Markdown page meant to be nested in a list item but indented too little for Python-Markdown
    (MkDocs's), with its number (from 1): a sub-item, or a paragraph (a table, a fence) after a blank line,
    indented 1 to 3 spaces more than the items of its list. Python-Markdown nests by four spaces: such a sub-item
    is one more item of the list, drawn flat, and such a paragraph ends the list."""
    fence = ""
    levels: list[int] = []  # the indents of the items of each list open, outermost first
    after_blank = True
    for number, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if not line.strip():
            after_blank = True
            continue
        indent = len(line) - len(line.lstrip(" "))
        item = bool(ITEM.match(line)) and not opening
        if levels and not item and after_blank and indent <= levels[0]:
            levels = []  # a paragraph flush with the list's items, after a blank line: the list is over
        elif levels and (item or after_blank):
            while len(levels) > 1 and levels[-1] > indent:
                levels.pop()
            if levels[-1] < indent < levels[-1] + 4:
                yield number, line
            elif item and indent >= levels[-1] + 4:
                levels.append(indent)
        elif item and after_blank:
            levels = [indent]
        if opening:
            fence = opening.group(1)
        after_blank = False


#: The extensions mkdocs.yml gives Python-Markdown that read blocks.
_EXTENSIONS = ["admonition", "attr_list", "def_list", "md_in_html", "tables", "pymdownx.superfences"]


@given(marker=st.sampled_from(["-", "*", "+", "1."]), deeper=st.booleans(), indent=st.integers(0, 7),
       paragraph=st.booleans())
def test_a_line_indented_too_little_to_nest_is_found_as_python_markdown_reads_it(
        marker: str, deeper: bool, indent: int, paragraph: bool) -> None:
    """Under an item (itself a sub-item, or not), a sub-item or a paragraph indented ``indent`` spaces more:
    found by :func:`shallow_nesting` exactly when Python-Markdown does not nest it (and it is not written flush
    with the item, a next item or the list's end)."""
    outer = "    " if deeper else ""
    page = "\n".join([*(["- the outer item"] if deeper else []), f"{outer}{marker} the item",
                      *([""] if paragraph else []), f"{outer}{' ' * indent}{'' if paragraph else '- '}nested?", ""])
    html = markdown.markdown(page, extensions=_EXTENSIONS)
    inner = html.split("the item", 1)[1]
    nested = "nested?" in inner.split("</li>", 1)[0] and (paragraph or "<ul>" in inner.split("nested?", 1)[0])
    found = [number for number, _ in shallow_nesting(page)]
    assert found == ([] if nested or indent == 0 else [len(page.splitlines())]), html


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda page: page.relative_to(DOCS).as_posix())
def test_no_list_nests_by_fewer_than_four_spaces(page: Path) -> None:
    """Every page MkDocs draws: a sub-list or an item's later paragraph is indented four spaces (Python-Markdown's
    rule), never two, which draws the sub-list flat and ends the list before the paragraph."""
    named = page.relative_to(DOCS).as_posix()
    assert [f"{named}:{number}: {line.strip()[:60]}" for number, line in shallow_nesting(page.read_text("utf-8"))] == []


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda page: page.relative_to(DOCS).as_posix())
def test_no_list_item_is_drawn_as_a_line_of_a_paragraph(page: Path) -> None:
    """As Python-Markdown draws the page (MkDocs's reading): no paragraph holds a line that begins as a list item
    does. An item written right under a paragraph's line (one of the item before it, indented, after a blank
    line) is more of that paragraph, not an item: a blank line goes before it."""
    named = page.relative_to(DOCS).as_posix()
    html = markdown.markdown(page.read_text("utf-8"), extensions=_EXTENSIONS)
    drawn = [line.strip()[:60] for paragraph in re.findall(r"<p>(.*?)</p>", html, re.DOTALL)
             for line in paragraph.splitlines()[1:] if ITEM.match(line)]
    assert [f"{named}: {line}" for line in drawn] == []
