"""E-mail in the resolver: select → cite on a message's body in Chromium, a part fetched by name, the thread page.

Positions are checked against Python's ``email`` (the body part ``get_body``
finds, its content decoded, line ends CRLF), the oracle of ``docs/email.md``.
"""

from __future__ import annotations

import email
import email.policy
import html
import json
import re
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
from test_server_pdf_viewer import _shoot
from test_server_viewer_browser import _select

from chromium_helpers import open_page
from pdi.capture.browser import devtools
from pdi.mail.mbox import split_mbox

DATA = Path(__file__).resolve().parents[1] / "data" / "email"


def _oracle_body(data: bytes) -> str:
    message = email.message_from_bytes(data, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain", "html"))  # type: ignore[attr-defined]
    return re.sub(r"\r\n|\r|\n", "\r\n", body.get_content())


def test_selecting_in_a_message_body_names_the_passage_of_its_body_text(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    name = urllib.parse.unquote(names["email"])
    with (DATA / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
        reply = list(split_mbox(mbox))[1].data
    body = _oracle_body(reply)
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/view?pdi={names['email']}")
        for wanted in ("For me it is fine", "Andy\n\n2016-04-14"):
            crlf = wanted.replace("\n", "\r\n")
            start = body.index(crlf)
            fragment = f"#char={start},{start + len(crlf)}"
            assert _select(pipe, session, wanted) == name + fragment, wanted
            got = httpx.get(f"{base}/uri-res/N2R?{(name + fragment).replace('#', '%23')}")
            assert got.content == crlf.encode()
            assert got.headers["content-type"].startswith("text/plain")


def test_a_part_is_fetched_by_number_and_by_file_name_with_its_own_media_type(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    name = urllib.parse.unquote(names["attached"])
    message = email.message_from_bytes((DATA / "msg_07.txt").read_bytes(), policy=email.policy.default)
    gif = message.get_payload()[1].get_payload(decode=True)  # type: ignore[index]
    for fragment in ("#part=1", "#part=dingusfish%2Egif"):
        got = httpx.get(f"{base}/uri-res/N2R?{(name + fragment).replace('#', '%23')}")
        assert got.status_code == 200, fragment
        assert got.headers["content-type"].split(";")[0] == "image/gif"
        assert got.content == gif
    missing = httpx.get(f"{base}/uri-res/N2R?{(name + '#part=cid:nothing%40here').replace('#', '%23')}")
    assert missing.status_code == 404
    assert "Content-ID <nothing@here>" in missing.text


def test_the_page_of_a_parts_name_marks_that_part(media: tuple[str, dict[str, str]]) -> None:
    # /view of NAME#part=1 showed the whole message as NAME's page does, nothing saying which part was asked for
    base, names = media
    name = urllib.parse.unquote(names["attached"])
    message = email.message_from_bytes((DATA / "msg_07.txt").read_bytes(), policy=email.policy.default)
    filename = message.get_payload()[1].get_filename()  # type: ignore[index]
    assert filename == "dingusfish.gif"
    # by number and by file name (its dot written %2E, as the test above does): the same part, Python's second
    for fragment in ("#part=1", "#part=" + filename.replace(".", "%2E")):
        with devtools() as pipe:
            session = open_page(pipe, f"{base}/view?pdi={urllib.parse.quote(name + fragment, safe='')}")
            pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 800, "deviceScaleFactor": 1,
                                                              "mobile": False}, session, time.monotonic() + 30)
            read = pipe.call("Runtime.evaluate", {"expression": """JSON.stringify([
                [...document.querySelectorAll('ul.parts li')].map((li) => [li.className, li.getAttribute('aria-current')]),
                document.querySelector('main p.note').textContent,
                getComputedStyle(document.querySelector('ul.parts li.chosen')).backgroundColor])""",
                                                  "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"]
            if fragment == "#part=1":
                _shoot(pipe, session, "email-part.png")
        items, note, background = json.loads(read)
        assert items == [["", None], ["chosen", "true"]], fragment
        assert note == "The name asked for names part 1 of this message (image/gif), marked below: fetch it."
        assert background != "rgba(0, 0, 0, 0)"  # marked where a reader sees it
    whole = httpx.get(f"{base}/view?pdi={names['attached']}").text
    assert 'class="chosen"' not in whole and "The name asked for names part" not in whole


def test_the_thread_page_links_the_parent_and_the_reply(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    page = httpx.get(f"{base}/thread?pdi={names['email']}").text
    ids = re.findall(r'<code class="name"><bdi>&lt;([^&]+)&gt;</bdi></code>', page)
    with (DATA / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
        expected = [email.message_from_bytes(m.data)["Message-ID"].strip("<>") for m in split_mbox(mbox)]
    assert ids == expected  # the parent, this message, its reply: thread order
    assert page.count('href="/view?pdi=') == 4  # the name under the title, and each of the three


def test_api_resolve_describes_a_message_and_its_part(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    name = urllib.parse.unquote(names["attached"])
    about = httpx.get(f"{base}/api/resolve", params={"pdi": name + "#part=1"}).json()
    message = email.message_from_bytes((DATA / "msg_07.txt").read_bytes(), policy=email.policy.default)
    assert about["media_type"] == "image/gif"
    assert about["message"]["subject"] == message["Subject"]
    assert about["message"]["body"] == {"part": 0, "media_type": "text/plain", "charset": "us-ascii",
                                        "characters": len(_oracle_body((DATA / "msg_07.txt").read_bytes()))}
    assert [p["filename"] for p in about["message"]["parts"]] == [None, "dingusfish.gif"]


def test_replies_deposited_months_later_in_another_series_are_found(tmp_path: Path) -> None:
    """The thread index (schema 10): a reply 45 days later in another series, named by a serial, and a reply to it
    100 days later are listed under the first message; each lists the others as its ancestors."""
    import datetime

    from pdi.archive import Archive, Content
    from pdi.mail.message import head_message_id, mid_url
    from pdi.server.pages.mail_pages import render_thread

    with (DATA / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
        first, reply, later = (m.data for m in split_mbox(mbox))
    now = [datetime.datetime(2026, 11, 1, 12, tzinfo=datetime.UTC)]
    with Archive.init(tmp_path / "a", clock=lambda: now[0]) as archive:
        archive.add_series("mail.example.us")
        archive.add_series("other.example.us")

        def deposit(data: bytes, days: int, series: str, by_id: bool) -> str:
            now[0] = datetime.datetime(2026, 11, 1, 12, tzinfo=datetime.UTC) + datetime.timedelta(days=days)
            foreign = mid_url(head_message_id(data) or "") if by_id else None
            return str(archive.deposit(series, [Content(data, "rfc822")], foreign_id=foreign)[0])

        names = [deposit(first, 0, "mail.example.us", True), deposit(reply, 45, "other.example.us", False),
                 deposit(later, 100, "mail.example.us", True)]
        page = render_thread(archive, names[0])
        assert page.count("(this message)") == 1
        assert html_of(names[1]) in page and html_of(names[2]) in page
        assert page.index(html_of(names[1])) < page.index(html_of(names[2]))  # the reply's reply under it
        assert html_of(names[2]) in render_thread(archive, names[1])
        assert html_of(names[0]) in render_thread(archive, names[2])  # an ancestor is found on any day
        assert html_of(names[1]) in render_thread(archive, names[2])  # and by its id, though named by a serial


def html_of(name: str) -> str:
    import html

    return html.escape("/view?pdi=" + urllib.parse.quote(name, safe=""))


def test_a_thread_is_found_by_a_mid_url_and_in_reply_to_links_there(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    with (DATA / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
        messages = [email.message_from_bytes(m.data) for m in split_mbox(mbox)]
    first_id = messages[0]["Message-ID"].strip()
    by_name = httpx.get(f"{base}/thread?pdi={names['email']}").text
    for asked in ("mid:" + urllib.parse.quote(first_id.strip("<>"), safe="@"), first_id):  # RFC 2392 %-escapes, or <id>
        page = httpx.get(f"{base}/thread", params={"mid": asked})
        assert page.status_code == 200, asked
        assert "(this message)" in page.text and f"&lt;{first_id.strip('<>')}&gt;</bdi></code> (this message)" in page.text
    reply_view = httpx.get(f"{base}/view?pdi={names['email']}").text  # the reply: its In-Reply-To links the thread
    link = f'/thread?mid={urllib.parse.quote(messages[1]["In-Reply-To"].strip(), safe="")}'
    assert html.escape(link) in reply_view
    assert httpx.get(base + link).text.count("(this message)") == 1
    assert by_name.count("(this message)") == 1
    missing = httpx.get(f"{base}/thread", params={"mid": "mid:nobody@example.com"})
    assert missing.status_code == 404 and "&lt;nobody@example.com&gt;" in missing.text
    assert httpx.get(f"{base}/thread", params={"mid": "http://x/"}).status_code == 400


_THREAD_PAGE = """
import sys
from pdi.archive import Archive
from pdi.server.pages.mail_pages import render_thread
with Archive.open(sys.argv[1]) as archive:
    page = render_thread(archive, sys.argv[2])
    assert page.count('"><bdi>Here is the file ') == int(sys.argv[3]), page  # each message's link
"""


def test_a_thread_page_reads_its_messages_header_fields_not_their_attachments(tmp_path: Path) -> None:
    """The thread page lists each message by its Subject, From and Date: it reads the first MiB of each (its header
    fields), so six replies carrying 16 MB attachments cost it no more memory than six without (each read whole and
    parsed, they cost 192 MiB more)."""
    import base64
    import os
    import sys

    from pdi.archive import Archive
    from peak_memory import run_with_peak

    def message(number: int, attachment: bytes) -> bytes:
        head = (f"Message-ID: <m{number}@example.org>\r\nFrom: a@example.org\r\nSubject: Here is the file {number}\r\n"
                f"Date: Mon, 2 Nov 2026 12:00:0{number} +0000\r\n").encode()
        if number:
            head += b"In-Reply-To: <m0@example.org>\r\nReferences: <m0@example.org>\r\n"
        if not attachment:
            return head + b"\r\nNo attachment.\r\n"
        encoded = base64.encodebytes(attachment).replace(b"\n", b"\r\n")
        return (head + b'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'
                b"Content-Type: text/plain\r\n\r\nThe file.\r\n--b\r\nContent-Type: application/octet-stream\r\n"
                b"Content-Transfer-Encoding: base64\r\n\r\n" + encoded + b"--b--\r\n")

    peaks = []
    for big in (False, True):
        location = tmp_path / f"a{int(big)}"
        with Archive.init(location) as archive:
            archive.add_series("mail.example.us")
            first = str(archive.add("mail.example.us", message(0, b""), format="rfc822"))
            for number in range(1, 7):
                archive.add("mail.example.us", message(number, os.urandom(16 << 20) if big else b""), format="rfc822")
        status, peak, _ = run_with_peak([sys.executable, "-c", _THREAD_PAGE, str(location), first, "7"])
        assert status == 0
        peaks.append(peak)
    assert peaks[1] - peaks[0] < 16 * 1024, f"{(peaks[1] - peaks[0]) // 1024} MiB more with the attachments"


def test_the_thread_of_a_name_that_is_no_email_links_the_name_and_suggests_nothing_else(
    media: tuple[str, dict[str, str]],
) -> None:
    # the name is in the archive (a PDF): the page said "Not in this archive", listed the very name typed as
    # "Other versions and formats of this document" and asked to check it as it was cited
    base, names = media
    typed = urllib.parse.unquote(names["pdf"])
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/thread?pdi={names['pdf']}")
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": False}, session, time.monotonic() + 30)
        _shoot(pipe, session, "email-thread-of-no-email.png")
        read = pipe.call("Runtime.evaluate", {"expression": """JSON.stringify([document.querySelector('main h1').textContent,
            document.querySelector('main p.error').textContent, document.querySelector('ul.nearest') !== null,
            [...document.querySelectorAll('main a[href^="/view?pdi="]')].map((a) => [a.textContent, a.getAttribute('href')]),
            document.querySelector('main').innerText.includes('Check the name as it was cited')])""",
                                              "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"]
    heading, error, nearest, links, check = json.loads(read)
    assert heading == "Not what this page shows"
    assert error == f"{typed} is not an e-mail message the archive holds."
    assert not nearest and not check
    assert links == [[typed, "/view?pdi=" + names["pdf"]]]


def test_a_thread_of_replies_each_to_the_one_before_is_listed_whole_however_long(tmp_path: Path) -> None:
    """A thread where each message replies to the one before (a long back-and-forth): more replies than the page lists
    (:data:`~pdi.server.pages.mail_pages.MAX_SCANNED`), each nested under its parent as deep as a page is indented
    (:data:`~pdi.server.pages.mail_pages.MAX_DEPTH`), then in order at that depth: the page is made (it was a
    ``RecursionError``, a 500, past about 450), each reply listed once, in thread order, as html5lib reads it."""
    import html5lib

    from pdi.archive import Archive, Content
    from pdi.server.pages.mail_pages import MAX_DEPTH, MAX_SCANNED, render_thread

    def message(i: int) -> bytes:
        head = f"From: m{i}@example.org\r\nSubject: step {i}\r\nMessage-ID: <m{i}@example.org>\r\n"
        if i:
            head += f"In-Reply-To: <m{i - 1}@example.org>\r\nReferences: <m{i - 1}@example.org>\r\n"
        return (head + "Date: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nline\r\n").encode()

    count = MAX_SCANNED + 20
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("mail.example.us")
        names = [str(archive.deposit("mail.example.us", [Content(message(i), "rfc822")])[0]) for i in range(count)]
        page = render_thread(archive, names[0])
        assert f"Only the first {MAX_SCANNED} replies" in page
        tree = html5lib.parse(page, namespaceHTMLElements=False)
        thread = tree.find(".//ol[@class='thread']")
        assert thread is not None

        listed: list[tuple[str, int]] = []  # each message's subject and how many <ol> hold it

        def walk(element: Any, depth: int) -> None:
            for child in element:
                if child.tag == "li":
                    subject = child.find(".//bdi")
                    listed.append((subject.text if subject is not None else "", depth))
                walk(child, depth + (child.tag == "ol"))

        walk(thread, 1)
        assert [s for s, _ in listed] == [f"step {i}" for i in range(MAX_SCANNED + 1)]
        # the message itself in the thread's list, each reply one list deeper than its parent, up to MAX_DEPTH
        assert [d for _, d in listed] == [min(i + 1, MAX_DEPTH + 1) for i in range(MAX_SCANNED + 1)]


def test_the_page_of_a_message_whose_html_body_is_past_the_bound_shows_its_fields_and_says_so(tmp_path: Path) -> None:
    # a message's body text is made once a process, and an HTML body past MAX_HTML_BODY characters is refused before
    # its markup is read: the page still shows the message's header fields and parts, and says why no text is shown
    from server_helpers import serving

    from pdi.archive import Archive
    from pdi.fragments.email_text import MAX_HTML_BODY

    body = b"<div>" * (MAX_HTML_BODY // 5 + 1)
    data = (b"From: Walrus <walrus@example.org>\r\nTo: Carpenter <carpenter@example.org>\r\nSubject: a long page\r\n"
            b"Message-ID: <too-long@example.org>\r\nContent-Type: text/html\r\n\r\n" + body)
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("mail.example.us")
        name = str(archive.add("mail.example.us", data, format="rfc822"))
    with serving(tmp_path / "a") as (_, port), devtools() as pipe:
        session = open_page(pipe, f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}")
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 800, "deviceScaleFactor": 1,
                                                          "mobile": False}, session, time.monotonic() + 30)
        _shoot(pipe, session, "email-body-past-bound.png")
        shown = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('main').innerText",
                                               "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"]
        # a name a stranger made 60,000 characters long: the problem page quotes it by its start and end
        hostile = name + "x" * 60_000
        session = open_page(pipe, f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(hostile, safe='')}")
        _shoot(pipe, session, "problem-long-name.png")
        problem, wide = json.loads(pipe.call("Runtime.evaluate", {"expression": """JSON.stringify([
            document.querySelector('main').innerText,
            document.documentElement.scrollWidth > document.documentElement.clientWidth])""",
                                              "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"])
    assert "walrus@example.org" in shown and "a long page" in shown and "part 0: text/html" in shown
    assert f"is {len(body):,} characters of HTML, more than the {MAX_HTML_BODY:,}" in shown
    assert "characters left out]…" in problem and len(problem) < 20_000
    assert not wide  # the quoted run of x's wraps: the page does not scroll sideways


def test_a_message_id_not_held_is_not_answered_with_advice_on_correcting_a_pdi(media: tuple[str, dict[str, str]]) -> None:
    # /thread?mid= of a Message-ID no deposited message has: the page says so, and does not tell the reader to
    # correct "the name as it was cited" (a PDI's series, day, number …) in the Resolve box: none was given
    base, _ = media
    missing = httpx.get(f"{base}/thread", params={"mid": "mid:nobody@example.com"}, headers={"Accept": "text/html"})
    assert missing.status_code == 404
    assert "No message with the Message-ID &lt;nobody@example.com&gt; is in the archive" in missing.text
    assert "a PDI names its series" not in missing.text and "Check the name as it was cited" not in missing.text
    assert 'href="/search"' in missing.text  # the ways on, as every error page has
