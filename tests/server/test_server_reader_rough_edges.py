"""Rough edges of the reader's pages, opened in Chromium and shot at 1100 and 390 px.

* A name or an address that does not parse (400) says what is wrong in words, and where: the part of the name
  (its month, its day …) and its character, counted from 1, with that part marked; the grammar's ``(rule R,
  offset N)`` is no part of that line, but a smaller one under it, and the problem's ``detail`` keeps it.
* A day's table shows each format as the media type it is (``image/svg+xml``), not as its token is spelt in a
  name (``svg%2Bxml``), as the document's page and the viewer's facts write a format.
* A message's page is headed by its Subject (RFC 2047 words decoded), its name under it as any page shows it.
* A day's table read with a token marks each document under an embargo in force, and says so above it as a
  document's page says *Not open to everyone*; a reader without a token is shown no such row at all.

Expected values are worked out here, from the names as deposited and the calendar, not read from the pages'
code: the offset is where the month's digits stand in the name; February 2026 has 28 days.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import serving
from test_server_reader_walk_browser import _shown

from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.errors import ParseError
from pdi.server.pages.browse import _parse_date_parts
from pdi.server.pages.layout import shown_format

S = "records.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
#: A message whose Subject is an RFC 2047 encoded word: "Café report" (C3 A9 is é in UTF-8).
MESSAGE = (b"From: Ann <ann@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: =?utf-8?q?Caf=C3=A9_report?=\r\n"
           b"Message-ID: <m1@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe board met.\r\n")
#: A message of more than 2,000,000 lines (MailLimits.max_lines) in 8.4 MB: read by its structure, not refused.
MANY_LINES = (b"From: Ann <ann@example.org>\r\nMessage-ID: <m3@example.org>\r\nSubject: Many lines\r\n"
              b"Content-Type: text/plain\r\n\r\n" + b"ab\r\n" * 2_100_000)
UNTITLED = (b"From: Ann <ann@example.org>\r\nMessage-ID: <m2@example.org>\r\nContent-Type: text/plain\r\n\r\n"
            b"No subject here.\r\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("rough-edges")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        archive.add_series(S)
        names = {
            "text": str(archive.add(S, b"Plain words.\n", format="text")),
            "svg": str(archive.add(S, b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>',
                                   format="svg%2Bxml", force=True)),
            "wide": str(archive.add(S, "Wide text.\n".encode("utf-16"), format="utf-16")),
            "mail": str(archive.add(S, MESSAGE, format="rfc822")),
            "untitled": str(archive.add(S, UNTITLED, format="rfc822")),
            "sealed": str(archive.add(S, b"Sealed until the trial ends.\n", format="text")),
            "whole": str(archive.add(S, b"A sealed file, every version of it.\n", format="text")),
            "many": str(archive.add(S, MANY_LINES, format="rfc822")),
        }
        archive.embargo(names["sealed"], "2099-01-01")
        archive.embargo(names["whole"].rsplit(".", 2)[0], "2099-01-01")  # the document, by its generic name
        _, token = archive.add_token("reader", role="read")
    with serving(root / "archive") as (_, port):
        yield port, token, names


def _view(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"


#: The problem page's lines: what is wrong, where, what is marked, the grammar's words.
PROBLEM_LINES = ("[...document.querySelectorAll('.problem p.error, .problem p.where, .problem p.given mark,"
                 " .problem p.grammar')].map((p) => p.innerText)")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_name_with_no_such_month_says_so_in_words_and_marks_where(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    bad = names["text"].replace("/2026/11/30/", "/2026/13/30/")
    month_at = bad.index("/13/") + 1  # where the month's digits stand, counted from 0
    with devtools() as pipe:
        lines = json.loads(_shown(pipe, _view(port, bad), width, f"rough-bad-month-{width}.png", check=PROBLEM_LINES))
    assert lines == [
        "Month 13 is not 01-12.",
        f"Where: in the month, at character {month_at + 1} of the name:",
        "13",
        f"In the grammar's words: rule month, offset {month_at} (counted from 0).",
    ], lines
    # a program's problem keeps the grammar's place in its detail, as before
    answer = httpx.get(f"http://127.0.0.1:{port}/api/resolve", params={"pdi": bad})
    assert answer.status_code == 400 and f"(rule month, offset {month_at})" in answer.json()["detail"], answer.text


@pytest.mark.parametrize("width", [1100, 390])
def test_a_days_address_of_no_such_day_says_so_in_words_and_marks_where(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, _ = served
    path = f"/series/{S}/2026/02/30"
    with devtools() as pipe:
        lines = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{path}", width, f"rough-bad-day-{width}.png",
                                  check=PROBLEM_LINES))
    day_at = path.rindex("/") + 1
    assert lines == [
        "There is no day 30 in February 2026, whose days are 01 to 28.",
        f"Where: in the day, at character {day_at + 1} of the address:",
        "30",
        f"In the grammar's words: rule day, offset {day_at} (counted from 0).",
    ], lines


@pytest.mark.parametrize(("fragment", "words"), [
    ("nameddest=Caf\u00e9", "the named destination (nameddest=)"),
    ("search=caf\u00e9", "the words of search="),
])
def test_a_names_character_refused_in_a_named_destination_says_where_in_that_schemes_words(
    served: tuple[int, str, dict[str, str]], fragment: str, words: str
) -> None:
    """An unescaped ``é`` in ``nameddest=`` (PDI-GRAMMAR.md §1: a name is ASCII, its element names %-escaped UTF-8)
    is said to be in the named destination, not in "an element's name", and marked where it stands."""
    port, _, names = served
    bad = f"{names['text']}#{fragment}"
    at = bad.index("\u00e9")  # where the é stands, counted from 0
    with devtools() as pipe:
        lines = json.loads(_shown(pipe, _view(port, bad), 1100, f"rough-bad-{fragment.partition('=')[0]}-1100.png",
                                  check=PROBLEM_LINES))
    assert "%C3%A9" in lines[0], lines  # é's UTF-8 octets, C3 A9, as it must be written
    assert lines[1:] == [
        f"Where: in {words}, at character {at + 1} of the name:",
        "\u00e9",
        f"In the grammar's words: rule element-name, offset {at} (counted from 0).",
    ], lines


def test_the_page_of_a_message_of_more_lines_than_pythons_parser_is_given_shows_it(
    served: tuple[int, str, dict[str, str]]
) -> None:
    """A message of 2,100,000 lines under 32 MiB, read by its structure since it was no longer refused, opens as any
    message does: headed by its Subject, its sender among its fields, its body's first lines, a page of them (2,000
    lines of 4 characters: ``docs/email.md`` §4), not 2,100,000 (16.5 s in Chromium, past 60 s on a busy machine)."""
    port, _, names = served
    with devtools() as pipe:
        shown = _shown(pipe, _view(port, names["many"]), 1100, "rough-many-lines-1100.png")
    assert shown.startswith("Many lines"), shown[:300]
    assert "Ann <ann@example.org>" in shown and "ab ab ab" in shown, shown[:600]
    assert "Page 1 of 1,050 of the body's text: lines 1–2,000 of 2,100,000." in shown, shown[:3000]
    assert shown.split().count("ab") == 2_000, shown.split().count("ab")  # the lines of page 1 alone


_DIGITS = st.text("0123456789", min_size=1, max_size=5)


@given(_DIGITS, _DIGITS, _DIGITS)
def test_a_days_address_is_a_date_or_an_error_marking_its_wrong_part(year: str, month: str, day: str) -> None:
    try:
        expected: datetime.date | None = datetime.date(int(year), int(month), int(day)) \
            if (len(year), len(month), len(day)) == (4, 2, 2) else None
    except ValueError:
        expected = None
    try:
        found = _parse_date_parts(S, year, month, day)
    except ParseError as exc:
        assert expected is None
        assert exc.text == f"/series/{S}/{year}/{month}/{day}" and exc.offset is not None
        wrong = {"year": year, "month": month, "day": day}[exc.rule or ""]
        assert exc.text[exc.offset:exc.offset + len(wrong)] == wrong and exc.text[exc.offset - 1] == "/"
        return
    assert expected is not None and found == (expected.year, expected.month, expected.day)


def test_a_format_is_shown_as_the_media_type_its_token_names() -> None:
    # PDI-GRAMMAR.md §2.6: the draft's tokens, a minor type %-escaped, a multi-byte charset's name
    def text(token: str) -> str:
        return shown_format(token).replace("<wbr>", "").split(">", 1)[1].replace("</code>", "").replace(
            ' <small class="charset">', " ").replace("</small>", "")

    assert [text(t) for t in ("text", "header", "html", "svg%2Bxml", "vnd%2Ems-excel", "utf-16")] == [
        "text/plain", "message/rfc822", "text/html", "image/svg+xml", "application/vnd.ms-excel", "text/plain utf-16"]
    # a token no registry entry resolves reads as written, its escapes decoded; one that decodes to an override not
    assert text("x-unheard%2Dof") == "x-unheard-of" and text("%E2%80%AEfdp") == "%E2%80%AEfdp"


#: The day's table: each row's id and the text of its Title and Formats cells.
ROWS = ("[...document.querySelectorAll('#documents tbody tr')].map((r) => [r.cells[0].innerText,"
        " r.cells[1].innerText, r.cells[2].innerText, [...r.cells[2].querySelectorAll('a')].map((a) => a.title)])")


def _day(port: int) -> str:
    return f"http://127.0.0.1:{port}/series/{S}/2026/11/30"


@pytest.mark.parametrize("width", [1100, 390])
def test_a_days_table_shows_formats_as_media_types(served: tuple[int, str, dict[str, str]], width: int) -> None:
    port, _, names = served
    with devtools() as pipe:
        rows = json.loads(_shown(pipe, _day(port), width, f"rough-day-formats-{width}.png", check=ROWS))
    shown = {row[0]: row[2] for row in rows}
    serial = {k: v.rsplit("/", 1)[1].split(".")[0] for k, v in names.items()}
    assert shown[serial["text"]] == "text/plain" and shown[serial["svg"]] == "image/svg+xml", shown
    assert shown[serial["wide"]] == "text/plain utf-16" and shown[serial["mail"]] == "message/rfc822", shown
    assert not any("%" in formats for formats in shown.values()), shown
    # the token as its name spells it, in the link's tooltip
    titles = {row[0]: row[3] for row in rows}
    assert titles[serial["svg"]] == [f"format svg%2Bxml: {names['svg']}"], titles


@pytest.mark.parametrize("width", [1100, 390])
def test_a_signed_in_readers_day_marks_what_is_under_embargo(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, token, names = served
    serial = {k: v.rsplit("/", 1)[1].split(".")[0] for k, v in names.items()}
    check = f"{{rows: {ROWS}, note: document.querySelector('#access')?.innerText ?? null}}"
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _day(port), width, f"rough-day-embargo-{width}.png", token, check=check))
    titles = {row[0]: row[1] for row in seen["rows"]}
    assert titles[serial["sealed"]] == "untitled latest version under embargo until 1 January 2099", titles
    assert titles[serial["whole"]] == "untitled under embargo until 1 January 2099", titles
    assert titles[serial["text"]] == "untitled", titles
    assert seen["note"].startswith("Not open to everyone: 2 documents of this page are under embargo (marked below)."), seen
    # a reader without a token: neither row, nor a word of an embargo
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _day(port), width, f"rough-day-anonymous-{width}.png", check=check))
    listed = [row[0] for row in seen["rows"]]
    assert serial["sealed"] not in listed and serial["whole"] not in listed and serial["text"] in listed, listed
    assert seen["note"] is None and not any("embargo" in row[1] for row in seen["rows"]), seen


#: A message page's heading, the line under it, and the tab's title.
HEADING = ("{h1: document.querySelector('main h1').innerText, under: document.querySelector('main p.name-line')"
           "?.innerText ?? null, tab: document.title}")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_messages_page_is_headed_by_its_subject_with_its_name_under_it(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, names["mail"]), width, f"rough-mail-subject-{width}.png",
                                 check=HEADING))
    assert seen == {"h1": "Café report", "under": names["mail"], "tab": f"Café report — {names['mail']}"}, seen
    with devtools() as pipe:  # no Subject: its name heads it, as any document's
        seen = json.loads(_shown(pipe, _view(port, names["untitled"]), width, f"rough-mail-untitled-{width}.png",
                                 check=HEADING))
    assert seen == {"h1": names["untitled"], "under": None, "tab": names["untitled"]}, seen


def test_the_problem_pages_of_a_message_id_unescaped_and_of_a_serial_on_a_wrong_day_are_shown(
    served: tuple[int, str, dict[str, str]],
) -> None:
    """Shown in Chromium (screenshots looked at): a Message-ID's ``@`` left unescaped in a name given to /view
    (as a form field decodes ``%40``) is refused saying how to write it; a serial asked on a day it was not minted
    says there is no such document that day, naming no other document as if it were the one meant."""
    port, _, names = served
    message_id = "urn:pdi://records.example.us/2026/11/30/mid:m9@example%2Eorg.rfc822.1"
    wrong_day = names["text"].replace("/2026/11/30/", "/2026/11/29/")
    with devtools() as pipe:
        said = _shown(pipe, _view(port, message_id), 1100, "rough-message-id-unescaped-1100.png",
                      check="document.querySelector('main').innerText")
        missing = _shown(pipe, _view(port, wrong_day), 1100, "rough-wrong-day-1100.png",
                         check="document.querySelector('main').innerText")
    assert "must be written %40" in said and "%2540" in said, said
    assert f"{wrong_day} is not in this archive." in missing, missing
    assert "first deposited on the nearest day, 2026-11-30" in missing, missing  # the day's documents, as such
